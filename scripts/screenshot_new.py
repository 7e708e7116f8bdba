"""A screenshot of the *What's new* page (issue 17) in headless Chromium.

Usage:
    python scripts/screenshot_new.py ATLAS.db --like ID [--like ID ...] [--out docs/img/whats_new.png]

E.g. the NeurIPS 2017 + 2018 atlas that ``benchmarks/whats_new.py`` keeps in its work folder. The atlas is copied,
the ``--like`` papers are liked in the copy, and the copy is served on a free local port; needs
``/usr/bin/chromium``.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright
from waitress.server import create_server

from paperatlas import readinglist
from paperatlas.web import create_app


def main() -> None:
    """Like the papers in a copy, serve it, screenshot ``/new``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("atlas")
    ap.add_argument("--like", action="append", default=[], metavar="ID")
    ap.add_argument("--out", default="docs/img/whats_new.png")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp()) / "atlas.db"
    shutil.copy(args.atlas, tmp)
    for pid in args.like:
        readinglist.rate(tmp, pid, 1)
    server = create_server(create_app(tmp, preload_model=False), host="127.0.0.1", port=0, threads=2)
    threading.Thread(target=server.run, daemon=True).start()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(f"http://127.0.0.1:{server.effective_port}/new?k=20")
        page.wait_for_selector("#newsummary")
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=args.out)
        print("wrote", args.out)
        browser.close()
    server.close()


if __name__ == "__main__":
    main()
