"""``paperatlas eval search``: keyword search with author keywords as queries, ours vs TF-IDF, BM25 and MiniLM.

Protocol: a listing whose papers carry author keywords (paperlists JSON ``keywords``) is built into an atlas
*without* those keywords (they would otherwise be indexed as the papers' listed keyphrases and answer their own
queries), with the real pipeline (:func:`paperatlas.build.build`: embedding, keyphrases, TL;DRs, topics). Every
author keyword (lower-cased, whitespace-normalised) that at least :data:`MIN_PAPERS` papers give and at most
:data:`MAX_SHARE` of the papers is a query; its relevant papers are the papers that give it. Scores: P@10 (the
share of the first 10 results that are relevant, divided by 10 even when fewer come back), R@10 and nDCG@10
(binary relevance, log2 discount), means over the queries; ``ms/query`` is the ranking's wall time (the query's
embedding included where a method uses one).

Methods, all on the same atlas and the same papers' ``title. abstract``:

* ``paperatlas search``: :func:`paperatlas.search.search_results` in its default hybrid mode, the order a user sees;
* ``BM25 (FTS5)``: the same engine's keyword tiers alone (``mode="bm25"``);
* ``TF-IDF cosine``: scikit-learn ``TfidfVectorizer(stop_words="english", sublinear_tf=True)`` of title + abstract,
  query transformed the same way, papers by cosine;
* ``MiniLM cosine``: the query's all-MiniLM-L6-v2 vector against the papers' (no keyword step).

Gold sets (:data:`GOLD_SETS`): COLM 2025 and WWW 2025 (``../shared/data/paperlists``). COLM 2024's keywords trained
the keyphrase scorer (``scripts/train_keyphrases.py``) whose keyphrases the atlas indexes, so it is not used here.
"""

from __future__ import annotations

import gzip
import json
import re
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..sources.progress import ProgressFactory, progress_of, stderr_progress
from ._common import EvalUnavailable, resolve_shared

GOLD_SETS = {"colm2025": "data/paperlists/colm/colm2025.json.gz", "www2025": "data/paperlists/www/www2025.json.gz"}
_LABELS = {"colm2025": "COLM 2025 author keywords", "www2025": "WWW 2025 author keywords"}
#: fewest papers giving a keyword for it to be a query
MIN_PAPERS = 3
#: most papers (share of the set) giving a keyword for it to be a query ("large language models" in COLM is not a
#: search anyone needs ranked)
MAX_SHARE = 0.1
#: k of P@k, R@k, nDCG@k
K = 10

COLUMNS = [("method", "method", "{}"), ("p10", "P@10", "{:.3f}"), ("r10", "R@10", "{:.3f}"),
           ("ndcg10", "nDCG@10", "{:.3f}"), ("ms", "ms/query", "{:.1f}")]


def _key(keyword: str) -> str:
    return re.sub(r"\s+", " ", keyword.strip().lower())


def load_gold(name: str) -> tuple[str, list[dict], dict[str, set[str]]]:
    """Read a listing with author keywords and make the queries.

    Args:
        name: a name of :data:`GOLD_SETS` (found under ``../shared``) or the path of a paperlists JSON (``.json`` or
            ``.json.gz``) whose records have ``keywords``.

    Returns:
        ``(label, records, queries)``: the set's name, its records (as read, each with a ``keywords`` list) and
        ``keyword -> titles`` (lower-cased titles of the papers that give it) for every query keyword.

    Raises:
        EvalUnavailable: the file is missing, unreadable, or yields no query.
    """
    path = resolve_shared(GOLD_SETS[name]) if name in GOLD_SETS else Path(name)
    if not path.is_file():
        raise EvalUnavailable(f"gold file not found: {path}")
    try:
        raw = gzip.open(path, "rt", encoding="utf-8").read() if path.suffix == ".gz" else path.read_text("utf-8")
        records = [r for r in json.loads(raw) if isinstance(r, dict) and r.get("title") and r.get("abstract")]
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise EvalUnavailable(f"cannot read gold file {path}: {e}") from e
    by_kw: dict[str, set[str]] = defaultdict(set)
    for r in records:
        kws = r.get("keywords") or []
        kws = re.split(r"[;,]", kws) if isinstance(kws, str) else kws
        for k in kws:
            if isinstance(k, str) and _key(k):
                by_kw[_key(k)].add(_key(r["title"]))
    limit = MAX_SHARE * len(records)
    queries = {k: v for k, v in sorted(by_kw.items()) if MIN_PAPERS <= len(v) <= limit}
    if not queries:
        raise EvalUnavailable(f"{path}: no author keyword is given by {MIN_PAPERS} or more papers")
    return _LABELS.get(name, str(path)), records, queries


def build_atlas(records: list[dict], folder: Path, progress=None) -> Path:
    """Build an atlas of ``records`` without their keywords (module docstring).

    Args:
        records: paperlists JSON records.
        folder: where the listing copy and the atlas are written.
        progress: the build's progress factory (None: silent).

    Returns:
        The atlas path.
    """
    from ..build import build

    listing = folder / "listing.json"
    listing.write_text(json.dumps([{k: v for k, v in r.items() if k != "keywords"} for r in records]), "utf-8")
    db = folder / "atlas.db"
    kwargs = {"progress": progress} if progress is not None else {}
    build([listing], db, formats=["paperlists-json"], **kwargs)
    return db


def _metrics(ranked: list[str], relevant: set[str]) -> tuple[float, float, float]:
    top = ranked[:K]
    hits = [t in relevant for t in top]
    dcg = sum(1 / np.log2(i + 2) for i, h in enumerate(hits) if h)
    ideal = sum(1 / np.log2(i + 2) for i in range(min(K, len(relevant))))
    return sum(hits) / K, sum(hits) / len(relevant), dcg / ideal


def methods(atlas) -> dict[str, Callable[[str], list[str]]]:
    """The methods of the module docstring on ``atlas``, each ``query -> lower-cased titles, best first``.

    Args:
        atlas: an open :class:`paperatlas.store.Atlas`.

    Returns:
        Method name -> ranking function.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    from ..enrich.embed import paper_text
    from ..enrich.query_embed import query_embedder
    from ..search import search_results

    embedder = query_embedder()

    def embed(q: str) -> np.ndarray:
        return embedder.encode([q])[0]

    papers = [atlas.by_id[i] for i in atlas.ids]
    titles = [_key(p.title) for p in papers]
    vec = TfidfVectorizer(stop_words="english", sublinear_tf=True)
    tfidf = vec.fit_transform([paper_text(p.title, p.abstract) for p in papers])

    def ours(q: str, mode: str = "hybrid") -> list[str]:
        res = search_results(atlas, q, mode=mode, embed_query=embed)
        return [_key(h.paper.title) for h in res.page(0, K)]

    def by_scores(s: np.ndarray) -> list[str]:
        return [titles[i] for i in np.argsort(-s, kind="stable")[:K]]

    return {"paperatlas search": ours, "BM25 (FTS5)": lambda q: ours(q, "bm25"),
            "TF-IDF cosine": lambda q: by_scores((tfidf @ vec.transform([q]).T).toarray().ravel()),
            "MiniLM cosine": lambda q: by_scores(atlas.vectors @ embed(q))}


def search_rows(atlas, queries: dict[str, set[str]], progress: ProgressFactory | None = None) -> list[dict]:
    """Score every method on the queries.

    Args:
        atlas: the atlas :func:`build_atlas` made.
        queries: ``keyword -> relevant titles`` from :func:`load_gold`.
        progress: where the queries run are counted (methods x queries; default a tqdm bar on stderr when it is
            a terminal: :func:`paperatlas.sources.progress.progress_of`).

    Returns:
        One row per method: ``method``, ``p10``, ``r10``, ``ndcg10`` (means over queries, in [0, 1]), ``ms`` (mean
        milliseconds per query) and ``n`` (queries).
    """
    rows = []
    runs = methods(atlas)
    with progress_of("search eval", len(runs) * len(queries), "query", progress) as update:
        for name, run in runs.items():
            run("warm up")  # the first query loads the embedder and the postings
            scores, ms = [], []
            for q, rel in queries.items():
                t0 = time.perf_counter()
                ranked = run(q)
                ms.append(1000 * (time.perf_counter() - t0))
                scores.append(_metrics(ranked, rel))
                update(1)
            s = np.array(scores)
            rows.append({"method": name, "p10": float(s[:, 0].mean()), "r10": float(s[:, 1].mean()),
                         "ndcg10": float(s[:, 2].mean()), "ms": float(np.mean(ms)), "n": len(queries)})
    return rows


def evaluate(name: str, progress=None) -> tuple[str, int, list[dict]]:
    """Load a gold set, build its atlas in a temporary folder and score every method.

    Args:
        name: see :func:`load_gold`.
        progress: the progress factory of the build and of the queries (default: tqdm bars on stderr when it is a
            terminal, :func:`paperatlas.sources.progress.stderr_progress`).

    Returns:
        ``(label, n_papers, rows)`` (:func:`search_rows`).

    Raises:
        EvalUnavailable: as :func:`load_gold`.
    """
    from ..store import Atlas

    label, records, queries = load_gold(name)
    with tempfile.TemporaryDirectory(prefix="paperatlas-eval-search-") as tmp:
        db = build_atlas(records, Path(tmp), progress or stderr_progress)
        atlas = Atlas(db)
        try:
            return label, len(records), search_rows(atlas, queries, progress)
        finally:
            atlas.close()


def goal_check(label: str, rows: list[dict]) -> str:
    """One line: our P@10 against TF-IDF cosine's (the goal is 1.10×).

    Args:
        label: the set's name.
        rows: :func:`search_rows`.

    Returns:
        The line.
    """
    by = {r["method"]: r for r in rows}
    ours, base = by["paperatlas search"]["p10"], by["TF-IDF cosine"]["p10"]
    ratio = ours / base if base else float("inf")
    return (f"{label}: search P@10 >= 1.10x TF-IDF: {'yes' if ratio >= 1.10 else 'no'} "
            f"({ours:.3f} vs {base:.3f}, {ratio:.2f}x)")
