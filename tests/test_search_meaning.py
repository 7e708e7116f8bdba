"""Search of a large atlas through its HNSW graph: the same results as the exact scans where the graph finds all."""

from __future__ import annotations

import numpy as np
import pytest

from paperatlas.enrich.embed import get_embedder
from paperatlas.search import Filters, meaning, search_results
from paperatlas.search.ann import NeighbourIndex
from paperatlas.store import Atlas

QUERIES = ["graph neural networks", "lottery ticket", "adversarial robustness certified", "tabular data",
           "learning from noisy labels", "reinforcement learning exploration", "grokking", "lotery tiket",
           "neural networks for spreadsheets and structured rows of features"]


@pytest.fixture(scope="module")
def atlas(sample_atlas):
    return Atlas(sample_atlas)


def embed(q):
    return get_embedder().encode([q])[0]


def _seen(res):
    return [(h.paper.id, h.match, round(h.score, 6), h.bm25_rank, h.semantic_rank) for h in res.hits]


@pytest.fixture
def with_graph(atlas, monkeypatch):
    """Searches of ``atlas`` use an HNSW graph over its 60 vectors, as an atlas above the threshold would."""
    pytest.importorskip("usearch", reason="the graph needs USearch: pip install 'paperatlas[ann]'")
    index = NeighbourIndex.build(atlas.vectors, min_papers=0)
    asked = []
    real = index.search_many

    def search_many(*a, **kw):
        asked.append(kw.get("oversample"))
        return real(*a, **kw)

    monkeypatch.setattr(index, "search_many", search_many)
    monkeypatch.setattr(meaning, "graph", lambda a: index if a is atlas else None)
    return asked


def _exact(atlas, query, filters=None):
    return search_results(atlas, query, filters, mode="hybrid", embed_query=embed)


@pytest.mark.parametrize("filters", [None, Filters(status=["Oral", "Spotlight"])])
def test_search_through_the_graph_gives_the_exact_results_when_it_reaches_every_paper(atlas, filters, with_graph):
    exact = {}
    for q in QUERIES:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(meaning, "graph", lambda a: None)
            exact[q] = _seen(_exact(atlas, q, filters))
    for q in QUERIES:
        got = search_results(atlas, q, filters, mode="hybrid", embed_query=embed)
        assert _seen(got) == exact[q], q
    assert with_graph  # the graph was asked
    assert any(e for e in exact.values() if any(m == "meaning" for _, m, *_ in e))


def test_short_candidate_lists_grow_then_fall_back_to_the_exact_scan(atlas, with_graph, monkeypatch):
    monkeypatch.setattr(meaning, "FIRST_CANDIDATES", 2)
    monkeypatch.setattr(meaning, "MAX_CANDIDATES", 8)
    for q in QUERIES:
        got = _seen(search_results(atlas, q, mode="hybrid", embed_query=embed))
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(meaning, "graph", lambda a: None)
            assert got == _seen(_exact(atlas, q)), q


def test_cosines_at_gathers_the_rows_asked_and_scans_when_they_are_many():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(40, 8)).astype(np.float32)
    v = rng.normal(size=8).astype(np.float32)
    full = np.vecdot(vectors, v)
    got = meaning.cosines_at(vectors, v, np.array([5, 1, 5]))
    assert np.isneginf(np.delete(got, [1, 5])).all()
    assert np.allclose(got[[1, 5]], full[[1, 5]])
    assert np.allclose(meaning.cosines_at(vectors, v, np.arange(30)), full)  # 30 of 40 rows: one scan


def test_lists_start_long_when_many_rows_are_matches_and_only_unfinished_ones_grow(atlas, with_graph, monkeypatch):
    """The graph's lists start at MAX_CANDIDATES when the keyword tiers hold that many papers, grow one at a time
    otherwise, and the results are still the exact ones here (the lists reach every paper)."""
    monkeypatch.setattr(meaning, "FIRST_CANDIDATES", 2)
    monkeypatch.setattr(meaning, "MAX_CANDIDATES", 12)
    index = meaning.graph(atlas)
    asked: list[list[int]] = []
    real = index.search_many
    monkeypatch.setattr(index, "search_many", lambda v, k, **kw: (asked[-1].append(k), real(v, k, **kw))[1])
    starts = {}
    for q in [*QUERIES, "learning", "neural networks"]:
        asked.append([])
        got = _seen(search_results(atlas, q, mode="hybrid", embed_query=embed))
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(meaning, "graph", lambda a: None)
            exact = _exact(atlas, q)
        assert got == _seen(exact), q
        if asked[-1]:
            starts[q] = (asked[-1][0], exact.n_keyword)
    assert {k for k, n in starts.values() if n >= 12} == {12}  # many matches: long lists at once
    assert {k for k, n in starts.values() if n < 12} == {2}
    grown = [calls for calls in asked if len(calls) > 2]
    assert grown and all(calls[:2] == [2, 2] for calls in grown)  # both lists start short, then grow



def test_a_finished_list_is_not_searched_again():
    pytest.importorskip("usearch", reason="the graph needs USearch: pip install 'paperatlas[ann]'")
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = NeighbourIndex.build(vectors, min_papers=0)
    asked, real = [], index.search_many
    index.search_many = lambda v, k, **kw: (asked.append(k), real(v, k, **kw))[1]
    seen = []

    def tier(sims, near, rows):
        seen.append(None if rows is None else len(rows))
        return [], False

    q, centre = vectors[0], vectors[1] + vectors[2]
    # the query's list ends below 0.99 at once; the centre's never ends below -1: only it grows, then exact scans
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(meaning, "FIRST_CANDIDATES", 4)
        mp.setattr(meaning, "MAX_CANDIDATES", 64)
        meaning.meaning_from_graph(vectors, index, q, centre, (0.99, -1.0), tier)
    assert asked == [4, 4, 16, 64]
    assert seen[-1] is None and seen[:-1] == sorted(seen[:-1]) and len(seen) == 4
