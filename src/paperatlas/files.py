"""Writing a file atomically: the one place outputs (publish, the schedule's ``.ics``) are written."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


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
        OSError: The file cannot be written.
    """
    target = Path(path)
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
