"""Merging the two real inputs: ICLR 2021 (860 papers) + Awesome Deep Phenomena (542 papers), 16 in both."""

from conftest import AWESOME_SEED, ICLR_SEED, need
from paperatlas import sources
from paperatlas.sources.merge import merge_papers


def test_iclr_plus_awesome_gives_1386_papers_with_both_provenances():
    iclr = sources.read(need(ICLR_SEED), venue="ICLR 2021", year=2021)
    # a listing-wide --venue must not label the curated list's preprints as ICLR 2021
    awesome = sources.read(need(AWESOME_SEED), venue="ICLR 2021", year=2021)
    assert (len(iclr), len(awesome)) == (860, 542)
    assert sum(p.venue == "ICLR 2021" for p in awesome) == 16
    merged = merge_papers(iclr + awesome)
    assert len(merged) == 1386
    both = [p for p in merged if {s.format for s in p.sources} == {"paperlists-md", "awesome-md"}]
    assert len(both) == 16
    sam = next(p for p in both if p.title.lower().startswith("sharpness-aware minimization"))
    # the ICLR listing wins the scalar fields; the curated list adds its section and Key Words
    assert sam.status == "Spotlight" and sam.venue == "ICLR 2021" and sam.abstract
    assert sam.sections and sam.given_keyphrases
    assert len({p.id for p in merged}) == 1386


def test_building_twice_gives_the_same_ids():
    a = [p.id for p in merge_papers(sources.read(need(ICLR_SEED)))]
    b = [p.id for p in merge_papers(sources.read(need(ICLR_SEED)))]
    assert a == b and len(set(a)) == 860
