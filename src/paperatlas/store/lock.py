"""One build at a time per atlas, and no reader's write while a build swaps: advisory locks beside the atlas file.

A build holds the lock (``fcntl.flock``, exclusive) from before it copies the atlas until after it has swapped the
rebuilt copy into place, so a second build of the same atlas waits for the first (and then starts from its result)
instead of racing it. The lock lives on its own file, never on the atlas: the reader's writes (reading list,
overrides: :mod:`paperatlas.store.userdata`) do not take it and are never blocked by a build. The kernel drops
the lock when its holder exits or is killed, so a killed build never leaves the atlas locked.

The last holder removes the lock file as it lets go (no ``atlas.db.lock`` is left beside the atlas after a build or
a serve): it unlinks the file while it still holds the lock exclusively (a shared holder first tries to turn its
lock exclusive without waiting, and leaves the file when another holder is still in), and whoever takes a lock
checks, once it holds it, that the path still names the file it locked (same inode), starting again on a new file
otherwise, so two processes never hold "the" lock on two different files of one name. Only a killed holder leaves
its (unlocked, harmless) file behind; the next holder removes it.

Where ``fcntl`` is missing (Windows), the locks are :class:`filelock.FileLock` (exclusive only: a reader's write
then also waits for another reader's write, never for long), which removes its file as well.

The swap lock (``<atlas>.swap-lock``, :func:`swap_lock`) is held shared by every reader's write for its whole
transaction, from before it opens the atlas until it has closed it, and exclusively by a build for the few
moments it copies the reader's tables into its rebuilt copy and renames the copy over the atlas. So a write either
ends before the copy (and is carried over) or opens the atlas after the rename (and is made in the new file):
no write is made into a file that a build has replaced, and no connection of a writer is open on the replaced
file (where SQLite would take the new file's ``-journal``, found by name, for its own).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: filelock (msvcrt) instead; see the module's docstring
    fcntl = None  # type: ignore[assignment]

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

    with _flock(lock_path(path), True, timeout, waiting, lambda: AtlasBusy(path, timeout)):
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
    with _flock(swap_lock_path(path), exclusive, timeout, None,
                lambda: AtlasBusy(path, timeout, held)):
        yield


@contextlib.contextmanager
def _flock(lock_file: Path, exclusive: bool, timeout: float, on_first_wait: Callable[[], None] | None,
           busy: Callable[[], Exception]) -> Iterator[None]:
    """Hold ``flock`` (exclusive or shared) on ``lock_file`` for the block, polling up to ``timeout`` s.

    The file is created when missing and removed by the last holder (see the module's docstring).

    Raises:
        Exception: ``busy()`` (an :class:`AtlasBusy`) when the lock was not free after ``timeout`` seconds.
    """
    if fcntl is None:
        with _filelock(lock_file, timeout, busy):
            yield
        return
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    deadline = time.monotonic() + timeout
    told = False
    while True:
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() >= deadline:
                raise busy() from None
            if not told and on_first_wait is not None:
                on_first_wait()
            told = True
            time.sleep(_POLL_SECONDS)
            continue
        if _same_file(fd, lock_file):
            break
        os.close(fd)  # its last holder removed it between our open and our lock: lock the path's new file
    try:
        yield
    finally:
        try:
            if exclusive:
                _unlink(lock_file)
            else:
                try:  # the last shared holder removes the file; another still in keeps it
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    _unlink(lock_file)
                except BlockingIOError:
                    pass
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the open file ``fd`` (not removed, nor replaced by a new file of that name)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def _unlink(path: Path) -> None:
    """Remove ``path`` if it is there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


@contextlib.contextmanager
def _filelock(lock_file: Path, timeout: float, busy: Callable[[], Exception]) -> Iterator[None]:
    """The lock where ``fcntl`` is missing: :class:`filelock.FileLock` (exclusive), its file removed on release.

    Raises:
        Exception: ``busy()`` when the lock was not free after ``timeout`` seconds.
    """
    import filelock

    lock = filelock.FileLock(str(lock_file))
    try:
        lock.acquire(timeout=timeout, poll_interval=_POLL_SECONDS)
    except filelock.Timeout:
        raise busy() from None
    try:
        yield
    finally:
        lock.release()
        with contextlib.suppress(OSError):
            os.unlink(lock_file)
