"""The atlas's nearest-neighbour index: the one the build stored (an HNSW graph above 100,000 papers), else exact.

It indexes the paper representation (:func:`paperatlas.search.representation.paper_vectors`, MiniLM ⊕ LSA).
Related papers and the meaning tier on large atlases ask :func:`neighbour_index` for the papers nearest to a
vector. A large atlas carries the graph the build made (:func:`build_index_blob`, stored under :data:`STORED` in
the ``models`` table); everything else, and an atlas whose stored index is missing, damaged or needs USearch that is not
installed, is searched exactly (one mat-vec plus a top-k; never a graph built while a reader waits).
"""

from __future__ import annotations

import numpy as np

from ..store import Atlas
from .ann import ANN_MIN_PAPERS, NeighbourIndex
from .representation import paper_vectors

#: the ``models`` table's name for the stored index
STORED = "neighbours"


def build_index_blob(vectors: np.ndarray, min_papers: int | None = None) -> bytes | None:
    """The index a build stores for ``vectors``: an HNSW graph's bytes from ``min_papers`` rows on, else None.

    Args:
        vectors: ``(n_papers, dim)`` float32, L2-normalised, in the atlas's row order.
        min_papers: fewest rows for a graph (default :data:`paperatlas.search.ann.ANN_MIN_PAPERS`).

    Returns:
        :meth:`NeighbourIndex.to_bytes` of the graph, or None below ``min_papers`` rows.

    Raises:
        ImportError: a graph is due and USearch is not installed (``pip install 'paperatlas[ann]'``).
    """
    min_papers = ANN_MIN_PAPERS if min_papers is None else min_papers
    if len(vectors) < max(min_papers, 1):
        return None
    return NeighbourIndex.build(vectors, min_papers=min_papers).to_bytes()


def neighbour_index(atlas: Atlas) -> NeighbourIndex:
    """The index of the atlas's paper representation (:func:`paper_vectors`), loaded once per atlas object.

    Args:
        atlas: an atlas with embeddings (n > 0 papers).

    Returns:
        The stored graph when it loads and matches the vectors, else an exact index.
    """

    def make() -> NeighbourIndex:
        blob = atlas.stored_model(STORED, buffer=True)
        vectors = paper_vectors(atlas)
        if blob:
            try:
                return NeighbourIndex.from_bytes(blob, vectors)
            except (ValueError, ImportError):  # damaged, stale, or no USearch here: exact is always right
                pass
        return NeighbourIndex.build(vectors, min_papers=len(vectors) + 1)

    return atlas.derived("neighbour index", make)
