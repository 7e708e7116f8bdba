"""What's new for me: a build that adds a year lists its papers, ranked for the reader's likes, by topic.

Fixtures: 160 NeurIPS 2017 and 200 NeurIPS 2018 papers cut from the shared paperlists JSON (random samples,
seed 7, records unchanged).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from html import unescape

import pytest
from click.testing import CliRunner
from markupsafe import escape

from conftest import FIXTURES, like_biggest_subtopic
from paperatlas import readinglist as rl
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.overrides import override_paper
from paperatlas.store import Atlas
from paperatlas.store.history import builds, first_builds
from paperatlas.web import create_app
from paperatlas.whatsnew import whats_new

Y2017 = FIXTURES / "nips2017_160.json.gz"
Y2018 = FIXTURES / "nips2018_200.json.gz"


@pytest.fixture(scope="module")
def nips_builds(tmp_path_factory):
    """``(first-build atlas, atlas path, liked ids)``: NeurIPS 2017 built (a copy kept as it is then, no likes),
    five papers of its biggest sub-topic liked, 2018 added."""
    db = tmp_path_factory.mktemp("whatsnew") / "nips.db"
    build([Y2017], db)
    first = db.with_name("nips2017.db")
    shutil.copy(db, first)
    liked = like_biggest_subtopic(db)
    build([Y2017, Y2018], db)
    return first, db, liked


@pytest.fixture(scope="module")
def nips(nips_builds):
    """``(atlas path, liked ids)`` of :func:`nips_builds`: 2017 then 2018 built, five 2017 papers liked."""
    return nips_builds[1:]


@pytest.fixture(scope="module")
def nips2017(nips_builds):
    """The atlas after its first build (NeurIPS 2017, 160 papers, every one new), without likes."""
    return nips_builds[0]


def _titles_2018() -> set[str]:
    return {r["title"] for r in json.loads(gzip.decompress(Y2018.read_bytes()))}


def test_the_build_that_adds_a_year_records_exactly_its_papers_as_new(nips):
    db, _ = nips
    atlas = Atlas(db)
    assert [(b.id, b.n_papers, b.n_new) for b in builds(atlas.con)] == [(1, 160, 160), (2, 360, 200)]
    digest = whats_new(atlas, limit=None)
    assert digest.build.id == 2 and digest.n_new == 200 and len(digest.papers) == 200
    assert {n.paper.title for n in digest.papers} == _titles_2018()
    assert [n.rank for n in digest.papers] == list(range(1, 201))


def test_the_digest_ranks_papers_of_the_liked_papers_topic_first_and_the_likes_survive(nips):
    db, liked = nips
    atlas = Atlas(db)
    assert set(rl.ratings(db)[0]) == set(liked)  # the five likes outlived the rebuild
    topics = {atlas.by_id[pid].topic_id for pid in liked}
    digest = whats_new(atlas, limit=10)
    assert digest.n_liked == 5 and all(n.score is not None for n in digest.papers)
    p_at_10 = sum(n.paper.topic_id in topics for n in digest.papers) / 10
    assert p_at_10 >= 0.6, [(n.paper.title, atlas.topic_label(n.paper.topic_id)) for n in digest.papers]
    # grouped by topic, groups in the order of their best paper, each paper with the recommender's reason
    firsts = [members[0].rank for _, members in digest.groups]
    assert firsts == sorted(firsts) and all(n.reason.startswith("close to") for n in digest.papers)


def _tier(p) -> int:
    return 0 if p.status == "Oral" else 1 if p.status == "Spotlight" else 2


def test_without_likes_the_topics_that_grew_come_first_then_the_most_new_papers(nips):
    db, _ = nips
    digest = whats_new(Atlas(db), limit=None, liked=[], disliked=[])
    grown = [g.topic.id for g in digest.grown]
    shown = [t.id if t else None for t, _ in digest.groups]
    assert grown and shown[:len(grown)] == grown
    sizes = [len(members) for _, members in digest.groups[len(grown):]]
    assert digest.n_liked == 0 and sizes == sorted(sizes, reverse=True) and len(digest.papers) == 200
    assert all(n.score is None and n.reason.startswith("new in ") for n in digest.papers)
    assert digest.atlas_growth == pytest.approx(200 / 160) and digest.shown_note == ""  # all of them shown


def test_after_a_first_build_without_likes_the_digest_spreads_over_the_biggest_topics(nips2017):
    atlas = Atlas(nips2017)
    digest = whats_new(atlas, limit=20, liked=[], disliked=[])
    assert digest.everything_new and digest.n_new == 160 and len(digest.papers) == 20 and not digest.grown
    size = {}
    for p in atlas.papers:
        size[p.topic_id] = size.get(p.topic_id, 0) + 1
    assert digest.n_topics == len(size) >= 7
    # a few papers from each of several topics, not the first 20 of the biggest one
    cap = max(3, -(-20 // len(size)))
    shown = [(t.id, members) for t, members in digest.groups]
    assert digest.per_topic == cap and len(shown) >= 20 // cap
    assert all(len(members) <= cap for _, members in shown)
    assert all(len(members) == min(cap, size[tid]) for tid, members in shown[:-1])  # only the last one cut short
    # the biggest topics, biggest first
    by_size = sorted(size, key=lambda tid: (-size[tid], tid))
    assert [tid for tid, _ in shown] == by_size[:len(shown)]
    # in each topic: orals, then spotlights, then posters, each by how central the paper is (poor fits last)
    def key(p):
        return p.low_confidence, _tier(p), -p.topic_confidence

    for tid, members in shown:
        keys = [key(n.paper) for n in members]
        assert keys == sorted(keys) and keys[0] == min(key(p) for p in atlas.papers if p.topic_id == tid)
    assert any(n.paper.status in ("Oral", "Spotlight") for n in digest.papers)
    assert [n.rank for n in digest.papers] == list(range(1, 21))
    note = f"20 of the 160 new papers: up to {cap} from each of {len(shown)} of their {len(size)} topics"
    assert digest.shown_note.startswith(note) and "the best" not in digest.shown_note
    res = CliRunner().invoke(main, ["new", "--db", str(nips2017), "--limit", "20"])
    assert res.exit_code == 0 and f"Listed: {note}" in res.output, res.output
    assert all(atlas.topic_label(tid) in res.output for tid, _ in shown)
    html = create_app(nips2017, preload_model=False).test_client().get("/new", query_string={"k": 20}).get_data(
        as_text=True)
    assert str(escape(digest.shown_note)) in html and "the best 20" not in html
    assert len(re.findall(r'class="newgroup"', html)) == len(shown)
    atlas.close()


def test_a_long_list_without_likes_raises_the_cap_to_fill_it(nips2017):
    atlas = Atlas(nips2017)
    digest = whats_new(atlas, limit=100, liked=[], disliked=[])
    size = {}
    for p in atlas.papers:
        size[p.topic_id] = size.get(p.topic_id, 0) + 1
    cap = digest.per_topic
    # the smallest cap with which the topics hold the 100 papers asked for
    assert len(digest.papers) == 100 and sum(min(cap, n) for n in size.values()) >= 100
    assert cap == 3 or sum(min(cap - 1, n) for n in size.values()) < 100
    assert max(len(members) for _, members in digest.groups) == cap
    atlas.close()


def test_with_likes_the_digest_is_the_recommenders_ranking(nips):
    from paperatlas.recommend import recommend

    db, liked = nips
    atlas = Atlas(db)
    digest = whats_new(atlas, limit=30)
    new_ids = {p.id for p in atlas.papers if first_builds(atlas.con).get(p.id) == 2}
    recs = recommend(atlas, liked, [], k=30, exclude=[pid for pid in atlas.ids if pid not in new_ids])
    assert [n.paper.id for n in digest.papers] == [r.paper.id for r in recs]
    assert [n.score for n in digest.papers] == pytest.approx([r.score for r in recs])
    # not spread: one topic may give as many as the ranking puts there
    assert digest.per_topic is None and digest.shown_note == "the best 30 of 200"
    assert max(len(members) for _, members in digest.groups) > 3
    atlas.close()


def test_topics_that_grew_are_those_beyond_chance(nips):
    from scipy.stats import binomtest

    db, _ = nips
    atlas = Atlas(db)
    digest = whats_new(atlas, liked=[], disliked=[])
    new_ids = {p.id for p in atlas.papers if first_builds(atlas.con).get(p.id) == 2}
    share = 200 / 360
    counts = {}
    for p in atlas.papers:
        if p.topic_id is not None:
            n_new, n_old = counts.get(p.topic_id, (0, 0))
            counts[p.topic_id] = (n_new + (p.id in new_ids), n_old + (p.id not in new_ids))
    more_than_expected = {tid for tid, (n, old) in counts.items() if n - share * (n + old) > 0}
    p_of = {tid: binomtest(n, n + old, share, alternative="greater").pvalue for tid, (n, old) in counts.items()}
    grown = {g.topic.id for g in digest.grown}
    # listed: exactly the topics with p < 0.05; more topics gained some share, by chance
    assert grown == {tid for tid in more_than_expected if p_of[tid] < 0.05}
    assert grown and len(more_than_expected) > len(grown)
    assert all(g.p_value == pytest.approx(p_of[g.topic.id]) for g in digest.grown)
    assert digest.n_tested == sum(n > 0 for n, _ in counts.values())
    assert f"Of the {digest.n_tested} topics with new papers" in digest.growth_note
    html = create_app(db, preload_model=False).test_client().get("/new").get_data(as_text=True)
    assert 'id="growthnote"' in html and all(str(escape(atlas.topic_label(t))) in html for t in grown)
    atlas.close()


def test_a_corrected_title_is_not_announced_again_and_keeps_what_the_reader_wrote(nips, tmp_path):
    db, _ = nips
    copy = tmp_path / "corrected.db"
    shutil.copy(db, copy)
    records = json.loads(gzip.decompress(Y2018.read_bytes()))
    victim = max(records, key=lambda r: (len(r["title"]), r["title"]))
    old = Atlas(copy)
    old_id = next(p.id for p in old.papers if p.title == victim["title"])
    old.close()
    rl.rate(copy, old_id, 1)
    rl.set_note(copy, old_id, "check the appendix")
    rl.add(copy, old_id, "poster session")
    override_paper(copy, old_id, tldr="My own one-line summary.")
    words = victim["title"].split()
    longest = max(range(len(words)), key=lambda i: len(words[i]))
    words[longest] = words[longest][:-1] + ("x" if words[longest][-1] != "x" else "y")  # a typo, later fixed
    victim["title"] = " ".join(words)
    fixed = tmp_path / "nips2018_fixed.json"
    fixed.write_text(json.dumps(records), encoding="utf-8")
    build([Y2017, fixed], copy)
    atlas = Atlas(copy)
    new_id = next(p.id for p in atlas.papers if p.title == victim["title"])
    assert new_id != old_id and first_builds(atlas.con)[new_id] == 2
    assert builds(atlas.con)[-1].n_new == 0
    digest = whats_new(atlas, limit=None)  # still the build that added 2018, the corrected paper in it once
    assert digest.build.id == 2 and [n.paper.id for n in digest.papers].count(new_id) == 1
    mine = {e.paper_id: e for e in rl.entries(copy)}[new_id]
    assert mine.rating == 1 and mine.note == "check the appendix" and "poster session" in mine.lists
    assert atlas.by_id[new_id].tldr == "My own one-line summary."


def test_the_cli_the_exports_and_the_web_page_show_the_same_digest(nips, tmp_path):
    db, _ = nips
    atlas = Atlas(db)
    digest = whats_new(atlas, limit=5)
    top = [n.paper for _, members in digest.groups for n in members]  # as shown: by topic, best group first
    res = CliRunner().invoke(main, ["new", "--db", str(db), "--limit", "5"])
    assert res.exit_code == 0, res.output
    assert "Build 2" in res.output and "200 new papers of 360, ranked for your 5 liked papers" in res.output
    shown = [t for t in (p.title for p in top) if t in res.output]
    assert shown == [p.title for p in top]
    md = tmp_path / "new.md"
    assert CliRunner().invoke(main, ["publish", "--format", "new-md", "-o", str(md), "--db", str(db)]).exit_code == 0
    text = md.read_text(encoding="utf-8")
    positions = [text.index(p.title) for p in top]
    assert text.startswith("# What’s new") and "## Topics that grew" in text and positions == sorted(positions)
    page = tmp_path / "new.html"
    res = CliRunner().invoke(main, ["publish", "--format", "new-html", "-o", str(page), "--db", str(db)])
    assert res.exit_code == 0, res.output
    html_page = page.read_text(encoding="utf-8")
    assert re.search(r"<h1[^>]*>What’s new</h1>", html_page) and "<script" not in html_page
    shown_text = unescape(html_page)  # the page leaves ' as it is, markupsafe would write &#39;
    assert [shown_text.index(p.title) for p in top] == sorted(shown_text.index(p.title) for p in top)
    client = create_app(db, preload_model=False).test_client()
    html = client.get("/new", query_string={"k": 5}).get_data(as_text=True)
    titles = re.findall(r'class="ptitle" href="[^"]+">([^<]+)</a>', html)
    assert titles == [str(escape(p.title)) for p in top]
    assert client.get("/new", query_string={"build": 9}).status_code == 404


def test_after_the_first_build_every_paper_is_new_and_the_page_says_why(sample_atlas):
    atlas = Atlas(sample_atlas)
    try:
        digest = whats_new(atlas, limit=None)
        n = len(atlas.papers)
    finally:
        atlas.close()
    assert digest.everything_new and digest.n_new == n == 60
    assert "Build again with a newer listing" in digest.everything_new_note
    html = create_app(sample_atlas, preload_model=False).test_client().get("/new").get_data(as_text=True)
    assert 'id="everythingnew"' in html and f"so all {n} are new" in html
    res = CliRunner().invoke(main, ["new", "--db", str(sample_atlas), "--limit", "3"])
    assert res.exit_code == 0 and f"so all {n} are new" in res.output


def test_a_build_that_adds_papers_is_not_called_everything_new(nips):
    atlas = Atlas(nips[0])
    try:
        digest = whats_new(atlas)
    finally:
        atlas.close()
    assert not digest.everything_new and digest.everything_new_note == ""
    html = create_app(nips[0], preload_model=False).test_client().get("/new").get_data(as_text=True)
    assert 'id="everythingnew"' not in html
