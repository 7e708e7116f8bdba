"""Measure the support check of generative answers (:func:`paperatlas.llm.answer.support`) on SciTLDR dev.

True pairs: each gold TL;DR (author-written and peer-review-derived, Cachola et al. 2020) against its own paper's
title + abstract; it should pass. False pairs: the same TL;DR against the most similar *other* paper of the set
(highest MiniLM cosine of the mean abstract-sentence vectors); it should fail. Prints the share of true and false
pairs accepted by each part of the check and by the whole check at a grid of thresholds.

Result (2026-11-27, all 619 papers, 1,453 gold TL;DRs; false pairs' mean abstract cosine 0.70)::

    check                                        true acc. false acc.   author TL;DR only
    numbers only                                     97.9%      95.7%      98.5%    95.0%
    numbers + words >= 0.65                          57.7%       2.9%      79.0%     3.9%
    cosine >= 0.55 only                              89.7%      34.5%      94.0%    36.3%
    numbers + words >= 0.65 + cosine >= 0.55         56.0%       2.1%      77.1%     2.3%   <- shipped
    numbers + words >= 0.80 + cosine >= 0.60         32.4%       0.6%      53.2%     1.1%
    abstract sentences (4489) cited to the most similar other paper, accepted: 2.5%

Gold TL;DRs are abstractive (the peer-review-derived ones most), so a true pair passes less often than a model's
rewrite of an abstract sentence would; the false-pair rate is what a wrong citation gets through.

Usage::

    .venv/bin/python benchmarks/ask_support.py [--gold ../shared/data/scitldr/dev.jsonl.gz] [--limit N]
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import numpy as np

from paperatlas.enrich.query_embed import query_embedder
from paperatlas.llm.answer import ANSWER_EXEMPT, MIN_COSINE, MIN_WORD_SHARE, Source, max_cosine, support
from paperatlas.llm.tldr import unsupported_numbers, word_support

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT.parent / "shared" / "data" / "scitldr" / "dev.jsonl.gz"


def main() -> None:
    """Read the gold file, score every true and false pair, print the acceptance table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gold", type=Path, default=GOLD)
    ap.add_argument("--limit", type=int, default=0, help="first N papers only (0: all)")
    args = ap.parse_args()
    with gzip.open(args.gold, "rt", encoding="utf-8") as f:
        recs = [json.loads(line) for line in f]
    if args.limit:
        recs = recs[: args.limit]
    enc = query_embedder().encode
    sources = [Source(i, r.get("title", ""), " ".join(r["source"])) for i, r in enumerate(recs)]
    sent_vecs = [enc(r["source"]) for r in recs]
    means = np.stack([v.mean(0) / (np.linalg.norm(v.mean(0)) or 1.0) for v in sent_vecs])
    sims = means @ means.T
    np.fill_diagonal(sims, -1.0)
    nearest = sims.argmax(1)
    rows = []  # (is_true, is_author, numbers_ok, word share, cosine)
    for i, r in enumerate(recs):
        tv = enc(r["target"])
        for k, t in enumerate(r["target"]):
            for is_true, j in ((True, i), (False, int(nearest[i]))):
                src = sources[j]
                share, _ = word_support(t, src.text(), ANSWER_EXEMPT)
                cos = max_cosine(t, src, vector=tv[k], source_vectors=sent_vecs[j])
                rows.append((is_true, k == 0, not unsupported_numbers(t, src.text()), share or 0.0, cos))
    a = np.array(rows, dtype=np.float64)
    true, false = a[:, 0] == 1, a[:, 0] == 0
    print(f"SciTLDR dev: {len(recs)} papers, {int(true.sum())} gold TL;DRs; false pairs: the same TL;DRs against "
          f"the most similar other paper (mean cosine {float(np.mean(sims.max(1))):.2f})")
    print(f"{'check':<44} {'true acc.':>9} {'false acc.':>10}   {'author TL;DR only':>17}")

    def line(name: str, ok: np.ndarray) -> None:
        au = a[:, 1] == 1
        print(f"{name:<44} {ok[true].mean():>9.1%} {ok[false].mean():>10.1%}   "
              f"{ok[true & au].mean():>8.1%} {ok[false & au].mean():>8.1%}")

    nums = a[:, 2] == 1
    line("numbers only", nums)
    for w in (0.6, 0.65, 0.7, 0.75, 0.8):
        line(f"numbers + words >= {w:.2f}", nums & (a[:, 3] >= w))
    for c in (0.5, 0.55, 0.6, 0.65, 0.7):
        line(f"cosine >= {c:.2f} only", a[:, 4] >= c)
    for w in (0.6, 0.65, 0.7, 0.75, 0.8):
        for c in (0.45, 0.5, 0.55, 0.6):
            line(f"numbers + words >= {w:.2f} + cosine >= {c:.2f}", nums & (a[:, 3] >= w) & (a[:, 4] >= c))
    # the shipped check end to end (MAX_SENTENCE_WORDS too)
    shipped = []
    for i, r in enumerate(recs):
        tv = enc(r["target"])
        for k, t in enumerate(r["target"]):
            for j in (i, int(nearest[i])):
                shipped.append(support(t, sources[j], vector=tv[k], source_vectors=sent_vecs[j])[0])
    line(f"shipped: support() (words {MIN_WORD_SHARE}, cosine {MIN_COSINE})", np.array(shipped))
    # a verbatim abstract sentence cited to the most similar other paper (a model citing the wrong paper)
    wrong = [support(t, sources[int(nearest[i])], vector=sent_vecs[i][k], source_vectors=sent_vecs[int(nearest[i])])[0]
             for i, r in enumerate(recs) for k, t in enumerate(r["source"])]
    print(f"abstract sentences ({len(wrong)}) cited to the most similar other paper, accepted by support(): "
          f"{np.mean(wrong):.1%}")


if __name__ == "__main__":
    main()
