"""The CSV/TSV reader on real tables (origins in ``fixtures/sources/csv/ORIGIN.md``).

``papers.csv`` (ICML 2019 orals), ``iclr2018_submissions_head.csv`` and ``nips2018_head.csv``: tables scraped from
the venues and written by pandas (an unnamed index column, abstracts spanning lines, doubled quotes, a quoted title
with a comma, keywords as a Python list, numeric decision codes, HTML character references); ``zotero_export.csv``:
Zotero's CSV column layout.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from paperatlas import sources
from paperatlas.model import AUTHOR_TLDR, SourceError
from paperatlas.sources import RecordSkipped, detect_format

DIR = FIXTURES / "sources" / "csv"
PAPERS = DIR / "papers.csv"
ICLR18 = DIR / "iclr2018_submissions_head.csv"
NIPS18 = DIR / "nips2018_head.csv"


@pytest.mark.parametrize("path", [PAPERS, ICLR18, NIPS18, DIR / "zotero_export.csv"])
def test_tables_are_detected_as_csv(path):
    assert detect_format(path) == "csv"


def test_pandas_table_with_multiline_abstracts_and_quoted_titles():
    papers = sources.read(PAPERS, venue="ICML 2019")
    assert [p.sources[0].line for p in papers] == [2, 9, 12, 14, 16]  # where each row starts
    assert [p.title for p in papers] == [
        "Challenging Common Assumptions in the Unsupervised Learning of Disentangled Representations",
        "Data Shapley: Equitable Valuation of Data for Machine Learning",  # the double space collapsed
        "ELF OpenGo: an analysis and open reimplementation of AlphaZero",
        "Validating Causal Inference Models via Influence Functions",
        "Ithemal: Accurate, Portable and Fast Basic Block Throughput Estimation using Deep Neural Networks"]
    assert all((p.year, p.venue, p.status) == (2019, "ICML 2019", "Oral") for p in papers)
    assert all(p.extra == {"decision": "Oral"} and p.authors == [] and p.links == [] for p in papers)
    causal = papers[3]
    assert 'In the absence of "suervision", how can we' in causal.abstract  # "" inside a quoted cell
    assert papers[0].abstract.startswith("The key idea behind") and papers[0].abstract.endswith("several data sets.")
    assert "\n\nIn this aer, we resent Ithemal" in papers[4].abstract  # a paragraph break in the cell kept


def test_without_a_venue_column_or_hint_the_file_name_gives_venue_and_year():
    assert [(p.venue, p.year) for p in sources.read(PAPERS)] == [("", 2019)] * 5
    assert {(p.venue, p.year) for p in sources.read(NIPS18)} == {("NeurIPS 2018", 2018)}
    assert {(p.venue, p.year) for p in sources.read(ICLR18)} == {("ICLR 2018", 2018)}


def test_python_list_keywords_and_numeric_decision_codes():
    papers = sources.read(ICLR18)
    assert [p.given_keyphrases for p in papers] == [
        ["adversarial training", "distributionally robust optimization", "deep learning", "optimization",
         "learning theory"],
        ["Information Bottleneck", "Deep Neural Networks"],
        ["Neural Machine Translation", "Sequence to Sequence", "Sequence Modeling"]]
    assert all(p.status == "" and "decision" not in p.extra for p in papers)  # "1", "0", "2": codes, not words
    assert papers[1].abstract.endswith("in a faster manner.")


def test_html_character_references_and_a_second_index_column():
    papers = sources.read(NIPS18)
    assert [p.title for p in papers] == [
        "Efficient Algorithms for Non-convex Isotonic Regression through Submodular Optimization",
        "Structure-Aware Convolutional Neural Networks",
        "Kalman Normalization: Normalizing Internal Representations Across Network Layers"]
    assert "This limits BN's room in training" in papers[2].abstract and "&#39;" not in papers[2].abstract


def test_zotero_layout_last_first_authors_doi_and_url():
    papers = sources.read(DIR / "zotero_export.csv")
    acl = next(p for p in papers if p.title.startswith("A Closer Look"))
    assert acl.authors == ["Yichu Zhou", "Vivek Srikumar"] and acl.extra["doi"] == "10.18653/v1/2022.acl-long.75"
    assert [x.url for x in acl.links] == ["https://aclanthology.org/2022.acl-long.75/"]


def test_row_without_a_title_is_skipped_with_its_line_or_fatal_with_strict(tmp_path):
    text = PAPERS.read_text().replace("ELF OpenGo: an analysis and open reimplementation of AlphaZero", "")
    path = tmp_path / "icml2019_orals.csv"
    path.write_text(text)
    with pytest.warns(RecordSkipped) as caught:
        papers = sources.read(path)
    assert [str(w.message) for w in caught] == [f"{path}:12: row without a title"]
    assert len(papers) == 4 and {p.venue for p in papers} == {"ICML 2019"}
    with pytest.raises(SourceError, match="row without a title") as err:
        sources.read(path, strict=True)
    assert err.value.where == 12


def test_no_title_column_is_one_error_at_line_1(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(",Year,Name of the talk,Abstract\n0,2019,x,y\n")
    with pytest.raises(SourceError, match=r"t\.csv:1: no title column"):
        sources.read(path, format="csv")


def test_an_external_tldr_column_is_the_authors_and_review_scores_are_facets(tmp_path):
    path = tmp_path / "iclr2021_accepted.tsv"
    path.write_text("Title\tAuthors\tTL;DR\tRatings\tConfidences\tDecision\tarXiv\n"
                    "Sharpness-Aware Minimization for Efficiently Improving Generalization\t"
                    "Pierre Foret; Ariel Kleiner; Hossein Mobahi; Behnam Neyshabur\t"
                    "Motivated by the connection between geometry of the loss landscape and generalization, we "
                    "introduce a procedure for simultaneously minimizing loss value and loss sharpness.\t"
                    "8; 7; 7; 7\t4; 3; 4; 3\tAccept (Spotlight)\t2010.01412\n")
    (p,) = sources.read(path)
    assert p.tldr.startswith("Motivated by the connection") and p.tldr_method == AUTHOR_TLDR
    assert p.extra["ratings"] == [8.0, 7.0, 7.0, 7.0] and p.extra["confidences"] == [4.0, 3.0, 4.0, 3.0]
    assert (p.status, p.extra["decision"], p.venue) == ("Spotlight", "Accept (Spotlight)", "ICLR 2021")
    assert p.extra["arxiv_id"] == "2010.01412" and p.links[0].url == "https://arxiv.org/abs/2010.01412"


def test_paperatlas_own_export_tldr_is_not_taken_as_the_authors(tmp_path):
    path = tmp_path / "atlas.csv"
    path.write_text("id,title,authors,venue,year,status,track,topic_id,topic_label,tldr,keyphrases,paper_url,"
                    "code_url,x,y,abstract,rating_mean,rating_spread,n_reviews,confidence_mean,decision,citations,"
                    "has_code,institutions\n"
                    "p1,Sharpness-Aware Minimization,Pierre Foret; Ariel Kleiner,ICLR 2021,2021,Spotlight,main,3,"
                    "Loss landscapes,A generated one-line summary.,sharpness; generalization,"
                    "https://openreview.net/forum?id=6Tm1mposlrM,https://github.com/google-research/sam,0.5,-1.2,"
                    "An abstract.,7.25,0.43,4,3.5,,143,yes,Google\n")
    (p,) = sources.read(path)
    assert p.tldr == "" and p.tldr_method == ""
    assert (p.status, p.track, p.given_keyphrases) == ("Spotlight", "main", ["sharpness", "generalization"])
    assert p.extra == {"rating_mean": 7.25, "citations": 143}
    assert [(x.url, x.kind) for x in p.links] == [("https://openreview.net/forum?id=6Tm1mposlrM", "openreview"),
                                                  ("https://github.com/google-research/sam", "code")]
    assert p.affiliations == ["Google"]


def test_the_formula_guard_of_publish_csv_is_undone(tmp_path):
    from paperatlas.model import Paper
    from paperatlas.publish import render

    odd = [Paper(title="=HYPERLINK(\"http://x\") +1 -- a title", authors=["@handle", "-Ann Bo"], id="a",
                 abstract="-1 is the answer.", venue="ICLR 2021", year=2021),
           Paper(title="'Tis a title with an apostrophe", authors=["O'Neil Ann"], id="b", abstract="+ve")]
    path = tmp_path / "atlas.csv"
    path.write_bytes(render("csv", odd, [], {}).encode())
    assert "'=HYPERLINK" in path.read_text()  # what the publisher writes
    back = sources.read(path)
    assert [(p.title, p.authors, p.abstract) for p in back] == [(p.title, p.authors, p.abstract) for p in odd]


def test_every_url_and_code_column_gives_a_link(tmp_path):
    path = tmp_path / "papers.csv"
    path.write_text("Title,URL,PDF,Code\n"
                    "Sharpness-Aware Minimization,https://openreview.net/forum?id=6Tm1mposlrM,"
                    "https://openreview.net/pdf?id=6Tm1mposlrM,https://github.com/google-research/sam\n")
    (p,) = sources.read(path)
    assert [(x.url, x.kind) for x in p.links] == [("https://openreview.net/forum?id=6Tm1mposlrM", "openreview"),
                                                  ("https://openreview.net/pdf?id=6Tm1mposlrM", "openreview"),
                                                  ("https://github.com/google-research/sam", "code")]
