"""Opening an atlas file: read-only for queries, or one write transaction on the live file for the reader's own data.

Every writable opening brings the file to the current schema first (:func:`paperatlas.store.migrations.migrate`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from .lock import swap_lock
from .migrations import MalformedAtlas, migrate  # noqa: F401 - MalformedAtlas is part of this module's API

#: The connection type the store's functions take and return (``sqlite3.Connection``).
Connection = sqlite3.Connection
#: Seconds a reader's write waits for a build or another writer holding the file's lock.
WRITE_TIMEOUT = 30


class AtlasNotFound(FileNotFoundError):
    """The atlas file does not exist (run ``paperatlas build`` first)."""


#: The tables every atlas has (a build creates them).
REQUIRED_TABLES = ("meta", "papers", "topics", "embeddings")


def check_atlas(con: sqlite3.Connection, path: str | Path) -> None:
    """Check that an open file is an SQLite database holding the atlas tables.

    Args:
        con: The open connection.
        path: The file (named in the error).

    Raises:
        MalformedAtlas: The file is not SQLite (or is corrupt), or lacks one of :data:`REQUIRED_TABLES`.
        sqlite3.OperationalError: The file is locked (not a malformation).
    """
    try:
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    except sqlite3.DatabaseError as e:  # "file is not a database", "database disk image is malformed"
        if isinstance(e, sqlite3.OperationalError):  # locked, unreadable: not the file's content
            raise
        raise MalformedAtlas(path, f"not an SQLite database: {e}") from e
    missing = [t for t in REQUIRED_TABLES if t not in names]
    if missing:
        what = "an empty file" if not names and Path(path).stat().st_size == 0 else "SQLite without the atlas tables"
        raise MalformedAtlas(path, f"{what}; missing table{'s' * (len(missing) > 1)} {', '.join(missing)}")


def file_identity(path: str | Path) -> tuple[int, int] | None:
    """``(device, inode)`` of the file at ``path``: it changes when another file is renamed over it (a rebuild).

    Args:
        path: a file.

    Returns:
        The pair; None when the file cannot be reached (``os.stat`` fails).
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def require_atlas(path: str | Path) -> Path:
    """Check that an atlas file exists.

    Args:
        path: The atlas file.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        AtlasNotFound: There is no file at ``path`` (the message says how to build one).
    """
    p = Path(path)
    if not p.is_file():
        raise AtlasNotFound(f"{p}: no atlas here; build one with `paperatlas build LISTING --db {p}`")
    return p


def connect(path: str | Path, readonly: bool = True) -> sqlite3.Connection:
    """Open an atlas file, rows as :class:`sqlite3.Row`.

    Read-only connections use ``mode=ro`` so they can never modify the file, and are checked to be an atlas
    (:func:`check_atlas`); a writable one is returned as it is (no migration: use :func:`write_transaction` for
    writes).

    Args:
        path: The atlas file.
        readonly: Open it read-only (the default).

    Returns:
        The open connection (usable from any thread).

    Raises:
        AtlasNotFound: ``readonly`` and there is no file at ``path``.
        MalformedAtlas: ``readonly`` and the file is not SQLite or lacks an atlas table.
    """
    p = Path(path)
    if readonly:
        require_atlas(p)
        con = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True, check_same_thread=False)
        try:
            check_atlas(con, p)
        except BaseException:
            con.close()
            raise
    else:
        con = sqlite3.connect(p, check_same_thread=False)
    con.row_factory = sqlite3.Row
    return con


@contextlib.contextmanager
def write_transaction(path: str | Path) -> Iterator[sqlite3.Connection]:
    """One write transaction on the live atlas file: migrated first, committed on success, rolled back on error.

    The whole transaction, from opening the file to closing it, holds the atlas's swap lock shared
    (:func:`paperatlas.store.lock.swap_lock`): it waits while a build copies the reader's tables into its rebuilt
    copy and renames the copy over the atlas, and a build's swap waits for it. So every write that returns is in
    the atlas that ``path`` names afterwards, never in a file a build has replaced. The connection waits up to
    :data:`WRITE_TIMEOUT` seconds for a lock held by another writer, and takes the write lock at once
    (``BEGIN IMMEDIATE``), so what the block reads is still true when it writes.

    Args:
        path: The atlas file.

    Yields:
        A writable connection (rows as :class:`sqlite3.Row`), inside the transaction; closed after the block.

    Raises:
        AtlasNotFound: There is no file at ``path``.
        MalformedAtlas: The file is not SQLite or lacks an atlas table (nothing written).
        paperatlas.store.migrations.AtlasTooNew: The file was written by a newer paperatlas (nothing written).
        paperatlas.store.lock.AtlasBusy: A build's swap held the atlas for more than :data:`WRITE_TIMEOUT` s.
    """
    p = require_atlas(path)
    with swap_lock(p, exclusive=False, timeout=WRITE_TIMEOUT):
        con = sqlite3.connect(p, timeout=WRITE_TIMEOUT)
        con.row_factory = sqlite3.Row
        try:
            check_atlas(con, p)
            with con:  # commits the block's writes (and a migration) on success, rolls them back on an error
                con.execute("BEGIN IMMEDIATE")
                migrate(con, p)  # inside the transaction: the file is migrated only if the write goes ahead
                yield con
        finally:
            con.close()
