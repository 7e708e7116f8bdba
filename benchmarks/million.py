"""Search at a million papers: a synthetic atlas made from a real one by repetition, served and timed over HTTP.

Usage:
    python benchmarks/million.py --atlas SRC.db --n 1000000 --out /tmp/million.db [--sigma 0.02] [--drop 0.1]
                                 [--seed 0] [--requests 200] [--build-only | --serve-only | --profile | --recall]
                                 [--check]

Issue 16, point 3: "at 1M papers (vectors and FTS rows made from the corpus by repetition with perturbed text),
search p95 ≤ 100 ms over HTTP, with the memory it needs stated".

**Build** (skipped by ``--serve-only``). ``SRC`` (a real atlas made by ``paperatlas build``; opened read-only and
never written) is copied to ``--out`` with SQLite's backup API, then ``N - len(SRC)`` replicas of its papers are
added, replica ``k`` of paper ``ID`` being ``ID~r<k>`` (replica 1 of every paper, then replica 2, ..., the last
round cut at N):

* title: one word (of ≥ 3 letters; the first word when none) replaced by a word drawn uniformly from the
  vocabulary of all titles (lower-case words of ≥ 4 letters);
* abstract: each word (whitespace-separated) dropped with probability ``--drop`` (default 0.1);
* TL;DR, keyphrases, authors, venue, links, topic ids and every other column: as in the original;
* map position: ``x, y`` plus Gaussian noise of ``--jitter`` (default 0.05) times the standard deviation of the
  atlas's ``x`` (resp. ``y``);
* embedding: the original vector plus Gaussian noise of standard deviation ``--sigma`` per component (default
  0.02: a noise norm of ~0.39 on a unit vector, ~0.93 cosine to the original), L2-normalised, float32.

Rows go into ``papers``, ``papers_fts`` and ``embeddings`` with ``executemany``, one transaction per
``--batch`` papers. Then what a build would store at that size, so ``serve`` computes none of it at the first
request: the neighbour index (:func:`paperatlas.search.neighbours.build_index_blob`, a USearch HNSW graph from
100,000 papers), the recommender's TF-IDF (the stored index's vocabulary and idf kept, the replicas' texts
transformed: :func:`paperatlas.enrich.lexical.update_index` with ``max_new_share`` 1.0, never a refit on N texts;
a source index stored before index version 2 has no idf, so the source's own index is then fitted first, on its
texts alone, as its build would now) and ``meta.n_papers``. ``paper_terms`` (keyphrase label terms, read only by
a rebuild) is not replicated. ``--check`` then opens the result as ``serve`` does (:class:`paperatlas.store.Atlas`)
and checks that the stored neighbour index and TF-IDF are the ones used (not the exact fallback, not a refit).

**Serve** (skipped by ``--build-only``). Starts ``paperatlas serve`` on ``--out`` (as ``benchmarks/scale.py
--serve-only`` does, whose helpers this imports) and measures: process start → port accepting connections (s),
the first ``/api/search`` after that (s), the time until the server process is idle (its background warm-ups
done: under 3 % of a core for 3 s, s), then, from one client, 20 untimed and ``--requests`` timed searches (the 70
queries of ``benchmarks/data/search_queries.json`` in turn; p50/p95 also apart for a query's first request and
its repeats, which the server may answer in part from what it kept) and as many ``/api/related/<id>`` requests for
papers
drawn at random from the whole atlas: p50/p95 in ms; the server's peak resident memory (``VmHWM`` of
``/proc/PID/status``, MiB, read just before it is stopped) and the atlas file size (MiB). Prints one markdown
table row (and the figures as JSON).

``--profile`` (no build, no server) makes the web app in-process on ``--out`` and times each stage of
``/api/search`` over the 70 queries (:func:`profile`), to say where the time goes. ``--recall`` (no build, no
server) compares the meaning tier found through the HNSW graph with the exact scans (:func:`recall`).

Timings printed while building are wall seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale  # noqa: E402  (benchmarks/scale.py: free_port, pct, QUERIES)

from paperatlas.enrich import lexical  # noqa: E402
from paperatlas.enrich.lexical import lexical_text  # noqa: E402
from paperatlas.search import neighbours  # noqa: E402
from paperatlas.store import sqlite as store  # noqa: E402

_T0 = time.perf_counter()


def log(msg: str) -> None:
    """Print ``msg`` to stderr with the wall seconds since the script started."""
    print(f"[{time.strftime('%H:%M:%S')} +{time.perf_counter() - _T0:7.1f} s] {msg}", file=sys.stderr, flush=True)


def peak_rss_mib() -> float:
    """This process's peak resident memory (``VmHWM``), MiB."""
    return proc_status_mib(os.getpid(), "VmHWM")


def proc_status_mib(pid: int, field: str) -> float:
    """A ``kB`` field of ``/proc/PID/status`` (``VmHWM``, ``VmRSS``) in MiB (0.0 when unreadable)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------------------------------- build


_WORD = re.compile(r"[A-Za-z]{3,}")


def _perturb_title(title: str, vocab: list[str], rng: random.Random) -> str:
    """``title`` with one word of ≥ 3 letters (else its first word) replaced by a random vocabulary word."""
    words = title.split(" ")
    cand = [i for i, w in enumerate(words) if _WORD.fullmatch(w.strip(".,:;!?()[]\"'"))] or [0]
    i = cand[rng.randrange(len(cand))]
    words[i] = vocab[rng.randrange(len(vocab))]
    return " ".join(words)


def _drop_words(text: str, keep: list[bool]) -> str:
    """``text``'s whitespace-separated words where ``keep`` is True (``keep`` has at least as many entries)."""
    words = text.split()
    return " ".join(w for w, k in zip(words, keep, strict=False) if k)


def build(src: Path, out: Path, n: int, sigma: float, drop: float, jitter: float, seed: int,
          batch: int) -> dict:
    """Make the synthetic atlas ``out`` of ``n`` papers from ``src`` (see the module docstring).

    Returns:
        Timings (wall s) of the stages, the vector noise statistics and this process's peak RSS (MiB).
    """
    t_start = time.perf_counter()
    timing: dict[str, float] = {}
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(str(out) + suffix).unlink(missing_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    src_con = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    con = sqlite3.connect(out)
    src_con.backup(con)
    timing["copy"] = time.perf_counter() - t_start
    log(f"copied {src} -> {out} in {timing['copy']:.1f} s")

    t = time.perf_counter()
    cols = [r[1] for r in src_con.execute("PRAGMA table_info(papers)")]
    c_id, c_title, c_abs, c_x, c_y, c_hash = (cols.index(k) for k in ("id", "title", "abstract", "x", "y",
                                                                         "content_hash"))
    papers = src_con.execute(f"SELECT {', '.join(cols)} FROM papers ORDER BY rowid").fetchall()
    fts_cols = ["paper_id", "title", "authors", "abstract", "keyphrases", "tldr"]
    fts = {r[0]: r for r in src_con.execute(f"SELECT {', '.join(fts_cols)} FROM papers_fts")}
    emb = {r[0]: (r[1], np.frombuffer(r[2], dtype=np.float32))
           for r in src_con.execute("SELECT paper_id, model, vector FROM embeddings")}
    lex_blob = store.read_model(src_con, lexical.NAME)
    src_con.close()
    n0 = len(papers)
    if n < n0:
        raise SystemExit(f"--n {n} is below the {n0} papers of {src}")
    missing = [p[c_id] for p in papers if p[c_id] not in emb or p[c_id] not in fts]
    if missing:
        raise SystemExit(f"{len(missing)} papers of {src} lack an embedding or an FTS row (e.g. {missing[0]!r})")
    model = next(iter(emb.values()))[0]
    base = np.stack([emb[p[c_id]][1] for p in papers]).astype(np.float32)
    vocab = sorted({w.lower() for p in papers for w in re.findall(r"[A-Za-z]{4,}", p[c_title])})
    xs = np.array([p[c_x] if p[c_x] is not None else np.nan for p in papers], dtype=np.float64)
    ys = np.array([p[c_y] if p[c_y] is not None else np.nan for p in papers], dtype=np.float64)
    sx, sy = jitter * float(np.nanstd(xs)), jitter * float(np.nanstd(ys))
    timing["read"] = time.perf_counter() - t
    log(f"read {n0:,} papers, {len(vocab):,} title words; adding {n - n0:,} replicas "
        f"(sigma {sigma}, drop {drop}, map jitter {sx:.3f}/{sy:.3f})")

    # the atlas's row order: the source papers (all embedded), then the replicas in insertion order
    ids = [p[c_id] for p in papers]
    texts = [lexical_text(p[c_title], p[cols.index("abstract")] or "", p[cols.index("digest")] or "",
                          p[cols.index("tldr")] or "") for p in papers]
    vectors = np.empty((n, base.shape[1]), dtype=np.float32)
    vectors[:n0] = base
    rng_np = np.random.default_rng(seed)
    rng = random.Random(seed)
    con.execute("PRAGMA journal_mode = OFF")  # a failed run is simply made again
    con.execute("PRAGMA synchronous = OFF")
    con.execute("PRAGMA cache_size = -1048576")  # 1 GiB
    insert = f"INSERT INTO papers ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
    insert_fts = f"INSERT INTO papers_fts ({', '.join(fts_cols)}) VALUES ({', '.join('?' * len(fts_cols))})"
    insert_emb = "INSERT INTO embeddings (paper_id, model, content_hash, vector) VALUES (?, ?, ?, ?)"
    t_text = t_sql = t_vec = 0.0
    cos_sum, cos_min = 0.0, 1.0
    done = n0
    t = time.perf_counter()
    while done < n:
        m = min(batch, n - done)
        t1 = time.perf_counter()
        src_rows = np.arange(done, done + m) % n0
        reps = np.arange(done, done + m) // n0
        noisy = base[src_rows] + rng_np.standard_normal((m, base.shape[1]), dtype=np.float32) * np.float32(sigma)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        cos = np.einsum("ij,ij->i", noisy, base[src_rows])
        cos_sum += float(cos.sum())
        cos_min = min(cos_min, float(cos.min()))
        vectors[done:done + m] = noisy
        jx = rng_np.standard_normal(m) * sx
        jy = rng_np.standard_normal(m) * sy
        t_vec += time.perf_counter() - t1
        t1 = time.perf_counter()
        n_words = sum(len((papers[i][c_abs] or "").split()) for i in src_rows.tolist())
        keep = (rng_np.random(n_words) >= drop).tolist()
        at = 0
        rows, fts_rows, emb_rows = [], [], []
        for j, (i, k) in enumerate(zip(src_rows.tolist(), reps.tolist(), strict=True)):
            p = list(papers[i])
            pid = f"{p[c_id]}~r{k}"
            title = _perturb_title(p[c_title], vocab, rng)
            abstract = p[c_abs] or ""
            nw = len(abstract.split())
            if nw:
                abstract = _drop_words(abstract, keep[at:at + nw])
                at += nw
            chash = hashlib.sha1(f"{title}\n{abstract}".encode()).hexdigest()
            p[c_id], p[c_title], p[c_hash] = pid, title, chash
            if p[c_abs]:
                p[c_abs] = abstract
            if p[c_x] is not None:
                p[c_x] = p[c_x] + float(jx[j])
            if p[c_y] is not None:
                p[c_y] = p[c_y] + float(jy[j])
            rows.append(p)
            f = fts[papers[i][c_id]]
            fts_rows.append((pid, title, f[2], abstract if p[c_abs] else f[3], f[4], f[5]))
            emb_rows.append((pid, model, chash, vectors[done + j].tobytes()))
            ids.append(pid)
            texts.append(lexical_text(title, p[c_abs] or "", p[cols.index("digest")] or "",
                                      p[cols.index("tldr")] or ""))
        t_text += time.perf_counter() - t1
        t1 = time.perf_counter()
        with con:
            con.executemany(insert, rows)
            con.executemany(insert_fts, fts_rows)
            con.executemany(insert_emb, emb_rows)
        t_sql += time.perf_counter() - t1
        done += m
        el = time.perf_counter() - t
        log(f"{done:,} / {n:,} papers ({el:.0f} s: text {t_text:.0f}, vectors {t_vec:.0f}, SQLite {t_sql:.0f}; "
            f"~{el / (done - n0) * (n - done):.0f} s to go)")
    timing["replicas"] = time.perf_counter() - t
    timing["replicas_sqlite"] = t_sql
    del papers, fts, emb

    t = time.perf_counter()
    blob = neighbours.build_index_blob(vectors)
    timing["hnsw"] = time.perf_counter() - t
    log(f"neighbour index: {'none (exact below 100k)' if blob is None else f'{len(blob) / 2**20:.0f} MiB'} "
        f"in {timing['hnsw']:.1f} s")
    with con:
        store.write_model(con, neighbours.STORED, blob)
    del blob

    t = time.perf_counter()
    index = lexical.update_index(lex_blob, ids, texts, max_new_share=1.0)
    if index is None:  # an index stored before version 2 has no idf: fit the source's own, as its build would now
        log(f"{src}'s stored TF-IDF has no idf (made before index version {lexical.VERSION}): fitting it on its "
            f"{n0:,} texts")
        matrix, terms, idf = lexical.fit_index(texts[:n0])
        lex_blob = lexical.dumps(matrix, terms, ids[:n0], texts[:n0], idf)
        timing["tfidf_fit_source"] = time.perf_counter() - t
        del matrix, terms, idf
        index = lexical.update_index(lex_blob, ids, texts, max_new_share=1.0)
    if index is None:
        raise SystemExit(f"the TF-IDF index of {src} cannot be extended")
    matrix, terms, idf = index
    lex = lexical.dumps(matrix, terms, ids, texts, idf)
    timing["tfidf"] = time.perf_counter() - t
    log(f"TF-IDF: {matrix.shape[0]:,} x {matrix.shape[1]:,}, {matrix.nnz:,} non-zeros, {len(lex) / 2**20:.0f} MiB "
        f"in {timing['tfidf']:.1f} s")
    del index, matrix
    with con:
        store.write_model(con, lexical.NAME, lex)
        store.set_meta(con, n_papers=n, synthetic=f"{n0} papers of {Path(src).name} + {n - n0} replicas "
                       f"(sigma {sigma}, drop {drop}, seed {seed})")
    del lex
    t = time.perf_counter()
    con.execute("PRAGMA optimize")
    con.close()
    timing["close"] = time.perf_counter() - t
    timing["total"] = time.perf_counter() - t_start
    return {"timing": timing, "mean_cos_to_original": cos_sum / max(n - n0, 1), "min_cos_to_original": cos_min,
            "build_peak_rss_mib": peak_rss_mib()}


def check(out: Path) -> dict:
    """Open ``out`` as ``serve`` does; raise SystemExit unless the stored neighbour index and TF-IDF are used.

    Returns:
        ``{"neighbours": "usearch" | "exact (below 100k)", "tfidf": "stored", "load_s": Atlas load wall s}``.
    """
    from paperatlas.recommend import _atlas_text
    from paperatlas.search.ann import ANN_MIN_PAPERS
    from paperatlas.search.neighbours import neighbour_index
    from paperatlas.store import Atlas

    t = time.perf_counter()
    atlas = Atlas(out)
    load_s = time.perf_counter() - t
    idx = neighbour_index(atlas)
    if len(atlas.ids) >= ANN_MIN_PAPERS and idx.exact:
        raise SystemExit("the stored neighbour index was not used (exact fallback)")
    texts = [_atlas_text(atlas.by_id[i]) for i in atlas.ids]
    if lexical.loads(atlas.stored_model(lexical.NAME), atlas.ids, texts) is None:
        raise SystemExit("the stored TF-IDF does not match the atlas's texts: the server would refit it")
    atlas.close()
    return {"neighbours": "exact (below 100k)" if idx.exact else "usearch", "tfidf": "stored", "load_s": load_s}


# --------------------------------------------------------------------------------------------------- serve


def wait_idle(pid: int, limit: float, below: float = 0.03, quiet_s: float = 3.0) -> float:
    """Wait until process ``pid`` uses under ``below`` of a core for ``quiet_s`` s (at most ``limit`` s).

    Returns:
        Wall seconds waited.
    """
    t0 = time.perf_counter()
    quiet_since = None
    last = cpu_seconds(pid)
    while time.perf_counter() - t0 < limit:
        time.sleep(0.5)
        now = cpu_seconds(pid)
        if now - last < below * 0.5:
            quiet_since = quiet_since or time.perf_counter()
            if time.perf_counter() - quiet_since >= quiet_s:
                break
        else:
            quiet_since = None
        last = now
    return time.perf_counter() - t0


def serve_figures(db: Path, n_requests: int, seed: int, idle_limit: float) -> dict:
    """Serve ``db`` and measure it over HTTP (see the module docstring); seconds and ms as named."""
    import httpx

    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), TQDM_DISABLE="1")
    t_start = time.perf_counter()
    proc, port = scale.start_serve(db, env, poll_seconds=0.05)
    try:
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600)
        t_listen = time.perf_counter()
        log(f"serve listening after {t_listen - t_start:.1f} s (RSS {proc_status_mib(proc.pid, 'VmRSS'):.0f} MiB)")
        r = client.get("/api/search", params={"q": "graph neural networks"})
        t_first = time.perf_counter()
        r.raise_for_status()
        first_mode = r.json()["mode"]
        log(f"first search {t_first - t_listen:.2f} s (mode {first_mode}, {r.json()['total']} results)")
        idle_s = wait_idle(proc.pid, idle_limit)
        log(f"server idle after {time.perf_counter() - t_start:.0f} s from start "
            f"(RSS {proc_status_mib(proc.pid, 'VmRSS'):.0f} MiB)")
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            ids = [r[0] for r in con.execute("SELECT id FROM papers")]
        queries = [q["query"] for q in json.loads(scale.QUERIES.read_text())["queries"]]
        rng = random.Random(seed)
        search_ms, related_ms, modes, samples = [], [], set(), {}
        first_ms, again_ms = [], []  # a query's first request, and its repeats (the server keeps some answers)
        timed: list[tuple[float, str, bool]] = []
        for k in range(20 + n_requests):
            q = queries[k % len(queries)]
            t = time.perf_counter()
            r = client.get("/api/search", params={"q": q})
            dt = 1000 * (time.perf_counter() - t)
            r.raise_for_status()
            if k >= 20:
                search_ms.append(dt)
                (again_ms if q in samples else first_ms).append(dt)
                timed.append((dt, q, q not in samples))
                modes.add(r.json()["mode"])
            if q not in samples:
                j = r.json()
                samples[q] = (j["total"], [x["title"] for x in j["results"][:3]])
        for k in range(20 + n_requests):
            pid = rng.choice(ids)
            t = time.perf_counter()
            r = client.get(f"/api/related/{pid}")
            dt = 1000 * (time.perf_counter() - t)
            r.raise_for_status()
            if k >= 20:
                related_ms.append(dt)
        log("slowest searches: " + "; ".join(f"{q!r} {ms:.0f} ms{' (first)' if first else ''}"
                                            for ms, q, first in sorted(timed, reverse=True)[:12]))
        for q in ("lottery ticket", "graph neural networks", "grokking", "learning from noisy labels"):
            if q in samples:
                log(f"  {q!r}: {samples[q][0]} results; " + " | ".join(samples[q][1]))
        return {"listen_s": t_listen - t_start, "first_search_s": t_first - t_listen, "first_mode": first_mode,
                "idle_after_s": t_listen - t_start + (t_first - t_listen) + idle_s, "modes": sorted(modes),
                "search_p50_ms": scale.pct(search_ms, 50), "search_p95_ms": scale.pct(search_ms, 95),
                "search_max_ms": max(search_ms),
                "search_first_n": len(first_ms), "search_first_p50_ms": scale.pct(first_ms, 50),
                "search_first_p95_ms": scale.pct(first_ms, 95),
                "search_again_n": len(again_ms), "search_again_p50_ms": scale.pct(again_ms, 50),
                "search_again_p95_ms": scale.pct(again_ms, 95),
                "related_p50_ms": scale.pct(related_ms, 50), "related_p95_ms": scale.pct(related_ms, 95),
                "server_peak_rss_mib": proc_status_mib(proc.pid, "VmHWM"),
                "server_rss_end_mib": proc_status_mib(proc.pid, "VmRSS")}
    finally:
        proc.terminate()
        proc.wait(timeout=60)


# --------------------------------------------------------------------------------------------------- profile


def profile(db: Path, rounds: int = 2) -> dict:
    """Where a search's time goes, in-process: ``/api/search`` through Flask's test client, stages timed (ms).

    The app is made as ``serve`` makes it (:func:`paperatlas.web.create_app`, query model and warm-ups in their
    background threads) and left until this process is idle; then one untimed round and ``rounds`` timed rounds of
    the 70 queries. Each stage is a function of :mod:`paperatlas.search.engine` (or the web layer) wrapped with a
    timer; a stage's time includes the stages it calls. Prints mean and p95 per query, then the top functions of
    one round by own time (cProfile).
    """
    import cProfile
    import functools
    import pstats
    from collections import defaultdict

    from paperatlas.search import engine
    from paperatlas.web import create_app, search_views

    spent: dict[str, float] = defaultdict(float)

    def timed(name, fn):
        @functools.wraps(fn)
        def run(*a, **kw):
            t = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                spent[name] += time.perf_counter() - t
        return run

    for name in ("query_terms", "corrected_query", "coverage", "_passing",
                 "bm25_scores", "_keyword_tier", "_near", "_meaning_tier", "_message", "_rows"):
        setattr(engine, name, timed(name, getattr(engine, name)))
    engine._meaning.cosines = timed("cosines", engine._meaning.cosines)
    engine._meaning.query_cosines = timed("query_cosines", engine._meaning.query_cosines)
    start_together = engine.start_together

    def together(*a, **kw):  # the start, and the wait for the answer when the search asks for it
        return timed("together (waiting)", timed("together (start)", start_together)(*a, **kw))

    engine.start_together = together
    search_views.search_results = timed("search_results (all of search)", search_views.search_results)
    search_views.facet_panel = timed("facet_panel", search_views.facet_panel)
    search_views.facet_counts = timed("facet_counts", search_views.facet_counts)
    t = time.perf_counter()
    app = create_app(db)
    log(f"profile: app made in {time.perf_counter() - t:.1f} s, RSS {proc_status_mib(os.getpid(), 'VmRSS'):.0f} "
        "MiB; waiting for the warm-ups")
    wait_idle(os.getpid(), 900)
    ctx_embed = None
    for cell in app.view_functions["api_search"].__closure__ or ():
        c = cell.cell_contents
        if hasattr(c, "state") and c.state.get("embedder") is not None:
            ctx_embed = c.state["embedder"]
            c.state["embedder"] = type("Timed", (), {"encode": staticmethod(timed("embed query", ctx_embed.encode))})()
    if ctx_embed is None:
        log("profile: no query model (words only)")
    client = app.test_client()
    queries = [q["query"] for q in json.loads(scale.QUERIES.read_text())["queries"]]
    per_query: dict[str, list[float]] = defaultdict(list)
    for rnd in range(rounds + 1):
        if rnd == 1:
            spent.clear()
        for q in queries:
            before = dict(spent)
            t = time.perf_counter()
            r = client.get("/api/search", query_string={"q": q})
            total = time.perf_counter() - t
            assert r.status_code == 200, r.status_code
            if rnd:
                per_query["/api/search (whole request)"].append(1000 * total)
                for k, v in spent.items():
                    per_query[k].append(1000 * (v - before.get(k, 0.0)))
    n = rounds * len(queries)
    out = {}
    print(f"\nin-process /api/search, {n} queries ({rounds} rounds of {len(queries)}), ms per query:")
    print("| stage | mean ms | p50 ms | p95 ms |\n|---|---:|---:|---:|")
    for k, v in sorted(per_query.items(), key=lambda kv: -sum(kv[1])):
        v = v + [0.0] * (n - len(v))
        out[k] = {"mean": sum(v) / n, "p50": scale.pct(v, 50), "p95": scale.pct(v, 95)}
        print(f"| {k} | {out[k]['mean']:.1f} | {out[k]['p50']:.1f} | {out[k]['p95']:.1f} |")
    slow = sorted(zip(per_query["/api/search (whole request)"], queries * rounds, strict=True), reverse=True)[:8]
    print("\nslowest: " + "; ".join(f"{q!r} {ms:.0f} ms" for ms, q in slow))
    prof = cProfile.Profile()
    prof.enable()
    for q in queries:
        client.get("/api/search", query_string={"q": q})
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return out


def recall(db: Path, firsts: tuple[int, ...] = ()) -> dict:
    """The meaning tier through the HNSW graph against the exact scans, in-process, on the 70 queries.

    Opens ``db`` as ``serve`` does (:class:`paperatlas.store.Atlas`, :func:`paperatlas.search.warm_up` first, so
    no query fetches postings), then runs each query (``hybrid``, the CLI's query model, embedded once) through
    the graph (:mod:`paperatlas.search.meaning`) and through the exact scans (``meaning.graph`` forced to None).
    Per query: recall@10 of the meaning tier (the share of the exact path's first 10 meaning hits among the
    graph's first 10) and over all its hits (up to :data:`paperatlas.search.POOL`), overlap of the whole first 10
    results, whether every result (paper, tier, BM25 rank) is the same, and the ms of
    :func:`paperatlas.search.search_results` per path (median of 3 runs); for the graph path once per first list
    length (``meaning.FIRST_CANDIDATES``, then each of ``firsts``).

    Returns:
        ``{"exact_p50_ms", "exact_p95_ms", "first K": {"meaning_recall10", "meaning_recall_all", "top10_overlap",
        "identical", "queries_with_meaning_hits", "graph_lists_by_length", "graph_p50_ms", "graph_p95_ms"}}``
        (recall and overlap: means over the queries having any; the graph's lists in one round, by length).
    """
    from paperatlas.enrich.query_embed import query_embedder
    from paperatlas.search import meaning, search_results, warm_up
    from paperatlas.search.postings import postings
    from paperatlas.store import Atlas

    t = time.perf_counter()
    atlas = Atlas(db)
    warm_up(atlas)
    px = postings(atlas)
    log(f"recall: atlas loaded and warmed in {time.perf_counter() - t:.0f} s; graph: {meaning.graph(atlas) is not None}"
        f"; postings kept: {px.cached():,} pairs of a budget of {px.budget:,}, RSS "
        f"{proc_status_mib(os.getpid(), 'VmRSS'):.0f} MiB")
    emb = query_embedder()
    queries = [q["query"] for q in json.loads(scale.QUERIES.read_text())["queries"]]
    vec = {q: emb.encode([q])[0] for q in queries}
    real_graph = meaning.graph
    index = real_graph(atlas)
    lists: dict[int, int] = {}  # graph searches by list length (a list grows when too short)
    if index is not None:
        search_many = index.search_many

        def counted(queries, k=10, *a, **kw):
            lists[k] = lists.get(k, 0) + 1
            return search_many(queries, k, *a, **kw)

        index.search_many = counted

    def run(q: str, exact: bool):
        meaning.graph = (lambda a: None) if exact else real_graph
        try:
            times = []
            for _ in range(3):
                t = time.perf_counter()
                res = search_results(atlas, q, mode="hybrid", embed_query=lambda s: vec.get(s, emb.encode([s])[0]))
                times.append(1000 * (time.perf_counter() - t))
            return res, sorted(times)[1]
        finally:
            meaning.graph = real_graph

    def tier(res, n=None):
        return [h.paper.id for h in res.hits if h.match == "meaning"][:n]

    exact = {q: run(q, True) for q in queries}
    out: dict = {"exact_p50_ms": scale.pct([t for _, t in exact.values()], 50),
                 "exact_p95_ms": scale.pct([t for _, t in exact.values()], 95)}
    first = meaning.FIRST_CANDIDATES
    for k0 in dict.fromkeys([first, *firsts]):
        meaning.FIRST_CANDIDATES = k0
        lists.clear()
        rec, rec_all, overlap, same, ms = [], [], [], 0, []
        for q in queries:
            (g, tg), (e, _) = run(q, False), exact[q]
            ms.append(tg)
            if tier(e):
                rec.append(len(set(tier(g, 10)) & set(tier(e, 10))) / len(tier(e, 10)))
                rec_all.append(len(set(tier(g)) & set(tier(e))) / len(tier(e)))
            top_e = [h.paper.id for h in e.hits[:10]]
            if top_e:
                overlap.append(len({h.paper.id for h in g.hits[:10]} & set(top_e)) / len(top_e))
            same += [(h.paper.id, h.match, h.bm25_rank) for h in g.hits] == [(h.paper.id, h.match, h.bm25_rank)
                                                                             for h in e.hits]
        out[f"first {k0}"] = {
            "meaning_recall10": float(np.mean(rec)) if rec else None,
            "meaning_recall_all": float(np.mean(rec_all)) if rec_all else None,
            "top10_overlap": float(np.mean(overlap)), "identical": f"{same}/{len(queries)}",
            "queries_with_meaning_hits": len(rec),
            "graph_lists_by_length": {k: v // 3 for k, v in sorted(lists.items())},
            "graph_p50_ms": scale.pct(ms, 50), "graph_p95_ms": scale.pct(ms, 95)}
        print(json.dumps({f"first {k0}": out[f"first {k0}"]}), flush=True)
    meaning.FIRST_CANDIDATES = first
    print(json.dumps(out))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--atlas", type=Path, required=True, help="a real built atlas (read only)")
    ap.add_argument("--n", type=int, default=1_000_000, help="papers in the synthetic atlas")
    ap.add_argument("--out", type=Path, required=True, help="the synthetic atlas (replaced)")
    ap.add_argument("--sigma", type=float, default=0.02, help="vector noise per component (std)")
    ap.add_argument("--drop", type=float, default=0.1, help="share of abstract words dropped per replica")
    ap.add_argument("--jitter", type=float, default=0.05, help="map noise as a share of the coordinates' std")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=50_000, help="papers per transaction")
    ap.add_argument("--requests", type=int, default=200, help="timed searches and related requests")
    ap.add_argument("--idle-limit", type=float, default=900.0, help="most s to wait for the server to be idle")
    ap.add_argument("--check", action="store_true", help="open the atlas in-process and check the stored indexes")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--build-only", action="store_true")
    g.add_argument("--serve-only", action="store_true", help="measure an existing --out")
    g.add_argument("--profile", action="store_true", help="no build, no server: profile searches of --out in-process")
    g.add_argument("--recall", action="store_true",
                   help="no build, no server: the meaning tier through the graph against exact scans, in-process")
    args = ap.parse_args()
    if args.out.resolve() == args.atlas.resolve():
        raise SystemExit("--out must not be --atlas")
    row: dict = {"n": args.n, "sigma": args.sigma, "drop": args.drop}
    if args.profile:
        profile(args.out)
        return
    if args.recall:
        recall(args.out, (1024,))
        return
    if not args.serve_only:
        row.update(build(args.atlas, args.out, args.n, args.sigma, args.drop, args.jitter, args.seed, args.batch))
        log(f"built in {row['timing']['total']:.0f} s; peak RSS {row['build_peak_rss_mib']:.0f} MiB; mean cosine of "
            f"a replica to its original {row['mean_cos_to_original']:.3f} (min {row['min_cos_to_original']:.3f})")
    if args.check:
        row["check"] = check(args.out)
        log(f"check: {row['check']}")
    row["atlas_mib"] = args.out.stat().st_size / 2**20
    if not args.build_only:
        row.update(serve_figures(args.out, args.requests, args.seed, args.idle_limit))
    print(json.dumps(row))
    tm = row.get("timing", {})
    fmt = (lambda k: f"{tm[k]:.0f}" if k in tm else "")  # noqa: E731
    print("\n| papers | synthetic atlas s | HNSW s | TF-IDF s | atlas MiB | server peak RSS MiB "
          "| serve start → listening s | first search s | search p50/p95 ms | related p50/p95 ms |")
    print("|---:" * 10 + "|")
    if args.build_only:
        print(f"| {args.n:,} | {fmt('total')} | {fmt('hnsw')} | {fmt('tfidf')} | {row['atlas_mib']:.0f} | | | | | |")
    else:
        print(f"| {args.n:,} | {fmt('total')} | {fmt('hnsw')} | {fmt('tfidf')} | {row['atlas_mib']:.0f} | "
              f"{row['server_peak_rss_mib']:.0f} | {row['listen_s']:.1f} | {row['first_search_s']:.2f} | "
              f"{row['search_p50_ms']:.0f}/{row['search_p95_ms']:.0f} | "
              f"{row['related_p50_ms']:.0f}/{row['related_p95_ms']:.0f} |")
        print(f"\nsearch p50/p95 ms: a query's first request {row['search_first_p50_ms']:.0f}/"
              f"{row['search_first_p95_ms']:.0f} ({row['search_first_n']}), "
              f"its repeats {row['search_again_p50_ms']:.0f}/{row['search_again_p95_ms']:.0f} "
              f"({row['search_again_n']})")


if __name__ == "__main__":
    main()
