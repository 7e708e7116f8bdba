"""The BibTeX reader on a real Zotero export (``fixtures/sources/bibtex/zotero_export.bib``, origin in ORIGIN.md).

Zotero's own BibTeX: tab-indented fields, every capitalised word braced (``{Attention}``), ``urldate``/``file``/
``annote`` fields, arXiv preprints as ``journal = {arXiv:1510.03820 [cs]}`` with ``note = {arXiv: 1510.03820}``, a
backslash in an abstract escaped as ``{\\textbackslash}url\\{...\\}``, ``month = sep`` macros, UTF-8 names.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from paperatlas import sources
from paperatlas.model import SourceError
from paperatlas.sources import RecordSkipped, detect_format
from paperatlas.sources.bibtex import venue_label

ZOTERO = FIXTURES / "sources" / "bibtex" / "zotero_export.bib"
TEXT = ZOTERO.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def papers():
    return {p.sources[0].native_id: p for p in sources.read(ZOTERO)}


def test_zotero_export_is_detected_and_every_entry_read_with_its_line(papers):
    assert detect_format(ZOTERO) == "bibtex"
    assert [(k, p.sources[0].line) for k, p in papers.items()] == [
        ("pavlopoulos_deeper_2017", 2), ("dadvar_improving_2013", 18), ("jhaver_human-machine_2019", 32),
        ("zhang_sensitivity_2016", 46), ("mahajan_explainable_2020", 60), ("wolf_huggingfaces_2020", 68),
        ("liu_roberta_2019", 84)]


def test_conference_paper_fields(papers):
    p = papers["pavlopoulos_deeper_2017"]
    assert p.title == "Deeper Attention to Abusive User Content Moderation"  # Zotero's {Braced} words unbraced
    assert p.authors == ["John Pavlopoulos", "Prodromos Malakasiotis", "Ion Androutsopoulos"]
    assert (p.year, p.venue) == (2017, "EMNLP 2017")  # the conference named in full: its acronym (issue 30)
    assert p.abstract.startswith("Experimenting with a new dataset of 1.6M user comments")
    assert p.extra == {"doi": "10.18653/v1/D17-1117"}
    assert [(x.url, x.kind) for x in p.links] == [("https://www.aclweb.org/anthology/D17-1117", "paper")]


def test_particles_utf8_and_editors_are_not_authors(papers):
    p = papers["dadvar_improving_2013"]
    assert p.authors == ["Maral Dadvar", "Dolf Trieschnigg", "Roeland Ordelman", "Franciska de Jong"]
    assert p.venue == "Advances in Information Retrieval" and p.links == []
    assert "Rémi Louf" in papers["wolf_huggingfaces_2020"].authors


def test_arxiv_preprints_get_venue_arxiv_the_id_and_their_link(papers):
    for key, ax in [("zhang_sensitivity_2016", "1510.03820"), ("wolf_huggingfaces_2020", "1910.03771"),
                    ("liu_roberta_2019", "1907.11692")]:
        p = papers[key]
        assert p.venue == "arXiv" and p.extra["arxiv_id"] == ax, key
        assert [x.url for x in p.links] == [f"http://arxiv.org/abs/{ax}"]
    assert papers["zhang_sensitivity_2016"].given_keyphrases == [
        "Computer Science - Computation and Language", "Computer Science - Machine Learning",
        "Computer Science - Neural and Evolutionary Computing"]


def test_arxiv_id_from_note_alone_makes_the_link():
    entry = TEXT[TEXT.index("@article{zhang_sensitivity_2016"):TEXT.index("@techreport")]
    entry = entry.replace("\turl = {http://arxiv.org/abs/1510.03820},\n", "")
    (p,) = sources.READERS["bibtex"].read_text(entry, "refs.bib")
    assert p.extra["arxiv_id"] == "1510.03820" and p.links[0].url == "https://arxiv.org/abs/1510.03820"


def test_zotero_escaped_backslash_in_an_abstract_reads_as_the_url(papers):
    abstract = papers["wolf_huggingfaces_2020"].abstract
    assert abstract.endswith("Transformers library is available at https://github.com/huggingface/transformers.")
    assert "textbackslash" not in abstract and "\\" not in abstract


def test_doi_of_a_doi_org_url_and_keywords(papers):
    p = papers["jhaver_human-machine_2019"]
    assert p.extra["doi"] == "10.1145/3338243"
    assert p.venue == ""  # Zotero's publisher (the ACM) is not where it appeared
    assert p.given_keyphrases == ["automated moderation", "Automod", "Content moderation", "future of work",
                                  "mixed initiative", "platform governance"]


def test_tech_report_venue_is_its_institution(papers):
    p = papers["mahajan_explainable_2020"]
    assert (p.venue, p.year, p.abstract, p.links) == ("EasyChair", 2020, "", [])


@pytest.mark.parametrize(("venue", "year", "label"), [
    # DBLP's booktitle, IEEE's, Zotero's CSL event, OpenReview's: acronym + year
    ("9th International Conference on Learning Representations, {ICLR} 2021, Virtual Event, Austria, May 3-7, 2021",
     "2021", "ICLR 2021"),
    ("Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)", "2022", "CVPR 2022"),
    ("31st AAAI Conference on Artificial Intelligence, AAAI 2017", None, "AAAI 2017"),
    ("NIPS", 2017, "NeurIPS 2017"),
    ("Proceedings of the 2019 Conference of the North American Chapter of the Association for Computational "
     "Linguistics: Human Language Technologies, NAACL-HLT 2019", "2019", "NAACL 2019"),
    # not a main conference, no acronym, no year: as written
    ("ICLR 2021 Workshop on Geometrical and Topological Representation Learning", "2021",
     "ICLR 2021 Workshop on Geometrical and Topological Representation Learning"),
    ("Findings of the Association for Computational Linguistics: ACL 2022", "2022",
     "Findings of the Association for Computational Linguistics: ACL 2022"),
    ("Transactions of the Association for Computational Linguistics (TACL)", "2020",
     "Transactions of the Association for Computational Linguistics (TACL)"),
    ("Advances in Neural Information Processing Systems", "2020", "NeurIPS 2020"),  # named in full (issue 30)
    ("ICLR", None, "ICLR"),
    # preprints
    ("arXiv:1510.03820 [cs]", "2016", "arXiv"), ("arXiv preprint arXiv:1706.03762", "2017", "arXiv"),
    ("ArXiv", "2020", "arXiv"), ("  ICLR   2021 ", None, "ICLR 2021"),
])
def test_venue_label(venue, year, label):
    assert venue_label(venue, year) == label


def test_acronym_booktitle_becomes_venue_and_year(tmp_path):
    entry = TEXT[TEXT.index("@inproceedings{pavlopoulos"):TEXT.index("@inproceedings{dadvar")]
    entry = entry.replace("Proceedings of the 2017 {Conference} on {Empirical} {Methods} in {Natural} {Language} "
                          "{Processing}", "Proceedings of the 2017 Conference on Empirical Methods in Natural "
                                          "Language Processing, {EMNLP} 2017, Copenhagen, Denmark")
    path = tmp_path / "refs.bib"
    path.write_text(entry)
    (p,) = sources.read(path)
    assert p.venue == "EMNLP 2017"


@pytest.mark.parametrize(("broken", "line", "problem"), [
    (("@misc{jhaver_human-machine_2019,", "@misc{jhaver_human-machine_2019"), 32, "Expected comma after entry key"),
    (("{User} {Context}},", "{User} {Context},"), 18, "Was still looking for field-value closing"),
    (("\ttitle = {Explainable {AI} approach towards {Toxic} {Comment} {Classification}},\n", ""), 60,
     "entry 'mahajan_explainable_2020' has no title"),
])
def test_a_malformed_entry_is_skipped_with_its_line_or_fatal_with_strict(tmp_path, broken, line, problem):
    path = tmp_path / "library.bib"
    path.write_text(TEXT.replace(*broken), encoding="utf-8")
    with pytest.warns(RecordSkipped) as caught:
        papers = sources.read(path)
    assert len(papers) == 6  # the six other entries are read
    assert len(caught) == 1 and str(caught[0].message).startswith(f"{path}:{line}: ")
    assert problem in str(caught[0].message)
    with pytest.raises(SourceError, match=problem) as err:
        sources.read(path, strict=True)
    assert err.value.where == line


def test_literal_braces_survive_and_protective_ones_go():
    text = ("@misc{k,\n  title = {{BERT} tags spans with \\{\\{ \\}\\} and \\textbraceleft{}x, $\\{0,1\\}^n$},\n"
            "  note = {Status: Oral},\n}\n")
    (p,) = sources.READERS["bibtex"].read_text(text, "refs.bib")
    assert p.title == "BERT tags spans with {{ }} and {x, $\\{0,1\\}^n$"
    assert p.status == "Oral"


def test_author_forms_and_latex_letters_of_real_pmlr_names():
    # author fields as PMLR's BibTeX in the shared paperlists writes them (AISTATS/ICML/UAI entries)
    text = ("@InProceedings{pmlr-x,\n  title = {T},\n  author = {Moreno-Mu\\~{n}oz, Pablo and \\'{A}lvarez, "
            "Mauricio A. and Cox, Jr, Louis Anthony and Rai, Piyush and Daum\\'e, III, Hal and \\L\\k{a}cki, Jakub "
            "and Plh\\'ak, Jarom{\\'\\i}r and Tomaszewska, Paulina and \\.Zychowski, Adam},\n  year = {2019}\n}\n")
    (p,) = sources.READERS["bibtex"].read_text(text, "refs.bib")
    assert p.authors == ["Pablo Moreno-Muñoz", "Mauricio A. Álvarez", "Louis Anthony Cox Jr", "Piyush Rai",
                         "Hal Daumé III", "Jakub Łącki", "Jaromír Plhák", "Paulina Tomaszewska", "Adam Żychowski"]


def test_a_code_field_is_a_code_link():
    entry = TEXT[TEXT.index("@article{liu_roberta_2019"):]
    entry = entry.replace("\turl = {http://arxiv.org/abs/1907.11692},\n",
                          "\turl = {http://arxiv.org/abs/1907.11692},\n\tcode = {https://github.com/pytorch/fairseq},\n")
    (p,) = sources.READERS["bibtex"].read_text(entry, "refs.bib")
    assert [(x.url, x.kind) for x in p.links] == [("http://arxiv.org/abs/1907.11692", "paper"),
                                                  ("https://github.com/pytorch/fairseq", "code")]
