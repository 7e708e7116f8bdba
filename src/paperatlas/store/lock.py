"""One build at a time per atlas, and no reader's write while a build swaps: advisory locks beside the atlas file.

A build holds the lock (``fcntl.flock``, exclusive) from before it copies the atlas until after it has swapped the
rebuilt copy into place, so a second build of the same atlas waits for the first (and then starts from its result)
instead of racing it. The lock lives on its own file, never on the atlas: the reader's writes (reading list,
overrides: :mod:`paperatlas.store.userdata`) do not take it and are never blocked by a build. The kernel drops
the lock when its holder exits or is killed, so a killed build never leaves the atlas locked. The lock file
itself is left in place (removing it would let two builds lock two different files of one name).

The swap lock (``<atlas>.swap-lock``, :func:`swap_lock`) is held shared by every reader's write for its whole
transaction, from before it opens the atlas until it has closed it, and exclusively by a build for the few
moments it copies the reader's tables into its rebuilt copy and renames the copy over the atlas. So a write either
ends before the copy (and is carried over) or opens the atlas after the rename (and is made in the new file):
no write is made into a file that a build has replaced, and no connection of a writer is open on the replaced
file (where SQLite would take the new file's ``-journal``, found by name, for its own).
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
    """Another build of the same atlas (or, for a reader's write, a build's swap) held a lock past the timeout.

    Args:
        path: The atlas file.
        timeout: How long the caller waited, seconds.
        what: What held the lock (default: another build of this atlas).
    """

    def __init__(self, path: str | Path, timeout: float, what: str | None = None):
        self.path = str(path)
        self.timeout = timeout
        held = what or "another build of this atlas is still running"
        super().__init__(f"{path}: {held} (waited {timeout:g} s); try again when it has finished")


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
    def waiting() -> None:
        if on_wait is not None:
            on_wait(f"{path}: another build of this atlas is running; waiting for it to finish (up to {timeout:g} s)")

    with _flock(lock_path(path), fcntl.LOCK_EX, timeout, waiting, lambda: AtlasBusy(path, timeout)):
        yield


def swap_lock_path(path: str | Path) -> Path:
    """The swap lock file of the atlas at ``path``.

    Args:
        path: The atlas file.

    Returns:
        ``<atlas>.swap-lock`` in the atlas's directory, e.g. ``atlas.db`` -> ``atlas.db.swap-lock``.
    """
    p = Path(path)
    return p.with_name(p.name + ".swap-lock")


@contextlib.contextmanager
def swap_lock(path: str | Path, exclusive: bool, timeout: float) -> Iterator[None]:
    """Hold the swap lock of the atlas at ``path`` for the ``with`` block (see the module's docstring).

    Shared for a reader's write (many at once; each waits while a build swaps), exclusive for a build's swap
    (waits for the writes in progress to end, and holds off new ones until the rename is done).

    Args:
        path: The atlas file (its directory must exist); the lock is taken on :func:`swap_lock_path`.
        exclusive: True for a build's swap, False for a reader's write.
        timeout: Seconds to wait for the lock.

    Yields:
        Nothing; the lock is held until the block ends (also on an exception).

    Raises:
        AtlasBusy: The lock was not free after ``timeout`` seconds.
    """
    held = "the reader's writes held it" if exclusive else "a build is swapping in a rebuilt atlas"
    with _flock(swap_lock_path(path), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH, timeout, None,
                lambda: AtlasBusy(path, timeout, held)):
        yield


@contextlib.contextmanager
def _flock(lock_file: Path, mode: int, timeout: float, on_first_wait: Callable[[], None] | None,
           busy: Callable[[], Exception]) -> Iterator[None]:
    """Hold ``fcntl.flock(mode)`` on ``lock_file`` (created when missing) for the block, polling up to ``timeout`` s.

    Raises:
        Exception: ``busy()`` (an :class:`AtlasBusy`) when the lock was not free after ``timeout`` seconds.
    """
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        told = False
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise busy() from None
                if not told and on_first_wait is not None:
                    on_first_wait()
                told = True
                time.sleep(_POLL_SECONDS)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
