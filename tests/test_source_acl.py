"""The ACL Anthology reader: Anthology XML files, and ``acl:`` through the real ``acl-anthology`` package.

The fixtures (origins in tests/fixtures/sources/acl/ORIGIN.md) are real Anthology XML cut to a few papers:
``2022.acl.xml`` (ACL 2022 long and short papers, the ``acl-2022`` event) and ``2022.findings.xml`` (its Findings
volume), as the acl-org/acl-anthology repository held them before the 2025 schema change, plus the two venues of
``json/venues.json``. ``acl:`` needs a data directory; the machines cannot reach GitHub, so :func:`datadir` makes a
tiny one from these files. ``acl-anthology`` 1.3.4 reads only its own (current) schema, so the files are first
rewritten the way the Anthology migrated its data -- ``<url hash=H>ID</url>`` -> ``<pdf hash=H/>``,
``<award>X</award>`` -> ``<award name="X"/>``, Papers-with-Code elements dropped -- and the package's own
``schema.rnc`` is put beside them (:func:`current_schema`).
"""

from __future__ import annotations

import pkgutil
import re
import shutil
import sys

import pytest

from conftest import FIXTURES
from paperatlas import sources
from paperatlas.model import SourceError
from paperatlas.sources import RecordSkipped, SourceWarning, acl_anthology, detect_format

ACL = FIXTURES / "sources" / "acl"
MAIN = ACL / "2022.acl.xml"
FINDINGS = ACL / "2022.findings.xml"


def current_schema(xml: str) -> str:
    """An Anthology XML file of the old schema rewritten in the acl-anthology 1.3 schema (see module docstring)."""
    xml = re.sub(r'<url hash="([0-9a-f]{8})">[^<]*</url>', r'<pdf hash="\1"/>', xml)
    xml = re.sub(r"\s*<pwc(code|dataset)\b[^>]*>.*?</pwc\1>", "", xml)
    return re.sub(r"<award>([^<]*)</award>", r'<award name="\1"/>', xml)


@pytest.fixture
def datadir(tmp_path):
    """A two-collection Anthology data directory (xml/, json/) the acl-anthology package can load."""
    root = tmp_path / "anthology" / "data"
    (root / "xml").mkdir(parents=True)
    for f in (MAIN, FINDINGS):
        (root / "xml" / f.name).write_text(current_schema(f.read_text()))
    (root / "xml" / "schema.rnc").write_bytes(pkgutil.get_data("acl_anthology", "data/schema.rnc"))
    shutil.copytree(ACL / "json", root / "json")
    return root


def fields(p):
    return (p.title, p.authors, p.abstract, p.venue, p.year, p.track, p.extra.get("doi"), p.extra.get("acl_id"))


# ------------------------------------------------------------------------------------------------- files
@pytest.mark.parametrize("path", [MAIN, FINDINGS])
def test_anthology_xml_is_detected_from_its_content(path):
    assert detect_format(path) == "acl-anthology"


def test_fields_of_real_acl_2022_papers():
    papers = sources.read(MAIN)
    assert [p.extra["acl_id"] for p in papers] == ["2022.acl-long.1", "2022.acl-long.2", "2022.acl-long.7",
                                                   "2022.acl-long.600", "2022.acl-short.1", "2022.acl-short.2"]
    adapler = papers[0]
    assert adapler.title == "AdapLeR: Speeding up Inference by Adaptive Length Reduction"  # <fixed-case> flattened
    assert adapler.authors == ["Ali Modarressi", "Hosein Mohebbi", "Mohammad Taher Pilehvar"]
    assert (adapler.venue, adapler.year, adapler.track) == ("ACL 2022", 2022, "long")
    assert adapler.abstract.endswith("Our code is freely available at https://github.com/amodaresi/AdapLeR.")
    assert adapler.extra["doi"] == "10.18653/v1/2022.acl-long.1"
    assert [(x.url, x.kind) for x in adapler.links] == [
        ("https://aclanthology.org/2022.acl-long.1/", "paper"),
        ("https://aclanthology.org/2022.acl-long.1.pdf", "paper"),
        ("https://github.com/amodaresi/adapler", "code")]  # <pwccode>; the abstract's link is the same repository
    active = papers[3]
    assert active.extra["awards"] == ["Outstanding Paper"]
    assert "Given $k$ systems" in active.abstract and "${k \\choose 2}$ pairs" in active.abstract
    assert [p.track for p in papers[4:]] == ["short", "short"]
    assert [p.sources[0].line for p in papers] == [20, 43, 55, 72, 107, 128]


def test_findings_volume_is_acl_with_track_findings():
    wwm, dpl = sources.read(FINDINGS)
    assert wwm.title == ("“Is Whole Word Masking Always Better for Chinese BERT?”: Probing on Chinese Grammatical "
                         "Error Correction")
    assert (wwm.venue, wwm.track, wwm.year) == ("ACL 2022", "findings", 2022)
    assert [x.kind for x in wwm.links] == ["paper", "paper"] and dpl.code_url == "https://github.com/yiming-zh/DPL"


def test_the_current_schema_reads_like_the_old_one(tmp_path):
    path = tmp_path / "2022.acl.xml"
    path.write_text(current_schema(MAIN.read_text()))
    new, old = sources.read(path), sources.read(MAIN)
    assert [fields(p) for p in new] == [fields(p) for p in old]
    assert [x.url for x in new[1].links] == ["https://aclanthology.org/2022.acl-long.2/",
                                             "https://aclanthology.org/2022.acl-long.2.pdf"]
    # no <pwccode> any more: the code link of AdapLeR now comes from its abstract
    assert new[0].code_url == "https://github.com/amodaresi/AdapLeR" and new[3].extra["awards"] == ["Outstanding Paper"]


def test_paper_without_title_is_skipped_with_its_line_or_fatal_with_strict(tmp_path):
    text = MAIN.read_text().replace(
        "<title>Quantified Reproducibility Assessment of <fixed-case>NLP</fixed-case> Results</title>", "")
    path = tmp_path / "2022.acl.xml"
    path.write_text(text)
    with pytest.warns(RecordSkipped, match=rf"^{path}:43: paper 2022.acl-long.2 has no <title>") as caught:
        papers = sources.read(path)
    assert len(caught) == 1 and len(papers) == 5
    with pytest.raises(SourceError) as err:
        sources.read(path, strict=True)
    assert err.value.where == 43


def test_billion_laughs_is_a_source_error(tmp_path):
    path = tmp_path / "2022.acl.xml"
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE c [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">'
                    '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]>\n<collection id="2022.acl"><volume id="long">'
                    "<paper id=\"1\"><title>&c;</title></paper></volume></collection>\n")
    with pytest.raises(SourceError, match=r"2022\.acl\.xml: XML entity declarations are not allowed"):
        sources.read(path)


def test_a_root_other_than_collection_is_a_source_error(tmp_path):
    path = tmp_path / "volume.xml"
    path.write_text('<volume id="long"><paper id="1"><title>T</title></paper></volume>')
    with pytest.raises(SourceError, match=r"volume\.xml: not an ACL Anthology collection: the root element is <volume"):
        sources.read(path, format="acl-anthology")


def test_old_style_anthology_ids_are_padded_as_the_anthology_does():
    assert acl_anthology.anthology_id("P18", "1", "42") == "P18-1042"
    assert acl_anthology.anthology_id("W18", "64", "1") == "W18-6401"
    assert acl_anthology.anthology_id("2022.acl", "long", "42") == "2022.acl-long.42"


# ------------------------------------------------------------------------------- acl: through the package
def test_acl_volume_through_the_package_matches_the_file(datadir, monkeypatch):
    monkeypatch.setenv("PAPERATLAS_ACL_DATA", str(datadir))
    papers = sources.read("acl:2022.acl-long")
    assert [fields(p) for p in papers] == [fields(p) for p in sources.read(MAIN)[:4]]
    assert papers[0].sources[0].path == "acl:2022.acl-long" and papers[0].sources[0].record == 0
    assert papers[3].extra["awards"] == ["Outstanding Paper"]
    assert papers[0].code_url == "https://github.com/amodaresi/AdapLeR"


def test_acl_event_reads_its_volumes_and_findings_and_names_missing_ones(datadir):
    with pytest.warns(SourceWarning, match=r"acl:acl-2022: co-located volumes not in the data directory, left out: "
                                           r"2022\.bigscience-1, 2022\.bionlp-1$"):
        papers = sources.read("acl:acl-2022", acl_data=str(datadir))
    assert [(p.track, p.extra["acl_id"]) for p in papers][-3:] == [
        ("short", "2022.acl-short.2"), ("findings", "2022.findings-acl.1"), ("findings", "2022.findings-acl.3")]
    assert len(papers) == 8 and {p.venue for p in papers} == {"ACL 2022"}


def test_acl_paper_and_collection_ids(datadir):
    (p,) = sources.read("acl:2022.acl-short.2", acl_data=str(datadir))
    assert p.title == "Are Shortest Rationales the Best Explanations for Human Understanding?"
    assert len(sources.read("acl:2022.acl", acl_data=str(datadir))) == 6


def test_acl_rebuild_reads_the_cache_and_refresh_reads_the_data_again(datadir):
    first = sources.read("acl:2022.findings-acl", acl_data=str(datadir))
    shutil.rmtree(datadir / "xml")
    again = sources.read("acl:2022.findings-acl", acl_data=str(datadir))  # from the cache: the data is gone
    assert [fields(p) for p in again] == [fields(p) for p in first] and len(first) == 2
    with pytest.raises(SourceError, match=r"acl:2022\.findings-acl: .* is not an ACL Anthology data directory"):
        sources.read("acl:2022.findings-acl", acl_data=str(datadir), refresh=True)


def test_unknown_acl_id_names_the_source(datadir):
    with pytest.raises(SourceError, match=r"^acl:2031\.xyz-long: no ACL Anthology volume, paper or event"):
        sources.read("acl:2031.xyz-long", acl_data=str(datadir))


def test_acl_without_data_offline_names_the_source_and_the_cache(monkeypatch):
    monkeypatch.delenv("PAPERATLAS_ACL_DATA", raising=False)
    with pytest.raises(SourceError, match=r"^acl:2023\.acl-long: cannot reach the ACL Anthology data "
                                          r"\(github\.com/acl-org/acl-anthology\): offline .*nothing is cached"):
        sources.read("acl:2023.acl-long")


def test_acl_clone_failure_names_the_source_and_the_cache(monkeypatch):
    import acl_anthology
    from git.exc import GitCommandError

    def unreachable(cls, *args, **kwargs):
        raise GitCommandError(["git", "clone"], 128, "fatal: unable to access 'https://github.com/': Could not "
                                                     "resolve host: github.com")

    monkeypatch.delenv("PAPERATLAS_OFFLINE")
    monkeypatch.delenv("PAPERATLAS_ACL_DATA", raising=False)
    monkeypatch.setattr(acl_anthology.Anthology, "from_repo", classmethod(unreachable))
    with pytest.raises(SourceError, match=r"(?s)^acl:acl-2023: cannot reach the ACL Anthology data .*Could not resolve "
                                          r"host.*nothing is cached for it yet \("):
        sources.read("acl:acl-2023")


def test_missing_package_names_the_pip_extra(monkeypatch, datadir):
    monkeypatch.setitem(sys.modules, "acl_anthology", None)
    with pytest.raises(SourceError, match=r"pip install 'paperatlas\[acl\]'"):
        sources.read("acl:2022.acl-long", acl_data=str(datadir))


def test_build_acl_event_on_the_command_line(datadir, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from paperatlas.cli import main
    from test_build_safety import HashEmbedder

    monkeypatch.setattr("paperatlas.engines.local.get_embedder", lambda **_: HashEmbedder())
    monkeypatch.setenv("PAPERATLAS_ACL_DATA", str(datadir))
    db = tmp_path / "acl.db"
    res = CliRunner().invoke(main, ["build", "acl:acl-2022", "--db", str(db), "--replace"])
    assert res.exit_code == 0, res.output
    assert "8 papers" in res.output


def test_checkout_root_is_accepted_and_a_partial_data_dir_is_a_source_error(datadir):
    checkout = datadir.parent  # the folder holding data/, as a git clone of acl-org/acl-anthology is
    assert len(sources.read("acl:2022.acl-short", acl_data=str(checkout))) == 2
    (datadir / "xml" / "schema.rnc").unlink()
    with pytest.raises(SourceError, match=r"^acl:2022\.acl-long: cannot open the ACL Anthology data in .*schema\.rnc"):
        sources.read("acl:2022.acl-long", acl_data=str(datadir))
