"""Regenerate the README screenshots from a built atlas, in headless Chromium (Playwright).

Usage:
    python scripts/screenshots.py ATLAS.db [--out docs] [--reader]

Writes ``docs/screenshot.png`` (the start page: search, map, areas), ``docs/map.png`` (the map page, area labels),
``docs/map-search.png`` (papers matching ``--query`` highlighted) and ``docs/map-zoom.png`` (zoomed in: sub-topic
labels); with ``--reader`` instead ``docs/reading-list.png`` (``/list``), ``docs/for-you.png`` (``/foryou``, from
the atlas's liked papers) and ``docs/static-site.png`` (``publish --format site`` opened from disk, searched for
``--site-query``). Serves the atlas on a free local port with waitress; needs ``/usr/bin/chromium``.
"""

from __future__ import annotations

import argparse
import socket
import threading
from pathlib import Path

from waitress.server import create_server

from paperatlas.web import create_app


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("atlas")
    ap.add_argument("--out", default="docs")
    ap.add_argument("--query", default="reinforcement")
    ap.add_argument("--reader", action="store_true",
                    help="capture the reading list, For you and the static site instead of the map pages")
    ap.add_argument("--site-query", default="lottery ticket")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = create_server(create_app(args.atlas, preload_model=False), host="127.0.0.1", port=port)
    threading.Thread(target=server.run, daemon=True).start()
    base = f"http://127.0.0.1:{port}"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        if args.reader:
            reader_shots(page, base, args.atlas, out, args.site_query)
            browser.close()
            server.close()
            print(f"wrote {out}/reading-list.png, for-you.png, static-site.png")
            return
        page.goto(base + "/")
        page.wait_for_selector("#atlasmap[data-ready='1']", timeout=60_000)
        page.screenshot(path=str(out / "screenshot.png"))
        page.goto(base + "/map")
        page.wait_for_selector("#atlasmap[data-ready='1']", timeout=60_000)
        page.screenshot(path=str(out / "map.png"), full_page=True)
        page.fill(".atlasmap-search", args.query)
        page.wait_for_function("document.getElementById('atlasmap').dataset.matches !== ''")
        page.screenshot(path=str(out / "map-search.png"), full_page=True)
        page.fill(".atlasmap-search", "")
        # zoom into the middle third: sub-topic labels replace the area labels
        page.evaluate("""() => { const gd = document.getElementById('atlasmap').atlasMap.gd;
            const [x0, x1] = gd._fullLayout.xaxis.range, [y0, y1] = gd._fullLayout.yaxis.range;
            const dx = (x1 - x0) / 3, dy = (y1 - y0) / 3;
            return Plotly.relayout(gd, {'xaxis.range': [x0 + dx, x1 - dx], 'yaxis.range': [y0 + dy, y1 - dy]}); }""")
        page.wait_for_function("document.getElementById('atlasmap').dataset.labelLevel === 'topic'")
        page.screenshot(path=str(out / "map-zoom.png"), full_page=True)
        browser.close()
    server.close()
    print(f"wrote {out}/screenshot.png, map.png, map-search.png, map-zoom.png")


def reader_shots(page, base: str, atlas: str, out: Path, query: str) -> None:
    """Screenshots of ``/list``, ``/foryou`` and the static site (written to a temporary folder, opened from
    disk, searched for ``query``)."""
    import tempfile

    from paperatlas.publish import publish
    from paperatlas.search import related
    from paperatlas.store import Atlas

    page.goto(base + "/list")
    page.screenshot(path=str(out / "reading-list.png"), full_page=True)
    page.goto(base + "/foryou")
    page.screenshot(path=str(out / "for-you.png"), full_page=True)
    a = Atlas(atlas)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            rel = {p.id: [r.paper.id for r in related(a, p, k=5)] for p in a.papers}
            site = publish("site", a.papers, list(a.topics.values()), rel, Path(tmp) / "site")
            page.goto((Path(site) / "index.html").as_uri())
            page.wait_for_selector("#results li")
            page.fill("#q", query)
            page.wait_for_function("n => !document.querySelector('#count').textContent.startsWith(n + ' ')",
                                   arg=len(a.papers))
            page.screenshot(path=str(out / "static-site.png"))
    finally:
        a.close()


if __name__ == "__main__":
    main()
