"""The topic embedding and the two-level hierarchy (areas → sub-topics) of :mod:`paperatlas.enrich.topics`.

* **Paper embedding for topics** (:func:`topic_embedding`): the dense sentence embedding (all-MiniLM-L6-v2,
  384-d) concatenated to a lexical one, LSA of the corpus's TF-IDF, weighted by :data:`DENSE_WEIGHT`.
* **Hierarchy** (:func:`fit_hierarchy`, :func:`refine_hierarchy`): k-means (scikit-learn, k-means++ init, 10
  restarts, seeded) into areas, each split again into sub-topics, then one Lloyd refinement over all sub-topic
  centroids; :func:`confidence` marks low-confidence placements and secondary topics.

See :mod:`paperatlas.enrich.topics` for the method as a whole and its sources.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..memory import trim_heap

#: a paper whose cosine to another sub-topic's centroid is at least this share of its own topic's is also filed
#: under that sub-topic (secondary topic)
SECONDARY_RATIO = 0.97
#: a paper whose cosine to its centroid is below its topic's mean minus this many standard deviations is marked
#: low-confidence (it fits no topic well and was placed in the nearest)
LOW_CONFIDENCE_Z = 2.0
#: weight of the dense (MiniLM) cosine in the topic embedding's cosine; the lexical (LSA) one gets the rest. Chosen
#: by a sweep (0.3, 0.4, 0.5, 0.6; three seeds each) on seed 004's sections and AAAI 2022's tracks: 0.3 gave the
#: best clustering NMI on both while keeping 10-NN accuracy above TF-IDF and MiniLM alone.
DENSE_WEIGHT = 0.3


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


# --------------------------------------------------------------------------------------------------- embedding
@dataclass
class TextSpace:
    """The fitted lexical half of the topic embedding.

    Attributes:
        vectorizer: a fitted scikit-learn ``TfidfVectorizer`` (``None`` when the corpus is too small for LSA).
        svd: a fitted scikit-learn ``TruncatedSVD`` (``None`` when the corpus is too small for LSA).
    """

    vectorizer: object = None
    svd: object = None

    @property
    def dim(self) -> int:
        """Number of LSA dimensions (0 without LSA)."""
        return int(self.svd.n_components) if self.svd is not None else 0


#: vocabulary cap of the TF-IDF (most frequent terms); keeps the stored LSA model small (256 × 20,000 float32)
MAX_TFIDF_FEATURES = 20_000


def tfidf_vectorizer():
    """The TF-IDF settings shared by the topic embedding and the TF-IDF baseline of ``eval topics``.

    Sublinear tf, English stop words, unigrams + bigrams, ``min_df=2``, ``max_df=0.5``, at most
    :data:`MAX_TFIDF_FEATURES` terms, L2-normalised float32 rows (scikit-learn).

    Returns:
        An unfitted ``sklearn.feature_extraction.text.TfidfVectorizer``.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(sublinear_tf=True, stop_words="english", min_df=2, max_df=0.5, ngram_range=(1, 2),
                           max_features=MAX_TFIDF_FEATURES, dtype=np.float32)


def fit_text_space(texts: Sequence[str], seed: int = 42) -> TextSpace:
    """Fit TF-IDF + LSA on ``texts``.

    LSA has ``clip(n/5, 64, 256)`` dimensions (fewer when the vocabulary is smaller). Corpora under 10 papers
    (or with an empty vocabulary, or fewer than 2 possible dimensions) get no lexical half.

    Args:
        texts: one text (title + abstract) per paper.
        seed: ``random_state`` of the truncated SVD.

    Returns:
        The fitted space; an empty :class:`TextSpace` when there is no lexical half.
    """
    from sklearn.decomposition import TruncatedSVD

    if len(texts) < 10:
        return TextSpace()
    vec = tfidf_vectorizer()
    try:
        tf = vec.fit_transform(texts)
    except ValueError:  # empty vocabulary (e.g. every term in fewer than 2 papers)
        return TextSpace()
    # the terms cut by min_df/max_df/max_features: millions of strings at 42k papers (~450 MB), never used again
    # (scikit-learn: "can be safely removed using delattr or set to None")
    vec.stop_words_ = None
    # the kept terms' strings lie scattered among the millions of n-grams the fit made and freed, and keep their
    # allocator arenas from going back to the OS: fresh copies (same terms, same columns) let them go (~165 MB)
    vec.vocabulary_ = {term.encode().decode(): int(j) for term, j in vec.vocabulary_.items()}
    k = int(min(np.clip(len(texts) / 5, 64, 256), tf.shape[1] - 1, len(texts) - 1))
    if k < 2:
        return TextSpace()
    svd = TruncatedSVD(n_components=k, random_state=seed).fit(tf)
    svd.components_ = svd.components_.astype(np.float32)  # half the stored size; transform is unchanged
    del tf
    trim_heap()
    return TextSpace(vec, svd)


def topic_embedding(dense: np.ndarray, texts: Sequence[str], space: TextSpace | None = None,
                    seed: int = 42) -> tuple[np.ndarray, TextSpace]:
    """The paper embedding topics and the map are made from (see the module docstring).

    Args:
        dense: ``(n_papers, 384)`` float32, L2-normalised (MiniLM).
        texts: the papers' title + abstract.
        space: the lexical space to use, e.g. the stored space of an earlier build; None to fit one on ``texts``.
        seed: ``random_state`` of the LSA when it is fitted here.

    Returns:
        ``(embedding, space)``: the embedding is ``(n_papers, 384 + k)`` float32, L2-normalised, where ``k`` is the
        LSA dimension of ``space`` (0 without a lexical half).
    """
    space = space if space is not None else fit_text_space(texts, seed=seed)
    dense = np.asarray(dense, dtype=np.float32)
    if space.svd is None or len(texts) == 0:
        return _l2(dense), space
    lsa = _l2(space.svd.transform(space.vectorizer.transform(texts)).astype(np.float32))
    out = np.hstack([math.sqrt(DENSE_WEIGHT) * _l2(dense), math.sqrt(1 - DENSE_WEIGHT) * lsa])
    return _l2(out).astype(np.float32), space


#: the TF-IDF settings recorded with a stored space (JSON-encoded ``get_params()`` of :func:`tfidf_vectorizer`); a
#: stored space whose settings differ from today's is not used
_TFIDF_PARAMS = ("analyzer", "binary", "lowercase", "max_df", "max_features", "min_df", "ngram_range", "norm",
                 "smooth_idf", "stop_words", "strip_accents", "sublinear_tf", "token_pattern", "use_idf")


def _tfidf_params(vec) -> dict:
    params = vec.get_params()
    out = {k: params[k] for k in _TFIDF_PARAMS}
    out["dtype"] = np.dtype(params["dtype"]).name
    return json.loads(json.dumps(out))  # tuples as lists, as they come back from storage


def text_arrays(space: TextSpace) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The fitted state of a :class:`TextSpace` as plain arrays and JSON parameters (no code objects).

    Args:
        space: the fitted space (may be empty).

    Returns:
        ``(arrays, params)``: ``tfidf.terms`` (uint8, the UTF-8 JSON list of the vocabulary in column order),
        ``tfidf.idf`` ``(n_terms,)`` and ``lsa.components`` ``(k, n_terms)`` float32; ``params["tfidf"]`` is the
        JSON of the TF-IDF settings. Both empty for an empty space.
    """
    if space.svd is None or space.vectorizer is None:
        return {}, {}
    vec, svd = space.vectorizer, space.svd
    terms = [""] * len(vec.vocabulary_)
    for term, j in vec.vocabulary_.items():
        terms[j] = term
    arrays = {"tfidf.terms": json_array(terms), "tfidf.idf": np.asarray(vec.idf_),
              "lsa.components": np.ascontiguousarray(svd.components_)}
    return arrays, {"tfidf": json.dumps(_tfidf_params(vec))}


def text_space_from_arrays(arrays: dict[str, np.ndarray], params: dict[str, str]) -> TextSpace:
    """Rebuild a :class:`TextSpace` from :func:`text_arrays` output (fitted attributes set, nothing refitted).

    Args:
        arrays: the stored arrays (none: an empty space).
        params: the stored parameters.

    Returns:
        The space; its ``transform`` gives what the original's did.

    Raises:
        ValueError: the arrays or settings are inconsistent, or the settings are not today's.
    """
    from sklearn.decomposition import TruncatedSVD

    if "lsa.components" not in arrays:
        return TextSpace()
    vec = tfidf_vectorizer()
    if json.loads(params.get("tfidf", "null")) != _tfidf_params(vec):
        raise ValueError("stored TF-IDF settings differ from this version's")
    terms = array_json(arrays["tfidf.terms"])
    idf, comps = arrays["tfidf.idf"], arrays["lsa.components"]
    if (not isinstance(terms, list) or not all(isinstance(t, str) for t in terms) or len(set(terms)) != len(terms)
            or idf.shape != (len(terms),) or comps.ndim != 2 or comps.shape[1] != len(terms)
            or not 2 <= comps.shape[0] < len(terms)):
        raise ValueError("inconsistent TF-IDF/LSA arrays")
    vec.vocabulary_ = {t: j for j, t in enumerate(terms)}
    vec.idf_ = idf.astype(vec.dtype)
    svd = TruncatedSVD(n_components=int(comps.shape[0]))
    svd.components_ = comps
    svd.n_features_in_ = len(terms)
    return TextSpace(vec, svd)


def json_array(value) -> np.ndarray:
    """Encode a JSON value as a uint8 array (to store strings next to numeric arrays).

    Args:
        value: a JSON-serialisable value.

    Returns:
        ``(n_bytes,)`` uint8: its UTF-8 JSON.
    """
    return np.frombuffer(json.dumps(value, ensure_ascii=False).encode(), dtype=np.uint8).copy()


def array_json(arr: np.ndarray):
    """Decode :func:`json_array` output.

    Args:
        arr: ``(n_bytes,)`` uint8.

    Returns:
        The JSON value.

    Raises:
        ValueError: ``arr`` is not 1-D uint8 UTF-8 JSON.
    """
    if arr.dtype != np.uint8 or arr.ndim != 1:
        raise ValueError("not a JSON byte array")
    return json.loads(arr.tobytes().decode())


def _l2(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1, norms)


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


def fit_hierarchy(x: np.ndarray, n_areas: int | None = None, n_topics: int | None = None,
                  seed: int = 42) -> Hierarchy:
    """Cluster ``x`` into areas and sub-topics (see the module docstring).

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
    n_topics = min(n, n_topics or default_n_topics(n))
    n_areas = max(1, min(n_areas or default_n_areas(n), n_topics))
    area = _kmeans(x, n_areas, seed)
    sizes = np.bincount(area, minlength=n_areas)
    # sub-topics per area in proportion to its size (largest remainder), at least one, never more than papers/2
    quota = sizes / n * n_topics
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
    return _canonical(x, leaf, parent_arr)


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
