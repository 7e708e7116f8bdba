"""How paperatlas scales: one table at 1k / 10k / 42k papers (build stages, memory, atlas size, HTTP latency).

Usage:
    python benchmarks/scale.py [--sizes 1000,10000,all] [--workdir /tmp/scale] [--engine local|ray]
                               [--precision auto|fp32|bf16] [--src PATH] [--requests 200] [--keep]

For each size N it takes the first N papers of the Paper Copilot paperlists dumps in ``../shared/data`` (largest
listing first, records kept as they are: real-format input), writes them as one paperlists JSON listing, and:

1. **builds** a new atlas from it in a fresh process (``paperatlas.build.build``, the real model): seconds per
   stage, papers/s (N / total), the process's peak RSS (MiB), and the peak of the process and its children
   together ("+ children": VmRSS of both sampled every 0.5 s; the embedding may run in a child process);
2. records the **atlas size** (MiB);
3. starts ``paperatlas serve`` on it and times the **first query**: the first ``/api/search`` answered after the
   server accepts connections (what a reader waits for after ``serve``), and the process start to that answer;
4. sends ``--requests`` searches (queries from ``benchmarks/data/search_queries.json``) and as many related-paper
   requests (``/api/related/<id>``, random papers) one after the other from one client, after a warm-up of 20
   each, and prints p50/p95 in milliseconds.

``--vectors-from ATLAS --embed N`` (an earlier atlas of the same listing) puts all but N of its vectors in the new
atlas's resume file first: a cold build in every stage but the embedding of the rest, for the memory of the later
stages at full size in minutes. ``--build-only`` skips the HTTP figures.

**Ratios** (issue 31: figures comparable across machines): before the first size the model is loaded once, which
makes ``--precision auto``'s measurement on this machine (:mod:`paperatlas.enrich.precision`; printed). For each
size the **embedding alone** is timed in a fresh process on the very texts the build embeds (the listing read and
merged as the build does, the model loaded and every text embedded at the precision the build used, in as many
single-threaded child processes as the build runs for that size, else in one process), before the build and, with
``--bare-runs 2`` (the default), again after it; the table gives the build's wall time over the mean of the two
(``build/embed``), so what the other stages add is read as a ratio, not as seconds of one CPU.
``--bare-sample 0.25`` times the embedding alone on a seeded random quarter of those texts and scales it up (where
a whole 42k embedding alone takes most of an hour: a CPU without native bf16); the build itself is always whole.

``--serve-only ATLAS`` measures only step 4 (and the first query) on an existing atlas. ``--src PATH`` runs an
older checkout's code (``PATH`` = its ``src`` folder) for before/after figures; ``--engine``
and ``--precision`` are passed to the build when that code knows them. ``all`` is every paper of the dumps
(42,7xx). Speed and memory goals live here, not in tests. The machine is printed with the table.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from paperatlas.enrich.precision import cpu_model

ROOT = Path(__file__).resolve().parents[1]
PAPERLISTS = ROOT.parent / "shared" / "data" / "paperlists"
QUERIES = ROOT / "benchmarks" / "data" / "search_queries.json"

_BUILD = r"""
import json, sys, time, inspect
from paperatlas.build import build
args = json.loads(sys.argv[1])
kw = {}
params = inspect.signature(build).parameters
if "precision" in params:
    kw["precision"] = args["precision"]
if args["engine"] != "local":
    from paperatlas.engines import get_engine
    kw["engine"] = get_engine(args["engine"], precision=args["precision"])
t0 = time.perf_counter()
rep = build([args["listing"]], args["db"], **kw)
wall = time.perf_counter() - t0
print("REPORT " + json.dumps({"stages": rep.stage_seconds, "wall": wall, "rss": rep.peak_rss_mib,
                              "n": rep.n_papers, "worker": getattr(rep, "worker_seconds", {}),
                              "rss_by_stage": getattr(rep, "peak_rss_by_stage", {}),
                              "precision": getattr(rep, "precision", ""),
                              "torch_in_build_process": "torch" in sys.modules}))
"""


_BARE = r"""
import json, queue, sys, time
from concurrent.futures import ThreadPoolExecutor
from paperatlas.enrich.embed import get_embedder, paper_text
try:
    from paperatlas.enrich.embed import precision_note
except ImportError:  # an older checkout (--src): auto read CPU flags
    def precision_note(p):
        return "from CPU flags (code before the measurement)"
from paperatlas.sources import read
from paperatlas.sources.merge import merge_papers
args = json.loads(sys.argv[1])
texts = [paper_text(p.title, p.abstract) for p in merge_papers(read(args["listing"]))] if args.get("listing") else []
n_all, procs, precision = len(texts), 1, args["precision"]
try:  # the build's own arrangement: a single-threaded child per core where it would run them
    from paperatlas.build import local_engine
    if texts:
        eng = local_engine(precision, None, n_all)
        procs, precision = eng.processes, eng.precision  # the measured path when it runs children
except (ImportError, TypeError, AttributeError):  # an older checkout
    pass
t0 = time.perf_counter()
if procs > 1:
    from paperatlas.engines.embed_child import ChildEmbedder
    kids = [ChildEmbedder(precision=precision, wait=False, threads=1) for _ in range(procs)]
    name = [k.precision for k in kids][0]  # waits until every child has loaded the model
else:
    model = get_embedder(precision=precision)
    name = model.precision
load = time.perf_counter() - t0
out = {"precision": name, "note": precision_note(args["precision"]), "load": load, "processes": procs}
if texts:
    share = args.get("sample", 1.0)
    if share < 1.0:  # a seeded random share of the texts: the same mix of lengths, timed and scaled up
        import random
        texts = random.Random(0).sample(texts, max(1, round(share * n_all)))
    t1 = time.perf_counter()
    if procs > 1:  # messages of 256 texts to whichever child is free, as the local engine sends them
        todo = queue.Queue()
        for i in range(0, len(texts), 256):
            todo.put(texts[i:i + 256])
        def work(kid):
            while True:
                try:
                    kid.encode(todo.get_nowait())
                except queue.Empty:
                    return
        with ThreadPoolExecutor(procs) as ex:
            list(ex.map(work, kids))
    else:
        model.encode(texts)
    out.update(n=n_all, sampled=len(texts), encode=(time.perf_counter() - t1) * n_all / len(texts))
print("BARE " + json.dumps(out))
"""


def bare_embedding(listing: Path | None, precision: str, env: dict, sample: float = 1.0) -> dict:
    """Load the model in a fresh process and embed the listing's texts (None: only load it, which calibrates).

    Args:
        sample: the share of the texts embedded (a seeded random sample; ``encode`` is scaled up to all of them).

    Returns:
        ``{"precision", "note", "load" (s), "n", "sampled", "encode" (s, for all n texts)}`` (no ``n``,
        ``sampled``, ``encode`` without a listing).
    """
    job = {"listing": str(listing) if listing else None, "precision": precision, "sample": sample}
    proc = subprocess.run([sys.executable, "-c", _BARE, json.dumps(job)], env=env, capture_output=True, text=True)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("BARE ")), None)
    if proc.returncode or line is None:
        raise SystemExit(f"bare embedding failed:\n{proc.stderr[-3000:]}")
    return json.loads(line[5:])


def write_listing(n: int | None, path: Path) -> int:
    """The first ``n`` records with a title (all when None), largest dump first, as one JSON list at ``path``."""
    files = sorted(glob.glob(str(PAPERLISTS / "*" / "*.json.gz")), key=lambda f: -Path(f).stat().st_size)
    if not files:
        raise SystemExit(f"{PAPERLISTS}: no *.json.gz listings (../shared data is needed)")
    out: list[dict] = []
    for f in files:
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            records = json.load(fh)
        for r in records:
            if isinstance(r, dict) and str(r.get("title") or "").strip():
                out.append(r)
                if n is not None and len(out) >= n:
                    break
        if n is not None and len(out) >= n:
            break
    path.write_text(json.dumps(out), encoding="utf-8")
    return len(out)


def _rss_mib(pid: int) -> float:
    """VmRSS of process ``pid`` in MiB (0 when it has exited)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(x.split()[1]) / 1024 for x in fh if x.startswith("VmRSS:")), 0.0)
    except OSError:
        return 0.0


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (children, their children...), from the parent ids in ``/proc/*/stat``."""
    parent: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as fh:
                    parent[int(d)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


class RssSampler(threading.Thread):
    """Samples the resident memory (VmRSS) of a process and of its descendants every ``every`` seconds.

    After :meth:`stop`: ``parent``, ``children`` and ``total`` hold the highest sample (MiB) of the process, of its
    descendants together, and of their sum at one instant (a child process does not make memory free).
    """

    def __init__(self, pid: int, every: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.parent = self.children = self.total = 0.0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(self.every):
            parent = _rss_mib(self.pid)
            children = sum(_rss_mib(c) for c in _descendants(self.pid))
            self.parent = max(self.parent, parent)
            self.children = max(self.children, children)
            self.total = max(self.total, parent + children)

    def stop(self) -> dict:
        """Stop sampling; ``{"parent": MiB, "children": MiB, "sum": MiB}`` (peaks over the samples)."""
        self._done.set()
        self.join()
        return {"parent": self.parent, "children": self.children, "sum": self.total}


def seed_resume(atlas: Path, db: Path, leave: int) -> int:
    """Put all but the last ``leave`` stored vectors of ``atlas`` in ``db``'s resume file; returns how many.

    A build of ``db`` then takes them as an interrupted build's vectors (``paperatlas.store.resume``) and does
    everything else cold: the memory of the stages after the embedding at full size, without an hour of embedding.
    """
    import sqlite3

    resume = db.resolve().parent / f".{db.resolve().name}.resume"
    resume.unlink(missing_ok=True)
    src = sqlite3.connect(atlas)
    rows = src.execute("SELECT model, content_hash, vector FROM embeddings ORDER BY rowid").fetchall()
    src.close()
    rows = rows[:max(0, len(rows) - leave)]
    con = sqlite3.connect(resume)
    con.execute("CREATE TABLE vectors (model TEXT NOT NULL, content_hash TEXT NOT NULL, vector BLOB NOT NULL, "
                "PRIMARY KEY (model, content_hash))")
    con.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
    con.commit()
    con.close()
    return len(rows)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def start_serve(db: Path, env: dict, poll_seconds: float) -> tuple[subprocess.Popen, int]:
    """Start ``paperatlas serve`` on ``db`` at a free port and return ``(process, port)`` once it accepts connections.

    Raises SystemExit with the server's last stderr when it exits first; ``poll_seconds`` between attempts.
    """
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "paperatlas.cli", "serve", "--db", str(db), "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while True:  # until the server accepts connections
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"serve exited: {proc.stderr.read().decode()[-2000:]}") from None
            time.sleep(poll_seconds)


def http_figures(db: Path, env: dict, n_requests: int, settle: float = 0.0) -> dict:
    """Serve ``db``, time the first search, then p50/p95 of searches and related-paper requests (ms).

    ``settle`` seconds pass after the first search before the timed requests: the server's background warm-up
    (postings, the related papers' arrays: ~10 s at 42k) is then over and does not share the cores with them.
    """
    import httpx

    t_start = time.perf_counter()
    proc, port = start_serve(db, env, poll_seconds=0.02)
    base = f"http://127.0.0.1:{port}"
    try:
        client = httpx.Client(base_url=base, timeout=120)
        t_listen = time.perf_counter()
        r = client.get("/api/search", params={"q": "graph neural networks"})
        t_first = time.perf_counter()
        r.raise_for_status()
        queries = [q["query"] for q in json.loads(QUERIES.read_text())["queries"]]
        ids = [row["id"] for row in r.json().get("results", [])] or []
        # related: random papers of the atlas (ids from searches of common words)
        for q in ("learning", "model", "network", "data"):
            ids += [row["id"] for row in client.get("/api/search", params={"q": q}).json().get("results", [])]
        rng = random.Random(0)
        time.sleep(settle)
        search_ms, related_ms = [], []
        for k in range(20 + n_requests):
            t = time.perf_counter()
            client.get("/api/search", params={"q": queries[k % len(queries)]}).raise_for_status()
            if k >= 20:
                search_ms.append(1000 * (time.perf_counter() - t))
        for k in range(20 + n_requests):
            pid = rng.choice(ids)
            t = time.perf_counter()
            client.get(f"/api/related/{pid}").raise_for_status()
            if k >= 20:
                related_ms.append(1000 * (time.perf_counter() - t))
        return {"first_query_s": t_first - t_listen, "start_to_first_s": t_first - t_start,
                "search_p50": pct(search_ms, 50), "search_p95": pct(search_ms, 95),
                "related_p50": pct(related_ms, 50), "related_p95": pct(related_ms, 95)}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,all", help="comma-separated paper counts, or 'all'")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/paperatlas-scale"))
    ap.add_argument("--engine", default="local", choices=["local", "ray"])
    ap.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16"])
    ap.add_argument("--src", default=None, help="run this src folder's paperatlas (an older checkout)")
    ap.add_argument("--requests", type=int, default=200, help="timed searches and related requests per size")
    ap.add_argument("--settle", type=float, default=0.0,
                    help="seconds to wait after the first query, until the server's warm-up is over")
    ap.add_argument("--keep", action="store_true", help="keep the atlases (default: deleted after each size)")
    ap.add_argument("--vectors-from", type=Path, default=None, metavar="ATLAS",
                    help="an earlier atlas of the same listing: all but --embed of its vectors go in the new "
                         "atlas's resume file, so the (otherwise cold) build embeds only --embed papers")
    ap.add_argument("--embed", type=int, default=10_000, help="papers left to embed with --vectors-from")
    ap.add_argument("--build-only", action="store_true", help="no HTTP figures (the table shows nan)")
    ap.add_argument("--bare-runs", type=int, default=2, choices=[0, 1, 2],
                    help="times the embedding alone is measured per size: before the build, and after it (2)")
    ap.add_argument("--bare-sample", type=float, default=1.0, metavar="SHARE",
                    help="time the embedding alone on this seeded random share of the texts (0-1], scaled up to "
                         "all of them: a 42k run on a slow CPU in half the time (the build is always whole)")
    ap.add_argument("--json", type=Path, default=None, metavar="FILE",
                    help="also write every size's figures as JSON lines (for benchmarks/cost_model.py)")
    ap.add_argument("--serve-only", type=Path, default=None, metavar="ATLAS",
                    help="no build: only the HTTP figures (first query, p50/p95) of this existing atlas")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = (str(Path(args.src).resolve()) if args.src else str(ROOT / "src"))
    env.setdefault("PAPERATLAS_MODEL_CACHE", str(args.workdir / "models"))
    env["TQDM_DISABLE"] = "1"
    if args.serve_only:
        print(json.dumps(http_figures(args.serve_only, env, args.requests, args.settle)))
        return
    rows = []
    calibration = bare_embedding(None, args.precision, env)
    if calibration:
        print(f"[{time.strftime('%H:%M:%S')}] model loaded in {calibration['load']:.1f} s; precision "
              f"{calibration['note']}", file=sys.stderr, flush=True)
    for size in args.sizes.split(","):
        n = None if size == "all" else int(size)
        listing = args.workdir / f"papers_{size}.json"
        n_real = write_listing(n, listing)
        db = args.workdir / f"atlas_{size}.db"
        for f in args.workdir.glob(f"*atlas_{size}.db*"):
            f.unlink()
        if args.vectors_from:
            seeded = seed_resume(args.vectors_from, db, args.embed)
            print(f"{seeded} vectors from {args.vectors_from} put in the resume file: {args.embed} to embed",
                  file=sys.stderr, flush=True)
        bare = [bare_embedding(listing, args.precision, env, args.bare_sample)] if args.bare_runs else []
        print(f"[{time.strftime('%H:%M:%S')}] {n_real} papers: building...", file=sys.stderr, flush=True)
        job = {"listing": str(listing), "db": str(db), "engine": args.engine, "precision": args.precision}
        proc = subprocess.Popen([sys.executable, "-c", _BUILD, json.dumps(job)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        sampler = RssSampler(proc.pid)
        sampler.start()
        stdout, stderr = proc.communicate()
        sampled = sampler.stop()
        line = next((x for x in stdout.splitlines() if x.startswith("REPORT ")), None)
        if proc.returncode or line is None:
            raise SystemExit(f"build of {n_real} papers failed:\n{stderr[-3000:]}")
        rep = json.loads(line[7:])
        rep["sampled_rss"] = sampled
        if bare and args.bare_runs == 2:
            bare.append(bare_embedding(listing, args.precision, env, args.bare_sample))
        rep["bare"] = bare
        rep["embed_alone"] = statistics.mean(b["load"] + b["encode"] for b in bare) if bare else float("nan")
        print(f"[{time.strftime('%H:%M:%S')}] built in {rep['wall']:.0f} s (load {os.getloadavg()[0]:.1f}); "
              f"RSS peaks sampled every 0.5 s: build process {sampled['parent']:.0f}, its children "
              f"{sampled['children']:.0f}, sum {sampled['sum']:.0f} MiB", file=sys.stderr, flush=True)
        web = (http_figures(db, env, args.requests, args.settle) if not args.build_only else
               dict.fromkeys(("first_query_s", "start_to_first_s", "search_p50", "search_p95", "related_p50",
                              "related_p95"), float("nan")))
        rows.append((n_real, rep, db.stat().st_size / 2**20, web))
        line = json.dumps({"n": n_real, **rep, "atlas_mib": rows[-1][2], **web, "cpu": cpu_model(),
                           "cores": os.cpu_count(), "calibration": calibration})
        print(line, file=sys.stderr, flush=True)
        if args.json:
            with args.json.open("a") as fh:
                fh.write(line + "\n")
        if not args.keep:
            db.unlink()
    model = cpu_model()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    print(f"\nmachine: {model}, {os.cpu_count()} cores, {mem:.0f} GiB; code: {args.src or 'this checkout'}; "
          f"engine {args.engine}, precision {args.precision}"
          + (f" -> {calibration['note']}" if calibration else "") + "\n")
    stages = sorted({k for _, rep, _, _ in rows for k in rep["stages"]},
                    key=lambda k: min(list(rep["stages"]).index(k) if k in rep["stages"] else 99
                                      for _, rep, _, _ in rows))
    print("| papers | " + " | ".join(f"{s} s" for s in stages) + " | total s | embed alone s | build/embed | "
          "papers/s | peak RSS MiB | "
          "+ children MiB | atlas MiB | first query s | start→first s | search p50/p95 ms | related p50/p95 ms |")
    print("|---" * (len(stages) + 12) + "|")
    for n_real, rep, size_mib, web in rows:
        cells = [f"{rep['stages'].get(s, 0):.1f}" for s in stages]
        print(f"| {n_real:,} | " + " | ".join(cells) + f" | {rep['wall']:.0f} | {rep['embed_alone']:.0f} | "
              f"{rep['wall'] / rep['embed_alone']:.2f} | {n_real / rep['wall']:.1f} | "
              f"{rep['rss']:.0f} | {rep['sampled_rss']['sum']:.0f} | {size_mib:.0f} | {web['first_query_s']:.2f} | "
              f"{web['start_to_first_s']:.2f} | "
              f"{web['search_p50']:.0f}/{web['search_p95']:.0f} | {web['related_p50']:.0f}/{web['related_p95']:.0f} |")
    shutil.rmtree(args.workdir / "models", ignore_errors=True) if not args.keep else None


if __name__ == "__main__":
    main()
