"""The reader's word wins for topics too: a renamed topic and a moved paper show at once and survive rebuilds."""

from __future__ import annotations

import json
import re
import sqlite3

from click.testing import CliRunner

from conftest import FIXTURES, SAMPLE
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.store import Atlas
from paperatlas.store.topic_overrides import topic_key
from paperatlas.web import create_app

NET_DNF = "Net-DNF: Effective Deep Modeling of Tabular Data"
EXCERPT = FIXTURES / "iclr2021_excerpt.md"  # 12 ICLR 2021 papers, 7 of them not in the sample
MY_LABEL = "Tabular and language models"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def rebuild(db, *listings):
    return build(list(listings or [SAMPLE]), db, venue="ICLR 2021", year=2021)


def plan(db):
    """``(paper, a sub-topic to rename, another sub-topic to move the paper to)`` of the sample atlas."""
    atlas = Atlas(db)
    p = next(q for q in atlas.papers if q.title == NET_DNF)
    subs = sorted((t for t in atlas.topics.values() if t.level == 1), key=lambda t: t.id)
    target = next(t for t in subs if t.id != p.topic_id)
    return p, p.topic_id, target.id


def assert_sizes_consistent(atlas):
    """Every sub-topic's size is its number of papers, every area's the sum of its sub-topics'."""
    count: dict[int, int] = {}
    for p in atlas.papers:
        count[p.topic_id] = count.get(p.topic_id, 0) + 1
    for t in atlas.topics.values():
        if t.level == 1:
            assert t.size == count.get(t.id, 0), (t.id, t.label)
        else:
            assert t.size == sum(s.size for s in atlas.subtopics(t.id)), (t.id, t.label)


def assert_edits_shown(db, pid, renamed, target):
    atlas = Atlas(db)
    t = atlas.topics[renamed]
    assert (t.label, t.method) == (MY_LABEL, "edited by reader")
    p = atlas.by_id[pid]
    assert p.topic_id == target and target not in p.secondary_topic_ids and not p.low_confidence
    assert_sizes_consistent(atlas)
    return atlas


def test_rename_and_move_show_at_once_are_published_and_survive_rebuilds(copy_atlas, tmp_path):
    db = copy_atlas()
    p, renamed, target = plan(db)
    before = Atlas(db)
    n_target = before.topics[target].size
    res = cli("edit", "--db", db, "--topic", renamed, "--label", f"  {MY_LABEL} ")
    assert res.exit_code == 0, res.output
    assert f"Topic {renamed} (sub-topic" in res.output and MY_LABEL in res.output
    res = cli("edit", NET_DNF, "--db", db, "--topic", target)
    assert res.exit_code == 0, res.output
    assert f"(#{target}) (moved by reader)" in res.output
    atlas = assert_edits_shown(db, p.id, renamed, target)
    assert atlas.topics[target].size == n_target + 1
    assert f"{MY_LABEL}" in cli("topics", "--db", db).output

    # what publish writes reads the atlas: the reader's label, the paper under its new topic
    data = tmp_path / "atlas.json"
    assert cli("publish", "--db", db, "--format", "json", "-o", data).exit_code == 0
    rec = next(r for r in json.loads(data.read_text()) if r["title"] == NET_DNF)
    assert rec["topic_id"] == target and rec["topic_label"] == atlas.topics[target].label
    site = tmp_path / "site"
    assert cli("publish", "--db", db, "--format", "site", "-o", site).exit_code == 0
    assert any(MY_LABEL in f.read_text(encoding="utf-8") for f in site.rglob("*.html"))

    report = rebuild(db)  # nothing changed: the topics are updated, ids kept
    assert report.topic_edits_not_applied == []
    assert_edits_shown(db, p.id, renamed, target)

    # a refit places every paper afresh (ids matched to the old topics): the move is the reader's, re-applied
    report = build([SAMPLE], db, venue="ICLR 2021", year=2021, refit_topics=True,
                   n_topics=sum(t.level == 1 for t in before.topics.values()),
                   n_areas=sum(t.level == 0 for t in before.topics.values()))
    assert report.topic_mode == "refit" and report.topic_edits_not_applied == []
    assert_edits_shown(db, p.id, renamed, target)

    report = rebuild(db, SAMPLE, EXCERPT)  # a few papers added
    assert report.n_papers > len(before.papers) and report.topic_mode == "update"
    assert report.topic_edits_not_applied == []
    assert_edits_shown(db, p.id, renamed, target)


def test_clear_gives_back_label_and_topic_and_a_gone_topic_is_reported(copy_atlas):
    db = copy_atlas()
    p, renamed, target = plan(db)
    generated = Atlas(db).topics[renamed]
    assert cli("edit", "--db", db, "--topic", renamed, "--label", MY_LABEL).exit_code == 0
    assert cli("edit", "--db", db, "--topic", renamed, "--label", "Something else").exit_code == 0  # twice
    assert cli("edit", NET_DNF, "--db", db, "--topic", target).exit_code == 0

    res = cli("edit", "--db", db, "--topic", renamed, "--clear")
    assert res.exit_code == 0, res.output
    res = cli("edit", NET_DNF, "--db", db, "--clear")
    assert res.exit_code == 0 and "(moved back)" in res.output, res.output
    atlas = Atlas(db)  # at once: the label the build made, the paper where the build put it
    assert (atlas.topics[renamed].label, atlas.topics[renamed].method) == (generated.label, generated.method)
    assert atlas.by_id[p.id].topic_id == p.topic_id
    assert_sizes_consistent(atlas)

    # edits whose topic a later build no longer has (e.g. a refit with fewer topics): kept, named, not applied;
    # and a rename the topics table does not show yet (made while a build ran): the next build applies it
    other = next(q for q in atlas.papers if q.id != p.id)
    with sqlite3.connect(db) as con:
        con.executemany("INSERT INTO overrides (paper_id, field, value, title, edited_at) VALUES (?, ?, ?, ?, ?)",
                        [(topic_key(37), "label", json.dumps({"label": "Gone", "was": "x", "was_method": ""}),
                          None, "2026-01-01T00:00:00"),
                         (topic_key(target), "label", json.dumps({"label": MY_LABEL, "was": "x", "was_method": ""}),
                          None, "2026-01-01T00:00:00"),
                         (other.id, "topic", json.dumps({"topic": 37, "was": other.topic_id}), other.title,
                          "2026-01-01T00:00:00")])
    con.close()
    res = cli("build", SAMPLE, "--db", db, "--venue", "ICLR 2021", "--year", 2021)
    assert res.exit_code == 0, res.output
    assert "1 topic rename not applied: topic 37 no longer exists" in res.output
    assert f"1 paper move not applied: topic 37 no longer exists ({other.title})" in res.output
    atlas = Atlas(db)
    assert atlas.topics[renamed].label == generated.label  # the reset held: the build kept the generated label
    assert (atlas.topics[target].label, atlas.topics[target].method) == (MY_LABEL, "edited by reader")
    assert atlas.by_id[p.id].topic_id == p.topic_id and atlas.by_id[other.id].topic_id == other.topic_id
    assert_sizes_consistent(atlas)
    kept = atlas.con.execute("SELECT paper_id, field FROM overrides ORDER BY field").fetchall()
    assert sorted(tuple(r) for r in kept) == sorted([(topic_key(37), "label"), (topic_key(target), "label"),
                                                     (other.id, "topic")])
    # and the way the note names drops them
    res = cli("edit", "--db", db, "--topic", 37, "--clear")
    assert res.exit_code == 0 and "its kept rename was dropped" in res.output, res.output
    assert cli("edit", other.id, "--db", db, "--clear").exit_code == 0
    atlas = Atlas(db)
    assert [tuple(r) for r in atlas.con.execute("SELECT paper_id, field FROM overrides")] == \
        [(topic_key(target), "label")]
    assert atlas.by_id[other.id].topic_id == other.topic_id


def test_refusals_name_the_way_out(copy_atlas):
    db = copy_atlas()
    atlas = Atlas(db)
    area = next(a for a in atlas.areas() if atlas.subtopics(a.id))
    sub = atlas.subtopics(area.id)[0]
    res = cli("edit", NET_DNF, "--db", db, "--topic", area.id)
    assert res.exit_code == 1 and f"topic {area.id} ({area.label!r}) is an area" in res.output
    assert f"{sub.id} {sub.label!r}" in res.output  # its sub-topics, to choose from
    res = cli("edit", NET_DNF, "--db", db, "--topic", 9999)
    assert res.exit_code == 1 and "no topic 9999 in this atlas (`paperatlas topics` lists the topic ids)" in res.output
    res = cli("edit", "--db", db, "--topic", 9999, "--label", "x")
    assert res.exit_code == 1 and "`paperatlas topics` lists the topic ids" in res.output
    other = next(t for t in atlas.topics.values() if t.id != sub.id)
    res = cli("edit", "--db", db, "--topic", sub.id, "--label", other.label.upper())
    assert res.exit_code == 1 and f"topic {other.id} is already called" in res.output
    res = cli("edit", "--db", db, "--topic", sub.id, "--label", "   ")
    assert res.exit_code == 1 and "the topic label is empty" in res.output
    res = cli("edit", "--db", db, "--topic", sub.id, "--label", "x" * 101)
    assert res.exit_code == 1 and "longer than 100 characters" in res.output
    res = cli("edit", "--db", db, "--topic", sub.id)
    assert res.exit_code == 2 and "--topic ID with --label TEXT (or --clear) to rename a topic" in res.output
    res = cli("edit", NET_DNF, "--db", db, "--topic", sub.id, "--label", "x")
    assert res.exit_code == 2 and "--label renames a topic" in res.output
    after = Atlas(db)  # nothing was written
    assert [(t.id, t.label, t.size) for t in after.topics.values()] == \
        [(t.id, t.label, t.size) for t in atlas.topics.values()]
    assert after.con.execute("SELECT count(*) FROM overrides").fetchone()[0] == 0


def test_web_rename_and_move_and_a_cross_site_post_is_refused(copy_atlas):
    db = copy_atlas()
    p, renamed, target = plan(db)
    client = create_app(db, preload_model=False).test_client()
    page = client.get(f"/topic/{renamed}").get_data(as_text=True)
    assert 'id="renamebox"' in page
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)[1]
    same_site = {"Origin": "http://localhost"}

    # another site's page posting into the reader's browser: refused, nothing written
    evil = client.post(f"/topic/{renamed}/label", data={"label": "pwned", "csrf_token": token},
                       headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403
    no_token = client.post(f"/paper/{p.id}/topic", data={"topic": str(target)}, headers=same_site)
    assert no_token.status_code == 403
    assert Atlas(db).topics[renamed].label != "pwned" and Atlas(db).by_id[p.id].topic_id == p.topic_id

    res = client.post(f"/topic/{renamed}/label", data={"label": MY_LABEL, "csrf_token": token}, headers=same_site)
    assert res.status_code == 302
    page = client.get(f"/topic/{renamed}").get_data(as_text=True)
    assert f"{MY_LABEL}</h1>" in page and "edited by reader" in page and 'id="resetlabel"' in page
    assert f"– {MY_LABEL} (" in client.get("/").get_data(as_text=True)  # the search form's topic menu

    assert client.get("/papers?sort=topic").status_code == 200  # (shared a cache name with the topic pages)
    paper_page = client.get(f"/paper/{p.id}").get_data(as_text=True)
    assert re.search(rf'<option value="{p.topic_id}" selected>', paper_page) and 'id="unmove"' not in paper_page
    res = client.post(f"/paper/{p.id}/topic", data={"topic": str(target), "csrf_token": token}, headers=same_site)
    assert res.status_code == 302
    assert_edits_shown(db, p.id, renamed, target)
    paper_page = client.get(f"/paper/{p.id}").get_data(as_text=True)
    assert f'<option value="{target}" selected>' in paper_page and 'id="unmove"' in paper_page
    assert NET_DNF in client.get(f"/topic/{target}").get_data(as_text=True)
    assert NET_DNF not in client.get(f"/topic/{p.topic_id}").get_data(as_text=True)
    hits = client.get(f"/api/search?topic={target}").get_json()
    assert NET_DNF in json.dumps(hits)

    area = next(t for t in Atlas(db).topics.values() if t.level == 0)
    res = client.post(f"/paper/{p.id}/topic", data={"topic": str(area.id), "csrf_token": token}, headers=same_site)
    assert res.status_code == 400 and "is an area" in res.get_data(as_text=True)

    res = client.post(f"/paper/{p.id}/topic", data={"action": "reset", "csrf_token": token}, headers=same_site)
    assert res.status_code == 302 and Atlas(db).by_id[p.id].topic_id == p.topic_id
    assert NET_DNF in client.get(f"/topic/{p.topic_id}").get_data(as_text=True)


def test_list_export_leaves_topic_edits_out(copy_atlas, tmp_path):
    """Topic ids are this atlas's own: an export (for another atlas) carries the TL;DR, not the move."""
    db = copy_atlas()
    p, _renamed, target = plan(db)
    assert cli("edit", NET_DNF, "--db", db, "--topic", target, "--tldr", "Mine.").exit_code == 0
    out = tmp_path / "list.json"
    assert cli("list", "export", "--db", db, "-o", out).exit_code == 0
    assert [(o["paper_id"], o["field"]) for o in json.loads(out.read_text())["overrides"]] == [(p.id, "tldr")]


def test_browser_rename_and_move_forms(served, browser):
    """In Chromium, through the pages' own forms (token and origin as the browser sends them)."""
    db, base = served
    p, renamed, target = plan(db)
    page = browser.new_page()
    try:
        page.goto(f"{base}/topic/{renamed}")
        page.click("#renamebox summary")
        page.fill("#topiclabel", MY_LABEL)
        page.click("#rename")
        page.wait_for_url(f"{base}/topic/{renamed}")
        assert page.inner_text("h1").strip() == MY_LABEL
        page.goto(f"{base}/paper/{p.id}")
        page.click("#movebox summary")
        page.select_option("#movetopic", str(target))
        page.click("#move")
        page.wait_for_url(f"{base}/paper/{p.id}")
        assert page.locator("#unmove").count() == 1
    finally:
        page.close()
    assert_edits_shown(db, p.id, renamed, target)
