"""The stored embeddings: read for a rebuild to reuse, written by a build (only the rows that changed).

Split from :mod:`paperatlas.store.sqlite`, which re-exports these functions (a build calls them as
``paperatlas.store.sqlite.*``).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np

from .cells import _show
from .check import Damage


def cached_embeddings(con: sqlite3.Connection, model: str) -> dict[str, tuple[str, np.ndarray]]:
    """The stored embeddings made by one model.

    Args:
        con: A connection to the atlas.
        model: The embedding model's name.

    Returns:
        ``paper_id -> (content_hash, vector)``, each vector of shape ``(dim,)``, float32. A damaged row (a
        vector that is not a whole number of finite float32 values, or not of the length most vectors have; an
        id or hash that is not text) is left out: the build embeds that paper again.
    """
    rows = [r for r in con.execute("SELECT paper_id, content_hash, vector FROM embeddings WHERE model = ?", (model,))
            if type(r[0]) is str and type(r[1]) is str]
    good = check_vectors([(r[0], r[2], None) for r in rows])[0]
    return {r[0]: (r[1], good[r[0]]) for r in rows if r[0] in good}


def _vector(blob) -> np.ndarray | None:
    """A stored embedding as ``(dim,)`` float32, or None unless the blob is finite float32 of norm at most 1e6.

    Embeddings are unit vectors; the bound keeps later float32 arithmetic from overflowing (and warning).
    """
    if not isinstance(blob, bytes) or not blob or len(blob) % 4:
        return None
    vec = np.frombuffer(blob, dtype=np.float32)
    v64 = vec.astype(np.float64)  # no overflow, no warning: squares of float32 fit
    sq = float(v64 @ v64)
    return vec if sq == sq and sq <= 1e12 else None


#: Dimension of the embedding models the store knows, by name (the part after the last ``/``): an atlas made by one
#: of them has vectors of this length, whatever most of its rows hold (meaning search compares them with a query
#: embedded by the same model).
MODEL_DIMS = {"all-MiniLM-L6-v2": 384}


def model_dim(model: object) -> int | None:
    """The dimension of a known embedding model (:data:`MODEL_DIMS`), or None for another name."""
    return MODEL_DIMS.get(model.rsplit("/", 1)[-1]) if isinstance(model, str) else None


def check_vectors(rows: list[tuple[object, object, int | None]], dim: int | None = None
                  ) -> tuple[dict[str, np.ndarray], int, list[Damage]]:
    """Check the stored embeddings: each a finite float32 vector of the atlas's dimension.

    Args:
        rows: ``(paper_id, vector blob, rowid)`` per embeddings row (ids already checked as text).
        dim: The atlas's dimension (:func:`model_dim` of its model); None: the length most vectors have (the
            longer one on a tie).

    Returns:
        ``(paper id -> (dim,) float32 vector, dim, damage)``: the good vectors, the dimension (0 without
        vectors) and one :class:`Damage` per bad vector, in ``rows`` order.
    """
    good: dict[str, np.ndarray] = {}
    bad: dict[str, tuple[str, int | None]] = {}
    for pid, b, rowid in rows:
        v = _vector(b)
        if v is not None:
            good[str(pid)] = v
        elif isinstance(b, bytes) and b and len(b) % 4 == 0:
            bad[str(pid)] = (f"{len(b) // 4} float32 values, not all finite (or a norm above 1e6)", rowid)
        elif isinstance(b, bytes) and b:
            bad[str(pid)] = (f"not a vector of finite float32 values ({len(b)} bytes)", rowid)
        else:
            bad[str(pid)] = (f"{_show(b)}, not a vector of float32 values", rowid)
    if dim is None:
        counts = Counter(len(v) for v in good.values())
        dim = max(counts, key=lambda n: (counts[n], n)) if counts else 0
    for pid, _, rowid in rows:
        v = good.get(str(pid))
        if v is not None and len(v) != dim:
            del good[str(pid)]
            bad[str(pid)] = (f"{len(v)} float32 values, not the atlas's {dim}", rowid)
    out = [Damage("embeddings", "vector", f"paper {pid!r}", what, rowid) for pid, (what, rowid) in bad.items()]
    return good, dim, out


def write_embeddings(con: sqlite3.Connection, model: str, ids: list[str], hashes: list[str],
                     vectors: np.ndarray, unchanged: set[str] | frozenset[str] = frozenset()) -> None:
    """Make the stored embeddings exactly ``ids``' vectors.

    Rows of papers in ``unchanged`` (their stored row holds this model's vector of this text, as
    :func:`cached_embeddings` read it) stay as they are; the others are written and the rows of papers not in
    ``ids`` deleted. So adding 1,000 papers to 42,000 writes 1,000 rows, not 43,000.

    Args:
        con: A writable connection (a build's copy).
        model: The embedding model's name.
        ids: The papers' ids, one per row of ``vectors``.
        hashes: The hash of each paper's embedded text, one per row.
        vectors: Shape ``(len(ids), dim)``, stored as float32.
        unchanged: Ids whose stored row is already this vector (default: none, every row is written).

    Raises:
        ValueError: ``ids``, ``hashes`` and ``vectors`` differ in length.
    """
    if not (len(ids) == len(hashes) == len(vectors)):
        raise ValueError(f"{len(ids)} ids, {len(hashes)} hashes and {len(vectors)} vectors: one each per paper")
    stored = [r[0] for r in con.execute("SELECT paper_id FROM embeddings")] if unchanged else None
    if stored is None:
        con.execute("DELETE FROM embeddings")
    else:
        wanted = set(ids)
        con.executemany("DELETE FROM embeddings WHERE paper_id = ?",
                        [(pid,) for pid in stored if pid not in wanted or pid not in unchanged])
    con.executemany(
        "INSERT INTO embeddings (paper_id, model, content_hash, vector) VALUES (?, ?, ?, ?)",
        [(i, model, h, np.asarray(v, dtype=np.float32).tobytes())
         for i, h, v in zip(ids, hashes, vectors, strict=True) if i not in unchanged],
    )


def stored_paper_count(path: str | Path) -> int:
    """How many papers the atlas at ``path`` holds now, read without a lock and without changing anything.

    A build asks before reading its listings, to start the embedding child of a large atlas early.

    Args:
        path: The atlas file.

    Returns:
        The number of rows of ``papers``; 0 when there is no atlas there or it cannot be read (the build then
        says why, under its lock).
    """
    path = Path(path)
    if not path.is_file():
        return 0
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return int(con.execute("SELECT COUNT(*) FROM papers").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0
