"""Honest search: papers that use the query's words first, papers close only in meaning marked and cut off.

A search returns three tiers, in this order:
1. **keyword** matches: papers that use every word of the query (:mod:`.terms`: any indexed field, stemmed,
   typos corrected) *together*: each word in the title, keyphrases or TL;DR, or all within a few tokens of each
   other in the abstract. Ordered by reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009) of their BM25
   rank and the rank of their cosine to the query in the paper representation (:func:`.representation.query_vector`).
2. **partial** matches: papers whose words carry at least :data:`PARTIAL_MIN` of the query's idf mass (or all of
   them, scattered), kept only when also plausible in meaning (cosine ≥ :data:`PARTIAL_MIN_COSINE`); same order.
3. **meaning** matches: papers without the words whose embedding is close to the query (cosine ≥
   :data:`MEANING_MIN_COSINE`; for a short query no paper uses, from where its cosines stand out of their background:
   :func:`.shapes.meaning_floor`) or close to the best keyword matches (mean cosine to the first :data:`N_FEEDBACK`
   of them ≥ :data:`NEIGHBOUR_MIN_COSINE`: pseudo-relevance feedback in the spirit of Rocchio 1971, so ``lottery
   ticket`` also finds "Pruning Neural Networks at Initialization", which never says "lottery"), by the two cosines.

A word no paper uses in any spelling (:mod:`.shapes`) is named and the keyword tiers search the other words alone
(``t-SNE visualization``: ``No paper mentions “t-SNE”; …``) when they are at least as many, the papers using them all
are at most :data:`.terms.FALLBACK_MAX_SHARE` of the atlas and, with embeddings, a shown paper is as close in meaning
as a partial match must be (``earthquake prediction``: none); the meaning tier still embeds the whole query.

Nothing else: a query no paper is about returns no hits and a message saying so, and a filter that removes every
keyword match says that too, instead of filling the page with unrelated papers. The cut-offs were calibrated on
``benchmarks/data/search_queries.json`` (all-MiniLM-L6-v2): on ICLR 2021 the best cosine of the queries about
nothing in the atlas was 0.22-0.36, relevant papers mostly above 0.4; papers relevant through the feedback had mean
cosines of 0.55-0.65 to the keyword matches, unrelated neighbours of one below 0.5.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..facets import SORT_KEYS, sort_papers
from ..model import Paper
from ..store import Atlas
from ..topics import resolve_topics
from . import meaning as _meaning
from .filters import Filters
from .hits import MATCH_KINDS, Hit, HitList
from .postings import bm25_scores, positions, postings, warm
from .ranking import POOL, rrf_scores
from .related import warm_related
from .shapes import MEANING_MIN_COSINE, meaning_floor
from .terms import (
    Term,
    as_typed,
    candidates_by_letter,
    corrected_query,
    coverage,
    index_phrases,
    query_terms,
    searched_terms,
    spelling_vocabulary,
    start_together,
)
from .together import warm_pieces

#: a paper containing words that carry at least this share of the query's idf is a (partial) keyword match
PARTIAL_MIN = 0.65
#: ... or from this mean cosine to the first :data:`N_FEEDBACK` keyword matches
NEIGHBOUR_MIN_COSINE = 0.55
#: how many of the best keyword matches give the feedback (and at least two must exist)
N_FEEDBACK = 3
#: a partial keyword match is kept only from this query-paper cosine (or close to the keyword matches)
PARTIAL_MIN_COSINE = 0.35
#: :func:`warm_up` tokenizes a sample's text pieces from this many papers (where the together check reads the text
#: of hundreds of candidates; below, FTS5 answers over the whole table in a few ms)
WARM_PIECES_MIN_PAPERS = 100_000


@dataclass
class SearchResults:
    """Every result of a search, in order, with what a page needs to be honest about them.

    Attributes:
        query: the query as given.
        hits: every match in order: keyword, then partial, then meaning-only (at most :data:`POOL` of those); an
            empty query lists every paper the filters pass. A :class:`~paperatlas.search.hits.HitList` (arrays; a
            :class:`Hit` made when read) as a search returns it, a ``list[Hit]`` once reordered by a caller.
        total: ``len(hits)``, the count to show.
        capped: True when meaning matches were cut at :data:`POOL`.
        n_keyword: hits whose ``match`` is ``keyword`` or ``partial``.
        n_meaning: hits whose ``match`` is ``meaning``.
        corrected: the query as searched when a typo was corrected (``"lottery ticket"`` for ``"lotery tiket"``),
            else None.
        message: one line to show above the hits when no paper uses the query's words (or the filters removed
            those that do), e.g. ``No paper mentions “grokking”; nearest by meaning:``, or when a word is in no
            paper and the others' papers are shown (``No paper mentions “t-SNE”; 69 mention “visualization”, 1
            of them close in meaning``); empty otherwise.
        unfiltered: how many papers use the query's words without the filters (equals ``n_keyword`` when no
            filter is set).
        mentioning: when a word no paper uses is left out, how many papers use all the others (before the
            meaning gate and the filters); else 0.
    """

    query: str
    hits: Sequence[Hit] = field(default_factory=list)
    capped: bool = False
    corrected: str | None = None
    message: str = ""
    unfiltered: int = 0
    mentioning: int = 0

    @property
    def total(self) -> int:
        """The number of results (``len(hits)``)."""
        return len(self.hits)

    @property
    def n_keyword(self) -> int:
        """Results that use the query's words (``keyword`` or ``partial``)."""
        if isinstance(self.hits, HitList):
            return self.hits.n_of("keyword", "partial")
        return sum(h.match in ("keyword", "partial") for h in self.hits)

    @property
    def n_meaning(self) -> int:
        """Results close in meaning only."""
        if isinstance(self.hits, HitList):
            return self.hits.n_of("meaning")
        return sum(h.match == "meaning" for h in self.hits)

    def docs(self, atlas: Atlas) -> np.ndarray:
        """``(total,)`` int64, the position in ``atlas.papers`` of every hit, in order.

        Args:
            atlas: the atlas searched.

        Returns:
            The positions (read from the arrays of a :class:`~paperatlas.search.hits.HitList`, else looked up by
            id).
        """
        if isinstance(self.hits, HitList):
            return self.hits.docs
        where = positions(atlas)
        return np.fromiter((where[h.paper.id] for h in self.hits), np.int64, len(self.hits))

    def page(self, offset: int, size: int) -> list[Hit]:
        """Hits ``offset`` to ``offset + size`` (0-based; fewer at the end).

        Args:
            offset: the first hit's index, ≥ 0.
            size: at most this many hits.

        Returns:
            The slice of :attr:`hits`.
        """
        return list(self.hits[max(0, offset):max(0, offset) + max(0, size)])


@dataclass(frozen=True)
class _Rows:
    """Per-atlas index arrays: ``atlas.papers`` positions <-> ``atlas.vectors`` rows, and the order of the ids."""

    row_of: np.ndarray  #: (n_papers,) int64, the paper's row of ``atlas.vectors``, -1 when it has none
    paper_of: np.ndarray  #: (n_rows,) int64, the ``atlas.papers`` position of each row
    id_rank: np.ndarray  #: (n_papers,) int64, the paper's position among the ids sorted as strings


def _rows(atlas: Atlas) -> _Rows:
    def make() -> _Rows:
        n = len(atlas.papers)
        position = positions(atlas)
        paper_of = np.fromiter((position[pid] for pid in atlas.ids), np.int64, len(atlas.ids))
        row_of = np.full(n, -1, dtype=np.int64)
        row_of[paper_of] = np.arange(len(paper_of))
        id_rank = np.empty(n, dtype=np.int64)  # code point order, as str comparison
        id_rank[np.argsort(np.array(atlas.paper_ids, dtype=str), kind="stable")] = np.arange(n)
        return _Rows(row_of, paper_of, id_rank)

    return atlas.derived("search rows", make)


def _listed(atlas: Atlas, flt: Filters) -> np.ndarray:
    """The ``atlas.papers`` positions an empty query's filters can pass, ascending.

    Every paper, or only those of the filters' statuses and topic (from per-atlas indexes), so that the filters'
    predicate runs on those alone (``status=Oral`` on 42,736 papers: the predicate on 2,495 papers instead of every
    one). Exactly the papers passing the status and topic filters: when no other filter is set, no predicate runs.
    """
    n = len(atlas.papers)
    keep: np.ndarray | None = None
    statuses = {s.strip().lower() for s in flt.status if s.strip()}
    if statuses:
        by_status = atlas.derived("positions by status",
                                  lambda: _positions_by(atlas, "status", lambda s: (s or "").lower()))
        keep = np.zeros(n, dtype=bool)
        for s in statuses:
            keep[by_status.get(s, _NONE)] = True
    if flt.topic:  # as the predicate: a blank topic names no topic, so no paper passes
        by_topic = atlas.derived("positions by topic", lambda: _positions_by(atlas, "topic_id"))
        in_topic = np.zeros(n, dtype=bool)
        for tid in resolve_topics(atlas, [flt.topic]):
            in_topic[by_topic.get(tid, _NONE)] = True
        keep = in_topic if keep is None else keep & in_topic
    return np.arange(n) if keep is None else np.flatnonzero(keep)


_NONE = np.zeros(0, dtype=np.int64)


def _positions_by(atlas: Atlas, field: str, key: Callable[[object], object] | None = None
                  ) -> dict[object, np.ndarray]:
    """``key(paper.<field>) -> ascending atlas.papers positions of the papers with that key``, for every key."""
    groups: dict[object, list[int]] = {}
    for i, (v,) in enumerate(atlas.fields(field)):
        groups.setdefault(key(v) if key is not None else v, []).append(i)
    return {k: np.asarray(v, dtype=np.int64) for k, v in groups.items()}


def _passing(atlas: Atlas, docs: np.ndarray, ok: Callable[[Paper], bool] | None) -> np.ndarray:
    """The ``docs`` (``atlas.papers`` positions) whose paper passes ``ok`` (all of them when ``ok`` is None)."""
    if ok is None or not len(docs):
        return docs
    return np.array([i for i in docs.tolist() if ok(atlas.papers[i])], dtype=np.int64)


def _bm25_list(scores: np.ndarray, matched: np.ndarray, cover: np.ndarray, limit: int) -> np.ndarray:
    """The ``cover`` papers among the first ``limit`` papers by BM25 (ties: stored order), best first.

    What ``ORDER BY bm25(...) LIMIT limit`` over every paper the query's words match, then keeping the cover, gives.
    """
    cover = cover[matched[cover]]
    if not len(cover):
        return cover
    # only the papers scoring at most the cover's worst can push a cover paper out of the first `limit`; when they
    # are more than `limit`, the limit-th best score is among them (a partition of those, not of every match)
    contest = matched & (scores <= scores[cover].max())
    n_contest = int(np.count_nonzero(contest))
    if n_contest > limit:
        pool = scores[contest]
        kth = np.partition(pool, limit - 1)[limit - 1]
        room = limit - int((pool < kth).sum())  # how many of the papers scoring exactly kth make the cut
        tied = np.flatnonzero(matched & (scores == kth))[:room]
        cut = np.zeros(len(scores), dtype=bool)
        cut[tied] = True
        cover = cover[(scores[cover] < kth) | cut[cover]]
    return cover[np.lexsort((cover, scores[cover]))]


def _keyword_tier(atlas: Atlas, bm25: tuple[np.ndarray, np.ndarray], cover: np.ndarray, sims: np.ndarray | None,
                  label: str) -> HitList:
    """The papers of ``cover`` (``atlas.papers`` positions, sorted, no repeats) best first: RRF of BM25, cosine."""
    if not len(cover):
        return HitList.empty(atlas.papers)
    ix = _rows(atlas)
    scores, matched = bm25
    bm = _bm25_list(scores, matched, cover, max(POOL * 5, len(cover)))
    brank = np.zeros(len(cover), dtype=np.int64)
    srank = np.zeros(len(cover), dtype=np.int64)
    pos = np.searchsorted(cover, bm)  # cover is sorted: a paper's place in it
    brank[pos] = np.arange(1, len(bm) + 1)
    if sims is not None:
        rows = ix.row_of[cover]
        have = np.flatnonzero(rows >= 0)
        pos = have[np.lexsort((ix.id_rank[cover[have]], -sims[rows[have]]))]
        srank[pos] = np.arange(1, len(pos) + 1)
    fused = rrf_scores([brank, srank])
    order = np.lexsort((ix.id_rank[cover], -fused))
    return HitList(atlas.papers, cover[order], fused[order], brank[order], srank[order], label)


def _centre(atlas: Atlas, feedback: list[Paper]) -> np.ndarray | None:
    """``(dim,)`` float32 mean of the ``feedback`` papers' vectors (not normalised); None for fewer than two."""
    rows = [atlas.row_of[p.id] for p in feedback if p.id in atlas.row_of]
    return atlas.vectors[rows].mean(axis=0) if len(rows) >= 2 else None


def _near(atlas: Atlas, feedback: list[Paper]) -> np.ndarray:
    """``(n_rows,)`` mean cosine of every paper to the ``feedback`` papers (zeros for fewer than two)."""
    centre = _centre(atlas, feedback)
    if centre is None:
        return np.zeros(len(atlas.ids), dtype=np.float32)
    return _meaning.cosines(atlas.vectors, centre)


def _meaning_tier(atlas: Atlas, sims: np.ndarray, near: np.ndarray, skip: np.ndarray | None,
                  ok: Callable[[Paper], bool] | None, limit: int | None = None,
                  rows: np.ndarray | None = None, floor: float = MEANING_MIN_COSINE) -> tuple[HitList, bool]:
    """Papers close to the query (``sims`` from ``floor``) or to the best keyword matches (``near``), best first.

    Rows where ``skip`` (``(n_rows,)`` bool) is set and papers ``ok`` refuses are left out; with ``rows`` (sorted,
    no repeats), only those rows are read. Returns at most ``limit`` hits (all for None) and whether there were
    more.
    """
    if rows is None:
        keep = np.flatnonzero((sims >= floor) | (near >= NEIGHBOUR_MIN_COSINE))
    else:
        keep = rows[(sims[rows] >= floor) | (near[rows] >= NEIGHBOUR_MIN_COSINE)]
    if skip is not None:
        keep = keep[~skip[keep]]
    score = sims[keep] + near[keep]
    order = keep[np.argsort(-score, kind="stable")].tolist()
    paper_of = _rows(atlas).paper_of
    out: list[int] = []
    for r in order:
        if ok is None or ok(atlas.papers[paper_of[r]]):
            out.append(r)
            if limit is not None and len(out) > limit:
                break
    capped = limit is not None and len(out) > limit
    rows = np.asarray(out[:limit], dtype=np.int64)
    return HitList(atlas.papers, paper_of[rows], sims[rows] + near[rows], match="meaning"), capped


def _quote(s: str) -> str:
    return f"“{s}”"


def _message(terms: list[Term], query: str, searched: str, res: SearchResults, filtered: bool,
             semantic: bool) -> str:
    """The line shown above the hits when a word of the query is in no paper, or no shown paper uses the words.

    A word no paper uses is named as typed (``No paper mentions “t-SNE”; 69 mention “visualization”``) when the
    other words' papers are shown; when no paper that passes the filters uses the words the line says so (and
    whether any is close in meaning). Empty when every word is in some paper and some hit uses them.
    """
    missing = [as_typed(query, t.typed) for t in terms if not len(t.docs)]
    if res.n_keyword:
        if not missing:
            return ""
        used = [t.word for t in terms if len(t.docs)]
        k, m, n = res.n_keyword, res.n_meaning, max(res.mentioning, res.n_keyword)
        shown = f", {k} of them close in meaning" if n > k else ""
        return (f"No paper mentions {_quote(' '.join(missing))}; {n} mention{'s' if n == 1 else ''} "
                f"{_quote(' '.join(used))}{shown}" + (f"; {m} more close in meaning" if m else ""))
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
    ok = flt.matcher(atlas) if flt.any() else None
    if not query.strip():
        if ok is None:
            docs = np.arange(len(atlas.papers))
        else:  # only the papers of the filters' statuses and topic; the predicate only for the other filters
            docs = _listed(atlas, flt)
            docs = _passing(atlas, docs, None if not replace(flt, status=[], topic="").any() else ok)
        res = SearchResults(query, HitList(atlas.papers, docs))
    else:
        res = _query_results(atlas, query, flt, ok, mode, embed_query)
    if sort != "relevance":
        by_id = {h.paper.id: h for h in res.hits}
        res.hits = [by_id[p.id] for p in sort_papers([h.paper for h in res.hits], sort)]
    return res


def _query_results(atlas: Atlas, query: str, flt: Filters, ok: Callable[[Paper], bool] | None, mode: str,
                   embed_query: Callable[[str], np.ndarray] | None) -> SearchResults:
    """The tiers of a non-empty query (``ok``: the filters' predicate, None when no filter is set)."""
    n = len(atlas.papers)
    terms = query_terms(atlas, query)
    corrected = corrected_query(query, terms)
    searched = corrected or query
    used = searched_terms(terms, n)
    semantic = mode != "bm25" and embed_query is not None and atlas.vectors.size > 0
    # the query model first, on both cores; then FTS5 may answer in a worker thread while cosines and BM25 are made
    qv = np.asarray(embed_query(searched), dtype=np.float32) if semantic else None
    cov = coverage(used, n)
    cover_any = cov >= PARTIAL_MIN
    full_mask = cover_any & (cov >= 1.0 - 1e-9)
    pending = start_together(atlas, [t.word for t in used], np.flatnonzero(full_mask)) \
        if used and all(len(t.docs) for t in used) and full_mask.any() else None
    ix = _rows(atlas)
    # from MEANING_ANN_MIN_ROWS papers on: cosines only where a tier reads them, the meaning tier from the graph
    index = _meaning.graph(atlas) if qv is not None and mode == "hybrid" else None
    gathered = None
    if qv is None:
        sims = None
    elif index is None:
        sims = _meaning.cosines(atlas.vectors, qv)
    else:  # the rows of the papers with enough of the words, copied once: their cosines to the query, the centre
        rows = ix.row_of[np.flatnonzero(cover_any)]
        gathered = _meaning.Gathered(atlas.vectors, rows[rows >= 0])
        sims = gathered.cosines(qv)
    # the keyword tiers fuse BM25 with the query's cosine in the paper representation (MiniLM ⊕ LSA)
    rsims = None if qv is None else \
        _meaning.query_cosines(atlas, searched, qv, ix.row_of[np.flatnonzero(cover_any)], sims)
    bm25 = bm25_scores(atlas, index_phrases(atlas, searched)) if mode != "semantic" and cover_any.any() else \
        (np.zeros(n), np.zeros(n, bool))
    if pending is not None:
        together = np.zeros(n, dtype=bool)
        together[pending()] = True
        full_mask &= together
    else:
        full_mask[:] = False
    full_all = np.flatnonzero(full_mask)
    res = SearchResults(query, corrected=corrected, mentioning=len(full_all) if used is not terms else 0)
    if used is not terms and sims is not None:  # the other words alone: only papers plausible in meaning too
        rows = ix.row_of[full_all]
        full_all = full_all[np.where(rows >= 0, sims[rows], -1.0) >= PARTIAL_MIN_COSINE]
    full = _passing(atlas, full_all, ok)
    res.unfiltered = len(full_all)
    if mode == "semantic":
        if sims is not None:
            hits, _ = _meaning_tier(atlas, sims, np.zeros_like(sims), None, ok)
            kind = np.where(np.isin(hits.docs, full), MATCH_KINDS.index("keyword"), MATCH_KINDS.index("meaning"))
            res.hits = HitList(atlas.papers, hits.docs, hits.score, match=kind)
        res.message = _message(terms, query, searched, res, flt.any(), semantic)
        return res
    res.hits = _keyword_tier(atlas, bm25, full, rsims, "keyword")
    partial = _passing(atlas, np.flatnonzero(cover_any & ~full_mask), ok)
    if sims is None:
        res.hits += _keyword_tier(atlas, bm25, partial, None, "partial")
    else:
        # feedback from the papers that use every word (after the filters, else before them)
        best = [h.paper for h in res.hits[:N_FEEDBACK]] or \
            [h.paper for h in _keyword_tier(atlas, bm25, full_all, rsims, "keyword")[:N_FEEDBACK]]
        rows = ix.row_of[partial]
        have = rows >= 0
        if index is None:
            near = _near(atlas, best)
        else:
            centre = _centre(atlas, best)
            near = np.zeros_like(sims) if centre is None else gathered.cosines(centre)
        # a partial match must also be plausible in meaning: a third of the way to a meaning match
        close = (sims[rows[have]] >= PARTIAL_MIN_COSINE) | (near[rows[have]] >= NEIGHBOUR_MIN_COSINE)
        plausible = partial[have][close]
        res.hits += _keyword_tier(atlas, bm25, plausible, rsims, "partial")
        skip = np.zeros(len(sims), dtype=bool)
        for docs in (full_all, plausible):
            rows = ix.row_of[docs]
            skip[rows[rows >= 0]] = True
        if index is None:
            floor = meaning_floor(sims, terms)  # MEANING_MIN_COSINE, or lower for a short query no paper uses
            meaning, res.capped = _meaning_tier(atlas, sims, near, skip, ok, POOL, floor=floor)
        else:
            meaning, res.capped = _meaning.meaning_from_graph(
                atlas.vectors, index, qv, centre, (MEANING_MIN_COSINE, NEIGHBOUR_MIN_COSINE),
                lambda s, nr, rows: _meaning_tier(atlas, s, nr, skip, ok, POOL, rows), int(skip.sum()))
        res.hits += meaning
    res.message = _message(terms, query, searched, res, flt.any(), semantic)
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


def warm_up(atlas: Atlas, pause: Callable[[], None] | None = None) -> None:
    """Compute ahead what searches of ``atlas`` keep, so that no query waits for it.

    The index arrays, the spelling vocabulary and its candidates, the postings of the words in many papers
    (:func:`paperatlas.search.postings.warm`: ~5 s and ~40 MB at 42k papers; nothing below 1,000 papers), from
    :data:`WARM_PIECES_MIN_PAPERS` papers the tokens of a sample's text pieces
    (:func:`paperatlas.search.together.warm_pieces`), and what related papers read (:func:`.related.warm_related`).

    Args:
        atlas: the atlas.
        pause: called between chunks of work; a web app blocks in it while requests are answered.
    """
    wait = pause or (lambda: None)
    postings(atlas)
    wait()
    _rows(atlas)
    wait()
    vocab = spelling_vocabulary(atlas, pause)
    candidates_by_letter(atlas)
    wait()
    warm(atlas, pause, words=list(vocab))
    if len(atlas.papers) >= WARM_PIECES_MIN_PAPERS:
        warm_pieces(atlas, pause)
    wait()
    warm_related(atlas)  # the representation, the TF-IDF matrix, the keyphrase and author sets (~5 s at 42k)
