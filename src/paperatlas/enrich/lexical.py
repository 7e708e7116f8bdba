"""The corpus's TF-IDF matrix, made once at build time and stored in the atlas for the recommender.

Fitting it takes 15-20 s at 42k papers; made on the first request, that was the wait of the first reader after
``serve``. The build fits it (:func:`lexical_index`) and stores it with :func:`dumps` (safetensors: arrays and JSON
only); :func:`loads` gives it back when the atlas's papers and texts are still the ones it was made from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import numpy as np

from .embed import paper_text

#: the ``models`` table's name for the stored matrix
NAME = "recommender.tfidf"
#: bump when the texts or the vectorizer's settings change: an index of another version is refitted
VERSION = "1"


def lexical_text(title: str, abstract: str, digest: str = "", tldr: str = "") -> str:
    """The text a paper's TF-IDF row is made from: ``"<title>. <abstract, else digest, else TL;DR>"``.

    Args:
        title: the title.
        abstract: the abstract ("" when none).
        digest: the listing's digest, used without an abstract.
        tldr: the TL;DR, used without abstract and digest.

    Returns:
        The text (:func:`paperatlas.enrich.embed.paper_text`).
    """
    return paper_text(title, abstract or digest or tldr or "")


def lexical_index(texts: Sequence[str]):
    """TF-IDF of ``texts`` with :func:`paperatlas.enrich.topics.tfidf_vectorizer` (scikit-learn).

    Args:
        texts: one text per paper (:func:`lexical_text`).

    Returns:
        ``(matrix, terms)``: sparse CSR ``(n, vocab)`` float32 with L2-normalised rows, and the ``(vocab,)`` array
        of its terms (unigrams and bigrams). On a tiny corpus whose vocabulary the document-frequency limits empty,
        refitted with ``min_df=1, max_df=1.0``.
    """
    from .topics import tfidf_vectorizer

    vec = tfidf_vectorizer()
    try:
        x = vec.fit_transform(list(texts))
    except ValueError:
        x = vec.set_params(min_df=1, max_df=1.0).fit_transform(list(texts))
    return x.astype(np.float32).tocsr(), vec.get_feature_names_out()


def texts_digest(ids: Sequence[str], texts: Sequence[str]) -> str:
    """SHA-1 over the paper ids and texts, in order: what a stored index must have been made from."""
    h = hashlib.sha1(VERSION.encode())
    for pid, t in zip(ids, texts, strict=True):
        h.update(pid.encode() + b"\x00" + t.encode() + b"\x01")
    return h.hexdigest()


def dumps(matrix, terms, ids: Sequence[str], texts: Sequence[str]) -> bytes:
    """The index as safetensors bytes: the CSR arrays, the terms as UTF-8 JSON, the texts' digest in the metadata.

    Args:
        matrix: sparse CSR ``(n, vocab)`` float32.
        terms: ``(vocab,)`` terms.
        ids: the paper id of each row.
        texts: the text of each row (only its digest is stored).

    Returns:
        The bytes.
    """
    from safetensors.numpy import save

    m = matrix.tocsr()
    arrays = {"data": np.ascontiguousarray(m.data, dtype=np.float32),
              "indices": np.ascontiguousarray(m.indices, dtype=np.int32),
              "indptr": np.ascontiguousarray(m.indptr, dtype=np.int64),
              "terms": np.frombuffer(json.dumps([str(t) for t in terms]).encode(), dtype=np.uint8).copy()}
    meta = {"version": VERSION, "shape": json.dumps(list(m.shape)), "digest": texts_digest(ids, texts)}
    return save(arrays, metadata=meta)


def loads(blob: bytes | None, ids: Sequence[str], texts: Sequence[str]):
    """The stored index when it was made from exactly these papers and texts, else None (the caller refits).

    Only arrays and JSON are decoded; shapes and ranges are checked.

    Args:
        blob: the stored bytes, or None.
        ids: the paper id of each row, in order.
        texts: each row's text now (:func:`lexical_text`).

    Returns:
        ``(matrix, terms)`` as :func:`lexical_index` gives them, or None.
    """
    if not blob:
        return None
    try:
        from safetensors.numpy import load
        from scipy.sparse import csr_matrix

        from ..enrich.topics import _safetensors_metadata

        meta = _safetensors_metadata(bytes(blob))
        if meta.get("version") != VERSION or meta.get("digest") != texts_digest(ids, texts):
            return None
        a = load(bytes(blob))
        n, vocab = (int(v) for v in json.loads(meta["shape"]))
        terms = np.array(json.loads(a["terms"].tobytes().decode()), dtype=object)
        indptr, indices = a["indptr"], a["indices"]
        if n != len(ids) or vocab != len(terms) or len(indptr) != n + 1 or indptr[-1] != len(indices) \
                or len(a["data"]) != len(indices) or (len(indices) and (indices.min() < 0 or indices.max() >= vocab)):
            return None
        return csr_matrix((a["data"], indices, indptr), shape=(n, vocab)), terms
    except Exception:  # noqa: BLE001 - anything unreadable means a refit, never an error
        return None
