"""The two-level hierarchy (areas → sub-topics) of :mod:`paperatlas.enrich.topics`.

* **Paper embedding for topics** (:func:`topic_embedding`, in :mod:`paperatlas.enrich.text_space`): the dense
  sentence embedding (all-MiniLM-L6-v2, 384-d) concatenated to a lexical one, LSA of the corpus's TF-IDF.
* **Hierarchy** (:func:`fit_hierarchy`, :func:`refine_hierarchy`): k-means (scikit-learn, k-means++ init, 10
  restarts, seeded) into areas, each split again into sub-topics, then one Lloyd refinement over all sub-topic
  centroids; :func:`confidence` marks low-confidence placements and secondary topics.

See :mod:`paperatlas.enrich.topics` for the method as a whole and its sources.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

# the embedding's names, re-exported: callers know them from here
from .text_space import DENSE_WEIGHT as DENSE_WEIGHT
from .text_space import MAX_TFIDF_FEATURES as MAX_TFIDF_FEATURES
from .text_space import TextSpace as TextSpace
from .text_space import _l2
from .text_space import array_json as array_json
from .text_space import fit_text_space as fit_text_space
from .text_space import json_array as json_array
from .text_space import text_arrays as text_arrays
from .text_space import text_space_from_arrays as text_space_from_arrays
from .text_space import tfidf_vectorizer as tfidf_vectorizer
from .text_space import topic_embedding as topic_embedding

#: a paper whose cosine to another sub-topic's centroid is at least this share of its own topic's is also filed
#: under that sub-topic (secondary topic)
SECONDARY_RATIO = 0.97
#: a paper whose cosine to its centroid is below its topic's mean minus this many standard deviations is marked
#: low-confidence (it fits no topic well and was placed in the nearest)
LOW_CONFIDENCE_Z = 2.0


def default_n_areas(n_papers: int) -> int:
    """Number of top-level areas: the cube root of the corpus size, clipped to 8-20.

    10 for ICLR 2021's 860 papers, 20 from ~8,000 papers up; small corpora get at most one area per 15 papers (at
    least 1).

    Args:
        n_papers: number of papers in the corpus.

    Returns:
        The number of areas.
    """
    return max(1, min(n_papers // 15, max(8, min(20, round(n_papers ** (1 / 3))))))


def default_n_topics(n_papers: int) -> int:
    """Number of sub-topics: about one per 25 papers.

    At least one per area (two when there are 20+ papers per area), at most 15 per area (34 for ICLR 2021, 300
    for 40,000 papers), never more than the papers.

    Args:
        n_papers: number of papers in the corpus.

    Returns:
        The total number of sub-topics.
    """
    a = default_n_areas(n_papers)
    floor = 2 * a if n_papers >= 20 * a else a
    return min(n_papers, max(floor, min(15 * a, round(n_papers / 25))))


# --------------------------------------------------------------------------------------------------- clustering
@dataclass
class Hierarchy:
    """A fitted two-level clustering of ``n`` papers.

    Areas are numbered by decreasing size, sub-topics by area then decreasing size.

    Attributes:
        leaf: ``(n,)`` int: sub-topic index per paper.
        parent: ``(n_leaves,)`` int: area index per sub-topic.
        centroids: ``(n_leaves, dim)`` float32, L2-normalised sub-topic centroids.
    """

    leaf: np.ndarray
    parent: np.ndarray
    centroids: np.ndarray

    @property
    def area(self) -> np.ndarray:
        """``(n,)`` int: area index per paper."""
        return self.parent[self.leaf] if len(self.leaf) else np.zeros(0, dtype=int)


def _kmeans(x: np.ndarray, k: int, seed: int, init: np.ndarray | None = None) -> np.ndarray:
    from sklearn.cluster import KMeans

    if k <= 1 or len(x) <= 1:
        return np.zeros(len(x), dtype=int)
    k = min(k, len(x))
    if init is not None:
        km = KMeans(n_clusters=k, init=init, n_init=1, random_state=seed)
    else:
        km = KMeans(n_clusters=k, n_init=10, random_state=seed)
    return km.fit_predict(x).astype(int)


def _centroids(x: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((k, x.shape[1]), dtype=np.float32)
    for c in range(k):
        m = labels == c
        if m.any():
            out[c] = x[m].mean(axis=0)
    return _l2(out)


#: in an atlas of at least :data:`AREA_CAP_MIN_PAPERS` papers no area holds more than this share of them: a larger
#: area is split in two (k-means), and papers past the cap move to their nearest sub-topic of another area, those
#: nearest to it first (issue 28: an area of 18 % of ICLR 2021 mixed Gaussian processes, batch norm and neural ODEs)
MAX_AREA_SHARE = 0.15
#: smallest atlas whose areas are capped at :data:`MAX_AREA_SHARE` (smaller ones have too few areas to cap)
AREA_CAP_MIN_PAPERS = 500
#: below this many papers the number of topics is chosen by the silhouette of k-means on the papers (2 to 5
#: topics, one sub-topic each), not by the corpus size: a 20-paper library of three subjects gets three topics
SMALL_CORPUS = 50


def small_corpus_k(x: np.ndarray, seed: int = 42) -> int:
    """The number of topics of a small corpus: the ``k`` in 2-5 with the best cosine silhouette of k-means.

    Silhouette (Rousseeuw 1987) as computed by scikit-learn's ``silhouette_score``; ``k`` is at most a quarter of
    the papers, so every topic can hold a few.

    Args:
        x: the topic embedding, ``(n_papers, dim)`` float32, L2-normalised; ``n_papers < SMALL_CORPUS``.
        seed: ``random_state`` of k-means.

    Returns:
        The number of topics (1 for fewer than 8 papers).
    """
    from sklearn.metrics import silhouette_score

    n = len(x)
    best, best_k = -2.0, 1
    for k in range(2, min(5, n // 4) + 1):
        labels = _kmeans(x, k, seed)
        if len(set(labels.tolist())) < 2:
            continue
        score = float(silhouette_score(x, labels, metric="cosine"))
        if score > best + 1e-9:
            best, best_k = score, k
    return best_k


def fit_hierarchy(x: np.ndarray, n_areas: int | None = None, n_topics: int | None = None,
                  seed: int = 42) -> Hierarchy:
    """Cluster ``x`` into areas and sub-topics (see the module docstring).

    Below :data:`SMALL_CORPUS` papers (and no size asked) the number of areas is :func:`small_corpus_k`, one
    sub-topic each. From :data:`AREA_CAP_MIN_PAPERS` papers no area holds more than :data:`MAX_AREA_SHARE` of them.

    Args:
        x: the topic embedding, ``(n_papers, dim)`` float32, L2-normalised.
        n_areas: number of areas; None for :func:`default_n_areas`.
        n_topics: total number of sub-topics; None for :func:`default_n_topics`. Below ``n_areas`` it lowers the
            number of areas to it.
        seed: ``random_state`` of k-means.

    Returns:
        The renumbered :class:`Hierarchy` (empty sub-topics and areas dropped).
    """
    n = len(x)
    if n == 0:
        return Hierarchy(np.zeros(0, int), np.zeros(0, int), np.zeros((0, x.shape[1] if x.ndim == 2 else 0)))
    if n < SMALL_CORPUS and n_areas is None and n_topics is None:
        n_areas = n_topics = small_corpus_k(x, seed)
    n_topics = min(n, n_topics or default_n_topics(n))
    n_areas = max(1, min(n_areas or default_n_areas(n), n_topics))
    area = _kmeans(x, n_areas, seed)
    cap = MAX_AREA_SHARE * n if n >= AREA_CAP_MIN_PAPERS else float("inf")
    for _ in range(4):  # an area past the cap is split in two
        sizes = np.bincount(area)
        big = int(np.argmax(sizes))
        if sizes[big] <= cap:
            break
        idx = np.flatnonzero(area == big)
        halves = _kmeans(x[idx], 2, seed)
        area[idx[halves == 1]] = len(sizes)
    n_areas = int(area.max()) + 1
    sizes = np.bincount(area, minlength=n_areas)
    # sub-topics per area in proportion to its size (largest remainder), at least one, never more than papers/2
    quota = sizes / n * max(n_topics, n_areas)
    alloc = np.maximum(1, np.floor(quota).astype(int))
    for a in np.argsort(-(quota - np.floor(quota)), kind="stable"):
        if alloc.sum() >= n_topics:
            break
        alloc[a] += 1
    alloc = np.minimum(alloc, np.maximum(1, sizes // 2))
    leaf = np.zeros(n, dtype=int)
    parent: list[int] = []
    for a in range(n_areas):
        idx = np.flatnonzero(area == a)
        if len(idx) == 0:
            continue
        sub = _kmeans(x[idx], int(alloc[a]), seed)
        for s in range(int(sub.max()) + 1):
            leaf[idx[sub == s]] = len(parent)
            parent.append(a)
    parent_arr = np.array(parent, dtype=int)
    centroids = _centroids(x, leaf, len(parent))
    # one global refinement: a paper joins the sub-topic whose centroid is nearest
    if len(parent) > 1:
        leaf = _kmeans(x, len(parent), seed, init=centroids)
    leaf = _cap_areas(x, leaf, parent_arr, cap)
    leaf, parent_arr = _split_large(x, leaf, parent_arr, MAX_SUBTOPIC_FACTOR * n / max(n_topics, 1), seed)
    return _canonical(x, leaf, parent_arr)


#: a sub-topic of more than this many times the mean sub-topic size is split in two (k-means): the refinement can
#: gather a large, mixed sub-topic (ICLR 2021: 53 papers of batch norm, vision transformers and invariances)
MAX_SUBTOPIC_FACTOR = 2.0


def _split_large(x: np.ndarray, leaf: np.ndarray, parent: np.ndarray, limit: float,
                 seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Split each sub-topic of more than ``limit`` papers in two, both halves in its area.

    Args:
        x: ``(n, dim)`` topic embedding.
        leaf: ``(n,)`` sub-topic index per paper.
        parent: ``(n_leaves,)`` area index per sub-topic.
        limit: most papers a sub-topic keeps unsplit.
        seed: ``random_state`` of k-means.

    Returns:
        ``(leaf, parent)`` with the new sub-topics appended.
    """
    sizes = np.bincount(leaf, minlength=len(parent))
    big = np.flatnonzero(sizes > limit)
    if not len(big) or len(x) < AREA_CAP_MIN_PAPERS:
        return leaf, parent
    leaf, extra = leaf.copy(), []
    for t in big.tolist():
        idx = np.flatnonzero(leaf == t)
        halves = _kmeans(x[idx], 2, seed)
        if 0 < halves.sum() < len(idx):
            leaf[idx[halves == 1]] = len(parent) + len(extra)
            extra.append(int(parent[t]))
    return leaf, np.concatenate([parent, np.array(extra, dtype=int)])


def _cap_areas(x: np.ndarray, leaf: np.ndarray, parent: np.ndarray, cap: float) -> np.ndarray:
    """Move papers out of areas past ``cap`` papers to their nearest sub-topic of another area (nearest first).

    Args:
        x: ``(n, dim)`` topic embedding.
        leaf: ``(n,)`` sub-topic index per paper.
        parent: ``(n_leaves,)`` area index per sub-topic.
        cap: most papers an area may hold.

    Returns:
        ``(n,)`` sub-topic index per paper (a new array when papers moved).
    """
    area_sizes = np.bincount(parent[leaf], minlength=int(parent.max()) + 1)
    if area_sizes.max() <= cap or len(area_sizes) < 2:
        return leaf
    leaf = leaf.copy()
    sims = x @ _centroids(x, leaf, len(parent)).T
    for a in np.flatnonzero(area_sizes > cap).tolist():
        members = np.flatnonzero(parent[leaf] == a)
        other = sims[members].copy()
        other[:, parent == a] = -np.inf
        target = np.argmax(other, axis=1)
        loss = sims[members, leaf[members]] - other[np.arange(len(members)), target]
        excess = int(area_sizes[a] - np.floor(cap))
        for j in np.argsort(loss, kind="stable").tolist():
            if excess <= 0:
                break
            dest = int(parent[target[j]])
            if area_sizes[dest] + 1 > cap:
                continue
            leaf[members[j]] = target[j]
            area_sizes[dest] += 1
            area_sizes[a] -= 1
            excess -= 1
    return leaf


def _canonical(x: np.ndarray, leaf: np.ndarray, parent: np.ndarray) -> Hierarchy:
    """Drop empty sub-topics/areas and renumber: areas by decreasing size, sub-topics by area then size."""
    used = np.unique(leaf)
    leaf_sizes = Counter(leaf.tolist())
    area_sizes = Counter(parent[leaf].tolist())
    areas = sorted({int(parent[u]) for u in used}, key=lambda a: (-area_sizes[a], a))
    area_rank = {a: i for i, a in enumerate(areas)}
    leaves = sorted(used.tolist(), key=lambda u: (area_rank[int(parent[u])], -leaf_sizes[u], u))
    leaf_rank = {u: i for i, u in enumerate(leaves)}
    new_leaf = np.array([leaf_rank[u] for u in leaf.tolist()], dtype=int)
    new_parent = np.array([area_rank[int(parent[u])] for u in leaves], dtype=int)
    return Hierarchy(new_leaf, new_parent, _centroids(x, new_leaf, len(leaves)))


def refine_hierarchy(x: np.ndarray, previous: Hierarchy, fixed: np.ndarray | None = None) -> Hierarchy:
    """Update a hierarchy for a changed set of papers without refitting it.

    Each paper with a ``fixed`` sub-topic keeps it; every other paper joins the sub-topic whose stored centroid
    (``previous.centroids``) is nearest by cosine. Centroids are then recomputed from the members. Sub-topic ``j``
    of the result is sub-topic ``j`` of ``previous`` (it may be empty: its papers all left); areas are unchanged.

    Args:
        x: the topic embedding of the current papers, ``(n_papers, dim)`` float32, L2-normalised, in the same
            space and dimension as ``previous``.
        previous: the stored hierarchy.
        fixed: ``(n_papers,)`` int, the sub-topic index each paper keeps, ``-1`` for a paper to place; None to
            place every paper.

    Returns:
        A :class:`Hierarchy` that is *not* renumbered.
    """
    k = len(previous.centroids)
    n = len(x)
    leaf = np.asarray(fixed, dtype=int).copy() if fixed is not None else np.full(n, -1, dtype=int)
    leaf[(leaf < 0) | (leaf >= k)] = -1
    free = np.flatnonzero(leaf < 0)
    if len(free):
        if k <= 1:
            leaf[free] = 0
        else:
            cent = previous.centroids.astype(np.float32)
            for s in range(0, len(free), 4096):  # blocks: (4096, k) similarities at a time
                rows = free[s:s + 4096]
                leaf[rows] = np.argmax(x[rows] @ cent.T, axis=1)
    return Hierarchy(leaf, previous.parent.copy(), _centroids(x, leaf, k))


def confidence(x: np.ndarray, h: Hierarchy) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """How well each paper fits its sub-topic, and which other sub-topics it also fits.

    Low confidence: cosine below the topic's mean minus :data:`LOW_CONFIDENCE_Z` standard deviations (topics of
    at least 5 papers). Secondary: up to two other sub-topics whose centroid cosine is at least
    :data:`SECONDARY_RATIO` × the paper's own.

    Args:
        x: the topic embedding, ``(n, dim)`` float32, L2-normalised.
        h: the hierarchy fitted on ``x``.

    Returns:
        ``(cosine to own centroid (n,) float32, low_confidence (n,) bool, secondary sub-topic indices per paper)``.
    """
    if len(x) == 0:
        return np.zeros(0, np.float32), np.zeros(0, bool), []
    sims = x @ h.centroids.T
    own = sims[np.arange(len(x)), h.leaf].astype(np.float32)
    low = np.zeros(len(x), dtype=bool)
    for t in range(len(h.centroids)):
        m = h.leaf == t
        if m.sum() >= 5:
            mu, sd = own[m].mean(), own[m].std()
            low[m] = own[m] < mu - LOW_CONFIDENCE_Z * sd
    secondary: list[list[int]] = []
    for i in range(len(x)):
        order = np.argsort(-sims[i])
        picks = [int(t) for t in order[:4] if t != h.leaf[i] and sims[i, t] >= SECONDARY_RATIO * own[i] > 0]
        secondary.append(picks[:2])
    return own, low, secondary
