"""The default store: one SQLite file per atlas (papers, embeddings, topics, FTS5 index, metadata).

Writes go through :func:`atomic_rebuild`, which works on a private copy of the atlas file and swaps it into
place with ``os.replace`` only after a successful commit, so a crash or kill at any point leaves the previous
atlas readable and unchanged. Tables that are not rebuilt (future user tables: reading list, notes,
overrides) are carried over by that copy.
"""

from __future__ import annotations

import contextlib
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

SCHEMA_VERSION = 2

_JSON_FIELDS = ("authors", "links", "sources", "given_keyphrases", "sections", "affiliations", "extra", "keyphrases",
                "secondary_topic_ids")
_SCALAR_FIELDS = ("id", "title", "abstract", "venue", "year", "status", "track", "digest", "tldr", "tldr_method",
                  "keyphrases_method", "topic_id", "topic_confidence", "low_confidence", "x", "y")
_PAPER_COLS = _SCALAR_FIELDS + _JSON_FIELDS

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS papers (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, abstract TEXT, venue TEXT, year INTEGER, status TEXT,
    track TEXT, digest TEXT, tldr TEXT, tldr_method TEXT, keyphrases_method TEXT, topic_id INTEGER,
    topic_confidence REAL, low_confidence INTEGER, x REAL, y REAL,
    {", ".join(f"{c} TEXT" for c in _JSON_FIELDS)}, content_hash TEXT
);
CREATE INDEX IF NOT EXISTS papers_topic ON papers(topic_id);
CREATE TABLE IF NOT EXISTS embeddings (
    paper_id TEXT PRIMARY KEY, model TEXT NOT NULL, content_hash TEXT NOT NULL, vector BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS topics (
    id INTEGER PRIMARY KEY, label TEXT NOT NULL, size INTEGER, keyphrases TEXT, parent_id INTEGER,
    x REAL, y REAL, method TEXT, level INTEGER
);
CREATE TABLE IF NOT EXISTS models (name TEXT PRIMARY KEY, blob BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS marks (
    paper_id TEXT PRIMARY KEY, title TEXT NOT NULL, rating INTEGER NOT NULL DEFAULT 0,
    note TEXT NOT NULL DEFAULT '', read_at TEXT, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS list_items (
    list TEXT NOT NULL, paper_id TEXT NOT NULL, title TEXT NOT NULL, added_at TEXT NOT NULL,
    PRIMARY KEY (list, paper_id)
);
CREATE TABLE IF NOT EXISTS overrides (
    paper_id TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL, title TEXT, edited_at TEXT NOT NULL,
    PRIMARY KEY (paper_id, field)
);
CREATE VIRTUAL TABLE IF NOT EXISTS papers_fts USING fts5(
    paper_id UNINDEXED, title, authors, abstract, keyphrases, tldr,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


class AtlasNotFound(FileNotFoundError):
    """The atlas file does not exist (run ``paperatlas build`` first)."""


def connect(path: str | Path, readonly: bool = True) -> sqlite3.Connection:
    """Open an atlas file. Read-only connections use ``mode=ro`` so they can never modify it.

    Raises :class:`AtlasNotFound` when ``path`` does not exist (for read-only use).
    """
    p = Path(path)
    if readonly:
        if not p.is_file():
            raise AtlasNotFound(f"{p}: no atlas here; build one with `paperatlas build LISTING --db {p}`")
        con = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True, check_same_thread=False)
    else:
        con = sqlite3.connect(p, check_same_thread=False)
    con.row_factory = sqlite3.Row
    return con


@contextlib.contextmanager
def atomic_rebuild(path: str | Path) -> Iterator[sqlite3.Connection]:
    """Yield a writable connection to a private copy of the atlas at ``path`` (or a new empty one).

    On normal exit the copy is committed, closed, fsynced and atomically renamed over ``path``; on any
    exception (or if the process is killed) the copy is deleted/abandoned and ``path`` stays as it was.
    """
    target = Path(path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f".{target.name}.*.building"):  # left by a killed build
        stale.unlink(missing_ok=True)
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
        _migrate(con)
        con.executescript(SCHEMA)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        try:
            yield con
            con.commit()
            if target.is_file():
                _carry_user_tables(target, con)
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


def _migrate(con: sqlite3.Connection) -> None:
    """Bring a copied older atlas to :data:`SCHEMA_VERSION`: the tables a build rewrites anyway (papers, topics,
    FTS index) are dropped and recreated with the new columns; embeddings and user tables are kept."""
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # a new, empty file
        return
    if row is not None and int(row[0]) < SCHEMA_VERSION:
        for table in ("papers", "topics", "papers_fts"):
            con.execute(f"DROP TABLE IF EXISTS {table}")
        con.commit()


#: Tables written by the reader (never by a build): copied again from the live atlas just before a rebuilt copy
#: replaces it, so an edit made while a build was running is not lost; then re-linked to the rebuilt papers
#: (:func:`relink_user_rows`). ``marks``: like (+1) / dislike (-1), Markdown note and read time per paper;
#: ``list_items``: the papers of the reader's named lists.
USER_TABLES = ("overrides", "marks", "list_items")


def _carry_user_tables(live: Path, con: sqlite3.Connection) -> None:
    src = sqlite3.connect(f"file:{live}?mode=ro", uri=True)
    try:
        for table in USER_TABLES:
            exists = src.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()
            if not exists:
                continue
            rows = src.execute(f"SELECT * FROM {table}").fetchall()
            con.execute(f"DELETE FROM {table}")
            if rows:
                con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
        con.commit()
    finally:
        src.close()


def relink_user_rows(con: sqlite3.Connection, papers: list[tuple[str, str]] | None = None,
                     min_score: float = 90.0) -> int:
    """Point the reader's rows (overrides, marks, list items) whose paper id is no longer in ``papers`` at the
    paper they meant: the same normalised title, else the most similar title (rapidfuzz ``token_sort_ratio`` ≥
    ``min_score``; a corrected typo or a changed subtitle changes the id, which is derived from the title). A row
    with no match, or whose target already has a row of its own, is left as it is (kept, never deleted).
    ``papers`` gives the ``(id, title)`` pairs to link to (default: the ``papers`` table). Returns the number of
    rows re-linked."""
    from rapidfuzz import fuzz, process

    from ..text import normalize_title

    if papers is None:
        papers = [(r[0], r[1]) for r in con.execute("SELECT id, title FROM papers")]
    ids = {r[0] for r in papers}
    by_norm = {normalize_title(r[1]): r[0] for r in papers}
    norm_titles = list(by_norm)
    moved = 0
    for table, key_cols in (("overrides", ("field",)), ("marks", ()), ("list_items", ("list",))):
        try:
            rows = con.execute(f"SELECT rowid, paper_id, title{''.join(', ' + c for c in key_cols)} FROM {table}"
                               ).fetchall()
        except sqlite3.OperationalError:
            continue
        for rowid, pid, title, *keys in rows:
            if pid in ids or not title:
                continue
            norm = normalize_title(title)
            new = by_norm.get(norm)
            if new is None and norm_titles:
                hit = process.extractOne(norm, norm_titles, scorer=fuzz.token_sort_ratio, score_cutoff=min_score)
                new = by_norm[hit[0]] if hit else None
            if new is None:
                continue
            clash = f"SELECT 1 FROM {table} WHERE paper_id = ?" + "".join(f" AND {c} = ?" for c in key_cols)
            if con.execute(clash, (new, *keys)).fetchone():
                continue
            con.execute(f"UPDATE {table} SET paper_id = ? WHERE rowid = ?", (new, rowid))
            moved += 1
    con.commit()
    return moved


#: Fields a reader may override with ``paperatlas edit`` (value types: str for tldr, list[str] for keyphrases).
EDITABLE_FIELDS = ("tldr", "keyphrases")
#: Provenance recorded for an overridden field.
EDIT_METHOD = "edited by reader"


def get_overrides(con: sqlite3.Connection) -> dict[str, dict[str, object]]:
    """``paper_id -> {field: value}`` of the reader's overrides (empty for atlases made before overrides)."""
    out: dict[str, dict[str, object]] = {}
    try:
        rows = con.execute("SELECT paper_id, field, value FROM overrides").fetchall()
    except sqlite3.OperationalError:  # an atlas file without the table
        return out
    for pid, fld, value in rows:
        out.setdefault(pid, {})[fld] = json.loads(value)
    return out


def apply_overrides(papers: list[Paper], overrides: dict[str, dict[str, object]]) -> int:
    """Put the reader's overrides on ``papers`` in place (method set to :data:`EDIT_METHOD`); returns how many
    papers were changed. Overrides of papers not in ``papers`` are kept in the store, untouched."""
    n = 0
    for p in papers:
        ov = overrides.get(p.id)
        if not ov:
            continue
        if "tldr" in ov:
            p.tldr, p.tldr_method = str(ov["tldr"]), EDIT_METHOD
        if "keyphrases" in ov:
            p.keyphrases, p.keyphrases_method = [str(k) for k in ov["keyphrases"]], EDIT_METHOD
        n += 1
    return n


def _row_to_paper(row: sqlite3.Row) -> Paper:
    cols = set(row.keys())  # an atlas built by an older version lacks the newer columns
    d = {k: row[k] for k in _SCALAR_FIELDS if k in cols}
    for k in _JSON_FIELDS:
        if k in cols:
            d[k] = json.loads(row[k]) if row[k] else ([] if k != "extra" else {})
    d["low_confidence"] = bool(d.get("low_confidence"))
    return Paper.from_dict(d)


def write_papers(con: sqlite3.Connection, papers: list[Paper], content_hashes: dict[str, str]) -> None:
    """Replace the atlas's papers and FTS index with ``papers`` (all fields, generated ones included)."""
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
    """Replace the atlas's topics."""
    con.execute("DELETE FROM topics")
    con.executemany(
        "INSERT INTO topics (id, label, size, keyphrases, parent_id, x, y, method, level) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(t.id, t.label, t.size, json.dumps(t.keyphrases), t.parent_id, t.x, t.y, t.method, t.level)
         for t in topics],
    )


def read_model(con: sqlite3.Connection, name: str) -> bytes | None:
    """The stored blob called ``name`` (e.g. the pickled topic model), or None."""
    try:
        row = con.execute("SELECT blob FROM models WHERE name = ?", (name,)).fetchone()
    except sqlite3.OperationalError:  # an atlas made before the models table
        return None
    return bytes(row[0]) if row else None


def write_model(con: sqlite3.Connection, name: str, blob: bytes) -> None:
    """Store ``blob`` under ``name`` (replacing any previous one)."""
    con.execute("INSERT OR REPLACE INTO models VALUES (?, ?)", (name, blob))


def previous_placement(con: sqlite3.Connection) -> dict[str, tuple[int | None, float | None, float | None, str]]:
    """``paper_id -> (topic_id, x, y, content_hash)`` as the atlas held them before this build rewrites them
    (empty for a new atlas)."""
    try:
        rows = con.execute("SELECT id, topic_id, x, y, content_hash FROM papers").fetchall()
    except sqlite3.OperationalError:
        return {}
    return {r[0]: (r[1], r[2], r[3], r[4] or "") for r in rows}


def previous_topics(con: sqlite3.Connection) -> dict[int, Topic]:
    """The topics (areas and sub-topics) the atlas held before this build rewrites them."""
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
    """``paper_id -> (content_hash, vector (dim,) float32)`` for embeddings made by ``model``."""
    out = {}
    for row in con.execute("SELECT paper_id, content_hash, vector FROM embeddings WHERE model = ?", (model,)):
        out[row[0]] = (row[1], np.frombuffer(row[2], dtype=np.float32))
    return out


def write_embeddings(con: sqlite3.Connection, model: str, ids: list[str], hashes: list[str],
                     vectors: np.ndarray) -> None:
    """Replace all stored embeddings with ``vectors`` ((len(ids), dim) float32) for ``ids``."""
    con.execute("DELETE FROM embeddings")
    con.executemany(
        "INSERT INTO embeddings (paper_id, model, content_hash, vector) VALUES (?, ?, ?, ?)",
        [(i, model, h, np.asarray(v, dtype=np.float32).tobytes())
         for i, h, v in zip(ids, hashes, vectors, strict=True)],
    )


def set_meta(con: sqlite3.Connection, **values) -> None:
    """Store ``key=value`` pairs in the ``meta`` table (values JSON-encoded)."""
    con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    [(k, json.dumps(v, ensure_ascii=False)) for k, v in values.items()])


T = TypeVar("T")


class Atlas:
    """Read-only view of an atlas file, loaded into memory for querying.

    Attributes: ``papers`` (list[Paper] in stored order), ``by_id`` (id → Paper), ``topics`` (id → Topic),
    ``ids`` (list[str], row order of ``vectors``), ``vectors`` ((n_papers, dim) float32, L2-normalised; empty
    (0, 0) when the atlas has no embeddings), ``embed_model`` (name of the model that made them), ``meta``.
    Raises :class:`AtlasNotFound` when the file is missing.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.con = connect(self.path, readonly=True)
        self.meta = {r[0]: json.loads(r[1]) for r in self.con.execute("SELECT key, value FROM meta")}
        self.papers = [_row_to_paper(r) for r in self.con.execute("SELECT * FROM papers ORDER BY rowid")]
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
        """A value computed from this atlas by ``compute()`` the first time ``name`` is asked for and kept with
        the atlas object (query-side indexes: the recommender's TF-IDF matrix, document frequencies, topic
        centroids). Thread-safe: concurrent callers of one ``name`` wait for a single computation, other names
        are not held up. The atlas is read-only, so a value never goes stale while the object lives."""
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
        """The label of ``topic_id`` or ``""``."""
        t = self.topics.get(topic_id) if topic_id is not None else None
        return t.label if t else ""

    def area_of(self, topic_id: int | None) -> Topic | None:
        """The area (level-0 topic) that ``topic_id`` belongs to: its parent, or itself when it is an area (or
        when the atlas predates areas); None for no topic."""
        t = self.topics.get(topic_id) if topic_id is not None else None
        if t is None:
            return None
        return self.topics.get(t.parent_id, t) if t.parent_id is not None else t

    def areas(self) -> list[Topic]:
        """Level-0 topics, largest first (every topic when the atlas has no hierarchy)."""
        tops = [t for t in self.topics.values() if t.level == 0] or list(self.topics.values())
        return sorted(tops, key=lambda t: (-t.size, t.id))

    def subtopics(self, area_id: int) -> list[Topic]:
        """The sub-topics of area ``area_id``, largest first."""
        return sorted((t for t in self.topics.values() if t.parent_id == area_id), key=lambda t: (-t.size, t.id))
