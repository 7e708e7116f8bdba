"""The later stages' work a small build does while its embedding children still work (issue 31: build/embedding).

When a build embeds in child processes, its own process finishes the keyphrases and TL;DRs before the children
finish the vectors; what the topic, layout and index stages need that is not a vector is made then (:class:`Ahead`),
where its CPU is shared with the children instead of added after them:

* **the map's child process** (:class:`~paperatlas.engines.layout_child.LayoutChild`) starts and compiles UMAP; the
  topic stage hands it the topic embedding, so the map is fitted beside the topics' k-means;
* **the topic embedding's lexical half** (TF-IDF + LSA, :func:`~paperatlas.enrich.text_space.lexical_half`);
* **the search index's TF-IDF** (:func:`paperatlas.enrich.lexical.fit_index`), every TL;DR being made by then.

Each is used only if what it was made from is what the later stage has (the same ids, texts, embedding bits), so a
build gives the same atlas with or without it. Only a fresh topic fit of fewer than :data:`WARM_UP_MAX_PAPERS` papers
does this: from there the memory it holds is kept out of the embedding's peak.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .engines.layout_child import LayoutChild
from .enrich import lexical
from .enrich.embed import paper_text
from .enrich.layout import fit_layout
from .enrich.lexical import lexical_text
from .enrich.text_space import LexicalHalf, lexical_half, topic_embedding
from .model import Paper

#: a fresh topic fit of fewer papers than this does the work ahead; from here its memory (UMAP's compilation ~0.2 GB
#: in a second process; the TF-IDF fits' bigram counts) stays out of the embedding's peak. At 10,000 papers the work
#: ahead is ~4-5 s of UMAP compilation, ~8 s of LSA and ~4 s of search TF-IDF, and the map (~10 s) then runs beside
#: k-means
WARM_UP_MAX_PAPERS = 20_000


def topic_texts(papers: Sequence[Paper]) -> list[str]:
    """The texts topics are fitted on: :func:`~paperatlas.enrich.embed.paper_text` of title and abstract (or digest)."""
    return [paper_text(p.title, p.abstract or p.digest) for p in papers]


def search_texts(papers: Sequence[Paper]) -> list[str]:
    """The texts of the search's TF-IDF index (:func:`~paperatlas.enrich.lexical.lexical_text`)."""
    return [lexical_text(p.title, p.abstract, p.digest, p.tldr) for p in papers]


class Ahead:
    """What one build made ahead (see the module docstring); :meth:`close` ends the layout child.

    Args:
        papers: the build's papers, with their keyphrases and TL;DRs made.
        seed: the build's seed (LSA, UMAP).
        search_index: also fit the search index (False when the build keeps the stored one's vocabulary).
    """

    def __init__(self, papers: Sequence[Paper], seed: int, search_index: bool = True):
        self.seed = seed
        self.layout_child: LayoutChild | None = LayoutChild(seed)  # imports and compiles UMAP meanwhile
        self.lexical: LexicalHalf | None = lexical_half([p.id for p in papers], topic_texts(papers), seed)
        self._search: tuple[list[str], tuple] | None = None
        if search_index:
            texts = search_texts(papers)
            self._search = (texts, lexical.fit_index(texts))
        self._sent: np.ndarray | None = None

    def send_topic_embedding(self, vectors: np.ndarray, papers: Sequence[Paper]) -> None:
        """Hand the layout child the topic embedding a fresh fit makes of ``vectors`` (rows in id order).

        Args:
            vectors: ``(n_papers, 384)`` float32, the build's MiniLM vectors, one row per paper of ``papers``.
            papers: the build's papers.
        """
        ahead = self.lexical
        if self.layout_child is None or ahead is None or len(ahead.ids) != len(papers):
            return
        order = sorted(range(len(papers)), key=lambda i: papers[i].id)
        texts = topic_texts([papers[i] for i in order])
        self._sent = topic_embedding(vectors[order], texts, ahead.space, self.seed, ahead.lsa)[0]
        self.layout_child.submit(self._sent)

    def layout_fit(self, notes: list[str]) -> Callable[[np.ndarray], np.ndarray]:
        """The ``fit`` of :func:`~paperatlas.enrich.topics.lay_out`: the child's map when it was sent these bits.

        Args:
            notes: the build report's notes (a failed child is noted there, and the map fitted here).

        Returns:
            ``fit(x) -> (n, 2)`` float32 for the topic embedding ``x`` in id order.
        """
        def fit(x: np.ndarray) -> np.ndarray:
            child, sent = self.layout_child, self._sent
            if child is not None and sent is not None and sent.shape == x.shape and np.array_equal(sent, x):
                try:
                    return child.result()
                except RuntimeError as e:  # it died or failed: the same map, made here
                    notes.append(f"{e}; the map was fitted in the build process")
            self.close()
            return fit_layout(x, seed=self.seed, n_jobs=-1)

        return fit

    def search_index(self, texts: list[str]) -> tuple | None:
        """``fit_index(texts)`` if it was made ahead for these very texts, else None (once: then let go)."""
        made, self._search = self._search, None
        return made[1] if made is not None and made[0] == texts else None

    def close(self) -> None:
        """End the layout child (idempotent)."""
        if self.layout_child is not None:
            self.layout_child.close()
            self.layout_child = None
