"""The DBLP reader on recorded DBLP responses: a person page (XML) and publication searches (JSON, and XML).

Origins in tests/fixtures/sources/dblp/ORIGIN.md: ``person_95-7448-1.xml`` is ``https://dblp.org/pid/95/7448-1.xml``
as OpenReview's web tests recorded it; ``search.json`` and ``search_single_author.json`` are search API responses
recorded verbatim by another project's tests; ``search.xml`` is ``search.json`` written back in the search API's XML
shape (the machines cannot reach dblp.org to record the XML itself; how it was derived is in ORIGIN.md).
"""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES
from paperatlas import sources
from paperatlas.model import SourceError
from paperatlas.sources import RecordSkipped, detect_format

DBLP = FIXTURES / "sources" / "dblp"
PERSON = DBLP / "person_95-7448-1.xml"
SEARCH_JSON = DBLP / "search.json"
SEARCH_XML = DBLP / "search.xml"
SINGLE = DBLP / "search_single_author.json"
LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<dblpperson name="x"><r><article key="a"><title>&lol3;</title></article></r></dblpperson>
"""


@pytest.mark.parametrize("path", [PERSON, SEARCH_JSON, SEARCH_XML, SINGLE])
def test_dblp_exports_are_detected_from_their_content(path):
    assert detect_format(path) == "dblp"


def test_person_page_fields():
    papers = sources.read(PERSON)
    assert len(papers) == 8  # the <person> home-page record and the co-author list are not papers
    first = papers[0]
    assert first.title == "Automatic stereoscopic 3D video reframing"  # DBLP's trailing period dropped
    assert first.authors == ["Lino Coria-Mendoza", "Di Xu", "Panos Nasiopoulos"]  # homonym number 0001 dropped
    assert (first.venue, first.year) == ("3DTV-Conference 2012", 2012)
    assert first.extra == {"doi": "10.1109/3DTV.2012.6365428", "dblp_key": "conf/3dtv/Coria-MendozaXN12"}
    assert [x.url for x in first.links] == ["https://doi.org/10.1109/3DTV.2012.6365428",
                                            "https://dblp.org/rec/conf/3dtv/Coria-MendozaXN12"]
    assert first.abstract == "" and first.sources[0].line == 13
    journal = next(p for p in papers if p.extra["dblp_key"] == "journals/tvcg/XuDN11")
    assert journal.venue == "IEEE Trans. Vis. Comput. Graph. 2011"
    assert "https://www.wikidata.org/entity/Q51701964" not in {x.url for x in journal.links}
    assert [p.year for p in papers] == [2012, 2012, 2012, 2011, 2010, 2010, 2010, 2009]


def test_search_json_fields():
    dac, corr, access = sources.read(SEARCH_JSON)
    assert dac.authors == ["Xiaopeng Zhang", "Haoyu Yang", "Evangeline F. Y. Young"]
    assert (dac.venue, dac.year, dac.extra["doi"]) == ("DAC 2021", 2021, "10.1109/DAC18074.2021.9586227")
    assert corr.title == ("Attention Is All You Need But You Don't Need All Of It For Inference of Large "
                          "Language Models")  # &apos; in DBLP's JSON decoded
    assert corr.authors[1] == "Gbètondji J.-S. Dovonon" and corr.extra["arxiv_id"] == "2407.15516"
    assert access.venue == "IEEE Access 2025"
    assert [p.sources[0].record for p in (dac, corr, access)] == [0, 1, 2]


def test_single_author_object_and_search_xml_give_the_same_papers_as_json():
    (letter, chapter) = sources.read(SINGLE)
    assert letter.authors == ["Edsger W. Dijkstra"] and letter.venue == "Commun. ACM 1968"
    assert chapter.title == "Go To Statement Considered Harmful"

    def fields(p):
        return (p.title, p.authors, p.venue, p.year, [x.url for x in p.links], p.extra)

    assert [fields(p) for p in sources.read(SEARCH_XML)] == [fields(p) for p in sources.read(SEARCH_JSON)]


def test_editorships_are_not_papers(tmp_path):
    data = json.loads(SEARCH_JSON.read_text())
    data["result"]["hits"]["hit"][0]["info"]["type"] = "Editorship"
    path = tmp_path / "search.json"
    path.write_text(json.dumps(data))
    assert [p.year for p in sources.read(path)] == [2024, 2025]


def test_xml_record_without_title_is_skipped_with_its_line_or_fatal_with_strict(tmp_path):
    text = PERSON.read_text().replace("<title>Quality of experience for the horizontal pixel parallax adjustment "
                                      "of stereoscopic 3D videos.</title>\n", "")
    path = tmp_path / "person.xml"
    path.write_text(text)
    with pytest.warns(RecordSkipped, match=rf"^{path}:26: DBLP record 'conf/iccel/XuCN12' has no title") as caught:
        papers = sources.read(path)
    assert len(caught) == 1 and len(papers) == 7
    with pytest.raises(SourceError) as err:
        sources.read(path, strict=True)
    assert err.value.where == 26


def test_json_hit_of_the_wrong_shape_is_skipped_as_record_n(tmp_path):
    data = json.loads(SEARCH_JSON.read_text())
    data["result"]["hits"]["hit"][1]["info"]["title"] = {"nested": ["not", "text"]}
    data["result"]["hits"]["hit"][2] = "not a hit"
    path = tmp_path / "search.json"
    path.write_text(json.dumps(data))
    with pytest.warns(RecordSkipped) as caught:
        papers = sources.read(path)
    assert [p.year for p in papers] == [2021]
    assert [str(w.message) for w in caught] == [f"{path}:record 1: field 'title' is not text",
                                                f"{path}:record 2: search hit without an 'info' object"]


def test_billion_laughs_is_a_source_error_not_an_expansion(tmp_path):
    path = tmp_path / "person.xml"
    path.write_text(LAUGHS)
    with pytest.raises(SourceError, match=r"person\.xml: XML entity declarations are not allowed"):
        sources.read(path, format="dblp")


@pytest.mark.parametrize(("text", "problem"), [
    ("<dblpperson><r><article key='a'><title>T</title></r></dblpperson>", r"x\.xml:1: not well-formed XML"),
    ("<html><body>dblp.org is down</body></html>", r"x\.xml: not a DBLP export: the root element is <html>"),
    ('{"result": {"status": "error"}}', r"x\.xml: not a DBLP search API response"),
    ('{"result": ', r"x\.xml:1: invalid JSON"),
])
def test_whole_file_problems_name_the_file(tmp_path, text, problem):
    path = tmp_path / "x.xml"
    path.write_text(text)
    with pytest.raises(SourceError, match=problem):
        sources.read(path, format="dblp")


def test_build_from_a_person_page_and_a_search_without_abstracts(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from paperatlas.cli import main
    from test_build_safety import HashEmbedder

    monkeypatch.setattr("paperatlas.engines.local.get_embedder", lambda **_: HashEmbedder())
    db = tmp_path / "dblp.db"
    res = CliRunner().invoke(main, ["build", str(PERSON), str(SEARCH_JSON), "--db", str(db), "--replace"])
    assert res.exit_code == 0, res.output
    assert "11 papers" in res.output  # 8 + 3: DBLP has no abstracts, the titles are embedded
