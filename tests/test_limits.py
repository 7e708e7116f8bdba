"""One validation for every way in: the limits of :mod:`paperatlas.limits`, alike in the web app, the command line,
``list import`` of an export and the build.

The inputs are real: the atlas is built from the bundled ICLR 2021 sample; the import files are what
``paperatlas list export`` writes, with one entry made oversize; the listings are the OpenReview notes and the
COLM 2024 paperlists fixtures with one field made oversize. Each probe asserts what a user sees: the one line
naming the field and the limit, the count of skipped entries, and that nothing of the refused value was stored.
"""

from __future__ import annotations

import copy
import html
import json
import re
import sqlite3
import warnings

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, SAMPLE, SEEDS, need
from paperatlas import limits, sources
from paperatlas import readinglist as rl
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.limits import (
    MAX_JSON_DEPTH,
    MAX_KEYPHRASE_CHARS,
    MAX_KEYPHRASES,
    MAX_LIST_NAME_CHARS,
    MAX_NOTE_BYTES,
    MAX_TLDR_CHARS,
    LimitExceeded,
)
from paperatlas.sources.merge import paper_id
from paperatlas.store import Atlas
from paperatlas.web import create_app
from test_build_safety import HashEmbedder

NET_DNF = "Net-DNF: Effective Deep Modeling of Tabular Data"
SCORE = "SCoRe: Pre-Training for Context Representation in Conversational Semantic Parsing"
A, B = paper_id(NET_DNF), paper_id(SCORE)
TOKEN_RE = re.compile(r'<input type="hidden" name="csrf_token" value="([^"]+)">')


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("limits") / "sample.db"
    build([SAMPLE], db, venue="ICLR 2021", year=2021, embedder=HashEmbedder())
    return db


@pytest.fixture
def atlas(base, tmp_path):
    db = tmp_path / "atlas.db"
    db.write_bytes(base.read_bytes())
    return db


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def stored(db) -> dict:
    """Everything the reader's tables hold, and the papers' TL;DRs and keyphrases."""
    con = sqlite3.connect(db)
    try:
        return {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall())
                for t in ("marks", "list_items", "overrides")} | {
            "papers": sorted(con.execute("SELECT id, tldr, keyphrases FROM papers").fetchall())}
    finally:
        con.close()


@pytest.fixture
def export(atlas, tmp_path):
    """``(data, path)``: a real export of two papers (liked, noted, on a list, one with an edited TL;DR)."""
    assert cli("list", "like", NET_DNF, "--db", atlas).exit_code == 0
    assert cli("list", "note", NET_DNF, "tabular data: compare with our trees", "--db", atlas).exit_code == 0
    assert cli("list", "add", SCORE, "--list", "to discuss", "--db", atlas).exit_code == 0
    assert cli("edit", SCORE, "--tldr", "SCoRe pre-trains for conversational semantic parsing.",
               "--db", atlas).exit_code == 0
    path = tmp_path / "mine.json"
    assert cli("list", "export", "-o", path, "--db", atlas).exit_code == 0
    data = json.loads(path.read_text())
    assert [e["paper_id"] for e in data["entries"]] == sorted([A, B])
    return data, path


def entry_of(data: dict, pid: str) -> tuple[int, dict]:
    return next((i, e) for i, e in enumerate(data["entries"]) if e["paper_id"] == pid)


# --- list import of an export: each oversize entry skipped, named and counted; --strict refuses the file ---------

FIVE_MB_NOTE = "x" * 5_000_000


def _note(e, o):
    e["note"] = FIVE_MB_NOTE


def _list_name(e, o):
    e["lists"] = ["reading", "l" * 1_000_000]


def _rating(e, o):
    e["rating"] = 10**30


def _many_lists(e, o):
    e["lists"] = [f"list {i}" for i in range(100_000)]


def _read_at(e, o):
    e["read_at"] = "x" * 100


def _tldr(e, o):
    o["value"] = "t" * 10_000_000


def _keyphrases(e, o):
    o.update(field="keyphrases", value=[f"phrase {i}" for i in range(100_000)])


def _long_keyphrase(e, o):
    o.update(field="keyphrases", value=["tabular data", "k" * 5_000])


def _field(e, o):
    o["field"] = "title"


PROBES = [
    (_note, "entries", f"note of paper {A} is longer than 100 kB (5,000,000 bytes of UTF-8); the limit is "
                       "100,000 bytes"),
    (_list_name, "entries", f"a list name of paper {A} is longer than 200 characters (1,000,000); the limit is 200"),
    (_rating, "entries", f"rating of paper {A} is 1000000000000000000000000000000; the limit is -1, 0 or 1"),
    (_many_lists, "entries", f"paper {A} would be on more than 100 lists (100,000); the limit is 100"),
    (_read_at, "entries", f"read_at of paper {A} is '{'x' * 36}...; the limit is an ISO 8601 time of at most 40 "
                          "characters, e.g. '2021-05-03T10:00:00'"),
    (_tldr, "overrides", f"TL;DR of paper {B} is longer than 1,000 characters (10,000,000); the limit is 1,000"),
    (_keyphrases, "overrides", f"paper {B} is given more than 50 keyphrases (100,000); the limit is 50"),
    (_long_keyphrase, "overrides", f"a keyphrase of paper {B} is longer than 100 characters (5,000: "
                                   "'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkk'...); the limit is 100"),
    (_field, "overrides", f"override of paper {B} is of field 'title'; the fields are tldr, keyphrases"),
]


@pytest.mark.parametrize(("make", "key", "message"), PROBES, ids=[p[0].__name__.strip("_") for p in PROBES])
def test_an_export_entry_over_a_limit_is_skipped_named_and_counted(base, export, tmp_path, make, key, message):
    data, path = export
    data = copy.deepcopy(data)
    i, entry = entry_of(data, A)
    make(entry, data["overrides"][0])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    index = i if key == "entries" else 0
    # into a fresh atlas: the other entry is imported, the oversize one is not
    fresh = tmp_path / "fresh.db"
    fresh.write_bytes(base.read_bytes())
    res = cli("list", "import", bad, "--db", fresh)
    assert res.exit_code == 0, res.output
    assert res.stderr == f"skipped: {bad}: {key}[{index}]: {message}\n"
    n_entries, n_overrides = (1, 1) if key == "entries" else (2, 0)
    assert res.stdout.splitlines()[0] == (f"imported {n_entries} papers and {n_overrides} overrides from {bad}, "
                                          "1 entry over a limit skipped (listed above; --strict refuses the file)")
    after = stored(fresh)
    if key == "entries":
        assert A not in [r[0] for r in after["marks"]] + [r[1] for r in after["list_items"]]  # nothing of it
        assert [(r[0], r[1]) for r in after["list_items"]] == [("to discuss", B)]
    else:
        assert after["overrides"] == [] and stored(base)["papers"] == after["papers"]  # TL;DRs as built
        assert [r[0] for r in after["marks"]] == [A]
    # --strict: the whole file is refused, nothing written
    fresh.write_bytes(base.read_bytes())
    res = cli("list", "import", bad, "--strict", "--db", fresh)
    assert res.exit_code == 1
    assert res.output == f"Error: {bad}: {key}[{index}]: {message} (--strict: nothing imported)\n"
    assert stored(fresh) == stored(base)


def test_several_oversize_entries_are_each_named_and_the_count_is_given(base, export, tmp_path):
    data, _ = export
    for e in data["entries"]:
        e["note"] = FIVE_MB_NOTE
    bad = tmp_path / "notes.json"
    bad.write_text(json.dumps(data))
    fresh = tmp_path / "fresh.db"
    fresh.write_bytes(base.read_bytes())
    res = cli("list", "import", bad, "--db", fresh)
    assert res.exit_code == 0
    assert res.stderr.count("skipped: ") == 2 and f"note of paper {A}" in res.stderr and f"paper {B}" in res.stderr
    assert "imported 0 papers and 1 overrides" in res.stdout and "2 entries over a limit skipped" in res.stdout


def test_the_real_export_imports_whole(base, export, tmp_path):
    _, path = export
    fresh = tmp_path / "fresh.db"
    fresh.write_bytes(base.read_bytes())
    res = cli("list", "import", path, "--strict", "--db", fresh)
    assert res.exit_code == 0 and res.stderr == ""
    assert res.output.startswith(f"imported 2 papers and 1 overrides from {path}\n")


@pytest.mark.parametrize("value", ["[" * 100_000, "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)],
                         ids=["100000", "21"])
def test_deeply_nested_json_is_refused_with_one_line(base, atlas, tmp_path, value):
    bad = tmp_path / "deep.json"
    bad.write_text('{"paperatlas_reading_list": 1, "entries": [], "overrides": [{"paper_id": "x", "field": "tldr", '
                   f'"value": {value}}}]}}')
    res = cli("list", "import", bad, "--db", atlas)
    assert res.exit_code == 1
    assert res.output == (f"Error: {bad}: JSON nested more than 20 levels deep; the limit is 20 "
                          "(nothing imported)\n")
    assert stored(atlas) == stored(base)


def test_not_a_number_in_an_export_is_refused(atlas, tmp_path):
    bad = tmp_path / "nan.json"
    bad.write_text('{"paperatlas_reading_list": 1, "entries": [{"paper_id": "x", "title": "T", "rating": NaN}]}')
    res = cli("list", "import", bad, "--db", atlas)
    assert res.exit_code == 1 and res.output == f"Error: {bad}: cannot read JSON: NaN is not a JSON number\n"


def test_the_store_refuses_what_the_import_would_skip(atlas):
    """The store's write functions are the last guard, for a caller that skipped the checks."""
    from paperatlas import store

    entry = {"paper_id": A, "title": NET_DNF, "rating": 10**30, "note": "", "read_at": None, "lists": [],
             "updated_at": "2021-05-03T10:00:00"}
    with pytest.raises(LimitExceeded, match="rating of paper"):
        store.import_rows(atlas, [entry], [])
    with pytest.raises(LimitExceeded, match="TL;DR of paper"):
        store.import_rows(atlas, [], [{"paper_id": A, "field": "tldr", "value": "t" * 1001, "title": NET_DNF,
                                       "edited_at": ""}])
    with pytest.raises(LimitExceeded, match="TL;DR of paper"):
        store.set_overrides(atlas, A, {"tldr": "t" * 1001})
    with pytest.raises(LimitExceeded, match="note of paper"):
        store.set_mark(atlas, A, note="n" * (MAX_NOTE_BYTES + 1))
    with pytest.raises(LimitExceeded, match="rating of paper"):
        store.set_mark(atlas, A, rating=2)
    with pytest.raises(LimitExceeded, match="list name"):
        store.add_to_list(atlas, A, "l" * 201)
    with pytest.raises(LimitExceeded, match="list name"):
        store.like_or_list(atlas, [(A, NET_DNF)], "l" * 201)
    assert rl.entries(atlas) == []


# --- the command line and the web app: the same line for the same value ------------------------------------------


@pytest.fixture
def web(atlas):
    client = create_app(atlas, preload_model=False).test_client()
    token = TOKEN_RE.search(client.get(f"/paper/{A}").get_data(as_text=True)).group(1)

    def post(url, **form):
        res = client.post(url, data={**form, "csrf_token": token}, headers={"Origin": "http://localhost"})
        return res.status_code, html.unescape(res.get_data(as_text=True))

    return post


def test_edit_tldr_is_refused_alike_by_the_cli_and_the_web(base, atlas, web):
    message = f"TL;DR of paper {A} is longer than 1,000 characters (10,000,000); the limit is 1,000"
    res = cli("edit", NET_DNF, "--tldr", "t" * 10_000_000, "--db", atlas)
    assert res.exit_code == 1 and res.output == f"Error: {message}\n"
    status, body = web(f"/paper/{A}/edit", tldr="t" * 1_001)
    assert status == 400 and message.replace("10,000,000", "1,001") in body
    assert web(f"/paper/{A}/edit", tldr="t" * 10_000_000)[0] == 413  # over the request body limit
    assert stored(atlas) == stored(base)
    just = "t" * MAX_TLDR_CHARS  # at the limit: accepted by both
    assert cli("edit", NET_DNF, "--tldr", just, "--db", atlas).exit_code == 0
    assert Atlas(atlas).by_id[A].tldr == just


def test_edit_keyphrases_are_refused_alike_by_the_cli_and_the_web(base, atlas, web):
    many = ";".join(f"k{i}" for i in range(MAX_KEYPHRASES + 1))
    message = f"paper {A} is given more than 50 keyphrases (51); the limit is 50"
    res = cli("edit", NET_DNF, "--keyphrases", many, "--db", atlas)
    assert res.exit_code == 1 and res.output == f"Error: {message}\n"
    status, body = web(f"/paper/{A}/edit", keyphrases=many)
    assert status == 400 and message in body
    long = "a; " + "b" * (MAX_KEYPHRASE_CHARS + 1)
    message = f"a keyphrase of paper {A} is longer than 100 characters (101: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'...); " \
              "the limit is 100"
    assert cli("edit", NET_DNF, "--keyphrases", long, "--db", atlas).output == f"Error: {message}\n"
    status, body = web(f"/paper/{A}/edit", keyphrases=long)
    assert status == 400 and message in body
    assert stored(atlas) == stored(base)


def test_list_add_name_is_refused_alike_by_the_cli_and_the_web(base, atlas, web):
    message = f"a list name of paper {A} is longer than 200 characters (10,000); the limit is 200"
    res = cli("list", "add", NET_DNF, "--list", "l" * 10_000, "--db", atlas)
    assert res.exit_code == 1 and res.output == f"Error: {message}\n"
    status, body = web(f"/paper/{A}/mark", action="add", list="l" * 10_000)
    assert status == 400 and message in body
    assert stored(atlas) == stored(base)
    name = "l" * MAX_LIST_NAME_CHARS
    assert cli("list", "add", NET_DNF, "--list", name, "--db", atlas).exit_code == 0
    assert rl.list_names(atlas) == {name: 1}


def test_list_note_is_refused_alike_by_the_cli_and_the_web(base, atlas, web):
    message = f"note of paper {A} is longer than 100 kB (150,000 bytes of UTF-8); the limit is 100,000 bytes"
    res = cli("list", "note", NET_DNF, "é" * 75_000, "--db", atlas)  # 75,000 characters, 150,000 bytes
    assert res.exit_code == 1 and res.output == f"Error: {message}\n"
    status, body = web(f"/paper/{A}/mark", action="note", note="é" * 75_000)
    assert status == 400 and message in body
    assert web(f"/paper/{A}/mark", action="note", note=FIVE_MB_NOTE)[0] == 413
    assert stored(atlas) == stored(base)
    assert cli("list", "note", NET_DNF, "n" * 60_000, "--db", atlas).exit_code == 0
    res = cli("list", "note", NET_DNF, "m" * 60_000, "--append", "--db", atlas)
    assert res.output == (f"Error: note of paper {A} is longer than 100 kB with the paragraph appended (120,002 "
                          "bytes of UTF-8); the limit is 100,000 bytes\n")


def test_the_web_limits_are_the_shared_ones():
    """The web app keeps no limits of its own: they were moved to paperatlas.limits."""
    import paperatlas.web.paper_views as pv
    import paperatlas.web.reader_views as rv
    import paperatlas.web.schedule_views as sv

    assert not hasattr(pv, "MAX_TLDR_CHARS")
    for mod in (pv, rv, sv):
        source = open(mod.__file__, encoding="utf-8").read()
        assert "longer than 200" not in source and "5000" not in source, mod.__name__


def test_a_schedule_list_name_over_the_limit_is_a_400(atlas):
    client = create_app(atlas, preload_model=False).test_client()
    res = client.get("/schedule?list=" + "l" * 201)
    assert res.status_code == 400
    assert "the list name is longer than 200 characters (201); the limit is 200" in html.unescape(res.get_data(True))


# --- the build: a listing's values bounded at ingest, with a warning naming the file and record -------------------


def test_a_listings_keyphrases_and_tldr_are_bounded_with_warnings(tmp_path):
    records = json.loads((FIXTURES / "colm2024_head.json").read_text())
    records[0]["keywords"] = ";".join(f"phrase {i}" for i in range(100_000))
    records[1]["keywords"] = "language models;" + "k" * 5_000
    path = tmp_path / "colm2024.json"
    path.write_text(json.dumps(records))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", sources.SourceWarning)
        papers = sources.read(path)
    said = [str(w.message) for w in caught if issubclass(w.category, sources.SourceWarning)]
    assert f"{path}:record 0: 100,000 keyphrases given, the first 50 kept; the limit is 50" in said
    assert f"{path}:record 1: 1 keyphrase longer than 100 characters dropped (the longest: 5,000); the limit is " \
           "100" in said
    assert len(papers[0].given_keyphrases) == MAX_KEYPHRASES and papers[1].given_keyphrases == ["language models"]
    real = [p.given_keyphrases for p in sources.read(FIXTURES / "colm2024_head.json")]
    assert [k for ks in real for k in ks] and all(len(ks) <= MAX_KEYPHRASES for ks in real)  # real ones untouched

    notes = json.loads((FIXTURES / "sources" / "openreview" / "notes_v2.json").read_text())
    note = next(n for n in notes["notes"] if any(k in n["content"] for k in ("TLDR", "TL;DR", "one-sentence_summary")))
    key = next(k for k in ("TLDR", "TL;DR", "one-sentence_summary") if k in note["content"])
    note["content"][key] = {"value": "t" * 10_000_000}
    path = tmp_path / "notes.json"
    path.write_text(json.dumps(notes))
    with pytest.warns(sources.SourceWarning, match=r"notes\.json:record \d+: tldr of 10,000,000 characters cut to "
                                                   r"1,000"):
        papers = sources.read(path)
    assert max(len(p.tldr) for p in papers) == MAX_TLDR_CHARS


# --- the module: limits a real user never hits ----------------------------------------------------------------------


def test_the_limits_are_above_the_real_data():
    gold = [len(t) for line in (FIXTURES / "scitldr_dev20.jsonl").read_text().splitlines()
            for t in json.loads(line)["target"]]
    assert max(gold) < MAX_TLDR_CHARS
    seeds = need(SEEDS / "004_67aa5497667b379c.txt").read_text()
    kws = [k.strip() for line in seeds.splitlines() if re.match(r"\W*Key W", line)
           for k in re.split(r"[;,]", line.split(":", 1)[1]) if k.strip()]
    assert kws and max(map(len, kws)) < MAX_KEYPHRASE_CHARS
    for name in ("MAX_NOTE_BYTES", "MAX_LIST_NAME_CHARS", "MAX_TLDR_CHARS", "MAX_KEYPHRASES", "MAX_KEYPHRASE_CHARS",
                 "MAX_JSON_DEPTH"):
        assert f"{getattr(limits, name):,}" in limits.__doc__ or str(getattr(limits, name)) in limits.__doc__


def test_json_depth_is_counted_on_the_text_without_recursion():
    assert limits.json_depth("[" * 100_000 + "]" * 100_000, limit=10**6) == 100_000
    assert limits.json_depth("[" * 100_000) == limits.MAX_JSON_DEPTH + 1  # counting stops past the limit
    assert limits.json_depth('{"a": [1, {"b": []}]}') == 4 and limits.json_depth("5") == 0
    assert limits.json_depth('["[[[[", {"a": "]]]{"}]') == 2  # brackets inside strings do not count
