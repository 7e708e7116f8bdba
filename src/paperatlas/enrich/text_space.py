"""The lexical half of the topic embedding and the embedding itself (see :mod:`paperatlas.enrich.topics`).

* :func:`fit_text_space`: TF-IDF + LSA of the corpus (scikit-learn), stored with the atlas as plain arrays
  (:func:`text_arrays`, :func:`text_space_from_arrays`);
* :func:`topic_embedding`: the dense sentence embedding (all-MiniLM-L6-v2, 384-d) concatenated to the LSA, weighted
  by :data:`DENSE_WEIGHT`: the paper representation of topics, the map, related papers, recommendations and search.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..memory import trim_heap

#: weight of the dense (MiniLM) cosine in the topic embedding's cosine; the lexical (LSA) one gets the rest. Chosen
#: by a sweep (0.3, 0.4, 0.5, 0.6; three seeds each) on seed 004's sections and AAAI 2022's tracks: 0.3 gave the
#: best clustering NMI on both while keeping 10-NN accuracy above TF-IDF and MiniLM alone.
DENSE_WEIGHT = 0.3


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


