"""The local engine: the per-paper work in this process, batch after batch (the embedding optionally in a child)."""

from __future__ import annotations

import queue
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from ..enrich.embed import Embedder, get_embedder
from ..enrich.keyphrases import KeyphraseExtractor
from ..plugins import EngineBase
from .embed_child import ChildEmbedder
from .work import WorkItem, WorkResult, annotate_batch, embed_texts, enrich_batch


class _Ahead(NamedTuple):
    """What :meth:`LocalEngine.embed_ahead` handed the child, for :meth:`LocalEngine.run` to collect."""

    items: list[WorkItem]  #: the papers it was asked for (run must get this very list)
    batches: list[list[WorkItem]]  #: run's batches of them
    pool: ThreadPoolExecutor  #: the threads that talk to the children, one per child
    pending: deque[tuple[list[WorkItem], Future]]  #: embedding batches and their vectors to come, in order


class LocalEngine(EngineBase):
    """Runs the per-paper work (:mod:`paperatlas.engines.work`) here, ``batch_size`` papers at a time.

    Papers that need an embedding go first (in batches of their own), so an interrupted build has written as many
    vectors as possible; the model is loaded only when one does.

    With ``embed_in_child`` the default model runs in a child process
    (:class:`~paperatlas.engines.embed_child.ChildEmbedder`) that ends with the last embedding batch, so the memory
    torch took (~1 GB at 42k papers) is free for the stages after this one; the vectors are the same. The child
    embeds while this process makes the keyphrases and TL;DRs (two cores busy instead of one): all embedding batches
    are handed to it at once, each batch's annotations are yielded as soon as they are made, and its vectors when
    the child sends them. A lone child of several torch threads runs one thread fewer while this
    process annotates (torch's threads wait for each other at every operation, so one descheduled for this
    process's work stalls the rest: the 42k build's embedding ran ~45 % slower so), and on every core once it is
    done. :meth:`start_embedder` starts the child (and its 3-5 s of model loading) before
    :meth:`run`, while the caller is still reading its inputs, and :meth:`embed_ahead` hands it the papers to embed
    while the caller still prepares the keyphrase statistics. Without ``embed_in_child`` the model is loaded here
    and kept for the next build in this process (:func:`get_embedder`), and each batch is embedded then annotated.

    Args:
        precision: how the embedding model runs (one of :data:`paperatlas.enrich.embed.PRECISIONS`).
        batch_size: papers per batch (default 256).
        embedder: an embedder to use instead of the default model (tests, benchmarks).
        embed_in_child: run the default model in a child process (ignored when ``embedder`` is given).
        processes: with ``embed_in_child``, this many children of one torch thread each, embedding batches side by
            side (where this machine's measurement found that faster than one process's threads:
            :func:`paperatlas.enrich.embed.embedding_processes`); 1 (the default): one child, torch's threads.
    """

    name = "local"

    def __init__(self, precision: str = "auto", batch_size: int = 256, embedder: Embedder | None = None,
                 embed_in_child: bool = False, processes: int = 1):
        self.precision = precision
        self.batch_size = batch_size
        self.embedder = embedder
        self.embed_in_child = embed_in_child
        self.processes = max(1, processes)
        self._children: list[ChildEmbedder] = []
        self._ahead: _Ahead | None = None

    def start_embedder(self) -> None:
        """Start the embedding child now, so its model loads while the caller does other work (idempotent).

        Does nothing unless ``embed_in_child`` is set and no ``embedder`` was given. :meth:`run` uses the child, or
        :meth:`close` ends it (a build that finds nothing to embed).
        """
        if self.embed_in_child and self.embedder is None and not self._children:
            threads = 1 if self.processes > 1 else None
            self._children = [ChildEmbedder(precision=self.precision, wait=False, threads=threads)
                              for _ in range(self.processes)]

    def close(self) -> None:
        """End the embedding children if any are running, and forget what they were given (idempotent)."""
        if self._ahead is not None:
            self._ahead.pool.shutdown(wait=False, cancel_futures=True)
            self._ahead = None
        children, self._children = self._children, []
        for child in children:
            child.close()

    def _batches(self, items: list[WorkItem]) -> list[list[WorkItem]]:
        """The batches :meth:`run` makes of ``items``: those that need an embedding first."""
        ordered = [it for it in items if it.embed] + [it for it in items if not it.embed]
        return [ordered[s:s + self.batch_size] for s in range(0, len(ordered), self.batch_size)]

    def embed_ahead(self, items: list[WorkItem]) -> None:
        """Hand the embedding child the papers of ``items`` that need a vector now, before :meth:`run`.

        The child embeds while the caller finishes what :meth:`run` needs (the keyphrase statistics); :meth:`run`
        must then get the same ``items`` (the list object) to use these vectors. Does nothing without
        ``embed_in_child``, with an ``embedder``, or when no item needs a vector.

        Args:
            items: the papers, as :meth:`run` will get them.
        """
        if not (self.embed_in_child and self.embedder is None) or not any(it.embed for it in items):
            return
        self.start_embedder()
        batches = self._batches(items)
        if len(self._children) == 1:  # a core for this process's keyphrases and TL;DRs meanwhile
            self._children[0].spare_cores(1)
        free: queue.SimpleQueue[ChildEmbedder] = queue.SimpleQueue()
        for child in self._children:
            free.put(child)

        def encode(texts: list[str]) -> np.ndarray:  # on whichever child is free (one batch at a time each)
            child = free.get()
            try:
                return child.encode(texts)
            finally:
                free.put(child)

        pool = ThreadPoolExecutor(max_workers=len(self._children), thread_name_prefix="paperatlas-embed")
        pending: deque[tuple[list[WorkItem], Future]] = deque(
            (batch, pool.submit(encode, embed_texts(batch)))
            for batch in batches if any(it.embed for it in batch))
        self._ahead = _Ahead(items, batches, pool, pending)

    def run(self, items: list[WorkItem], kx: KeyphraseExtractor,
            progress: Callable[[int], None] | None = None) -> Iterator[WorkResult]:
        """Yield :class:`WorkResult` batches as they are done.

        Args:
            items: the papers.
            kx: the fitted keyphrase extractor.
            progress: called with the number of papers of each finished batch (once per batch, when both its
                annotations and its vectors are made).

        Yields:
            :class:`WorkResult`: in this process, one per batch (embedding batches first); with the embedding child,
            a batch's annotations and its vectors as two results (see the class docstring), one of them marked
            ``waiting`` when only the child's vectors are left to come.

        Raises:
            paperatlas.enrich.embed.EmbedderUnavailable: a paper needs embedding and the model is not installed.
            RuntimeError: the embedding child process died (``embed_in_child``).
        """
        if self._ahead is not None and self._ahead.items is not items:  # embedded ahead for other papers
            self.close()
        if self._ahead is None:
            self.embed_ahead(items)
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            yield from self._run_with_child(ahead, kx, progress)
            return
        self.close()  # nothing to embed after all: a child started early is not needed
        n_embed = sum(it.embed for it in items)
        embedder = self.embedder
        if embedder is None and n_embed:
            embedder = get_embedder(precision=self.precision)
        for batch in self._batches(items):
            res = enrich_batch(batch, kx, embedder)
            if progress:
                progress(len(batch))
            yield res

    def _run_with_child(self, ahead: _Ahead, kx: KeyphraseExtractor,
                        progress: Callable[[int], None] | None) -> Iterator[WorkResult]:
        """This thread annotates every batch while the child embeds ``ahead.pending`` (in ``ahead.pool``'s thread)."""
        batches, pool, pending = ahead.batches, ahead.pool, ahead.pending
        finished = False
        try:
            def vectors(wait: bool) -> Iterator[WorkResult]:
                while pending and (wait or pending[0][1].done()):
                    batch, fut = pending[0]
                    t0 = time.perf_counter()
                    vecs = fut.result()
                    pending.popleft()
                    if progress:
                        progress(len(batch))
                    yield WorkResult(rows=[], keyphrases=[], label_terms=[], tldrs=[],
                                     embedded=[it.row for it in batch if it.embed], vectors=vecs,
                                     seconds={"embed": time.perf_counter() - t0})

            for batch in batches:
                res = annotate_batch(batch, kx)
                if progress and not any(it.embed for it in batch):
                    progress(len(batch))
                yield res
                yield from vectors(wait=False)
            if len(self._children) == 1:  # this process is done annotating: every core embeds
                self._children[0].spare_cores(0)
            if pending:
                yield WorkResult(rows=[], keyphrases=[], label_terms=[], tldrs=[], embedded=[],
                                 vectors=np.zeros((0, 0), dtype=np.float32), waiting=True)
            yield from vectors(wait=True)
            finished = True
        finally:  # also when the build stops early (an error, Ctrl-C): the child never outlives the run
            for _batch, fut in pending:
                fut.cancel()
            self.close()  # kills a child still embedding; an idle one exits
            pool.shutdown(wait=True)
            if not finished:
                for _batch, fut in pending:  # what the ended child's thread raised is not this build's error
                    if fut.done() and not fut.cancelled():
                        fut.exception()
