"""The embedding model in a child process, so that its memory is the system's again when the embedding is done.

A process that has run torch keeps most of what it took: the runtime and the model (~0.5 GB) and the allocator's
caches after batches of varying length (~0.5 GB more), even after the model is dropped and the heap trimmed. A
large build therefore embeds in a child process (:class:`ChildEmbedder`: ``python -m
paperatlas.engines.embed_child``, a fresh interpreter with nothing of the parent's heap) that exits before the
topic stage, and the parent never imports torch. A plain subprocess rather than multiprocessing's ``spawn``: spawn
imports the caller's main script again in the child, which reruns the build of a script without an
``if __name__ == "__main__"`` guard.

Only bytes travel between the two, through the child's stdin and stdout, each message an 8-byte little-endian
length and the payload: the texts as UTF-8 JSON one way, the vectors as raw little-endian float32 rows the other
(no Python objects are serialised). The child runs the same :class:`~paperatlas.enrich.embed.MiniLMEmbedder` on
the same batches as the parent would, so the vectors are the in-process ones (bit for bit on this machine; the
tests allow 1e-6).
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..enrich.embed import EmbedderUnavailable, MiniLMEmbedder

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


def _trim_heap() -> None:
    """Give the heap the model's last batch freed back to the OS (glibc ``malloc_trim``; a no-op elsewhere)."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _error(e: BaseException) -> bytes:
    return _ERROR + json.dumps({"kind": type(e).__name__, "message": str(e)}).encode()


def main(argv: list[str] | None = None) -> None:
    """The child: load the model, then answer each message of texts with their vectors until stdin closes.

    Args:
        argv: ``[precision, batch_size]`` (default ``sys.argv[1:]``); the precision is resolved here, so the parent
            need not import torch.
    """
    precision, batch_size = (argv or sys.argv[1:])[:2]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: the child ends when it does
    out = os.fdopen(os.dup(1), "wb")  # the protocol's own: whatever a library prints goes to stderr
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    try:
        model = MiniLMEmbedder(batch_size=int(batch_size), precision=precision)
    except Exception as e:  # noqa: BLE001 - every failure is the parent's to report
        _send(out, _error(e))
        return
    _send(out, _READY + model.precision.encode())
    while True:
        try:
            texts = json.loads(_receive(inp).decode())
        except (EOFError, OSError):  # the parent closed the pipe (done) or is gone: exit now, without the
            os._exit(0)  # interpreter's teardown of torch (seconds on a busy machine, nothing to keep)
        try:
            vectors = model.encode(texts)
        except Exception as e:  # noqa: BLE001
            _send(out, _error(e))
            continue
        _send(out, _VECTORS + np.ascontiguousarray(vectors, dtype="<f4").tobytes())
        _trim_heap()


class ChildEmbedder:
    """:class:`~paperatlas.enrich.embed.MiniLMEmbedder` run in a child process (the :class:`Embedder` protocol).

    Start-up loads torch and the model in the child (3-5 s, as in-process); :meth:`close` (or leaving a ``with``
    block) ends the child and with it all the memory the model took. The child's warnings go to this process's
    stderr.

    Args:
        precision: ``auto``, ``fp32`` or ``bf16`` (:func:`paperatlas.enrich.embed.resolve_precision`, run in the
            child).
        batch_size: texts per forward pass (default 32, as in-process).

    Raises:
        EmbedderUnavailable: the model's package (or sentence-transformers) is missing in the child; the message
            names the package to install.
        ValueError: an unknown precision, or bf16 on a CPU without native bf16.
        RuntimeError: the child failed to start or load the model otherwise (the message carries its error).
    """

    name = MiniLMEmbedder.name
    dim = MiniLMEmbedder.dim

    def __init__(self, precision: str = "auto", batch_size: int = 32):
        env = dict(os.environ)  # the child imports this paperatlas, installed or not
        src = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(x for x in (src, env.get("PYTHONPATH")) if x)
        # glibc: blocks from 128 KiB (a batch's activations) mapped on their own and unmapped when freed, instead of
        # heap the next batch's different shapes fragment; the child's peak 898 -> 702 MiB over 768 abstracts
        env.setdefault("MALLOC_MMAP_THRESHOLD_", str(128 * 1024))
        self._proc: subprocess.Popen | None = subprocess.Popen(
            [sys.executable, "-m", "paperatlas.engines.embed_child", precision, str(batch_size)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        try:
            #: the arithmetic the child runs, ``fp32`` or ``bf16``
            self.precision = self._reply(_READY).decode()
        except BaseException:
            self.close()
            raise

    def _reply(self, kind: bytes) -> bytes:
        """The payload of the child's next message, which must be of ``kind``; its error raised here otherwise."""
        try:
            msg = _receive(self._proc.stdout)
        except (EOFError, OSError) as e:
            code = self._proc.wait(timeout=10)
            raise RuntimeError(f"the embedding process (pid {self._proc.pid}) ended unexpectedly (exit code "
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

    def encode(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Embed ``texts`` in the child as ``(len(texts), 384)`` float32, L2-normalised rows (in the order given).

        Args:
            texts: the texts to embed (see :func:`paperatlas.enrich.embed.paper_text`).
            progress: optional callback, called once with ``len(texts)`` when they are done.

        Returns:
            ``(len(texts), 384)`` float32, L2-normalised: what ``MiniLMEmbedder.encode`` returns for them.

        Raises:
            RuntimeError: the child died (e.g. killed for memory) or failed on these texts.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._proc is None:
            raise RuntimeError("this ChildEmbedder is closed")
        try:
            _send(self._proc.stdin, json.dumps(texts).encode())
        except (BrokenPipeError, OSError):  # it died: _reply says how
            pass
        raw = self._reply(_VECTORS)
        vectors = np.frombuffer(raw, dtype="<f4").reshape(len(texts), self.dim).astype(np.float32)
        if progress:
            progress(len(texts))
        return vectors

    def close(self) -> None:
        """End the child (it exits when its stdin closes; killed if it has not after 60 s). Idempotent."""
        if self._proc is None:
            return
        for fh in (self._proc.stdin, self._proc.stdout):
            try:
                fh.close()
            except OSError:  # a broken pipe: the child is gone already
                pass
        try:
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # pragma: no cover - stuck in a batch
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def __enter__(self) -> ChildEmbedder:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


if __name__ == "__main__":
    main()
