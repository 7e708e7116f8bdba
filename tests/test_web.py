"""The web app: pages, escaping, and an end-to-end run in headless Chromium (Playwright)."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from conftest import FIXTURES
from paperatlas.build import build
from paperatlas.web import create_app

XSS = "<script>alert(1)</script> Attack <img src=x onerror=alert(2)>"


@pytest.fixture(scope="module")
def xss_atlas(tmp_path_factory):
    recs = json.loads((FIXTURES / "colm2024_head.json").read_text())
    recs[0]["title"] = XSS
    recs[0]["author"] = "Mallory <b>Bold</b>;Eve"
    recs[0]["abstract"] = "We propose <iframe src=//evil> nothing. " + recs[0]["abstract"]
    d = tmp_path_factory.mktemp("xss")
    listing = d / "colm2024.json"
    listing.write_text(json.dumps(recs))
    db = d / "xss.db"
    build([listing], db)
    return db


def test_every_listing_field_is_escaped(xss_atlas):
    app = create_app(xss_atlas, preload_model=False)
    client = app.test_client()
    from paperatlas.store import Atlas

    pid = next(p.id for p in Atlas(xss_atlas).papers if p.title.startswith("<script>"))
    for url in (f"/paper/{pid}", "/?q=attack", "/map", "/", f"/topic/{Atlas(xss_atlas).by_id[pid].topic_id}"):
        html = client.get(url).get_data(as_text=True)
        assert "<script>alert(1)" not in html and "<img src=x" not in html and "<iframe" not in html, url
        assert "<b>Bold</b>" not in html
    html = client.get(f"/paper/{pid}").get_data(as_text=True)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Attack" in html


def test_pages_and_api(sample_atlas):
    client = create_app(sample_atlas, preload_model=False).test_client()
    assert client.get("/").status_code == 200
    assert client.get("/topics").status_code == 200
    assert client.get("/paper/does-not-exist").status_code == 404
    res = client.get("/api/search?q=tabular%20data&k=3").get_json()
    assert res["results"][0]["title"] == "Net-DNF: Effective Deep Modeling of Tabular Data"
    assert res["mode"] == "bm25"  # model not loaded: BM25 alone, still works
    filtered = client.get("/api/search?q=learning&status=Oral&k=50").get_json()["results"]
    assert filtered and {r["status"] for r in filtered} == {"Oral"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(sample_atlas):
    from waitress.server import create_server

    app = create_app(sample_atlas, preload_model=True)
    srv = create_server(app, host="127.0.0.1", port=_free_port(), threads=2)
    th = threading.Thread(target=srv.run, daemon=True)
    th.start()
    time.sleep(0.3)
    yield f"http://127.0.0.1:{srv.effective_port}"
    srv.close()




@pytest.mark.browser
def test_search_open_paper_follow_related_and_map_in_chromium(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(server) else None)

    page.goto(server + "/")
    # the overview shows the map: one point per paper, each with a hover title, and topic labels
    page.wait_for_selector("#atlasmap[data-ready='1']", timeout=30_000)
    hover = page.evaluate("""() => document.getElementById('atlasmap').atlasMap.gd.data
        .filter(t => t.name !== 'matches' && !String(t.name).startsWith('region:')).flatMap(t => t.hovertext)""")
    assert len(hover) == 60
    assert any("Net-DNF" in t for t in hover)
    assert page.locator("#atlasmap .annotation").count() >= 2

    page.fill("input[name=q]", "certified robustness of deep networks")
    page.check("input[name=status][value=Poster]")
    page.click("button[type=submit]")
    page.wait_for_selector("ol.results li.paper")
    titles = page.locator("ol.results .ptitle").all_inner_texts()
    assert titles and "Certify or Predict: Boosting Certified Robustness with Compositional Architectures" in titles[:3]
    assert set(page.locator("ol.results .badge").all_inner_texts()) == {"Poster"}

    page.click("text=Certify or Predict: Boosting Certified Robustness with Compositional Architectures")
    page.wait_for_selector("h1")
    assert page.locator("h1").inner_text().startswith("Certify or Predict")
    assert page.locator(".tldrbox .tldr").inner_text().strip()
    assert page.locator(".kps .kp").count() >= 3
    assert page.locator("ol.related li").count() == 10
    first_related = page.locator("ol.related li a").first.inner_text()
    assert page.locator("ol.related .reason").first.inner_text()
    page.screenshot(path=str(tmp_path / "paper.png"))
    page.locator("ol.related li a").first.click()
    page.wait_for_selector("h1")
    assert page.locator("h1").inner_text() == first_related

    page.click("a.topiclink >> nth=0")
    page.wait_for_selector("ol.results li.paper")
    assert page.locator("h1").inner_text().strip()
    assert outside == [], f"requests left the machine: {outside}"
    page.close()


def test_keyphrase_links_list_every_paper_sharing_it(sample_atlas):
    from paperatlas.store import Atlas
    from paperatlas.vocab import concept_key

    atlas = Atlas(sample_atlas)
    counts: dict[str, int] = {}
    for p in atlas.papers:
        for k in {concept_key(k) for k in p.keyphrases}:
            counts[k] = counts.get(k, 0) + 1
    shared = max(counts, key=counts.get)
    assert counts[shared] >= 2
    owner = next(p for p in atlas.papers if shared in {concept_key(k) for k in p.keyphrases})
    surface = next(k for k in owner.keyphrases if concept_key(k) == shared)
    client = create_app(sample_atlas, preload_model=False).test_client()
    page = client.get(f"/paper/{owner.id}").get_data(as_text=True)
    assert f'class="n">{counts[shared]}</span>' in page  # the link says how many papers share it
    res = client.get("/api/search", query_string={"keyphrase": surface.upper(), "k": 100}).get_json()["results"]
    assert len(res) == counts[shared]
