"""The bibliography readers (BibTeX, CSL-JSON, RIS, CSV/TSV) on real exports: fields, detection, bad records.

Fixtures (origins in each folder's ORIGIN.md): BibTeX from three publishers (OpenReview, ACL Anthology, PMLR) as
the paperlists data carries it, pandoc's CSL-JSON of that file, RIS reference lists from public repositories, and
the same papers in Zotero's CSV layout.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from paperatlas import sources
from paperatlas.model import SourceError
from paperatlas.sources import RecordSkipped, detect_format

SRC = FIXTURES / "sources"
BIB = SRC / "bibtex" / "paperlists_bibtex.bib"
CSL = SRC / "csl_json" / "pandoc_from_bibtex.json"
RIS = SRC / "ris" / "references.ris"
CSV = SRC / "csv" / "zotero_export.csv"


@pytest.mark.parametrize(("path", "fmt"), [(BIB, "bibtex"), (CSL, "csl-json"), (RIS, "ris"), (CSV, "csv")])
def test_each_export_is_detected_from_its_content(path, fmt):
    assert detect_format(path) == fmt


@pytest.mark.parametrize("path", [BIB, CSL, CSV])
def test_the_same_nine_papers_from_bibtex_csl_json_and_csv(path):
    papers = sources.read(path)
    assert len(papers) == 9
    by = {p.title.lower(): p for p in papers}
    acl = by["a closer look at how fine-tuning changes bert"]
    assert acl.authors == ["Yichu Zhou", "Vivek Srikumar"] and acl.year == 2022
    assert acl.venue == "ACL 2022"  # "Proceedings of the 60th Annual Meeting of the ACL ...": named in full (issue 30)
    assert acl.extra["doi"] == "10.18653/v1/2022.acl-long.75"
    assert "https://aclanthology.org/2022.acl-long.75/" in {x.url for x in acl.links}
    icml = by["a baseline for any order gradient estimation in stochastic computation graphs"]
    assert icml.authors[2] == "Tim Rocktäschel"  # Rockt{\"a}schel decoded
    assert icml.abstract.startswith("By enabling correct differentiation in Stochastic Computation Graphs")
    colm = by["instructav: instruction fine-tuning large language models for authorship verification"]
    assert [x.kind for x in colm.links] == ["openreview"]
    assert colm.venue.lower() == "first conference on language modeling"


def test_bibtex_keeps_braced_acronyms_and_math():
    text = ("@inproceedings{k,\n  title={{BERT} meets $\\widetilde{O}(\\sqrt{T})$ regret},\n"
            "  author={Devlin, Jacob and M{\\\"u}ller, Anna},\n  year={2021}, booktitle={ICLR 2021},\n"
            "  eprint={2106.09685}, archiveprefix={arXiv}\n}\n")
    p = sources.READERS["bibtex"].read_text(text, "x.bib")[0]
    assert p.title == "BERT meets $\\widetilde{O}(\\sqrt{T})$ regret"
    assert p.authors == ["Jacob Devlin", "Anna Müller"] and (p.venue, p.year) == ("ICLR 2021", 2021)
    assert p.extra["arxiv_id"] == "2106.09685" and p.links[0].url == "https://arxiv.org/abs/2106.09685"


def test_ris_journal_conference_and_arxiv_entries():
    papers = sources.read(RIS)
    assert [p.sources[0].line for p in papers] == [1, 14, 28, 40, 54, 64, 73]
    pinn, _, node, lander, book, preprint, revin = papers
    assert pinn.authors == ["Maziar Raissi", "Paris Perdikaris", "George E. Karniadakis"]
    assert (pinn.venue, pinn.year, pinn.extra["doi"]) == ("Journal of Computational Physics", 2019,
                                                          "10.1016/j.jcp.2018.10.045")
    assert node.venue == "Advances in Neural Information Processing Systems (NeurIPS 2018)" and node.year == 2018
    assert lander.links[0].url == "https://doi.org/10.1109/ICRA.2019.8794350"
    assert book.title == "水下航行器控制技术" and book.authors == ["严卫生", "高剑", "崔荣鑫"]
    assert (preprint.venue, preprint.extra["arxiv_id"]) == ("arXiv", "2510.24571")
    assert revin.extra["arxiv_id"] == "2110.02454" and revin.links[0].kind == "openreview"


def test_csv_with_aliased_columns_tab_separated_and_semicolon_authors(tmp_path):
    path = tmp_path / "accepted.tsv"
    path.write_text("Paper Title\tAuthor(s)\tDecision\tPDF\tCode\tRating\n"
                    "Sharpness-Aware Minimization\tPierre Foret; Ariel Kleiner\tAccept (Spotlight)\t"
                    "https://openreview.net/pdf?id=6Tm1mposlrM\thttps://github.com/google-research/sam\t7.5\n")
    (p,) = sources.read(path)
    assert (p.title, p.authors, p.status) == ("Sharpness-Aware Minimization", ["Pierre Foret", "Ariel Kleiner"],
                                              "Spotlight")
    assert [x.kind for x in p.links] == ["openreview", "code"] and p.extra["rating_mean"] == 7.5


@pytest.mark.parametrize(("fmt", "text", "line", "problem"), [
    ("bibtex", "@article{a, title={Good}, year={2020}}\n\n@article{b,\n  year={2021}\n}\n"
               "@misc{c, title={Also good}}\n", 3, "entry 'b' has no title"),
    ("ris", "TY  - JOUR\nTI  - Good\nER  - \n\nTY  - JOUR\nAU  - Nobody, A.\nER  - \n\nTY  - JOUR\nTI  - Also good\n"
            "ER  - \n", 5, "without a title"),
    ("csv", "Title,Authors\nGood,A B\n,C D\nAlso good,E F\n", 3, "row without a title"),
    ("csl-json", '[{"title": "Good", "type": "article"}, {"type": "article"}, {"title": "Also good"}]', "record 1",
     "item without a title"),
])
def test_a_bad_record_is_skipped_with_its_line_or_fatal_with_strict(tmp_path, fmt, text, line, problem):
    path = tmp_path / "refs.txt"
    path.write_text(text)
    with pytest.warns(RecordSkipped) as caught:
        papers = sources.read(path, format=fmt)
    assert [p.title for p in papers] == ["Good", "Also good"]
    assert len(caught) == 1 and str(caught[0].message).startswith(f"{path}:{line}: ")
    assert problem in str(caught[0].message)
    with pytest.raises(SourceError, match=problem) as err:
        sources.read(path, format=fmt, strict=True)
    assert err.value.where == line
