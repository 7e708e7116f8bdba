"""Load benchmark of the web app: N concurrent clients (default 50) for S seconds (default 60), reads and writes.

Usage:
    python benchmarks/web_load.py --db /tmp/load/iclr.db --db /tmp/load/atlas42k.db [--clients 50] [--seconds 60]
        [--profile DIR] [--build]

Each ``--db`` is run in turn with the same client set-up (same seed, mix, clients and duration) and a summary
table at the end compares them: requests per second, latency percentiles, errors, lost writes, the server's CPU
per request, and each atlas's throughput relative to the first (the goal: the 42k-paper atlas at least 0.7x the
ICLR 2021 atlas). Run the sizes back to back: the machine's other load moves every figure.

``--build`` first builds the full-size atlas (all of ``../shared/data/paperlists``, ~42.6k papers) at the last
``--db`` with ``benchmarks/build_42k_fast.py``: that build uses a deterministic STAND-IN embedder (hashed words + a
fixed random projection, 384-d), not all-MiniLM-L6-v2, so query semantics differ (related papers, hybrid search,
For you, topic labels) but the sizes are the real ones (papers, topics, vectors, FTS index). The server still loads
the real query model, so a hybrid search costs what it costs in production.

What it does, for each atlas:

1. copies the atlas (SQLite backup) to a temporary file, so every run starts from the same reading list
   (``--in-place`` serves the atlas itself);
2. starts the real server, ``python -m paperatlas.cli serve --db COPY --port P`` (waitress, 4 threads), as a
   subprocess and waits until it answers;
3. warm-up (not timed): the app builds per-atlas caches on first use (query model, recommender TF-IDF ~15 s at
   40k, in a background thread at start; the map JSON on the first ``/api/map``), so it likes one paper and
   waits until ``/foryou`` answers in under ``--warm-ms`` twice in a row, then touches every route once;
4. runs ``--clients`` closed-loop clients (asyncio + httpx, one ``AsyncClient`` and cookie jar each, no think
   time unless ``--think-ms``) for ``--seconds``. Each request is a read whose work is bounded by the page
   (``/``, ``/?q=<words from titles>``, ``/?status=Oral``, ``/paper/<id>``, ``/topic/<id>``, ``/list``,
   ``/api/search?q=...``) or, with probability ``--write-share`` (default 0.15), a write: ``POST /paper/<id>/mark``
   with action like / add (to list ``load-bench``) / read / note (a text unique per write). Writes carry
   ``Origin: <server origin>`` and the session's CSRF token (the hidden ``csrf_token`` input of the last
   ``/paper/<id>`` page the client fetched; posted without it when the page has none);
5. measures apart, with ``--apart-clients`` clients for ``--apart-seconds``, the pages whose work grows with the
   atlas by nature: ``/foryou`` (scores every paper against the liked ones) and ``/api/map`` (every paper's
   point; served from a cache with an ETag, but the body is atlas-sized);
6. prints requests, errors (non-2xx/3xx, exceptions, timeouts), p50/p95/p99/max latency (ms) overall and per
   route kind, throughput, the server's CPU per request and peak memory, and a lost-write check: after the run the
   reading list (:func:`paperatlas.readinglist.entries`) must show every write that got a success response
   (liked, in the list, read, and for notes the last note each client wrote on a paper: each client writes notes
   only on its own share of the papers, so the last one it wrote must be the one stored).

``--profile DIR`` samples the server with py-spy (``pip install py-spy`` into the venv; not a project dependency)
during the timed phase, writes DIR/<atlas>.txt (collapsed stacks) and prints the functions a request spends its
time in, inclusive and own, as shares of the samples: what a request costs, and what grows with the atlas. The
sampling (50 Hz, pausing the server for each sample) slows the server a little: take the throughput figures from
a run without it.

Exit code 1 when there were errors or a write was lost. Goal: 0 errors, no lost write, 42k >= 0.7x ICLR 2021 req/s.
Without ``--think-ms`` the clients are a closed loop: mean latency ~= clients / throughput; ``--think-ms`` models
readers pausing between pages. The clients run on the same machine as the server (they share its cores). Not a
test: run on demand.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import random
import re
import resource
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

HERE = Path(__file__).resolve().parent
CSRF_RE = re.compile(r'<input[^>]*name="csrf_token"[^>]*value="([^"]*)"'
                     r'|<input[^>]*value="([^"]*)"[^>]*name="csrf_token"')
BENCH_LIST = "load-bench"
#: route kind -> weight among the timed phase's reads (pages whose work is bounded by the page)
READ_MIX = {"index": 6, "search": 20, "status": 5, "paper": 22, "topic": 8, "list": 6, "api_search": 12}
#: route kind -> weight among the reads measured apart: pages whose work grows with the atlas by nature
APART_MIX = {"foryou": 8, "api_map": 1}
WRITE_ACTIONS = ("like", "add", "read", "note")
STOPWORDS = set("a an and are as at be by for from in is it of on or the to with via we our using towards toward "
                "into its can do not than that this these those under over between without".split())


@dataclass
class Corpus:
    ids: list[str]
    topic_ids: list[int]
    words: list[str]
    n_papers: int = 0
    n_topics: int = 0
    embed_model: str = ""


def load_corpus(db: str) -> Corpus:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT id, title FROM papers").fetchall()
        tids = [r[0] for r in con.execute("SELECT id FROM topics")]
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    finally:
        con.close()
    words: set[str] = set()
    for _, title in rows:
        for w in re.findall(r"[A-Za-z][A-Za-z-]{2,}", title or ""):
            if w.lower() not in STOPWORDS:
                words.add(w.lower())
    return Corpus(ids=[r[0] for r in rows], topic_ids=tids, words=sorted(words), n_papers=len(rows),
                  n_topics=len(tids), embed_model=meta.get("embed_model", "").strip('"'))


@dataclass
class Sample:
    kind: str
    ms: float
    ok: bool
    what: str = ""  # status code or exception, for errors


@dataclass
class Writes:
    """What one client wrote, by outcome: ok = a 2xx/3xx answer, unsure = an exception/timeout (may be applied)."""

    liked: set[str] = field(default_factory=set)
    added: set[str] = field(default_factory=set)
    read: set[str] = field(default_factory=set)
    #: paper id -> [(note text, outcome)] in the order written
    notes: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    n_ok: int = 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_atlas(src: str, dst: str) -> None:
    s = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    d = sqlite3.connect(dst)
    try:
        s.backup(d)
    finally:
        d.close()
        s.close()


def cpu_seconds(pid: int | None = None) -> float:
    """User + system CPU time of this process (``pid`` None) or of process ``pid`` (Linux /proc), seconds."""
    if pid is None:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return ru.ru_utime + ru.ru_stime
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def peak_rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class Client:
    def __init__(self, n: int, base: str, corpus: Corpus, rng: random.Random, note_ids: list[str], timeout: float,
                 write_share: float, think_ms: float, mix: dict[str, int] | None = None):
        self.n, self.base, self.corpus, self.rng = n, base, corpus, rng
        self.mix = mix or READ_MIX
        self.note_ids = note_ids  # this client's own share of the papers, for notes
        self.write_share, self.think = write_share, think_ms / 1000
        self.http = httpx.AsyncClient(base_url=base, timeout=timeout, follow_redirects=False,
                                      headers={"User-Agent": f"paperatlas-web-load/{n}"})
        self.token: str | None = None  # the session's CSRF token (None: the pages have none)
        self.has_session = False
        self.samples: list[Sample] = []
        self.writes = Writes()
        self.seq = 0

    def words(self, k: int) -> str:
        return " ".join(self.rng.sample(self.corpus.words, k))

    def read_target(self) -> tuple[str, str]:
        kind = self.rng.choices(list(self.mix), weights=list(self.mix.values()))[0]
        c, rng = self.corpus, self.rng
        if kind == "search":
            url = "/?" + str(httpx.QueryParams(q=self.words(rng.randint(1, 3))))
        elif kind == "api_search":
            url = "/api/search?" + str(httpx.QueryParams(q=self.words(rng.randint(1, 2))))
        elif kind == "paper":
            url = f"/paper/{rng.choice(c.ids)}"
        elif kind == "topic":
            url = f"/topic/{rng.choice(c.topic_ids)}"
        else:
            url = {"index": "/", "status": "/?status=Oral", "list": "/list", "foryou": "/foryou",
                   "api_map": "/api/map"}[kind]
        return kind, url

    async def get(self, kind: str, url: str, record: bool = True) -> httpx.Response | None:
        t0 = time.perf_counter()
        try:
            r = await self.http.get(url)
            await r.aread()
        except httpx.HTTPError as e:  # timeouts included (httpx.TimeoutException)
            if record:
                what = ("timeout " if isinstance(e, httpx.TimeoutException) else "") + type(e).__name__
                self.samples.append(Sample(kind, (time.perf_counter() - t0) * 1000, False, what))
            return None
        ok = 200 <= r.status_code < 400
        if record:
            self.samples.append(Sample(kind, (time.perf_counter() - t0) * 1000, ok, "" if ok else str(r.status_code)))
        if kind == "paper" and ok:
            self.has_session = True
            m = CSRF_RE.search(r.text)
            if m:
                self.token = m.group(1) or m.group(2)
        return r

    async def write(self, record: bool = True, action: str | None = None, pid: str | None = None) -> bool:
        action = action or self.rng.choice(WRITE_ACTIONS)
        if action == "note":
            pid = pid or self.rng.choice(self.note_ids)
        pid = pid or self.rng.choice(self.corpus.ids)
        if not self.has_session:  # a session and its token come with a paper page, as in a browser
            await self.get("paper", f"/paper/{pid}", record=record)
        self.seq += 1
        data = {"action": action}
        if self.token:
            data["csrf_token"] = self.token
        if action == "add":
            data["list"] = BENCH_LIST
        note = ""
        if action == "note":
            note = data["note"] = f"load-bench note c{self.n}-w{self.seq} {uuid.uuid4().hex[:12]}"
        kind = f"write_{action}"
        t0 = time.perf_counter()
        outcome, what = "ok", ""
        try:
            r = await self.http.post(f"/paper/{pid}/mark", data=data,
                                     headers={"Origin": self.base, "Referer": f"{self.base}/paper/{pid}"})
            await r.aread()
            if not 200 <= r.status_code < 400:
                outcome, what = "failed", f"{r.status_code} {r.text[:80]!r}"
        except httpx.TimeoutException as e:
            outcome, what = "unsure", f"timeout {type(e).__name__}"
        except httpx.HTTPError as e:
            outcome, what = "unsure", type(e).__name__
        ms = (time.perf_counter() - t0) * 1000
        if record:
            self.samples.append(Sample(kind, ms, outcome == "ok", what))
        w = self.writes
        if action == "note":
            w.notes[pid].append((note, outcome))
        if outcome == "ok":
            w.n_ok += 1
            {"like": w.liked, "add": w.added, "read": w.read}.get(action, set()).add(pid)
        return outcome == "ok"

    async def run(self, deadline: float) -> None:
        while time.perf_counter() < deadline:
            if self.rng.random() < self.write_share:
                await self.write()
            else:
                await self.get(*self.read_target())
            if self.think:  # a pause, cut short at the deadline (it is not counted as in-flight time)
                await asyncio.sleep(max(0.0, min(self.rng.uniform(0, 2 * self.think), deadline - time.perf_counter())))

    async def close(self) -> None:
        await self.http.aclose()


def pct(ms: list[float]) -> str:
    a = np.asarray(ms)
    p50, p95, p99 = np.percentile(a, [50, 95, 99])
    return f"{p50:7.1f} {p95:7.1f} {p99:7.1f} {a.max():8.1f}"


def check_writes(db: str, clients: list[Client]) -> tuple[int, int, list[str]]:
    """(checked, lost, examples): every successful write must be visible in the reading list."""
    from paperatlas import readinglist as rl

    es = {e.paper_id: e for e in rl.entries(db)}
    checked, lost, examples = 0, 0, []

    def miss(msg: str) -> None:
        nonlocal lost
        lost += 1
        if len(examples) < 10:
            examples.append(msg)

    for c in clients:
        w = c.writes
        for pid in w.liked:
            checked += 1
            if not (pid in es and es[pid].rating > 0):
                miss(f"like of {pid} (client {c.n}) not stored")
        for pid in w.added:
            checked += 1
            if not (pid in es and BENCH_LIST in es[pid].lists):
                miss(f"{pid} (client {c.n}) not in list {BENCH_LIST!r}")
        for pid in w.read:
            checked += 1
            if not (pid in es and es[pid].read_at):
                miss(f"read mark of {pid} (client {c.n}) not stored")
        for pid, attempts in w.notes.items():
            oks = [i for i, (_, o) in enumerate(attempts) if o == "ok"]
            if not oks:
                continue
            checked += 1
            # the last successful note, or one of the unsure attempts after it (they may have been applied)
            accept = {attempts[oks[-1]][0]} | {t for t, o in attempts[oks[-1] + 1:] if o == "unsure"}
            stored = es[pid].note if pid in es else None
            if stored not in accept:
                miss(f"note on {pid} (client {c.n}): stored {stored!r}, expected {attempts[oks[-1]][0]!r}")
    return checked, lost, examples


async def wait_ready(base: str, proc: subprocess.Popen, timeout: float) -> float:
    t0 = time.perf_counter()
    async with httpx.AsyncClient(base_url=base, timeout=10) as h:
        while time.perf_counter() - t0 < timeout:
            if proc.poll() is not None:
                raise SystemExit(f"the server exited with code {proc.returncode}")
            try:
                if (await h.get("/topics")).status_code == 200:
                    return time.perf_counter() - t0
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.25)
    raise SystemExit(f"the server did not answer within {timeout:.0f} s")


async def warm_up(warm: Client, warm_ms: float, timeout: float, model_timeout: float) -> tuple[float, str]:
    """Like one paper (so /foryou computes recommendations), wait until searches are hybrid (the query model is
    loaded; at most ``model_timeout`` s: without the model package they stay BM25) and /foryou is fast twice, then
    touch each route once."""
    t0 = time.perf_counter()
    if not await warm.write(record=False, action="like"):
        raise SystemExit("warm-up: the first write failed: " + ", ".join(s.what for s in warm.samples if not s.ok))
    mode = "?"
    while mode != "hybrid" and time.perf_counter() - t0 < model_timeout:  # the query model loads first
        r = await warm.get("warm", "/api/search?q=learning", record=False)
        mode = r.json().get("mode", "?") if r is not None and r.status_code == 200 else "?"
        if mode != "hybrid":
            await asyncio.sleep(1)
    fast = 0
    while fast < 2:
        if time.perf_counter() - t0 > timeout:
            raise SystemExit(f"warm-up: /foryou still slower than {warm_ms:.0f} ms after {timeout:.0f} s")
        t = time.perf_counter()
        r = await warm.get("foryou", "/foryou", record=False)
        fast = fast + 1 if r is not None and r.status_code == 200 and (time.perf_counter() - t) * 1000 < warm_ms else 0
        if not fast:
            await asyncio.sleep(0.5)
    c = warm.corpus
    for url in ("/", "/?q=learning", "/?status=Oral", f"/paper/{c.ids[0]}", f"/topic/{c.topic_ids[0]}", "/list",
                "/api/map"):
        await warm.get("warm", url, record=False)
    return time.perf_counter() - t0, mode


def report(title: str, samples: list[Sample], elapsed: float) -> dict:
    """Print the per-kind latency table of one phase; return its totals (requests, errors, req/s, percentiles)."""
    errors = [x for x in samples if not x.ok]
    by_kind: dict[str, list[Sample]] = defaultdict(list)
    for x in samples:
        by_kind[x.kind].append(x)
    rate = len(samples) / elapsed if elapsed else float("nan")
    print(f"   {title}: requests {len(samples)}, errors {len(errors)}, throughput {rate:.1f} req/s")
    print(f"   {'kind':<12} {'n':>6} {'err':>4} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'max ms':>8}")
    for kind in sorted(by_kind, key=lambda k: (k.startswith("write"), k)):
        ss = by_kind[kind]
        print(f"   {kind:<12} {len(ss):>6} {sum(not x.ok for x in ss):>4} {pct([x.ms for x in ss])}")
    all_ms = [x.ms for x in samples]
    print(f"   {'ALL':<12} {len(samples):>6} {len(errors):>4} {pct(all_ms) if all_ms else ''}")
    if errors:
        kinds: dict[str, int] = defaultdict(int)
        for x in errors:
            kinds[f"{x.kind}: {x.what}"] += 1
        print("   errors: " + "; ".join(f"{k} x{n}" for k, n in sorted(kinds.items(), key=lambda x: -x[1])[:8]))
    p50, p95, p99 = np.percentile(all_ms, [50, 95, 99]) if all_ms else (float("nan"),) * 3
    return {"requests": len(samples), "errors": len(errors), "rps": rate, "p50": p50, "p95": p95, "p99": p99}


def start_profiler(pid: int, out: Path, seconds: float) -> subprocess.Popen | None:
    """py-spy sampling the server ``pid`` for ``seconds`` into ``out`` (collapsed stacks), or None without py-spy."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        print("   --profile: py-spy is not installed (pip install py-spy): no profile")
        return None
    out.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([spy, "record", "--pid", str(pid), "--rate", "50", "--duration", str(int(seconds)),
                             "--format", "raw", "--output", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def summarise_profile(path: Path, top: int = 25) -> None:
    """Print the functions of the sampled server stacks by inclusive and own share of the samples.

    Waitress's idle threads (waiting for a task) and the main loop are left out, so the shares are of the time the
    server spent on requests (and its warm-up thread, if any).
    """
    if not path.is_file():
        print(f"   profile: {path} was not written")
        return
    incl: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        frames = stack.split(";")
        if any(w in stack for w in ("wait (threading.py", "poll (waitress/wasyncore.py", "select (")) \
                and not any("paperatlas" in f or "flask" in f for f in frames):
            continue  # an idle thread
        k = int(n)
        total += k
        names = [re.sub(r":\d+\)$", ")", f) for f in frames[1:]]  # per function, not per line
        for name in set(names):
            incl[name] += k
        if names:
            own[names[-1]] += k
    if not total:
        print("   profile: no busy samples")
        return
    print(f"   profile ({total} busy samples): inclusive share, paperatlas/flask/jinja/sqlite functions")
    shown = 0
    for name, k in incl.most_common():
        if any(w in name for w in ("paperatlas", "flask/app", "jinja2/environment.py", "templates/", "sqlite3")):
            print(f"     {100 * k / total:5.1f}%  {name}")
            shown += 1
            if shown >= top:
                break
    print("   own time (where the CPU is):")
    for name, k in own.most_common(15):
        print(f"     {100 * k / total:5.1f}%  {name}")


async def run_clients(clients: list[Client], seconds: float) -> float:
    t0 = time.perf_counter()
    await asyncio.gather(*(c.run(t0 + seconds) for c in clients))
    return time.perf_counter() - t0


async def bench(args, base: str, proc: subprocess.Popen, served: str, corpus: Corpus, label: str) -> dict:
    rng = random.Random(args.seed)
    ready_s = await wait_ready(base, proc, args.start_timeout)
    print(f"server ready after {ready_s:.1f} s")
    shuffled = corpus.ids[:]
    rng.shuffle(shuffled)
    note_share = {i: shuffled[i::args.clients + 1] for i in range(args.clients + 1)}  # client n notes only its own
    warm = Client(args.clients, base, corpus, random.Random(rng.random()), note_share[args.clients], args.timeout,
                  0, 0)
    print(f"warm-up (not timed): liking one paper, waiting until searches are hybrid (query model loaded) and "
          f"/foryou answers in < {args.warm_ms:.0f} ms twice (recommender cache), then each route once ...",
          flush=True)
    warm_s, mode = await warm_up(warm, args.warm_ms, args.warmup_timeout, args.model_timeout)
    print(f"warm-up done in {warm_s:.1f} s; search mode: {mode}; CSRF token "
          + ("found in the paper page and posted" if warm.token else "not in the paper page: posting without it"))
    if args.settle > 0:
        await asyncio.sleep(args.settle)  # the app's own warm-up thread (facets, authors) finishes meanwhile
    clients = [Client(i, base, corpus, random.Random(rng.random()), note_share[i], args.timeout, args.write_share,
                      args.think_ms) for i in range(args.clients)]
    print(f"running {args.clients} clients for {args.seconds:.0f} s (write share {args.write_share:.0%}, "
          f"think time {args.think_ms:.0f} ms) ...", flush=True)
    spy = start_profiler(proc.pid, Path(args.profile) / f"{label}.txt", args.seconds) if args.profile else None
    cpu0, server_cpu0 = cpu_seconds(), cpu_seconds(proc.pid)
    elapsed = await run_clients(clients, args.seconds)
    cpu, server_cpu = cpu_seconds() - cpu0, cpu_seconds(proc.pid) - server_cpu0
    apart: list[Client] = []
    apart_elapsed = 0.0
    if args.apart_seconds > 0 and args.apart_clients > 0:
        apart = [Client(1000 + i, base, corpus, random.Random(rng.random()), note_share[i], args.timeout, 0,
                        args.think_ms, mix=APART_MIX) for i in range(args.apart_clients)]
        print(f"measuring apart: {args.apart_clients} clients for {args.apart_seconds:.0f} s on "
              f"{', '.join(APART_MIX)} ...", flush=True)
        apart_elapsed = await run_clients(apart, args.apart_seconds)
    for c in [*clients, *apart, warm]:
        await c.close()
    server_rss = peak_rss_mib(proc.pid)
    if spy is not None:
        try:
            spy.wait(30)
        except subprocess.TimeoutExpired:
            spy.kill()

    samples = [x for c in clients for x in c.samples]
    print()
    print(f"== web load: {args.clients} clients, {args.seconds:.0f} s (+{elapsed - args.seconds:.1f} s for the "
          f"requests in flight at the end) against {served}")
    print(f"   atlas: {corpus.n_papers} papers, {corpus.n_topics} topics (areas + sub-topics), embeddings by "
          f"{corpus.embed_model or '?'}" + ("  [STAND-IN embedder: query semantics differ, sizes are real]"
                                            if "stand-in" in corpus.embed_model else ""))
    out = report("timed phase (pages bounded by the page, and writes)", samples, elapsed)
    out["writes_ok"] = sum(c.writes.n_ok for c in clients)
    out["cpu_ms"] = 1000 * server_cpu / max(1, len(samples))
    print(f"   CPU during the run: server {server_cpu:.1f} s ({server_cpu / elapsed:.0%} of a core, "
          f"{out['cpu_ms']:.1f} ms a request), clients (this process, same machine) {cpu:.1f} s "
          f"({cpu / elapsed:.0%}); {os.cpu_count()} cores" + (f"; server peak RSS {server_rss:.0f} MiB"
                                                               if server_rss else ""))
    if apart:
        a = report("measured apart (atlas-sized by nature)", [x for c in apart for x in c.samples], apart_elapsed)
        out["apart_rps"], out["apart_p50"], out["apart_errors"] = a["rps"], a["p50"], a["errors"]
    checked, lost, examples = check_writes(served, clients)
    out["lost"], out["checked"] = lost, checked
    print(f"   lost-write check: {out['writes_ok']} successful writes = {checked} effects "
          f"(distinct likes, list entries, read marks; last note per paper) checked in readinglist.entries(): "
          f"{lost} lost")
    for e in examples:
        print(f"     LOST: {e}")
    if spy is not None:
        summarise_profile(Path(args.profile) / f"{label}.txt")
    out["papers"] = corpus.n_papers
    return out


def run_one(args, db: str) -> dict:
    """Copy ``db``, serve the copy, run :func:`bench` on it; the results of :func:`bench`."""
    with tempfile.TemporaryDirectory(prefix="web_load_", dir=args.tmp) as tmp:
        served = db
        if not args.in_place:
            served = str(Path(tmp) / "atlas.db")
            t = time.perf_counter()
            copy_atlas(db, served)
            print(f"copied {db} to {served} ({time.perf_counter() - t:.1f} s); the original is not written")
        corpus = load_corpus(served)
        if "stand-in" in corpus.embed_model:
            print(f"NOTE: {db} was built with the stand-in embedder {corpus.embed_model} "
                  "(benchmarks/build_42k_fast.py): query semantics differ, sizes are the real ones")
        port = args.port or free_port()
        base = f"http://127.0.0.1:{port}"
        log = Path(tmp) / "server.log"
        with open(log, "w") as logf:
            proc = subprocess.Popen([sys.executable, "-m", "paperatlas.cli", "serve", "--db", served, "--port",
                                     str(port)], stdout=logf, stderr=subprocess.STDOUT,
                                    env={**os.environ, "PYTHONUNBUFFERED": "1"})
            print(f"serving {served} at {base} (paperatlas serve, pid {proc.pid})", flush=True)
            try:
                out = asyncio.run(bench(args, base, proc, served, corpus, Path(db).stem))
            finally:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        tail = log.read_text(errors="replace").strip().splitlines()
        noisy = [ln for ln in tail if "Traceback" in ln or "Error" in ln]
        if noisy:
            print(f"server log: {len(noisy)} error lines, last: {noisy[-1][:200]}")
            first = next(i for i, ln in enumerate(tail) if "Traceback" in ln or "Error" in ln)
            print("   " + "\n   ".join(tail[max(0, first - 2):first + 40]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", action="append", default=None,
                    help="an atlas to serve; repeat to run several back to back (default /tmp/atlas42k.db)")
    ap.add_argument("--build", action="store_true",
                    help="first build the last --db from the whole shared corpus with the stand-in embedder "
                    "(benchmarks/build_42k_fast.py; replaces an existing atlas there)")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--write-share", type=float, default=0.15, help="share of requests that are writes")
    ap.add_argument("--think-ms", type=float, default=0, help="mean pause between a client's requests")
    ap.add_argument("--apart-clients", type=int, default=10,
                    help="clients of the phase measured apart (/foryou, /api/map); 0: skip it")
    ap.add_argument("--apart-seconds", type=float, default=20)
    ap.add_argument("--settle", type=float, default=10,
                    help="seconds to wait after the warm-up, so the app's own warm-up thread finishes")
    ap.add_argument("--timeout", type=float, default=30, help="per-request timeout, seconds (counted as an error)")
    ap.add_argument("--port", type=int, default=0, help="default: a free port")
    ap.add_argument("--in-place", action="store_true",
                    help="serve (and write to) --db itself instead of a temporary copy")
    ap.add_argument("--tmp", default=None, help="folder for the copies (default: the system's temporary folder)")
    ap.add_argument("--profile", default=None, metavar="DIR",
                    help="sample the server with py-spy during the timed phase; collapsed stacks in DIR")
    ap.add_argument("--warm-ms", type=float, default=1000, help="warm-up ends when /foryou is faster than this")
    ap.add_argument("--warmup-timeout", type=float, default=300)
    ap.add_argument("--model-timeout", type=float, default=120,
                    help="longest wait for hybrid search (the query model) during warm-up")
    ap.add_argument("--start-timeout", type=float, default=180)
    ap.add_argument("--min-ratio", type=float, default=0.7,
                    help="goal: every atlas's req/s at least this share of the first's")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    dbs = args.db or ["/tmp/atlas42k.db"]

    if args.build:
        sys.path.insert(0, str(HERE))
        from build_42k_fast import main as build_main

        build_main(["--db", dbs[-1], "--replace"])
    for db in dbs:
        if not Path(db).is_file():
            raise SystemExit(f"{db}: no atlas (pass --build, or build one: python benchmarks/build_42k_fast.py)")
    results = []
    for db in dbs:
        results.append(run_one(args, db))
        print(flush=True)
    first = results[0]["rps"]
    print(f"== summary: {args.clients} clients x {args.seconds:.0f} s, write share {args.write_share:.0%}, "
          f"seed {args.seed}" + ("  (profiled: py-spy slows the server)" if args.profile else ""))
    print(f"   {'atlas':<28} {'papers':>7} {'req/s':>7} {'p50':>7} {'p95':>7} {'p99':>7} {'err':>4} "
          f"{'writes':>6} {'lost':>4} {'CPU ms/req':>10} {'ratio':>6} {'apart req/s':>11}")
    ok = True
    for db, r in zip(dbs, results, strict=True):
        ratio = r["rps"] / first if first else float("nan")
        ok &= r["errors"] == 0 and r["lost"] == 0 and ratio >= args.min_ratio
        print(f"   {Path(db).name:<28} {r['papers']:>7} {r['rps']:>7.1f} {r['p50']:>7.0f} {r['p95']:>7.0f} "
              f"{r['p99']:>7.0f} {r['errors']:>4} {r['writes_ok']:>6} {r['lost']:>4} {r['cpu_ms']:>10.1f} "
              f"{ratio:>6.2f} {r.get('apart_rps', float('nan')):>11.1f}")
    print(f"goal: 0 errors, 0 lost writes, every atlas >= {args.min_ratio}x the first's req/s -> "
          f"{'MET' if ok else 'NOT MET'}")
    return 0 if all(r["errors"] == 0 and r["lost"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
