"""Cross-source identity: ids and merging of the same paper."""

from paperatlas.model import Link, Paper, SourceRef
from paperatlas.sources.merge import author_key, merge_papers, paper_id


def _p(title, authors, **kw):
    return Paper(title=title, authors=authors, **kw)


def test_author_variants_share_a_key():
    assert author_key("Jeremy Cohen") == author_key("Jeremy M. Cohen") == author_key("J. Cohen") == "j cohen"
    assert author_key("Bernhard Schölkopf") == author_key("Bernhard Scholkopf")
    assert author_key("Jeremy Cohen") != author_key("Jeremy Howard")


def test_same_paper_from_two_sources_is_merged_keeping_both_provenances_and_sections():
    iclr = _p("Gradient Descent on Neural Networks Typically Occurs at the Edge of Stability",
              ["Jeremy Cohen", "Simran Kaur", "Yuanzhi Li", "J Zico Kolter", "Ameet Talwalkar"],
              abstract="We empirically demonstrate that full-batch gradient descent ...", status="Oral",
              venue="ICLR 2021", sources=[SourceRef("paperlists-md", "001.txt", line=10)])
    awesome = _p("Gradient Descent on Neural Networks Typically Occurs at the Edge of Stability.",
                 ["Jeremy M. Cohen", "Simran Kaur", "Yuanzhi Li", "J. Zico Kolter", "Ameet Talwalkar"],
                 digest="The paper shows ...", given_keyphrases=["Edge of Stability"], sections=["Optimization"],
                 links=[Link("https://github.com/locuslab/edge-of-stability", "code")],
                 sources=[SourceRef("awesome-md", "004.txt", line=99, section="Optimization")])
    merged = merge_papers([iclr, awesome])
    assert len(merged) == 1
    p = merged[0]
    assert p.status == "Oral" and p.venue == "ICLR 2021"
    assert p.digest == "The paper shows ..." and p.given_keyphrases == ["Edge of Stability"]
    assert p.sections == ["Optimization"]
    assert [s.format for s in p.sources] == ["paperlists-md", "awesome-md"]
    assert p.code_url == "https://github.com/locuslab/edge-of-stability"
    assert p.id == paper_id(iclr.title)


def test_same_title_with_disjoint_authors_stays_two_papers_with_distinct_ids():
    a = _p("Attention Is All You Need", ["Ashish Vaswani", "Noam Shazeer"])
    b = _p("Attention is all you need", ["Someone Else"])
    merged = merge_papers([a, b])
    assert len(merged) == 2
    assert merged[0].id != merged[1].id and merged[1].id.startswith(merged[0].id)


def test_near_identical_titles_merge_only_with_overlapping_authors():
    a = _p("Sharpness-Aware Minimization for Efficiently Improving Generalization", ["Pierre Foret", "Ariel Kleiner"])
    b = _p("Sharpness-Aware Minimization for Efficiently Improving Generalisation", ["P. Foret"])
    c = _p("Sharpness-Aware Minimization for Efficiently Improving Generalisation", ["Somebody Unrelated"])
    assert len(merge_papers([a, b])) == 1
    assert len(merge_papers([a, c])) == 2


def test_ids_are_stable_across_runs_and_case_or_punctuation():
    a = paper_id("Net-DNF: Effective Deep Modeling of Tabular Data")
    assert a == paper_id("net dnf effective deep modeling of tabular data")
    assert len(paper_id("x")) == 10

