"""Search (BM25, semantic, hybrid RRF), filters, query safety, related papers."""

from __future__ import annotations

import pytest

from paperatlas.enrich.embed import get_embedder
from paperatlas.search import (
    AmbiguousPaper,
    Filters,
    find_paper,
    find_papers,
    fts_query,
    parse_years,
    related,
    rrf,
    search,
    search_results,
)
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
    scores = [r.score for r in rel]
    assert scores == sorted(scores, reverse=True)
    assert all(r.reason for r in rel)
    assert any("shares keyphrases" in r.reason or "both about" in r.reason or "same topic" in r.reason
               or r.reason.startswith("shares words") for r in rel)


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


# --- honest search (issue 15): misses, typos, tiers, true counts, ambiguity -----------------------------------------

def _embed():
    model = get_embedder()
    return lambda q: model.encode([q])[0]


def test_a_query_no_paper_is_about_returns_nothing_and_says_so(atlas):
    res = search_results(atlas, "grokking", embed_query=_embed())
    assert res.hits == [] and res.total == 0
    assert res.message == "No paper mentions “grokking”, and none is close in meaning."
    # without the model the message does not claim anything about meaning
    assert search_results(atlas, "grokking").message == "No paper mentions “grokking”."


def test_papers_with_the_words_come_first_and_meaning_only_ones_are_marked(atlas):
    res = search_results(atlas, "Hopfield networks", embed_query=_embed())
    assert [h.match for h in res.hits] == ["keyword", "keyword"] and res.n_keyword == 2
    assert {h.paper.title for h in res.hits} == {"Hopfield Networks is All You Need",
                                                 "On the mapping between Hopfield networks and Restricted "
                                                 "Boltzmann Machines"}
    assert res.message == ""
    res = search_results(atlas, "adversarial robustness", embed_query=_embed())
    tiers = [h.match for h in res.hits]
    assert tiers == sorted(tiers, key=["keyword", "partial", "meaning"].index)  # words first, meaning last
    assert res.n_keyword >= 2 and res.n_meaning >= 2
    for h in res.hits:
        text = (h.paper.title + " " + h.paper.abstract).lower()
        if h.match == "keyword":
            assert "adversarial" in text and "robust" in text
        else:  # close in meaning only: it does not use the two words together
            assert not ("adversarial robustness" in text or "adversarially robust" in text)


def test_a_misspelt_word_is_searched_as_the_word_it_meant(atlas):
    res = search_results(atlas, "hopfeld netwroks")
    assert res.corrected == "hopfield networks"
    assert {h.paper.title for h in res.hits[:2]} >= {"Hopfield Networks is All You Need"}
    # a word with no close neighbour is not "corrected" into an unrelated one
    assert search_results(atlas, "grokking").corrected is None


def test_counts_are_true_and_every_result_can_be_paged_to(atlas):
    posters = [p for p in atlas.papers if p.status == "Poster"]
    res = search_results(atlas, "", Filters(status=["Poster"]))
    assert res.total == len(posters) > 10
    pages = [res.page(i, 10) for i in range(0, res.total, 10)]
    assert [h.paper.id for page in pages for h in page] == [p.id for p in posters]


def test_a_title_fragment_matching_several_papers_is_ambiguous(atlas):
    with pytest.raises(AmbiguousPaper) as e:
        find_paper(atlas, "Hopfield")
    assert len(e.value.candidates) == 2 and "matches 2 papers" in str(e.value)
    assert len(find_papers(atlas, "Hopfield")) == 2
    # a whole title, an id, or a fragment only one title contains still find the one paper
    assert find_paper(atlas, "Hopfield Networks is All You Need").title == "Hopfield Networks is All You Need"
    assert find_paper(atlas, "Restricted Boltzmann").title.startswith("On the mapping between Hopfield")
