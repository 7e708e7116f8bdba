"""The paper representation: one vector per paper, shared by topics, related papers and recommendations.

It is the topic embedding (:func:`paperatlas.enrich.topics.topic_embedding`): all-MiniLM-L6-v2 (384-d) ⊕ LSA of
the corpus's TF-IDF, weighted by :data:`paperatlas.enrich.hierarchy.DENSE_WEIGHT`, L2-normalised. The build
computes it once for the topics and stores it with the topic model (``models`` table, ``"topics"``, array ``x``);
related papers (:mod:`.related`), recommendations (:mod:`paperatlas.recommend`) and the stored nearest-neighbour
index (:mod:`.neighbours`, an HNSW graph from 100k papers) read that same array. ``paperatlas eval neighbours``
measures it against its two parts (10-NN class accuracy on seed 004's sections and AAAI 2022's areas: 0.805 and
0.405, vs MiniLM 0.796 / 0.396 and TF-IDF 0.802 / 0.378).

An atlas without a usable stored topic model (built before it existed, made with another embedding model, or
a topic model that misses some paper) falls back to the MiniLM vectors (``atlas.vectors``) until its next build.
"""

from __future__ import annotations

import numpy as np

from ..enrich import lexical
from ..enrich.topics import TopicModel
from ..store import Atlas

#: the name of the :meth:`Atlas.derived` value
DERIVED = "paper representation"
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


def paper_vectors(atlas: Atlas) -> np.ndarray:
    """The atlas's paper representation, one row per ``atlas.ids`` (loaded once per atlas object).

    Args:
        atlas: the atlas.

    Returns:
        ``(len(atlas.ids), dim)`` float32, L2-normalised: the stored MiniLM ⊕ LSA vectors (dim 384 + k), else
        ``atlas.vectors`` (MiniLM, 384) when the atlas has no usable stored topic model.
    """

    def make() -> np.ndarray:
        model = TopicModel.loads(atlas.stored_model("topics"), atlas.embed_model) if len(atlas.ids) else None
        x = vectors_from_model(model, list(atlas.ids))
        return atlas.vectors if x is None else x

    return atlas.derived(DERIVED, make)


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
