"""Numbered schema migrations of an atlas file, the way ``sqlite-utils`` and ``llm`` do it.

:data:`MIGRATIONS` is an ordered list of functions, numbered 1, 2, …; the atlas's ``meta.schema_version`` is the
number of the last one that has run on it. Opening an atlas for writing (a build's private copy in
:func:`paperatlas.store.atomic_rebuild`, a reader's write on the live file in :mod:`paperatlas.store.userdata`)
calls :func:`migrate`, which runs the missing ones in one transaction. The current schema is what running all of
them on an empty file creates: there is no other ``CREATE`` statement for these tables (the FTS5 index's is
:data:`paperatlas.store.fts.CREATE_SQL`, with its columns and ``bm25()`` weights).

Rules for a new migration: append a function decorated with ``@_migration(N)`` (N = last number + 1); only
``CREATE ... IF NOT EXISTS`` and ``ALTER TABLE ... ADD COLUMN`` (through :func:`_add_columns`, which checks the
columns first), never ``DROP`` a table that holds data; every statement through ``con.execute`` (``executescript``
would commit half-way). Each migration is idempotent, so it may also run on an odd file that has some of its
changes already.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path

from . import fts

#: ``(number, function)`` in the order they run; numbers are 1, 2, … without gaps.
MIGRATIONS: list[tuple[int, Callable[[sqlite3.Connection], None]]] = []


class MalformedAtlas(ValueError):
    """The file is not a readable atlas: not SQLite, a table missing, or a stored value that cannot be decoded.

    The message is one line naming the file, what is wrong, and what to do: a damaged atlas (or an empty file) is
    rebuilt at its path; a file that is not an atlas (not SQLite, or another program's SQLite) is never suggested as
    a build target: the advice names another path beside it (``notes.md`` → ``notes.db``).
    """

    def __init__(self, path: str | Path, problem: str):
        """Make the one-line message.

        Args:
            path: The atlas file.
            problem: What is wrong, e.g. ``"not an SQLite database"`` (newlines are flattened).
        """
        problem = " ".join(str(problem).split())
        if problem.startswith(("not an SQLite database", "SQLite without the atlas tables")):
            # another program's file: a build refuses (or would write into) it, so never advise building over it
            p = Path(path)
            other = p.with_suffix(".db") if p.suffix != ".db" else p.with_name(f"{p.stem}-atlas.db")
            advice = (f"it is not an atlas: build the atlas at another path, "
                      f"e.g. `paperatlas build LISTING --db {other}`")
        else:
            advice = f"rebuild it with `paperatlas build LISTING --db {path}`"
        super().__init__(f"{path}: not a usable paperatlas atlas ({problem}); {advice}")
        self.path = Path(path)
        self.problem = problem


class AtlasTooNew(ValueError):
    """The atlas file was written by a newer paperatlas: its schema version is above :data:`LATEST`."""


def _migration(number: int) -> Callable[[Callable[[sqlite3.Connection], None]], Callable[[sqlite3.Connection], None]]:
    def register(fn: Callable[[sqlite3.Connection], None]) -> Callable[[sqlite3.Connection], None]:
        if number != len(MIGRATIONS) + 1:
            raise RuntimeError(f"migration {fn.__name__} is numbered {number}, expected {len(MIGRATIONS) + 1}")
        MIGRATIONS.append((number, fn))
        return fn

    return register


def _columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in con.execute(f"PRAGMA table_info({table})")]


def _add_columns(con: sqlite3.Connection, table: str, columns: list[tuple[str, str]]) -> None:
    """``ALTER TABLE table ADD COLUMN`` each ``(name, type)`` the table does not have yet."""
    have = set(_columns(con, table))
    for name, sql_type in columns:
        if name not in have:
            con.execute(f"ALTER TABLE {table} ADD COLUMN {name} {sql_type}")


@_migration(1)
def m001_initial(con: sqlite3.Connection) -> None:
    """Migration 1: the schema of the first atlases.

    Creates metadata, papers, embeddings, topics and the FTS5 search index.

    Args:
        con: A writable connection, inside the migration transaction.
    """
    con.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("""CREATE TABLE IF NOT EXISTS papers (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, abstract TEXT, venue TEXT, year INTEGER, status TEXT,
    track TEXT, digest TEXT, tldr TEXT, tldr_method TEXT, keyphrases_method TEXT, topic_id INTEGER,
    x REAL, y REAL, authors TEXT, links TEXT, sources TEXT, given_keyphrases TEXT, sections TEXT,
    affiliations TEXT, extra TEXT, keyphrases TEXT, content_hash TEXT
)""")
    con.execute("CREATE INDEX IF NOT EXISTS papers_topic ON papers(topic_id)")
    con.execute("""CREATE TABLE IF NOT EXISTS embeddings (
    paper_id TEXT PRIMARY KEY, model TEXT NOT NULL, content_hash TEXT NOT NULL, vector BLOB NOT NULL
)""")
    con.execute("""CREATE TABLE IF NOT EXISTS topics (
    id INTEGER PRIMARY KEY, label TEXT NOT NULL, size INTEGER, keyphrases TEXT, parent_id INTEGER,
    x REAL, y REAL, method TEXT
)""")
    fts.create(con)  # papers_fts: its columns, tokenizer and weights are kept together in store/fts.py


@_migration(2)
def m002_topic_hierarchy_and_reader_tables(con: sqlite3.Connection) -> None:
    """Migration 2: topics v2 and the reader's tables.

    Adds the columns of the areas → sub-topics hierarchy (papers: topic confidence, low-confidence flag,
    secondary topics; topics: level) and the stored topic model table, then the reader's tables (overrides,
    marks, list items; some version-1 atlases have overrides already).

    Args:
        con: A writable connection, inside the migration transaction.
    """
    _add_columns(con, "papers", [("topic_confidence", "REAL"), ("low_confidence", "INTEGER"),
                                 ("secondary_topic_ids", "TEXT")])
    _add_columns(con, "topics", [("level", "INTEGER")])
    con.execute("CREATE TABLE IF NOT EXISTS models (name TEXT PRIMARY KEY, blob BLOB NOT NULL)")
    con.execute("""CREATE TABLE IF NOT EXISTS overrides (
    paper_id TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL, title TEXT, edited_at TEXT NOT NULL,
    PRIMARY KEY (paper_id, field)
)""")
    con.execute("""CREATE TABLE IF NOT EXISTS marks (
    paper_id TEXT PRIMARY KEY, title TEXT NOT NULL, rating INTEGER NOT NULL DEFAULT 0,
    note TEXT NOT NULL DEFAULT '', read_at TEXT, updated_at TEXT NOT NULL
)""")
    con.execute("""CREATE TABLE IF NOT EXISTS list_items (
    list TEXT NOT NULL, paper_id TEXT NOT NULL, title TEXT NOT NULL, added_at TEXT NOT NULL,
    PRIMARY KEY (list, paper_id)
)""")


@_migration(3)
def m003_paper_label_terms(con: sqlite3.Connection) -> None:
    """Migration 3: each paper's label terms, so a rebuild that adds few papers need not re-score every paper.

    ``paper_terms`` holds, per paper, the hash of the text they were made from (``text_hash``:
    :func:`paperatlas.build.text_hash`), the keyphrase method, and the
    JSON list of its label terms (its keyphrases and best other candidate phrases: the topic labels' evidence).

    Args:
        con: A writable connection, inside the migration transaction.
    """
    con.execute("""CREATE TABLE IF NOT EXISTS paper_terms (
    paper_id TEXT PRIMARY KEY, text_hash TEXT NOT NULL, method TEXT NOT NULL, terms TEXT NOT NULL
)""")


@_migration(4)
def m004_build_history(con: sqlite3.Connection) -> None:
    """Migration 4: which build first brought each paper, so ``paperatlas new`` can say what a rebuild added.

    ``builds`` has one row per finished build (its time, listings, paper count and how many papers were new);
    ``paper_history`` the build that first brought each paper (kept when the paper leaves, and moved to a paper's
    new id when a corrected title changed it: :func:`paperatlas.store.history.record_build`).

    Args:
        con: A writable connection, inside the migration transaction.
    """
    con.execute("""CREATE TABLE IF NOT EXISTS builds (
    id INTEGER PRIMARY KEY, finished_at TEXT NOT NULL, listings TEXT NOT NULL, n_papers INTEGER NOT NULL,
    n_new INTEGER NOT NULL
)""")
    con.execute("""CREATE TABLE IF NOT EXISTS paper_history (
    paper_id TEXT PRIMARY KEY, title TEXT NOT NULL, first_build INTEGER NOT NULL
)""")


@_migration(5)
def m005_topic_overviews(con: sqlite3.Connection) -> None:
    """Migration 5: each topic's cited overview (issue 29), and what it was made from.

    ``topics`` gains ``overview`` (2-4 sentences, each followed by ``[n]``), ``overview_papers`` (the JSON list of
    the cited paper ids, ``[n]`` the n-th), ``overview_method`` (``extractive``, a backend's name, or ``edit``) and
    ``overview_key`` (:func:`paperatlas.enrich.overview.overview_key` of the label and members it was made for: a
    rebuild keeps the overview of a topic whose key is unchanged). Older atlases read with all four empty.

    Args:
        con: A writable connection, inside the migration transaction.
    """
    _add_columns(con, "topics", [("overview", "TEXT"), ("overview_papers", "TEXT"), ("overview_method", "TEXT"),
                                 ("overview_key", "TEXT")])


#: The number of the last migration: the schema version this code reads and writes.
LATEST = MIGRATIONS[-1][0]


def schema_version(con: sqlite3.Connection) -> int:
    """The atlas's ``meta.schema_version``.

    Args:
        con: An open connection to the atlas file (read-only is fine).

    Returns:
        The number of the last migration that has run on the file; 0 for a new, empty file (no ``meta`` table or
        no ``schema_version`` row).
    """
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # no meta table: a new, empty file
        return 0
    if row is None:
        return 0
    try:
        return int(row[0])
    except (TypeError, ValueError):
        raise MalformedAtlas(_db_path(con), f"meta.schema_version is {str(row[0])[:40]!r}, not a number") from None


def _db_path(con: sqlite3.Connection) -> str:
    """The file name of ``con``'s main database (for messages)."""
    try:
        return con.execute("PRAGMA database_list").fetchone()[2] or "<memory>"
    except sqlite3.Error:
        return "<atlas>"


@functools.cache
def expected_schema(version: int = LATEST) -> dict[str, frozenset[str]]:
    """The tables and columns that running migrations 1 … ``version`` on an empty database creates.

    Args:
        version: A schema version (default, or above :data:`LATEST`: the latest schema).

    Returns:
        ``table name -> column names`` (FTS5 shadow tables included).
    """
    mem = sqlite3.connect(":memory:")
    try:
        for number, fn in MIGRATIONS:
            if number <= min(version, LATEST):
                fn(mem)
        return table_columns(mem)
    finally:
        mem.close()


def table_columns(con: sqlite3.Connection) -> dict[str, frozenset[str]]:
    """The tables of an open database and their columns.

    Args:
        con: An open connection.

    Returns:
        ``table name -> column names`` (SQLite's own ``sqlite_*`` tables left out; FTS5 shadow tables included).
    """
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                       "AND name NOT LIKE 'sqlite_%'")]
    return {n: frozenset(_columns(con, n)) for n in names}


def _incomplete(con: sqlite3.Connection) -> bool:
    """True when the file lacks a table or column the migrations create (an odd file whose version says more)."""
    have = table_columns(con)
    return any(not cols <= have.get(table, frozenset()) for table, cols in expected_schema().items())


def _file_name(con: sqlite3.Connection) -> str:
    row = next((r for r in con.execute("PRAGMA database_list") if r[1] == "main"), None)
    return row[2] if row and row[2] else "<in-memory atlas>"


def check_not_newer(con: sqlite3.Connection, name: str | Path | None = None) -> int:
    """Refuse an atlas written by a newer paperatlas.

    Args:
        con: An open connection to the atlas file.
        name: The file to name in the error (default: the connection's own file).

    Returns:
        The file's schema version (0 … :data:`LATEST`).

    Raises:
        AtlasTooNew: The file's schema version is above :data:`LATEST`.
    """
    version = schema_version(con)
    if version > LATEST:
        raise AtlasTooNew(f"{name or _file_name(con)}: this atlas has schema version {version}, newer than the "
                          f"version {LATEST} this paperatlas knows; upgrade paperatlas to write to it")
    return version


def migrate(con: sqlite3.Connection, name: str | Path | None = None) -> list[int]:
    """Run the migrations the atlas has not had yet, all in one transaction, and record the new version.

    An up-to-date file is left untouched (no write transaction). A file whose version is current but which lacks
    a table or column of the current schema (an atlas made between two schema changes of one version) gets every
    migration again: they are idempotent. On any error the transaction is rolled back and the file is unchanged.

    Args:
        con: A writable connection to the atlas file, not inside a transaction of the caller's (its pending
            changes would be committed with the migrations).
        name: The file to name in errors (default: the connection's own file).

    Returns:
        The numbers of the migrations that ran, in order (empty when the file was up to date).

    Raises:
        AtlasTooNew: The file's schema version is above :data:`LATEST` (nothing is written).
        sqlite3.OperationalError: The file is locked by another writer for longer than the connection's timeout.
    """
    version = check_not_newer(con, name)
    if version == LATEST and not _incomplete(con):
        return []
    own = not con.in_transaction
    if own:
        con.execute("BEGIN IMMEDIATE")
    try:
        version = check_not_newer(con, name)  # again, under the write lock: another writer may have migrated
        ran = [number for number, _ in MIGRATIONS if number > version]
        for number, fn in MIGRATIONS:
            if number > version:
                fn(con)
        if _incomplete(con):  # an odd file: its version says more than it has
            ran = [number for number, _ in MIGRATIONS]
            for _, fn in MIGRATIONS:
                fn(con)
        con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(LATEST),))
        if own:
            con.commit()
    except BaseException:
        if own:
            con.rollback()
        raise
    return ran
