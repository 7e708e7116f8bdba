"""Search (BM25, semantic, hybrid RRF), filters, query safety, related papers."""

from __future__ import annotations

import pytest

from paperatlas.enrich.embed import get_embedder
from paperatlas.search import Filters, find_paper, fts_query, parse_years, related, rrf, search
from paperatlas.store import Atlas


@pytest.fixture(scope="module")
def atlas(sample_atlas):
    return Atlas(sample_atlas)


def embed(q):
    return get_embedder().encode([q])[0]


NASTY = ['"', '""', "*", "AND (", "-", "NOT", "title:x", "a OR", "NEAR(a b)", "'; DROP TABLE papers; --",
         "(((", "^", "✓ ünïcödé", "tabular data\" OR \"", "-1", "{}", ""]


@pytest.mark.parametrize("q", NASTY)
def test_any_query_string_is_safe(atlas, q):
    hits = search(atlas, q, k=5, mode="hybrid", embed_query=embed)
    assert isinstance(hits, list)
    search(atlas, q, k=5, mode="bm25")


def test_fts_query_quotes_every_token():
    assert fts_query('pruning "lottery* AND (tickets') == '"pruning" OR "lottery" OR "tickets"'
    assert fts_query("*-()") == ""


def test_keyword_search_finds_the_paper_by_its_words(atlas):
    hits = search(atlas, "tabular data disjunctive normal form", k=3, mode="bm25")
    assert hits[0].paper.title == "Net-DNF: Effective Deep Modeling of Tabular Data"


def test_semantic_search_finds_a_paper_without_its_words(atlas):
    # none of these words is in the Net-DNF title; meaning is
    hits = search(atlas, "neural networks for spreadsheets and structured rows of features", k=5, mode="semantic",
                  embed_query=embed)
    assert "Net-DNF: Effective Deep Modeling of Tabular Data" in [h.paper.title for h in hits]


def test_hybrid_fuses_both_rankings(atlas):
    hits = search(atlas, "certified robustness", k=5, mode="hybrid", embed_query=embed)
    top = hits[0]
    assert "Certif" in top.paper.title
    assert top.bm25_rank is not None and top.semantic_rank is not None
    assert top.score == pytest.approx(1 / (60 + top.bm25_rank) + 1 / (60 + top.semantic_rank))


def test_rrf_rewards_agreement():
    fused = rrf([["a", "b", "c"], ["b", "a", "d"]])
    assert fused["a"] == fused["b"] > fused["c"] == fused["d"]


def test_status_filter_and_author_filter(atlas):
    hits = search(atlas, "learning", k=50, filters=Filters(status=["Oral", "Spotlight"]), mode="bm25")
    assert hits and all(h.paper.status in ("Oral", "Spotlight") for h in hits)
    hits = search(atlas, "", k=50, filters=Filters(author="Schölkopf"))
    assert hits and all(any("Schölkopf" in a for a in h.paper.authors) for h in hits)


def test_topic_and_year_filters(atlas):
    tid = atlas.papers[0].topic_id
    hits = search(atlas, "", k=100, filters=Filters(topic=str(tid)))
    assert {h.paper.topic_id for h in hits} == {tid}
    assert len(hits) == atlas.topics[tid].size
    assert search(atlas, "", k=100, filters=Filters(year=(2022, None))) == []
    assert len(search(atlas, "", k=100, filters=Filters(year=(2021, 2021)))) == 60


def test_parse_years():
    assert parse_years("2021") == (2021, 2021)
    assert parse_years("2019-2021") == (2019, 2021)
    assert parse_years("2019-") == (2019, None)
    with pytest.raises(ValueError, match="bad year filter"):
        parse_years("last year")


def test_find_paper_by_id_title_or_partial_title(atlas):
    p = atlas.papers[0]
    assert find_paper(atlas, p.id) is p
    assert find_paper(atlas, p.title.upper()) is p
    assert find_paper(atlas, "Net-DNF tabular").title.startswith("Net-DNF")
    with pytest.raises(LookupError, match="no paper"):
        find_paper(atlas, "a paper that is not in this atlas at all")


def test_related_papers_are_nearest_with_a_reason(atlas):
    p = find_paper(atlas, "Robust Reinforcement Learning on State Observations with Learned Optimal Adversary")
    rel = related(atlas, p, k=5)
    assert len(rel) == 5 and p.id not in [r.paper.id for r in rel]
    sims = [r.similarity for r in rel]
    assert sims == sorted(sims, reverse=True)
    assert all(r.reason for r in rel)
    assert any(r.reason.startswith(("shares keyphrases", "both about", "same topic")) for r in rel)


def test_keyphrase_facet_links_acronym_and_long_form(atlas):
    """The build stores the acronyms the corpus defines; ``--keyphrase GAN`` then finds the papers tagged with
    the long form (keyphrases are shown in their long form) and vice versa; spelling variants match too."""
    acronyms = atlas.meta.get("acronyms") or {}
    tagged = {}
    for short, long in acronyms.items():
        n = sum(1 for p in atlas.papers if Filters(keyphrase=long).matcher(atlas)(p))
        if n:
            tagged[short] = (long, n)
    assert tagged, f"no acronym's long form is a keyphrase in the sample atlas: {acronyms}"
    short, (long, n) = next(iter(sorted(tagged.items())))
    by_short = [p.id for p in atlas.papers if Filters(keyphrase=short).matcher(atlas)(p)]
    by_long = [p.id for p in atlas.papers if Filters(keyphrase=long).matcher(atlas)(p)]
    assert by_short == by_long and len(by_long) == n
    variant = (long[:-1] if long.endswith("s") else long + "s").title()  # other number, other case
    assert [p.id for p in atlas.papers if Filters(keyphrase=variant).matcher(atlas)(p)] == by_long
