"""Benchmark: nearest-neighbour search engines for large atlases (exact numpy, USearch HNSW, sqlite-vec).

Usage:
    python benchmarks/ann_bench.py                                # 42,000 and 1,000,000 rows, synthetic base
    python benchmarks/ann_bench.py --atlas /tmp/iclr.db           # the atlas's own vectors, and the sizes from them
    python benchmarks/ann_bench.py --sizes 42000 --exact-sizes 100000,200000,300000,500000
    python benchmarks/ann_bench.py --sizes 200000 --engines usearch --usearch i8:16:128:64x2,256x4

Vectors: with ``--atlas``, the atlas's real MiniLM vectors (``paperatlas.store.Atlas(path).vectors``) are measured
as they are, and are the base set for ``--sizes``; without it the base is ``--base-n`` clustered random unit
vectors (``--clusters`` Gaussian clusters). A size is made from the base by repetition with perturbation: copies
of the base rows get Gaussian noise of ``--noise`` (0.05) per component and are L2-normalised again (float32,
seed 0). Queries: ``--queries`` (200) random rows of the matrix with the same noise, normalised.

Engines, each in a forked child process (so its memory is its own):

* ``exact``: :class:`paperatlas.search.ann.NeighbourIndex` in exact mode (``vectors @ q`` + argpartition);
* ``argsort``: today's code (``np.argsort(-(vectors @ q), kind="stable")[:10]``, search/related.py);
* ``usearch``: NeighbourIndex over a USearch HNSW graph (int8 / f16 / f32 copies, degree M, insertion beam
  ``efC``, search beam ``ef``, candidates ``×os`` re-ranked by exact cosine); ``--threads`` insert threads;
* ``sqlite-vec``: a ``vec0`` virtual table (``float[dim] distance_metric=cosine``, exact KNN) in a temporary
  SQLite file, loaded through ``apsw`` (the standard library's ``sqlite3`` here cannot load extensions).

Columns: build s (wall); disk MB (USearch: ``NeighbourIndex.to_bytes()``; sqlite-vec: the database file; exact:
nothing beyond the atlas's embeddings); load s (``NeighbourIndex.from_bytes``, checks included); RSS +MiB (resident
memory the child gained building and querying, /proc VmRSS; USearch: right after the build, with the graph in
memory; an index loaded with ``from_bytes`` views its bytes, about disk MB) and peak +MiB (VmHWM, build + save +
load + queries); recall@10 against exact; p50 /
p95 ms of one warm single query (k = 10; 10 warm-up queries first; an engine stops timing after
``--max-query-seconds`` and says how many queries it ran). Not a test.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

THREADS = "2"
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, THREADS)

import multiprocessing as mp  # noqa: E402

import numpy as np  # noqa: E402

from paperatlas.search.ann import NeighbourIndex  # noqa: E402

K = 10
#: (label, dtype, M, efC, [(ef, oversample), ...]) per USearch graph; the small set is used above 200k rows
USEARCH_CONFIGS = [
    ("i8", "i8", 16, 128, [(32, 2), (64, 1), (64, 2), (128, 2)]),
    ("f16", "f16", 16, 128, [(64, 2)]),
    ("f32", "f32", 16, 128, [(64, 1), (128, 1)]),
    ("i8", "i8", 32, 128, [(64, 2), (128, 2)]),
]
USEARCH_CONFIGS_LARGE = [  # one graph: f32 takes ~3x as long to build (~15 min at 1M on 2 cores)
    ("i8", "i8", 16, 128, [(32, 2), (64, 1), (64, 2), (128, 2), (256, 2)]),
]


def usearch_config(text: str) -> tuple:
    """``"i8:16:128:64x2,128x4"`` -> ``("i8", "i8", 16, 128, [(64, 2), (128, 4)])``."""
    dtype, m, efc, searches = text.split(":")
    return (dtype, dtype, int(m), int(efc), [tuple(int(x) for x in s.split("x")) for s in searches.split(",")])


def rss_kib() -> tuple[int, int]:
    """``(VmRSS, VmHWM)`` of this process in KiB."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    return out["VmRSS"], out["VmHWM"]


def reset_peak() -> None:
    """Reset VmHWM to the current RSS (Linux ``clear_refs`` 5)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def unit(x: np.ndarray) -> np.ndarray:
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def clustered_base(n: int, clusters: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` unit vectors in ``clusters`` Gaussian clusters (cosine to their centre ~0.7, like close papers)."""
    centres = unit(rng.standard_normal((clusters, 384), dtype=np.float32))
    return unit(centres[rng.integers(0, clusters, n)] + 0.05 * rng.standard_normal((n, 384), dtype=np.float32))


def expand(base: np.ndarray, n: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` rows: copies of ``base`` rows in turn with N(0, sigma²) noise per component, L2-normalised."""
    if n == len(base):
        return base.copy()
    out = np.empty((n, base.shape[1]), np.float32)
    step = 100_000
    for s in range(0, n, step):
        e = min(n, s + step)
        out[s:e] = base[np.arange(s, e) % len(base)] + sigma * rng.standard_normal((e - s, base.shape[1]),
                                                                                     dtype=np.float32)
        unit(out[s:e])
    return out


def exact_truth(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    return NeighbourIndex.build(vectors, min_papers=len(vectors) + 1).search_many(queries, K)[0]


def recall(found: list[np.ndarray], truth: np.ndarray) -> float:
    return float(np.mean([len(set(f.tolist()) & set(t.tolist())) / K for f, t in zip(found, truth, strict=False)]))


def time_queries(fn, queries: np.ndarray, max_seconds: float) -> tuple[list[np.ndarray], list[float]]:
    """Run ``fn(q) -> rows`` over the queries (after 10 warm-up ones) until done or ``max_seconds`` passed."""
    for q in queries[:10]:
        fn(q)
    found, ms = [], []
    t_end = time.perf_counter() + max_seconds
    for i, q in enumerate(queries):
        t = time.perf_counter()
        found.append(np.asarray(fn(q)))
        ms.append((time.perf_counter() - t) * 1000)
        if i >= 19 and time.perf_counter() > t_end:
            break
    return found, ms


def row(engine, n, build_s, disk_mb, load_s, rss0, found, ms, truth, note="", rss=None):
    now, hwm = rss_kib()
    return {"engine": engine, "n": n, "build": build_s, "disk": disk_mb, "load": load_s,
            "rss": ((rss or now) - rss0[0]) / 1024, "peak": (hwm - rss0[0]) / 1024,
            "recall": recall(found, truth[:len(found)]),
            "p50": float(np.percentile(ms, 50)), "p95": float(np.percentile(ms, 95)), "q": len(found), "note": note}


def run_exact(vectors, queries, truth, args, rss0):
    index = NeighbourIndex.build(vectors, min_papers=len(vectors) + 1)
    found, ms = time_queries(lambda q: index.search(q, K)[0], queries, args.max_query_seconds)
    return [row("exact (numpy, argpartition)", len(vectors), 0.0, 0.0, 0.0, rss0, found, ms, truth,
                f"matrix {vectors.nbytes / 1e6:.0f} MB is the atlas's own")]


def run_argsort(vectors, queries, truth, args, rss0):
    found, ms = time_queries(lambda q: np.argsort(-(vectors @ q), kind="stable")[:K], queries,
                             min(args.max_query_seconds, 30))
    return [row("exact (numpy, full argsort: today)", len(vectors), 0.0, 0.0, 0.0, rss0, found, ms, truth)]


def run_usearch(vectors, queries, truth, args, config, rss0):
    label, dtype, m, efc, searches = config
    t = time.perf_counter()
    index = NeighbourIndex.build(vectors, min_papers=0, dtype=dtype, connectivity=m, expansion_add=efc,
                                 threads=args.threads)
    build_s = time.perf_counter() - t
    built_rss = rss_kib()[0]
    blob = index.to_bytes()
    t = time.perf_counter()
    index = NeighbourIndex.from_bytes(blob, vectors)  # queries run on the loaded (viewed) graph
    load_s = time.perf_counter() - t
    out = []
    for ef, over in searches:
        index.expansion_search, index.oversample = ef, over
        found, ms = time_queries(lambda q, ix=index: ix.search(q, K)[0], queries, args.max_query_seconds)
        out.append(row(f"usearch {label} M={m} efC={efc} ef={ef} ×{over}", len(vectors), build_s, len(blob) / 1e6,
                       load_s, rss0, found, ms, truth, rss=built_rss))
    return out


def run_sqlite_vec(vectors, queries, truth, args, rss0):
    import apsw
    import sqlite_vec

    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        path = os.path.join(tmp, "vec.db")
        t = time.perf_counter()
        con = apsw.Connection(path)
        con.enable_load_extension(True)
        con.load_extension(sqlite_vec.loadable_path())
        con.execute(f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{vectors.shape[1]}] distance_metric=cosine)")
        with con:
            con.executemany("INSERT INTO vec(rowid, embedding) VALUES (?, ?)",
                            ((i + 1, vectors[i].tobytes()) for i in range(len(vectors))))
        build_s = time.perf_counter() - t
        disk = os.path.getsize(path) / 1e6

        def knn(q):
            rows = con.execute("SELECT rowid FROM vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
                               (q.tobytes(), K)).fetchall()
            return [r[0] - 1 for r in rows]

        found, ms = time_queries(knn, queries, args.max_query_seconds)
        out = [row(f"sqlite-vec {sqlite_vec.__version__} vec0 exact (apsw)", len(vectors), build_s, disk, 0.0, rss0,
                   found, ms, truth)]
        con.close()
    return out


def child(conn, fn, *a):
    reset_peak()
    rss0 = rss_kib()
    try:
        conn.send(fn(*a, rss0))
    except Exception as e:  # report, keep benchmarking the others
        conn.send([{"engine": f"{fn.__name__} failed: {type(e).__name__}: {e}", "n": len(a[0])}])
    conn.close()


def in_child(fn, *a) -> list[dict]:
    ctx = mp.get_context("fork")
    parent, kid = ctx.Pipe(duplex=False)
    p = ctx.Process(target=child, args=(kid, fn, *a))
    p.start()
    kid.close()
    out = parent.recv()
    p.join()
    return out


def print_row(r: dict) -> None:
    if "recall" not in r:
        print(f"| {r['engine']} | {r['n']:,} | | | | | | | | | |", flush=True)
        return
    print(f"| {r['engine']} | {r['n']:,} | {r['build']:.1f} | {r['disk']:.0f} | {r['load']:.2f} | {r['rss']:.0f} | "
          f"{r['peak']:.0f} | {r['recall']:.3f} | {r['p50']:.2f} | {r['p95']:.2f} | {r['q']} | {r['note']}",
          flush=True)


def bench(vectors: np.ndarray, args, engines: list[str], rng: np.random.Generator) -> None:
    n = len(vectors)
    picks = rng.choice(n, size=min(args.queries, n), replace=False)
    queries = unit(vectors[picks] + args.noise * rng.standard_normal((len(picks), vectors.shape[1]),
                                                                      dtype=np.float32))
    truth = exact_truth(vectors, queries)
    if "exact" in engines:
        for r in in_child(run_exact, vectors, queries, truth, args):
            print_row(r)
    if "argsort" in engines:
        for r in in_child(run_argsort, vectors, queries, truth, args):
            print_row(r)
    if "usearch" in engines:
        for config in args.usearch or (USEARCH_CONFIGS if n <= 200_000 else USEARCH_CONFIGS_LARGE):
            for r in in_child(run_usearch, vectors, queries, truth, args, config):
                print_row(r)
    if "sqlite-vec" in engines:
        for r in in_child(run_sqlite_vec, vectors, queries, truth, args):
            print_row(r)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--atlas", help="an atlas file: its real vectors, measured as they are and used as the base")
    ap.add_argument("--sizes", default="42000,1000000", help="matrix sizes made from the base (comma-separated)")
    ap.add_argument("--exact-sizes", default="", help="more sizes measured with the exact engines only")
    ap.add_argument("--engines", default="exact,argsort,usearch,sqlite-vec")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--noise", type=float, default=0.05, help="Gaussian sigma per component for copies and queries")
    ap.add_argument("--base-n", type=int, default=5000, help="synthetic base rows (without --atlas)")
    ap.add_argument("--clusters", type=int, default=100, help="synthetic base clusters (without --atlas)")
    ap.add_argument("--usearch", action="append", type=usearch_config, metavar="DTYPE:M:EFC:EFxOS,...",
                    help="a USearch graph to measure instead of the built-in list, e.g. i8:16:128:64x2,128x4 "
                         "(repeatable)")
    ap.add_argument("--threads", type=int, default=int(THREADS), help="USearch insert threads")
    ap.add_argument("--max-query-seconds", type=float, default=60.0, help="stop timing an engine after this")
    ap.add_argument("--tmp", default=None, help="folder for sqlite-vec's temporary database")
    args = ap.parse_args()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    rng = np.random.default_rng(0)
    if args.atlas:
        from paperatlas.store import Atlas

        atlas = Atlas(args.atlas)
        base = np.ascontiguousarray(atlas.vectors, dtype=np.float32)
        source = f"{args.atlas}: {len(base):,} real {atlas.embed_model} vectors"
        atlas.con.close()
    else:
        base = clustered_base(args.base_n, args.clusters, rng)
        source = f"synthetic: {args.base_n:,} unit vectors in {args.clusters} Gaussian clusters"
    print(f"# base: {source}; copies and queries: +N(0, {args.noise}²) per component, normalised; k = {K}; "
          f"{args.queries} queries; {args.threads} threads; {os.cpu_count()} cores; python {sys.version.split()[0]}")
    print("| engine | n | build s | disk MB | load s | RSS +MiB | peak +MiB | recall@10 | p50 ms | p95 ms | queries | "
          "note |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|", flush=True)
    t0 = time.perf_counter()
    if args.atlas:
        bench(base, args, engines, rng)
    for size in [int(s) for s in args.exact_sizes.split(",") if s.strip()]:
        bench(expand(base, size, args.noise, rng), args, [e for e in engines if e in ("exact", "argsort")], rng)
    for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
        vectors = expand(base, size, args.noise, rng)
        bench(vectors, args, engines, rng)
        del vectors
    print(f"# total {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
