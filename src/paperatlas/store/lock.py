"""One build at a time per atlas: an advisory lock on ``<atlas>.lock`` next to the atlas file.

A build holds the lock (``fcntl.flock``, exclusive) from before it copies the atlas until after it has swapped the
rebuilt copy into place, so a second build of the same atlas waits for the first (and then starts from its result)
instead of racing it. The lock lives on its own file, never on the atlas: the reader's writes (reading list,
overrides: :mod:`paperatlas.store.userdata`) do not take it and are never blocked by a build. The kernel drops
the lock when its holder exits or is killed, so a killed build never leaves the atlas locked. The lock file
itself is left in place (removing it would let two builds lock two different files of one name).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

#: Seconds a build waits for another build of the same atlas before it gives up (:class:`AtlasBusy`).
DEFAULT_TIMEOUT = 600.0

_POLL_SECONDS = 0.1


class AtlasBusy(TimeoutError):
    """Another build of the same atlas held its lock for longer than the timeout.

    Args:
        path: The atlas file.
        timeout: How long the build waited, seconds.
    """

    def __init__(self, path: str | Path, timeout: float):
        self.path = str(path)
        self.timeout = timeout
        super().__init__(f"{path}: another build of this atlas is still running (waited {timeout:g} s); "
                         "try again when it has finished")


def lock_path(path: str | Path) -> Path:
    """The lock file of the atlas at ``path``.

    Args:
        path: The atlas file.

    Returns:
        ``<atlas>.lock`` in the atlas's directory, e.g. ``atlas.db`` -> ``atlas.db.lock``.
    """
    p = Path(path)
    return p.with_name(p.name + ".lock")


@contextlib.contextmanager
def build_lock(path: str | Path, timeout: float = DEFAULT_TIMEOUT,
               on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the exclusive build lock of the atlas at ``path`` for the ``with`` block.

    Args:
        path: The atlas file (its directory must exist); the lock is taken on :func:`lock_path`.
        timeout: Seconds to wait while another build holds the lock (0: do not wait).
        on_wait: Called once with a one-line message (naming the atlas and the timeout) when the lock is held by
            another build and this one starts waiting; None to wait silently.

    Yields:
        Nothing; the lock is held until the block ends (also on an exception).

    Raises:
        AtlasBusy: The lock was still held by another build after ``timeout`` seconds.
    """
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise AtlasBusy(path, timeout) from None
                if not told and on_wait is not None:
                    on_wait(f"{path}: another build of this atlas is running; waiting for it to finish "
                            f"(up to {timeout:g} s)")
                told = True
                time.sleep(_POLL_SECONDS)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
