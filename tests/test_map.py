"""The interactive map (Plotly.js scattergl): its data payload, the web app's map pages and the standalone file of
``publish --format map``, driven in headless Chromium (Playwright) on the 60-paper ICLR 2021 sample atlas."""

from __future__ import annotations

import html
import json
import math
import re
import shutil
import sqlite3
import statistics
import threading
import time
from pathlib import Path

import pytest

from paperatlas.mapview import htmlsafe_json, map_payload, topic_color
from paperatlas.model import Link, Paper, Topic
from paperatlas.publish import publish, render
from paperatlas.store import Atlas
from paperatlas.web import create_app

XSS_TITLE = '<img src=x onerror="window.__xss=1"> Attack </script><script>window.__xss=2</script>'

# --- fixtures -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hier_atlas(sample_atlas, tmp_path_factory) -> Path:
    """The sample atlas with a two-level topic hierarchy. An atlas built before areas existed has only flat topics:
    those become sub-topics of three areas grouped by map position (new ids, medians of their papers)."""
    db = tmp_path_factory.mktemp("hier") / "hier.db"
    shutil.copy(sample_atlas, db)
    atlas = Atlas(db)
    topics = list(atlas.topics.values())
    papers = atlas.papers
    atlas.close()
    if any(t.level == 0 for t in topics):
        return db
    topics.sort(key=lambda t: (t.x, t.id))
    groups = [topics[i::3] for i in range(3)]  # interleaved by x: areas spread over the map
    con = sqlite3.connect(db)
    base = max(t.id for t in topics) + 1
    for k, members in enumerate(groups):
        ids = {t.id for t in members}
        pts = [p for p in papers if p.topic_id in ids]
        con.execute("INSERT INTO topics (id, label, size, keyphrases, parent_id, x, y, method, level) "
                    "VALUES (?, ?, ?, '[]', NULL, ?, ?, 'test hierarchy', 0)",
                    (base + k, f"Area {k} " + " / ".join(t.label.split()[0] for t in members), len(pts),
                     statistics.median(p.x for p in pts), statistics.median(p.y for p in pts)))
        con.executemany("UPDATE topics SET parent_id = ?, level = 1 WHERE id = ?", [(base + k, i) for i in ids])
    con.commit()
    con.close()
    return db


@pytest.fixture(scope="module")
def atlas(hier_atlas) -> Atlas:
    return Atlas(hier_atlas)


@pytest.fixture(scope="module")
def server(hier_atlas):
    from waitress.server import create_server

    app = create_app(hier_atlas, preload_model=False)
    srv = create_server(app, host="127.0.0.1", port=0, threads=2)
    th = threading.Thread(target=srv.run, daemon=True)
    th.start()
    time.sleep(0.2)
    yield f"http://127.0.0.1:{srv.effective_port}"
    srv.close()


@pytest.fixture
def map_page(server, browser):
    """A page showing ``/map`` once drawn, and the list of URLs it requested outside the server."""
    page = browser.new_page(viewport={"width": 1400, "height": 950})
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(server) else None)
    page.goto(server + "/map")
    page.wait_for_selector("#atlasmap[data-ready='1']", timeout=30_000)
    yield page, outside
    page.close()


# --- helpers ------------------------------------------------------------------------------------------------

JS_POINTS = """(sel) => { const gd = document.querySelector(sel).atlasMap.gd;
  return gd.data.filter(t => t.name !== 'matches' && !String(t.name).startsWith('region:'))
    .reduce((n, t) => n + t.x.length, 0); }"""
JS_LABELS = """(sel) => (document.querySelector(sel).atlasMap.gd.layout.annotations || []).map(a => a.name)"""
JS_TO_PIXELS = """([sel, x, y]) => { const gd = document.querySelector(sel).atlasMap.gd, fl = gd._fullLayout;
  const r = gd.getBoundingClientRect();
  return [r.left + fl._size.l + fl.xaxis.l2p(x), r.top + fl._size.t + fl.yaxis.l2p(y)]; }"""


def free_point(page, papers: list[Paper], sel: str = "#atlasmap") -> tuple[Paper, float, float]:
    """A paper with its pixel position where no label covers it and no other point is within 10 px."""
    labels = [b for b in (loc.bounding_box() for loc in page.locator(f"{sel} .annotation").all()) if b]
    pix = [(p, *page.evaluate(JS_TO_PIXELS, [sel, p.x, p.y])) for p in papers]
    for p, x, y in pix:
        if any(b["x"] - 4 <= x <= b["x"] + b["width"] + 4 and b["y"] - 4 <= y <= b["y"] + b["height"] + 4
               for b in labels):
            continue
        if all(q is p or math.hypot(x - qx, y - qy) > 10 for q, qx, qy in pix):
            return p, x, y
    raise AssertionError("no point free of labels and neighbours")


def hover_label(page, sel: str = "#atlasmap") -> str:
    """The text of the hover label on screen, its lines joined by spaces."""
    page.wait_for_selector(f"{sel} .hoverlayer .hovertext")
    return " ".join(page.locator(f"{sel} .hoverlayer .hovertext text").first.evaluate(
        "el => Array.from(el.querySelectorAll('tspan.line')).map(t => t.textContent).join(' ') || el.textContent"
    ).split())


def haystack(p: Paper) -> str:
    """What the map's search box looks in: title, TL;DR, keyphrases and authors, lower-cased."""
    return f"{p.title} {p.tldr} {'; '.join(p.keyphrases)} {', '.join(p.authors)}".lower()


def cut_between(values: list[float], target: float) -> float:
    """A coordinate in the widest of the five gaps between consecutive ``values`` nearest to ``target`` (so a
    selection edge there is far from every point, in pixels too)."""
    vs = sorted(values)
    gaps = [(b - a, (a + b) / 2) for a, b in zip(vs, vs[1:], strict=False)]
    return max(sorted(gaps, key=lambda g: abs(g[1] - target))[:5])[1]


def boxes_overlap(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def assert_labels_do_not_overlap(page) -> None:
    boxes = [b for b in (loc.bounding_box() for loc in page.locator("#atlasmap .annotation-text-g rect.bg").all())
             if b]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not boxes_overlap(a, b), (a, b)


# --- payload and standalone file (no browser) ----------------------------------------------------------------


def test_payload_arrays_areas_and_subtopics(atlas):
    d = map_payload(atlas.papers, atlas.topics)
    mapped = [p for p in atlas.papers if p.x is not None]
    n = len(mapped)
    assert n == 60 and d["n_unmapped"] == 0
    for key in ("ids", "x", "y", "area", "topic", "title", "tldr", "keyphrases", "authors", "status", "url", "low"):
        assert len(d[key]) == n, key
    areas = atlas.areas()
    assert [a["id"] for a in d["areas"]] == [a.id for a in areas]  # largest first
    assert {t["id"] for t in d["topics"]} == {t.id for t in atlas.topics.values() if t.level == 1}
    for i, p in enumerate(mapped):
        assert d["ids"][i] == p.id and d["title"][i] == p.title and d["tldr"][i] == p.tldr
        area = d["areas"][d["area"][i]]
        assert area["id"] == atlas.area_of(p.topic_id).id and area["color"] == topic_color(area["id"])
        assert d["topics"][d["topic"][i]]["id"] == p.topic_id
        assert d["topics"][d["topic"][i]]["area"] == d["area"][i]


def test_payload_flat_topics_leaves_off_unmapped_and_unsafe_urls():
    topics = [Topic(id=3, label="A", size=2, x=0.0, y=0.0), Topic(id=5, label="B", size=1, x=1.0, y=1.0)]
    papers = [Paper(title="one", id="1", topic_id=3, x=0.0, y=0.5, links=[Link("javascript:alert(1)", "paper")]),
              Paper(title="two", id="2", topic_id=5, x=1.0, y=1.0, links=[Link("https://openreview.net/x", "paper")]),
              Paper(title="three", id="3", topic_id=3, x=math.nan, y=0.0),
              Paper(title="four", id="4", topic_id=None, x=2.0, y=2.0, low_confidence=True)]
    d = map_payload(papers, {t.id: t for t in topics})
    assert d["ids"] == ["1", "2", "4"] and d["n_unmapped"] == 1
    assert [a["id"] for a in d["areas"]] == [3, 5] and d["topics"] == []  # flat: every topic is an area
    assert d["area"] == [0, 1, -1] and d["topic"] == [-1, -1, -1]
    assert d["url"] == ["", "https://openreview.net/x", ""] and d["low"] == [0, 0, 1]
    with pytest.raises(TypeError, match="'oops'"):
        map_payload([Paper(title="bad", id="b", x="oops", y=0.0)], [])
    assert "</script" not in htmlsafe_json({"t": "</script><!--"})
    assert json.loads(htmlsafe_json({"t": "</script>&\u2028"})) == {"t": "</script>&\u2028"}


def test_standalone_file_is_self_contained_and_escapes_listing_text(atlas):
    papers = [Paper.from_dict(p.to_dict()) for p in atlas.papers]
    papers[0].title = XSS_TITLE
    out = render("map", papers, atlas.topics, None, title="ICLR <2021> map")
    assert out.count("<script") == 4  # the data, plotly.js, atlasmap.js and the call that mounts the map
    # nothing loaded from anywhere (an inline data: URI is no request)
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=[\"'](?!data:)", out)
    assert "<title>ICLR &lt;2021&gt; map</title>" in out
    assert XSS_TITLE not in out and "<img src=x" not in out
    data = json.loads(re.search(r'<script type="application/json" id="atlasmap-data">(.*?)</script>', out, re.S)[1])
    assert data["title"][0] == XSS_TITLE and len(data["ids"]) == 60


def test_publish_map_writes_the_file(atlas, tmp_path):
    out = publish("map", atlas.papers, atlas.topics, None, tmp_path / "map.html", title="T")
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>") and "Plotly" in text and "AtlasMap.mount" in text


# --- the web app -------------------------------------------------------------------------------------------------


def test_map_api_and_plotly_are_served_locally_and_follow_edits(copy_atlas):
    client = create_app(copy_atlas(), preload_model=False).test_client()
    js = client.get("/vendor/plotly.min.js")
    assert js.status_code == 200 and js.mimetype == "text/javascript" and b"plotly.js v" in js.data[:200]
    first = client.get("/api/map")
    data = first.get_json()
    assert len(data["ids"]) == 60 and data["areas"]
    assert client.get("/api/map", headers={"If-None-Match": first.headers["ETag"]}).status_code == 304
    pid = data["ids"][0]
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get(f"/paper/{pid}").get_data(as_text=True))[1]
    assert client.post(f"/paper/{pid}/edit", data={"tldr": "My own TL;DR.", "keyphrases": "", "csrf_token": token},
                       headers={"Origin": "http://localhost"}).status_code == 302  # as a browser sends the form
    again = client.get("/api/map", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 200 and again.get_json()["tldr"][0] == "My own TL;DR."


@pytest.mark.browser
def test_map_page_draws_every_paper_with_webgl_and_hover_shows_tldr(map_page, atlas):
    page, outside = map_page
    assert page.evaluate(JS_POINTS, "#atlasmap") == 60
    types = page.evaluate("""() => document.getElementById('atlasmap').atlasMap.gd._fullData
        .filter(t => !String(t.name).startsWith('region:')).map(t => t.type)""")
    assert set(types) == {"scattergl"}  # the points are WebGL; the area outlines under them are SVG
    # every hover text is the paper's title and TL;DR (wrapped in lines of ~80 characters)
    hover = page.evaluate("""() => document.getElementById('atlasmap').atlasMap.gd.data
        .filter(t => t.name !== 'matches' && !String(t.name).startsWith('region:')).flatMap(t => t.hovertext)""")
    assert len(hover) == 60
    lines = [line for h in hover for line in re.sub(r"</?[bi]>", "", h).split("<br>")]
    assert max(len(html.unescape(line)) for line in lines) <= 100
    flat = {html.unescape(re.sub(r"</?[bi]>", "", h).replace("<br>", " ")) for h in hover}
    for p in atlas.papers:
        assert any(h.startswith(p.title) and " ".join(p.tldr.split()) in h for h in flat), p.title
    # hovering a point shows that text in the hover label
    p, x, y = free_point(page, atlas.papers)
    page.mouse.move(x, y)
    label = hover_label(page)
    assert " ".join(p.title.split()[:4]) in label and " ".join(p.tldr.split()[:6]) in label
    assert outside == [], f"requests left the machine: {outside}"


@pytest.mark.browser
def test_clicking_a_point_opens_the_paper(map_page, atlas):
    page, _ = map_page
    p, x, y = free_point(page, sorted(atlas.papers, key=lambda p: -p.x))
    page.mouse.move(x, y)
    page.wait_for_selector("#atlasmap .hoverlayer .hovertext")
    with page.expect_navigation():
        page.mouse.click(x, y)
    assert page.url.endswith(f"/paper/{p.id}")
    assert page.locator("h1").inner_text() == p.title


@pytest.mark.browser
def test_search_box_highlights_matching_papers_and_counts_them(map_page, atlas):
    page, _ = map_page
    for query in ("robust", "Neural NETWORKS"):
        words = query.lower().split()
        expected = sum(all(w in haystack(p) for w in words) for p in atlas.papers)
        assert expected >= 3
        page.fill(".atlasmap-search", query)
        page.wait_for_function(f"document.getElementById('atlasmap').dataset.matches === '{expected}'")
        assert page.inner_text(".atlasmap-count") == f"{expected} of 60 papers match"
        state = page.evaluate("""() => { const gd = document.getElementById('atlasmap').atlasMap.gd;
            return {hl: gd.data.find(t => t.name === 'matches').x.length,
                    dim: gd.data.filter(t => t.name !== 'matches' && !String(t.name).startsWith('region:'))
                        .map(t => t.marker.opacity)}; }""")
        assert state["hl"] == expected  # matches drawn large on top ...
        assert max(state["dim"]) < 0.3  # ... and every other paper dimmed
    page.fill(".atlasmap-search", "")
    page.wait_for_function("document.getElementById('atlasmap').dataset.matches === ''")
    assert page.evaluate("() => document.getElementById('atlasmap').atlasMap.gd.data.at(-1).x.length") == 0


@pytest.mark.browser
def test_box_selection_lists_the_selected_papers(map_page, atlas):
    page, _ = map_page
    xs, ys = [p.x for p in atlas.papers], [p.y for p in atlas.papers]
    x0, x1 = cut_between(xs, statistics.quantiles(xs, n=10)[1]), cut_between(xs, statistics.quantiles(xs, n=10)[7])
    y0, y1 = cut_between(ys, statistics.quantiles(ys, n=10)[2]), cut_between(ys, statistics.quantiles(ys, n=10)[7])
    inside = [p for p in atlas.papers if x0 < p.x < x1 and y0 < p.y < y1]
    assert 5 <= len(inside) < 60
    page.click(".atlasmap-mode[data-mode=select]")
    page.wait_for_function("document.getElementById('atlasmap').atlasMap.gd._fullLayout.dragmode === 'select'")
    (ax, ay), (bx, by) = (page.evaluate(JS_TO_PIXELS, ["#atlasmap", x, y]) for x, y in ((x0, y1), (x1, y0)))
    page.mouse.move(ax, ay)
    page.mouse.down()
    for k in range(1, 11):
        page.mouse.move(ax + (bx - ax) * k / 10, ay + (by - ay) * k / 10)
    page.mouse.up()
    page.wait_for_function(f"document.getElementById('atlasmap').dataset.selected === '{len(inside)}'")
    assert page.inner_text(".atlasmap-selcount") == f"{len(inside)} papers selected"
    items = page.locator("ol.atlasmap-sel li")
    assert sorted(items.locator("a").all_inner_texts()) == sorted(p.title for p in inside)
    hrefs = items.locator("a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert sorted(hrefs) == sorted(f"/paper/{p.id}" for p in inside)
    assert sorted(items.locator(".atlasmap-badge").all_inner_texts()) == sorted(p.status for p in inside)
    page.click(".atlasmap-clear")
    page.wait_for_function("document.getElementById('atlasmap').dataset.selected === '0'")
    assert items.count() == 0


@pytest.mark.browser
def test_labels_switch_from_areas_to_subtopics_when_zooming_in(map_page, atlas):
    page, _ = map_page
    areas = {a.id for a in atlas.areas()}
    names = page.evaluate(JS_LABELS, "#atlasmap")
    assert len(names) >= 2 and all(n.startswith("area:") and int(n[5:]) in areas for n in names)
    assert page.get_attribute("#atlasmap", "data-label-level") == "area"
    assert_labels_do_not_overlap(page)

    sub = max((t for t in atlas.topics.values() if t.level == 1), key=lambda t: (t.size, -t.id))
    zoomed = page.evaluate("""async (t) => { const gd = document.getElementById('atlasmap').atlasMap.gd;
        const fx = gd._fullLayout.xaxis.range, fy = gd._fullLayout.yaxis.range;
        const wx = (fx[1] - fx[0]) * 0.18, wy = (fy[1] - fy[0]) * 0.18;
        await Plotly.relayout(gd, {'xaxis.range': [t.x - wx, t.x + wx], 'yaxis.range': [t.y - wy, t.y + wy]});
        return [[t.x - wx, t.x + wx], [t.y - wy, t.y + wy]]; }""", {"x": sub.x, "y": sub.y})
    page.wait_for_function("document.getElementById('atlasmap').dataset.labelLevel === 'topic'")
    names = page.evaluate(JS_LABELS, "#atlasmap")
    assert f"topic:{sub.id}" in names and all(n.startswith("topic:") for n in names)
    for n in names:  # only labels whose anchor is in view
        t = atlas.topics[int(n[6:])]
        assert zoomed[0][0] <= t.x <= zoomed[0][1] and zoomed[1][0] <= t.y <= zoomed[1][1]
    assert_labels_do_not_overlap(page)

    page.evaluate("() => Plotly.relayout(document.getElementById('atlasmap').atlasMap.gd, "
                  "{'xaxis.autorange': true, 'yaxis.autorange': true})")
    page.wait_for_function("document.getElementById('atlasmap').dataset.labelLevel === 'area'")
    assert all(n.startswith("area:") for n in page.evaluate(JS_LABELS, "#atlasmap"))


@pytest.mark.browser
def test_overview_page_embeds_the_map(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(server + "/")
    page.wait_for_selector("#atlasmap[data-ready='1']", timeout=30_000)
    assert page.evaluate(JS_POINTS, "#atlasmap") == 60
    assert page.locator("#atlasmap.atlasmap-compact .atlasmap-search").is_visible()
    page.close()


# --- the standalone file ---------------------------------------------------------------------------------------


@pytest.mark.browser
def test_standalone_map_works_from_disk_without_network(atlas, browser, tmp_path):
    papers = [Paper.from_dict(p.to_dict()) for p in atlas.papers]
    for p in papers:
        p.links = [Link(f"https://openreview.net/forum?id={p.id}", "openreview")]
    for p in papers[:6]:  # several: where a point lands (free of labels and neighbours) differs by CPU and precision
        p.title = XSS_TITLE
    path = publish("map", papers, atlas.topics, None, tmp_path / "atlas map.html", title="ICLR 2021 map")

    context = browser.new_context(viewport={"width": 1400, "height": 950})
    outside: list[str] = []

    def only_files(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_selector("#atlasmap[data-ready='1']", timeout=30_000)
    assert page.evaluate(JS_POINTS, "#atlasmap") == 60
    assert page.title() == "ICLR 2021 map"
    assert all(n.startswith("area:") for n in page.evaluate(JS_LABELS, "#atlasmap"))

    expected = sum("robust" in haystack(p) for p in papers)
    page.fill(".atlasmap-search", "robust")
    page.wait_for_function(f"document.getElementById('atlasmap').dataset.matches === '{expected}'")

    # the listing's text is shown as text, never run: hover the paper whose title is an XSS attempt
    _, x, y = free_point(page, papers[:6])
    page.mouse.move(x, y)
    assert "Attack" in hover_label(page)
    assert page.evaluate("() => window.__xss") is None and page.locator("img").count() == 0
    assert outside == [] and errors == [], (outside, errors)

    # clicking a point opens the paper's own URL in a new tab (aborted here: no network)
    target, x, y = free_point(page, sorted(papers[6:], key=lambda p: -p.x))
    page.mouse.move(x, y)
    page.wait_for_selector("#atlasmap .hoverlayer .hovertext")
    with context.expect_page() as popup:
        page.mouse.click(x, y)
    popup.value.wait_for_load_state()
    assert outside == [f"https://openreview.net/forum?id={target.id}"]
    context.close()
