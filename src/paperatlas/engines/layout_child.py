"""The map (UMAP, :func:`paperatlas.enrich.layout.fit_layout`) fitted in a child process, beside the topics' k-means.

Topics and the map are fitted on the same topic embedding and need nothing of each other, but both in one process
run one after the other: UMAP's numba code holds the interpreter lock for a whole epoch, so a thread would stall
k-means's Python steps. A build of fewer than :data:`paperatlas.build_stages.WARM_UP_MAX_PAPERS` papers therefore
starts :class:`LayoutChild` while its embedding children still work (the child imports UMAP and compiles its code
then, :func:`~paperatlas.enrich.layout.warm_up`), hands it the topic embedding as soon as the topic stage has made
it, and collects the coordinates in the ``layout`` stage. The coordinates are those :func:`fit_layout` gives in the
build process (same arguments, same seed; the exact neighbour graph is summed in the same bits everywhere).

The protocol is :mod:`paperatlas.engines.embed_child`'s: length-prefixed messages on the child's stdin and stdout, a
plain subprocess (``python -m paperatlas.engines.layout_child SEED``), no Python objects serialised: the embedding
goes as a 16-byte header (rows, columns, little-endian) and raw float32 rows, the map comes back as raw float32 rows.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

from .embed_child import _receive, _send

#: first byte of a message from the child: R(eady), X(Y coordinates) + float32 rows, E(rror) + JSON
_READY, _XY, _ERROR = b"R", b"X", b"E"


def main(argv: list[str] | None = None) -> None:
    """The child: compile UMAP's code, say ready, fit the one embedding it is sent, send the coordinates, exit.

    Args:
        argv: ``[seed]`` (default ``sys.argv[1:]``).
    """
    seed = int((argv or sys.argv[1:] or ["42"])[0])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    out = os.fdopen(os.dup(1), "wb")  # the protocol's own: whatever a library prints goes to stderr
    os.dup2(2, 1)
    try:
        from ..enrich.layout import fit_layout, warm_up

        warm_up(seed)
        _send(out, _READY)
        msg = _receive(sys.stdin.buffer)
        n, dim = struct.unpack("<QQ", msg[:16])
        x = np.frombuffer(msg[16:], dtype="<f4").reshape(n, dim).astype(np.float32)
        xy = fit_layout(x, seed=seed)
    except EOFError:  # the parent closed the pipe: no map wanted after all
        os._exit(0)
    except Exception as e:  # noqa: BLE001 - every failure is the parent's to report
        _send(out, _ERROR + json.dumps({"kind": type(e).__name__, "message": str(e)}).encode())
        os._exit(0)
    _send(out, _XY + np.ascontiguousarray(xy, dtype="<f4").tobytes())
    os._exit(0)  # nothing to tear down


class LayoutChild:
    """:func:`~paperatlas.enrich.layout.fit_layout` of one embedding in a child process (see the module docstring).

    The constructor returns at once; the child imports UMAP and compiles it meanwhile. :meth:`submit` hands it the
    embedding and returns at once; :meth:`result` waits for the coordinates. :meth:`close` ends the child (it ends
    by itself after sending them).

    Args:
        seed: ``random_state`` of UMAP (the build's seed).
    """

    def __init__(self, seed: int = 42):
        env = dict(os.environ)  # the child imports this paperatlas, installed or not
        src = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(x for x in (src, env.get("PYTHONPATH")) if x)
        self._n = 0
        self._proc: subprocess.Popen | None = subprocess.Popen(
            [sys.executable, "-m", "paperatlas.engines.layout_child", str(int(seed))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def submit(self, x: np.ndarray) -> None:
        """Send the embedding to lay out, ``(n_papers, dim)`` float32 rows (in the order :meth:`result` returns).

        Raises:
            RuntimeError: the child is closed.
        """
        if self._proc is None:
            raise RuntimeError("this LayoutChild is closed")
        x = np.ascontiguousarray(x, dtype="<f4")
        self._n = len(x)
        try:
            _send(self._proc.stdin, struct.pack("<QQ", *x.shape) + x.tobytes())
        except (BrokenPipeError, OSError):  # it died: result() says how
            pass

    def result(self) -> np.ndarray:
        """The submitted embedding's map, ``(n_papers, 2)`` float32 (waits for the child).

        Raises:
            RuntimeError: the child died, failed (the message carries its error) or is closed.
        """
        proc = self._proc
        if proc is None:
            raise RuntimeError("this LayoutChild is closed")
        try:
            msg = _receive(proc.stdout)
            if msg[:1] == _READY:
                msg = _receive(proc.stdout)
        except (EOFError, OSError, ValueError) as e:
            self.close()
            raise RuntimeError(f"the layout process (pid {proc.pid}) ended unexpectedly") from e
        if msg[:1] == _ERROR:
            self.close()
            err = json.loads(msg[1:].decode())
            raise RuntimeError(f"the layout process failed: {err['kind']}: {err['message']}")
        self.close()
        return np.frombuffer(msg[1:], dtype="<f4").reshape(self._n, 2).astype(np.float32)

    def close(self) -> None:
        """End the child (killed if it is still working: nothing of it is kept). Idempotent."""
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        if proc.poll() is None:
            proc.kill()
        for fh in (proc.stdin, proc.stdout):
            try:
                fh.close()
            except (OSError, ValueError):
                pass
        proc.wait()


if __name__ == "__main__":
    main()
