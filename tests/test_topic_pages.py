"""Topic pages: the web app's table of contents and topic pages, and ``publish --format topics-md``."""

from __future__ import annotations

import html as htmllib
import re

import pytest
from click.testing import CliRunner
from markupsafe import escape

from paperatlas.cli import main
from paperatlas.model import STATUSES as STATUS_ORDER
from paperatlas.store import Atlas
from paperatlas.topics import nearest_topics, topic_members
from paperatlas.web import create_app


@pytest.fixture(scope="module")
def atlas(sample_atlas):
    return Atlas(sample_atlas)


@pytest.fixture(scope="module")
def client(sample_atlas):
    return create_app(sample_atlas, preload_model=False).test_client()


def _titles(html: str, list_id: str) -> list[str]:
    block = re.search(rf'<ol class="results" id="{list_id}">(.*?)</ol>', html, re.S)
    if not block:
        return []
    found = re.findall(r'class="ptitle"[^>]*>(.*?)</a>', block.group(1))
    return [htmllib.unescape(re.sub(r"<.*?>", "", t)) for t in found]


def test_topics_page_is_a_table_of_contents(client, atlas):
    html = client.get("/topics").get_data(as_text=True)
    rows = re.findall(r'<tr class="(area|sub)">.*?<a href="/topic/(\d+)"', html, re.S)
    areas = atlas.areas()
    assert [int(tid) for kind, tid in rows if kind == "area"] == [a.id for a in areas]
    # each area row is followed by exactly its sub-topics, largest first
    expected = []
    for a in areas:
        expected += [("area", a.id)] + [("sub", t.id) for t in atlas.subtopics(a.id)]
    assert [(kind, int(tid)) for kind, tid in rows] == expected


def test_subtopic_page_lists_its_papers_oral_first_with_keyphrases_and_nearest_topics(client, atlas):
    sub = max((t for t in atlas.topics.values() if t.level == 1), key=lambda t: t.size)
    html = client.get(f"/topic/{sub.id}").get_data(as_text=True)
    members, _ = topic_members(atlas, sub.id)
    assert _titles(html, "members") == [p.title for p in members]
    ranks = [STATUS_ORDER.index(p.status) if p.status in STATUS_ORDER else 3 for p in members]
    assert ranks == sorted(ranks) and len(members) == sub.size
    # the header counts the topic's own papers by status ("also relevant" papers are not among them)
    meta = re.search(r'<p class="meta">(.*?)</p>', html).group(1)
    counts = {s: int(n) for n, s in re.findall(r"(\d+) (Oral|Spotlight|Poster)", meta)}
    assert counts == {s: n for s in STATUS_ORDER if (n := sum(p.status == s for p in members))}
    assert all(k in htmllib.unescape(html) for k in sub.keyphrases[:3])
    area = atlas.topics[sub.parent_id]
    assert f'href="/topic/{area.id}">{escape(area.label)}</a>' in html  # breadcrumb to its area
    near = nearest_topics(atlas, sub.id, k=5)
    assert near and all(t.level == 1 and t.id != sub.id for t, _ in near)
    assert all(f'href="/topic/{t.id}"' in html for t, _ in near)


def test_area_page_shows_subtopics_and_all_their_papers(client, atlas):
    area = atlas.areas()[0]
    html = client.get(f"/topic/{area.id}").get_data(as_text=True)
    assert "Sub-topics" in html
    assert all(f'href="/topic/{t.id}">{escape(t.label)}</a>' in html for t in atlas.subtopics(area.id))
    assert len(_titles(html, "members")) == area.size
    # the search filter on an area finds the papers of its sub-topics
    res = client.get(f"/api/search?topic={area.id}&k=200").get_json()
    assert len(res["results"]) == area.size
    assert client.get("/topic/999999").status_code == 404


def test_paper_page_names_area_and_topic(client, atlas):
    p = atlas.papers[0]
    html = client.get(f"/paper/{p.id}").get_data(as_text=True)
    sub = atlas.topics[p.topic_id]
    assert f'href="/topic/{sub.parent_id}">' in html and f'href="/topic/{sub.id}">' in html


def test_publish_topics_md(sample_atlas, atlas, tmp_path):
    out = tmp_path / "topics.md"
    res = CliRunner().invoke(main, ["publish", "--db", str(sample_atlas), "--format", "topics-md", "-o", str(out)])
    assert res.exit_code == 0, res.output
    md = out.read_text()
    toc = md.split("## Table of Contents", 1)[1].split("\n## ", 1)[0]
    for a in atlas.areas():
        assert f"- [{a.label}](#" in toc
        for t in atlas.subtopics(a.id):
            assert f"  - [{t.label}](#" in toc and f"\n### {t.label}\n" in md
    # every paper listed exactly once as a member (secondary mentions come under "Also relevant")
    body = re.sub(r"Also relevant \(filed under another topic\):\n\n(?:(?:- |  - ).*\n?)+", "", md)
    listed = [line[2:] for line in body.splitlines() if line.startswith("- ") and not line.startswith("- [")]
    assert len(listed) == len(atlas.papers)
    # Oral papers come before posters inside a topic
    first = next(t for t in atlas.topics.values() if t.level == 1)
    section = md.split(f"\n### {first.label}\n", 1)[1].split("\n### ", 1)[0]
    assert "Nearest topics:" in section and "Top keyphrases:" in section
