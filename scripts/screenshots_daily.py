"""Screenshots of the pages a researcher keeps open (issue 15), from a built atlas, in headless Chromium.

Usage:
    python scripts/screenshots_daily.py ATLAS.db [--out docs/img]

Writes ``web_search_miss.png`` (a query nothing is about: ``grokking``), ``web_search_tiers.png`` (``lottery
ticket``: papers with the words, then those close in meaning, marked), ``web_paged.png`` (all 693 posters, page 2
of 14), ``web_papers.png`` (all papers by year), ``web_paper.png`` (a paper page: links out, Copy BibTeX, actions),
``web_author.png`` (an author page with co-authors). The atlas is served from a private copy with the query model
loaded (hybrid search), on a free local port; needs ``/usr/bin/chromium``.
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
        browser.close()
    server.close()


if __name__ == "__main__":
    main()
