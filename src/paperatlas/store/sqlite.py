"""The default store: one SQLite file per atlas (papers, embeddings, topics, FTS5 index, metadata).

Writes go through :func:`atomic_rebuild`, which works on a private copy of the atlas file and swaps it into
place with ``os.replace`` only after a successful commit, so a crash or kill at any point leaves the previous
atlas readable and unchanged. The copy is brought to the current schema by the numbered migrations of
:mod:`paperatlas.store.migrations`. The reader's tables (marks, lists, overrides: :mod:`paperatlas.store.userdata`)
are carried over by that copy and copied again from the live file just before the swap; the swap holds the
atlas's swap lock (:func:`paperatlas.store.lock.swap_lock`), which every reader's write holds shared, so no write is
made between that copy and the rename, nor into the replaced file.
"""

from __future__ import annotations

import contextlib
import gc
import glob
import json
import os
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np

from ..model import Paper, Topic
from . import lazy
from .audit import audit_tables, schema_damage
from .check import COLUMNS, CellError, Damage, DamagedAtlas, damaged, validate_row
from .connection import AtlasNotFound, MalformedAtlas, connect, file_identity
from .embeddings import cached_embeddings, check_vectors, model_dim, stored_paper_count, write_embeddings
from .lock import DEFAULT_TIMEOUT as DEFAULT_LOCK_TIMEOUT
from .lock import build_lock, swap_lock
from .migrations import LATEST, migrate
from .models import read_model, write_model, write_model_from
from .overviews import overview_cells
from .paper_rows import _JSON_FIELDS, _SCALAR_FIELDS, paper_texts, write_papers
from .userdata import (  # build.py calls these as paperatlas.store.sqlite.*
    EDIT_METHOD,
    EDITABLE_FIELDS,
    USER_TABLES,
    apply_overrides,
    carry_user_tables,
    get_overrides,
    relink_user_rows,
)

#: The schema version this code writes: the number of the last migration.
SCHEMA_VERSION = LATEST


__all__ = ["AtlasNotFound", "Atlas", "atomic_rebuild", "connect", "row_to_paper", "SCHEMA_VERSION", "write_papers",
           "paper_texts", "write_topics", "read_model", "write_model", "write_model_from", "previous_placement",
           "previous_topics", "cached_embeddings", "write_embeddings", "stored_paper_count", "set_meta",
           "EDIT_METHOD", "EDITABLE_FIELDS", "USER_TABLES", "apply_overrides", "get_overrides", "relink_user_rows"]


@contextlib.contextmanager
def atomic_rebuild(path: str | Path, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
                   on_wait: Callable[[str], None] | None = None) -> Iterator[sqlite3.Connection]:
    """Yield a writable connection to a private copy of the atlas at ``path`` (or a new empty one).

    The whole rebuild holds the atlas's build lock (:func:`paperatlas.store.lock.build_lock`): a second rebuild
    of the same atlas waits for the first and then starts from its result; the reader's writes do not take the
    lock. Under the lock, the private copies a killed build left behind (``.<name>.*.building`` and its SQLite
    ``-journal``/``-wal``/``-shm`` companions) are deleted first.

    The copy is migrated to the current schema (:func:`paperatlas.store.migrations.migrate`) before it is
    yielded. On normal exit it is committed, the reader's tables are copied again from the live file and
    re-linked to the rebuilt papers, and the copy is closed, fsynced and atomically renamed over ``path``; on any
    exception (or if the process is killed) the copy is deleted/abandoned and ``path`` stays as it was.

    Args:
        path: The atlas file (created, with its directory, when missing).
        lock_timeout: Seconds to wait while another build of the same atlas holds the lock.
        on_wait: Called once with a one-line message when this build starts waiting for another one.

    Yields:
        A writable connection to the private copy (rows as :class:`sqlite3.Row`).

    Raises:
        paperatlas.store.migrations.AtlasTooNew: The atlas at ``path`` was written by a newer paperatlas
            (nothing is written).
        paperatlas.store.lock.AtlasBusy: Another build held the lock for more than ``lock_timeout`` seconds
            (nothing is written).
    """
    target = Path(path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    with build_lock(target, timeout=lock_timeout, on_wait=on_wait):
        # no other build runs now: every private copy here was left by a killed build (with its journal)
        for stale in target.parent.glob(f".{glob.escape(target.name)}.*.building*"):
            if stale.name.endswith((".building", ".building-journal", ".building-wal", ".building-shm")):
                stale.unlink(missing_ok=True)
        yield from _rebuild_copy(target, lock_timeout)


def _rebuild_copy(target: Path, lock_timeout: float) -> Iterator[sqlite3.Connection]:
    """The body of :func:`atomic_rebuild`, run under the build lock: copy, yield, commit and swap.

    The swap (the reader's tables copied again from the live file, the rename) holds the atlas's swap lock
    exclusively (:func:`paperatlas.store.lock.swap_lock`): it waits for the reader's writes in progress to end,
    and a write that starts meanwhile waits for the rename, then opens the new file.
    """
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".building", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        con = sqlite3.connect(tmp, check_same_thread=False)
        con.row_factory = sqlite3.Row
        if target.is_file():
            src = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
            try:
                src.backup(con)
            except sqlite3.DatabaseError as e:  # not SQLite, or corrupt: say so, never replace it
                raise MalformedAtlas(target, f"not an SQLite database: {e}") from e
            finally:
                src.close()
        try:
            migrate(con, target)
            yield con
            con.commit()
            # a rebuild rewrites most tables: give the freed pages back so the file does not grow build by build
            free = con.execute("PRAGMA freelist_count").fetchone()[0]
            if free > 0.25 * con.execute("PRAGMA page_count").fetchone()[0]:
                con.execute("VACUUM")
            with open(tmp, "rb+") as f:  # the bulk of the file on disk before the readers' writes are held off
                os.fsync(f.fileno())
            with swap_lock(target, exclusive=True, timeout=lock_timeout):
                if target.is_file():
                    carry_user_tables(target, con)
                relink_user_rows(con)
                con.close()
                with open(tmp, "rb+") as f:
                    os.fsync(f.fileno())
                os.replace(tmp, target)
        finally:
            con.close()
    finally:
        if tmp.exists():
            tmp.unlink()


#: the columns of ``papers`` a paper is read from, in :data:`paperatlas.store.check.COLUMNS`
_READ_FIELDS = _SCALAR_FIELDS + _JSON_FIELDS


def row_to_paper(row: sqlite3.Row, rowid: int | None = None) -> Paper:
    """The paper stored in a ``papers`` row, every column checked (:mod:`paperatlas.store.check`).

    Args:
        row: A ``SELECT * FROM papers`` row (``sqlite3.Row``); columns an older atlas lacks get the defaults.
        rowid: The row's rowid, to name the row when its id is itself damaged.

    Returns:
        The :class:`~paperatlas.model.Paper` (JSON columns decoded).

    Raises:
        paperatlas.store.check.CellError: A column holds a value of the wrong type (a BLOB title, text in
            ``year``, an infinite ``x``), or JSON that is not of its shape, nested too deep or with NaN (a
            ValueError; the message names the column and the paper).
    """
    cols = set(row.keys())  # an atlas built by an older version lacks the newer columns
    d = dict(validate_row("papers", row, [k for k in _READ_FIELDS if k in cols], rowid))
    for k in _JSON_FIELDS:  # NULL or "" in a JSON column reads as empty
        if d.get(k) is None:
            d.pop(k, None)
    d["low_confidence"] = bool(d.get("low_confidence"))
    return Paper.from_dict(d)


def write_topics(con: sqlite3.Connection, topics: list[Topic], overview_keys: dict[int, str] | None = None) -> None:
    """Replace the atlas's topics (areas and sub-topics), with their overviews.

    Args:
        con: A writable connection (a build's copy, migrated: it has the overview columns).
        topics: The topics to store.
        overview_keys: ``topic id -> overview key`` (:func:`paperatlas.enrich.overview.overview_key` of what each
            overview was made from); a topic without one stores NULL (its overview is made again next build).
    """
    keys = overview_keys or {}
    con.execute("DELETE FROM topics")
    con.executemany(
        "INSERT INTO topics (id, label, size, keyphrases, parent_id, x, y, method, level, overview, overview_papers, "
        "overview_method, overview_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(t.id, t.label, t.size, json.dumps(t.keyphrases), t.parent_id, t.x, t.y, t.method, t.level,
          t.overview or None, json.dumps(t.overview_papers) if t.overview_papers else None, t.overview_method or None,
          keys.get(t.id)) for t in topics],
    )


def previous_placement(con: sqlite3.Connection) -> dict[str, tuple[int | None, float | None, float | None, str]]:
    """Where each paper was placed before this build rewrites the papers.

    Args:
        con: A connection to the atlas (a build's copy, before :func:`write_papers`).

    Returns:
        ``paper_id -> (topic_id, x, y, content_hash)`` (empty for a new atlas).
    """
    try:
        rows = con.execute("SELECT id, topic_id, x, y, content_hash FROM papers").fetchall()
    except sqlite3.OperationalError:
        return {}
    return {r[0]: (r[1], r[2], r[3], r[4] or "") for r in rows}


def previous_topics(con: sqlite3.Connection) -> dict[int, Topic]:
    """The topics the atlas held before this build rewrites them.

    Args:
        con: A connection to the atlas (a build's copy, before :func:`write_topics`).

    Returns:
        ``topic id -> Topic`` (areas and sub-topics; empty for a new atlas). A row that cannot be decoded is left
        out (the build rewrites the topics).
    """
    try:
        rows = con.execute("SELECT * FROM topics").fetchall()
    except sqlite3.OperationalError:
        return {}
    out = {}
    for r in rows:
        with contextlib.suppress(ValueError, TypeError):
            out[r["id"]] = _row_to_topic(r)
    return out


def _row_to_topic(r: sqlite3.Row) -> Topic:
    """The topic in a ``topics`` row.

    Raises:
        paperatlas.store.check.CellError: A column holds a value of the wrong type (text in ``x``, a BLOB
            label), or its keyphrases are not a JSON list of strings (a ValueError naming the column and topic).
    """
    spec = COLUMNS["topics"]
    v = dict(validate_row("topics", r, [c for c in r.keys() if c in spec]))
    ov = overview_cells(r)  # an atlas made before migration 5 has no overview columns: empty
    return Topic(id=v["id"], label=v["label"], size=v.get("size") or 0, keyphrases=v.get("keyphrases") or [],
                 parent_id=v.get("parent_id"), x=v.get("x") or 0.0, y=v.get("y") or 0.0, method=v.get("method") or "",
                 level=v["level"] if v.get("level") is not None else 1, overview=ov["overview"] or "",
                 overview_papers=ov["overview_papers"] or [], overview_method=ov["overview_method"] or "")


def set_meta(con: sqlite3.Connection, **values) -> None:
    """Store metadata of the atlas.

    Args:
        con: A writable connection (a build's copy).
        **values: ``key=value`` pairs; each value is stored JSON-encoded, replacing the key's previous value.
    """
    con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    [(k, json.dumps(v, ensure_ascii=False)) for k, v in values.items()])


T = TypeVar("T")


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (loading creates objects, none of them garbage)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Atlas:
    """Read-only view of an atlas file, loaded into memory for querying.

    Attributes:
        path: The atlas file.
        con: The read-only connection (rows as :class:`sqlite3.Row`).
        papers: ``list[Paper]`` in stored order; from :data:`~paperatlas.store.lazy.LAZY_MIN_PAPERS` papers a
            :class:`~paperatlas.store.lazy.StoredPapers` (read on demand, ``lazy`` True).
        by_id: ``paper id -> Paper`` (a :class:`~paperatlas.store.lazy.StoredPapersById` when ``lazy``).
        paper_ids: ``list[str]``, the id of every paper in ``papers`` order.
        lazy: Whether the papers are read on demand.
        topics: ``topic id -> Topic``.
        ids: ``list[str]``, the row order of ``vectors``.
        vectors: ``(n_papers, dim)`` float32, L2-normalised; empty ``(0, 0)`` when the atlas has no embeddings.
        row_of: ``paper id -> row`` of ``vectors``.
        embed_model: The name of the model that made the vectors.
        meta: ``key -> value`` of the ``meta`` table (JSON-decoded).

    Args:
        path: The atlas file.

    Raises:
        AtlasNotFound: The file is missing.
        MalformedAtlas: The file is not SQLite or lacks an atlas table; or (as its subclass
            :class:`~paperatlas.store.check.DamagedAtlas`) lacks a table or column its schema version has, or a
            value read is damaged (:mod:`paperatlas.store.check`: the type of every column, JSON of its shape and
            at most 32 levels deep, finite numbers, embeddings of the atlas's dimension); one line naming the
            file and the cell.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.con = connect(self.path, readonly=True)
        #: ``(device, inode)`` of the file read (:func:`~paperatlas.store.connection.file_identity`), or None
        self.file_identity = file_identity(self.path)
        try:
            with _gc_paused():  # 7 full collections (1.4 s) over the new objects at 42k papers otherwise
                self._load()
        except MalformedAtlas:
            self.con.close()
            raise
        except CellError as e:
            self.con.close()
            raise DamagedAtlas(self.path, e.damage) from None
        except sqlite3.OperationalError as e:
            self.con.close()
            if "decode" in str(e).lower():  # text that is not UTF-8: find the cell
                found = [d for d in audit_tables(self.path) if "UTF-8" in d.what]
                if found:
                    raise DamagedAtlas(self.path, found[0]) from None
            if "no such" not in str(e):  # locked, I/O: not the file's fault
                raise
            raise MalformedAtlas(self.path, str(e)) from e
        except (sqlite3.DatabaseError, ValueError, TypeError) as e:
            self.con.close()
            raise MalformedAtlas(self.path, str(e)) from e
        self._derived: dict[str, object] = {}
        self._derived_locks: dict[str, threading.Lock] = {}
        self._derived_guard = threading.Lock()

    def _load(self) -> None:
        """Read the whole atlas into memory (see :meth:`__init__`), every value checked (:mod:`.check`)."""
        missing = schema_damage(self.con)
        if missing:
            raise DamagedAtlas(self.path, missing[0])
        self.meta = {}
        for r in self.con.execute("SELECT rowid, key, value FROM meta"):
            values = dict(validate_row("meta", r, ["key", "value"], r[0]))
            self.meta[values["key"]] = values["value"]
        self.topics: dict[int, Topic] = {}
        for r in self.con.execute("SELECT * FROM topics ORDER BY id"):
            t = _row_to_topic(r)
            self.topics[t.id] = t
        #: True when the papers are read from the file on demand (:mod:`.lazy`, from ``LAZY_MIN_PAPERS``)
        self.lazy = lazy.stored_paper_count(self.con) >= lazy.LAZY_MIN_PAPERS
        if self.lazy:
            self._load_lazy()
            return
        self.papers = [row_to_paper(r, r["_rowid"])
                       for r in self.con.execute("SELECT rowid AS _rowid, * FROM papers ORDER BY rowid")]
        self.by_id = {p.id: p for p in self.papers}
        if len(self.by_id) < len(self.papers):
            seen: set[str] = set()
            twice = next(p.id for p in self.papers if p.id in seen or seen.add(p.id))
            raise CellError(Damage("papers", "id", f"paper {twice!r}", "the id of two papers"))
        #: ``list[str]``: the id of every paper, in ``papers`` order
        self.paper_ids = [p.id for p in self.papers]
        rows = self.con.execute("SELECT rowid, paper_id, model, vector FROM embeddings").fetchall()
        for r in rows:
            list(validate_row("embeddings", r, ["paper_id", "model"], r[0]))
        vec, _, bad = check_vectors([(r[1], r[3], r[0]) for r in rows], model_dim(rows[0][2]) if rows else None)
        if bad:
            raise CellError(bad[0])
        self.embed_model = str(rows[0][2] or "") if rows else ""
        self.ids = [p.id for p in self.papers if p.id in vec]
        self.vectors = np.stack([vec[i] for i in self.ids]) if self.ids else np.zeros((0, 0), np.float32)
        self.row_of = {pid: i for i, pid in enumerate(self.ids)}

    def _load_lazy(self) -> None:
        """The ids and vectors of a large atlas; its papers read on demand (:mod:`.lazy`)."""
        rowids, self.paper_ids, position = lazy.read_order(self.con)
        self.papers = lazy.StoredPapers(self.con, rowids, row_to_paper, threading.Lock(), self.path)
        self.by_id = lazy.StoredPapersById(self.papers, position)
        self.ids, self.vectors, self.embed_model = lazy.read_vectors(self.con, self.paper_ids, position)
        self.row_of = position if self.ids is self.paper_ids else {pid: i for i, pid in enumerate(self.ids)}

    def fields(self, *names: str) -> Iterator[tuple]:
        """Some fields of every paper, in ``papers`` order, as tuples (``fields("status", "topic_id")``).

        Read in chunks when the atlas is :attr:`lazy` (:meth:`.lazy.StoredPapers.fields`), else from memory.

        Args:
            names: :class:`~paperatlas.model.Paper` fields stored as columns (JSON ones decoded as lists/dicts).

        Raises:
            paperatlas.store.check.DamagedAtlas: A damaged value read from a lazy atlas.
        """
        if self.lazy:
            return self.papers.fields(*names)
        return (tuple(getattr(p, k) for k in names) for p in self.papers)

    def derived(self, name: str, compute: Callable[[], T]) -> T:
        """A value computed from this atlas once and kept with the atlas object.

        ``compute()`` runs the first time ``name`` is asked for (query-side indexes: the recommender's TF-IDF
        matrix, document frequencies, topic centroids). Thread-safe: concurrent callers of one ``name`` wait for a
        single computation, other names are not held up. The atlas is read-only, so a value never goes stale
        while the object lives.

        Args:
            name: The value's key.
            compute: Makes the value (called at most once per name).

        Returns:
            The value.
        """
        with self._derived_guard:
            if name in self._derived:
                return self._derived[name]  # type: ignore[return-value]
            lock = self._derived_locks.setdefault(name, threading.Lock())
        with lock:
            if name not in self._derived:
                value = compute()
                with self._derived_guard:
                    self._derived.setdefault(name, value)
        return self._derived[name]  # type: ignore[return-value]

    def prepare(self, name: str, compute: Callable[[], object]) -> None:
        """Compute the :meth:`derived` value ``name`` ahead of need, without holding its lock.

        For a warm-up whose ``compute`` pauses while requests are answered: a request that needs the value then
        computes it itself rather than wait on a paused thread that waits on it. The first value stored wins.

        Args:
            name: The value's key, as :meth:`derived` is asked for it.
            compute: Makes the value.
        """
        with self._derived_guard:
            if name in self._derived:
                return
        value = compute()
        with self._derived_guard:
            self._derived.setdefault(name, value)

    def stored_model(self, name: str, buffer: bool = False) -> bytes | bytearray | None:
        """The blob the build stored as ``name`` (e.g. ``"recommender.tfidf"``) in ``models``.

        Args:
            name: The blob's name.
            buffer: A large blob may come as a ``bytearray`` (:meth:`.lazy.BlobReader.read_all`: read piece by piece,
                held once), for loaders that take any buffer.

        Returns:
            The bytes (checked by their loader), or None when there is none.

        Raises:
            paperatlas.store.check.DamagedAtlas: The stored value is not a BLOB (text, a number).
        """
        try:
            if buffer and (reader := lazy.model_reader(self.con, name)) and reader.size > lazy.BLOB_CHUNK:
                return reader.read_all()
            row = self.con.execute("SELECT rowid, name, blob FROM models WHERE name = ?", (name,)).fetchone()
        except sqlite3.OperationalError:  # an atlas made before the models table
            return None
        if row is None:
            return None
        try:
            return dict(validate_row("models", row, ["blob"], row[0]))["blob"]
        except CellError as e:
            raise damaged(self.con, e.damage) from None

    def model_reader(self, name: str) -> lazy.BlobReader | None:
        """Parts of the stored model ``name`` read on demand (:class:`.lazy.BlobReader`), or None when not stored."""
        return lazy.model_reader(self.con, name)

    def close(self) -> None:
        """Close the underlying connection, and the derived values that have a ``close()`` (their own ones)."""
        self.con.close()
        for value in list(self._derived.values()):
            if callable(getattr(value, "close", None)):
                value.close()

    def topic_label(self, topic_id: int | None) -> str:
        """A topic's label.

        Args:
            topic_id: The topic's id, or None.

        Returns:
            The label, or ``""`` for None or an unknown id.
        """
        t = self.topics.get(topic_id) if topic_id is not None else None
        return t.label if t else ""

    def area_of(self, topic_id: int | None) -> Topic | None:
        """The area (level-0 topic) a topic belongs to.

        Args:
            topic_id: The topic's id, or None.

        Returns:
            Its parent, or the topic itself when it is an area (or the atlas predates areas); None for no topic.
        """
        t = self.topics.get(topic_id) if topic_id is not None else None
        if t is None:
            return None
        return self.topics.get(t.parent_id, t) if t.parent_id is not None else t

    def areas(self) -> list[Topic]:
        """The areas.

        Returns:
            Level-0 topics, largest first (every topic when the atlas has no hierarchy).
        """
        tops = [t for t in self.topics.values() if t.level == 0] or list(self.topics.values())
        return sorted(tops, key=lambda t: (-t.size, t.id))

    def subtopics(self, area_id: int) -> list[Topic]:
        """The sub-topics of an area.

        Args:
            area_id: The area's id.

        Returns:
            Its sub-topics, largest first.
        """
        return sorted((t for t in self.topics.values() if t.parent_id == area_id), key=lambda t: (-t.size, t.id))
