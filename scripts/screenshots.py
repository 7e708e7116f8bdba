"""Regenerate the README screenshots from a built atlas, in headless Chromium (Playwright).

Usage:
    python scripts/screenshots.py ATLAS.db [--out docs]

Writes ``docs/screenshot.png`` (the start page: search, map, areas), ``docs/map.png`` (the map page, area labels),
``docs/map-search.png`` (papers matching ``--query`` highlighted) and ``docs/map-zoom.png`` (zoomed in: sub-topic
labels). Serves the
atlas on a free local port with waitress; needs ``/usr/bin/chromium``.
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


if __name__ == "__main__":
    main()
