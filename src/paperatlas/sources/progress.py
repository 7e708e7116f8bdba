"""Progress bars for long work outside the build's stages: network fetches, ``publish --format site``, ``eval``.

:func:`progress_of` yields ``update(n)``. With no ``progress`` factory given it is a tqdm bar on stderr, as the
build's bars are (:func:`paperatlas.cli._common.tqdm_progress`), that stays quiet when stderr is not a terminal
(tqdm's ``disable=None``: piped or redirected output, CI logs, tests) and, like every tqdm bar, when the
``TQDM_DISABLE`` environment variable is set; it is removed once the work is done (``leave=False``), so the command's
own output is what stays on the screen. A caller that wants the counts (a test, a web page) passes a
``progress(desc, total) -> update(n)`` factory instead: the same shape as :data:`paperatlas.build.ProgressFactory`,
so the CLI's own factory fits too.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: ``progress(description, total) -> update(n)``; ``total`` is ``None`` when the count is not known ahead.
ProgressFactory = Callable[[str, "int | None"], Callable[[int], None]]


@contextmanager
def progress_of(desc: str, total: int | None, unit: str = "paper",
                progress: ProgressFactory | None = None) -> Iterator[Callable[[int], None]]:
    """A progress counter for one piece of long work, closed when the ``with`` block ends (also on an error).

    Args:
        desc: What is being done, e.g. ``"arXiv"`` or ``"site pages"`` (shown left of the bar).
        total: How many units the work has (an upper bound for a search that may return fewer), ``None`` when
            unknown (tqdm then counts without a bar).
        unit: The unit counted (``paper``, ``page``, ``volume``, ``question``…).
        progress: A factory to report to instead of tqdm (its ``update`` is given every increment).

    Yields:
        ``update(n)``, which adds ``n`` units done.
    """
    if progress is not None:
        yield progress(desc, total)
        return
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None, dynamic_ncols=True, leave=False)
    try:
        yield bar.update
    finally:
        bar.close()


def stderr_progress(desc: str, total: int | None) -> Callable[[int], None]:
    """A :data:`ProgressFactory` of tqdm bars on stderr, for work made of several counted steps (an eval's build).

    Each call opens a bar (quiet when stderr is not a terminal, or with ``TQDM_DISABLE``) that closes itself once
    ``total`` units are done, like the build's :func:`paperatlas.cli._common.tqdm_progress`.

    Args:
        desc: The step's name, shown left of the bar.
        total: Units of the step (``None``: counted without a bar, never closed early).

    Returns:
        ``update(n)``, which adds ``n`` units done.
    """
    from tqdm import tqdm

    bar = tqdm(total=total, desc=f"{desc:<11}", unit="paper" if (total or 0) > 1 else "step", file=sys.stderr,
               disable=None, dynamic_ncols=True, leave=False)

    def update(n: int) -> None:
        bar.update(n)
        if total is not None and bar.n >= total:
            bar.close()

    return update
