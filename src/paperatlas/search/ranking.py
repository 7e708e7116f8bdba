"""Ranking primitives: FTS5 BM25, embedding cosine, reciprocal rank fusion.

* **BM25**: SQLite FTS5's ``bm25()`` with column weights title 10, authors 4, abstract 1, keyphrases 5, TL;DR 2;
  porter stemming. Any user string is safe: it is reduced to word tokens, each quoted, joined with ``OR``. The
  scores are summed from per-word arrays kept in memory (:mod:`.postings`), equal to SQLite's own.
* **Semantic**: cosine similarity between the query embedding and the paper embeddings (brute force over the
  in-memory ``(n_papers, 384)`` matrix: ~10 ms for 40k papers).
* **Hybrid**: reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009), ``score = Σ 1 / (k + rank)``
  with ``k = 60`` over the top :data:`POOL` of each list.
"""

from __future__ import annotations

import numpy as np

from ..store import Atlas
from ..text import query_tokens
from .neighbours import neighbour_index
from .postings import BM25_WEIGHTS, bm25_scores, quoted
from .representation import dense_query

__all__ = ["BM25_WEIGHTS", "POOL", "RRF_K", "bm25_order", "bm25_ranking", "fts_phrases", "fts_query", "rrf",
           "rrf_scores", "semantic_ranking"]

RRF_K = 60
POOL = 200


def fts_phrases(query: str) -> list[str]:
    """The phrases BM25 searches for any user string: its word tokens, lower case, deduplicated, in order.

    The FTS5 operators ``and``, ``or``, ``not``, ``near`` are dropped.

    Args:
        query: any user string.

    Returns:
        E.g. ``["learning", "from", "noisy", "labels"]``; empty when the string has no word.
    """
    toks = [t.lower() for t in query_tokens(query)]
    return list(dict.fromkeys(t for t in toks if t not in {"and", "or", "not", "near"}))


def fts_query(query: str) -> str:
    """An FTS5 MATCH expression for any user string: :func:`fts_phrases`, each double-quoted, joined with OR.

    Args:
        query: any user string.

    Returns:
        The expression; ``""`` when the string has no word (the caller then skips BM25).
    """
    return " OR ".join(quoted(t) for t in fts_phrases(query))


def bm25_order(atlas: Atlas, query: str) -> tuple[np.ndarray, np.ndarray]:
    """Every paper the query's words match, by FTS5 BM25 (weights :data:`BM25_WEIGHTS`), best first.

    The scores are SQLite's own ``bm25()`` of :func:`fts_query` (:func:`paperatlas.search.postings.bm25_scores`);
    ties go to the paper stored first.

    Args:
        atlas: the atlas.
        query: any user string (see :func:`fts_phrases`).

    Returns:
        ``(docs, scores)``: ``(n,)`` int64 indices into ``atlas.papers``, best first, and ``(n_papers,)``
        float64 bm25 of every paper (lower is better; 0.0 where nothing matched). Empty ``docs`` when the query
        has no word.
    """
    scores, matched = bm25_scores(atlas, fts_phrases(query))
    docs = np.flatnonzero(matched)
    return docs[np.lexsort((docs, scores[docs]))], scores


def bm25_ranking(atlas: Atlas, query: str, limit: int = POOL) -> list[str]:
    """Paper ids by FTS5 BM25 (weights :data:`BM25_WEIGHTS`), best first (see :func:`bm25_order`).

    Args:
        atlas: the atlas.
        query: any user string (see :func:`fts_query`).
        limit: most ids returned.

    Returns:
        Paper ids, best first; empty when the query has no word.
    """
    docs, _ = bm25_order(atlas, query)
    return [atlas.papers[int(i)].id for i in docs[:max(0, limit)]]


def semantic_ranking(atlas: Atlas, query_vec: np.ndarray, limit: int = POOL) -> list[tuple[str, float]]:
    """Papers by decreasing cosine similarity to ``query_vec`` (ties in stored order).

    Args:
        atlas: the atlas (its in-memory ``(n_papers, dim)`` vectors).
        query_vec: ``(dim,)`` float32, L2-normalised.
        limit: most papers returned.

    Returns:
        ``(paper id, cosine)`` pairs; empty when the atlas has no vectors.
    """
    if atlas.vectors.size == 0:
        return []
    index = neighbour_index(atlas)  # over the paper representation: the query's MiniLM half orders it as MiniLM
    rows, _ = index.search(dense_query(query_vec, index.dim), limit)
    cos = atlas.vectors[rows] @ np.asarray(query_vec, dtype=np.float32)
    return [(atlas.ids[int(i)], float(c)) for i, c in zip(rows, cos, strict=True)]


def rrf(rankings: list[list[str]], k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009) of lists of ids (:func:`rrf_scores`).

    Args:
        rankings: lists of ids, best first.
        k: the RRF constant (default :data:`RRF_K` = 60).

    Returns:
        ``id -> Σ 1 / (k + rank)`` over the given rankings (rank is 1-based).
    """
    index: dict[str, int] = {}
    for ranking in rankings:
        for pid in ranking:
            index.setdefault(pid, len(index))
    ranks = []
    for ranking in rankings:
        r = np.zeros(len(index), dtype=np.int64)
        for i, pid in enumerate(ranking, start=1):
            if not r[index[pid]]:  # an id listed twice in one ranking counts once, at its best rank
                r[index[pid]] = i
        ranks.append(r)
    fused = rrf_scores(ranks, k)
    return {pid: float(fused[i]) for pid, i in index.items()}


def rrf_scores(ranks: list[np.ndarray], k: int = RRF_K) -> np.ndarray:
    """Reciprocal rank fusion of rankings given as each item's rank: the one RRF of the search.

    Args:
        ranks: one ``(n,)`` int array per ranking, each item's 1-based rank in it, 0 where it is not ranked.
        k: the RRF constant (default :data:`RRF_K` = 60).

    Returns:
        ``(n,)`` float64, each item's ``Σ 1 / (k + rank)`` over the rankings that rank it (summed in the order
        given), 0.0 for an item none ranks.
    """
    n = len(ranks[0]) if ranks else 0
    fused = np.zeros(n, dtype=np.float64)
    for r in ranks:
        r = np.asarray(r)
        at = np.flatnonzero(r > 0)
        fused[at] += 1.0 / (k + r[at])
    return fused


