"""Topics: a two-level hierarchy (areas → sub-topics) with labels and map positions, kept stable across rebuilds.

Method ``"kmeans-hier(minilm+lsa)+ctfidf v2"``:

* **Paper embedding for topics** (:func:`topic_embedding`): the dense sentence embedding (all-MiniLM-L6-v2,
  384-d) concatenated to a lexical one, LSA of the corpus's TF-IDF (sublinear tf, English stop words, unigrams +
  bigrams, ``min_df=2``, ``max_df=0.5``; truncated SVD to ``clip(n/5, 64, 256)`` dimensions), each L2-normalised
  and weighted so that the cosine of two papers is ``0.3 × dense cosine + 0.7 × lexical cosine``
  (:data:`DENSE_WEIGHT`; swept over 0.3-0.6 on the two ``eval topics`` gold sets, so those figures are not
  held out). Combining lexical and dense signals is the route suggested by González-Márquez, Schmidt, Schmidt,
  Berens & Kobak (2024), *The landscape of biomedical research* / the berenslab ICLR benchmark, where TF-IDF is
  competitive with sentence transformers; ``paperatlas eval topics`` measures it (10-NN accuracy).
* **Hierarchy** (:func:`fit_hierarchy`): k-means (scikit-learn, k-means++ init, 10 restarts, seeded) splits the
  papers into ``n_areas`` areas; each area is split again by k-means into sub-topics (about one per
  ``n_papers / n_topics`` papers); a final Lloyd refinement over all sub-topic centroids lets a paper move to the
  sub-topic it is closest to. Every paper gets a sub-topic (no outlier bucket); a paper much further from its
  centroid than its topic's other papers (cosine below the topic's mean − 2 std) is marked ``low_confidence``;
  papers about as close (≥ 0.97 ×) to another sub-topic's centroid carry it as a secondary topic.
* **Labels** (:func:`paperatlas.enrich.labels.label_topics`): c-TF-IDF over the papers' keyphrases, see
  :mod:`paperatlas.enrich.labels`.
* **Map** (:func:`paperatlas.enrich.layout.fit_layout`): UMAP of the topic embedding to 2-D, see
  :mod:`paperatlas.enrich.layout`.
* **Stability** (:func:`update_topics`): the fitted :class:`TopicModel` (TF-IDF/LSA space, centroids, UMAP
  reducer) is pickled into the atlas. A rebuild that adds at most :data:`MAX_NEW_SHARE` new papers keeps the
  space, warm-starts k-means from the stored centroids (so topic ids are kept by construction and only papers
  whose nearest centroid changed move), keeps every existing point's map position and places new papers with
  ``UMAP.transform``; a topic keeps its label unless its membership changed (Jaccard < :data:`KEEP_LABEL_JACCARD`).
  A full refit matches new topics to the old ones (Hungarian assignment on shared papers) and keeps the id and
  label of each topic that keeps most of its papers (Jaccard ≥ 0.5).
"""

from __future__ import annotations

import io
import math
import pickle
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..model import Topic
from ..vocab import phrase_key
from .labels import label_topics
from .layout import fit_layout, place_new

METHOD = "kmeans-hier(minilm+lsa)+ctfidf v2"
#: version of the pickled :class:`TopicModel`; a stored model of another version is ignored (full refit)
MODEL_VERSION = 2
#: a rebuild with more new papers than this share of the kept ones refits the topics instead of updating them
MAX_NEW_SHARE = 0.25
#: a topic keeps its label across an update when the Jaccard overlap of its old and new papers is at least this
KEEP_LABEL_JACCARD = 0.75
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
    k = int(min(np.clip(len(texts) / 5, 64, 256), tf.shape[1] - 1, len(texts) - 1))
    if k < 2:
        return TextSpace()
    svd = TruncatedSVD(n_components=k, random_state=seed).fit(tf)
    svd.components_ = svd.components_.astype(np.float32)  # half the stored size; transform is unchanged
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


def refine_hierarchy(x: np.ndarray, previous: Hierarchy, seed: int = 42) -> Hierarchy:
    """Update a hierarchy for a changed set of papers by k-means warm-started from ``previous.centroids``.

    Sub-topic ``j`` of the result is sub-topic ``j`` of ``previous`` (it may be empty: its papers all moved);
    areas are unchanged.

    Args:
        x: the topic embedding of the current papers, ``(n_papers, dim)``, in the same space and dimension as
            ``previous``.
        previous: the stored hierarchy.
        seed: ``random_state`` of k-means.

    Returns:
        A :class:`Hierarchy` that is *not* renumbered.
    """
    k = len(previous.centroids)
    if k <= 1:
        leaf = np.zeros(len(x), dtype=int)
    else:
        leaf = _kmeans(x, k, seed, init=previous.centroids.astype(x.dtype))
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


# --------------------------------------------------------------------------------------------------- model
class _Unpickler(pickle.Unpickler):
    """Reads models pickled before the topic code moved from ``paperatlas.topics`` to ``paperatlas.enrich.topics``.

    Those are release 0.1.0's, so a rebuild of an older atlas still updates its topics instead of refitting them.
    """

    def find_class(self, module: str, name: str):
        if module == "paperatlas.topics":
            module = __name__
        return super().find_class(module, name)


@dataclass
class TopicModel:
    """Everything a later build needs to update the topics and the map instead of refitting them.

    Pickled into the atlas (``models`` table, name ``"topics"``). Only ever unpickled from the user's own atlas
    file.

    Attributes:
        space: the TF-IDF/LSA space.
        hierarchy: the fitted :class:`Hierarchy` (indices, not ids).
        leaf_ids: topic id of each sub-topic index.
        area_ids: topic id of each area index.
        reducer: the fitted UMAP (or None).
        embed_model: name of the dense model the embedding was made with.
        version: :data:`MODEL_VERSION` when pickled.
    """

    space: TextSpace
    hierarchy: Hierarchy
    leaf_ids: list[int]
    area_ids: list[int]
    reducer: object = None
    embed_model: str = ""
    version: int = MODEL_VERSION

    def dumps(self) -> bytes:
        """Pickle the model.

        Returns:
            The pickled bytes (highest pickle protocol).
        """
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def loads(blob: bytes | None, embed_model: str) -> TopicModel | None:
        """Unpickle a stored model.

        Args:
            blob: the stored bytes, or None.
            embed_model: name of the dense model the current embedding is made with.

        Returns:
            The model in ``blob``, or None when there is none, it cannot be read (another version) or it was made
            with another embedding model.
        """
        if not blob:
            return None
        try:
            model = _Unpickler(io.BytesIO(blob)).load()  # noqa: S301 - the atlas file is the user's own
        except Exception:  # noqa: BLE001 - an unreadable old model just means a full refit
            return None
        if not isinstance(model, TopicModel) or model.version != MODEL_VERSION or model.embed_model != embed_model:
            return None
        return model


@dataclass
class TopicResult:
    """The outcome of :func:`update_topics` for ``n`` papers.

    Attributes:
        topic_id: ``(n,)`` int, sub-topic id per paper.
        xy: ``(n, 2)`` float32 map coordinates.
        confidence: ``(n,)`` float32 cosine to the topic centroid.
        low_confidence: ``(n,)`` bool.
        secondary: secondary sub-topic ids per paper.
        topics: the areas and sub-topics.
        model: the :class:`TopicModel` to store.
        mode: ``"fit"`` (fresh), ``"refit"`` (fresh, matched to the old topics) or ``"update"`` (warm-started, old
            points kept).
        kept_share: share of the papers that were in the previous atlas and keep their topic id (None on a first
            build).
        relabelled: ids of kept topics whose label was recomputed because their membership changed.
    """

    topic_id: np.ndarray
    xy: np.ndarray
    confidence: np.ndarray
    low_confidence: np.ndarray
    secondary: list[list[int]]
    topics: list[Topic]
    model: TopicModel
    mode: str
    kept_share: float | None = None
    relabelled: list[int] = field(default_factory=list)


def update_topics(ids: Sequence[str], dense: np.ndarray, texts: Sequence[str], keyphrases: list[list[str]],
                  previous: TopicModel | None = None,
                  previous_papers: dict[str, tuple[int | None, float | None, float | None, bool]] | None = None,
                  previous_topics: dict[int, Topic] | None = None, n_areas: int | None = None,
                  n_topics: int | None = None, refit: bool = False, seed: int = 42,
                  embed_model: str = "") -> TopicResult:
    """Topics, map and model for the papers ``ids`` (see the module docstring for update vs refit).

    The ``previous*`` arguments describe the atlas being rebuilt. The update path is taken when all of these are
    present, ``refit`` is false, the requested sizes are unchanged, and the new or changed papers are at most
    :data:`MAX_NEW_SHARE` of the kept ones.

    Args:
        ids: paper ids, one per row of ``dense``.
        dense: ``(n, 384)`` float32, L2-normalised.
        texts: title + abstract per paper.
        keyphrases: label evidence per paper.
        previous: the stored :class:`TopicModel`, or None.
        previous_papers: ``paper id -> (topic id, x, y, unchanged)`` (``unchanged``: same title + abstract as
            now), or None.
        previous_topics: the previous atlas's topics by id, or None.
        n_areas: requested number of areas; None for the default (a requested size forces a fresh fit).
        n_topics: requested number of sub-topics; None for the default (a requested size forces a fresh fit).
        refit: refit even when an update is possible.
        seed: random seed of LSA, k-means and UMAP.
        embed_model: name of the dense model, recorded in the returned model.

    Returns:
        The :class:`TopicResult`.
    """
    n = len(ids)
    previous_papers = previous_papers or {}
    previous_topics = previous_topics or {}
    kept = [i for i, pid in enumerate(ids) if pid in previous_papers and previous_papers[pid][3]
            and previous_papers[pid][1] is not None]
    can_update = (previous is not None and not refit and n_areas is None and n_topics is None and kept
                  and (n - len(kept)) <= MAX_NEW_SHARE * len(kept)
                  and previous.hierarchy.centroids.shape[1] == dense.shape[1] + previous.space.dim)
    if can_update:
        return _update(ids, dense, texts, keyphrases, previous, previous_papers, previous_topics, kept, seed)
    x, space = topic_embedding(dense, texts, seed=seed)
    h = fit_hierarchy(x, n_areas=n_areas, n_topics=n_topics, seed=seed)
    xy, reducer = fit_layout(x, seed=seed)
    leaf_ids, area_ids, keep_labels = _match_ids(ids, h, previous_papers, previous_topics)
    mode = "refit" if previous_topics else "fit"
    model = TopicModel(space, h, leaf_ids, area_ids, reducer, embed_model)
    result = _finish(ids, x, xy, h, keyphrases, model, keep_labels, previous_topics, mode)
    return result


def _match_ids(ids: Sequence[str], h: Hierarchy, previous_papers, previous_topics: dict[int, Topic]):
    """Ids for a fresh hierarchy.

    Fresh ``0..`` ids on a first build; on a refit, each new sub-topic (area) that shares most papers with an old
    one (Hungarian assignment, Jaccard ≥ 0.5) inherits its id and label.
    """
    n_leaves, n_areas = len(h.parent), (int(h.parent.max()) + 1 if len(h.parent) else 0)
    if not previous_topics:
        return list(range(n_areas, n_areas + n_leaves)), list(range(n_areas)), {}
    from scipy.optimize import linear_sum_assignment

    old_leaf = np.array([previous_papers.get(pid, (None,))[0] if pid in previous_papers else -1 for pid in ids],
                        dtype=object)
    old_area_of = {t.id: (t.parent_id if t.parent_id is not None else t.id) for t in previous_topics.values()}
    next_id = max(previous_topics) + 1
    keep_labels: dict[int, str] = {}

    def match(new_assign: np.ndarray, k: int, old_assign: list) -> list[int]:
        nonlocal next_id
        old_ids = sorted({o for o in old_assign if o is not None and o != -1})
        out: list[int | None] = [None] * k
        if old_ids:
            inter = np.zeros((k, len(old_ids)))
            col = {o: j for j, o in enumerate(old_ids)}
            for a, o in zip(new_assign.tolist(), old_assign, strict=True):
                if o in col:
                    inter[a, col[o]] += 1
            new_sizes = np.bincount(new_assign, minlength=k)
            old_sizes = inter.sum(axis=0)
            jac = inter / np.maximum(new_sizes[:, None] + old_sizes[None, :] - inter, 1)
            rows, cols = linear_sum_assignment(-jac)
            for r, c in zip(rows, cols, strict=True):
                if jac[r, c] >= 0.5:
                    out[r] = old_ids[c]
                    if old_ids[c] in previous_topics:
                        keep_labels[old_ids[c]] = previous_topics[old_ids[c]].label
        for i in range(k):
            if out[i] is None:
                out[i] = next_id
                next_id += 1
        return [int(v) for v in out]

    area_ids = match(h.area, n_areas, [old_area_of.get(o, -1) if o not in (None, -1) else -1 for o in old_leaf])
    leaf_ids = match(h.leaf, n_leaves, list(old_leaf))
    return leaf_ids, area_ids, keep_labels


def _update(ids, dense, texts, keyphrases, previous: TopicModel, previous_papers, previous_topics, kept, seed):
    x, space = topic_embedding(dense, texts, space=previous.space)
    h = refine_hierarchy(x, previous.hierarchy, seed=seed)
    n = len(ids)
    kept_set = set(kept)
    new = [i for i in range(n) if i not in kept_set]
    xy = np.zeros((n, 2), dtype=np.float32)
    for i in kept:
        _, px, py, _ = previous_papers[ids[i]]
        xy[i] = (px, py)
    if new:
        xy[new] = place_new(previous.reducer, x[new], x[kept], xy[kept])
    # a sub-topic/area that loses every paper disappears; ids of the others are kept by construction
    leaf_ids = list(previous.leaf_ids)
    area_ids = list(previous.area_ids)
    old_leaf_of = {ids[i]: previous_papers[ids[i]][0] for i in kept}
    kept_same = sum(1 for i in kept if leaf_ids[h.leaf[i]] == old_leaf_of[ids[i]])
    keep_labels: dict[int, str] = {}
    relabelled: list[int] = []
    # label kept when the topic's membership barely changed (Jaccard of old and new member sets)
    old_members: dict[int, set[str]] = {}
    for pid, (tid, *_rest) in previous_papers.items():
        if tid is not None:
            old_members.setdefault(tid, set()).add(pid)
            t = previous_topics.get(tid)
            if t is not None and t.parent_id is not None:
                old_members.setdefault(t.parent_id, set()).add(pid)
    new_members: dict[int, set[str]] = {}
    for i, pid in enumerate(ids):
        new_members.setdefault(leaf_ids[h.leaf[i]], set()).add(pid)
        new_members.setdefault(area_ids[h.parent[h.leaf[i]]], set()).add(pid)
    for tid, members in new_members.items():
        old = old_members.get(tid, set())
        jac = len(old & members) / max(len(old | members), 1)
        if tid in previous_topics and jac >= KEEP_LABEL_JACCARD:
            keep_labels[tid] = previous_topics[tid].label
        elif tid in previous_topics:
            relabelled.append(tid)
    model = TopicModel(previous.space, h, leaf_ids, area_ids, previous.reducer, previous.embed_model)
    result = _finish(ids, x, xy, h, keyphrases, model, keep_labels, previous_topics, "update")
    result.kept_share = kept_same / len(kept) if kept else None
    result.relabelled = sorted(relabelled)
    return result


def _finish(ids, x, xy, h: Hierarchy, keyphrases, model: TopicModel, keep_labels: dict[int, str],
            previous_topics: dict[int, Topic], mode: str) -> TopicResult:
    n_leaves = len(h.parent)
    n_areas = len(model.area_ids)
    own, low, secondary = confidence(x, h)
    # labels: areas first, then sub-topics avoiding every area's label phrase
    taken: set[str] = set()
    for label in keep_labels.values():
        taken.add(phrase_key(label))
    area_labels = label_topics(h.area, keyphrases, taken=taken, n_topics=n_areas, children=h.leaf)
    leaf_labels = label_topics(h.leaf, keyphrases, taken=taken, n_topics=n_leaves)
    topics: list[Topic] = []
    for level, assign, labels, ids in ((0, h.area, area_labels, model.area_ids),
                                       (1, h.leaf, leaf_labels, model.leaf_ids)):
        for j, tid in enumerate(ids):
            members = assign == j
            if not members.any():
                continue
            label, terms = labels[j]
            cx, cy = np.median(xy[members], axis=0).tolist()
            topics.append(Topic(id=tid, label=keep_labels.get(tid, label), size=int(members.sum()),
                                keyphrases=terms, parent_id=model.area_ids[int(h.parent[j])] if level else None,
                                x=float(cx), y=float(cy), method=METHOD, level=level))
    _dedupe_labels(topics)
    topic_id = np.array([model.leaf_ids[j] for j in h.leaf.tolist()], dtype=int)
    secondary_ids = [[model.leaf_ids[j] for j in s] for s in secondary]
    return TopicResult(topic_id, xy, own, low, secondary_ids, topics, model, mode)


def _dedupe_labels(topics: list[Topic]) -> None:
    """Kept labels and fresh ones can collide: number the later duplicates."""
    seen: set[str] = set()
    for t in topics:
        key = t.label.casefold()
        if key in seen:
            t.label = f"{t.label} ({t.id})"
        seen.add(t.label.casefold())
