"""Writing a file atomically: the one place outputs (publish, the schedule's ``.ics``, exports) are written.

Every output refuses to replace a folder or an SQLite database (an atlas): :func:`check_file_output`, which
:func:`write_bytes_atomic` applies to every file it writes.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

#: The first 16 bytes of every SQLite database file.
SQLITE_MAGIC = b"SQLite format 3\x00"


class OutputRefused(FileExistsError):
    """paperatlas will not write at this path; the message is one line naming it and what to do instead."""


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name the same file (by inode when both exist, else by resolved path)."""
    with contextlib.suppress(OSError):
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a file starting with :data:`SQLITE_MAGIC` (False when it cannot be read)."""
    try:
        with path.open("rb") as fh:
            return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def check_file_output(path: str | Path, protect: Iterable[str | Path] = ()) -> None:
    """Refuse a file output that would replace a folder, the atlas or any SQLite database.

    Args:
        path: The file about to be written.
        protect: Files it must never replace (the atlas and its companions,
            :func:`paperatlas.publish._output.atlas_files`).

    Raises:
        OutputRefused: ``path`` is an existing folder, one of ``protect``, or an existing SQLite database.
    """
    p = Path(path)
    if p.is_dir():
        raise OutputRefused(f"{p} is a folder; give the name of a file to write (e.g. {p / 'papers.json'})")
    if any(same_file(p, Path(x)) for x in protect):
        raise OutputRefused(f"{p} is the atlas (or one of its files); choose another file name")
    if p.is_file() and is_sqlite(p):
        raise OutputRefused(f"{p} is an SQLite database (an atlas?), which paperatlas never overwrites; "
                            "choose another file name")


def write_bytes_atomic(path: str | Path, data: bytes, mode: int | None = None) -> Path:
    """Write ``data`` to ``path`` atomically.

    The bytes go to a temporary file in the same directory, fsynced, then moved over ``path`` with
    :func:`os.replace`, so a failure at any point leaves a previous file at ``path`` unchanged (and no temporary
    file behind). Missing parent directories are created.

    Args:
        path: The file to write.
        data: Its new content.
        mode: The new file's permission bits; None for the previous file's, or the usual ones for a new file
            (``0o666`` minus the umask).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        OutputRefused: ``path`` is a folder or an SQLite database (:func:`check_file_output`); nothing is written.
        OSError: The file cannot be written.
    """
    target = Path(path)
    check_file_output(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = target.stat().st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target
