"""The virtual-site reader: a conference's orals-posters JSON export (NeurIPS 2025 records) into papers with times.

Fixture ``fixtures/schedule/neurips2025_orals_posters.json`` (see ``fixtures/schedule/README.md``): three records of
the NeurIPS 2025 export as recorded by the public neurips-abstracts project, records made in its format for ICLR 2021
papers of the CSV fixture, a second (poster) presentation of the oral DisCO, and a record without a name.
"""

from __future__ import annotations

import json
import warnings

import pytest
from click.testing import CliRunner

from paperatlas import readinglist as rl
from paperatlas import sources
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.model import SourceError
from paperatlas.schedule import reading_plan
from paperatlas.sources import SourceWarning
from paperatlas.store import Atlas
from test_build_safety import HashEmbedder
from test_schedule import AGAC, COLORING, DISCO, FIX, GON, HOPFIELD, MISS_REID, NEURIPS_CSV, PBVF

EXPORT = FIX / "neurips2025_orals_posters.json"
PRESENTATION = ("session", "starts_at", "ends_at", "location", "poster")


def _read(path=EXPORT, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        papers = sources.read(path, **kw)
    return {p.title: p for p in papers}, [str(w.message) for w in caught if issubclass(w.category, SourceWarning)]


def test_the_export_is_detected_and_read_with_times_rooms_and_posters():
    assert sources.detect_format(EXPORT) == "virtual-site"
    papers, msgs = _read()
    assert len(papers) == 8
    assert msgs == [f"{EXPORT}:record 9: missing or empty 'name' (the paper's title)"]
    c = papers[COLORING]
    assert (c.venue, c.year, c.status, c.extra["decision"]) == ("NeurIPS 2025", 2025, "Poster", "Accept (poster)")
    assert c.authors[:2] == ["Miaomiao Huang", "Yuhai Zhao"] and len(c.authors) == 7
    assert c.affiliations == ["Northeastern University", "Singapore Institute of Technology",
                              "Pennsylvania State University"]
    assert {k: c.extra[k] for k in PRESENTATION} == {
        "session": "San Diego Poster Session 6", "starts_at": "2025-12-05T16:30:00-08:00",
        "ends_at": "2025-12-05T19:30:00-08:00", "location": "Exhibit Hall C,D,E", "poster": "#2504"}
    assert c.extra["primary_area"] == "General Machine Learning->Representation Learning"
    assert [(x.kind, x.url) for x in c.links] == [("openreview", "https://openreview.net/forum?id=7HVADbW8fh"),
                                                  ("other", "https://neurips.cc/virtual/2025/poster/119718")]
    assert c.sources[0].native_id == "119718"
    d = papers[DISCO]
    assert "Texas A&M University" in d.affiliations  # the export's "Texas A&amp;M" decoded
    assert papers[HOPFIELD].given_keyphrases == ["Hopfield networks", "attention"]


def test_a_talk_and_its_poster_are_one_paper_with_the_talks_time():
    papers, _ = _read()
    d = papers[DISCO]
    assert (d.status, d.extra["session"], d.extra["starts_at"], d.extra["location"]) == (
        "Oral", "Oral Session 17", "2025-12-08T12:15:00-08:00", "Ballroom C")
    assert "poster" not in d.extra  # the poster board belongs to the other presentation
    records = json.loads(EXPORT.read_text())["results"]
    assert sum(r.get("paper_url") == "https://openreview.net/forum?id=1kPO9vCRbg" for r in records) == 2
    assert list(papers) == [COLORING, MISS_REID, DISCO, HOPFIELD, AGAC, GON, PBVF,
                            "Net-DNF: Effective Deep Modeling of Tabular Data"]  # the order of first records


def test_the_export_and_its_csv_flattening_give_the_same_presentations():
    json_papers, _ = _read()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SourceWarning)
        csv_papers = {p.title: p for p in sources.read(NEURIPS_CSV)}
    shared = [t for t in json_papers if t in csv_papers]
    assert len(shared) == 8
    for t in shared:
        a, b = json_papers[t], csv_papers[t]
        assert (a.status, a.authors) == (b.status, b.authors), t
        assert {k: a.extra.get(k) for k in PRESENTATION} == {k: b.extra.get(k) for k in PRESENTATION}, t


def test_malformed_exports_name_the_file_and_record(tmp_path):
    with pytest.raises(SourceError, match=r"record 9: missing or empty 'name'"):
        sources.read(EXPORT, strict=True)
    bad = tmp_path / "neurips-2025-orals-posters.json"
    bad.write_text('{"count": 1, "results": {"name": "x", "eventtype": "Poster"}}')
    with pytest.raises(SourceError, match=r"expected a JSON object with a 'results' array"):
        sources.read(bad, format="virtual-site")
    records = json.loads(EXPORT.read_text())
    records["results"][0]["authors"] = "Miaomiao Huang"
    bad.write_text(json.dumps(records))
    with pytest.raises(SourceError, match=r"record 0: field 'authors' is a JSON str, expected an array"):
        sources.read(bad, strict=True)
    papers, msgs = _read(bad)
    assert COLORING not in papers and len(papers) == 7 and any("record 0" in m for m in msgs)


def test_an_atlas_built_from_the_export_plans_the_liked_papers_talks(tmp_path):
    db = tmp_path / "neurips.db"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SourceWarning)
        build([EXPORT], db, embedder=HashEmbedder(), n_topics=2)
    atlas = Atlas(db)
    try:
        ids = {p.title: p.id for p in atlas.papers}
    finally:
        atlas.close()
    for t in (DISCO, AGAC, PBVF):
        rl.rate(db, ids[t], 1)
    atlas = Atlas(db)
    try:
        plan = reading_plan(atlas)
    finally:
        atlas.close()
    assert [s.paper.title for s in plan.timed] == [PBVF, DISCO, AGAC]
    assert plan.clashes == [[ids[DISCO], ids[AGAC]]]  # two talks of Oral Session 17 overlap
    res = CliRunner().invoke(main, ["schedule", "--db", str(db)])
    assert res.exit_code == 0 and "3 papers on your reading list: 3 with a time, 1 clash" in res.output


def test_an_export_without_abstracts_takes_them_from_the_file_beside_it(tmp_path):
    """ICML 2026's shape: abstracts in ``icml-2026-abstracts.json`` (event id -> text), ``event_type`` spelled so,
    a position-paper track in ``sourceurl``, and a first page of a longer list."""
    data = json.loads(EXPORT.read_text())
    records = [r for r in data["results"] if r.get("name")][:4]
    abstracts = {}
    for r in records:
        abstracts[str(r["id"])] = r.pop("abstract")
        r["sourceurl"] = "https://openreview.net/group?id=ICML.cc/2026/Conference"
        r["event_type"] = r.pop("eventtype")
        r.pop("decision")
    records[3]["sourceurl"] = "https://openreview.net/group?id=ICML.cc/2026/Position_Paper_Track"
    export = tmp_path / "icml-2026-orals-posters.json"
    export.write_text(json.dumps({"count": 9, "next": "/static/virtual/data/icml-2026-orals-posters.json?page=2",
                                  "results": records}))
    (tmp_path / "icml-2026-abstracts.json").write_text(json.dumps(abstracts))
    papers, msgs = _read(export)
    assert msgs == [f"{export}: the export declares 9 presentations but holds 4: it is one page of a longer list "
                    "(next: /static/virtual/data/icml-2026-orals-posters.json?page=2); the rest is not read"]
    assert [p.abstract for p in papers.values()] == list(abstracts.values())
    assert {p.venue for p in papers.values()} == {"ICML 2026"}
    assert [p.status for p in papers.values()] == ["Poster", "Poster", "Oral", "Oral"]  # from event_type
    assert [p.track for p in papers.values()] == ["", "", "", "Position Paper Track"]
    assert papers[COLORING].links[-1].url == "https://icml.cc/virtual/2025/poster/119718"
    (tmp_path / "icml-2026-abstracts.json").write_text("[1, 2]")
    with pytest.raises(SourceError, match=r"icml-2026-abstracts\.json: expected a JSON object from event id"):
        sources.read(export)


def test_records_sharing_a_uid_are_one_paper(tmp_path):
    data = json.loads(EXPORT.read_text())
    first = data["results"][0]
    again = dict(first, id=1, name=first["name"].upper() + " (poster)", paper_url=None, eventtype="Spotlight",
                 session="Spotlight Session 1")
    data["results"].append(again)  # a renamed copy: only the uid says it is the same paper
    path = tmp_path / "neurips-2025-orals-posters.json"
    path.write_text(json.dumps(data))
    papers, _ = _read(path)
    assert len(papers) == 8 and COLORING not in papers
    (p,) = [p for p in papers.values() if p.extra.get("session") == "Spotlight Session 1"]
    assert p.status == "Poster"  # the decision ("Accept (poster)") names the status; the talk gives the time
