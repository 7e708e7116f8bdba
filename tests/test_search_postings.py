"""Search's in-memory postings: the same papers and the very BM25 floats as SQLite FTS5, fetched once."""

from __future__ import annotations

import numpy as np
import pytest

from paperatlas.search import postings as postings_mod
from paperatlas.search import search_results, warm_up
from paperatlas.search.engine import _bm25_list
from paperatlas.search.postings import BM25_WEIGHTS, Postings, bm25_scores, postings, warm
from paperatlas.search.ranking import bm25_order, bm25_ranking, fts_phrases, fts_query
from paperatlas.search.terms import coverage, docs_using_together, docs_with, query_terms
from paperatlas.store import Atlas

QUERIES = ["learning", "graph neural networks", "learning from noisy labels", "self-supervised learning of images",
           "Networks network NETWORKS", "the of a to", "certified robustness for graph models", "zzqqxx absent",
           "don't stop", "ünïcödé naïve", "meta-learning few-shot", "how performance scales with model size"]


@pytest.fixture
def atlas(sample_atlas):
    a = Atlas(sample_atlas)  # a fresh object per test: nothing kept from another test
    yield a
    a.close()


def sql_bm25(atlas: Atlas, query: str) -> dict[int, float]:
    """``papers position -> bm25()`` straight from SQLite for the OR query of ``query``."""
    index = {p.id: i for i, p in enumerate(atlas.papers)}
    w = ", ".join(str(x) for x in BM25_WEIGHTS)
    rows = atlas.con.execute(f"SELECT paper_id, bm25(papers_fts, 0, {w}) FROM papers_fts WHERE papers_fts MATCH ?",
                             (fts_query(query),)).fetchall() if fts_query(query) else []
    return {index[pid]: score for pid, score in rows}


def sql_docs(atlas: Atlas, expr: str) -> set[int]:
    index = {p.id: i for i, p in enumerate(atlas.papers)}
    return {index[r[0]] for r in atlas.con.execute("SELECT paper_id FROM papers_fts WHERE papers_fts MATCH ?",
                                                    (expr,))}


@pytest.mark.parametrize("q", QUERIES)
def test_bm25_from_postings_is_sqlites_own_float_for_float(atlas, q):
    scores, matched = bm25_scores(atlas, fts_phrases(q))
    ref = sql_bm25(atlas, q)
    assert set(np.flatnonzero(matched).tolist()) == set(ref)
    for i, s in ref.items():
        assert scores[i] == s  # the same additions in the same order: bit for bit
    assert not scores[~matched].any()


def test_bm25_ranking_is_sqlites_order(atlas):
    w = ", ".join(str(x) for x in BM25_WEIGHTS)
    for q in QUERIES:
        if not fts_query(q):
            continue
        rows = atlas.con.execute(f"SELECT paper_id, bm25(papers_fts, 0, {w}) AS s FROM papers_fts "
                                 "WHERE papers_fts MATCH ? ORDER BY s, rowid", (fts_query(q),)).fetchall()
        assert bm25_ranking(atlas, q, limit=1000) == [r[0] for r in rows]
        assert bm25_ranking(atlas, q, limit=3) == [r[0] for r in rows[:3]]
    docs, scores = bm25_order(atlas, "")
    assert len(docs) == 0 and not scores.any()


def test_a_word_s_papers_are_what_fts5_matches(atlas):
    for word in ("learning", "networks", "self-supervised", "robustness", "zzqqxx", "naïve", "don't"):
        assert set(docs_with(atlas, word).tolist()) == sql_docs(atlas, '"' + word + '"')
    words = ["graph", "neural"]
    ref = sql_docs(atlas, 'NEAR("graph" "neural", 12)') | sql_docs(atlas, '{title keyphrases tldr}: "graph" AND '
                                                                   '{title keyphrases tldr}: "neural"')
    assert set(docs_using_together(atlas, words).tolist()) == ref
    assert len(docs_using_together(atlas, [])) == 0


def test_coverage_weighs_rare_words_more(atlas):
    terms = query_terms(atlas, "graph learning")
    cov = coverage(terms, len(atlas.papers))
    both = set(terms[0].docs.tolist()) & set(terms[1].docs.tolist())
    assert all(cov[i] == pytest.approx(1.0) for i in both)
    only = set(terms[0].docs.tolist()) - both  # "graph" alone: rarer than "learning", so more than half
    assert only and all(0.5 < cov[i] < 1.0 for i in only)
    assert terms[0].ids == {atlas.papers[i].id for i in terms[0].docs}


def test_tokens_are_fts5s_and_shared_between_spellings(atlas):
    px = postings(atlas)
    assert px.tokens(["Networks", "network", "self-supervised", "", "don't"]) == [
        ("network",), ("network",), ("self", "supervis"), (), ("don", "t")]
    assert px.get("networks") is px.get("Network")  # one posting for both spellings
    assert len(px.get("").docs) == 0 and len(px.get("zzqqxx").docs) == 0


def test_without_a_tokenizer_postings_are_keyed_by_text_and_still_exact(atlas, monkeypatch):
    monkeypatch.setattr(Postings, "_make_tokenizer", lambda self: None)
    for q in QUERIES[:4]:
        scores, matched = bm25_scores(atlas, fts_phrases(q))
        ref = sql_bm25(atlas, q)
        assert {i: scores[i] for i in np.flatnonzero(matched).tolist()} == ref
    assert warm(atlas, min_docs=1) == 0  # nothing to warm without stems


def test_warm_fetches_the_frequent_terms_once_and_search_reads_them(atlas, monkeypatch):
    pauses = []
    n = warm(atlas, pause=lambda: pauses.append(1), min_docs=5, words=["noise", "training"])
    px = postings(atlas)
    assert n > 10 and px.cached() > 0
    calls = []
    monkeypatch.setattr(px, "_fetch", lambda text, pause, n_docs=None: calls.append(text) or postings_mod.Posting(
        np.zeros(0, np.int32), np.zeros(0)))
    px.get("learning")  # "learn" is in more than 5 of the 60 papers: warm
    assert calls == []


def test_the_postings_stay_within_their_budget(atlas, monkeypatch):
    monkeypatch.setattr(postings_mod, "BUDGET", 60)
    monkeypatch.setattr(postings_mod, "PAIRS_PER_PAPER", 0)
    px = postings(atlas)
    for word in ("learning", "neural", "networks", "graph", "data", "model", "training", "robust"):
        px.get(word)
        assert px.cached() <= 60 or len(px._cache) == 1
    scores, matched = bm25_scores(atlas, fts_phrases("graph neural networks"))
    assert {i: scores[i] for i in np.flatnonzero(matched).tolist()} == sql_bm25(atlas, "graph neural networks")


def test_the_bm25_list_keeps_the_cover_papers_among_the_first_limit(atlas):
    scores, matched = bm25_scores(atlas, fts_phrases("learning networks"))
    order = bm25_order(atlas, "learning networks")[0]
    cover = order[::2].copy()  # every other matched paper
    np.random.default_rng(0).shuffle(cover)
    for limit in (1, 5, 10, len(order), len(order) + 5):
        first = set(order[:limit].tolist())
        expected = [i for i in order.tolist() if i in first and i in set(cover.tolist())]
        assert _bm25_list(scores, matched, cover, limit).tolist() == expected


def test_warm_up_leaves_every_search_the_same(sample_atlas, monkeypatch):
    from paperatlas.search import engine, terms, together

    monkeypatch.setattr(engine, "WARM_PIECES_MIN_PAPERS", 0)  # the text pieces too, as from 100,000 papers
    monkeypatch.setattr(terms, "TOGETHER_TEXT_RATIO", 0)  # every together check on the candidates' text
    cold, warmed = Atlas(sample_atlas), Atlas(sample_atlas)
    try:
        warm_up(warmed)
        known = together.tokens_of(warmed).learn(set())
        assert len(known) > 1000 and known["Networks"] == ("network",)  # the sample's pieces, tokenized by FTS5
        for q in QUERIES + ["lotery tiket", ""]:
            a, b = search_results(cold, q, mode="bm25"), search_results(warmed, q, mode="bm25")
            assert [(h.paper.id, h.match, h.score, h.bm25_rank) for h in a.hits] == \
                [(h.paper.id, h.match, h.score, h.bm25_rank) for h in b.hits]
            assert (a.message, a.corrected, a.unfiltered) == (b.message, b.corrected, b.unfiltered)
    finally:
        cold.close()
        warmed.close()


def test_the_web_app_warms_search_up_and_facet_filters_know_when_none_is_set(sample_atlas):
    import time

    from paperatlas.web import create_app
    from paperatlas.web.search_views import FacetFilters

    app = create_app(sample_atlas, preload_model=False)
    atlas = app.config["ATLAS"]
    deadline = time.monotonic() + 60
    while "spelling candidates" not in atlas._derived and time.monotonic() < deadline:  # made before the postings
        time.sleep(0.05)
    assert {"phrase postings", "search rows", "spelling candidates"} <= set(atlas._derived)
    client = app.test_client()
    r = client.get("/api/search", query_string={"q": "graph neural networks"}).get_json()
    assert r["total"] > 0 and r["facets"]["status"]
    assert not FacetFilters().any() and FacetFilters(status=["Oral"]).any() and FacetFilters(min_citations=1).any()


def test_cosines_are_the_matrix_product_up_to_rounding(atlas):
    from paperatlas.search.meaning import cosines as _cosines

    v = atlas.vectors
    for q in (v[0], v[:3].mean(axis=0)):
        got = _cosines(v, q)
        assert got.dtype == np.float32 and got.shape == (len(v),)
        assert np.allclose(got, v @ q, rtol=0, atol=1e-6)


def test_a_paused_warm_up_holds_no_read_lock_so_the_reader_can_write(copy_atlas, monkeypatch):
    from paperatlas.store import connection
    from paperatlas.store.userdata import set_mark

    db = copy_atlas()
    a = Atlas(db)
    try:
        monkeypatch.setattr(postings_mod, "ROWID_RANGE", 7)  # several statements per word
        monkeypatch.setattr(connection, "WRITE_TIMEOUT", 1)
        wrote = []

        def pause():  # what a request answered meanwhile does: write the reader's mark
            if not wrote:
                set_mark(db, a.papers[0].id, rating=1)
                wrote.append(True)

        px = postings(a)
        warmed = px._fetch("learning", pause)
        assert wrote
        cold = px._fetch("learning", None)
        assert np.array_equal(warmed.docs, cold.docs) and np.array_equal(warmed.values(), cold.values())
    finally:
        a.close()


@pytest.mark.parametrize("share", [0.0, 2.0])
def test_bm25_is_sqlites_whether_postings_are_kept_dense_or_as_pairs(sample_atlas, monkeypatch, share):
    monkeypatch.setattr(postings_mod, "DENSE_MIN_SHARE", share)  # 0: every phrase one value a paper; 2: never
    fresh = Atlas(sample_atlas)
    for q in QUERIES:
        scores, matched = bm25_scores(fresh, fts_phrases(q))
        ref = sql_bm25(fresh, q)
        assert set(np.flatnonzero(matched).tolist()) == set(ref)
        assert all(scores[i] == s for i, s in ref.items()), q
        assert not scores[~matched].any()
    kept = list(postings_mod.postings(fresh)._cache.values())
    assert kept and all((p.dense is not None) == (share == 0.0) for p in kept if len(p.docs))
    fresh.close()
