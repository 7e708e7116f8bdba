"""Opening an atlas file: read-only for queries, or one write transaction on the live file for the reader's own data.

Every writable opening brings the file to the current schema first (:func:`paperatlas.store.migrations.migrate`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from .migrations import migrate

#: The connection type the store's functions take and return (``sqlite3.Connection``).
Connection = sqlite3.Connection
#: Seconds a reader's write waits for a build or another writer holding the file's lock.
WRITE_TIMEOUT = 30


class AtlasNotFound(FileNotFoundError):
    """The atlas file does not exist (run ``paperatlas build`` first)."""


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

    Read-only connections use ``mode=ro`` so they can never modify the file; a writable one is returned as it is
    (no migration: use :func:`write_transaction` for writes).

    Args:
        path: The atlas file.
        readonly: Open it read-only (the default).

    Returns:
        The open connection (usable from any thread).

    Raises:
        AtlasNotFound: ``readonly`` and there is no file at ``path``.
    """
    p = Path(path)
    if readonly:
        require_atlas(p)
        con = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True, check_same_thread=False)
    else:
        con = sqlite3.connect(p, check_same_thread=False)
    con.row_factory = sqlite3.Row
    return con


@contextlib.contextmanager
def write_transaction(path: str | Path) -> Iterator[sqlite3.Connection]:
    """One write transaction on the live atlas file: migrated first, committed on success, rolled back on error.

    The connection waits up to :data:`WRITE_TIMEOUT` seconds for a lock held by another writer, and takes the
    write lock at once (``BEGIN IMMEDIATE``), so what the block reads is still true when it writes.

    Args:
        path: The atlas file.

    Yields:
        A writable connection (rows as :class:`sqlite3.Row`), closed after the block.

    Raises:
        AtlasNotFound: There is no file at ``path``.
        paperatlas.store.migrations.AtlasTooNew: The file was written by a newer paperatlas (nothing written).
    """
    p = require_atlas(path)
    con = sqlite3.connect(p, timeout=WRITE_TIMEOUT)
    con.row_factory = sqlite3.Row
    try:
        migrate(con, p)
        with con:
            con.execute("BEGIN IMMEDIATE")
            yield con
    finally:
        con.close()
