"""A disk cache of the evaluations' MiniLM embeddings, keyed by text, so repeated ``paperatlas eval`` runs skip them.

Embedding the gold sets is most of a quick run's time (20-38 papers/s on 2 cores: AAAI 2022's 1,319 papers take
about a minute). The vectors depend only on the text, the model and its precision, so they are kept in
``<cache root>/eval-embeddings/<model>@<precision>.npz`` (cache root: ``$PAPERATLAS_CACHE``, else
``$XDG_CACHE_HOME/paperatlas``, default ``~/.cache/paperatlas``; :func:`paperatlas.sources._common.cache_root`):
``keys`` (SHA-1 of each UTF-8 text, hex) and ``vectors`` (float32 rows). A text is looked up by its hash; only
the missing ones are embedded, then appended and the file replaced atomically (two runs at once may each drop
the other's new rows, never corrupt the file). An unreadable file counts as empty.

The model is loaded only when a text is missing. Only an embedder whose ``name`` and ``precision`` give the key
asked for (:class:`paperatlas.enrich.embed.MiniLMEmbedder`) is cached; any other (a test's stand-in) embeds
everything itself. ``PAPERATLAS_EVAL_CACHE=off`` turns the cache off.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..settings import settings

#: environment variable; ``off`` (or ``0``) disables the cache
CACHE_ENV = "PAPERATLAS_EVAL_CACHE"


def embedder_key(name: str | None, precision: str = "") -> str | None:
    """The cache key of an embedder: its model's versioned name and its precision.

    Args:
        name: The embedder's ``name`` (None or empty: not cached).
        precision: Its precision (``fp32`` / ``bf16``).

    Returns:
        ``"<name>@<precision>"`` with unsafe file-name characters replaced, or None.
    """
    return re.sub(r"[^A-Za-z0-9._@-]+", "_", f"{name}@{precision}") if name else None


def cache_file(key: str | None) -> Path | None:
    """Where the vectors of an embedder are cached.

    Args:
        key: :func:`embedder_key`.

    Returns:
        The ``.npz`` path, or None when ``key`` is None or the cache is off (:data:`CACHE_ENV`).
    """
    from ..sources._common import cache_root

    if not key or not settings.eval_cache:
        return None
    return cache_root() / "eval-embeddings" / f"{key}.npz"


def text_key(text: str) -> str:
    """The cache key of a text: SHA-1 hex of its UTF-8 bytes."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _read(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        with np.load(path) as z:  # object arrays are refused (numpy's default)
            keys, vectors = z["keys"], z["vectors"]
        if keys.ndim == 1 and vectors.ndim == 2 and len(keys) == len(vectors):
            return keys, vectors.astype(np.float32, copy=False)
    except (OSError, ValueError, KeyError):
        pass
    return np.zeros(0, dtype="<U40"), np.zeros((0, 0), dtype=np.float32)


def _write(path: Path, keys: np.ndarray, vectors: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp.npz")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, keys=keys, vectors=vectors)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cached_encode(texts: Sequence[str], key: str | None, load: Callable[[], object],
                  progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Embed texts, taking the ones embedded before from the disk cache; the model is loaded only for the others.

    Args:
        texts: The texts.
        key: :func:`embedder_key` of the embedder ``load`` is expected to give (None: no cache).
        load: Gives the embedder (``encode(texts, progress=...)`` -> ``(n, dim)`` float32; ``name`` and
            ``precision``). When its own key is not ``key`` (a stand-in without a name), every text is embedded by
            it and nothing is cached.
        progress: Called with the number of texts done: the cached ones at once, the others as they are embedded.

    Returns:
        ``(len(texts), dim)`` float32, each row what the embedder's ``encode`` gives for that text.
    """
    texts = list(texts)
    path = cache_file(key)
    if path is None:
        return np.asarray(load().encode(texts, progress=progress), dtype=np.float32)
    keys, vectors = _read(path)
    row = {k: i for i, k in enumerate(keys.tolist())}
    wanted = [text_key(t) for t in texts]
    missing = list(dict.fromkeys(k for k in wanted if k not in row))
    if not missing:
        if progress:
            progress(len(texts))
        return vectors[[row[k] for k in wanted]] if texts else np.zeros((0, vectors.shape[1]), np.float32)
    embedder = load()
    if embedder_key(getattr(embedder, "name", None), getattr(embedder, "precision", "")) != key:
        return np.asarray(embedder.encode(texts, progress=progress), dtype=np.float32)
    if progress:
        progress(len(texts) - sum(1 for k in wanted if k not in row))
    first: dict[str, str] = {}
    for t, k in zip(texts, wanted, strict=True):
        first.setdefault(k, t)
    new = np.asarray(embedder.encode([first[k] for k in missing], progress=progress), dtype=np.float32)
    if progress:  # texts given twice: their second copy
        progress(sum(1 for k in wanted if k not in row) - len(missing))
    if vectors.shape[1:] != new.shape[1:]:  # another dimension: start the file again
        keys, vectors = np.zeros(0, dtype="<U40"), np.zeros((0, new.shape[1]), dtype=np.float32)
    keys = np.concatenate([keys, np.asarray(missing, dtype="<U40")])
    vectors = np.concatenate([vectors, new]) if len(vectors) else new
    row = {k: i for i, k in enumerate(keys.tolist())}
    try:
        _write(path, keys, vectors)
    except OSError:  # a read-only cache directory: the run still gets its vectors
        pass
    return vectors[[row[k] for k in wanted]]
