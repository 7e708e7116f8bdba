"""Topic overviews (issue 29 part 3): every area and sub-topic gets 2-4 cited sentences copied from its own papers,
stored in the atlas, made again only when the topic changes, editable by the reader, shown on the topic page."""

from __future__ import annotations

import json
import re
import sqlite3

import numpy as np
from click.testing import CliRunner

from conftest import FIXTURES, SAMPLE
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.enrich import overview
from paperatlas.model import Topic
from paperatlas.store import Atlas
from paperatlas.text import content_words, jaccard
from paperatlas.vocab import STOP
from paperatlas.web import create_app

EXCERPT = FIXTURES / "iclr2021_excerpt.md"  # 12 ICLR 2021 papers, 7 of them not in the sample
MY_OVERVIEW = "These papers ask when networks generalize [1] and how to train them online [2]."
_CITE = re.compile(r"\s*\[(\d+)\]")


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def rebuild(db, *listings):
    return build(list(listings or [SAMPLE]), db, venue="ICLR 2021", year=2021)


def sentences(text: str) -> list[tuple[str, int]]:
    """``(sentence, n)`` of an overview whose every sentence is followed by ``[n]``."""
    parts = _CITE.split(text.strip())
    assert parts[-1] == "", f"the overview does not end with a citation: {text!r}"
    return [(parts[i].strip(), int(parts[i + 1])) for i in range(0, len(parts) - 1, 2)]


def members(atlas: Atlas, t: Topic) -> set[str]:
    subs = {s.id for s in atlas.subtopics(t.id)} if t.level == 0 else set()
    return {p.id for p in atlas.papers if p.topic_id == t.id or p.topic_id in subs}


def flat(text: str) -> str:
    return " ".join((text or "").split())


def assert_cited_from_its_own_papers(atlas: Atlas, t: Topic, ov_text: str, ov_papers: list[str]) -> None:
    got = sentences(ov_text)
    assert 2 <= len(got) <= 4, (t.id, t.label, ov_text)
    assert len(set(ov_papers)) == len(ov_papers) == len(got)  # one sentence per paper, each paper cited once
    assert [n for _, n in got] == list(range(1, len(got) + 1))
    own = members(atlas, t)
    for text, n in got:
        p = atlas.by_id[ov_papers[n - 1]]
        assert p.id in own, (t.label, p.title)
        assert text in flat(p.tldr) or text in flat(p.abstract), (text, p.title)
    words = [content_words(s, STOP) for s, _ in got]
    assert all(jaccard(a, b) <= overview.REDUNDANCY_MAX_JACCARD for i, a in enumerate(words) for b in words[i + 1:])


def test_every_topic_gets_two_to_four_sentences_verbatim_from_its_own_cited_papers(sample_atlas):
    atlas = Atlas(sample_atlas)
    assert atlas.topics
    for t in atlas.topics.values():
        assert t.overview_method == "extractive"
        assert_cited_from_its_own_papers(atlas, t, t.overview, t.overview_papers)
    stored = atlas.con.execute("SELECT count(*) FROM topics WHERE length(overview_key) = 40").fetchone()[0]
    assert stored == len(atlas.topics)


def test_an_area_cites_papers_of_several_of_its_sub_topics_and_prefers_orals(sample_atlas):
    """An area made of two real sub-topics of the sample: its overview draws on both."""
    atlas = Atlas(sample_atlas)
    papers = [atlas.by_id[i] for i in atlas.ids]
    a, b = sorted((t for t in atlas.topics.values() if t.level == 1), key=lambda t: -t.size)[:2]
    area = Topic(id=999, label=f"{a.label} and {b.label}", keyphrases=a.keyphrases[:5] + b.keyphrases[:5], level=0)
    subs = [Topic(id=t.id, label=t.label, keyphrases=t.keyphrases, parent_id=999) for t in (a, b)]
    got = overview.compute_overviews([area, *subs], papers, atlas.vectors)
    sub_of = {p.id: p.topic_id for p in papers}
    assert {sub_of[pid] for pid in got[999].papers} == {a.id, b.id}
    assert got[999].text == overview.compute_overviews([area, *subs], papers, atlas.vectors)[999].text  # same twice

    # a twin of a cited paper (same text, same vector) that is an Oral is cited in its place
    import dataclasses

    cited = papers[atlas.row_of[got[a.id].papers[0]]]
    cited.status = "Poster"
    twin = dataclasses.replace(cited, id="oral-twin", status="Oral")
    vectors = np.vstack([atlas.vectors, atlas.vectors[atlas.row_of[cited.id]][None, :]])
    again = overview.compute_overviews(subs, [*papers, twin], vectors)[a.id]
    assert "oral-twin" in again.papers and cited.id not in again.papers


def test_no_vectors_and_one_paper_topics_still_give_cited_verbatim_sentences(sample_atlas):
    atlas = Atlas(sample_atlas)
    papers = [atlas.by_id[i] for i in atlas.ids]
    topics = list(atlas.topics.values())
    got = overview.compute_overviews(topics, papers, np.zeros((0, 0), np.float32))
    for t in topics:
        assert_cited_from_its_own_papers(atlas, t, got[t.id].text, got[t.id].papers)
    lone = Topic(id=500, label=papers[0].title, parent_id=None, level=1)
    one = overview.compute_overview(lone, [0], papers, atlas.vectors)
    assert len(one.papers) <= 1 and one.papers in ([], [papers[0].id])
    assert overview.compute_overview(lone, [], papers, atlas.vectors).text == ""


def test_a_rebuild_that_changes_no_topic_computes_no_overview(copy_atlas, monkeypatch):
    db = copy_atlas()
    before = Atlas(db)
    keys = dict(before.con.execute("SELECT id, overview_key FROM topics").fetchall())
    texts = {t.id: (t.overview, t.overview_papers) for t in before.topics.values()}
    calls = []
    real = overview.compute_overview
    monkeypatch.setattr(overview, "compute_overview", lambda t, *a, **k: calls.append(t.id) or real(t, *a, **k))
    report = rebuild(db)
    assert calls == [] and report.n_overviews_computed == 0 and "overviews" in report.stage_seconds
    after = Atlas(db)
    assert dict(after.con.execute("SELECT id, overview_key FROM topics").fetchall()) == keys
    assert {t.id: (t.overview, t.overview_papers) for t in after.topics.values()} == texts


def test_a_topic_that_gained_papers_gets_a_fresh_overview_and_the_others_keep_theirs(copy_atlas, monkeypatch):
    db = copy_atlas()
    before = Atlas(db)
    old_members = {t.id: (t.label, members(before, t)) for t in before.topics.values()}
    old_text = {t.id: t.overview for t in before.topics.values()}
    calls = []
    real = overview.compute_overview
    monkeypatch.setattr(overview, "compute_overview", lambda t, *a, **k: calls.append(t.id) or real(t, *a, **k))
    report = rebuild(db, SAMPLE, EXCERPT)
    after = Atlas(db)
    changed = {t.id for t in after.topics.values() if old_members.get(t.id) != (t.label, members(after, t))}
    assert changed, "the 7 new papers joined no topic"
    assert sorted(calls) == sorted(changed) and report.n_overviews_computed == len(changed)
    for t in after.topics.values():
        assert_cited_from_its_own_papers(after, t, t.overview, t.overview_papers)
        if t.id not in changed:
            assert t.overview == old_text[t.id]


def test_the_readers_overview_wins_over_rebuilds_and_clear_brings_the_computed_one_back(copy_atlas):
    db = copy_atlas()
    t = next(t for t in Atlas(db).topics.values() if t.level == 1)
    computed = (t.overview, t.overview_papers)
    res = cli("edit", "--db", db, "--topic", t.id, "--overview", MY_OVERVIEW)
    assert res.exit_code == 0 and MY_OVERVIEW in res.output, res.output
    shown = Atlas(db).topics[t.id]
    assert (shown.overview, shown.overview_method) == (MY_OVERVIEW, "edit")
    assert shown.overview_papers == computed[1]  # its [1] and [2] still cite the computed overview's papers

    rebuild(db)
    kept = Atlas(db).topics[t.id]
    assert (kept.overview, kept.overview_papers, kept.overview_method) == (MY_OVERVIEW, computed[1], "edit")

    res = cli("edit", "--db", db, "--topic", t.id, "--overview", "No citations in my words at all [9].")
    assert res.exit_code == 0, res.output
    assert Atlas(db).topics[t.id].overview_papers == []  # a [n] the cited papers do not have: plain text

    res = cli("edit", "--db", db, "--topic", t.id, "--clear")
    assert res.exit_code == 0 and "generated label and overview again" in res.output, res.output
    back = Atlas(db).topics[t.id]
    assert (back.overview, back.overview_papers, back.overview_method) == (*computed, "extractive")
    rebuild(db)
    assert Atlas(db).topics[t.id].overview == computed[0]


def test_an_overview_edit_is_refused_when_empty_too_long_or_of_no_topic(copy_atlas):
    db = copy_atlas()
    t = next(iter(Atlas(db).topics.values()))
    for args, why in ((["--overview", "   "], "empty"), (["--overview", "x" * 2001], "longer than 2,000"),
                      (["--overview", "Mine [1]."], "no topic 424242")):
        tid = 424242 if "no topic" in why else t.id
        res = cli("edit", "--db", db, "--topic", tid, *args)
        assert res.exit_code == 1 and why in res.output and "Traceback" not in res.output, res.output
    res = cli("edit", "Some paper", "--db", db, "--overview", "Mine.")
    assert res.exit_code == 2 and "without PAPER" in res.output
    assert Atlas(db).topics[t.id].overview_method == "extractive"


def test_list_export_leaves_the_overview_edit_out(copy_atlas, tmp_path):
    db = copy_atlas()
    t = next(iter(Atlas(db).topics.values()))
    assert cli("edit", "--db", db, "--topic", t.id, "--overview", MY_OVERVIEW).exit_code == 0
    out = tmp_path / "list.json"
    assert cli("list", "export", "--db", db, "-o", out).exit_code == 0
    assert json.loads(out.read_text())["overrides"] == []


def test_an_atlas_made_before_overviews_opens_and_its_next_build_makes_them(copy_atlas):
    db = copy_atlas()
    con = sqlite3.connect(db)
    for col in ("overview", "overview_papers", "overview_method", "overview_key"):
        con.execute(f"ALTER TABLE topics DROP COLUMN {col}")
    con.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    old = Atlas(db)
    assert old.topics and all(t.overview == "" and t.overview_papers == [] for t in old.topics.values())
    report = rebuild(db)
    assert report.n_overviews_computed == len(old.topics)
    assert all(t.overview_method == "extractive" for t in Atlas(db).topics.values())


def test_the_topic_page_shows_the_overview_with_links_and_takes_the_readers_own(copy_atlas):
    db = copy_atlas()
    t = next(t for t in Atlas(db).topics.values() if t.level == 1)
    client = create_app(db, preload_model=False).test_client()
    page = client.get(f"/topic/{t.id}").get_data(as_text=True)
    top = page[page.index('id="overview"'):page.index('id="topicnav"')]
    for n, pid in enumerate(t.overview_papers, 1):
        assert f'href="/paper/{pid}"' in top and f">[{n}]</a>" in top
    first = sentences(t.overview)[0][0]
    assert first.split()[0] in top and 'id="overviewcited"' in top

    token = re.search(r'name="csrf_token" value="([^"]+)"', page)[1]
    evil = client.post(f"/topic/{t.id}/overview", data={"overview": "pwned", "csrf_token": token},
                       headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403 and Atlas(db).topics[t.id].overview == t.overview
    res = client.post(f"/topic/{t.id}/overview", data={"overview": MY_OVERVIEW, "csrf_token": token},
                      headers={"Origin": "http://localhost"})
    assert res.status_code == 302
    page = client.get(f"/topic/{t.id}").get_data(as_text=True)
    assert "These papers ask when networks generalize <a class=\"cite\"" in page and 'id="resetoverview"' in page
    assert Atlas(db).topics[t.id].overview == MY_OVERVIEW
    res = client.post(f"/topic/{t.id}/overview", data={"action": "reset", "csrf_token": token},
                      headers={"Origin": "http://localhost"})
    assert res.status_code == 302 and Atlas(db).topics[t.id].overview == t.overview


def test_a_paper_moved_out_of_a_topic_leaves_its_overview_at_once_and_comes_back_on_undo(copy_atlas):
    db = copy_atlas()
    atlas = Atlas(db)
    sub = next(t for t in atlas.topics.values() if t.level == 1 and len(t.overview_papers) >= 3)
    moved = sub.overview_papers[0]
    target = next(t for t in atlas.topics.values() if t.level == 1 and t.id != sub.id and t.parent_id != sub.parent_id)
    assert cli("edit", moved, "--db", db, "--topic", target.id).exit_code == 0
    left = Atlas(db).topics[sub.id]
    assert moved not in left.overview_papers and len(left.overview_papers) == len(sub.overview_papers) - 1
    assert_cited_from_its_own_papers(Atlas(db), left, left.overview, left.overview_papers)
    assert cli("edit", moved, "--db", db, "--clear").exit_code == 0  # moved back: the next build makes it anew
    rebuild(db)
    assert Atlas(db).topics[sub.id].overview == sub.overview


def test_awesome_list_entries_without_abstracts_get_an_overview_from_their_digests():
    """Seed 004's entries have a curator's digest and no abstract: a topic of them is overviewed from the digests
    (before, such topics got no overview at all)."""
    from paperatlas.sources.awesome_md import read_text

    path = FIXTURES / "awesome_topics.txt"
    papers = [p for p in read_text(path.read_text(encoding="utf-8"), str(path)) if p.digest][:12]
    assert len(papers) == 12 and not any(p.abstract for p in papers)
    for i, p in enumerate(papers):  # a build gives ids; the reader alone does not
        p.id = f"awesome-{i}"
    t = Topic(id=7, label="Neural collapse", keyphrases=["neural collapse", "representations"], level=1)
    got = overview.compute_overview(t, list(range(len(papers))), papers, np.zeros((0, 0), np.float32))
    assert 2 <= len(got.sentences) <= 4
    by_id = {p.id: p for p in papers}
    for s in got.sentences:
        assert s.source == "digest" and flat(s.text) in flat(by_id[s.paper_id].digest)
