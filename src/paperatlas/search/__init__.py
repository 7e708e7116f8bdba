"""Finding papers: honest keyword/semantic/hybrid search, filters, the one paper a user means, related papers.

Rooms: :mod:`.ranking` (BM25, cosine, reciprocal rank fusion), :mod:`.terms` (a query's words: which papers have
them, their idf, typo correction), :mod:`.postings` (each word's papers and BM25 terms, kept in memory),
:mod:`.engine` (the tiers of a search: keyword, partial, meaning-only, and the message when nothing uses the
words), :mod:`.hits` (the results as arrays, a hit made when read), :mod:`.together` (which candidates use the
words together, on their text or through FTS5 in a worker thread), :mod:`.meaning` (cosines where a tier reads them;
the meaning tier through the HNSW graph from 100,000 papers), :mod:`.filters`, :mod:`.lookup` (ids, titles,
ambiguous fragments), :mod:`.related` (nearest papers with a reason).
"""

from .engine import (
    MEANING_MIN_COSINE,
    NEIGHBOUR_MIN_COSINE,
    PARTIAL_MIN,
    Hit,
    SearchResults,
    search,
    search_results,
    warm_up,
)
from .filters import Filters, keyphrase_keys, parse_years
from .lookup import AmbiguousPaper, find_paper, find_papers
from .ranking import BM25_WEIGHTS, POOL, RRF_K, bm25_ranking, fts_query, rrf, semantic_ranking
from .related import Related, explain, related, shared_keyphrases

__all__ = ["AmbiguousPaper", "BM25_WEIGHTS", "Filters", "Hit", "MEANING_MIN_COSINE", "NEIGHBOUR_MIN_COSINE",
           "PARTIAL_MIN", "POOL", "RRF_K", "Related", "SearchResults", "bm25_ranking", "explain", "find_paper",
           "find_papers", "fts_query", "keyphrase_keys", "parse_years", "related", "rrf", "search", "search_results",
           "semantic_ranking", "shared_keyphrases", "warm_up"]
