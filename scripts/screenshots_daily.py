"""Screenshots of the pages a researcher keeps open (issue 15), from a built atlas, in headless Chromium.

Usage:
    python scripts/screenshots_daily.py ATLAS.db [--years YEARS.db] [--out docs/img]

Writes ``web_search_miss.png`` (a query nothing is about: ``grokking``), ``web_search_tiers.png`` (``lottery
ticket``: papers with the words, then those close in meaning, marked), ``web_paged.png`` (all 693 posters, page 2
of 14), ``web_papers.png`` (all papers by year), ``web_paper.png`` (a paper page: links out, Copy BibTeX, actions),
``web_author.png`` (an author page with co-authors); the map: ``map_areas.png`` (areas as regions),
``map_zoom.png`` (zoomed in: sub-topic shades and labels), ``map_selection.png`` (a lasso selection with its top
keyphrases), ``map_years.png`` (``--years``: an atlas spanning years, e.g. seed 004, coloured by year); the static
site (``publish --format site``, opened from disk): ``site_search_miss.png``, ``site_all_papers.png``,
``site_paper.png``. The atlas is served from a private copy with the query model loaded (hybrid search), on a free
local port; needs ``/usr/bin/chromium``.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
from pathlib import Path

from playwright.sync_api import sync_playwright
from waitress.server import create_server

from paperatlas.authors import atlas_authors
from paperatlas.store import Atlas
from paperatlas.web import create_app


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("atlas")
    ap.add_argument("--out", default="docs/img")
    ap.add_argument("--years", help="an atlas spanning several years, for map_years.png")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp()) / "atlas.db"
    shutil.copy(args.atlas, tmp)
    app = create_app(tmp, preload_model=True)
    client = app.test_client()
    while client.get("/api/search?q=x").get_json()["mode"] != "hybrid":
        time.sleep(0.2)
    server = create_server(app, host="127.0.0.1", port=0, threads=2)
    threading.Thread(target=server.run, daemon=True).start()
    base = f"http://127.0.0.1:{server.effective_port}"
    atlas = Atlas(tmp)
    sam = next(p for p in atlas.papers if p.title.lower().startswith("sharpness-aware minimization"))
    top_author = max(atlas_authors(atlas).entries.values(), key=lambda e: len(e.papers))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        shots = [("web_search_miss.png", "/?q=grokking"), ("web_search_tiers.png", "/?q=lottery+ticket"),
                 ("web_paged.png", "/?status=Poster&page=2"), ("web_papers.png", "/papers?sort=year"),
                 ("web_paper.png", f"/paper/{sam.id}"), ("web_author.png", f"/author/{top_author.key}")]
        for name, path in shots:
            page.goto(base + path)
            if name == "web_search_tiers.png":
                page.locator("li.tierhead").scroll_into_view_if_needed()
                page.evaluate("window.scrollBy(0, -420)")
            if name == "web_paged.png":
                page.locator("nav.pager").scroll_into_view_if_needed()
            page.screenshot(path=str(out / name))
            print("wrote", out / name)
        map_shots(page, base, out)
        if args.years:
            years = Path(tempfile.mkdtemp()) / "years.db"
            shutil.copy(args.years, years)
            srv2 = create_server(create_app(years, preload_model=False), host="127.0.0.1", port=0, threads=2)
            threading.Thread(target=srv2.run, daemon=True).start()
            page.goto(f"http://127.0.0.1:{srv2.effective_port}/map")
            page.wait_for_selector("#atlasmap[data-ready='1']", timeout=60_000)
            page.select_option(".atlasmap-colorby", "year")
            page.wait_for_selector("#atlasmap[data-color-by='year']")
            page.screenshot(path=str(out / "map_years.png"))
            print("wrote", out / "map_years.png")
            srv2.close()
        site_shots(page, tmp, atlas, out)
        browser.close()
    server.close()


def map_shots(page, base: str, out: Path) -> None:
    """The web map: areas, zoomed in, and a selection."""
    gd = "document.getElementById('atlasmap').atlasMap.gd"
    page.goto(base + "/map")
    page.wait_for_selector("#atlasmap[data-ready='1']", timeout=60_000)
    page.locator("#atlasmap").scroll_into_view_if_needed()
    page.screenshot(path=str(out / "map_areas.png"))
    page.evaluate(f"""() => {{ const gd = {gd}, xr = gd._fullLayout.xaxis.range, yr = gd._fullLayout.yaxis.range;
        const cx = xr[0] + (xr[1] - xr[0]) * 0.4, cy = yr[0] + (yr[1] - yr[0]) * 0.45;
        const dx = (xr[1] - xr[0]) / 6, dy = (yr[1] - yr[0]) / 6;
        return Plotly.relayout(gd, {{'xaxis.range': [cx - dx, cx + dx], 'yaxis.range': [cy - dy, cy + dy]}}); }}""")
    page.wait_for_selector("#atlasmap[data-label-level='topic']")
    page.screenshot(path=str(out / "map_zoom.png"))
    page.goto(base + "/map")
    page.wait_for_selector("#atlasmap[data-ready='1']", timeout=60_000)
    # select the papers of the largest area's densest part, as a lasso would
    page.evaluate("""() => { const m = document.getElementById('atlasmap').atlasMap, d = m.data;
        const a = d.areas[0], near = [];
        for (let i = 0; i < d.ids.length; i++) {
          if (Math.hypot(d.x[i] - a.x, d.y[i] - a.y) < 1.2) near.push(i); }
        m.select(near); }""")
    page.locator(".atlasmap-panel").scroll_into_view_if_needed()
    page.screenshot(path=str(out / "map_selection.png"))
    for name in ("map_areas.png", "map_zoom.png", "map_selection.png"):
        print("wrote", out / name)


def site_shots(page, atlas_path: Path, atlas: Atlas, out: Path) -> None:
    """The static site, opened from disk."""
    from paperatlas.publish.site import write_site
    from paperatlas.search import related

    site = write_site(atlas.papers, atlas.topics, {p.id: [r.paper.id for r in related(atlas, p, k=5)]
                                                   for p in atlas.papers}, atlas_path.parent / "site")
    sam = next(p for p in atlas.papers if p.title.lower().startswith("sharpness-aware minimization"))
    for name, rel in (("site_search_miss.png", "index.html?q=grokking"),
                      ("site_all_papers.png", "index.html?sort=title&page=2"),
                      ("site_paper.png", f"paper/{sam.id}.html")):
        page.goto((site / rel.split("?")[0]).as_uri() + ("?" + rel.split("?")[1] if "?" in rel else ""))
        page.wait_for_timeout(300)
        page.screenshot(path=str(out / name))
        print("wrote", out / name)


if __name__ == "__main__":
    main()
