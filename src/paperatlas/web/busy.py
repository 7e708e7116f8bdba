"""One count of the requests the web app is answering, so background warm-ups can give way to them.

Two CPU-bound Python threads share the GIL: a request that waits for it at every SQLite call took 5 s instead of
0.4 s at 42k papers while a warm-up ran. Every background thread of the app pauses on the same count.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from flask import Flask, g


def request_gate(app: Flask, poll_seconds: float = 0.01) -> Callable[[], None]:
    """Count ``app``'s requests from now on; return ``wait()``, which returns once none is being answered.

    Args:
        app: the Flask app.
        poll_seconds: how often ``wait`` looks again, seconds.

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
        while busy["n"] > 0:
            time.sleep(poll_seconds)

    return wait
