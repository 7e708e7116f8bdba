"""A request's work is bounded by its page, not by the atlas (issue 26, part 7): topic pages come in pages, the
status/topic filters of a listing read per-atlas indexes with the same results as the predicate over every paper,
the topic menu is made once with the same options, and the warm-up finishes under a steady load.

Behaviour only; the speed is measured by ``benchmarks/web_load.py`` (docs/scale.md).
"""

from __future__ import annotations

import html as htmllib
import re
import threading

import numpy as np
import pytest
from flask import Flask

from paperatlas.search import search_results
from paperatlas.search.engine import _passing
from paperatlas.store import Atlas
from paperatlas.topics import topic_members
from paperatlas.web import create_app
from paperatlas.web.busy import request_gate
from paperatlas.web.search_views import FacetFilters


@pytest.fixture(scope="module")
def app_atlas(sample_atlas):
    return create_app(sample_atlas, preload_model=False), Atlas(sample_atlas)


def _titles(html: str, list_id: str) -> list[str]:
    block = re.search(rf'<ol class="results" id="{list_id}"[^>]*>(.*?)</ol>', html, re.S)
    found = re.findall(r'class="ptitle"[^>]*>(.*?)</a>', block.group(1)) if block else []
    return [htmllib.unescape(re.sub(r"<.*?>", "", t)) for t in found]


def test_topic_page_lists_its_papers_in_pages(app_atlas, monkeypatch):
    app, atlas = app_atlas
    monkeypatch.setattr("paperatlas.web.search_views.PAGE_SIZE", 4)
    area = atlas.areas()[0]
    members, _ = topic_members(atlas, area.id)
    assert len(members) > 8
    client = app.test_client()
    pages, n = [], 1
    while True:
        html = client.get(f"/topic/{area.id}?page={n}").get_data(as_text=True)
        got = _titles(html, "members")
        if n > 1 and got == pages[-1]:  # past the last page: the last page again
            break
        assert 0 < len(got) <= 4 and f"{len(members):,}" in html
        pages.append(got)
        n += 1
    assert [t for page in pages for t in page] == [p.title for p in members]  # every paper once, in order
    assert 'class="pager"' in client.get(f"/topic/{area.id}").get_data(as_text=True)
    everything = client.get(f"/topic/{area.id}?show=all").get_data(as_text=True)
    assert _titles(everything, "members") == [p.title for p in members]


def test_topic_page_shows_at_most_a_page_of_also_relevant_papers(app_atlas, monkeypatch):
    app, atlas = app_atlas
    monkeypatch.setattr("paperatlas.web.paper_views.PAGE_SIZE", 1)
    with_also = [(t, topic_members(atlas, t.id)[1]) for t in atlas.topics.values() if t.level == 1]
    sub, also = max(with_also, key=lambda ta: len(ta[1]))
    if not also:
        pytest.skip("no sub-topic of the sample atlas has a secondary paper")
    client = app.test_client()
    html = client.get(f"/topic/{sub.id}").get_data(as_text=True)
    assert _titles(html, "also") == [also[0].title]
    assert _titles(client.get(f"/topic/{sub.id}?show=all").get_data(as_text=True), "also") == \
        [p.title for p in also]


@pytest.mark.parametrize("status", [[], ["Oral"], ["oral", "Poster"], ["Spotlight"], [" "], ["nope"]])
def test_filtered_listing_is_the_predicate_over_every_paper(app_atlas, status):
    _, atlas = app_atlas
    topics = ["", " ", "learning", "999999", *(str(t) for t in list(atlas.topics)[:4])]
    for topic in topics:
        for extra in ({}, {"min_rating": 5.0}, {"year": (2019, 2021)}, {"has_code": True}):
            flt = FacetFilters(status=status, topic=topic, **extra)
            if not flt.any():
                continue
            got = search_results(atlas, "", filters=flt).hits
            want = _passing(atlas, np.arange(len(atlas.papers)), flt.matcher(atlas))
            assert [h.paper.id for h in got] == [atlas.papers[i].id for i in want], (status, topic, extra)


def test_topic_menu_lists_every_topic_and_selects_the_asked_one(app_atlas):
    app, atlas = app_atlas
    client = app.test_client()
    expected = [str(t.id) for a in atlas.areas() for t in [a, *atlas.subtopics(a.id)]]
    sub = next(t for t in atlas.topics.values() if t.level == 1)
    for url, selected in (("/", []), (f"/?topic={sub.id}", [str(sub.id)]), ("/?topic=99999", []),
                          ("/?topic=%22%3E%3Cscript%3E", [])):
        html = client.get(url).get_data(as_text=True)
        menu = re.search(r'<select name="topic"[^>]*>(.*?)</select>', html, re.S).group(1)
        assert re.findall(r'<option value="(\d+)"', menu) == expected
        assert re.findall(r'<option value="(\d*)"[^>]*selected', menu) == selected
        assert "<script>" not in menu
    label = htmllib.unescape(re.search(rf'<option value="{sub.id}"[^>]*>(.*?)</option>',
                                       client.get("/").get_data(as_text=True)).group(1))
    assert label == f"\u00a0\u00a0– {sub.label} ({sub.size})"


def test_a_warm_up_pause_ends_while_requests_keep_coming():
    app = Flask(__name__)
    wait = request_gate(app, poll_seconds=0.001, max_wait_seconds=0.05)
    inside, release = threading.Event(), threading.Event()

    @app.get("/slow")
    def slow():
        inside.set()
        release.wait(30)
        return "done"

    t = threading.Thread(target=lambda: app.test_client().get("/slow"))
    t.start()
    try:
        assert inside.wait(30)
        wait()  # returns although the request is still being answered
        assert t.is_alive() and not release.is_set()
    finally:
        release.set()
        t.join(30)
