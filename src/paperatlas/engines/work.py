"""The per-paper work of a build, on one batch of papers: the same function in every engine."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..enrich.embed import Embedder, paper_text
from ..enrich.keyphrases import KeyphraseExtractor
from ..enrich.tldr import extract_tldr

#: candidate phrases kept per paper as evidence for topic labels (besides its keyphrases)
LABEL_TERMS = 15


@dataclass
class WorkItem:
    """One paper to work on.

    Attributes:
        row: the paper's position in the build (results are matched back by it).
        title: the title.
        text: the abstract, or the digest when there is no abstract (keyphrases and TL;DR are made from it).
        abstract: the abstract as embedded (:func:`paperatlas.enrich.embed.paper_text` of title and abstract).
        embed: whether it needs an embedding (no stored vector for its text).
        tldr: whether it needs an extractive TL;DR (False when the authors' own TL;DR is kept, a generative
            backend writes it, or the last build's is reused).
        keyphrases: whether it needs keyphrases and label terms (False when the last build's are reused).
    """

    row: int
    title: str
    text: str
    abstract: str = ""
    embed: bool = True
    tldr: bool = True
    keyphrases: bool = True


@dataclass
class WorkResult:
    """What :func:`enrich_batch` made for one batch, in the batch's order.

    Attributes:
        rows: the items' rows.
        keyphrases: the paper's keyphrases (3-8), per row; None where the item asked for none.
        label_terms: its keyphrases then its best other candidate phrases (at most :data:`LABEL_TERMS` more),
            per row; None where the item asked for none.
        tldrs: the extractive TL;DR, or None where the item asked for none.
        embedded: the rows that were embedded (a subset of ``rows``, in order).
        vectors: ``(len(embedded), dim)`` float32, L2-normalised.
        seconds: stage name (``embed``, ``keyphrases``, ``tldr``) -> wall time spent on this batch, seconds.
        waiting: the engine has no work left in this process, only vectors still to come from its embedding child:
            the driver may now do what needs no vectors (the results after this one carry only vectors).

    A result may carry only the keyphrases and TL;DRs of its rows (``embedded`` empty), or only vectors (``rows``
    empty): the local engine yields a batch's annotations as soon as they are made and its vectors when the
    embedding child sends them.
    """

    rows: list[int]
    keyphrases: list[list[str] | None]
    label_terms: list[list[str] | None]
    tldrs: list[str | None]
    embedded: list[int]
    vectors: np.ndarray
    seconds: dict[str, float] = field(default_factory=dict)
    waiting: bool = False


def enrich_batch(items: list[WorkItem], kx: KeyphraseExtractor, embedder: Embedder | None) -> WorkResult:
    """Keyphrases, label terms, extractive TL;DR and (where asked) the embedding of each item.

    Args:
        items: the batch.
        kx: a keyphrase extractor fitted on the whole corpus (:meth:`KeyphraseExtractor.fit`).
        embedder: the embedding model; may be None when no item needs embedding.

    Returns:
        The :class:`WorkResult`.

    Raises:
        ValueError: an item needs embedding and ``embedder`` is None.
    """
    to_embed = [it for it in items if it.embed]
    if to_embed and embedder is None:
        raise ValueError(f"{len(to_embed)} papers need embedding but no embedder was given")
    t0 = time.perf_counter()
    vectors = (embedder.encode(embed_texts(items)) if to_embed
               else np.zeros((0, embedder.dim if embedder else 0), dtype=np.float32))
    seconds = {"embed": time.perf_counter() - t0}
    res = annotate_batch(items, kx)
    res.seconds = {**seconds, **res.seconds}
    res.embedded, res.vectors = [it.row for it in to_embed], np.asarray(vectors, dtype=np.float32)
    return res


def embed_texts(items: list[WorkItem]) -> list[str]:
    """The texts to embed of the items that need an embedding (:func:`paperatlas.enrich.embed.paper_text`).

    Args:
        items: a batch.

    Returns:
        One text per item with ``embed`` set, in the batch's order.
    """
    return [paper_text(it.title, it.abstract) for it in items if it.embed]


def annotate_batch(items: list[WorkItem], kx: KeyphraseExtractor) -> WorkResult:
    """Keyphrases, label terms and extractive TL;DR of each item that asks for them; no embedding.

    Args:
        items: the batch.
        kx: a keyphrase extractor fitted on the whole corpus (:meth:`KeyphraseExtractor.fit`).

    Returns:
        The :class:`WorkResult`, with ``embedded`` empty and ``vectors`` of shape ``(0, 0)``.
    """
    t1 = time.perf_counter()
    keyphrases, label_terms = [], []
    for it in items:
        if not it.keyphrases:
            keyphrases.append(None)
            label_terms.append(None)
            continue
        scored = kx.score(it.title, it.text)
        kps = kx.extract(it.title, it.text, scored=scored)
        keyphrases.append(kps)
        label_terms.append(list(dict.fromkeys([*kps, *(ph for ph, _ in scored[:LABEL_TERMS])])))
    t2 = time.perf_counter()
    tldrs = [extract_tldr(it.title, it.text) if it.tldr else None for it in items]
    seconds = {"keyphrases": t2 - t1, "tldr": time.perf_counter() - t2}
    return WorkResult(rows=[it.row for it in items], keyphrases=keyphrases, label_terms=label_terms, tldrs=tldrs,
                      embedded=[], vectors=np.zeros((0, 0), dtype=np.float32), seconds=seconds)
