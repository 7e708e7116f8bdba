"""The embedding model in a child process, so that its memory is the system's again when the embedding is done.

A process that has run torch keeps most of what it took: the runtime and the model (~0.5 GB) and the allocator's
caches after its batches (~0.3 GB more, flat over a long embedding since batches are padded to a few widths:
:data:`~paperatlas.enrich.embed.PAD_TO_MULTIPLE_OF`), even after the model is dropped and the heap trimmed. A
large build therefore embeds in a child process (:class:`ChildEmbedder`: ``python -m
paperatlas.engines.embed_child``, a fresh interpreter with nothing of the parent's heap) that exits before the
topic stage, and the parent never imports torch. A plain subprocess rather than multiprocessing's ``spawn``: spawn
imports the caller's main script again in the child, which reruns the build of a script without an
``if __name__ == "__main__"`` guard.

Only bytes travel between the two, through the child's stdin and stdout, each message an 8-byte little-endian
length and the payload: the texts as UTF-8 JSON one way, the vectors as raw little-endian float32 rows the other
(no Python objects are serialised). The child runs the same embedder on the same batches as the parent would
(:func:`load_embedder`: :class:`~paperatlas.enrich.embed.MiniLMEmbedder`, or for the ``onnx-fp32`` path
:class:`~paperatlas.enrich.onnx_embed.OnnxEmbedder`, which loads no torch), so the vectors are the in-process ones
(bit for bit on this machine; the tests allow 1e-6).
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..enrich.embed import EmbedderUnavailable, MiniLMEmbedder, onnx_embedder, resolve_precision
from ..memory import trim_heap

#: first byte of a message from the child: R(eady) + precision, V(ectors) + float32 rows, E(rror) + JSON
_READY, _VECTORS, _ERROR = b"R", b"V", b"E"


def _send(fh: BinaryIO, payload: bytes) -> None:
    fh.write(struct.pack("<Q", len(payload)))
    fh.write(payload)
    fh.flush()


def _receive(fh: BinaryIO) -> bytes:
    """The next message's payload; EOFError when the other side has closed the pipe."""
    head = fh.read(8)
    if len(head) < 8:
        raise EOFError
    payload = fh.read(struct.unpack("<Q", head)[0])
    if len(payload) < struct.unpack("<Q", head)[0]:
        raise EOFError
    return payload


def _error(e: BaseException) -> bytes:
    return _ERROR + json.dumps({"kind": type(e).__name__, "message": str(e)}).encode()


def load_embedder(precision: str, batch_size: int = 32, threads: int = 0):
    """The embedder of the path ``precision`` resolves to, on ``threads`` intra-op threads.

    Args:
        precision: one of :data:`paperatlas.enrich.embed.PRECISIONS` (resolved here:
            :func:`~paperatlas.enrich.embed.resolve_precision`).
        batch_size: texts per forward pass of the torch paths.
        threads: intra-op threads; 0 for the library's default (one per core).

    Returns:
        An :class:`~paperatlas.enrich.onnx_embed.OnnxEmbedder` for ``onnx-fp32`` (torch is not imported), else a
        :class:`~paperatlas.enrich.embed.MiniLMEmbedder` (which measures this machine first under ``auto`` when
        it has not been measured).

    Raises:
        EmbedderUnavailable: a package is missing (named).
        ValueError: an unknown precision.
    """
    if resolve_precision(precision) == "onnx-fp32":
        return onnx_embedder(threads or None)
    if threads:
        import torch

        torch.set_num_threads(threads)
    return MiniLMEmbedder(batch_size=batch_size, precision=precision)


def main(argv: list[str] | None = None) -> None:
    """The child: load the model, then answer each message of texts with their vectors until stdin closes.

    Args:
        argv: ``[precision, batch_size, threads]`` (default ``sys.argv[1:]``; ``threads`` 0 or absent: the
            library's default); the precision is resolved here, so the parent need not import torch.
    """
    args = (argv or sys.argv[1:]) + ["0"]
    precision, batch_size, threads = args[:3]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: the child ends when it does
    out = os.fdopen(os.dup(1), "wb")  # the protocol's own: whatever a library prints goes to stderr
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    try:
        model = load_embedder(precision, int(batch_size), int(threads))
    except Exception as e:  # noqa: BLE001 - every failure is the parent's to report
        _send(out, _error(e))
        return
    own_threads = model.threads  # what this child runs on when no core is spared (a "spare" setting)
    _send(out, _READY + model.precision.encode())
    while True:
        try:
            texts = json.loads(_receive(inp).decode())
        except (EOFError, OSError):  # the parent closed the pipe (done) or is gone: exit now, without the
            os._exit(0)  # interpreter's teardown of torch (seconds on a busy machine, nothing to keep)
        if isinstance(texts, dict):  # a setting, not texts: no answer
            if "spare" in texts:
                model.set_threads(max(1, own_threads - int(texts["spare"])))
            continue
        try:
            vectors = model.encode(texts)
        except Exception as e:  # noqa: BLE001
            _send(out, _error(e))
            continue
        _send(out, _VECTORS + np.ascontiguousarray(vectors, dtype="<f4").tobytes())
        trim_heap()


class ChildEmbedder:
    """The embedding model run in a child process (the :class:`Embedder` protocol; :func:`load_embedder`).

    Start-up loads the model in the child (3-9 s with torch, as in-process; ~0.5 s for ``onnx-fp32``). With
    ``wait=False`` the constructor returns at once and the model loads while the caller does other work; the first
    :meth:`encode` (or reading :attr:`precision`) waits for it and raises what the start-up raised. :meth:`close` (or
    leaving a ``with`` block) ends the child and with it all the memory the model took. The child's warnings go to
    this process's stderr.

    :meth:`encode` may run in another thread than the one that made the embedder (one call at a time), so the
    caller can work while the child embeds (:class:`~paperatlas.engines.local.LocalEngine`).

    Args:
        precision: one of :data:`paperatlas.enrich.embed.PRECISIONS` (resolved in the child:
            :func:`paperatlas.enrich.embed.resolve_precision`).
        batch_size: texts per forward pass (default 32, as in-process).
        wait: wait here until the model is loaded (default); False to return at once.
        threads: intra-op threads in the child; None for the library's default (one per core). One per child when
            a build runs a child per core (:func:`paperatlas.enrich.embed.embedding_processes`).

    Raises:
        EmbedderUnavailable: the model's package (or sentence-transformers) is missing in the child; the message
            names the package to install (with ``wait=False``: from the first :meth:`encode`).
        ValueError: an unknown precision.
        RuntimeError: the child failed to start or load the model otherwise (the message carries its error).
    """

    name = MiniLMEmbedder.name
    dim = MiniLMEmbedder.dim

    def __init__(self, precision: str = "auto", batch_size: int = 32, wait: bool = True, threads: int | None = None):
        env = dict(os.environ)  # the child imports this paperatlas, installed or not
        src = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(x for x in (src, env.get("PYTHONPATH")) if x)
        # OpenMP threads that wait by sleeping, not spinning: the child shares the cores with this process's own work
        # (keyphrases, TL;DRs), and spinning threads fight it for them. 1,034 abstracts beside a busy core: 56.0 ->
        # 40.6 s; alone: 24.0 s either way (libgomp, the OpenMP of torch's Linux wheels)
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self._precision: str | None = None
        self._busy = False
        self._write = threading.Lock()  # a setting may be sent from one thread while another sends texts
        self._proc: subprocess.Popen | None = subprocess.Popen(
            [sys.executable, "-m", "paperatlas.engines.embed_child", precision, str(batch_size), str(threads or 0)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        if wait:
            try:
                self._wait_ready()
            except BaseException:
                self.close()
                raise

    @property
    def precision(self) -> str:
        """The path the child runs, one of :data:`paperatlas.enrich.embed.PATHS` (waits for the model to load)."""
        return self._wait_ready()

    def _wait_ready(self) -> str:
        if self._precision is None:
            if self._proc is None:
                raise RuntimeError("this ChildEmbedder is closed")
            self._precision = self._reply(_READY, self._proc).decode()
        return self._precision

    @staticmethod
    def _reply(kind: bytes, proc: subprocess.Popen) -> bytes:
        """The payload of ``proc``'s next message, which must be of ``kind``; its error raised here otherwise."""
        try:
            msg = _receive(proc.stdout)
        except (EOFError, OSError, ValueError) as e:  # ValueError: the pipe was closed here (close() from a thread)
            code = proc.wait(timeout=10)
            raise RuntimeError(f"the embedding process (pid {proc.pid}) ended unexpectedly (exit code "
                               f"{code}{'; killed for memory?' if code == -9 else ''})") from e
        if msg[:1] == _ERROR:
            err = json.loads(msg[1:].decode())
            if err["kind"] == "EmbedderUnavailable":
                raise EmbedderUnavailable(err["message"])
            if err["kind"] == "ValueError":
                raise ValueError(err["message"])
            raise RuntimeError(f"the embedding process failed: {err['kind']}: {err['message']}")
        if msg[:1] != kind:  # pragma: no cover - a protocol error between two copies of this module
            raise RuntimeError(f"the embedding process sent {msg[:1]!r} where {kind!r} was expected")
        return msg[1:]

    def spare_cores(self, n: int) -> None:
        """Ask the child to run its next batches on ``n`` torch threads fewer than it started with (at least 1).

        Counted from the child's own thread count (``threads``, or torch's default: physical cores), so a machine
        whose logical cores outnumber torch's threads is not oversubscribed; 0 gives them all back. Takes effect
        from the batch after the one in progress; does not wait. The local engine spares a lone child's core for
        the build process while it annotates (:class:`~paperatlas.engines.local.LocalEngine`): torch's threads wait
        for each other at every operation, so one of them descheduled for the build's own work stalls the rest.

        Args:
            n: threads to leave to other work, 0 or more.
        """
        self._setting({"spare": max(0, int(n))})

    def _setting(self, setting: dict) -> None:
        """Send a setting (no answer; applied between batches, in the order sent)."""
        if self._proc is not None:
            try:
                with self._write:
                    _send(self._proc.stdin, json.dumps(setting).encode())
            except (BrokenPipeError, OSError, ValueError):  # it died (or was closed): the next encode says how
                pass

    def encode(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Embed ``texts`` in the child as ``(len(texts), 384)`` float32, L2-normalised rows (in the order given).

        Args:
            texts: the texts to embed (see :func:`paperatlas.enrich.embed.paper_text`).
            progress: optional callback, called once with ``len(texts)`` when they are done.

        Returns:
            ``(len(texts), 384)`` float32, L2-normalised: what ``MiniLMEmbedder.encode`` returns for them.

        Raises:
            EmbedderUnavailable: the model's package is missing in the child.
            RuntimeError: the child died (e.g. killed for memory), failed on these texts, or was closed.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        proc = self._proc
        if proc is None:
            raise RuntimeError("this ChildEmbedder is closed")
        self._busy = True
        try:
            self._wait_ready()
            try:
                with self._write:
                    _send(proc.stdin, json.dumps(texts).encode())
            except (BrokenPipeError, OSError, ValueError):  # it died (or was closed): _reply says how
                pass
            raw = self._reply(_VECTORS, proc)
        finally:
            self._busy = False
        vectors = np.frombuffer(raw, dtype="<f4").reshape(len(texts), self.dim).astype(np.float32)
        if progress:
            progress(len(texts))
        return vectors

    def close(self) -> None:
        """End the child. Idempotent.

        An idle child exits when its stdin closes (killed if it has not after 60 s); one still loading the model or
        embedding (a build that stopped early, or had nothing to embed after all) is killed at once: it holds
        nothing to keep.
        """
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        if self._precision is None or self._busy:
            proc.kill()
        for fh in (proc.stdin, proc.stdout):
            try:
                fh.close()
            except (OSError, ValueError):  # a broken pipe: the child is gone already
                pass
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # pragma: no cover - stuck in a batch
            proc.kill()
            proc.wait()

    def __enter__(self) -> ChildEmbedder:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


if __name__ == "__main__":
    main()
