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
