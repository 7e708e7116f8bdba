"""Search results as arrays, each :class:`Hit` made only when it is read.

A search of a million papers may match 20,000 of them, of which a page shows 20; the total, the facet counts and
the order need only the papers' positions, so a :class:`HitList` keeps positions, scores and ranks as numpy
arrays and makes a :class:`Hit` (a paper and its scores) when one is read. Making every hit as an object cost
~25 ms per 20,000 (``benchmarks/million.py --profile``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from ..model import Paper

#: what each ``match`` code of a :class:`HitList` stands for (see :attr:`Hit.match`)
MATCH_KINDS = ("", "keyword", "partial", "meaning")


@dataclass
class Hit:
    """One search result.

    Attributes:
        paper: the paper.
        score: its fused (RRF) score within its tier; 0.0 when an empty query lists filtered papers.
        bm25_rank: its 1-based rank in the BM25 list (None if absent).
        semantic_rank: its 1-based rank by embedding cosine (None if not ranked).
        match: ``"keyword"`` (contains every word of the query), ``"partial"`` (contains the words carrying at
            least :data:`paperatlas.search.engine.PARTIAL_MIN` of its idf), ``"meaning"`` (close in meaning only),
            or ``""`` when an empty query lists papers.
    """

    paper: Paper
    score: float
    bm25_rank: int | None = None
    semantic_rank: int | None = None
    match: str = ""


class HitList(Sequence[Hit]):
    """Search hits in order, kept as arrays (see the module docstring); reads like a list of :class:`Hit`.

    Indexing gives a :class:`Hit`, slicing a ``list[Hit]``; ``+`` joins two lists; a HitList equals the list of its
    hits.

    Args:
        papers: the atlas's papers (``atlas.papers``), which ``docs`` index.
        docs: ``(n,)`` int, positions in ``papers``, in result order.
        score: ``(n,)`` float64 scores (:attr:`Hit.score`); zeros when None.
        bm25_rank: ``(n,)`` int, 1-based BM25 ranks, 0 for none; zeros when None.
        semantic_rank: ``(n,)`` int, 1-based cosine ranks, 0 for none; zeros when None.
        match: ``(n,)`` int8 codes into :data:`MATCH_KINDS`, or one kind (a str) for every hit.

    Raises:
        ValueError: when the arrays differ in length or a match kind is unknown.
    """

    def __init__(self, papers: Sequence[Paper], docs: np.ndarray, score: np.ndarray | None = None,
                 bm25_rank: np.ndarray | None = None, semantic_rank: np.ndarray | None = None,
                 match: np.ndarray | str = ""):
        n = len(docs)
        self.papers = papers
        #: ``(n,)`` int64, positions in ``papers`` of the hits, in order
        self.docs = np.asarray(docs, dtype=np.int64)
        self.score = np.zeros(n) if score is None else np.asarray(score, dtype=np.float64)
        self.bm25_rank = np.zeros(n, np.int64) if bm25_rank is None else np.asarray(bm25_rank, dtype=np.int64)
        self.semantic_rank = np.zeros(n, np.int64) if semantic_rank is None else \
            np.asarray(semantic_rank, dtype=np.int64)
        if isinstance(match, str):
            if match not in MATCH_KINDS:
                raise ValueError(f"unknown match kind {match!r}: use one of {MATCH_KINDS}")
            match = np.full(n, MATCH_KINDS.index(match), dtype=np.int8)
        self.match = np.asarray(match, dtype=np.int8)
        if not all(len(a) == n for a in (self.score, self.bm25_rank, self.semantic_rank, self.match)):
            raise ValueError("a HitList's arrays must have one entry per hit")

    @classmethod
    def empty(cls, papers: Sequence[Paper]) -> HitList:
        """No hits.

        Args:
            papers: the atlas's papers.

        Returns:
            An empty list.
        """
        return cls(papers, np.zeros(0, np.int64))

    def _hit(self, i: int) -> Hit:
        b, s = int(self.bm25_rank[i]), int(self.semantic_rank[i])
        return Hit(self.papers[int(self.docs[i])], float(self.score[i]), b or None, s or None,
                   MATCH_KINDS[int(self.match[i])])

    def __len__(self) -> int:
        return len(self.docs)

    @overload
    def __getitem__(self, i: int) -> Hit: ...

    @overload
    def __getitem__(self, i: slice) -> list[Hit]: ...

    def __getitem__(self, i: int | slice) -> Hit | list[Hit]:
        if isinstance(i, slice):
            return [self._hit(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("hit index out of range")
        return self._hit(i % n)

    def __iter__(self) -> Iterator[Hit]:
        return (self._hit(j) for j in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HitList | list):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __add__(self, other: HitList) -> HitList:
        if not isinstance(other, HitList):
            return NotImplemented
        return HitList(self.papers, *(np.concatenate((a, b)) for a, b in (
            (self.docs, other.docs), (self.score, other.score), (self.bm25_rank, other.bm25_rank),
            (self.semantic_rank, other.semantic_rank), (self.match, other.match))))

    def __repr__(self) -> str:
        return f"HitList({len(self)} hits)"

    def take(self, order: np.ndarray) -> HitList:
        """These hits in another order (or a subset).

        Args:
            order: ``(m,)`` int indices into this list.

        Returns:
            The hits at ``order``, in that order.
        """
        return HitList(self.papers, self.docs[order], self.score[order], self.bm25_rank[order],
                       self.semantic_rank[order], self.match[order])

    def n_of(self, *kinds: str) -> int:
        """How many hits are of the given match kinds.

        Args:
            kinds: names from :data:`MATCH_KINDS`, e.g. ``"keyword", "partial"``.

        Returns:
            The count.
        """
        codes = [MATCH_KINDS.index(k) for k in kinds]
        return int(np.isin(self.match, codes).sum())
