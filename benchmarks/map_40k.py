"""Benchmark: the standalone interactive map (``publish --format map``) with 40k papers in headless Chromium.

Usage:
    python benchmarks/map_40k.py              # 40,000 papers
    python benchmarks/map_40k.py -n 100000    # any number
    python benchmarks/map_40k.py --keep map.html

The papers are real (titles, authors, abstracts, statuses from ../shared/data/paperlists/*/*.json.gz, repeated
when there are fewer than N; the TL;DR is the abstract's first sentence, keyphrases the listed keywords) but their
map coordinates are synthetic: 20 areas of 6 sub-topics each, Gaussian blobs in a unitless 2-D plane. Prints the
Python render time and file size (MB), then, in headless Chromium (/usr/bin/chromium, software WebGL), the time to
first render (ms from navigation start until the map is drawn with its labels), a zoom to 20% of each axis
(``Plotly.relayout``, labels switched to sub-topics) and a search highlight (first search, which also builds the
search index, then a second one), each until the next painted frame. Not a test: run on demand.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from _corpus import paperlist_papers

from paperatlas.model import Link, Paper, Topic
from paperatlas.publish import render
from paperatlas.text import split_sentences

CHROMIUM = "/usr/bin/chromium"
N_AREAS, N_SUBS = 20, 6


def real_papers(n: int) -> list[Paper]:
    """``n`` papers from the paperlists dumps (largest files first), repeated with new ids when they run out."""
    pool = list(paperlist_papers(n))
    out = []
    for i in range(n):
        src = pool[i % len(pool)]
        sentences = split_sentences(src.abstract) if src.abstract else []
        out.append(Paper(title=src.title, authors=src.authors, status=src.status or "Poster", id=f"p{i}",
                         tldr=(sentences[0] if sentences else "")[:300], keyphrases=src.given_keyphrases[:5],
                         links=[Link(f"https://example.org/paper/{i}", "paper")]))
    return out


def place(papers: list[Paper], seed: int = 0) -> list[Topic]:
    """Put the papers in Gaussian blobs: :data:`N_AREAS` areas of :data:`N_SUBS` sub-topics; returns the topics."""
    rng = np.random.default_rng(seed)
    area_xy = rng.uniform(-20, 20, size=(N_AREAS, 2))
    sub_xy = area_xy.repeat(N_SUBS, axis=0) + rng.normal(0, 2.5, size=(N_AREAS * N_SUBS, 2))
    weights = rng.pareto(1.5, N_AREAS * N_SUBS) + 0.2
    sub_of = rng.choice(N_AREAS * N_SUBS, size=len(papers), p=weights / weights.sum())
    xy = sub_xy[sub_of] + rng.normal(0, 0.8, size=(len(papers), 2))
    for p, s, (x, y) in zip(papers, sub_of, xy, strict=True):
        p.topic_id, p.x, p.y = int(N_AREAS + s), float(x), float(y)
    topics = []
    for a in range(N_AREAS):
        members = np.isin(sub_of, np.arange(a * N_SUBS, (a + 1) * N_SUBS))
        topics.append(Topic(id=a, label=f"Area {a} " + " ".join(papers[int(np.argmax(members))].title.split()[:3]),
                            size=int(members.sum()), level=0, x=float(np.median(xy[members, 0])),
                            y=float(np.median(xy[members, 1]))))
    for s in range(N_AREAS * N_SUBS):
        members = sub_of == s
        if members.any():
            topics.append(Topic(id=N_AREAS + s, label=f"Sub-topic {s} " + papers[int(np.argmax(members))].title[:24],
                                size=int(members.sum()), parent_id=s // N_SUBS, level=1,
                                x=float(np.median(xy[members, 0])), y=float(np.median(xy[members, 1]))))
    return topics


JS_ZOOM_AND_SEARCH = """async () => {
  const m = document.getElementById('atlasmap').atlasMap, gd = m.gd;
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const fx = gd._fullLayout.xaxis.range, fy = gd._fullLayout.yaxis.range;
  const cx = (fx[0] + fx[1]) / 2, cy = (fy[0] + fy[1]) / 2, wx = (fx[1] - fx[0]) * 0.1, wy = (fy[1] - fy[0]) * 0.1;
  let t = performance.now();
  await Plotly.relayout(gd, {'xaxis.range': [cx - wx, cx + wx], 'yaxis.range': [cy - wy, cy + wy]});
  await frame();
  const zoom = performance.now() - t;
  t = performance.now();
  await m.search('learning');
  await frame();
  const search1 = performance.now() - t;
  t = performance.now();
  await m.search('graph neural');
  await frame();
  const search2 = performance.now() - t;
  const c = document.getElementById('atlasmap');
  return {zoom, search1, search2, level: c.dataset.labelLevel, matches2: Number(c.dataset.matches)};
}"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=40_000, help="number of papers")
    ap.add_argument("--keep", type=Path, help="also write the HTML file here")
    args = ap.parse_args()

    t = time.perf_counter()
    papers = real_papers(args.n)
    topics = place(papers)
    print(f"papers: {len(papers)} ({len(topics)} topics) prepared in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    html = render("map", papers, topics, None, title=f"{len(papers)} papers")
    print(f"render (Python):           {time.perf_counter() - t:8.2f} s")
    data = html.encode("utf-8")
    print(f"file size:                 {len(data) / 1e6:8.1f} MB")

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as d:
        path = args.keep or Path(d) / "map.html"
        path.write_bytes(data)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            t = time.perf_counter()
            page.goto(path.resolve().as_uri(), timeout=300_000)
            page.wait_for_selector("#atlasmap[data-ready='1']", timeout=300_000)
            wall = (time.perf_counter() - t) * 1000
            first = float(page.get_attribute("#atlasmap", "data-render-ms"))
            n = page.evaluate("() => document.getElementById('atlasmap').atlasMap.data.ids.length")
            print(f"time to first render:      {first:8.0f} ms  ({wall:.0f} ms wall from goto, {n} points)")
            r = page.evaluate(JS_ZOOM_AND_SEARCH)
            print(f"zoom to 20% (relayout):    {r['zoom']:8.0f} ms  (labels: {r['level']})")
            print(f"search highlight, first:   {r['search1']:8.0f} ms  (builds the search index)")
            print(f"search highlight, again:   {r['search2']:8.0f} ms  ({r['matches2']} matches for 'graph neural')")
            print(f"zoom + first search:       {r['zoom'] + r['search1']:8.0f} ms")
            if errors:
                print("page errors:", errors)
            browser.close()


if __name__ == "__main__":
    main()
