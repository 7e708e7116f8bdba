"""One count of the requests the web app is answering, so background warm-ups can give way to them.

Two CPU-bound Python threads share the GIL: a request that waits for it at every SQLite call took 5 s instead of
0.4 s at 42k papers while a warm-up ran. Every background thread of the app pauses on the same count.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator

from flask import Flask, g

WARM_SWITCH_SECONDS = 0.0005
"""The GIL switch interval (:func:`sys.setswitchinterval`, seconds) while a warm-up runs: a query embedding beside a
CPU-bound Python thread took 12-18 ms at the default 5 ms, 7-9 ms at 0.5 ms (3.3 ms alone)."""

_switching = {"n": 0, "saved": 0.005}
_switching_lock = threading.Lock()


@contextlib.contextmanager
def fast_switching() -> Iterator[None]:
    """Run the block with the GIL switch interval at :data:`WARM_SWITCH_SECONDS`.

    Process-wide: nested and concurrent blocks share it, and the interval before the first is restored after the last.
    """
    with _switching_lock:
        if _switching["n"] == 0:
            _switching["saved"] = sys.getswitchinterval()
            sys.setswitchinterval(WARM_SWITCH_SECONDS)
        _switching["n"] += 1
    try:
        yield
    finally:
        with _switching_lock:
            _switching["n"] -= 1
            if _switching["n"] == 0:
                sys.setswitchinterval(_switching["saved"])


#: Longest a warm-up pause waits for the requests in flight to be answered (seconds). Under a steady load some
#: request is always being answered: without a bound the warm-up never finished, and every search then counted
#: its facets paper by paper instead of from the facet table. A warm-up step is ~2 ms, so it takes at most ~8 % of
#: the time while requests keep coming.
MAX_PAUSE_SECONDS = 0.025


def one_blas_thread() -> bool:
    """Let numpy's BLAS (OpenBLAS) use one thread from now on, in the whole process (a server's request threads).

    A request's cosines over the atlas's vectors are a matrix-vector product; OpenBLAS splits a large one over
    every core, and several request threads doing so at once fight over the cores (and OpenBLAS's own lock). At
    42,736 x 384 on 2 cores, four request threads each multiplying: 16 ms a product with OpenBLAS's threads,
    3.8 ms with one (3.2 ms alone). Below ~10,000 rows OpenBLAS uses one thread anyway.

    Returns:
        Whether the limit was set (False when threadpoolctl, a scikit-learn dependency, is missing).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn requires it
        return False
    threadpool_limits(limits=1, user_api="blas")
    return True


def request_gate(app: Flask, poll_seconds: float = 0.005,
                 max_wait_seconds: float = MAX_PAUSE_SECONDS) -> Callable[[], None]:
    """Count ``app``'s requests from now on; return ``wait()``, which returns once none is being answered.

    Args:
        app: the Flask app.
        poll_seconds: how often ``wait`` looks again, seconds.
        max_wait_seconds: ``wait`` returns after this long even when requests are still being answered, seconds.

    Returns:
        ``wait()``; a request refused before the count began is never counted.
    """
    busy = {"n": 0}
    lock = threading.Lock()

    @app.before_request
    def _count_in() -> None:
        with lock:
            busy["n"] += 1
        g.counted_busy = True

    @app.teardown_request
    def _count_out(_exc) -> None:
        if g.pop("counted_busy", False):
            with lock:
                busy["n"] -= 1

    def wait() -> None:
        deadline = time.monotonic() + max_wait_seconds
        while busy["n"] > 0 and time.monotonic() < deadline:
            time.sleep(poll_seconds)

    return wait

