"""Honest search: papers that use the query's words first, papers close only in meaning marked and cut off.

A search returns three tiers, in this order:

1. **keyword** matches: papers that use every word of the query (:mod:`.terms`: any indexed field, stemmed,
   typos corrected) *together*: each word in the title, keyphrases or TL;DR, or all within a few tokens of each
   other in the abstract. Ordered by reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009) of their
   BM25 rank and their embedding-cosine rank.
2. **partial** matches: papers whose words carry at least :data:`PARTIAL_MIN` of the query's idf mass (or all of
   them, scattered), kept only when also plausible in meaning (cosine ≥ :data:`PARTIAL_MIN_COSINE`); same order.
3. **meaning** matches: papers without the words whose embedding is close to the query (cosine ≥
   :data:`MEANING_MIN_COSINE`) or close to the best keyword matches (mean cosine to the first
   :data:`N_FEEDBACK` of them ≥ :data:`NEIGHBOUR_MIN_COSINE`: pseudo-relevance feedback in the spirit of
   Rocchio 1971, so ``lottery ticket`` also finds "Pruning Neural Networks at Initialization", which never says
   "lottery"). Ordered by the sum of the two cosines.

Nothing else: a query no paper is about returns no hits and a message saying so, and a filter that removes every
keyword match says that too, instead of filling the page with unrelated papers.

The cut-offs were calibrated on the hand-judged queries of ``benchmarks/data/search_queries.json`` (all-MiniLM-L6-v2
embeddings): the best query-paper cosine of the queries about nothing in the atlas was 0.22-0.36 on ICLR 2021,
relevant papers mostly above 0.4; papers relevant through the feedback had mean cosines of 0.55-0.65 to the keyword
matches, unrelated neighbours of one of them below 0.5.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..facets import SORT_KEYS, sort_papers
from ..model import Paper
from ..store import Atlas
from .filters import Filters
from .ranking import POOL, bm25_ranking, rrf
from .terms import Term, corrected_query, coverage, papers_using_together, query_terms

#: a paper containing words that carry at least this share of the query's idf is a (partial) keyword match
PARTIAL_MIN = 0.65
#: a paper without the query's words is a meaning match from this query-paper cosine (all-MiniLM-L6-v2)
MEANING_MIN_COSINE = 0.42
#: ... or from this mean cosine to the first :data:`N_FEEDBACK` keyword matches
NEIGHBOUR_MIN_COSINE = 0.55
#: how many of the best keyword matches give the feedback (and at least two must exist)
N_FEEDBACK = 3
#: a partial keyword match is kept only from this query-paper cosine (or close to the keyword matches)
PARTIAL_MIN_COSINE = 0.35


@dataclass
class Hit:
    """One search result.

    Attributes:
        paper: the paper.
        score: its fused (RRF) score within its tier; 0.0 when an empty query lists filtered papers.
        bm25_rank: its 1-based rank in the BM25 list (None if absent).
        semantic_rank: its 1-based rank by embedding cosine (None if not ranked).
        match: ``"keyword"`` (contains every word of the query), ``"partial"`` (contains the words carrying at
            least :data:`PARTIAL_MIN` of its idf), ``"meaning"`` (close in meaning only), or ``""`` when an empty
            query lists papers.
    """

    paper: Paper
    score: float
    bm25_rank: int | None = None
    semantic_rank: int | None = None
    match: str = ""


@dataclass
class SearchResults:
    """Every result of a search, in order, with what a page needs to be honest about them.

    Attributes:
        query: the query as given.
        hits: every match in order: keyword, then partial, then meaning-only (at most :data:`POOL` of those); an
            empty query lists every paper the filters pass.
        total: ``len(hits)``, the count to show.
        capped: True when meaning matches were cut at :data:`POOL`.
        n_keyword: hits whose ``match`` is ``keyword`` or ``partial``.
        n_meaning: hits whose ``match`` is ``meaning``.
        corrected: the query as searched when a typo was corrected (``"lottery ticket"`` for ``"lotery tiket"``),
            else None.
        message: one line to show above the hits when no paper uses the query's words (or the filters removed
            those that do), e.g. ``No paper mentions “grokking”; nearest by meaning:``; empty otherwise.
        unfiltered: how many papers use the query's words without the filters (equals ``n_keyword`` when no
            filter is set).
    """

    query: str
    hits: list[Hit] = field(default_factory=list)
    capped: bool = False
    corrected: str | None = None
    message: str = ""
    unfiltered: int = 0

    @property
    def total(self) -> int:
        """The number of results (``len(hits)``)."""
        return len(self.hits)

    @property
    def n_keyword(self) -> int:
        """Results that use the query's words (``keyword`` or ``partial``)."""
        return sum(h.match in ("keyword", "partial") for h in self.hits)

    @property
    def n_meaning(self) -> int:
        """Results close in meaning only."""
        return sum(h.match == "meaning" for h in self.hits)

    def page(self, offset: int, size: int) -> list[Hit]:
        """Hits ``offset`` to ``offset + size`` (0-based; fewer at the end).

        Args:
            offset: the first hit's index, ≥ 0.
            size: at most this many hits.

        Returns:
            The slice of :attr:`hits`.
        """
        return self.hits[max(0, offset):max(0, offset) + max(0, size)]


def _ranks(ids: list[str]) -> dict[str, int]:
    return {pid: i + 1 for i, pid in enumerate(ids)}


def _keyword_tier(atlas: Atlas, searched: str, cover: dict[str, float], sims: np.ndarray | None,
                  label: str) -> list[Hit]:
    """The papers of ``cover`` best first: RRF of their BM25 rank and their embedding-cosine rank."""
    if not cover:
        return []
    bm25 = [pid for pid in bm25_ranking(atlas, searched, limit=max(POOL * 5, len(cover))) if pid in cover]
    lists = [bm25]
    sem: list[str] = []
    if sims is not None:
        sem = sorted((pid for pid in cover if pid in atlas.row_of), key=lambda pid: (-sims[atlas.row_of[pid]], pid))
        lists.append(sem)
    fused = rrf(lists)
    brank, srank = _ranks(bm25), _ranks(sem)
    ordered = sorted(cover, key=lambda pid: (-fused.get(pid, 0.0), pid))
    return [Hit(atlas.by_id[pid], fused.get(pid, 0.0), brank.get(pid), srank.get(pid), label) for pid in ordered]


def _near(atlas: Atlas, feedback: list[Paper]) -> np.ndarray:
    """``(n_papers,)`` mean cosine of every paper to the ``feedback`` papers (zeros for fewer than two)."""
    rows = [atlas.row_of[p.id] for p in feedback if p.id in atlas.row_of]
    if len(rows) < 2:
        return np.zeros(len(atlas.ids), dtype=np.float32)
    return atlas.vectors @ atlas.vectors[rows].mean(axis=0)


def _meaning_tier(atlas: Atlas, sims: np.ndarray, near: np.ndarray, skip: set[str],
                  ok: Callable[[Paper], bool]) -> list[Hit]:
    """Papers not in ``skip`` close to the query (``sims``) or to the best keyword matches (``near``), best first."""
    keep = np.flatnonzero((sims >= MEANING_MIN_COSINE) | (near >= NEIGHBOUR_MIN_COSINE))
    score = sims + near
    out = [i for i in keep[np.argsort(-score[keep], kind="stable")]
           if atlas.ids[i] not in skip and ok(atlas.by_id[atlas.ids[i]])]
    return [Hit(atlas.by_id[atlas.ids[i]], float(score[i]), None, None, "meaning") for i in out]


def _quote(s: str) -> str:
    return f"“{s}”"


def _message(terms: list[Term], searched: str, res: SearchResults, filtered: bool, semantic: bool) -> str:
    """The line shown when no paper that passes the filters uses the query's words (empty otherwise)."""
    if res.n_keyword:
        return ""
    missing = [t.word for t in terms if not t.ids]
    if filtered and res.unfiltered:
        n = res.unfiltered
        head = (f"No paper matching the filters mentions {_quote(searched)} ({n} paper{'s' if n != 1 else ''} "
                "without the filters)")
    else:
        head = f"No paper mentions {_quote(' '.join(missing) if missing else searched)}"
    if res.n_meaning:
        return head + "; nearest by meaning:"
    return head + (", and none is close in meaning." if semantic else ".")


def search_results(atlas: Atlas, query: str, filters: Filters | None = None, mode: str = "hybrid",
                   embed_query: Callable[[str], np.ndarray] | None = None, sort: str = "relevance") -> SearchResults:
    """Every paper matching ``query`` after ``filters``, in honest order (see the module docstring).

    An empty query lists every paper the filters pass, in stored order.

    Args:
        atlas: the atlas.
        query: any user string.
        filters: the filters; None for none.
        mode: ``"hybrid"`` (keyword tiers, then meaning), ``"bm25"`` (keyword tiers only) or ``"semantic"``
            (by cosine alone, from :data:`MEANING_MIN_COSINE`; each hit still says whether it uses the words).
        embed_query: maps a string to a ``(dim,)`` float32 L2-normalised vector (the atlas's embedding model);
            without it, there are no meaning matches.
        sort: one of :data:`paperatlas.facets.SORT_KEYS`; other than ``relevance``, the results are ordered by
            that facet, highest first, papers without a value last (:func:`paperatlas.facets.sort_papers`).

    Returns:
        The results.

    Raises:
        ValueError: for an unknown ``mode`` or ``sort``.
    """
    if mode not in ("hybrid", "bm25", "semantic"):
        raise ValueError(f"unknown search mode {mode!r}: use hybrid, bm25 or semantic")
    if sort not in SORT_KEYS:
        raise ValueError(f"unknown sort key {sort!r}: use {', '.join(SORT_KEYS)}")
    flt = filters or Filters()
    ok = flt.matcher(atlas)
    if not query.strip():
        res = SearchResults(query, [Hit(p, 0.0) for p in atlas.papers if ok(p)])
    else:
        res = _query_results(atlas, query, flt, ok, mode, embed_query)
    if sort != "relevance":
        by_id = {h.paper.id: h for h in res.hits}
        res.hits = [by_id[p.id] for p in sort_papers([h.paper for h in res.hits], sort)]
    return res


def _query_results(atlas: Atlas, query: str, flt: Filters, ok: Callable[[Paper], bool], mode: str,
                   embed_query: Callable[[str], np.ndarray] | None) -> SearchResults:
    terms = query_terms(atlas, query)
    corrected = corrected_query(query, terms)
    searched = corrected or query
    semantic = mode != "bm25" and embed_query is not None and atlas.vectors.size > 0
    sims = atlas.vectors @ np.asarray(embed_query(searched), dtype=np.float32) if semantic else None
    cover_any = {pid: c for pid, c in coverage(terms).items() if c >= PARTIAL_MIN and pid in atlas.by_id}
    together = papers_using_together(atlas, [t.word for t in terms]) if all(t.ids for t in terms) else frozenset()
    full_all = {pid: c for pid, c in cover_any.items() if c >= 1.0 - 1e-9 and pid in together}
    full = {pid: c for pid, c in full_all.items() if ok(atlas.by_id[pid])}
    res = SearchResults(query, corrected=corrected, unfiltered=len(full_all))
    if mode == "semantic":
        if sims is not None:
            res.hits = [Hit(h.paper, h.score, None, h.semantic_rank, "keyword" if h.paper.id in full else "meaning")
                        for h in _meaning_tier(atlas, sims, np.zeros_like(sims), set(), ok)]
        res.message = _message(terms, searched, res, flt.any(), semantic)
        return res
    res.hits = _keyword_tier(atlas, searched, full, sims, "keyword")
    partial = {pid: c for pid, c in cover_any.items() if pid not in full_all and ok(atlas.by_id[pid])}
    if sims is None:
        res.hits += _keyword_tier(atlas, searched, partial, None, "partial")
    else:
        # feedback from the papers that use every word (after the filters, else before them)
        best = [h.paper for h in res.hits[:N_FEEDBACK]] or \
            [h.paper for h in _keyword_tier(atlas, searched, full_all, sims, "keyword")[:N_FEEDBACK]]
        near = _near(atlas, best)
        # a partial match must also be plausible in meaning: a third of the way to a meaning match
        plausible = {pid: c for pid, c in partial.items() if pid in atlas.row_of and
                     (sims[atlas.row_of[pid]] >= PARTIAL_MIN_COSINE or near[atlas.row_of[pid]] >= NEIGHBOUR_MIN_COSINE)}
        res.hits += _keyword_tier(atlas, searched, plausible, sims, "partial")
        meaning = _meaning_tier(atlas, sims, near, set(full_all) | set(plausible), ok)
        res.capped = len(meaning) > POOL
        res.hits += meaning[:POOL]
    res.message = _message(terms, searched, res, flt.any(), semantic)
    return res


def search(atlas: Atlas, query: str, k: int = 10, filters: Filters | None = None,
           mode: str = "hybrid", embed_query: Callable[[str], np.ndarray] | None = None,
           sort: str = "relevance") -> list[Hit]:
    """The first ``k`` results of :func:`search_results`.

    Args:
        atlas: the atlas.
        query: any user string.
        k: most hits returned.
        filters: the filters; None for none.
        mode: ``"hybrid"``, ``"bm25"`` or ``"semantic"`` (see :func:`search_results`).
        embed_query: the query embedder (``str -> (dim,)`` float32, L2-normalised); None: keyword tiers only.
        sort: one of :data:`paperatlas.facets.SORT_KEYS`.

    Returns:
        The hits, best first.

    Raises:
        ValueError: for an unknown ``mode`` or ``sort``.
    """
    return search_results(atlas, query, filters, mode, embed_query, sort).hits[:k]
