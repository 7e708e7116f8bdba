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
* **Stability** (:func:`update_topics`): the fitted :class:`TopicModel` (TF-IDF/LSA space, centroids, the papers'
  topic vectors and map positions) is stored in the atlas as named arrays (safetensors, no code: a crafted atlas
  cannot run anything). A rebuild that adds at most :data:`MAX_NEW_SHARE` new papers keeps the space and the
  sub-topics: every kept paper stays in its sub-topic and a new or changed paper joins the one whose stored
  centroid is nearest (so a no-op rebuild moves nothing and topic ids are kept by construction); it keeps every
  existing point's map position and places each new paper at the mean position of its 3 most similar earlier
  papers (:func:`~paperatlas.enrich.layout.place_new`); a topic keeps its label unless its membership changed
  (Jaccard < :data:`KEEP_LABEL_JACCARD`).
  A full refit matches new topics to the old ones (Hungarian assignment on shared papers) and keeps the id and
  label of each topic that keeps most of its papers (Jaccard ≥ 0.5).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..memory import trim_heap
from ..model import Topic
from ..vocab import phrase_key
from .hierarchy import (
    DENSE_WEIGHT,
    LOW_CONFIDENCE_Z,
    SECONDARY_RATIO,
    Hierarchy,
    TextSpace,
    array_json,
    confidence,
    default_n_areas,
    default_n_topics,
    fit_hierarchy,
    fit_text_space,
    json_array,
    refine_hierarchy,
    text_arrays,
    text_space_from_arrays,
    tfidf_vectorizer,
    topic_embedding,
)
from .labels import label_topics, phrase_pairs
from .layout import fit_layout, place_new

METHOD = "kmeans-hier(minilm+lsa)+ctfidf v2"
#: version of the stored :class:`TopicModel`; a stored model of another version (release 0.1.0's: 1 and 2)
#: is ignored (full refit, ids and labels matched to the old topics)
MODEL_VERSION = 3
#: ``format`` entry of a stored model's metadata
MODEL_FORMAT = "paperatlas-topic-model"
#: a rebuild with more new papers than this share of the kept ones refits the topics instead of updating them
MAX_NEW_SHARE = 0.25
#: a topic keeps its label across an update when the Jaccard overlap of its old and new papers is at least this
KEEP_LABEL_JACCARD = 0.75


# --------------------------------------------------------------------------------------------------- model
@dataclass
class TopicModel:
    """Everything a later build needs to update the topics and the map instead of refitting them.

    Stored in the atlas (``models`` table, name ``"topics"``) by :meth:`dumps` as safetensors arrays with JSON
    parameters in the header's metadata; nothing in it is code, so reading a crafted atlas runs nothing.

    Attributes:
        space: the TF-IDF/LSA space.
        hierarchy: the fitted :class:`Hierarchy` (indices, not ids).
        leaf_ids: topic id of each sub-topic index.
        area_ids: topic id of each area index.
        paper_ids: the papers the hierarchy was fitted on, one per row of ``x`` and ``xy``.
        x: ``(n_papers, dim)`` float32 topic embedding of those papers.
        xy: ``(n_papers, 2)`` float32 map coordinates of those papers.
        embed_model: name of the dense model the embedding was made with.
        version: :data:`MODEL_VERSION` when stored.
    """

    space: TextSpace
    hierarchy: Hierarchy
    leaf_ids: list[int]
    area_ids: list[int]
    paper_ids: list[str] = field(default_factory=list)
    x: np.ndarray | None = None
    xy: np.ndarray | None = None
    embed_model: str = ""
    version: int = MODEL_VERSION

    def dumps(self) -> bytes:
        """Serialise the model as safetensors (arrays only; parameters as JSON strings in the metadata).

        Arrays: ``tfidf.terms`` (uint8 JSON), ``tfidf.idf``, ``lsa.components`` (absent without LSA),
        ``hierarchy.leaf``, ``hierarchy.parent``, ``hierarchy.centroids``, ``leaf_ids``, ``area_ids``,
        ``paper_ids`` (uint8 JSON), ``x``, ``xy``. Metadata: ``format`` (:data:`MODEL_FORMAT`), ``version``,
        ``embed_model``, ``tfidf`` (the TF-IDF settings).

        Returns:
            The safetensors bytes (132 MB for 42k papers, mostly ``x``; :meth:`dump_file` writes them to a file
            without holding them in memory).
        """
        from safetensors.numpy import save

        arrays, params = self._arrays()
        return save(arrays, metadata=params)

    def dump_file(self, path: str | Path) -> None:
        """Write :meth:`dumps`'s bytes to ``path`` (safetensors streams the arrays to the file; no copy in memory).

        Args:
            path: the file to write (replaced).

        Raises:
            OSError: the file cannot be written.
        """
        from safetensors.numpy import save_file

        arrays, params = self._arrays()
        save_file(arrays, path, metadata=params)

    def _arrays(self) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """The named arrays and metadata :meth:`dumps` stores (views of the model's arrays where they can be)."""
        arrays, params = text_arrays(self.space)
        h = self.hierarchy
        dim = h.centroids.shape[1] if h.centroids.ndim == 2 else 0
        arrays.update({
            "hierarchy.leaf": np.asarray(h.leaf, dtype=np.int64), "hierarchy.parent": np.asarray(h.parent, np.int64),
            "hierarchy.centroids": np.asarray(h.centroids, dtype=np.float32).reshape(-1, dim),
            "leaf_ids": np.asarray(self.leaf_ids, dtype=np.int64), "area_ids": np.asarray(self.area_ids, np.int64),
            "paper_ids": json_array(list(self.paper_ids)),
            "x": np.asarray(self.x if self.x is not None else np.zeros((0, dim)), np.float32).reshape(-1, dim),
            "xy": np.asarray(self.xy if self.xy is not None else np.zeros((0, 2)), np.float32).reshape(-1, 2)})
        params.update(format=MODEL_FORMAT, version=str(self.version), embed_model=self.embed_model)
        return {k: np.ascontiguousarray(v) for k, v in arrays.items()}, params

    @staticmethod
    def loads(blob: bytes | None, embed_model: str) -> TopicModel | None:
        """Read a model stored by :meth:`dumps`; anything else (a release 0.1.0 model, garbage) is ignored.

        Only arrays and JSON are decoded, never code. Every array's type, shape and range is checked.

        Args:
            blob: the stored bytes, or None.
            embed_model: name of the dense model the current embedding is made with.

        Returns:
            The model in ``blob``, or None when there is none, it is not a valid model of this version, or it was
            made with another embedding model (the caller then refits).
        """
        if not blob:
            return None
        try:
            return _loads(bytes(blob), embed_model)
        except Exception:  # noqa: BLE001 - an unreadable or inconsistent model just means a full refit
            return None


def _safetensors_metadata(blob: bytes) -> dict[str, str]:
    """The ``__metadata__`` of a safetensors header (8-byte little-endian length, then JSON)."""
    if len(blob) < 8:
        raise ValueError("too short")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > len(blob) - 8:
        raise ValueError("header longer than the blob")
    meta = json.loads(blob[8:8 + n]).get("__metadata__") or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise ValueError("bad metadata")
    return meta


def _loads(blob: bytes, embed_model: str) -> TopicModel | None:
    from safetensors.numpy import load

    meta = _safetensors_metadata(blob)
    if (meta.get("format") != MODEL_FORMAT or meta.get("version") != str(MODEL_VERSION)
            or meta.get("embed_model") != embed_model):
        return None
    a = load(blob)
    space = text_space_from_arrays(a, meta)
    leaf, parent, centroids = a["hierarchy.leaf"], a["hierarchy.parent"], a["hierarchy.centroids"]
    leaf_ids, area_ids, x, xy = a["leaf_ids"], a["area_ids"], a["x"], a["xy"]
    paper_ids = array_json(a["paper_ids"])
    ints = (leaf, parent, leaf_ids, area_ids)
    floats = (centroids, x, xy, *(a[k] for k in ("tfidf.idf", "lsa.components") if k in a))
    n, k = len(leaf), len(parent)
    ok = (all(v.ndim == 1 and v.dtype == np.int64 for v in ints) and all(v.dtype == np.float32 for v in floats)
          and all(np.isfinite(v).all() for v in floats) and n > 0 and k > 0
          and centroids.ndim == 2 and centroids.shape[0] == k and centroids.shape[1] > space.dim
          and len(leaf_ids) == k and len(area_ids) > 0
          and leaf.min() >= 0 and leaf.max() < k and parent.min() >= 0 and parent.max() < len(area_ids)
          and len(set(leaf_ids.tolist()) | set(area_ids.tolist())) == k + len(area_ids)
          and isinstance(paper_ids, list) and len(paper_ids) == n and all(isinstance(p, str) for p in paper_ids)
          and len(set(paper_ids)) == n and x.shape == (n, centroids.shape[1]) and xy.shape == (n, 2))
    if not ok:
        return None
    return TopicModel(space, Hierarchy(leaf.astype(int), parent.astype(int), centroids),
                      [int(v) for v in leaf_ids], [int(v) for v in area_ids], paper_ids, x, xy, embed_model)


@dataclass
class TopicResult:
    """The outcome of :func:`update_topics` for ``n`` papers.

    Attributes:
        topic_id: ``(n,)`` int, sub-topic id per paper.
        xy: ``(n, 2)`` float32 map coordinates; None until :func:`lay_out` when ``update_topics`` was asked for
            ``layout=False`` (a fresh fit).
        confidence: ``(n,)`` float32 cosine to the topic centroid.
        low_confidence: ``(n,)`` bool.
        secondary: secondary sub-topic ids per paper.
        topics: the areas and sub-topics.
        model: the :class:`TopicModel` to store.
        mode: ``"fit"`` (fresh), ``"refit"`` (fresh, matched to the old topics) or ``"update"`` (old papers and
            points kept, new papers added to the nearest sub-topic).
        kept_share: share of the papers that were in the previous atlas and keep their topic id (None on a first
            build).
        relabelled: ids of kept topics whose label was recomputed because their membership changed.
    """

    topic_id: np.ndarray
    xy: np.ndarray | None
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
                  embed_model: str = "", layout: bool = True) -> TopicResult:
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
        layout: lay the map out too; False leaves a fresh fit's map (UMAP, the costly half) to :func:`lay_out`,
            so the build times and reports it as its own stage (an update places its new papers either way).

    Returns:
        The :class:`TopicResult`.
    """
    # the same papers in another order give the same topics, labels and map: everything is fitted on the papers in
    # id order (TF-IDF's vocabulary ties, LSA's randomized SVD, k-means's init and UMAP all depend on row order) and
    # the per-paper results are put back in the caller's order
    order = np.array(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.int64)
    if len(order) and not (order == np.arange(len(order))).all():
        res = update_topics([ids[i] for i in order], np.asarray(dense)[order], [texts[i] for i in order],
                            [keyphrases[i] for i in order], previous, previous_papers, previous_topics, n_areas,
                            n_topics, refit, seed, embed_model, layout)
        back = np.empty_like(order)
        back[order] = np.arange(len(order))
        res.topic_id = res.topic_id[back]
        res.xy = res.xy[back] if res.xy is not None else None
        res.confidence, res.low_confidence = res.confidence[back], res.low_confidence[back]
        res.secondary = [res.secondary[i] for i in back.tolist()]
        m = res.model  # its rows too (the build reads the representation ``x`` in its own order)
        m.paper_ids = [m.paper_ids[i] for i in back.tolist()]
        m.x = m.x[back] if m.x is not None else None
        m.xy = m.xy[back] if m.xy is not None else None
        m.hierarchy = Hierarchy(m.hierarchy.leaf[back], m.hierarchy.parent, m.hierarchy.centroids)
        return res
    n = len(ids)
    previous_papers = previous_papers or {}
    previous_topics = previous_topics or {}
    kept = [i for i, pid in enumerate(ids) if pid in previous_papers and previous_papers[pid][3]
            and previous_papers[pid][1] is not None]
    can_update = (previous is not None and not refit and n_areas is None and n_topics is None and kept
                  and (n - len(kept)) <= MAX_NEW_SHARE * len(kept)
                  and previous.hierarchy.centroids.shape[1] == dense.shape[1] + previous.space.dim)
    if can_update:
        return _update(ids, dense, texts, keyphrases, previous, previous_papers, previous_topics, kept)
    x, space = topic_embedding(dense, texts, seed=seed)
    h = fit_hierarchy(x, n_areas=n_areas, n_topics=n_topics, seed=seed)
    trim_heap()  # k-means's copies and distance blocks: freed before UMAP, the topic stage's peak
    xy = _fit_map(x, seed) if layout else None
    leaf_ids, area_ids, keep_labels = _match_ids(ids, h, previous_papers, previous_topics)
    mode = "refit" if previous_topics else "fit"
    model = TopicModel(space, h, leaf_ids, area_ids, list(ids), x, xy, embed_model)
    return _finish(ids, x, xy, h, keyphrases, model, keep_labels, previous_topics, mode, texts)


def _fit_map(x: np.ndarray, seed: int) -> np.ndarray:
    """``(n, 2)`` float32: the UMAP map of ``x`` (rows in id order); the fitted UMAP is not kept (~180 MB at 42k)."""
    xy = fit_layout(x, seed=seed, n_jobs=-1)
    trim_heap()
    return xy


def lay_out(result: TopicResult, seed: int = 42) -> None:
    """Fill in the map of a :class:`TopicResult` made with ``layout=False`` (papers' and topics' coordinates).

    Fitted in id order as ``update_topics(layout=True)`` does (the same map); a result with a map is left as it is.

    Args:
        result: the result to complete in place (``xy``, ``model.xy``, each topic's ``x``/``y``: the median of its
            papers' coordinates).
        seed: ``random_state`` of UMAP (the seed given to ``update_topics``).
    """
    if result.xy is not None:
        return
    ids = result.model.paper_ids
    order = np.array(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.int64)
    xy = np.zeros((len(ids), 2), dtype=np.float32)
    if len(ids):
        xy[order] = _fit_map(np.asarray(result.model.x)[order], seed)
    result.xy = result.model.xy = xy
    _place_topics(result.topics, result.topic_id, xy)


def _place_topics(topics: list[Topic], topic_id: np.ndarray, xy: np.ndarray) -> None:
    """Each topic at the median map position of its papers (an area's: those of its sub-topics)."""
    parent = {t.id: t.parent_id for t in topics}
    area_id = np.array([parent.get(int(t), -1) for t in topic_id.tolist()], dtype=int)
    for t in topics:
        members = (topic_id if t.level else area_id) == t.id
        if members.any():
            t.x, t.y = (float(v) for v in np.median(xy[members], axis=0).tolist())


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


def _update(ids, dense, texts, keyphrases, previous: TopicModel, previous_papers, previous_topics, kept):
    n = len(ids)
    # a kept paper (same text, same vector, same stored space) has the topic vector the last build stored: only
    # the others are transformed (at 42k papers that is most of the update's time otherwise)
    row = {pid: r for r, pid in enumerate(previous.paper_ids)}
    stored = previous.x is not None and previous.x.shape == (len(previous.paper_ids),
                                                             dense.shape[1] + previous.space.dim)
    reuse = [i for i in kept if stored and ids[i] in row]
    x = np.zeros((n, dense.shape[1] + previous.space.dim), dtype=np.float32)
    if reuse:
        x[reuse] = previous.x[[row[ids[i]] for i in reuse]]
    rest = sorted(set(range(n)) - set(reuse))
    if rest:
        x[rest], _space = topic_embedding(dense[rest], [texts[i] for i in rest], space=previous.space)
    # a kept paper stays in its sub-topic (a no-op rebuild moves nothing); a new or changed one joins the sub-topic
    # whose stored centroid is nearest
    index_of = {tid: j for j, tid in enumerate(previous.leaf_ids)}
    fixed = np.full(n, -1, dtype=np.int64)
    for i in kept:
        fixed[i] = index_of.get(previous_papers[ids[i]][0], -1)
    h = refine_hierarchy(x, previous.hierarchy, fixed=fixed)
    kept_set = set(kept)
    new = [i for i in range(n) if i not in kept_set]
    xy = np.zeros((n, 2), dtype=np.float32)
    for i in kept:
        _, px, py, _ = previous_papers[ids[i]]
        xy[i] = (px, py)
    if new:  # near their most similar earlier papers, by their topic vectors
        xy[new] = place_new(x[new], x[kept], xy[kept])
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
    model = TopicModel(previous.space, h, leaf_ids, area_ids, list(ids), x, xy, previous.embed_model)
    result = _finish(ids, x, xy, h, keyphrases, model, keep_labels, previous_topics, "update", texts)
    result.kept_share = kept_same / len(kept) if kept else None
    result.relabelled = sorted(relabelled)
    return result


def _finish(ids, x, xy, h: Hierarchy, keyphrases, model: TopicModel, keep_labels: dict[int, str],
            previous_topics: dict[int, Topic], mode: str, texts: Sequence[str] | None = None) -> TopicResult:
    n_leaves = len(h.parent)
    n_areas = len(model.area_ids)
    own, low, secondary = confidence(x, h)
    # labels: areas first, then sub-topics avoiding every area's label phrase
    taken: set[str] = set()
    for label in keep_labels.values():
        taken.add(phrase_key(label))
    pairs = phrase_pairs(keyphrases)
    texts = list(texts) if texts is not None else None
    area_labels = label_topics(h.area, keyphrases, taken=taken, n_topics=n_areas, children=h.leaf, pairs=pairs,
                               texts=texts)
    leaf_labels = label_topics(h.leaf, keyphrases, taken=taken, n_topics=n_leaves, pairs=pairs, texts=texts)
    topics: list[Topic] = []
    for level, assign, labels, ids in ((0, h.area, area_labels, model.area_ids),
                                       (1, h.leaf, leaf_labels, model.leaf_ids)):
        for j, tid in enumerate(ids):
            members = assign == j
            if not members.any():
                continue
            label, terms = labels[j]
            topics.append(Topic(id=tid, label=keep_labels.get(tid, label), size=int(members.sum()),
                                keyphrases=terms, parent_id=model.area_ids[int(h.parent[j])] if level else None,
                                x=0.0, y=0.0, method=METHOD, level=level))
    _dedupe_labels(topics)
    topic_id = np.array([model.leaf_ids[j] for j in h.leaf.tolist()], dtype=int)
    if xy is not None:  # else placed by lay_out
        _place_topics(topics, topic_id, xy)
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


#: the hierarchy's names are re-exported: callers know them from here
__all__ = ["DENSE_WEIGHT", "KEEP_LABEL_JACCARD", "LOW_CONFIDENCE_Z", "MAX_NEW_SHARE", "METHOD", "MODEL_FORMAT",
           "MODEL_VERSION", "SECONDARY_RATIO", "Hierarchy", "TextSpace", "TopicModel", "TopicResult", "confidence",
           "default_n_areas", "default_n_topics", "fit_hierarchy", "fit_text_space", "refine_hierarchy",
           "lay_out", "tfidf_vectorizer", "topic_embedding", "update_topics"]
