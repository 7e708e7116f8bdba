"""The paper representation: one vector per paper, shared by topics, related papers and recommendations.

It is the topic embedding (:func:`paperatlas.enrich.topics.topic_embedding`): all-MiniLM-L6-v2 (384-d) ⊕ LSA of
the corpus's TF-IDF, weighted by :data:`paperatlas.enrich.hierarchy.DENSE_WEIGHT`, L2-normalised. The build
computes it once for the topics and stores it with the topic model (``models`` table, ``"topics"``, array ``x``);
related papers (:mod:`.related`), recommendations (:mod:`paperatlas.recommend`) and the stored nearest-neighbour
index (:mod:`.neighbours`, an HNSW graph from 100k papers) read that same array, and search ranks the papers that
use the query's words by their cosine to the query placed in the same space (:func:`query_vector`: MiniLM of the
query ⊕ LSA of its words), fused with BM25 by reciprocal rank fusion. ``paperatlas eval neighbours``
measures it against its two parts (10-NN class accuracy on seed 004's sections and AAAI 2022's areas: 0.805 and
0.405, vs MiniLM 0.796 / 0.396 and TF-IDF 0.802 / 0.378).

An atlas without a usable stored topic model (built before it existed, made with another embedding model, or
a topic model that misses some paper) falls back to the MiniLM vectors (``atlas.vectors``) until its next build.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..enrich import lexical
from ..enrich.hierarchy import DENSE_WEIGHT, TextSpace
from ..enrich.topics import TopicModel
from ..store import Atlas

#: the name of the :meth:`Atlas.derived` value
DERIVED = "paper representation"
#: :func:`query_cosines` scans every row when asked for more than this share of them (as the meaning tier does)
GATHER_SHARE = 0.25
#: rows gathered at a time
GATHER_CHUNK = 4096
#: the name of the :meth:`Atlas.derived` TF-IDF matrix
LEXICAL = "lexical matrix"


def vectors_from_model(model: TopicModel | None, ids: list[str]) -> np.ndarray | None:
    """The stored representation of ``ids``, in that order.

    Args:
        model: the topic model the build stored (None: none).
        ids: paper ids, one per wanted row.

    Returns:
        ``(len(ids), 384 + k)`` float32, L2-normalised (k = the LSA dimension, 0-256), or None when ``model`` is None
        or lacks a row for any of ``ids``.
    """
    if model is None or model.x is None or not ids:
        return None
    row = {pid: r for r, pid in enumerate(model.paper_ids)}
    if any(pid not in row for pid in ids):
        return None
    return np.ascontiguousarray(model.x[[row[pid] for pid in ids]], dtype=np.float32)


@dataclass
class Representation:
    """An atlas's paper representation and what places a query in it.

    Attributes:
        vectors: ``(len(atlas.ids), dim)`` float32, L2-normalised, one row per ``atlas.ids``.
        space: the stored TF-IDF/LSA space of the lexical half (None: MiniLM alone, ``dim`` = 384).
    """

    vectors: np.ndarray
    space: TextSpace | None = None


def representation(atlas: Atlas) -> Representation:
    """The atlas's :class:`Representation`, loaded once per atlas object (module docstring).

    Args:
        atlas: the atlas.

    Returns:
        The stored MiniLM ⊕ LSA vectors and their text space, else ``atlas.vectors`` (MiniLM) and no space when the
        atlas has no usable stored topic model.
    """

    def make() -> Representation:
        model = TopicModel.loads(atlas.stored_model("topics"), atlas.embed_model) if len(atlas.ids) else None
        x = vectors_from_model(model, list(atlas.ids))
        if x is None or model is None:
            return Representation(atlas.vectors)
        return Representation(x, model.space if model.space.svd is not None else None)

    return atlas.derived(DERIVED, make)


def paper_vectors(atlas: Atlas) -> np.ndarray:
    """The atlas's paper representation, one row per ``atlas.ids`` (:func:`representation`).

    Args:
        atlas: the atlas.

    Returns:
        ``(len(atlas.ids), dim)`` float32, L2-normalised: the stored MiniLM ⊕ LSA vectors (dim 384 + k), else
        ``atlas.vectors`` (MiniLM, 384) when the atlas has no usable stored topic model.
    """
    return representation(atlas).vectors


def query_vector(atlas: Atlas, text: str, dense: np.ndarray) -> np.ndarray:
    """A query placed in the representation: its MiniLM vector ⊕ the LSA of its words, as a paper is.

    The LSA half maps the query's words to the corpus's co-occurrence space (``interpretability`` lands near the
    papers about explanations that never say it), which is what ranking the keyword matches needs.

    Args:
        atlas: the atlas.
        text: the query as searched.
        dense: ``(384,)`` float32, L2-normalised MiniLM vector of ``text``.

    Returns:
        ``(dim,)`` float32, L2-normalised; :func:`dense_query` of ``dense`` when the atlas has no lexical half or no
        word of ``text`` is in its vocabulary.
    """
    rep = representation(atlas)
    dim = rep.vectors.shape[1] if rep.vectors.ndim == 2 else len(dense)
    if rep.space is None:
        return dense_query(dense, dim)
    lsa = rep.space.svd.transform(rep.space.vectorizer.transform([text]))[0].astype(np.float32)
    norm = float(np.linalg.norm(lsa))
    if norm == 0 or len(dense) + len(lsa) != dim:
        return dense_query(dense, dim)
    out = np.concatenate([math.sqrt(DENSE_WEIGHT) * np.asarray(dense, np.float32),
                          math.sqrt(1 - DENSE_WEIGHT) * lsa / norm]).astype(np.float32)
    return out / max(float(np.linalg.norm(out)), 1e-12)


def query_cosines(atlas: Atlas, text: str, dense: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Cosines of a query (:func:`query_vector`) to the representation of some papers.

    Args:
        atlas: the atlas.
        text: the query as searched.
        dense: ``(384,)`` float32 MiniLM vector of ``text``.
        rows: rows of ``atlas.ids`` (int, any order; -1 entries ignored).

    Returns:
        ``(len(atlas.ids),)`` float32: the cosine at ``rows``, -inf elsewhere.
    """
    vectors = paper_vectors(atlas)
    out = np.full(len(vectors), -np.inf, dtype=np.float32)
    rows = np.asarray(rows, dtype=np.int64)
    rows = rows[rows >= 0]
    if not len(rows):
        return out
    q = query_vector(atlas, text, dense)
    if len(rows) > GATHER_SHARE * len(vectors):  # one pass over every row is cheaper than gathering most of them
        out[rows] = np.vecdot(vectors, q)[rows]
    else:
        for lo in range(0, len(rows), GATHER_CHUNK):  # gathered in chunks: never a copy of many rows at once
            part = rows[lo:lo + GATHER_CHUNK]
            out[part] = vectors[part] @ q
    return out


def dense_query(q: np.ndarray, dim: int) -> np.ndarray:
    """A MiniLM vector placed in the representation's space: its dense half, the lexical half zero.

    The representation's first 384 columns are the MiniLM half (``√DENSE_WEIGHT · dense``), so the cosine of this
    vector with a paper's representation is ``√DENSE_WEIGHT`` times its MiniLM cosine: the same order as MiniLM
    alone. The meaning tier asks the stored graph so (a short query has no trustworthy LSA half).

    Args:
        q: ``(384,)`` float32, L2-normalised MiniLM vector (or any vector of the dense half's length).
        dim: the representation's dimension (``paper_vectors(atlas).shape[1]``); equal to ``len(q)`` when the atlas
            falls back to MiniLM.

    Returns:
        ``(dim,)`` float32, L2-normalised.

    Raises:
        ValueError: ``q`` is longer than ``dim``.
    """
    q = np.asarray(q, dtype=np.float32).ravel()
    if len(q) > dim:
        raise ValueError(f"a {len(q)}-d query cannot be placed in a {dim}-d representation")
    if len(q) == dim:
        return q
    return np.concatenate([q, np.zeros(dim - len(q), dtype=np.float32)])


def lexical_matrix(atlas: Atlas):
    """The atlas's TF-IDF matrix, one row per ``atlas.ids`` (loaded once per atlas object; the lexical signal).

    The build stores it (:mod:`paperatlas.enrich.lexical`); fitted here when it is missing or no longer fits the
    papers (15-20 s at 42k papers).

    Args:
        atlas: the atlas.

    Returns:
        ``(matrix, terms)``: sparse CSR ``(len(atlas.ids), vocab)`` float32 with L2-normalised rows (unigrams and
        bigrams, sublinear tf, :func:`paperatlas.enrich.topics.tfidf_vectorizer`) and the ``(vocab,)`` terms.
    """

    def make():
        texts = [lexical.lexical_text(p.title, p.abstract, p.digest, p.tldr)
                 for p in (atlas.by_id[i] for i in atlas.ids)]
        stored = lexical.loads(atlas.stored_model(lexical.NAME), atlas.ids, texts)  # made by the build
        if stored is not None:
            return stored
        if not texts:
            import scipy.sparse as sp

            return sp.csr_matrix((0, 0), dtype=np.float32), np.array([], dtype=object)
        return lexical.lexical_index(texts)

    return atlas.derived(LEXICAL, make)
