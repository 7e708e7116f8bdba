"""A map that reads as regions (issue 15), in Chromium: area outlines under the points, whole labels inside the
plot, the legend under it, sub-topic shades on zoom, colour by area / year / status / rating, and a selection
that names its top keyphrases and is saved as a reading list or downloaded."""

from __future__ import annotations

import csv
import io
import math
import shutil
import sqlite3
import threading
import time
from collections import Counter

import pytest

from paperatlas import readinglist as rl
from paperatlas.mapview import map_payload
from paperatlas.store import Atlas
from paperatlas.web import create_app

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def years_atlas(sample_atlas, tmp_path_factory):
    """The sample atlas with its papers spread over 2017-2021 (the ICLR 2021 listing has one year), and each
    sub-topic (the 60-paper sample has one per area) split in two by map position, so every colour mode and the
    sub-topic shades have something to show."""
    db = tmp_path_factory.mktemp("regions") / "atlas.db"
    shutil.copy(sample_atlas, db)
    atlas = Atlas(db)
    subs = [t for t in atlas.topics.values() if t.level == 1]
    papers = atlas.papers
    atlas.close()
    con = sqlite3.connect(db)
    con.execute("UPDATE papers SET year = 2017 + (rowid % 5)")
    new_id = max(t.id for t in subs) + 100
    for t in subs:
        members = sorted((p for p in papers if p.topic_id == t.id), key=lambda p: p.x)
        half = members[len(members) // 2:]
        if len(members) < 4:
            continue
        con.execute("INSERT INTO topics (id, label, size, keyphrases, parent_id, x, y, method, level) "
                    "VALUES (?, ?, ?, '[]', ?, ?, ?, 'test split', 1)",
                    (new_id, t.label + " (east)", len(half), t.parent_id, half[len(half) // 2].x,
                     half[len(half) // 2].y))
        con.executemany("UPDATE papers SET topic_id = ? WHERE id = ?", [(new_id, p.id) for p in half])
        new_id += 1
    con.commit()
    con.close()
    return db


@pytest.fixture(scope="module")
def base(years_atlas):
    from waitress.server import create_server

    srv = create_server(create_app(years_atlas, preload_model=False), host="127.0.0.1", port=0, threads=2)
    threading.Thread(target=srv.run, daemon=True).start()
    time.sleep(0.2)
    yield f"http://127.0.0.1:{srv.effective_port}"
    srv.close()


@pytest.fixture
def page(browser, base):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    pg = ctx.new_page()
    pg.goto(base + "/map")
    pg.wait_for_selector("#atlasmap[data-ready='1']", timeout=30_000)
    yield pg
    ctx.close()


GD = "document.getElementById('atlasmap').atlasMap.gd"


def test_areas_are_drawn_as_regions_under_the_points(page, years_atlas):
    atlas = Atlas(years_atlas)
    payload = map_payload(atlas.papers, atlas.topics)
    per_area = Counter(payload["area"])
    expected = sum(1 for a in range(len(payload["areas"])) if per_area[a] >= 4)
    regions = page.evaluate(f"""() => {GD}.data.filter(t => String(t.name).startsWith('region:'))
        .map(t => [t.fill, t.x.length, t.x[0] === t.x[t.x.length - 1]])""")
    assert len(regions) == expected >= 2
    assert all(fill == "toself" and n >= 4 and closed for fill, n, closed in regions)
    # drawn first: every region comes before every point trace
    names = page.evaluate(f"() => {GD}.data.map(t => String(t.name))")
    last_region = max(i for i, n in enumerate(names) if n.startswith("region:"))
    assert all(not n.startswith("region:") for n in names[last_region + 1:])


def test_labels_are_whole_inside_the_plot_and_the_legend_is_under_it(page, years_atlas):
    labels = {a.label for a in Atlas(years_atlas).areas()}
    texts = page.evaluate(f"() => ({GD}.layout.annotations || []).map(a => a.text)")
    assert texts and not any("…" in t for t in texts)
    shown = {t.replace("<b>", "").replace("</b>", "").replace("<br>", " ") for t in texts}
    assert shown <= labels  # whole labels, only wrapped
    plot = page.locator("#atlasmap .nsewdrag").first.bounding_box()
    rects = "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })"
    for box in page.eval_on_selector_all("#atlasmap g.annotation", rects):
        x, y, w, h = box
        assert plot["x"] - 1 <= x and x + w <= plot["x"] + plot["width"] + 1
        assert plot["y"] - 1 <= y and y + h <= plot["y"] + plot["height"] + 1
    legend = page.locator("#atlasmap g.legend").bounding_box()
    assert legend["y"] >= plot["y"] + plot["height"] - 1  # under the plot, not on it
    # nothing selected: no panel beside the map, the plot has the whole width
    assert page.locator(".atlasmap-panel").is_hidden()
    assert plot["width"] > 0.9 * page.locator("#atlasmap").bounding_box()["width"]


def test_zoomed_in_points_take_sub_topic_shades(page):
    before = page.evaluate(f"""() => {GD}.data.filter(t => t.legendgroup && !String(t.name).startsWith('region:')
        && t.name !== 'matches').map(t => new Set([].concat(t.marker.color)).size)""")
    assert max(before) == 1
    page.evaluate(f"""() => {{ const gd = {GD}, xr = gd._fullLayout.xaxis.range, yr = gd._fullLayout.yaxis.range;
        const cx = (xr[0] + xr[1]) / 2, cy = (yr[0] + yr[1]) / 2, dx = (xr[1] - xr[0]) / 5, dy = (yr[1] - yr[0]) / 5;
        return Plotly.relayout(gd, {{'xaxis.range': [cx - dx, cx + dx], 'yaxis.range': [cy - dy, cy + dy]}}); }}""")
    page.wait_for_selector("#atlasmap[data-label-level='topic']")
    after = page.evaluate(f"""() => {GD}.data.filter(t => t.legendgroup && !String(t.name).startsWith('region:')
        && t.name !== 'matches').map(t => new Set([].concat(t.marker.color)).size)""")
    assert max(after) >= 2


def test_colour_by_year_status_and_back_to_area(page, years_atlas):
    options = page.eval_on_selector_all(".atlasmap-colorby option", "els => els.map(e => e.value)")
    assert options[:3] == ["area", "year", "status"]
    page.select_option(".atlasmap-colorby", "year")
    page.wait_for_selector("#atlasmap[data-color-by='year']")
    bar = page.evaluate(f"""() => {GD}.data.filter(t => t.marker && t.marker.colorbar)
        .map(t => [t.marker.colorbar.title.text, Math.min(...t.marker.color), Math.max(...t.marker.color)])""")
    assert bar == [["Year", 2017, 2021]]
    page.select_option(".atlasmap-colorby", "status")
    page.wait_for_selector("#atlasmap[data-color-by='status']")
    names = page.evaluate(f"() => {GD}.data.map(t => String(t.name))")
    n_status = Counter(p.status for p in Atlas(years_atlas).papers)
    assert f"Poster ({n_status['Poster']})" in names and f"Oral ({n_status['Oral']})" in names
    page.select_option(".atlasmap-colorby", "area")
    page.wait_for_selector("#atlasmap[data-color-by='area']")
    points = page.evaluate(f"""() => {GD}.data.filter(t => t.name !== 'matches' && !String(t.name)
        .startsWith('region:')).reduce((n, t) => n + t.x.length, 0)""")
    assert points == len(Atlas(years_atlas).papers)


def test_a_selection_names_its_top_keyphrases_and_is_saved_as_a_reading_list_or_downloaded(page, years_atlas):
    atlas = Atlas(years_atlas)
    ids = page.evaluate("() => document.getElementById('atlasmap').atlasMap.data.ids")
    chosen = list(range(12))
    page.evaluate("(idx) => document.getElementById('atlasmap').atlasMap.select(idx)", chosen)
    assert page.locator(".atlasmap-panel").is_visible()
    freq = Counter(k for i in chosen for k in atlas.by_id[ids[i]].keyphrases)
    total = Counter(k for p in atlas.papers for k in p.keyphrases)
    top = page.get_attribute("#atlasmap", "data-top-keyphrases").split("|")
    # the selection's own keyphrases, most over-represented first (count x idf over the map)
    weight = {k: freq[k] * math.log(len(ids) / total[k]) for k in freq if freq[k] >= 2}
    assert top and all(freq[k] >= 2 for k in top)
    assert top[0] == max(weight, key=lambda k: (weight[k], [-ord(c) for c in k]))
    with page.expect_download() as dl:
        page.click(".atlasmap-csv")
    rows = list(csv.DictReader(io.StringIO(open(dl.value.path(), encoding="utf-8").read())))
    assert sorted(r["id"] for r in rows) == sorted(ids[i] for i in chosen)
    page.fill(".atlasmap-listname", "cluster to read")
    page.click(".atlasmap-save")
    page.wait_for_selector("#atlasmap[data-saved='cluster to read:12']", timeout=30_000)
    on_list = {e.paper_id for e in rl.entries(years_atlas, "cluster to read")}
    assert on_list == {ids[i] for i in chosen}
