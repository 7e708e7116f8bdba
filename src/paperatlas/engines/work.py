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
    """

    rows: list[int]
    keyphrases: list[list[str] | None]
    label_terms: list[list[str] | None]
    tldrs: list[str | None]
    embedded: list[int]
    vectors: np.ndarray
    seconds: dict[str, float] = field(default_factory=dict)


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
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    to_embed = [it for it in items if it.embed]
    if to_embed and embedder is None:
        raise ValueError(f"{len(to_embed)} papers need embedding but no embedder was given")
    vectors = (embedder.encode([paper_text(it.title, it.abstract) for it in to_embed]) if to_embed
               else np.zeros((0, embedder.dim if embedder else 0), dtype=np.float32))
    t1 = time.perf_counter()
    seconds["embed"] = t1 - t0
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
    seconds["keyphrases"] = t2 - t1
    tldrs = [extract_tldr(it.title, it.text) if it.tldr else None for it in items]
    seconds["tldr"] = time.perf_counter() - t2
    return WorkResult(rows=[it.row for it in items], keyphrases=keyphrases, label_terms=label_terms, tldrs=tldrs,
                      embedded=[it.row for it in to_embed], vectors=np.asarray(vectors, dtype=np.float32),
                      seconds=seconds)
