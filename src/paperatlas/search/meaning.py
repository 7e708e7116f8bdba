"""Cosines of a large atlas where a search needs them, and its meaning tier found through the HNSW graph.

Below :data:`MEANING_ANN_MIN_ROWS` rows (or without a stored graph) :mod:`.engine` computes the query's cosine to
every paper and the papers' mean cosine to the best keyword matches by two exact scans of ``atlas.vectors``
(~8 ms at 42k papers, ~144 ms at 1M). From there on, with the graph the build stored (:mod:`.neighbours`), it
computes them only where a tier reads them:

* the keyword and partial tiers read the cosines of their own papers: gathered rows (:func:`cosines_at`; a full
  scan when they are more than :data:`GATHER_SHARE` of the atlas);
* the meaning tier (papers without the words, close to the query or to the keyword matches) takes the
  :data:`FIRST_CANDIDATES` rows nearest to the query and as many nearest to the keyword matches' mean from the
  graph, computes both exact cosines for their union, and keeps those that pass the tier's cut-offs
  (:func:`meaning_from_graph`). When fewer than the tier's limit pass and a list's last row is still above its
  cut-off (more rows may pass), that list grows four-fold, up to :data:`MAX_CANDIDATES` (where both start when the
  keyword tiers hold that many papers); past that, the two exact
  scans. The cosines and the order are exact; only which rows are looked at is approximate (the graph's recall).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..enrich.hierarchy import DENSE_WEIGHT
from ..store import Atlas
from .ann import ANN_MIN_PAPERS, NeighbourIndex
from .neighbours import neighbour_index
from .postings import sorted_unique
from .representation import dense_query, paper_vectors, query_vector

#: fewest rows for which the meaning tier uses the graph (below it: exact scans, the same results as ever)
MEANING_ANN_MIN_ROWS = ANN_MIN_PAPERS
#: rows first taken from the graph for each of the two lists (query, keyword matches' mean)
#: (1,024 rather than 256: at 1M recall@10 0.987 vs 0.965 and faster, fewer lists grow; benchmarks/million.py --recall)
FIRST_CANDIDATES = 1024
#: most rows per list before falling back to exact scans
MAX_CANDIDATES = 4096
#: gathering cosines of more than this share of the rows is slower than one scan of them all
GATHER_SHARE = 0.25


def cosines(vectors: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``(n_rows,)`` float32 ``vectors @ q``, one row at a time (``np.vecdot``).

    Not the BLAS matrix-vector product: in the web app the query embedding's ONNX Runtime threads have just
    run, and OpenBLAS's own threads then fought them for the two cores (at 42k papers, two products took
    23 ms p50 and 35-266 ms p95 right after an embedding, one at a time 8.6 ms p50 and 14 ms p95). The values are
    the same float32 dot products, rounded in another order (they differ from ``vectors @ q`` by ~1e-8).
    """
    return np.vecdot(vectors, q)


def graph(atlas: Atlas) -> NeighbourIndex | None:
    """The atlas's HNSW graph when its meaning tier should use it, else None.

    Args:
        atlas: the atlas.

    Returns:
        Its stored neighbour index when ``atlas.vectors`` has at least :data:`MEANING_ANN_MIN_ROWS` rows and the
        index is a graph (not the exact fallback: no graph stored, damaged, or USearch missing); else None.
    """
    if len(atlas.vectors) < max(MEANING_ANN_MIN_ROWS, 1):
        return None
    index = neighbour_index(atlas)
    return None if index.exact else index


def scan_is_cheaper(n_wanted: int, n_rows: int) -> bool:
    """Whether the cosines at ``n_wanted`` of ``n_rows`` rows are cheaper as one scan of every row than gathered.

    The rule :func:`cosines_at` and :class:`Gathered` share: more than :data:`GATHER_SHARE` of the rows.
    """
    return n_wanted > GATHER_SHARE * n_rows


def cosines_at(vectors: np.ndarray, v: np.ndarray, rows: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``vectors @ v`` at ``rows`` (``-inf`` elsewhere in a new array), by gathering or, for many rows, a scan.

    Args:
        vectors: ``(n_rows, dim)`` float32.
        v: ``(dim,)`` float32.
        rows: ``(m,)`` int row numbers (repeats allowed).
        out: ``(n_rows,)`` float32 to fill at ``rows`` instead of a new array.

    Returns:
        ``(n_rows,)`` float32: the cosines at ``rows`` (row by row, ``np.vecdot``), ``-inf`` or ``out``'s values
        elsewhere (every row's cosine after a scan).
    """
    if out is None:
        out = np.full(len(vectors), -np.inf, dtype=np.float32)
    if scan_is_cheaper(len(rows), len(vectors)):
        out[:] = np.vecdot(vectors, v)
    elif len(rows):
        rows = np.sort(np.asarray(rows, dtype=np.int64))
        out[rows] = np.vecdot(vectors[rows], v)
    return out


def query_cosines(atlas: Atlas, text: str, dense: np.ndarray, rows: np.ndarray,
                  sims: np.ndarray | None = None) -> np.ndarray:
    """Cosines of a query (:func:`.representation.query_vector`) to the paper representation at some rows.

    The representation's cosine is ``DENSE_WEIGHT`` × the MiniLM cosine + ``(1 - DENSE_WEIGHT)`` × the LSA cosine
    (both halves are unit vectors), so given the MiniLM cosines a search has computed already (``sims``), only the
    LSA half (k ≤ 256 columns) is read, at ``rows`` or in one scan (:func:`cosines_at`).

    Args:
        atlas: the atlas.
        text: the query as searched.
        dense: ``(384,)`` float32 MiniLM vector of ``text``.
        rows: rows of ``atlas.ids`` (int, any order; -1 entries ignored).
        sims: ``(len(atlas.ids),)`` float32 MiniLM cosines of the query, at least at ``rows``; None to compute them.

    Returns:
        ``(len(atlas.ids),)`` float32: the cosine at ``rows`` (and at every row after a scan); elsewhere -inf or
        a meaningless value.
    """
    vectors = paper_vectors(atlas)
    rows = np.asarray(rows, dtype=np.int64)
    rows = rows[rows >= 0]
    q = query_vector(atlas, text, dense)
    d = len(dense)
    if sims is None or vectors.shape[1] == d:  # no split to use: the whole representation
        return cosines_at(vectors, q, rows)
    # the MiniLM half's cosines are known: √w · |q's dense half| · sims, plus the LSA half's
    base = math.sqrt(DENSE_WEIGHT) * float(np.linalg.norm(q[:d])) * np.asarray(sims, np.float32)
    return cosines_at(vectors[:, d:], q[d:], rows) + base


class Gathered:
    """Some rows of ``vectors``, copied once, whose cosines to several vectors a search computes.

    A search of a large atlas computes the query's cosine to every paper having enough of its words, then the keyword
    matches' mean's cosine to the partial matches among them: on the 1M atlas, ``contrastive learnig`` gathered
    57,000 rows (25 ms) and then 35,000 of them again (13 ms); the second pass over the copied block takes 3 ms.

    Args:
        vectors: ``(n_rows, dim)`` float32.
        rows: ``(m,)`` int row numbers (any order, repeats allowed). More than :data:`GATHER_SHARE` of the rows are
            not copied: each cosine is then a scan of every row.
    """

    def __init__(self, vectors: np.ndarray, rows: np.ndarray):
        self.vectors = vectors
        #: ``(m,)`` int64, the rows, sorted, no repeats
        self.rows = sorted_unique(np.asarray(rows, dtype=np.int64))
        self._block = None if scan_is_cheaper(len(self.rows), len(vectors)) else vectors[self.rows]

    def cosines(self, v: np.ndarray) -> np.ndarray:
        """``vectors @ v`` at the rows (``np.vecdot``, as :func:`cosines_at`), ``-inf`` elsewhere.

        Args:
            v: ``(dim,)`` float32.

        Returns:
            ``(n_rows,)`` float32 (every row's cosine when the rows were too many to copy).
        """
        if self._block is None:
            return np.vecdot(self.vectors, v)
        out = np.full(len(self.vectors), -np.inf, dtype=np.float32)
        if len(self.rows):
            out[self.rows] = np.vecdot(self._block, v)
        return out


def meaning_from_graph(vectors: np.ndarray, index: NeighbourIndex, q: np.ndarray, centre: np.ndarray | None,
                       cut: tuple[float, float],
                       tier: Callable[[np.ndarray, np.ndarray, np.ndarray | None], tuple[list, bool]],
                       n_skipped: int = 0) -> tuple[list, bool]:
    """The meaning tier over the rows the graph finds near the query and near the keyword matches.

    Args:
        vectors: ``(n_rows, dim)`` float32, L2-normalised (``atlas.vectors``, the graph's rows).
        index: the graph (:func:`graph`).
        q: ``(dim,)`` float32, the query's embedding (L2-normalised).
        centre: ``(dim,)`` float32, the mean of the keyword matches' vectors, or None (no feedback).
        cut: ``(query cosine, centre cosine)`` from which a row is a meaning match.
        tier: ``(sims, near, rows) -> (hits, capped)``, the meaning tier given ``(n_rows,)`` float32 cosines to the
            query and to ``centre`` (zeros without it), read only at ``rows`` (sorted, no repeats; None: every row).
        n_skipped: rows the tier leaves out (the keyword and partial matches). From :data:`MAX_CANDIDATES` of them
            the lists start at that length: the rows nearest a query with that many matches are mostly matches, so
            :data:`FIRST_CANDIDATES` rows found too few meaning matches and were searched again (``graph neural
            networks`` at 1M: 2 + 8.7 ms of graph search per list instead of 8.7).

    Returns:
        ``tier``'s answer once the lists hold every row above a cut-off or the tier is full (``capped``), or after
        exact scans when :data:`MAX_CANDIDATES` rows a list were not enough. A list whose last row is below its
        cut-off is not searched again.
    """
    unit = None if centre is None else (centre / max(float(np.linalg.norm(centre)), 1e-12)).astype(np.float32)
    targets = [q] if unit is None else [q, unit]
    k = [MAX_CANDIDATES if n_skipped >= MAX_CANDIDATES else FIRST_CANDIDATES] * len(targets)
    found: list[np.ndarray | None] = [None] * len(targets)
    sims = np.full(len(vectors), -np.inf, dtype=np.float32)
    near = np.zeros_like(sims) if centre is None else np.full(len(vectors), -np.inf, dtype=np.float32)
    seen = np.zeros(0, dtype=np.int64)
    while True:
        for i, v in enumerate(targets):
            if found[i] is None or len(found[i]) < k[i]:
                found[i] = index.search_many(dense_query(v, index.dim)[None, :], k[i], threads=1, oversample=1)[0][0]
        rows = sorted_unique(np.concatenate(found))
        new = rows[~np.isin(rows, seen, assume_unique=True)] if len(seen) else rows
        cosines_at(vectors, q, new, out=sims)
        if centre is not None:
            cosines_at(vectors, centre, new, out=near)
        seen = rows
        hits, capped = tier(sims, near, rows)
        last = [sims[found[0][-1]] < cut[0]] + ([near[found[1][-1]] < cut[1]] if centre is not None else [])
        whole = len(found[0]) < k[0]  # the graph has fewer rows than asked: every row was looked at
        if capped or all(last) or whole:
            return hits, capped
        if all(done or ki >= MAX_CANDIDATES for ki, done in zip(k, last, strict=True)):
            break
        k = [ki if done else min(ki * 4, MAX_CANDIDATES) for ki, done in zip(k, last, strict=True)]
    sims = np.vecdot(vectors, q)
    return tier(sims, np.zeros_like(sims) if centre is None else np.vecdot(vectors, centre), None)
