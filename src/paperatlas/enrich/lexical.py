"""The corpus's TF-IDF matrix, made once at build time and stored in the atlas for the recommender.

Fitting it takes 15-20 s at 42k papers; made on the first request, that was the wait of the first reader after
``serve``. The build fits it (:func:`lexical_index`) and stores it with :func:`dumps` (safetensors: arrays and JSON
only); :func:`loads` gives it back when the atlas's papers and texts are still the ones it was made from.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable, Iterable, Sequence
from types import SimpleNamespace

import numpy as np

from .embed import paper_text

#: the ``models`` table's name for the stored matrix
NAME = "recommender.tfidf"
#: bump when the texts or the vectorizer's settings change: an index of another version is refitted
VERSION = "2"


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
    matrix, terms, _idf = fit_index(texts)
    return matrix, terms


def fit_index(texts: Sequence[str]):
    """:func:`lexical_index` plus the idf weights, which :func:`update_index` needs later.

    Args:
        texts: one text per paper (:func:`lexical_text`).

    Returns:
        ``(matrix, terms, idf)``; ``idf`` is ``(vocab,)`` float32.
    """
    from .topics import tfidf_vectorizer

    vec = tfidf_vectorizer()
    try:
        x = vec.fit_transform(list(texts))
    except ValueError:
        x = vec.set_params(min_df=1, max_df=1.0).fit_transform(list(texts))
    return x.astype(np.float32).tocsr(), vec.get_feature_names_out(), np.asarray(vec.idf_, dtype=np.float32)


def update_index(blob: bytes | None, ids: Sequence[str], texts: Sequence[str], max_new_share: float):
    """The stored index carried over to a corpus that changed a little: kept rows as stored, new rows transformed.

    The vocabulary and idf of the stored index are kept (as the topic model's text space is kept by a topic
    update), so a paper's row does not change when other papers are added; a rebuild that adds 1,000 papers to
    42,000 transforms 1,000 texts instead of fitting 43,000.

    Args:
        blob: the stored index (:func:`dumps`), or None.
        ids: the paper id of each row now.
        texts: each row's text now (:func:`lexical_text`).
        max_new_share: the most papers that may be new or changed, as a share of all (above it: None, refit).

    Returns:
        ``(matrix, terms, idf)`` as :func:`fit_index` gives them, or None when there is no usable stored index
        (none, another version, unreadable) or too much changed.
    """
    old = _read(blob)
    if old is None:
        return None
    matrix, terms, idf, row_keys = old
    if idf is None:
        return None
    where = {k: i for i, k in enumerate(row_keys)}
    keys = [_row_key(pid, t) for pid, t in zip(ids, texts, strict=True)]
    new = [j for j, k in enumerate(keys) if k not in where]
    if len(new) > max_new_share * max(len(ids), 1):
        return None
    from scipy.sparse import csr_matrix, vstack

    from .topics import tfidf_vectorizer

    vec = tfidf_vectorizer()
    vec.vocabulary_ = {str(t): j for j, t in enumerate(terms)}
    vec.idf_ = idf.astype(vec.dtype)
    fresh = vec.transform([texts[j] for j in new]).astype(np.float32).tocsr() if new \
        else csr_matrix((0, len(terms)), dtype=np.float32)
    src = np.array([where.get(k, -1) for k in keys], dtype=np.int64)
    kept = np.nonzero(src >= 0)[0]
    # the kept rows (in their new order) then the new ones, put in place by one row permutation
    order = np.empty(len(keys), dtype=np.int64)
    order[kept] = np.arange(len(kept))
    order[np.asarray(new, dtype=np.int64)] = len(kept) + np.arange(len(new))
    out = vstack([matrix[src[kept]], fresh], format="csr", dtype=np.float32)[order]
    return out.tocsr(), terms, idf


def _row_key(pid: str, text: str) -> bytes:
    return hashlib.sha1(pid.encode() + b"\x00" + text.encode()).digest()


def texts_digest(ids: Sequence[str], texts: Iterable[str]) -> str:
    """SHA-1 over the paper ids and texts, in order: what a stored index must have been made from.

    ``texts`` may be an iterator (read once): a large atlas's texts are read one paper at a time.
    """
    h = hashlib.sha1(VERSION.encode())
    for pid, t in zip(ids, texts, strict=True):
        h.update(pid.encode() + b"\x00" + t.encode() + b"\x01")
    return h.hexdigest()


def dumps(matrix, terms, ids: Sequence[str], texts: Sequence[str], idf=None) -> bytes:
    """The index as safetensors bytes: the CSR arrays, the terms as UTF-8 JSON, the texts' digest in the metadata.

    Args:
        matrix: sparse CSR ``(n, vocab)`` float32.
        terms: ``(vocab,)`` terms.
        ids: the paper id of each row.
        texts: the text of each row (its digest, and a SHA-1 of id + text per row, are stored).
        idf: ``(vocab,)`` idf weights (:func:`fit_index`), kept so :func:`update_index` can add rows; None
            leaves them out (the next build then refits).

    Returns:
        The bytes.
    """
    from safetensors.numpy import save

    m = matrix.tocsr()
    arrays = {"data": np.ascontiguousarray(m.data, dtype=np.float32),
              "indices": np.ascontiguousarray(m.indices, dtype=np.int32),
              "indptr": np.ascontiguousarray(m.indptr, dtype=np.int64),
              "terms": np.frombuffer(json.dumps([str(t) for t in terms]).encode(), dtype=np.uint8).copy(),
              "rows": np.frombuffer(b"".join(_row_key(i, t) for i, t in zip(ids, texts, strict=True)),
                                    dtype=np.uint8).reshape(len(ids), 20).copy()}
    if idf is not None:
        arrays["idf"] = np.ascontiguousarray(idf, dtype=np.float32)
    meta = {"version": VERSION, "shape": json.dumps(list(m.shape)), "digest": texts_digest(ids, texts)}
    return save(arrays, metadata=meta)


def loads(blob: bytes | bytearray | None, ids: Sequence[str], texts: Iterable[str]):
    """The stored index when it was made from exactly these papers and texts, else None (the caller refits).

    Only arrays and JSON are decoded; shapes and ranges are checked.

    Args:
        blob: the stored bytes (or a ``bytearray``: the arrays are views into it), or None.
        ids: the paper id of each row, in order.
        texts: each row's text now (:func:`lexical_text`); an iterator is read once.

    Returns:
        ``(matrix, terms)`` as :func:`lexical_index` gives them, or None.
    """
    if not blob:
        return None
    from ..enrich.topics import _safetensors_metadata

    try:
        if _safetensors_metadata(blob).get("digest") != texts_digest(ids, texts):
            return None
    except Exception:  # noqa: BLE001 - anything unreadable means a refit, never an error
        return None
    got = _read(blob)
    if got is None or got[0].shape[0] != len(ids):
        return None
    return got[0], got[1]


#: the safetensors dtypes :func:`dumps` writes
_DTYPES = {"F32": np.float32, "I32": np.int32, "I64": np.int64, "U8": np.uint8}


def _views(blob: bytes | bytearray) -> dict[str, np.ndarray]:
    """The arrays of safetensors bytes as read-only views into ``blob`` (no copy: they keep ``blob`` alive).

    ``safetensors.numpy.load`` copies every array: at 1M papers the stored TF-IDF (674 MB) was then held twice
    while it was read. The layout read is safetensors' own (an 8-byte little-endian header length, a JSON header
    of ``{name: {dtype, shape, data_offsets}}``, then the data), as :func:`dumps` writes it with ``safetensors``.

    Raises:
        ValueError: A dtype :func:`dumps` does not write, or offsets outside the blob or not of the shape.
    """
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = np.dtype(_DTYPES[spec["dtype"]])
        begin, end = (int(x) for x in spec["data_offsets"])
        shape = tuple(int(x) for x in spec["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        if not 0 <= begin <= end <= len(blob) - 8 - n or end - begin != count * dtype.itemsize:
            raise ValueError(f"safetensors array {name!r}: offsets {begin}-{end} do not hold {shape} {dtype}")
        out[name] = np.frombuffer(blob, dtype=dtype, count=count, offset=8 + n + begin).reshape(shape)
    return out


def _read(blob: bytes | bytearray | None):
    """``(matrix, terms, idf or None, row keys)`` of a stored index of this :data:`VERSION`, checked; else None."""
    if not blob:
        return None
    try:
        from scipy.sparse import csr_matrix

        from ..enrich.topics import _safetensors_metadata

        meta = _safetensors_metadata(blob)
        if meta.get("version") != VERSION:
            return None
        a = _views(blob)
        n, vocab = (int(v) for v in json.loads(meta["shape"]))
        terms = np.array(json.loads(a["terms"].tobytes().decode()), dtype=object)
        indptr, indices = a["indptr"], a["indices"]
        if vocab != len(terms) or len(indptr) != n + 1 or indptr[-1] != len(indices) \
                or len(a["data"]) != len(indices) or (len(indices) and (indices.min() < 0 or indices.max() >= vocab)):
            return None
        rows = a.get("rows")
        if rows is None or rows.shape != (n, 20):
            return None
        idf = a.get("idf")
        if idf is not None and idf.shape != (vocab,):
            return None
        return csr_matrix((a["data"], indices, indptr), shape=(n, vocab)), terms, idf, [bytes(r) for r in rows]
    except Exception:  # noqa: BLE001 - anything unreadable means a refit, never an error
        return None


class StoredRows:
    """The rows of a stored index (:func:`dumps`) read from the atlas file when asked for, not held in memory.

    At 1M papers the TF-IDF matrix is 674 MB; related papers read ~100 of its rows a request. Only ``indptr``
    (8 bytes a row) and the terms are kept; a row's ``indices`` and ``data`` are two reads of the stored blob.

    Args:
        reader: the stored blob: ``read(offset, n)`` and ``session()`` (several reads), e.g.
            :class:`paperatlas.store.lazy.SpilledBlob`.

    Raises:
        ValueError: The blob is not an index of this :data:`VERSION` (the caller then loads or fits the whole).
    """

    def __init__(self, reader):
        read = reader.read
        (n_head,) = struct.unpack("<Q", read(0, 8))
        header = json.loads(read(8, n_head))
        meta = header.get("__metadata__") or {}
        if meta.get("version") != VERSION or any(k not in header for k in ("data", "indices", "indptr", "terms")):
            raise ValueError("not a stored TF-IDF index of this version")
        self._reader, base = reader, 8 + n_head
        self.shape = tuple(int(v) for v in json.loads(meta["shape"]))
        self._at = {k: base + int(header[k]["data_offsets"][0]) for k in ("data", "indices")}
        b, e = (int(x) for x in header["indptr"]["data_offsets"])
        self.indptr = np.frombuffer(read(base + b, e - b), dtype=np.int64)
        b, e = (int(x) for x in header["terms"]["data_offsets"])
        self.terms = np.array(json.loads(read(base + b, e - b).decode()), dtype=object)
        if len(self.indptr) != self.shape[0] + 1 or len(self.terms) != self.shape[1] \
                or header["data"]["dtype"] != "F32" or header["indices"]["dtype"] != "I32":
            raise ValueError("stored TF-IDF index of another shape")
        #: the digest of the texts it was made from (:func:`texts_digest`)
        self.digest = meta.get("digest")

    def __getitem__(self, row: int) -> SimpleNamespace:
        """Row ``row`` as ``.indices`` ``(k,)`` int32 (ascending columns) and ``.data`` ``(k,)`` float32."""
        with self._reader.session() as read:
            return self._row(read, row)

    def _row(self, read: Callable[[int, int], bytes], row: int) -> SimpleNamespace:
        lo, hi = int(self.indptr[row]), int(self.indptr[row + 1])
        return SimpleNamespace(
            indices=np.frombuffer(read(self._at["indices"] + 4 * lo, 4 * (hi - lo)), dtype=np.int32),
            data=np.frombuffer(read(self._at["data"] + 4 * lo, 4 * (hi - lo)), dtype=np.float32))

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(indices, data, lengths)`` of ``rows`` one after the other (``lengths[i]`` entries for ``rows[i]``)."""
        with self._reader.session() as read:
            parts = [self._row(read, int(r)) for r in rows]
        lengths = np.array([len(p.indices) for p in parts], dtype=np.int64)
        if not parts:
            return np.zeros(0, np.int32), np.zeros(0, np.float32), lengths
        return np.concatenate([p.indices for p in parts]), np.concatenate([p.data for p in parts]), lengths
