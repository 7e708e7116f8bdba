"""Benchmark: recommendation latency with ~40k papers, ours vs arxiv-sanity-lite's SVM.

Usage:
    python benchmarks/recommend_bench.py               # 40,000 papers, 100 requests
    python benchmarks/recommend_bench.py -n 10000 --requests 20

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

from paperatlas.embed import paper_text
from paperatlas.recommend import Recommender, SvmBaseline


def real_texts(n: int) -> list[str]:
    """Up to ``n`` ``"title. abstract"`` texts from the paperlists dumps, largest files first."""
    out = [paper_text(p.title, p.abstract) for p in paperlist_papers(n, keep=lambda p: bool(p.title and p.abstract))]
    return out[:n]


def stats(ms: list[float]) -> str:
    return f"mean {np.mean(ms):7.1f} ms, p95 {np.percentile(ms, 95):7.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=40_000, help="papers")
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--liked", type=int, default=5)
    ap.add_argument("--baseline-requests", type=int, default=10,
                    help="requests timed for the baseline (its SVM takes seconds per request at 40k)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

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
