"""Ranking primitives: FTS5 BM25, embedding cosine, reciprocal rank fusion.

* **BM25**: SQLite FTS5's ``bm25()`` with column weights title 10, authors 4, abstract 1, keyphrases 5, TL;DR 2;
  porter stemming. Any user string is safe: it is reduced to word tokens, each quoted, joined with ``OR``.
* **Semantic**: cosine similarity between the query embedding and the paper embeddings (brute force over the
  in-memory ``(n_papers, 384)`` matrix: ~10 ms for 40k papers).
* **Hybrid**: reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009), ``score = Σ 1 / (k + rank)``
  with ``k = 60`` over the top :data:`POOL` of each list.
"""

from __future__ import annotations

import numpy as np

from ..store import Atlas
from ..text import word_tokens
from .neighbours import neighbour_index

RRF_K = 60
POOL = 200
BM25_WEIGHTS = (10.0, 4.0, 1.0, 5.0, 2.0)  # title, authors, abstract, keyphrases, tldr


def fts_query(query: str) -> str:
    """An FTS5 MATCH expression for any user string: word tokens, each double-quoted, joined with OR.

    Tokens are lower-cased and deduplicated; the FTS5 operators ``and``, ``or``, ``not``, ``near`` are dropped.

    Args:
        query: any user string.

    Returns:
        The expression; ``""`` when the string has no word (the caller then skips BM25).
    """
    toks = [t.lower() for t in word_tokens(query)]
    toks = list(dict.fromkeys(t for t in toks if t not in {"and", "or", "not", "near"}))
    return " OR ".join(f'"{t}"' for t in toks)


def bm25_ranking(atlas: Atlas, query: str, limit: int = POOL) -> list[str]:
    """Paper ids by FTS5 BM25 (weights :data:`BM25_WEIGHTS`), best first.

    Args:
        atlas: the atlas.
        query: any user string (see :func:`fts_query`).
        limit: most ids returned.

    Returns:
        Paper ids, best first; empty when the query has no word.
    """
    expr = fts_query(query)
    if not expr:
        return []
    w = ", ".join(str(x) for x in BM25_WEIGHTS)
    rows = atlas.con.execute(
        f"SELECT paper_id FROM papers_fts WHERE papers_fts MATCH ? ORDER BY bm25(papers_fts, 0, {w}) LIMIT ?",
        (expr, limit)).fetchall()
    return [r[0] for r in rows]


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


