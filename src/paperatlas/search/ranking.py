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

__all__ = ["BM25_WEIGHTS", "POOL", "RRF_K", "bm25_order", "bm25_ranking", "fts_phrases", "fts_query", "rrf",
           "semantic_ranking"]

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
    rows, cos = neighbour_index(atlas).search(np.asarray(query_vec, dtype=np.float32), limit)
    return [(atlas.ids[int(i)], float(c)) for i, c in zip(rows, cos, strict=True)]


def rrf(rankings: list[list[str]], k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009).

    Args:
        rankings: lists of ids, best first.
        k: the RRF constant (default :data:`RRF_K` = 60).

    Returns:
        ``id -> Σ 1 / (k + rank)`` over the given rankings (rank is 1-based).
    """
    out: dict[str, float] = {}
    for ranking in rankings:
        for r, pid in enumerate(ranking, start=1):
            out[pid] = out.get(pid, 0.0) + 1.0 / (k + r)
    return out


