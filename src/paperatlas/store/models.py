"""Stored blobs (the topic model, the keyphrase statistics, the recommender's index): written by a build, read back.

Split from :mod:`paperatlas.store.sqlite`, which re-exports these functions (a build calls them as
``paperatlas.store.sqlite.*``). A reader reads them with :meth:`paperatlas.store.Atlas.stored_model`, which says
when a stored value is not a BLOB.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path


def read_model(con: sqlite3.Connection, name: str) -> bytes | None:
    """A stored blob, e.g. the topic model (safetensors arrays, see :class:`paperatlas.enrich.topics.TopicModel`).

    The bytes are returned as stored; decoding them, and checking them, is the caller's job.

    Args:
        con: An open connection to the atlas.
        name: The blob's name (``"topics"``: the topic model).

    Returns:
        The bytes, or None when there is none, the stored value is not a BLOB (a build makes it again; readers
        use :meth:`Atlas.stored_model`, which says it is damaged), or the atlas predates the ``models`` table.
    """
    try:
        row = con.execute("SELECT blob FROM models WHERE name = ?", (name,)).fetchone()
    except sqlite3.OperationalError:  # an atlas made before the models table
        return None
    return row[0] if row and type(row[0]) is bytes else None


def write_model(con: sqlite3.Connection, name: str, blob: bytes | None) -> None:
    """Store a blob under a name, replacing any previous one (None deletes it).

    Args:
        con: A writable connection (a build's copy).
        name: The blob's name.
        blob: The bytes, or None to remove the stored blob.
    """
    if blob is None:
        con.execute("DELETE FROM models WHERE name = ?", (name,))
    else:
        con.execute("INSERT OR REPLACE INTO models VALUES (?, ?)", (name, blob))


#: bytes copied at a time by :func:`write_model_from` (file -> SQLite blob)
_BLOB_CHUNK = 4 << 20


def write_model_from(con: sqlite3.Connection, name: str, dump: Callable[[Path], None]) -> None:
    """Store a blob that ``dump`` writes to a file, streamed into SQLite: the blob is never in memory whole.

    :func:`write_model` with a ``bytes`` object holds the blob three times at once (the bytes, SQLite's copy of
    the bound parameter and the record it builds from it): ~400 MB for the 132 MB topic model of a 42k atlas.
    Here the row is inserted with ``zeroblob(size)`` and filled from the file 4 MiB at a time (SQLite's
    incremental blob I/O); the atlas reads back the same bytes as :func:`write_model` would store.

    Args:
        con: A writable connection (a build's copy).
        name: The blob's name.
        dump: Called with a path in a private temporary folder; writes the blob there (e.g.
            :meth:`paperatlas.enrich.topics.TopicModel.dump_file`).

    Raises:
        OSError: the temporary file cannot be written or read (e.g. a full disk); the stored blob is unchanged.
    """
    with tempfile.TemporaryDirectory(prefix="paperatlas-model-") as tmp:
        path = Path(tmp) / "blob"
        dump(path)
        size = path.stat().st_size
        rowid = con.execute("INSERT OR REPLACE INTO models VALUES (?, zeroblob(?))", (name, size)).lastrowid
        with open(path, "rb") as f, con.blobopen("models", "blob", rowid) as blob:
            while chunk := f.read(_BLOB_CHUNK):
                blob.write(chunk)
