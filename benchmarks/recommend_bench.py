"""Benchmark: recommendation latency with ~40k papers, ours vs arxiv-sanity-lite's SVM.

Usage:
    python benchmarks/recommend_bench.py               # 40,000 papers, 100 requests
    python benchmarks/recommend_bench.py -n 10000 --requests 20
    python benchmarks/recommend_bench.py --atlas ATLAS.db   # the whole `recommend` call on a built atlas

With ``--atlas``, a built atlas (real MiniLM vectors) is opened once and ``paperatlas.recommend.recommend`` is timed
end to end per request, as the web app's For-you page calls it: ranking, the exclude filters (one request in two
with ``--exclude-keyphrase "reinforcement learning"``), the closest liked paper and the reasons of the top 10.
The first request, which builds the atlas's TF-IDF matrix, and the first with an exclusion, which indexes the
papers' keyphrases, are timed separately (a server pays them once).

The texts are real (title + abstract from ../shared/data/paperlists/*/*.json.gz, largest files first, papers
without an abstract skipped); the 384-d embeddings are random L2-normalised float32 vectors standing in for
MiniLM (embedding 40k papers takes ~35 min on 2 cores). Latency does not depend on the vector values: the dense
half of a request is one ``(n, 384) @ (384, k)`` product whatever the numbers are. Both methods build their
corpus-level TF-IDF once (timed separately, as a server would at start-up); each request then ranks the whole
corpus for 5 random liked papers (ours: dense + sparse mat-vecs, two rounds; the baseline: a LinearSVC trained on
the whole corpus; only the first ``--baseline-requests``, 10 by default, as it takes seconds each). Prints
mean and p95 ms per request for both. Goal: p95 ≤ 150 ms for ours. Not a test.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _corpus import paperlist_papers

from paperatlas.enrich.embed import paper_text
from paperatlas.recommend import Recommender, SvmBaseline


def real_texts(n: int) -> list[str]:
    """Up to ``n`` ``"title. abstract"`` texts from the paperlists dumps, largest files first."""
    out = [paper_text(p.title, p.abstract) for p in paperlist_papers(n, keep=lambda p: bool(p.title and p.abstract))]
    return out[:n]


def stats(ms: list[float]) -> str:
    return f"mean {np.mean(ms):7.1f} ms, p95 {np.percentile(ms, 95):7.1f} ms"


def bench_atlas(path: str, n_requests: int, n_liked: int, seed: int) -> None:
    """Time :func:`paperatlas.recommend.recommend` end to end on the atlas at ``path``; prints ms figures."""
    from paperatlas.recommend import recommend
    from paperatlas.store import Atlas

    t0 = time.perf_counter()
    atlas = Atlas(path)
    ids = list(atlas.ids)
    print(f"{path}: {len(atlas.papers)} papers, {len(ids)} embedded, opened in {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(seed)
    requests = [rng.choice(len(ids), size=n_liked, replace=False).tolist() for _ in range(n_requests + 1)]
    t0 = time.perf_counter()
    recommend(atlas, [ids[i] for i in requests[0]], k=10)
    print(f"first request (builds the TF-IDF matrix once per atlas): {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    recommend(atlas, [ids[i] for i in requests[0]], k=10, exclude_keyphrases=["reinforcement learning"])
    print(f"first excluding request (indexes the papers' keyphrases once per atlas): "
          f"{time.perf_counter() - t0:.1f} s")
    ms: dict[str, list[float]] = {"no filter": [], "exclude keyphrase": []}
    for j, liked in enumerate(requests[1:]):
        kind = "exclude keyphrase" if j % 2 else "no filter"
        t0 = time.perf_counter()
        recs = recommend(atlas, [ids[i] for i in liked], k=10,
                         exclude_keyphrases=["reinforcement learning"] if j % 2 else ())
        ms[kind].append(1000 * (time.perf_counter() - t0))
        assert len(recs) == 10 and all(r.reason for r in recs)
    allms = [m for v in ms.values() for m in v]
    for kind, v in ms.items():
        print(f"  {kind:<18} {stats(v)}  ({len(v)} requests)")
    p95 = float(np.percentile(allms, 95))
    print(f"  {'all':<18} {stats(allms)}")
    print(f"Goal p95 <= 150 ms: {'yes' if p95 <= 150 else 'no'} ({p95:.1f} ms)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=40_000, help="papers")
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--liked", type=int, default=5)
    ap.add_argument("--baseline-requests", type=int, default=10,
                    help="requests timed for the baseline (its SVM takes seconds per request at 40k)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--atlas", metavar="DB", help="time the whole recommend call on this built atlas instead")
    args = ap.parse_args()
    if args.atlas:
        bench_atlas(args.atlas, args.requests, args.liked, args.seed)
        return

    t0 = time.perf_counter()
    texts = real_texts(args.n)
    print(f"{len(texts)} papers read in {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(args.seed)
    vec = rng.standard_normal((len(texts), 384)).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)

    t0 = time.perf_counter()
    ours = Recommender(texts, vec)
    print(f"ours: TF-IDF {ours.tfidf.shape} nnz {ours.tfidf.nnz} built in {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    svm = SvmBaseline(texts)
    print(f"arxiv-sanity-lite: TF-IDF {svm.x.shape} nnz {svm.x.nnz} built in {time.perf_counter() - t0:.1f} s")

    requests = [rng.choice(len(texts), size=args.liked, replace=False).tolist() for _ in range(args.requests)]
    ours.rank(requests[0])  # warm-up (BLAS threads, page-in)
    timings: dict[str, list[float]] = {"paperatlas": [], "arxiv-sanity-lite (SVM)": []}
    for i, liked in enumerate(requests):
        t0 = time.perf_counter()
        ours.rank(liked, k=10)
        timings["paperatlas"].append(1000 * (time.perf_counter() - t0))
        if i >= args.baseline_requests:
            continue
        t0 = time.perf_counter()
        svm.rank(liked, k=10)
        timings["arxiv-sanity-lite (SVM)"].append(1000 * (time.perf_counter() - t0))
    print(f"requests of {args.liked} random liked papers over {len(texts)} papers:")
    for name, ms in timings.items():
        print(f"  {name:<24} {stats(ms)}  ({len(ms)} requests)")
    p95 = float(np.percentile(timings["paperatlas"], 95))
    print(f"Goal p95 <= 150 ms for ours: {'yes' if p95 <= 150 else 'no'} ({p95:.1f} ms)")


if __name__ == "__main__":
    main()
