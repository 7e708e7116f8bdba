"""Benchmark: stability and speed of the topic stage (hierarchy + labels + map) on a built atlas.

Usage:
    python benchmarks/topic_bench.py ATLAS.db [--seeds 3] [--add 0.1]

For an atlas already built (its stored MiniLM embeddings are reused; nothing is embedded), prints:

* **repeat**: the topic stage run twice on the same input: share of papers with the same topic id, largest
  coordinate difference, identical labels (expected: 100%, 0.0, yes);
* **+10% papers** (``--add``), for ``--seeds`` random splits: fit on the other papers, then add the held-out
  ones as a rebuild would. ``update`` (the default path) keeps the topic model: share of earlier papers keeping
  their topic id, share of topics keeping their label, topics relabelled, movement of earlier points (zero by
  construction) and time. ``refit`` (``build --refit-topics``): recluster everything, then match ids to the
  earlier topics: share of earlier papers keeping their topic id and median movement of earlier points after
  aligning the two maps (Procrustes, in % of the map's diagonal);
* **time** (seconds) of a full fit of the topic stage at this size, and of an update.

Not a test: run on demand.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from paperatlas.enrich.embed import paper_text
from paperatlas.enrich.keyphrases import KeyphraseExtractor
from paperatlas.enrich.topics import update_topics
from paperatlas.store import Atlas


def label_evidence(papers) -> list[list[str]]:
    """The label evidence the build uses: each paper's keyphrases plus its 15 best candidate phrases."""
    kx = KeyphraseExtractor().fit((p.title, p.abstract or p.digest) for p in papers)
    out = []
    for p in papers:
        scored = kx.score(p.title, p.abstract or p.digest)
        kps = kx.extract(p.title, p.abstract or p.digest, scored=scored)
        out.append(list(dict.fromkeys([*kps, *(ph for ph, _ in scored[:15])])) or p.given_keyphrases)
    return out


def procrustes_shift(a: np.ndarray, b: np.ndarray) -> float:
    """Median distance between matched points of ``a`` and ``b`` (both ``(n, 2)``) after the best rotation,
    reflection, scaling and translation of ``b`` onto ``a`` (scipy), in % of ``a``'s bounding-box diagonal."""
    from scipy.spatial import procrustes

    m1, m2, _ = procrustes(a, b)  # both standardised: centred, unit Frobenius norm
    scale = np.linalg.norm(m1.max(axis=0) - m1.min(axis=0))
    return float(np.median(np.linalg.norm(m1 - m2, axis=1)) / scale * 100)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("atlas")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--add", type=float, default=0.1, help="share of papers added (default 0.1)")
    args = ap.parse_args()
    atlas = Atlas(args.atlas)
    papers = [atlas.by_id[i] for i in atlas.ids]
    ids = [p.id for p in papers]
    dense = atlas.vectors
    texts = [paper_text(p.title, p.abstract or p.digest) for p in papers]
    t0 = time.perf_counter()
    kps = label_evidence(papers)
    print(f"{args.atlas}: {len(papers)} papers; label evidence {time.perf_counter() - t0:.1f} s")

    t0 = time.perf_counter()
    a = update_topics(ids, dense, texts, kps)
    t_fit = time.perf_counter() - t0
    b = update_topics(ids, dense, texts, kps)
    same = float(np.mean(a.topic_id == b.topic_id))
    labels_same = [(t.id, t.label) for t in a.topics] == [(t.id, t.label) for t in b.topics]
    print(f"repeat: {same:.1%} same topic id, max coordinate difference {np.abs(a.xy - b.xy).max():.3g}, "
          f"labels identical: {'yes' if labels_same else 'no'}")
    n_areas = sum(t.level == 0 for t in a.topics)
    print(f"fit: {n_areas} areas, {len(a.topics) - n_areas} sub-topics, {int(a.low_confidence.sum())} "
          f"low-confidence, {sum(bool(s) for s in a.secondary)} with a secondary topic; {t_fit:.1f} s")

    n = len(ids)
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        new = set(rng.choice(n, size=round(args.add * n / (1 + args.add)), replace=False).tolist())
        old = [i for i in range(n) if i not in new]
        first = update_topics([ids[i] for i in old], dense[old], [texts[i] for i in old], [kps[i] for i in old])
        prev = {ids[i]: (int(first.topic_id[j]), float(first.xy[j, 0]), float(first.xy[j, 1]), True)
                for j, i in enumerate(old)}
        prev_topics = {t.id: t for t in first.topics}
        t0 = time.perf_counter()
        up = update_topics(ids, dense, texts, kps, previous=first.model, previous_papers=prev,
                           previous_topics=prev_topics)
        t_up = time.perf_counter() - t0
        moved = max(float(np.abs(up.xy[i] - first.xy[j]).max()) for j, i in enumerate(old))
        labels_kept = sum(1 for t in up.topics if t.id in prev_topics and prev_topics[t.id].label == t.label)
        re_ = update_topics(ids, dense, texts, kps, previous=first.model, previous_papers=prev,
                            previous_topics=prev_topics, refit=True)
        refit_kept = float(np.mean([re_.topic_id[i] == prev[ids[i]][0] for i in old]))
        refit_labels = sum(1 for t in re_.topics if t.id in prev_topics and prev_topics[t.id].label == t.label)
        shift = procrustes_shift(first.xy, re_.xy[old])
        print(f"+{len(new)} papers (split {seed}): update ({up.mode}) keeps {up.kept_share:.1%} of topic ids, "
              f"{labels_kept}/{len(prev_topics)} labels ({len(up.relabelled)} relabelled), earlier points moved "
              f"{moved:.3g}, {t_up:.1f} s | refit keeps {refit_kept:.1%} of topic ids, "
              f"{refit_labels}/{len(prev_topics)} labels, earlier points moved {shift:.1f}% of the map (median)")


if __name__ == "__main__":
    main()
