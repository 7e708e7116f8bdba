"""The conference plan: sessions, times, rooms and posters read from real-format listings, clashes, the walking
order of a listing without times, the .ics export (read back with icalendar and vobject), the CLI and the web page.

Atlases are built with a hashed bag-of-words stand-in for the embedding model (as in test_build_safety.py), so
the module runs in seconds. Fixtures: tests/fixtures/schedule/README.md says where each row comes from.
"""

from __future__ import annotations

import warnings
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import icalendar
import numpy as np
import pytest
import vobject
from click.testing import CliRunner

from paperatlas import readinglist as rl
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.model import SourceError
from paperatlas.schedule import reading_plan, to_ics, write_ics
from paperatlas.sources import read
from paperatlas.sources._common import SourceWarning
from paperatlas.store import Atlas
from paperatlas.web import create_app
from test_build_safety import HashEmbedder

HERE = Path(__file__).resolve().parent
FIX = HERE / "fixtures" / "schedule"
NEURIPS_CSV = FIX / "neurips2025_sessions.csv"
CVPR_JSON = FIX / "cvpr2019_sessions.json"
EXCERPT = HERE / "fixtures" / "iclr2021_excerpt.md"
LA = ZoneInfo("America/Los_Angeles")

COLORING = "Coloring Learning for Heterophilic Graph Representation"
MISS_REID = "Miss-ReID: Delivering Robust Multi-Modality Object Re-Identification Despite Missing Modalities"
DISCO = "DisCO: Reinforcing Large Reasoning Models with Discriminative Constraints"
HOPFIELD = "Hopfield Networks is All You Need"
NODE = "Neural ODE Processes"
GON = "Gradient Origin Networks"
PBVF = "Parameter-Based Value Functions"
LATE = "Neural networks with late-phase weights"
AGAC = "Adversarially Guided Actor-Critic"
EPS = "Temporally-Extended $\\epsilon$-Greedy Exploration"
PLANNED = [COLORING, MISS_REID, DISCO, HOPFIELD, NODE, GON, PBVF, LATE, AGAC, EPS]
TIMED = [COLORING, MISS_REID, DISCO, HOPFIELD, NODE, GON, PBVF, AGAC]


def _ids(db) -> dict[str, str]:
    atlas = Atlas(db)
    try:
        return {p.title: p.id for p in atlas.papers}
    finally:
        atlas.close()


@pytest.fixture(scope="module")
def neurips(tmp_path_factory) -> Path:
    """The NeurIPS-format CSV built into an atlas; the ten planned papers liked, one other only disliked."""
    db = tmp_path_factory.mktemp("sched") / "neurips.db"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SourceWarning)
        build([NEURIPS_CSV], db, embedder=HashEmbedder(), n_topics=3)
    ids = _ids(db)
    for title in PLANNED:
        rl.rate(db, ids[title], 1)
    rl.rate(db, ids["CoCon: A Self-Supervised Approach for Controlled Text Generation"], -1)
    return db


@pytest.fixture
def plan(neurips):
    atlas = Atlas(neurips)
    yield reading_plan(atlas)
    atlas.close()


# ---- readers ---------------------------------------------------------------------------------------------------

def test_csv_reads_session_times_room_and_poster():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        papers = {p.title: p for p in read(NEURIPS_CSV)}
    assert len(papers) == 16
    c = papers[COLORING].extra
    assert (c["session"], c["location"], c["poster"]) == ("San Diego Poster Session 6", "Exhibit Hall C,D,E", "#2504")
    assert (c["starts_at"], c["ends_at"]) == ("2025-12-05T16:30:00-08:00", "2025-12-05T19:30:00-08:00")
    assert "timezone" not in c  # a bare offset names no zone
    assert [link.url for link in papers[COLORING].links] == ["https://openreview.net/forum?id=7HVADbW8fh"]
    # a local time with a timezone column, the end as a time of day
    n = papers[NODE].extra
    assert (n["starts_at"], n["ends_at"], n["timezone"]) == (
        "2025-12-08T12:30:00-08:00", "2025-12-08T12:45:00-08:00", "America/Los_Angeles")
    assert papers[PBVF].extra["starts_at"] == "2025-12-04T00:30:00+00:00"  # "Z"
    # a local time without a zone: the times are dropped (with the line named), the paper and its session kept
    assert "starts_at" not in papers[EPS].extra and papers[EPS].extra["poster"] == "#2511"
    msgs = [str(w.message) for w in caught if issubclass(w.category, SourceWarning)]
    assert len(msgs) == 1 and "neurips2025_sessions.csv:11:" in msgs[0] and "no UTC offset" in msgs[0]
    assert not any(k in papers[LATE].extra for k in ("session", "starts_at", "poster"))
    # the decision column's wording gives the status the facets count ("Accept (poster)" is a Poster), and is
    # kept as worded
    assert Counter(p.status for p in papers.values()) == {"Poster": 12, "Oral": 4}
    assert (papers[DISCO].status, papers[DISCO].extra["decision"]) == ("Oral", "Accept (oral)")


def test_csv_time_problems_name_the_line(tmp_path):
    f = tmp_path / "talks.csv"
    f.write_text("Title,Session,Start,End,Timezone,Room\n"
                 "A talk,S1,2025-07-14T10:00:00+02:00,2025-07-14T10:20:00+02:00,Europe/Vienna,Hall A\n"
                 "B talk,S1,2025-07-14T10:00,09:00,Europe/Vienna,Hall A\n"
                 "C talk,S1,2025-07-14T10:00,,Mars/Olympus,Hall A\n"
                 "D talk,S1,,2025-07-14T10:00Z,,Hall A\n"
                 "E talk,S1,2025-07-14T08:00:00Z,,Europe/Vienna,Hall A\n", encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        papers = {p.title: p.extra for p in read(f)}
    assert papers["A talk"]["starts_at"] == "2025-07-14T10:00:00+02:00"
    assert papers["A talk"]["timezone"] == "Europe/Vienna"
    assert papers["E talk"]["starts_at"] == "2025-07-14T10:00:00+02:00"  # UTC given, shown in the row's zone
    assert "ends_at" not in papers["E talk"]
    msgs = sorted(str(w.message) for w in caught if issubclass(w.category, SourceWarning))
    assert [m.split(": ", 1)[0].rsplit(":", 1)[1] for m in msgs] == ["3", "4", "5"]
    assert "before the start" in msgs[0] and "unknown time zone 'Mars/Olympus'" in msgs[1]
    assert "without a start" in msgs[2]
    assert all("Hall A" == papers[t]["location"] for t in papers)  # the rest of the row is kept
    with pytest.raises(SourceError, match=r"talks\.csv:3: end '09:00' is before the start"):
        read(f, strict=True)


def test_paperlists_sessions_of_cvpr():
    papers = read(CVPR_JSON)
    assert len(papers) == 12
    assert [p.extra["session"] for p in papers] == (["Low-Level & Optimization"] * 4 + ["Face & Body"] * 4
                                                   + ["Deep Learning"] * 4)
    assert not any("starts_at" in p.extra for p in papers)


# ---- the plan --------------------------------------------------------------------------------------------------

def test_clashes_and_time_order(plan, neurips):
    ids = _ids(neurips)
    title = {v: k for k, v in ids.items()}
    assert sorted(s.paper.title for s in plan.slots) == sorted(PLANNED)  # liked; the disliked one left out
    timed = plan.timed
    assert [s.start for s in timed] == sorted(s.start for s in timed)
    assert {s.paper.title for s in timed} == set(TIMED)
    assert [[title[i] for i in group] for group in plan.clashes] == [
        [MISS_REID, COLORING, GON, HOPFIELD],  # the oral at 17:00 overlaps poster session 6 (posters by number)
        [DISCO, AGAC, NODE]]  # two overlapping talks; NODE starts when DisCO ends: not a clash of those two
    by = {s.paper.title: s for s in timed}
    assert set(by[COLORING].clashes_with) == {ids[HOPFIELD]}  # three posters of one session are one visit
    assert set(by[HOPFIELD].clashes_with) == {ids[COLORING], ids[MISS_REID], ids[GON]}
    assert ids[DISCO] not in by[NODE].clashes_with and by[PBVF].clash is None
    assert by[COLORING].when == "16:30–19:30 UTC-08:00" and by[NODE].when == "12:30–12:45 PST"
    assert by[COLORING].group == "Fri 5 Dec 2025" and by[PBVF].group == "Thu 4 Dec 2025"  # in its own zone (UTC)
    assert by[COLORING].where == "San Diego Poster Session 6 · Exhibit Hall C,D,E · #2504"
    assert [s.paper.title for s in plan.untimed] == [EPS, LATE]  # by session, then by topic
    assert plan.untimed[0].group == "San Diego Poster Session 6"


def test_named_list(neurips):
    ids = _ids(neurips)
    rl.add(neurips, ids[DISCO], "day four")
    rl.add(neurips, ids[NODE], "day four")
    atlas = Atlas(neurips)
    try:
        p = reading_plan(atlas, "day four")
        assert [s.paper.title for s in p.slots] == [DISCO, NODE] and p.clashes == []
        with pytest.raises(LookupError, match="no list named 'nope'"):
            reading_plan(atlas, "nope")
    finally:
        atlas.close()
        rl.remove(neurips, ids[DISCO], None)
        rl.remove(neurips, ids[NODE], None)


# ---- .ics ------------------------------------------------------------------------------------------------------

def test_ics_reads_back_with_icalendar_and_vobject(plan, neurips, tmp_path):
    ids = _ids(neurips)
    path = write_ics(plan, tmp_path / "plan.ics")
    data = path.read_bytes()
    assert data.startswith(b"BEGIN:VCALENDAR\r\n") and [p.name for p in tmp_path.iterdir()] == ["plan.ics"]

    cal = icalendar.Calendar.from_ical(data)
    events = {str(e["SUMMARY"]): e for e in cal.walk("VEVENT")}
    assert set(events) == set(TIMED)  # one event per paper with a time; none for the two without
    assert sorted(str(e["UID"]) for e in events.values()) == sorted(f"{ids[t]}@paperatlas" for t in TIMED)
    col = events[COLORING]
    assert col.decoded("DTSTART") == datetime(2025, 12, 6, 0, 30, tzinfo=UTC)  # 16:30 -08:00, written in UTC
    assert col.decoded("DTEND") == datetime(2025, 12, 6, 3, 30, tzinfo=UTC)
    assert str(col["LOCATION"]) == "Exhibit Hall C,D,E · poster #2504"
    assert "https://openreview.net/forum?id=7HVADbW8fh" in str(col["DESCRIPTION"])
    node = events[NODE].decoded("DTSTART")
    assert node == datetime(2025, 12, 8, 12, 30, tzinfo=LA) and str(node.tzinfo) == "America/Los_Angeles"
    assert b"DTSTART;TZID=America/Los_Angeles:20251208T123000" in data
    assert [str(tz["TZID"]) for tz in cal.walk("VTIMEZONE")] == ["America/Los_Angeles"]

    second = list(vobject.readComponents(data.decode("utf-8")))
    assert len(second) == 1
    vevents = {e.summary.value: e for e in second[0].vevent_list}
    assert set(vevents) == set(TIMED)
    for t in TIMED:  # the same instants through the other reader
        assert vevents[t].dtstart.value == events[t].decoded("DTSTART")
        assert vevents[t].dtend.value == events[t].decoded("DTEND")
        assert vevents[t].uid.value == f"{ids[t]}@paperatlas"
    assert vevents[NODE].dtstart.value.utcoffset().total_seconds() == -8 * 3600


def test_ics_without_times_writes_nothing(tmp_path, neurips):
    target = tmp_path / "keep.ics"
    target.write_text("previous", encoding="utf-8")
    ids = _ids(neurips)
    rl.add(neurips, ids[LATE], "untimed")
    atlas = Atlas(neurips)
    try:
        with pytest.raises(ValueError, match="no paper of this schedule has a start time"):
            write_ics(reading_plan(atlas, "untimed"), target)
    finally:
        atlas.close()
        rl.remove(neurips, ids[LATE], None)
    assert target.read_text(encoding="utf-8") == "previous" and len(list(tmp_path.iterdir())) == 1


def test_ics_is_stable_apart_from_the_stamp(plan):
    now = datetime(2025, 11, 1, tzinfo=UTC)
    assert to_ics(plan, now=now) == to_ics(plan, now=now)


# ---- listings without times -----------------------------------------------------------------------------------

def _contiguous(groups: list[str]) -> bool:
    seen, last = set(), None
    for g in groups:
        if g != last and g in seen:
            return False
        seen.add(g)
        last = g
    return True


def test_no_times_walks_by_topic(tmp_path):
    db = tmp_path / "iclr.db"
    build([EXCERPT], db, venue="ICLR 2021", year=2021, embedder=HashEmbedder(), n_topics=4)
    atlas = Atlas(db)
    liked = atlas.papers[::2]
    for p in liked:
        rl.rate(db, p.id, 1)
    plan = reading_plan(atlas)
    assert not plan.timed and not plan.clashes and len(plan.untimed) == len(liked)
    groups = [s.group for s in plan.slots]
    assert _contiguous(groups) and len(set(groups)) > 1
    for s in plan.slots:
        area = atlas.area_of(s.paper.topic_id)
        sub = atlas.topic_label(s.paper.topic_id)
        assert s.group in (f"{area.label} › {sub}", area.label)
    for g in dict.fromkeys(groups):  # within a topic: a walk from its leftmost paper to the nearest unseen one
        xy = [(s.paper.x, s.paper.y) for s in plan.slots if s.group == g]
        assert xy[0] == min(xy)
        for i in range(1, len(xy) - 1):
            d = [np.hypot(xy[i][0] - x, xy[i][1] - y) for x, y in xy[i + 1:]]
            assert np.hypot(xy[i][0] - xy[i + 1][0], xy[i][1] - xy[i + 1][1]) == pytest.approx(min(d))
    with pytest.raises(ValueError):
        to_ics(plan)
    atlas.close()
    client = create_app(db, preload_model=False).test_client()
    html = client.get("/schedule").get_data(as_text=True)
    assert "No times in the listing: in walking order" in html and "Download .ics" not in html
    assert client.get("/schedule.ics").status_code == 404
    res = CliRunner().invoke(main, ["schedule", "--db", str(db)])
    assert res.exit_code == 0 and "No time in the listing: in walking order" in res.output
    res = CliRunner().invoke(main, ["schedule", "--db", str(db), "--ics", str(tmp_path / "x.ics")])
    assert res.exit_code == 1 and "nothing to put in a calendar" in res.output and not (tmp_path / "x.ics").exists()


def test_sessions_without_times_group_posters(tmp_path):
    db = tmp_path / "cvpr.db"
    build([CVPR_JSON], db, embedder=HashEmbedder(), n_topics=3)
    atlas = Atlas(db)
    for p in atlas.papers[::2]:
        rl.rate(db, p.id, 1)
    plan = reading_plan(atlas)
    groups = [s.group for s in plan.slots]
    assert _contiguous(groups)
    assert set(groups) == {"Low-Level & Optimization", "Face & Body", "Deep Learning"}
    assert all(s.group == s.session for s in plan.slots)
    atlas.close()


# ---- command line and web app ---------------------------------------------------------------------------------

def test_cli_prints_clashes_and_writes_ics(neurips, tmp_path):
    out = tmp_path / "sub" / "neurips.ics"
    res = CliRunner().invoke(main, ["schedule", "--db", str(neurips), "--ics", str(out)])
    assert res.exit_code == 0, res.output
    assert "10 papers on your reading list: 8 with a time, 2 clashes" in res.output
    assert res.output.count("CLASH 1") == 4 and res.output.count("CLASH 2") == 3
    assert f"wrote {out} (8 events)" in res.output
    assert len(icalendar.Calendar.from_ical(out.read_bytes()).walk("VEVENT")) == 8
    res = CliRunner().invoke(main, ["schedule", "--db", str(neurips), "--list", "nope"])
    assert res.exit_code == 1 and "no list named 'nope'" in res.output


def test_published_csv_keeps_sessions_times_rooms_and_posters(neurips, tmp_path):
    out = tmp_path / "neurips_out.csv"
    res = CliRunner().invoke(main, ["publish", "--format", "csv", "-o", str(out), "--db", str(neurips)])
    assert res.exit_code == 0, res.output
    keys = ("session", "starts_at", "ends_at", "timezone", "location", "poster")
    atlas = Atlas(neurips)
    try:
        before = {p.title: {k: p.extra.get(k) for k in keys} for p in atlas.papers}
    finally:
        atlas.close()
    after = {p.title: {k: p.extra.get(k) for k in keys} for p in read(out)}
    assert after == before
    assert after[NODE] == {"session": before[NODE]["session"], "starts_at": "2025-12-08T12:30:00-08:00",
                           "ends_at": "2025-12-08T12:45:00-08:00", "timezone": "America/Los_Angeles",
                           "location": before[NODE]["location"], "poster": before[NODE]["poster"]}
    assert sum(v["starts_at"] is not None for v in after.values()) == 8


def test_web_schedule_page_and_download(neurips):
    client = create_app(neurips, preload_model=False).test_client()
    listing = client.get("/list").get_data(as_text=True)
    assert 'id="schedulelink" href="/schedule"' in listing
    page = client.get("/schedule")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert html.count('class="paper slot clash"') == 7 and "2 clashes" in html
    assert "overlaps: " in html and "16:30–19:30 UTC-08:00" in html and "Download .ics" in html
    ics = client.get("/schedule.ics")
    assert ics.status_code == 200 and ics.mimetype == "text/calendar"
    assert ics.headers["Content-Disposition"] == 'attachment; filename="paperatlas-reading-list.ics"'
    assert ics.headers["Content-Security-Policy"]  # the app's usual headers
    assert len(icalendar.Calendar.from_ical(ics.data).walk("VEVENT")) == 8
    assert client.get("/schedule?list=nope").status_code == 404
    assert client.get("/schedule.ics?list=nope").status_code == 404
