"""The 2-D map of a corpus: UMAP of the topic embedding.

UMAP (McInnes, Healy & Melville 2018, ``umap-learn``) with the cosine metric, ``n_neighbors=15``,
``min_dist=0.1`` and a fixed ``random_state``; papers added to an existing map are placed by
:func:`place_new` so earlier points never move. A rebuild places them by their most similar earlier papers (the
fitted reducer is not stored in the atlas: it could only be stored as code).
"""

from __future__ import annotations

import numpy as np

#: provenance of the map coordinates, stored in the atlas's meta
LAYOUT_METHOD = "umap-cosine-2d(minilm+lsa) v2"


def fit_layout(x: np.ndarray, seed: int = 42):
    """Fit the 2-D map on ``x``.

    Args:
        x: the topic embedding, ``(n_papers, dim)``.
        seed: ``random_state`` of UMAP (and of the PCA fallback).

    Returns:
        ``(coordinates, reducer)``: coordinates ``(n_papers, 2)`` float32; the reducer is a fitted ``umap.UMAP``
        (None for fewer than 5 papers, laid out by PCA instead) whose ``transform`` places later papers on the
        same map.
    """
    n = len(x)
    if n < 5:
        out = np.zeros((n, 2), dtype=np.float32)
        if n > 1:
            from sklearn.decomposition import PCA

            comps = min(2, n)
            out[:, :comps] = PCA(n_components=comps, random_state=seed).fit_transform(x)
        return out, None
    import umap

    reducer = umap.UMAP(n_components=2, n_neighbors=min(15, n - 1), min_dist=0.1, metric="cosine",
                        random_state=seed, n_jobs=1, init="spectral" if n > 20 else "random")
    return reducer.fit_transform(x).astype(np.float32), reducer


def place_new(reducer, x_new: np.ndarray, x_old: np.ndarray, xy_old: np.ndarray) -> np.ndarray:
    """Map coordinates for papers added to an existing map.

    ``reducer.transform`` (UMAP) when there is a reducer, else the mean position of the 3 most similar existing
    papers.

    Args:
        reducer: the reducer returned by :func:`fit_layout`, or None.
        x_new: topic embedding of the new papers, ``(n_new, dim)``.
        x_old: topic embedding of the papers already on the map, ``(n_old, dim)``.
        xy_old: their map coordinates, ``(n_old, 2)``.

    Returns:
        ``(len(x_new), 2)`` float32.
    """
    if len(x_new) == 0:
        return np.zeros((0, 2), dtype=np.float32)
    if reducer is not None:
        return reducer.transform(x_new).astype(np.float32)
    if len(x_old) == 0:
        return np.zeros((len(x_new), 2), dtype=np.float32)
    k = min(3, len(x_old))
    out = np.empty((len(x_new), 2), dtype=np.float32)
    for start in range(0, len(x_new), 1024):  # (1024, n_old) similarities at a time: bounded memory
        sim = x_new[start:start + 1024] @ x_old.T
        top = np.argpartition(-sim, k - 1, axis=1)[:, :k] if k < sim.shape[1] else np.argsort(-sim, axis=1)
        # the 3 most similar in order (argpartition leaves them unordered; the mean does not care, ties aside)
        order = np.argsort(-np.take_along_axis(sim, top, axis=1), axis=1, kind="stable")
        near = np.take_along_axis(top, order, axis=1)[:, :k]
        out[start:start + 1024] = xy_old[near].mean(axis=1)
    return out
