"""Reader fuzzing: whatever a listing file holds, only a SourceError naming the file escapes ``sources.read``.

Hypothesis drives every reader of :data:`paperatlas.sources.READERS` with random text and with mutations of a
real listing of its format (truncation, deleted/duplicated/replaced lines, random bytes, huge strings; for JSON
also fields and records of the wrong JSON type). Derandomized, so a run is reproducible and CI-sized; run with
``--hypothesis-show-statistics`` to see the examples per reader. Also here: the byte-order-mark and CR line-end
variants of the real fixtures, and the input bounds (huge abstracts, deep JSON nesting, a 10 MB line of junk).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from paperatlas import sources
from paperatlas.model import Paper, SourceError
from paperatlas.sources import MAX_ABSTRACT_CHARS, MAX_TITLE_CHARS, READERS, SourceWarning

#: reader -> (real fixture of its format, the file name the fuzzed copy gets)
REAL = {
    "paperlists-json": (FIXTURES / "aaai2022_head.json", "aaai2022.json"),
    "awesome-md": (FIXTURES / "awesome_head.txt", "awesome_deep_phenomena.txt"),
    "paperlists-md": (FIXTURES / "iclr2021_excerpt.md", "iclr2021.md"),
    "csl-json": (FIXTURES / "sources" / "csl_json" / "zotero_export.json", "library.json"),
    "openreview": (FIXTURES / "sources" / "openreview" / "notes_v2.json", "notes.json"),
    "dblp": (FIXTURES / "sources" / "dblp" / "search.xml", "dblp.xml"),
    "bibtex": (FIXTURES / "sources" / "bibtex" / "zotero_export.bib", "library.bib"),
    "ris": (FIXTURES / "sources" / "ris" / "zotero_export.ris", "library.ris"),
    "acl-anthology": (FIXTURES / "sources" / "acl" / "2022.acl.xml", "2022.acl.xml"),
    "arxiv": (FIXTURES / "sources" / "arxiv" / "query.atom", "query.atom"),
    "csv": (FIXTURES / "sources" / "csv" / "papers.csv", "papers.csv"),
    "virtual-site": (FIXTURES / "schedule" / "neurips2025_orals_posters.json", "neurips-2025-orals-posters.json"),
}
FUZZ = settings(derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
JSON_FIELDS = ["title", "author", "aff", "status", "track", "abstract", "keywords", "site", "pdf", "openreview",
               "arxiv", "project", "github", "id", "gs_citation", "primary_area", "doi"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)
huge = st.sampled_from(["x" * 30_000, "word " * 6_000, "\u2022" * 25_000, "[" * 5_000, "é" * 21_000])


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def check(path, data: bytes, fmt: str | None) -> None:
    """Read ``data`` as ``path`` with reader ``fmt`` (None: detect): papers, or a SourceError naming the file."""
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SourceWarning)
        try:
            papers = sources.read(path, format=fmt)
        except SourceError as e:
            assert e.path == str(path) and str(e).startswith(str(path)), str(e)
            return
    for p in papers:
        assert isinstance(p, Paper) and p.title.strip()
        assert len(p.title) <= MAX_TITLE_CHARS and len(p.abstract) <= MAX_ABSTRACT_CHARS
        assert len(p.digest) <= MAX_ABSTRACT_CHARS


@st.composite
def mutations(draw, text: str) -> bytes:
    """A real listing with 1-4 random edits: truncation, line deletion/duplication/replacement, bytes, huge text."""
    lines = text.encode().split(b"\n")
    for op in draw(st.lists(st.sampled_from(["truncate", "delete", "duplicate", "replace", "bytes", "huge"]),
                            min_size=1, max_size=4)):
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        if not lines:
            lines = [b""]
        if op == "truncate":
            joined = b"\n".join(lines)
            lines = joined[: draw(st.integers(0, len(joined)))].split(b"\n")
        elif op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(draw(st.integers(0, len(lines))), lines[i])
        elif op == "replace":
            lines[i] = draw(st.text(max_size=80)).encode()
        else:
            k = draw(st.integers(0, len(lines[i])))
            extra = draw(st.binary(min_size=1, max_size=8)) if op == "bytes" else draw(huge).encode()
            lines[i] = lines[i][:k] + extra + lines[i][k:]
    return b"\n".join(lines)


@st.composite
def json_mutations(draw) -> bytes:
    """The real JSON listing with records or fields set to the wrong JSON type, or huge strings."""
    recs = json.loads(REAL["paperlists-json"][0].read_text())
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(recs) - 1))
        what = draw(st.sampled_from(["field", "field", "record", "huge", "drop", "bignum"]))
        if what == "record":
            recs[i] = draw(json_values)
        elif isinstance(recs[i], dict):
            key = draw(st.sampled_from(JSON_FIELDS) | st.text(max_size=8))
            if what == "drop":
                recs[i].pop(key, None)
            elif what == "bignum":
                recs[i][key] = "<BIGNUM>"  # a number literal of 5,000 digits, above Python's int parsing limit
            else:
                recs[i][key] = draw(huge) if what == "huge" else draw(json_values)
    if draw(st.integers(0, 19)) == 0:
        return json.dumps(draw(json_values)).encode()  # not an array at all
    return json.dumps(recs, allow_nan=True).replace('"<BIGNUM>"', "9" * 5000).encode()


def test_every_reader_has_a_real_fixture_to_fuzz():
    assert set(REAL) == set(READERS)


@pytest.mark.parametrize("fmt", sorted(READERS))
@settings(FUZZ, max_examples=400)
@given(text=st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("\n\r#-[]{}\":,•@() \t"), max_size=400))
def test_random_text_gives_papers_or_a_source_error(workdir, fmt, text):
    check(workdir / REAL[fmt][1], text.encode("utf-8", "surrogatepass"), fmt)


@settings(FUZZ, max_examples=400)
@given(data=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_random_input_with_detection_gives_papers_or_a_source_error(workdir, data):
    check(workdir / "listing.txt", data, None)


@pytest.mark.parametrize("fmt", sorted(READERS))
@settings(FUZZ, max_examples=800)
@given(data=st.data())
def test_mutated_real_listing_gives_papers_or_a_source_error(workdir, fmt, data):
    blob = data.draw(mutations(REAL[fmt][0].read_text(encoding="utf-8")))
    check(workdir / REAL[fmt][1], blob, fmt)
    check(workdir / ("detected_" + REAL[fmt][1]), blob, None)


@settings(FUZZ, max_examples=800)
@given(blob=json_mutations())
def test_json_fields_of_the_wrong_type_give_papers_or_a_source_error(workdir, blob):
    check(workdir / REAL["paperlists-json"][1], blob, "paperlists-json")


# ------------------------------------------------------------------------------------ BOM and CR line ends
def _without_paths(papers: list[Paper]) -> list[dict]:
    return [replace(p, sources=[replace(s, path="") for s in p.sources]).to_dict() for p in papers]


@pytest.mark.parametrize("fmt", sorted(READERS))
@pytest.mark.parametrize("variant", ["bom", "crlf", "cr", "bom+crlf"])
def test_bom_and_cr_line_ends_give_the_same_papers(tmp_path, fmt, variant):
    fixture, name = REAL[fmt]
    raw = fixture.read_bytes()
    assert b"\r" not in raw and not raw.startswith(b"\xef\xbb\xbf")
    if "crlf" in variant:
        raw = raw.replace(b"\n", b"\r\n")
    elif variant == "cr":
        raw = raw.replace(b"\n", b"\r")
    if "bom" in variant:
        raw = b"\xef\xbb\xbf" + raw
    (tmp_path / "orig").mkdir()
    (tmp_path / "orig" / name).write_bytes(fixture.read_bytes())
    (tmp_path / name).write_bytes(raw)
    with warnings.catch_warnings(record=True) as caught:  # a fixture's malformed record: warned alike both times
        warnings.simplefilter("always", SourceWarning)
        expected = sources.read(tmp_path / "orig" / name)  # detected, as a user's build would
        got = sources.read(tmp_path / name)
    assert expected and _without_paths(got) == _without_paths(expected)
    said = [str(w.message).replace(str(tmp_path / "orig"), str(tmp_path)) for w in caught]
    assert said[:len(said) // 2] == said[len(said) // 2:]
    assert sources.detect_format(tmp_path / name) == fmt


# ------------------------------------------------------------------------------------------------ bounds
def test_huge_json_abstract_is_cut_with_a_warning_naming_file_and_record(tmp_path):
    recs = json.loads(REAL["paperlists-json"][0].read_text())
    recs[1]["abstract"] = "We study long abstracts. " * 400_000  # 10 MB
    path = tmp_path / "aaai2022.json"
    path.write_text(json.dumps(recs))
    with pytest.warns(SourceWarning, match=r"aaai2022\.json:record 1: abstract of [\d,]+ characters cut to "
                                           r"20,000"):
        papers = sources.read(path)
    assert len(papers) == len(recs)
    assert len(papers[1].abstract) <= MAX_ABSTRACT_CHARS and papers[1].abstract.startswith("We study long")
    assert papers[0].abstract == recs[0]["abstract"].strip()


def test_huge_markdown_abstract_is_cut_with_a_warning_naming_file_and_line(tmp_path):
    lines = REAL["paperlists-md"][0].read_text().split("\n")
    i = next(k for k, line in enumerate(lines) if line.startswith("- abstract@"))
    lines[i] += " and more words" * 700_000  # 10 MB
    path = tmp_path / "iclr2021.md"
    path.write_text("\n".join(lines))
    with pytest.warns(SourceWarning, match=r"iclr2021\.md:3: abstract of [\d,]+ characters cut to 20,000"):
        papers = sources.read(path)  # its time: benchmarks/hostile_inputs.py --only abstract
    assert len(papers) == 12 and len(papers[0].abstract) <= MAX_ABSTRACT_CHARS


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a": ' * 100_000, '[{"title": "T", "author": ' + "[" * 50_000,
                                  '[{"title": "T", "gs_citation": ' + "9" * 5000 + "}]"])
def test_deep_json_nesting_or_huge_number_is_a_source_error_naming_the_file(tmp_path, text):
    path = tmp_path / "deep.json"
    path.write_text(text)
    with pytest.raises(SourceError, match=r"deep\.json"):
        sources.read(path, format="paperlists-json")
    with pytest.raises(SourceError, match=r"deep\.json"):
        sources.read(path)


def test_nested_field_value_is_a_source_error_naming_record_and_field(tmp_path):
    recs = json.loads(REAL["paperlists-json"][0].read_text())
    recs[3]["author"] = [[["deep"]]]
    recs[3]["title"] = {"not": "a title"}
    path = tmp_path / "aaai2022.json"
    path.write_text(json.dumps(recs))
    with pytest.raises(SourceError, match=r"aaai2022\.json:record 3: field 'title' is a JSON object"):
        sources.read(path, strict=True)
    with pytest.warns(sources.RecordSkipped, match=r"aaai2022\.json:record 3: field 'title' is a JSON object"):
        assert len(sources.read(path)) == len(recs) - 1


def test_a_10_mb_line_of_junk_is_rejected(tmp_path):
    """Refused with the file named (its time: ``benchmarks/hostile_inputs.py --only junk``)."""
    path = tmp_path / "junk.md"
    path.write_bytes(b"#-[{ junk \xc3\xa9 " * 700_000)
    with pytest.raises(SourceError, match=r"junk\.md: unrecognised listing format"):
        sources.read(path)
