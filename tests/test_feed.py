"""The Atom feed of what the last builds added (issue 29, part 4): ``publish --format atom`` and ``/feed.atom``.

Fixture: the NeurIPS 2017 (160 papers) then 2018 (200 papers) two-build atlas of tests/test_whats_new.py (records cut
from the shared paperlists JSON), five 2017 papers liked; every feed is parsed with ``feedparser``.
"""

from __future__ import annotations

import gzip
import json
import shutil

import feedparser
import pytest
from click.testing import CliRunner

from conftest import FIXTURES, like_biggest_subtopic
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.store import Atlas
from paperatlas.web import create_app
from paperatlas.whatsnew import whats_new

Y2017 = FIXTURES / "nips2017_160.json.gz"
Y2018 = FIXTURES / "nips2018_200.json.gz"
TOKEN = "feed-reader-token-0123456789"


@pytest.fixture(scope="module")
def nips(tmp_path_factory):
    """The atlas path: NeurIPS 2017 built, five papers of its biggest sub-topic liked, 2018 added."""
    db = tmp_path_factory.mktemp("feed") / "nips.db"
    build([Y2017], db)
    like_biggest_subtopic(db)
    build([Y2017, Y2018], db)
    return db


def _publish(db, tmp_path, name: str, *args: str):
    out = tmp_path / name
    res = CliRunner().invoke(main, ["publish", "--db", str(db), "--format", "atom", "-o", str(out), *args])
    assert res.exit_code == 0, res.output
    return feedparser.parse(out.read_bytes()), res.output


def test_the_feed_carries_the_new_papers_ranked_for_the_likes_with_tldrs_as_summaries(nips, tmp_path):
    feed, said = _publish(nips, tmp_path, "a.atom")
    assert feed.bozo == 0, feed.get("bozo_exception")
    assert feed.version == "atom10"
    titles_2018 = {r["title"] for r in json.loads(gzip.decompress(Y2018.read_bytes()))}
    atlas = Atlas(nips)
    digest = whats_new(atlas, limit=None)  # the last build: 2018's 200 papers, ranked for the five likes
    # the newest build first, in the What's new order, at most 100 entries (the rest of 2018, then 2017)
    assert [e.title for e in feed.entries] == [n.paper.title for n in digest.papers][:100]
    assert {e.title for e in feed.entries} <= titles_2018 and "100 entries" in said
    by_title = {p.title: p for p in atlas.papers}
    for e in feed.entries:
        p = by_title[e.title]
        assert e.summary == p.tldr and p.tldr
        assert e.link.startswith("https://") and e.id.startswith("tag:") and p.id.split(":")[-1] in e.id
    assert len({e.id for e in feed.entries}) == len(feed.entries)


def test_entry_ids_are_the_same_in_every_publish(nips, tmp_path):
    first, _ = _publish(nips, tmp_path, "1.atom")
    again, _ = _publish(nips, tmp_path, "2.atom", "--title", "Mine")
    assert again.feed.title.startswith("Mine")
    assert [e.id for e in first.entries] == [e.id for e in again.entries]
    assert first.feed.id == again.feed.id


def test_topic_and_query_narrow_the_feed(nips, tmp_path):
    atlas = Atlas(nips)
    new = {n.paper.title: n.paper for n in whats_new(atlas, limit=None).papers}
    topic = max((t for t in atlas.topics.values() if t.level == 1),
                key=lambda t: sum(p.topic_id == t.id for p in new.values()))
    feed, _ = _publish(nips, tmp_path, "t.atom", "--topic", str(topic.id))
    assert feed.bozo == 0 and feed.entries
    every = {p.title: p for p in atlas.papers}
    assert {every[e.title].topic_id for e in feed.entries} == {topic.id}
    assert feed.feed.title == f"What’s new — topic {topic.label}"  # the label, not the id the reader typed
    n_new = sum(p.topic_id == topic.id for p in new.values())
    # the topic's 2018 papers first (the last build), then its 2017 papers (the build before)
    assert [e.title in new for e in feed.entries] == [True] * n_new + [False] * (len(feed.entries) - n_new)
    assert len(feed.entries) == min(100, sum(p.topic_id == topic.id for p in atlas.papers))
    assert feed.entries[0].tags[0].term == atlas.topic_label(topic.id)

    feed, _ = _publish(nips, tmp_path, "q.atom", "--query", "reinforcement learning")
    assert feed.bozo == 0 and feed.entries
    got = [every[e.title] for e in feed.entries]
    assert len(got) < 100
    assert all("reinforcement" in (p.title + " " + p.abstract).lower() for p in got)

    res = CliRunner().invoke(main, ["publish", "--db", str(nips), "--format", "atom", "-o", str(tmp_path / "x"),
                                    "--topic", "no such topic at all"])
    assert res.exit_code != 0 and "no topic" in res.output
    res = CliRunner().invoke(main, ["publish", "--db", str(nips), "--format", "csv", "-o", str(tmp_path / "y"),
                                    "--query", "x"])
    assert res.exit_code != 0 and "--format atom" in res.output


def test_the_web_app_serves_the_feed(nips, tmp_path):
    client = create_app(nips, preload_model=False).test_client()
    res = client.get("/feed.atom")
    assert res.status_code == 200 and res.mimetype == "application/atom+xml"
    feed = feedparser.parse(res.data)
    published, _ = _publish(nips, tmp_path, "w.atom")
    assert feed.bozo == 0 and [e.id for e in feed.entries] == [e.id for e in published.entries]
    q = feedparser.parse(client.get("/feed.atom", query_string={"query": "reinforcement learning"}).data)
    assert q.bozo == 0 and 0 < len(q.entries) < len(feed.entries)
    assert client.get("/feed.atom", query_string={"topic": "no such topic at all"}).status_code == 404


def test_a_feed_reader_on_a_lan_host_fetches_the_feed_with_the_token_in_its_url(nips):
    app = create_app(nips, preload_model=False, allowed_hosts=("192.168.1.5",), access_token=TOKEN)
    host = {"Host": "192.168.1.5:8000"}
    reader = app.test_client(use_cookies=False)  # a feed reader keeps no session
    assert reader.get("/feed.atom", headers=host).status_code == 401
    assert reader.get("/feed.atom", query_string={"token": "wrong-token-0123456789"}, headers=host).status_code == 401
    for _ in range(2):  # answered directly every time: no redirect to a URL without the token
        res = reader.get("/feed.atom", query_string={"token": TOKEN}, headers=host)
        assert res.status_code == 200 and res.mimetype == "application/atom+xml"
        feed = feedparser.parse(res.data)
        assert feed.bozo == 0 and feed.entries
        assert TOKEN not in res.get_data(as_text=True)  # the self link does not repeat it
    # the token opens only the feed: another page still sends the browser through the session redirect
    assert reader.get("/new", query_string={"token": TOKEN}, headers=host).status_code == 302


def test_entry_ids_do_not_depend_on_the_atlas_file(nips, tmp_path):
    copy = shutil.copy(nips, tmp_path / "other.db")
    feed, _ = _publish(nips, tmp_path, "a.atom")
    again, _ = _publish(copy, tmp_path, "b.atom")
    assert [e.id for e in again.entries] == [e.id for e in feed.entries]


def test_a_tldr_with_markup_and_control_characters_stays_valid_atom(nips, tmp_path):
    from paperatlas.overrides import override_paper

    copy = shutil.copy(nips, tmp_path / "edited.db")
    first = whats_new(Atlas(copy), limit=None).papers[0].paper
    override_paper(copy, first.id, tldr="Beats <b>all</b> & more ]]> \x0bfast")
    feed, _ = _publish(copy, tmp_path, "e.atom")
    assert feed.bozo == 0, feed.get("bozo_exception")
    assert feed.entries[0].summary == "Beats <b>all</b> & more ]]> fast"
