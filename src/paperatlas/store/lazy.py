"""The papers of a large atlas, read from SQLite when asked for instead of held as Python objects.

At a million papers the papers as :class:`~paperatlas.model.Paper` objects took ~9 GB of the serving process's
13.7 GB and most of its 68 s before listening (issue 31). From :data:`LAZY_MIN_PAPERS` papers,
:class:`~paperatlas.store.Atlas` keeps only the ids (in stored order) and the embeddings as one float32 matrix, and
gives ``atlas.papers`` as a :class:`StoredPapers` (a read-only sequence: ``papers[i]`` reads row ``i`` of the
``papers`` table, the last :data:`CACHE_SIZE` papers read are kept) and ``atlas.by_id`` as a :class:`StoredPapersById`
(a read-only mapping over the same rows). Iterating either reads the rows in chunks of :data:`CHUNK` and keeps
none of them.

Every value is checked when its row is read (:func:`paperatlas.store.sqlite.row_to_paper`), not when the atlas is
opened: a damaged cell then raises :class:`~paperatlas.store.check.DamagedAtlas` on the request that reads it (the web
app answers it with a 500 page naming the cell), where a small atlas refuses to open.

Reads share the atlas's own read-only connection (so they see the file the atlas opened, never one a rebuild
renamed over it) under one lock: two threads stepping the same cached statement of one connection interleave.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np

from ..model import Paper
from .check import CellError, Damage, DamagedAtlas, validate_row
from .embeddings import check_vectors, model_dim

#: An atlas of at least this many papers is read lazily (smaller ones load every paper: ~9 KB of memory a paper).
LAZY_MIN_PAPERS = 200_000
#: Papers kept after they were read (least recently read dropped first; ~9 KB each): a few pages and neighbourhoods.
CACHE_SIZE = 1_024
#: Rows read per statement while iterating.
CHUNK = 2_000

RowToPaper = Callable[[sqlite3.Row, int], Paper]


def stored_paper_count(con: sqlite3.Connection) -> int:
    """The number of rows of the ``papers`` table (SQLite counts them from the table's b-tree, ~20 ms at 1M)."""
    return int(con.execute("SELECT count(*) FROM papers").fetchone()[0])


class StoredPapers(Sequence):
    """``atlas.papers`` of a large atlas: a read-only sequence of :class:`~paperatlas.model.Paper`, read on demand.

    Args:
        con: The atlas's read-only connection (rows as :class:`sqlite3.Row`).
        rowids: ``(n_papers,)`` int64, the ``papers`` rowid of each position, ascending (the stored order).
        to_paper: ``(row, rowid) -> Paper`` (:func:`paperatlas.store.sqlite.row_to_paper`).
        lock: Held around every statement on ``con``.
        path: The atlas file (named by the errors).

    ``papers[i]`` (``i`` an int or numpy integer, negative counts from the end) returns the same object while it is
    kept; a slice returns a list. A paper the reader edits (a move, a TL;DR) is written to the file by the edit
    (:mod:`paperatlas.overrides`), so reading it again gives the edited paper.

    Raises:
        IndexError: A position outside ``0..n_papers-1``.
        paperatlas.store.check.DamagedAtlas: A value of a row read is damaged (one line naming the file, the
            column and the paper: the web app answers it with its damaged-atlas page).
    """

    def __init__(self, con: sqlite3.Connection, rowids: np.ndarray, to_paper: RowToPaper, lock: threading.Lock,
                 path=None):
        self._con = con
        self._path = path
        self.rowids = rowids
        self._to_paper = to_paper
        self._lock = lock
        self._kept: OrderedDict[int, Paper] = OrderedDict()

    def __len__(self) -> int:
        return len(self.rowids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.read(range(*i.indices(len(self))))
        i = int(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"paper position {i} out of range (the atlas has {len(self)} papers)")
        with self._lock:
            p = self._kept.get(i)
            if p is not None:
                self._kept.move_to_end(i)
                return p
        return self.read([i])[0]

    def read(self, positions) -> list[Paper]:
        """The papers at ``positions`` (ints, any order, repeats allowed), in that order; one statement per 500.

        Raises:
            IndexError: A position outside ``0..n_papers-1``.
        """
        positions = [int(i) for i in positions]
        out: dict[int, Paper] = {}
        with self._lock:
            for i in positions:
                if i in self._kept:
                    out[i] = self._kept[i]
        todo = sorted({i for i in positions if i not in out})
        if todo and (todo[0] < 0 or todo[-1] >= len(self)):
            raise IndexError(f"paper position {todo[0] if todo[0] < 0 else todo[-1]} out of range "
                             f"(the atlas has {len(self)} papers)")
        for start in range(0, len(todo), 500):
            chunk = todo[start:start + 500]
            rowids = [int(self.rowids[i]) for i in chunk]
            at = {r: i for i, r in zip(chunk, rowids, strict=True)}
            marks = ", ".join("?" * len(rowids))
            with self._lock:
                rows = self._con.execute(f"SELECT rowid AS _rowid, * FROM papers WHERE rowid IN ({marks})",
                                         rowids).fetchall()
            for r in rows:
                out[at[r["_rowid"]]] = self._keep(at[r["_rowid"]], self._paper(r))
        missing = [i for i in todo if i not in out]
        if missing:  # the row was there when the atlas was opened: the file changed under a read-only connection
            raise DamagedAtlas(self._path, Damage("papers", "id", f"row {int(self.rowids[missing[0]])}",
                                                  "a paper row that is no longer in the file"))
        return [out[i] for i in positions]

    def _paper(self, row: sqlite3.Row) -> Paper:
        try:
            return self._to_paper(row, row["_rowid"])
        except CellError as e:
            raise DamagedAtlas(self._path, e.damage) from None

    def _keep(self, i: int, p: Paper) -> Paper:
        with self._lock:
            kept = self._kept.get(i)
            if kept is not None:  # another thread read it meanwhile: one object per paper while kept
                return kept
            self._kept[i] = p
            if len(self._kept) > CACHE_SIZE:
                self._kept.popitem(last=False)
        return p

    def __iter__(self) -> Iterator[Paper]:
        """Every paper in stored order, read :data:`CHUNK` rows at a time (none kept unless already kept)."""
        for start, rows in self._chunks("*"):
            with self._lock:
                kept = dict(self._kept)
            for r in rows:
                i = start + int(np.searchsorted(self.rowids[start:start + CHUNK], r["_rowid"]))
                yield kept.get(i) or self._paper(r)

    def _chunks(self, cols: str) -> Iterator[tuple[int, list[sqlite3.Row]]]:
        """``(position of the first, rows)`` of every :data:`CHUNK` papers in stored order, one statement each.

        Each row holds ``rowid AS _rowid`` and ``cols`` (SQL, not user input); no statement stays open between chunks.
        """
        n = len(self)
        for start in range(0, n, CHUNK):
            lo, hi = int(self.rowids[start]), int(self.rowids[min(start + CHUNK, n) - 1])
            with self._lock:
                rows = self._con.execute(f"SELECT rowid AS _rowid, {cols} FROM papers "
                                         "WHERE rowid BETWEEN ? AND ? ORDER BY rowid", (lo, hi)).fetchall()
            yield start, rows  # the lock is not held while the caller reads the chunk

    def __contains__(self, p) -> bool:
        raise TypeError("`paper in atlas.papers` would read every paper: test `paper.id in atlas.by_id`")

    def fields(self, *names: str) -> Iterator[tuple]:
        """Some columns of every paper in stored order, checked and decoded as :class:`Paper` fields (JSON lists).

        For passes over a large atlas that need a few fields (``status``, ``topic_id``, ``keyphrases``): a few µs a
        paper against ~40 µs for a whole paper. Papers already kept are read from the kept object.

        Args:
            names: :class:`~paperatlas.model.Paper` field names stored as ``papers`` columns (not user input).

        Yields:
            One tuple of ``len(names)`` values per paper (a NULL JSON column as its empty value).

        Raises:
            paperatlas.store.check.DamagedAtlas: A damaged value (named by file, column and paper).
        """
        for _, rows in self._chunks(", ".join(["id", *names])):
            for r in rows:
                try:
                    d = dict(validate_row("papers", r, list(names), r["_rowid"]))
                except CellError as e:
                    raise DamagedAtlas(self._path, e.damage) from None
                yield tuple(_EMPTY.get(k, v) if v is None else v for k, v in ((k, d[k]) for k in names))


#: what a NULL JSON column reads as (:func:`paperatlas.store.sqlite.row_to_paper` leaves the field's default)
_EMPTY = {"authors": [], "links": [], "sources": [], "given_keyphrases": [], "sections": [], "affiliations": [],
          "extra": {}, "keyphrases": [], "secondary_topic_ids": []}


class StoredPapersById(Mapping):
    """``atlas.by_id`` of a large atlas: paper id -> :class:`~paperatlas.model.Paper`, read through ``papers``.

    Args:
        papers: The atlas's :class:`StoredPapers`.
        position: ``paper id -> position in papers``.
    """

    def __init__(self, papers: StoredPapers, position: dict[str, int]):
        self._papers = papers
        self.position = position

    def __getitem__(self, pid: str) -> Paper:
        return self._papers[self.position[pid]]

    def __contains__(self, pid) -> bool:
        return pid in self.position

    def __iter__(self) -> Iterator[str]:
        return iter(self.position)

    def __len__(self) -> int:
        return len(self.position)

    def values(self):
        """Every paper in stored order (read in chunks, none kept)."""
        return iter(self._papers)

    def items(self):
        """``(id, paper)`` in stored order (read in chunks, none kept)."""
        return ((p.id, p) for p in self._papers)


def read_order(con: sqlite3.Connection) -> tuple[np.ndarray, list[str], dict[str, int]]:
    """The stored order of a large atlas's papers: rowids, ids and each id's position.

    Raises:
        paperatlas.store.check.CellError: An id that is not non-empty text, or the id of two papers.
    """
    rowids, ids, position = [], [], {}
    for rowid, pid in con.execute("SELECT rowid, id FROM papers ORDER BY rowid"):
        if type(pid) is not str or not pid:
            raise CellError(Damage("papers", "id", f"row {rowid}", f"{pid!r}, not a paper id"))
        if pid in position:
            raise CellError(Damage("papers", "id", f"paper {pid!r}", "the id of two papers"))
        position[pid] = len(ids)
        rowids.append(rowid)
        ids.append(pid)
    return np.array(rowids, dtype=np.int64), ids, position


def read_vectors(con: sqlite3.Connection, ids: list[str], position: dict[str, int]
                 ) -> tuple[list[str], np.ndarray, str]:
    """The embeddings of a large atlas as one matrix, in the papers' stored order, read in chunks.

    One ``(n_papers, dim)`` matrix is filled by paper position and, when some papers have no vector, compacted in
    place: no second copy of the vectors is made (1.5 GB at 1M papers of 384 dimensions).

    Args:
        con: The atlas's connection.
        ids: The paper ids in stored order (:func:`read_order`).
        position: ``paper id -> position`` in ``ids``; embeddings of other ids are left out.

    Returns:
        ``(ids with a vector, vectors, model)``: the ids in stored order, ``(len(those ids), dim)`` float32 (as
        stored: L2-normalised by the build), and the name of the embedding model ("" without embeddings).

    Raises:
        paperatlas.store.check.CellError: A vector that is not finite float32 of the atlas's dimension.
    """
    model_row = con.execute("SELECT model FROM embeddings LIMIT 1").fetchone()
    if model_row is None:
        return [], np.zeros((0, 0), np.float32), ""
    dim = model_dim(model_row[0])
    has = np.zeros(len(ids), dtype=bool)
    matrix: np.ndarray | None = None
    cur = con.execute("SELECT rowid, paper_id, vector FROM embeddings")
    while True:
        rows = cur.fetchmany(CHUNK)
        if not rows:
            break
        vec, dim, bad = check_vectors([(r[1], r[2], r[0]) for r in rows if r[1] in position], dim)
        if bad:
            raise CellError(bad[0])
        if matrix is None and vec:
            matrix = np.empty((len(ids), dim), dtype=np.float32)
        for pid, v in vec.items():
            i = position[pid]
            matrix[i] = v
            has[i] = True
    if matrix is None:
        return [], np.zeros((0, 0), np.float32), str(model_row[0] or "")
    rows_at = np.flatnonzero(has)
    if len(rows_at) < len(ids):  # compact in place: each row moves up, chunks in ascending order
        for start in range(0, len(rows_at), CHUNK):
            src = rows_at[start:start + CHUNK]
            matrix[start:start + len(src)] = matrix[src]
        matrix = matrix[:len(rows_at)]
    kept = ids if len(rows_at) == len(ids) else [ids[int(i)] for i in rows_at]
    return kept, matrix, str(model_row[0] or "")


class PaperView(Sequence):
    """The papers at some positions of ``atlas.papers`` (a topic's members, a sorted list), read when indexed.

    A page of a list over a large atlas then reads its 50 papers, and a list kept for the next page holds ints, not
    papers. Over a list of papers (a small atlas) indexing is a list lookup.

    Args:
        papers: ``atlas.papers`` (a list, or a :class:`StoredPapers`).
        positions: ``(n,)`` the positions, in the view's order.
    """

    def __init__(self, papers: Sequence[Paper], positions):
        self._papers = papers
        self.positions = np.asarray(positions, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return _read(self._papers, self.positions[i])
        return self._papers[int(self.positions[i])]

    def __iter__(self) -> Iterator[Paper]:
        for start in range(0, len(self.positions), CHUNK):
            yield from _read(self._papers, self.positions[start:start + CHUNK])


def _read(papers: Sequence[Paper], positions: np.ndarray) -> list[Paper]:
    """``[papers[i] for i in positions]``, one statement per 500 papers for a :class:`StoredPapers`."""
    if isinstance(papers, StoredPapers):
        return papers.read(positions.tolist())
    return [papers[i] for i in positions.tolist()]


#: bytes read at a time from a large stored model (:meth:`paperatlas.store.Atlas.stored_model` with ``buffer``)
BLOB_CHUNK = 16 * 2**20


def model_reader(con: sqlite3.Connection, name: str) -> BlobReader | None:
    """A :class:`BlobReader` of the stored model ``name``, or None when there is none (or it is not a BLOB)."""
    try:
        head = con.execute("SELECT rowid, typeof(blob), length(blob) FROM models WHERE name = ?", (name,)).fetchone()
    except sqlite3.OperationalError:  # an atlas made before the models table
        return None
    return BlobReader(con, head[0], head[2]) if head is not None and head[1] == "blob" else None


class BlobReader:
    """Parts of one stored model (``models.blob`` of one row), read from the file when asked for; thread-safe.

    Each :meth:`read` (or :meth:`session`) opens SQLite's blob handle and closes it again: an open handle is a read
    transaction, which would make every write to the atlas (a like, a note: another connection) wait and fail with
    "database is locked" for as long as it stayed open.

    Args:
        con: The atlas's read-only connection.
        rowid: The ``models`` row.
        size: The blob's length in bytes.
    """

    def __init__(self, con: sqlite3.Connection, rowid: int, size: int):
        self.size = size
        self._con, self._rowid = con, rowid
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def session(self) -> Iterator[Callable[[int, int], bytes]]:
        """One open handle for several reads: yields ``read(offset, n) -> bytes``.

        Raises:
            ValueError: An offset outside the blob.
        """
        with self._lock, self._con.blobopen("models", "blob", self._rowid, readonly=True) as blob:
            def read(offset: int, n: int) -> bytes:
                if not 0 <= offset <= self.size:
                    raise ValueError(f"offset {offset} outside a blob of {self.size} bytes")
                blob.seek(offset)
                return blob.read(n)

            yield read

    def read(self, offset: int, n: int) -> bytes:
        """``n`` bytes from ``offset`` (fewer at the end of the blob).

        Raises:
            ValueError: ``offset`` outside the blob.
        """
        with self.session() as read:
            return read(offset, n)

    def read_all(self) -> bytearray:
        """The whole blob, read :data:`BLOB_CHUNK` bytes at a time into one ``bytearray``.

        ``SELECT blob`` holds a blob twice while it is read (SQLite's copy and Python's bytes): 674 MB too many for
        the 1M-paper TF-IDF.
        """
        out = bytearray(self.size)
        view = memoryview(out)
        for at, piece in self.chunks():
            view[at:at + len(piece)] = piece
        return out

    def chunks(self) -> Iterator[tuple[int, bytes]]:
        """``(offset, bytes)`` of the whole blob, :data:`BLOB_CHUNK` bytes at a time, through one handle."""
        with self.session() as read:
            for at in range(0, self.size, BLOB_CHUNK):
                yield at, read(at, BLOB_CHUNK)


class SpilledBlob:
    """A stored model copied once into an anonymous temporary file, then read from it (no SQLite, no transaction).

    For a large model read in many small pieces for as long as the app runs (the 1M-paper TF-IDF's rows): a fresh
    SQLite blob handle walks the blob's overflow-page chain to its offset (~180 ms a related-papers request at
    674 MB), and a handle kept open is a read transaction that blocks every write to the atlas. The file is
    deleted when closed or when the process ends; its pages live in the OS's file cache, not in this process.

    Args:
        reader: The stored model (:class:`BlobReader`), copied :data:`BLOB_CHUNK` bytes at a time.
    """

    def __init__(self, reader: BlobReader):
        self.size = reader.size
        self._file = tempfile.TemporaryFile(prefix="paperatlas-model-")
        for _, piece in reader.chunks():
            self._file.write(piece)
        self._file.flush()
        self._lock = threading.Lock()  # for platforms without os.pread

    def read(self, offset: int, n: int) -> bytes:
        """``n`` bytes from ``offset`` (fewer at the end)."""
        if hasattr(os, "pread"):
            return os.pread(self._file.fileno(), n, offset)
        with self._lock:
            self._file.seek(offset)
            return self._file.read(n)

    @contextlib.contextmanager
    def session(self) -> Iterator[Callable[[int, int], bytes]]:
        """Yields :meth:`read` (the same interface as :meth:`BlobReader.session`)."""
        yield self.read

    def close(self) -> None:
        """Delete the copy."""
        self._file.close()
