"""The local engine: the per-paper work in this process, batch after batch."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..enrich.embed import Embedder, get_embedder
from ..enrich.keyphrases import KeyphraseExtractor
from .work import WorkItem, WorkResult, enrich_batch


class LocalEngine:
    """Runs :func:`~paperatlas.engines.work.enrich_batch` here, ``batch_size`` papers at a time.

    Papers that need an embedding go first (in batches of their own), so an interrupted build has written as many
    vectors as possible; the model is loaded only when one does.

    Args:
        precision: the embedding model's arithmetic (``auto``, ``fp32``, ``bf16``).
        batch_size: papers per batch (default 256).
        embedder: an embedder to use instead of the default model (tests, benchmarks).
    """

    name = "local"

    def __init__(self, precision: str = "auto", batch_size: int = 256, embedder: Embedder | None = None):
        self.precision = precision
        self.batch_size = batch_size
        self.embedder = embedder

    def run(self, items: list[WorkItem], kx: KeyphraseExtractor,
            progress: Callable[[int], None] | None = None) -> Iterator[WorkResult]:
        """Yield one :class:`WorkResult` per batch as it is done.

        Args:
            items: the papers.
            kx: the fitted keyphrase extractor.
            progress: called with the number of papers of each finished batch.

        Yields:
            :class:`WorkResult`, in the order of the batches (embedding batches first).

        Raises:
            paperatlas.enrich.embed.EmbedderUnavailable: a paper needs embedding and the model is not installed.
        """
        ordered = [it for it in items if it.embed] + [it for it in items if not it.embed]
        embedder = self.embedder
        if embedder is None and any(it.embed for it in items):
            embedder = get_embedder(precision=self.precision)
        for start in range(0, len(ordered), self.batch_size):
            batch = ordered[start:start + self.batch_size]
            res = enrich_batch(batch, kx, embedder)
            if progress:
                progress(len(batch))
            yield res
