"""The default store: one SQLite file per atlas (papers, embeddings, topics, FTS5 index, metadata).

Writes go through :func:`atomic_rebuild`, which works on a private copy of the atlas file and swaps it into
place with ``os.replace`` only after a successful commit, so a crash or kill at any point leaves the previous
atlas readable and unchanged. The copy is brought to the current schema by the numbered migrations of
:mod:`paperatlas.store.migrations`. The reader's tables (marks, lists, overrides: :mod:`paperatlas.store.userdata`)
are carried over by that copy and copied again from the live file just before the swap.
"""

from __future__ import annotations

import contextlib
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
from .connection import AtlasNotFound, connect
from .lock import DEFAULT_TIMEOUT as DEFAULT_LOCK_TIMEOUT
from .lock import build_lock
from .migrations import LATEST, migrate
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

_JSON_FIELDS = ("authors", "links", "sources", "given_keyphrases", "sections", "affiliations", "extra", "keyphrases",
                "secondary_topic_ids")
_SCALAR_FIELDS = ("id", "title", "abstract", "venue", "year", "status", "track", "digest", "tldr", "tldr_method",
                  "keyphrases_method", "topic_id", "topic_confidence", "low_confidence", "x", "y")
_PAPER_COLS = _SCALAR_FIELDS + _JSON_FIELDS

__all__ = ["AtlasNotFound", "Atlas", "atomic_rebuild", "connect", "row_to_paper", "SCHEMA_VERSION", "write_papers",
           "write_topics", "read_model", "write_model", "previous_placement", "previous_topics", "cached_embeddings",
           "write_embeddings", "set_meta", "EDIT_METHOD", "EDITABLE_FIELDS", "USER_TABLES", "apply_overrides",
           "get_overrides", "relink_user_rows"]


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
        yield from _rebuild_copy(target)


def _rebuild_copy(target: Path) -> Iterator[sqlite3.Connection]:
    """The body of :func:`atomic_rebuild`, run under the build lock: copy, yield, commit and swap."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".building", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        con = sqlite3.connect(tmp, check_same_thread=False)
        con.row_factory = sqlite3.Row
        if target.is_file():
            src = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
            src.backup(con)
            src.close()
        try:
            migrate(con, target)
            yield con
            con.commit()
            if target.is_file():
                carry_user_tables(target, con)
            relink_user_rows(con)
            # a rebuild rewrites most tables: give the freed pages back so the file does not grow build by build
            free = con.execute("PRAGMA freelist_count").fetchone()[0]
            if free > 0.25 * con.execute("PRAGMA page_count").fetchone()[0]:
                con.execute("VACUUM")
        finally:
            con.close()
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def row_to_paper(row: sqlite3.Row) -> Paper:
    """The paper stored in a ``papers`` row.

    Args:
        row: A ``SELECT * FROM papers`` row (``sqlite3.Row``); columns an older atlas lacks get the defaults.

    Returns:
        The :class:`~paperatlas.model.Paper` (JSON columns decoded).
    """
    cols = set(row.keys())  # an atlas built by an older version lacks the newer columns
    d = {k: row[k] for k in _SCALAR_FIELDS if k in cols}
    for k in _JSON_FIELDS:
        if k in cols:
            d[k] = json.loads(row[k]) if row[k] else ([] if k != "extra" else {})
    d["low_confidence"] = bool(d.get("low_confidence"))
    return Paper.from_dict(d)


def write_papers(con: sqlite3.Connection, papers: list[Paper], content_hashes: dict[str, str]) -> None:
    """Replace the atlas's papers and FTS index with ``papers`` (all fields, generated ones included).

    Args:
        con: A writable connection (a build's copy, see :func:`atomic_rebuild`).
        papers: The papers, in the order they are stored.
        content_hashes: ``paper_id -> hash`` of the text that was embedded (missing ids store ``""``).
    """
    con.execute("DELETE FROM papers")
    con.execute("DELETE FROM papers_fts")
    rows = []
    for p in papers:
        d = p.to_dict()
        rows.append([d[k] for k in _SCALAR_FIELDS] + [json.dumps(d[k], ensure_ascii=False) for k in _JSON_FIELDS]
                    + [content_hashes.get(p.id, "")])
    cols = list(_PAPER_COLS) + ["content_hash"]
    con.executemany(f"INSERT INTO papers ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", rows)
    con.executemany(
        "INSERT INTO papers_fts (paper_id, title, authors, abstract, keyphrases, tldr) VALUES (?, ?, ?, ?, ?, ?)",
        [(p.id, p.title, ", ".join(p.authors), p.abstract, "; ".join(p.keyphrases + p.given_keyphrases), p.tldr)
         for p in papers],
    )


def write_topics(con: sqlite3.Connection, topics: list[Topic]) -> None:
    """Replace the atlas's topics (areas and sub-topics).

    Args:
        con: A writable connection (a build's copy).
        topics: The topics to store.
    """
    con.execute("DELETE FROM topics")
    con.executemany(
        "INSERT INTO topics (id, label, size, keyphrases, parent_id, x, y, method, level) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(t.id, t.label, t.size, json.dumps(t.keyphrases), t.parent_id, t.x, t.y, t.method, t.level)
         for t in topics],
    )


def read_model(con: sqlite3.Connection, name: str) -> bytes | None:
    """A stored blob, e.g. the pickled topic model.

    Args:
        con: An open connection to the atlas.
        name: The blob's name (``"topics"``: the topic model).

    Returns:
        The bytes, or None when there is none (or the atlas predates the ``models`` table).
    """
    try:
        row = con.execute("SELECT blob FROM models WHERE name = ?", (name,)).fetchone()
    except sqlite3.OperationalError:  # an atlas made before the models table
        return None
    return bytes(row[0]) if row else None


def write_model(con: sqlite3.Connection, name: str, blob: bytes) -> None:
    """Store a blob under a name, replacing any previous one.

    Args:
        con: A writable connection (a build's copy).
        name: The blob's name.
        blob: The bytes.
    """
    con.execute("INSERT OR REPLACE INTO models VALUES (?, ?)", (name, blob))


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
        ``topic id -> Topic`` (areas and sub-topics; empty for a new atlas).
    """
    try:
        rows = con.execute("SELECT * FROM topics").fetchall()
    except sqlite3.OperationalError:
        return {}
    return {r["id"]: _row_to_topic(r) for r in rows}


def _row_to_topic(r: sqlite3.Row) -> Topic:
    cols = set(r.keys())
    return Topic(id=r["id"], label=r["label"], size=r["size"] or 0, keyphrases=json.loads(r["keyphrases"] or "[]"),
                 parent_id=r["parent_id"], x=r["x"] or 0.0, y=r["y"] or 0.0, method=r["method"] or "",
                 level=r["level"] if "level" in cols and r["level"] is not None else 1)


def cached_embeddings(con: sqlite3.Connection, model: str) -> dict[str, tuple[str, np.ndarray]]:
    """The stored embeddings made by one model.

    Args:
        con: A connection to the atlas.
        model: The embedding model's name.

    Returns:
        ``paper_id -> (content_hash, vector)``, each vector of shape ``(dim,)``, float32.
    """
    out = {}
    for row in con.execute("SELECT paper_id, content_hash, vector FROM embeddings WHERE model = ?", (model,)):
        out[row[0]] = (row[1], np.frombuffer(row[2], dtype=np.float32))
    return out


def write_embeddings(con: sqlite3.Connection, model: str, ids: list[str], hashes: list[str],
                     vectors: np.ndarray) -> None:
    """Replace all stored embeddings.

    Args:
        con: A writable connection (a build's copy).
        model: The embedding model's name.
        ids: The papers' ids, one per row of ``vectors``.
        hashes: The hash of each paper's embedded text, one per row.
        vectors: Shape ``(len(ids), dim)``, stored as float32.

    Raises:
        ValueError: ``ids``, ``hashes`` and ``vectors`` differ in length.
    """
    con.execute("DELETE FROM embeddings")
    con.executemany(
        "INSERT INTO embeddings (paper_id, model, content_hash, vector) VALUES (?, ?, ?, ?)",
        [(i, model, h, np.asarray(v, dtype=np.float32).tobytes())
         for i, h, v in zip(ids, hashes, vectors, strict=True)],
    )


def set_meta(con: sqlite3.Connection, **values) -> None:
    """Store metadata of the atlas.

    Args:
        con: A writable connection (a build's copy).
        **values: ``key=value`` pairs; each value is stored JSON-encoded, replacing the key's previous value.
    """
    con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    [(k, json.dumps(v, ensure_ascii=False)) for k, v in values.items()])


T = TypeVar("T")


class Atlas:
    """Read-only view of an atlas file, loaded into memory for querying.

    Attributes:
        path: The atlas file.
        con: The read-only connection (rows as :class:`sqlite3.Row`).
        papers: ``list[Paper]`` in stored order.
        by_id: ``paper id -> Paper``.
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
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.con = connect(self.path, readonly=True)
        self.meta = {r[0]: json.loads(r[1]) for r in self.con.execute("SELECT key, value FROM meta")}
        self.papers = [row_to_paper(r) for r in self.con.execute("SELECT * FROM papers ORDER BY rowid")]
        self.by_id = {p.id: p for p in self.papers}
        self.topics: dict[int, Topic] = {}
        for r in self.con.execute("SELECT * FROM topics ORDER BY id"):
            self.topics[r["id"]] = _row_to_topic(r)
        rows = self.con.execute("SELECT paper_id, model, vector FROM embeddings").fetchall()
        vec = {r[0]: np.frombuffer(r[2], dtype=np.float32) for r in rows}
        self.embed_model = rows[0][1] if rows else ""
        self.ids = [p.id for p in self.papers if p.id in vec]
        self.vectors = np.stack([vec[i] for i in self.ids]) if self.ids else np.zeros((0, 0), np.float32)
        self.row_of = {pid: i for i, pid in enumerate(self.ids)}
        self._derived: dict[str, object] = {}
        self._derived_locks: dict[str, threading.Lock] = {}
        self._derived_guard = threading.Lock()

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
                self._derived[name] = compute()
        return self._derived[name]  # type: ignore[return-value]

    def close(self) -> None:
        """Close the underlying connection."""
        self.con.close()

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
