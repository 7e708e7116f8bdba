"""The 2-D map of a corpus: UMAP of the topic embedding.

UMAP (McInnes, Healy & Melville 2018, ``umap-learn``) with the cosine metric, ``n_neighbors=15``,
``min_dist=0.1``, :data:`N_EPOCHS` epochs (:data:`N_EPOCHS_SMALL` up to :data:`SMALL_MAP_PAPERS` papers) and a
fixed ``random_state``, given the exact neighbour graph (:func:`knn_graph`) below :data:`EXACT_KNN_MAX_PAPERS`
papers; papers added to an existing map are placed by
:func:`place_new` so earlier points never move. A rebuild places them by their most similar earlier papers (the
fitted reducer is not stored in the atlas: it could only be stored as code).
"""

from __future__ import annotations

import warnings

import numpy as np

#: below this many papers UMAP is given the exact neighbour graph (:func:`knn_graph`); from here it searches its own
#: (pynndescent), whose ~22 s of numba compilation is then won back: the 42,736-paper map took 50 s and 2.3 GB exact
#: (scikit-learn's default working memory), 43 s and 1.3 GB approximate, where 10,000 papers took 14 s exact and 31 s
#: approximate (whole UMAP fits, 2-core AMD EPYC, 640 dimensions)
EXACT_KNN_MAX_PAPERS = 30_000
#: scikit-learn's ``working_memory`` (MiB) for the exact graph's distance blocks (its default, 1 GiB, raised the 10k
#: build's peak)
KNN_WORKING_MIB = 128
#: UMAP's optimisation epochs above :data:`SMALL_MAP_PAPERS` papers: umap-learn's own choice above 10,000 points (it
#: runs 500 up to there). Measured on MiniLM vectors of the 42k dumps (random samples, exact graph, seed 42;
#: trustworthiness@15 of scikit-learn, cosine): 10,000 papers 0.9364 at 500 epochs and 0.9337 at 200, in 7.5 and 3.1 s
#: of CPU, so a build of 10,000 papers spends ~4 s less on its map for that 0.003
N_EPOCHS = 200
#: up to this many papers the map runs :data:`N_EPOCHS_SMALL` epochs: there they cost a second or two and the map
#: separates its areas better (ICLR 2021, 860 papers, MiniLM vectors: trustworthiness@15 0.9071 at 500 epochs, 0.9017
#: at 200; silhouette of the areas on the map 0.140 and 0.127)
SMALL_MAP_PAPERS = 5_000
#: epochs of a small map (umap-learn's default there)
N_EPOCHS_SMALL = 500
#: provenance of the map coordinates, stored in the atlas's meta
LAYOUT_METHOD = "umap-cosine-2d(minilm+lsa) exact-knn epochs-by-size v4"


def knn_graph(x: np.ndarray, k: int, n_jobs: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The exact cosine k-nearest-neighbour graph of ``x``'s rows, each row its own first neighbour (as UMAP wants).

    scikit-learn's brute-force ``NearestNeighbors`` (blocked matrix products, BLAS): at 10,000 × 640 it takes ~3 s
    where UMAP's own approximate search (pynndescent) spent ~22 s compiling its numba code in every build process.

    Args:
        x: ``(n, dim)`` float32 rows.
        k: neighbours per row, counting the row itself (``1 ≤ k ≤ n``).
        n_jobs: scikit-learn's ``n_jobs`` for the distance blocks.

    Returns:
        ``(indices, distances)``: ``(n, k)`` int64 row numbers and ``(n, k)`` float32 cosine distances, nearest first.
    """
    from sklearn import config_context
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=k, metric="cosine", algorithm="brute", n_jobs=n_jobs).fit(x)
    with config_context(working_memory=KNN_WORKING_MIB):
        idx = nn.kneighbors(x, return_distance=False)
    # BLAS sums in an order that depends on its threads and blocks, so the distances found above differ in the last
    # bits between processes and machines, and UMAP's map with them: the chosen neighbours' distances are summed
    # again in float64 by numpy's own loop (the same bits everywhere), and each row ordered by (distance, row)
    dist = np.empty(idx.shape, dtype=np.float64)
    for s in range(0, len(x), 1024):  # (1024, k, dim) float64 at a time: ~80 MB at k = 15, 640 dimensions
        a, b = _unit64(x[s:s + 1024]), _unit64(x[idx[s:s + 1024]])
        dist[s:s + 1024] = np.maximum(1.0 - np.einsum("ij,ikj->ik", a, b), 0.0)
    order = np.lexsort((idx, dist), axis=1)
    return np.take_along_axis(idx, order, axis=1), np.take_along_axis(dist, order, axis=1).astype(np.float32)


def _unit64(x: np.ndarray) -> np.ndarray:
    """``x`` as float64 rows of unit length (numpy's own loops, no BLAS: the same bits on every machine)."""
    x = x.astype(np.float64)
    return x / np.maximum(np.sqrt(np.einsum("...j,...j->...", x, x))[..., None], 1e-12)


def fit_layout(x: np.ndarray, seed: int = 42, n_jobs: int = 1) -> np.ndarray:
    """Fit the 2-D map on ``x``.

    Below :data:`EXACT_KNN_MAX_PAPERS` rows UMAP is given the exact neighbour graph (:func:`knn_graph`,
    ``precomputed_knn``), so its approximate search and that search's numba compilation are not run. The fitted
    reducer is not returned (with a given graph it could not ``transform``; :func:`place_new` places later papers
    by their nearest mapped papers).

    Args:
        x: the topic embedding, ``(n_papers, dim)``.
        seed: ``random_state`` of UMAP (and of the PCA fallback).
        n_jobs: threads for the exact neighbour graph, -1 for every core (UMAP's layout itself runs on one: a seeded
            UMAP is not parallel).

    Returns:
        ``(n_papers, 2)`` float32 coordinates (fewer than 5 papers: laid out by PCA instead).
    """
    n = len(x)
    if n < 5:
        out = np.zeros((n, 2), dtype=np.float32)
        if n > 1:
            from sklearn.decomposition import PCA

            comps = min(2, n)
            out[:, :comps] = PCA(n_components=comps, random_state=seed).fit_transform(x)
        return out
    import umap

    k = min(15, n - 1)
    knn = (None, None, None)
    if n < EXACT_KNN_MAX_PAPERS:
        idx, dist = knn_graph(np.asarray(x, dtype=np.float32), k, n_jobs=n_jobs)
        knn = (idx, dist, None)
    reducer = umap.UMAP(n_components=2, n_neighbors=k, min_dist=0.1, metric="cosine", random_state=seed,
                        n_epochs=N_EPOCHS_SMALL if n <= SMALL_MAP_PAPERS else N_EPOCHS, n_jobs=1,
                        init="spectral" if n > 20 else "random", precomputed_knn=knn)
    with warnings.catch_warnings():  # "transform will not be available": the reducer is not kept
        warnings.filterwarnings("ignore", message=".*precomputed_knn.*", category=UserWarning)
        return reducer.fit_transform(x).astype(np.float32)


def warm_up(seed: int = 42) -> None:
    """Compile UMAP's numba code in this process now, on 64 random points, so that :func:`fit_layout` later does not.

    UMAP compiles its graph and layout functions (~4-5 s of one core) the first time each process fits a map; a
    build calls this while its embedding children still work, where that time is shared with them instead of
    added after them.

    Args:
        seed: the random points' seed.
    """
    x = np.random.default_rng(seed).normal(size=(64, 8)).astype(np.float32)
    fit_layout(x / np.linalg.norm(x, axis=1, keepdims=True), seed=seed)


def place_new(x_new: np.ndarray, x_old: np.ndarray, xy_old: np.ndarray) -> np.ndarray:
    """Map coordinates for papers added to an existing map.

    The mean position of the 3 most similar papers already on the map (earlier points never move).

    Args:
        x_new: topic embedding of the new papers, ``(n_new, dim)``.
        x_old: topic embedding of the papers already on the map, ``(n_old, dim)``.
        xy_old: their map coordinates, ``(n_old, 2)``.

    Returns:
        ``(len(x_new), 2)`` float32.
    """
    if len(x_new) == 0:
        return np.zeros((0, 2), dtype=np.float32)
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
