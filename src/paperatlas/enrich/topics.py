"""Topics: a two-level hierarchy (areas → sub-topics), curator-style labels, and the 2-D map.

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
* **Labels** (:func:`label_topics`): class-based TF-IDF (c-TF-IDF, Grootendorst 2022, BERTopic:
  ``W(t,c) = tf(t,c) · log(1 + A / f(t))``, ``A`` the average number of terms per class, ``f(t)`` the term's
  frequency over all classes) over the papers' keyphrases. The label is the best-scoring keyphrase found in
  several of the topic's papers, in sentence case, distinct from every label already taken (areas first, so a
  sub-topic is never named like its area), joined with a second strong, unrelated keyphrase when the two fit in
  five words (``"Lottery tickets and pruning"``).
* **Map** (:func:`layout_2d`): UMAP (McInnes et al. 2018, ``umap-learn``) of the topic embedding to 2-D, cosine
  metric, ``n_neighbors=15``, ``min_dist=0.1``, fixed ``random_state``.
* **Stability** (:func:`update_topics`): the fitted :class:`TopicModel` (TF-IDF/LSA space, centroids, UMAP
  reducer) is pickled into the atlas. A rebuild that adds at most :data:`MAX_NEW_SHARE` new papers keeps the
  space, warm-starts k-means from the stored centroids (so topic ids are kept by construction and only papers
  whose nearest centroid changed move), keeps every existing point's map position and places new papers with
  ``UMAP.transform``; a topic keeps its label unless its membership changed (Jaccard < :data:`KEEP_LABEL_JACCARD`).
  A full refit matches new topics to the old ones (Hungarian assignment on shared papers) and keeps the id and
  label of each topic that keeps most of its papers (Jaccard ≥ 0.5).
"""

from __future__ import annotations

import math
import pickle
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..model import Topic
from .keyphrases import phrase_key

METHOD = "kmeans-hier(minilm+lsa)+ctfidf v2"
LAYOUT_METHOD = "umap-cosine-2d(minilm+lsa) v2"
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
    """Number of top-level areas: the cube root of the corpus size, clipped to 8-20 (10 for ICLR 2021's 860
    papers, 20 from ~8,000 papers up); small corpora get at most one area per 15 papers (at least 1)."""
    return max(1, min(n_papers // 15, max(8, min(20, round(n_papers ** (1 / 3))))))


def default_n_topics(n_papers: int) -> int:
    """Number of sub-topics: about one per 25 papers, at least one per area (two when there are 20+ papers per
    area), at most 15 per area (34 for ICLR 2021, 300 for 40,000 papers)."""
    a = default_n_areas(n_papers)
    floor = 2 * a if n_papers >= 20 * a else a
    return min(n_papers, max(floor, min(15 * a, round(n_papers / 25))))


# --------------------------------------------------------------------------------------------------- embedding
@dataclass
class TextSpace:
    """The fitted lexical half of the topic embedding: a scikit-learn ``TfidfVectorizer`` and ``TruncatedSVD``
    (``None`` when the corpus is too small for LSA)."""

    vectorizer: object = None
    svd: object = None

    @property
    def dim(self) -> int:
        """Number of LSA dimensions (0 without LSA)."""
        return int(self.svd.n_components) if self.svd is not None else 0


#: vocabulary cap of the TF-IDF (most frequent terms); keeps the stored LSA model small (256 × 20,000 float32)
MAX_TFIDF_FEATURES = 20_000


def tfidf_vectorizer():
    """The TF-IDF settings shared by the topic embedding and the TF-IDF baseline of ``eval topics``: sublinear
    tf, English stop words, unigrams + bigrams, ``min_df=2``, ``max_df=0.5``, at most
    :data:`MAX_TFIDF_FEATURES` terms, L2-normalised rows (scikit-learn)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(sublinear_tf=True, stop_words="english", min_df=2, max_df=0.5, ngram_range=(1, 2),
                           max_features=MAX_TFIDF_FEATURES, dtype=np.float32)


def fit_text_space(texts: Sequence[str], seed: int = 42) -> TextSpace:
    """Fit TF-IDF + LSA on ``texts`` (one per paper); LSA has ``clip(n/5, 64, 256)`` dimensions (fewer when the
    vocabulary is smaller). Corpora under 10 papers get no lexical half."""
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
    """The paper embedding topics and the map are made from.

    ``dense`` is ``(n_papers, 384)`` float32, L2-normalised (MiniLM); ``texts`` the papers' title + abstract.
    Returns ``((n_papers, 384 + k) float32 L2-normalised, space)`` where ``k`` is the LSA dimension of ``space``
    (fitted on ``texts`` unless given, e.g. the stored space of an earlier build). See the module docstring.
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

    ``leaf`` ``(n,)`` int: sub-topic index per paper; ``parent`` ``(n_leaves,)`` int: area index per sub-topic;
    ``centroids`` ``(n_leaves, dim)`` float32, L2-normalised sub-topic centroids. Areas are numbered by decreasing
    size, sub-topics by area then decreasing size.
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
    """Cluster ``x`` (``(n_papers, dim)`` float32, L2-normalised) into areas and sub-topics (see module doc).

    ``n_areas`` defaults to :func:`default_n_areas`, ``n_topics`` (total sub-topics) to :func:`default_n_topics`;
    ``n_topics`` below ``n_areas`` lowers the number of areas to it.
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
    """Update a hierarchy for a changed set of papers ``x`` by k-means warm-started from ``previous.centroids``
    (same space, same dimension). Sub-topic ``j`` of the result is sub-topic ``j`` of ``previous`` (it may be
    empty: its papers all moved); areas are unchanged. Returns a :class:`Hierarchy` that is *not* renumbered."""
    k = len(previous.centroids)
    if k <= 1:
        leaf = np.zeros(len(x), dtype=int)
    else:
        leaf = _kmeans(x, k, seed, init=previous.centroids.astype(x.dtype))
    return Hierarchy(leaf, previous.parent.copy(), _centroids(x, leaf, k))


def confidence(x: np.ndarray, h: Hierarchy) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """``(cosine to own centroid (n,) float32, low_confidence (n,) bool, secondary sub-topic indices per paper)``.

    Low confidence: cosine below the topic's mean minus :data:`LOW_CONFIDENCE_Z` standard deviations (topics of
    at least 5 papers). Secondary: up to two other sub-topics whose centroid cosine is at least
    :data:`SECONDARY_RATIO` × the paper's own.
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


# --------------------------------------------------------------------------------------------------- map
def fit_layout(x: np.ndarray, seed: int = 42):
    """Fit the 2-D map on ``x`` ``(n_papers, dim)``: returns ``(coordinates (n_papers, 2) float32, reducer)``;
    the reducer is a fitted ``umap.UMAP`` (None for fewer than 5 papers, laid out by PCA instead) whose
    ``transform`` places later papers on the same map."""
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
    """Map coordinates ``(len(x_new), 2)`` float32 for papers added to an existing map: ``reducer.transform``
    (UMAP) when there is a reducer, else the mean position of the 3 most similar existing papers."""
    if len(x_new) == 0:
        return np.zeros((0, 2), dtype=np.float32)
    if reducer is not None:
        return reducer.transform(x_new).astype(np.float32)
    if len(x_old) == 0:
        return np.zeros((len(x_new), 2), dtype=np.float32)
    near = np.argsort(-(x_new @ x_old.T), axis=1)[:, :3]
    return xy_old[near].mean(axis=1).astype(np.float32)


# --------------------------------------------------------------------------------------------------- labels
def _sentence_case(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:] if phrase else phrase


#: the most words a label may have
MAX_LABEL_WORDS = 5


def label_topics(assign: np.ndarray, keyphrases: list[list[str]], max_terms: int = 10,
                 taken: set[str] | None = None, n_topics: int | None = None,
                 children: np.ndarray | None = None) -> list[tuple[str, list[str]]]:
    """``(label, top_terms)`` per topic index (see module doc for the c-TF-IDF weighting).

    ``assign`` is ``(n_papers,)`` topic indices, ``keyphrases`` one list per paper; ``taken`` holds phrase keys
    other labels already use (they are avoided, and the keys used here are added to it). Labels are unique and
    1-5 words; an empty topic gets ``"Topic N"``. ``children`` (``(n_papers,)`` sub-topic index, for labelling
    areas) halves the score of a phrase found in only one of the area's sub-topics, so an area is named by what
    its sub-topics share rather than by one of them.
    """
    n_topics = n_topics if n_topics is not None else (int(assign.max()) + 1 if len(assign) else 0)
    tf: list[Counter[str]] = [Counter() for _ in range(n_topics)]
    forms: dict[str, Counter[str]] = {}
    for t, kps in zip(assign.tolist(), keyphrases, strict=True):
        for kp in dict.fromkeys(kps):
            k = phrase_key(kp)
            if not k:
                continue
            tf[t][k] += 1
            forms.setdefault(k, Counter())[kp] += 1
    total: Counter[str] = Counter()
    for c in tf:
        total.update(c)
    spread: dict[tuple[int, str], set[int]] = {}
    if children is not None:
        for t, child, kps in zip(assign.tolist(), children.tolist(), keyphrases, strict=True):
            for kp in kps:
                spread.setdefault((t, phrase_key(kp)), set()).add(child)
    n_children = {t: len(set(children[assign == t].tolist())) for t in range(n_topics)} if children is not None \
        else {}
    avg = sum(total.values()) / max(n_topics, 1)
    n_papers = max(len(assign), 1)
    max_df = max(MAX_LABEL_DF, 1.5 / max(n_topics, 1))  # with few topics, a topic's own terms are in many papers
    taken = taken if taken is not None else set()
    used_labels: set[str] = set()
    out: list[tuple[str, list[str]]] = []
    for t in range(n_topics):
        size = int((assign == t).sum())
        # ties go to the longer, more specific phrase
        scored = [(sc, k) for sc, _, k in sorted(
            ((f * math.log(1 + avg / total[k]) * (1 + 0.3 * (len(k.split()) > 1))
              * (0.5 if n_children.get(t, 1) > 1 and len(spread.get((t, k), ())) < 2 else 1.0), len(k.split()), k)
             for k, f in tf[t].items()), reverse=True)]
        support = max(2, round(0.08 * size)) if size >= 6 else 1
        good = [k for s, k in scored if tf[t][k] >= support] or [k for _, k in scored]
        top_terms = _shown_terms(good, tf[t], forms, max_terms)
        weight = {k: sc for sc, k in scored}
        label = ""
        free = [k for k in dict.fromkeys(_clean_terms(
            good, tf[t], forms, keep=lambda k: k not in taken and _labelable(k, total[k] / n_papers, max_df)
            and not any(tk.startswith(k + " ") or tk.endswith(" " + k) for tk in taken))) if k not in taken]
        if free:
            # a specific multi-word phrase beats a slightly stronger single word ("backdoor attacks" > "attacks")
            multi = [k for k in free[:4] if len(k.split()) > 1 and weight.get(k, 0) >= 0.7 * weight[free[0]]]
            k = multi[0] if multi and len(free[0].split()) == 1 else free[0]
            label = _sentence_case(_display(forms, k))
            # add a second strong, distinct term to make labels specific: not a variant or acronym of the first,
            # present in a tenth of the topic's papers, and the whole label still at most five words
            second_support = max(3, round(0.1 * size))
            for k2 in free[:6]:
                if k2 == k or _related_terms(k, k2) or tf[t][k2] < second_support:
                    continue
                if weight.get(k2, 0) >= 0.5 * weight.get(k, 0) \
                        and len(label.split()) + 1 + len(k2.split()) <= MAX_LABEL_WORDS \
                        and (len(k2.split()) > 1 or len(k.split()) == 1):
                    label = f"{label} and {_display(forms, k2)}"
                    break
            taken.add(k)
        if not label or label.casefold() in used_labels:
            label = f"Topic {t + 1}" if not label else f"{label} ({t + 1})"
        used_labels.add(label.casefold())
        out.append((label, top_terms))
    return out


#: phrase keys too general to name a topic of an ML corpus (they describe every paper)
GENERIC_TERMS = frozenset({
    "neural network", "neural networks", "deep learning", "deep neural network", "deep neural networks",
    "machine learning", "deep network", "deep networks", "network", "networks", "learning", "model", "models",
    "training", "data", "method", "methods", "performance", "result", "results", "approach", "framework", "task",
    "tasks", "algorithm", "algorithms", "deep", "neural", "problem", "problems", "dataset", "datasets",
    "deep learning models", "deep models", "experiments", "state of the art", "state-of-the-art", "benchmark",
    "benchmarks", "paper", "work", "system", "systems", "architecture", "architectures", "end-to-end",
    "label", "labels", "object", "objects", "words", "feature", "features", "input", "inputs", "output",
    "outputs", "loss", "function", "functions", "parameters", "samples", "distribution", "distributions",
    "artificial neural network", "artificial neural networks", "neural net", "neural nets", "dnn", "dnns",
    "layer", "layers", "weight", "weights", "neurons", "units", "accuracy", "efficiency", "scale", "structure",
})
#: a phrase found in more than this share of all papers is not used as a label
MAX_LABEL_DF = 0.2


def _labelable(key: str, df: float, max_df: float = MAX_LABEL_DF) -> bool:
    """Whether a phrase key may name a topic: not generic, in at most ``max_df`` of all papers, 1-5 words."""
    return (key not in _GENERIC_KEYS and df <= max_df
            and 0 < len(key.split()) <= MAX_LABEL_WORDS)


_ADJECTIVE_ENDINGS = ("al", "ed", "ive", "ic", "ous", "ent", "ant", "ary", "ble", "ial", "ical", "less", "wise")
_ADJECTIVES = frozenset({"deep", "private", "efficient", "robust", "sparse", "fair", "large", "small",
                         "low", "high", "multi", "pre", "fast", "local", "global", "few", "self", "semi", "non",
                         "continuous-time", "fully-connected", "pre-trained", "self-supervised", "multi-agent"})


def _adjectival(phrase: str) -> bool:
    """Whether a phrase (as written) ends in an adjective-like word (``adversarial``, ``pre-trained``): a fragment
    of a noun phrase, not a name."""
    last = phrase.lower().split()[-1] if phrase.strip() else ""
    parts = last.split("-")
    return last in _ADJECTIVES or parts[-1] in _ADJECTIVES or (
        len(parts[-1]) > 4 and parts[-1].endswith(_ADJECTIVE_ENDINGS))


def _tail_fragment(key: str, tf: Counter[str]) -> bool:
    """``series modeling`` is the tail of ``time series modeling``: true when a longer phrase of this topic ends
    with ``key`` and is found in at least half as many of its papers."""
    return any(k2.endswith(" " + key) and f >= 0.5 * tf[key] for k2, f in tf.items())


def _extend(key: str, tf: Counter[str], forms: dict[str, Counter[str]]) -> str:
    """A fragment like ``graph neural`` or ``self-supervised`` becomes the phrase it is the start of in this
    topic (``graph neural networks``), when that phrase is found in at least half (a single word: 30%) as many
    of its papers; an adjective-like fragment takes its most frequent extension found in 2+ papers, and is
    returned as ``""`` (unusable) when it has none."""
    best, best_f = key, 0
    share = 0.5 if len(key.split()) > 1 else 0.3
    shown = _display(forms, key).lower()
    adjectival = _adjectival(shown)
    for k2, f in tf.items():
        if not k2.startswith(key + " ") or len(k2.split()) > MAX_LABEL_WORDS or f <= best_f:
            continue
        if not _display(forms, k2).lower().startswith(shown + " "):  # "gradient descent-ascent" extends nothing
            continue
        if f >= share * tf[key] or (adjectival and f >= 2):
            best, best_f = k2, f
    return "" if best == key and adjectival else best


def _clean_terms(keys: list[str], tf: Counter[str], forms: dict[str, Counter[str]],
                 keep: Callable[[str], bool] = lambda key: True) -> Iterator[str]:
    """A topic's ranked phrase keys as a reader may see them (labels and the terms on topic pages), in order,
    repeats possible: no generic terms (``neural networks``, also by an acronym's long form: ``dnn``), no tail
    fragments (``series modeling``), adjective fragments extended to their phrase (``self-supervised`` →
    ``self-supervised learning``) or dropped, no possessives (``single model's``); ``keep`` is checked on each key
    before its (costly) extension."""
    for key in keys:
        if key in _GENERIC_KEYS or _tail_fragment(key, tf) or not keep(key):
            continue
        full = _extend(key, tf, forms)
        if not full:
            continue
        shown = _display(forms, full)
        if phrase_key(shown) not in _GENERIC_KEYS and not shown.endswith(("'s", "’s", "'")):
            yield full


def _shown_terms(keys: list[str], tf: Counter[str], forms: dict[str, Counter[str]], k: int) -> list[str]:
    """The first ``k`` distinct :func:`_clean_terms` of a topic's ranked phrase keys, as shown on its page."""
    out: list[str] = []
    for full in _clean_terms(keys, tf, forms):
        if full not in out:
            out.append(full)
            if len(out) == k:
                break
    return [_display(forms, key) for key in out]


def _related_terms(a: str, b: str) -> bool:
    """True when two phrase keys name the same thing: shared word, shared word stem (first 5 letters:
    ``private``/``privacy``), or one the acronym of the other."""
    wa, wb = set(a.split()), set(b.split())
    if wa & wb or {w[:5] for w in wa if len(w) >= 5} & {w[:5] for w in wb if len(w) >= 5}:
        return True
    return any(_is_acronym_pair(a, w) for w in wb) or any(_is_acronym_pair(b, w) for w in wa)


def _is_acronym_pair(a: str, b: str) -> bool:
    """True when one phrase key is the acronym of the other (``gan`` / ``generative adversarial network``,
    ``ebm`` / ``energy based model``, ``nas`` / ``neural architecture search``)."""
    for short, long_ in ((a, b), (b, a)):
        words = long_.replace("-", " ").split()
        if len(short.split()) == 1 and len(words) > 1:
            initials = "".join(w[0] for w in words)
            if short.rstrip("s") in (initials, initials.rstrip("s")) or initials.startswith(short.rstrip("s")):
                return True
    return False


_GENERIC_KEYS = frozenset(phrase_key(t) for t in GENERIC_TERMS)


def _display(forms: dict[str, Counter[str]], key: str) -> str:
    """Most common spelling of a phrase key; plural forms preferred for multi-word noun phrases as people write
    topic names in the plural (``graph neural networks``)."""
    best = forms[key].most_common(1)[0][0]
    plural = [f for f in forms[key] if f.lower().endswith("s") and not best.lower().endswith("s")]
    return plural[0] if plural and len(best.split()) > 1 else best


# --------------------------------------------------------------------------------------------------- model
@dataclass
class TopicModel:
    """Everything a later build needs to update the topics and the map instead of refitting them; pickled into
    the atlas (``models`` table, name ``"topics"``). Only ever unpickled from the user's own atlas file.

    ``space``: the TF-IDF/LSA space; ``hierarchy``: the fitted :class:`Hierarchy` (indices, not ids);
    ``leaf_ids``/``area_ids``: topic id of each sub-topic/area index; ``reducer``: the fitted UMAP (or None);
    ``embed_model``: name of the dense model the embedding was made with.
    """

    space: TextSpace
    hierarchy: Hierarchy
    leaf_ids: list[int]
    area_ids: list[int]
    reducer: object = None
    embed_model: str = ""
    version: int = MODEL_VERSION

    def dumps(self) -> bytes:
        """Pickled bytes."""
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def loads(blob: bytes | None, embed_model: str) -> TopicModel | None:
        """The model in ``blob``, or None when there is none, it cannot be read (another version) or it was made
        with another embedding model."""
        if not blob:
            return None
        try:
            model = pickle.loads(blob)  # noqa: S301 - the atlas file is the user's own
        except Exception:  # noqa: BLE001 - an unreadable old model just means a full refit
            return None
        if not isinstance(model, TopicModel) or model.version != MODEL_VERSION or model.embed_model != embed_model:
            return None
        return model


@dataclass
class TopicResult:
    """The outcome of :func:`update_topics` for ``n`` papers.

    ``topic_id`` ``(n,)`` int (sub-topic id per paper), ``xy`` ``(n, 2)`` float32 map coordinates,
    ``confidence`` ``(n,)`` float32 cosine to the topic centroid, ``low_confidence`` ``(n,)`` bool,
    ``secondary`` secondary sub-topic ids per paper, ``topics`` the areas and sub-topics, ``model`` the
    :class:`TopicModel` to store, and ``mode``: ``"fit"`` (fresh), ``"refit"`` (fresh, matched to the old
    topics) or ``"update"`` (warm-started, old points kept). ``kept_share``: share of the papers that were in the
    previous atlas and keep their topic id (None on a first build); ``relabelled``: ids of kept topics whose
    label was recomputed because their membership changed.
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
    """Topics, map and model for the papers ``ids`` (see the module doc for update vs refit).

    ``dense`` ``(n, 384)`` float32 L2-normalised, ``texts`` title + abstract per paper, ``keyphrases`` label
    evidence per paper. ``previous*`` describe the atlas being rebuilt: its :class:`TopicModel`, ``paper id ->
    (topic id, x, y, unchanged)`` (``unchanged``: same title + abstract as now), and its topics. The update path is
    taken when all of these are present, ``refit`` is false, the requested sizes are unchanged, and the new or
    changed papers are at most :data:`MAX_NEW_SHARE` of the kept ones.
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
    """Ids for a fresh hierarchy: fresh ``0..`` ids on a first build; on a refit, each new sub-topic (area) that
    shares most papers with an old one (Hungarian assignment, Jaccard ≥ 0.5) inherits its id and label."""
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
