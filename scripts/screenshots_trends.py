"""Screenshots of the topic trends (issue 17) from an atlas spanning years, in headless Chromium.

Usage:
    python scripts/screenshots_trends.py ATLAS.db [--out docs/img]

E.g. the NeurIPS 1987-2018 atlas that ``benchmarks/trends.py`` keeps at ``/tmp/nips8k.db``. Writes
``trends_web.png`` (the web app's ``/trends``: the fastest rising and falling sub-topics, chart and tables),
``trends_web_decade.png`` (the same over the last ten years: ``/trends?since=YEAR``), ``trends_topic.png`` (the
page of the last decade's fastest rising sub-topic, at its chart: its share over all years) and
``trends_site.png`` (the static site's ``trends.html``, opened from disk). The atlas is served from a private copy
on a free local port; needs ``/usr/bin/chromium``. Stops with the browser's console errors when a chart did not draw.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright
from waitress.server import create_server

from paperatlas.publish.site import write_site
from paperatlas.store import Atlas
from paperatlas.trends import atlas_trends
from paperatlas.web import create_app


def main() -> None:
    """Serve the atlas, take the three screenshots, write them to ``--out``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("atlas")
    ap.add_argument("--out", default="docs/img")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp()) / "atlas.db"
    shutil.copy(args.atlas, tmp)
    server = create_server(create_app(tmp, preload_model=False), host="127.0.0.1", port=0, threads=2)
    threading.Thread(target=server.run, daemon=True).start()
    base = f"http://127.0.0.1:{server.effective_port}"
    atlas = Atlas(tmp)
    decade = max(p.year for p in atlas.papers if p.year is not None) - 9
    rising = atlas_trends(atlas, "topic", since=decade).rising[0].topic  # the last decade's fastest riser
    site = write_site(atlas.papers, atlas.topics, {}, tmp.parent / "site")
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        for name, url, n_charts in (("trends_web.png", f"{base}/trends", 2),
                                    ("trends_web_decade.png", f"{base}/trends?since={decade}", 2),
                                    ("trends_topic.png", f"{base}/topic/{rising.id}", 1),
                                    ("trends_site.png", (site / "trends.html").as_uri(), 2)):
            page.goto(url)
            try:
                page.wait_for_function(f"document.querySelectorAll('[data-trendchart][data-ready]').length == "
                                       f"{n_charts}", timeout=60_000)
            except Exception:
                raise SystemExit(f"{url}: the chart did not draw; console errors: {errors}") from None
            page.locator("[data-trendchart]").first.scroll_into_view_if_needed()
            if name == "trends_topic.png":
                page.evaluate("window.scrollBy(0, -120)")
            page.screenshot(path=str(out / name))
            print("wrote", out / name)
        browser.close()
    server.close()


if __name__ == "__main__":
    main()
