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
  cut-off (more rows may pass), the lists grow four-fold, up to :data:`MAX_CANDIDATES`; past that, the two exact
  scans. The cosines and the order are exact; only which rows are looked at is approximate (the graph's recall).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..store import Atlas
from .ann import ANN_MIN_PAPERS, NeighbourIndex
from .neighbours import neighbour_index
from .terms import sorted_unique

#: fewest rows for which the meaning tier uses the graph (below it: exact scans, the same results as ever)
MEANING_ANN_MIN_ROWS = ANN_MIN_PAPERS
#: rows first taken from the graph for each of the two lists (query, keyword matches' mean)
#: (1,024 rather than 256: at 1M recall@10 0.987 vs 0.965 and faster, fewer lists grow; benchmarks/million.py --recall)
FIRST_CANDIDATES = 1024
#: most rows per list before falling back to exact scans
MAX_CANDIDATES = 4096
#: gathering cosines of more than this share of the rows is slower than one scan of them all
GATHER_SHARE = 0.25


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
    if len(rows) > GATHER_SHARE * len(vectors):
        out[:] = np.vecdot(vectors, v)
    elif len(rows):
        rows = np.sort(np.asarray(rows, dtype=np.int64))
        out[rows] = np.vecdot(vectors[rows], v)
    return out


def meaning_from_graph(vectors: np.ndarray, index: NeighbourIndex, q: np.ndarray, centre: np.ndarray | None,
                       cut: tuple[float, float],
                       tier: Callable[[np.ndarray, np.ndarray], tuple[list, bool]]) -> tuple[list, bool]:
    """The meaning tier over the rows the graph finds near the query and near the keyword matches.

    Args:
        vectors: ``(n_rows, dim)`` float32, L2-normalised (``atlas.vectors``, the graph's rows).
        index: the graph (:func:`graph`).
        q: ``(dim,)`` float32, the query's embedding (L2-normalised).
        centre: ``(dim,)`` float32, the mean of the keyword matches' vectors, or None (no feedback).
        cut: ``(query cosine, centre cosine)`` from which a row is a meaning match.
        tier: ``(sims, near) -> (hits, capped)``, the meaning tier given ``(n_rows,)`` float32 cosines to the
            query and to ``centre`` (zeros without it), ``-inf`` at the rows not looked at.

    Returns:
        ``tier``'s answer once the lists hold every row above a cut-off or the tier is full (``capped``), or after
        exact scans when :data:`MAX_CANDIDATES` rows a list were not enough.
    """
    unit = None if centre is None else centre / max(float(np.linalg.norm(centre)), 1e-12)
    k = FIRST_CANDIDATES
    while True:
        found = [index.search_many(q[None, :], k, threads=1, oversample=1)[0][0]]
        if unit is not None:
            found.append(index.search_many(unit[None, :].astype(np.float32), k, threads=1, oversample=1)[0][0])
        rows = sorted_unique(np.concatenate(found))
        sims = cosines_at(vectors, q, rows)
        near = np.zeros_like(sims) if centre is None else cosines_at(vectors, centre, rows)
        hits, capped = tier(sims, near)
        whole = len(found[0]) < k  # the graph has fewer rows than asked: every row was looked at
        complete = sims[found[0][-1]] < cut[0] and (centre is None or near[found[1][-1]] < cut[1])
        if capped or complete or whole:
            return hits, capped
        if k >= MAX_CANDIDATES:
            break
        k *= 4
    sims = np.vecdot(vectors, q)
    return tier(sims, np.zeros_like(sims) if centre is None else np.vecdot(vectors, centre))
