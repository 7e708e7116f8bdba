"""A fast query embedder: the same all-MiniLM-L6-v2, run by ONNX Runtime with no torch import.

A command-line search must not spend 5 s importing torch and sentence-transformers to embed five words: queries are
embedded by :class:`~paperatlas.enrich.onnx_embed.OnnxEmbedder` (the bundled model's ONNX export, vectors equal to
sentence-transformers' within 1e-6). The export (once per machine, ~5 s) happens at the first build or the first
query; when it is impossible (no ``onnx``/``onnxruntime``, or a read-only cache), :func:`query_embedder` falls back
to sentence-transformers at fp32.
"""

from __future__ import annotations

import sys

from ..settings import settings
from .embed import DEFAULT_MODEL, get_embedder
from .onnx_embed import OnnxEmbedder, export_onnx, onnx_path

_FAST: dict[str, OnnxEmbedder] = {}


def query_embedder(allow_export: bool = True):
    """The fastest available embedder for queries: ONNX Runtime when it can be had, else sentence-transformers.

    Args:
        allow_export: export the model to ONNX now when it has not been (once per machine, ~5 s).

    Returns:
        An object with ``encode(texts) -> (n, 384) float32`` (L2-normalised rows), equal to
        :func:`~paperatlas.enrich.embed.get_embedder`'s within 1e-6.

    Raises:
        paperatlas.enrich.embed.EmbedderUnavailable: when no embedder can be loaded (names the package).
    """
    if DEFAULT_MODEL in _FAST:
        return _FAST[DEFAULT_MODEL]
    try:
        path = onnx_path()
        if not path.exists() and allow_export:
            path = export_onnx()
        if path.exists():
            _FAST[DEFAULT_MODEL] = OnnxEmbedder(path)
            return _FAST[DEFAULT_MODEL]
    except Exception as e:  # noqa: BLE001 - no onnxruntime/onnx, a read-only cache, a failed export: fall back
        if settings.debug:
            print(f"paperatlas: fast query model unavailable ({e}); using sentence-transformers", file=sys.stderr)
    return get_embedder(precision="fp32")  # not $PAPERATLAS_PRECISION: that may be onnx-fp32
