"""Latency of ``/api/ask`` from a warm web app, and of ``paperatlas ask`` from the command line (issue 29, part 6).

Usage:
    python benchmarks/ask_latency.py --db /tmp/h4/atlas42k.db [--questions 20] [--seed 0] [--settle 30]
        [--cli-db /tmp/h4/iclr.db]

For each ``--db``: starts the real server (``python -m paperatlas.cli serve --db DB --port P``, waitress, the query
model loaded by the app's warm-up) on a copy of the atlas (``--in-place``: the atlas itself), waits until
``/api/search`` answers in ``hybrid`` mode (the query model is loaded) and then ``--settle`` more seconds (the rest
of the warm-up: search indexes, recommender, facets, authors; ~17 s at 42k papers), then asks ``--questions``
questions one after the other, each twice: the first ask of a question (its papers' sentences never embedded
before: the figure that counts) and again at once (the sentence vectors from the app's cache), then its Ask page
(``/ask``: the same answer rendered with the cited papers' entries). The questions are
author keywords: the given keyphrase (from the paperlists' ``keywords``) of papers drawn with ``--seed`` from the
atlas, then the Ask page's example questions (longer, in words) and two questions no paper addresses. Prints each
question's times, whether it was answered, and p50 / p95 / max of the keyword questions, of every first ask and of
every second one. The goal: at most 1 s warm at 42k papers.

``--cli-db`` also times ``paperatlas ask QUESTION --db CLI_DB`` (a fresh process: imports, the atlas, the query
model, the answer) for the three example questions of the Ask page (goal: at most 2 s on the ICLR 2021 atlas).

An atlas built by ``benchmarks/build_42k_fast.py`` has STAND-IN paper vectors (hashed words, not MiniLM): the app
still loads the real MiniLM query model and ``ask`` embeds the question and the sentences with it, so the costs
are the real ones, but the search's meaning tier and the nearest topics of a miss compare MiniLM vectors with
stand-in ones (the answers' papers come from the word tiers). The script says so when it sees one.

The machine's other load moves every figure: run it alone, and read ``uptime``'s load average printed at the start.

Not a test: run on demand.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

#: Questions no paper of a machine-learning atlas addresses (the honest miss costs its own time).
OFF_TOPIC = ["best pizza dough hydration", "how to repot an orchid after flowering"]


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_atlas(src: str, dst: str) -> None:
    """Copy an atlas file with SQLite's backup API (a consistent copy even while another process reads it)."""
    with sqlite3.connect(f"file:{src}?mode=ro", uri=True) as a, sqlite3.connect(dst) as b:
        a.backup(b)


def keyword_questions(db: str, n: int, seed: int) -> tuple[list[str], str]:
    """``n`` author keywords of the atlas's papers as questions (distinct, drawn with ``seed``), and its embedder."""
    from paperatlas.store import Atlas

    atlas = Atlas(db)
    rng = random.Random(seed)
    papers = [p for p in atlas.papers if p.given_keyphrases]
    rng.shuffle(papers)
    out: list[str] = []
    for p in papers:
        kw = rng.choice(p.given_keyphrases).strip()
        if 3 <= len(kw) <= 80 and kw.lower() not in {q.lower() for q in out}:
            out.append(kw)
        if len(out) == n:
            break
    model = atlas.embed_model
    atlas.close()
    return out, model


def get(url: str, timeout: float = 60.0) -> tuple[int, bytes, float]:
    """``(status, body, seconds)`` of one GET."""
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        body, status = e.read(), e.code
    return status, body, time.perf_counter() - t


def wait_ready(base: str, proc: subprocess.Popen, limit: float = 300.0) -> float:
    """Seconds until the server's searches run in ``hybrid`` mode (its query model loaded)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited ({proc.returncode})")
        try:
            status, body, _ = get(f"{base}/api/search?q=neural+networks&k=1", timeout=30)
            if status == 200 and json.loads(body).get("mode") == "hybrid":
                return time.perf_counter() - t0
        except (OSError, ValueError):
            pass
        time.sleep(1.0)
    raise SystemExit(f"the server did not load its query model in {limit:.0f} s")


def pct(xs: list[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank) of ``xs``."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


def summary(name: str, xs: list[float]) -> str:
    """One line: p50, p95, max (ms) of ``xs`` (seconds)."""
    return (f"{name:<32} n={len(xs):>3}  p50 {1000 * statistics.median(xs):7.0f} ms  p95 {1000 * pct(xs, 95):7.0f} ms"
            f"  max {1000 * max(xs):7.0f} ms")


def bench_web(args, db: str) -> None:
    """Serve (a copy of) ``db`` and time ``/api/ask`` (see the module docstring)."""
    from paperatlas.web.ask_views import EXAMPLES

    questions, model = keyword_questions(db, args.questions, args.seed)
    n_kw = len(questions)
    questions += [*EXAMPLES, *OFF_TOPIC]
    print(f"\n== {db}: {len(questions)} questions ({n_kw} author keywords, seed {args.seed}; the Ask page's "
          f"{len(EXAMPLES)} examples; {len(OFF_TOPIC)} off-topic); paper vectors by {model}")
    if "stand-in" in model:
        print("   NOTE: STAND-IN paper vectors (benchmarks/build_42k_fast.py): the app's query model is the real "
              "MiniLM (question and sentences embedded by it, the real cost); the search's meaning tier and a miss's "
              "nearest topics compare it with stand-in vectors")
    with tempfile.TemporaryDirectory(prefix="ask_latency_", dir=args.tmp) as tmp:
        served = db
        if not args.in_place:
            served = str(Path(tmp) / "atlas.db")
            t = time.perf_counter()
            copy_atlas(db, served)
            print(f"   copied to {served} ({time.perf_counter() - t:.1f} s)")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        log = Path(tmp) / "server.log"
        with open(log, "w") as logf:
            proc = subprocess.Popen([sys.executable, "-m", "paperatlas.cli", "serve", "--db", served, "--port",
                                     str(port)], stdout=logf, stderr=subprocess.STDOUT,
                                    env={**os.environ, "PYTHONUNBUFFERED": "1"})
            try:
                ready = wait_ready(base, proc)
                print(f"   query model loaded {ready:.1f} s after start; settling {args.settle:.0f} s more")
                time.sleep(args.settle)
                first, again, kw, pages = [], [], [], []
                for q in questions:
                    url = f"{base}/api/ask?" + urllib.parse.urlencode({"q": q})
                    status, body, t1 = get(url)
                    _, _, t2 = get(url)
                    page_status, _, t3 = get(url.replace("/api/ask?", "/ask?"))
                    d = json.loads(body) if status == 200 else {}
                    what = "miss" if d.get("miss") else f"{len(d.get('sentences', []))} sentences, " \
                        f"{len(d.get('papers', []))} papers" if status == 200 else f"HTTP {status}"
                    print(f"   {1000 * t1:6.0f} ms  then {1000 * t2:5.0f} ms  page {1000 * t3:5.0f} ms  "
                          f"{q[:50]!r:<52} {what}")
                    if status == 200:
                        first.append(t1)
                        again.append(t2)
                        if page_status == 200:
                            pages.append(t3)
                        if len(first) <= n_kw:
                            kw.append(t1)
            finally:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        print("   " + summary("/api/ask, author keywords", kw))
        print("   " + summary("/api/ask, first ask (all)", first))
        print("   " + summary("/api/ask, same question again", again))
        print("   " + summary("/ask page (sentences cached)", pages))


def bench_cli(db: str) -> None:
    """Time ``paperatlas ask`` in a fresh process for the Ask page's example questions."""
    from paperatlas.web.ask_views import EXAMPLES

    exe = shutil.which("paperatlas", path=str(Path(sys.executable).parent)) or "paperatlas"
    print(f"\n== CLI: {exe} ask QUESTION --db {db}")
    times = []
    for q in EXAMPLES:
        t = time.perf_counter()
        r = subprocess.run([exe, "ask", q, "--db", db], capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        first = (r.stdout.strip().splitlines() or ["?"])[0]
        print(f"   {times[-1]:5.2f} s  exit {r.returncode}  {q!r}: {first[:70]}…")
    print("   " + summary("paperatlas ask (wall)", times))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", action="append", default=[], help="an atlas to serve (repeatable)")
    ap.add_argument("--questions", type=int, default=20, help="author-keyword questions per atlas")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--settle", type=float, default=30.0, help="seconds to wait after the query model is loaded")
    ap.add_argument("--in-place", action="store_true", help="serve the atlas itself, not a copy")
    ap.add_argument("--tmp", default=None, help="where the copy goes (default: the system's temporary folder)")
    ap.add_argument("--cli-db", default=None, help="also time `paperatlas ask` on this atlas")
    args = ap.parse_args()
    if not args.db and not args.cli_db:
        ap.error("give --db and/or --cli-db")
    print(f"load average: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f} "
          f"on {os.cpu_count()} cores")
    for db in args.db:
        bench_web(args, db)
    if args.cli_db:
        bench_cli(args.cli_db)


if __name__ == "__main__":
    main()
