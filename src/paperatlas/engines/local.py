"""The local engine: the per-paper work in this process, batch after batch (the embedding optionally in a child)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..enrich.embed import Embedder, get_embedder
from ..enrich.keyphrases import KeyphraseExtractor
from .embed_child import ChildEmbedder
from .work import WorkItem, WorkResult, enrich_batch


class LocalEngine:
    """Runs :func:`~paperatlas.engines.work.enrich_batch` here, ``batch_size`` papers at a time.

    Papers that need an embedding go first (in batches of their own), so an interrupted build has written as many
    vectors as possible; the model is loaded only when one does.

    With ``embed_in_child`` the default model runs in a child process
    (:class:`~paperatlas.engines.embed_child.ChildEmbedder`) that ends with the last embedding batch, so the memory
    torch took (~1 GB at 42k papers) is free for the stages after this one; the vectors are the same. Without it
    the model is loaded here and kept for the next build in this process (:func:`get_embedder`).

    Args:
        precision: the embedding model's arithmetic (``auto``, ``fp32``, ``bf16``).
        batch_size: papers per batch (default 256).
        embedder: an embedder to use instead of the default model (tests, benchmarks).
        embed_in_child: run the default model in a child process (ignored when ``embedder`` is given).
    """

    name = "local"

    def __init__(self, precision: str = "auto", batch_size: int = 256, embedder: Embedder | None = None,
                 embed_in_child: bool = False):
        self.precision = precision
        self.batch_size = batch_size
        self.embedder = embedder
        self.embed_in_child = embed_in_child

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
            RuntimeError: the embedding child process died (``embed_in_child``).
        """
        ordered = [it for it in items if it.embed] + [it for it in items if not it.embed]
        n_embed = len(ordered) - sum(1 for it in items if not it.embed)
        embedder, child = self.embedder, None
        if embedder is None and n_embed:
            if self.embed_in_child:
                embedder = child = ChildEmbedder(precision=self.precision)
            else:
                embedder = get_embedder(precision=self.precision)
        try:
            for start in range(0, len(ordered), self.batch_size):
                batch = ordered[start:start + self.batch_size]
                res = enrich_batch(batch, kx, embedder)
                if child is not None and start + self.batch_size >= n_embed:  # the last embedding batch is done
                    child.close()
                    child = None
                if progress:
                    progress(len(batch))
                yield res
        finally:  # also when the build stops early (an error, Ctrl-C): the child never outlives the run
            if child is not None:
                child.close()
