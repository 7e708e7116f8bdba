"""Publish an atlas as a static website (``publish --format site -o DIR``).

The site is a folder that works opened from disk (``file://``, no server, no network) and on any static host.

Layout of ``DIR``::

    index.html          search (MiniSearch, bundled) over titles, authors, keyphrases and TL;DRs (keyword matches
                        only, with the true count; a query nothing matches says so); filters by status / topic /
                        year; facets with counts over the current results (status, decision, mean review rating,
                        rating spread, confidence, citations, code, institution), each a filter; sort keys
                        (relevance, title, status, topic, rating, citations, year); pages of 100 or "Show all"; all
                        of it kept in the page's URL (``index.html?q=pruning&status=Poster&topic=12&sort=title&page=2``,
                        also ``institution=``, ``min_rating=``, ``year=2019-2021``, ``show=all``); with no query
                        the filters pass the papers ``paperatlas search "" --status ...`` lists (the same
                        semantics as :class:`paperatlas.search.Filters`: status and decision case-insensitive, a
                        year or range; tests/test_site_filter_parity.py); "All papers" is
                        ``index.html?sort=title``; a Bookmarks view
    assets/             site.css, site.js (search page), bookmarks.js (☆ buttons), minisearch.min.js (+ LICENSE)
    data/papers.js      the search data as ``window.ATLAS = {...}`` (``fetch()`` of local JSON is blocked under
                        ``file://``, a ``<script src>`` is not)
    paper/<id>.html     one page per paper: title, authors (each a link to their page), links out
                        (:func:`paperatlas.cite.out_links`: forum/PDF/arXiv/DOI/code, else title searches on arXiv and
                        Semantic Scholar), "Copy BibTeX" (:func:`paperatlas.cite.bibtex_entry`), status, venue, its
                        review rating (mean ± spread, n reviews), confidence, decision, citations, code link and
                        institutions when the listing gives them, TL;DR, keyphrases, abstract, its area and
                        sub-topic, related papers
    topic/<id>.html     one page per area and sub-topic: label, its overview when it has one (each ``[n]`` a
                        link to the cited paper's page, plain text for a paper no longer in the atlas; then the
                        cited papers with their status), sub-topics, top keyphrases, all its papers
                        Oral → Spotlight → Poster
    topics.html         every area with its sub-topics, sizes and top keyphrases
    trends.html         topic trends over the years (:mod:`._trends`): the fastest rising and falling sub-topics and
                        the areas, charts (Plotly.js copied to assets/plotly.min.js, ``trendchart.js``) and tables
                        of slopes with 95 % intervals; topic pages show their own chart. An atlas of fewer than 3
                        years says so instead
    author/<key>.html   one page per author (:func:`paperatlas.authors.author_index`): their papers, co-authors
    map.html            the interactive map of :mod:`.map_html` with the site's navigation (not loaded by the first
                        page); its points open the paper pages
    assets/plotly.min.js  Plotly.js (~4.8 MB, vendored in ``mapview/vendor``), once, for the map and the trend charts
    .paperatlas-site    the marker: JSON listing every file above, so a later publish knows the folder as its own and
                        replaces only those files (:mod:`._output`); any other non-empty folder is refused

Every page has the navigation bar Search · All papers · Topics · Map · Trends · Bookmarks (:data:`SITE_NAV`).

Bookmarks (☆) are paper ids kept in the browser's ``localStorage`` (key ``paperatlas-bookmarks``).

The first page (``index.html`` and the files it loads, see :func:`first_load_bytes`) is about 0.6 kB per paper
plus ~35 kB: ~0.5 MB for ICLR 2021's 860 papers; a listing with facets adds ~0.1 kB a paper (0.91 MB for the
1,330 papers of COLM 2024 + ACL 2022, with ratings, citations, code and institutions). Every text from papers is
HTML-escaped by Jinja2 (pages) or put in the DOM with ``textContent`` (search results); paper links keep only
http(s) and DOI URLs (:func:`paperatlas.text.safe_url`).
"""

from __future__ import annotations

import math
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..authors import author_index
from ..cite import bibtex_entry, out_links
from ..facets import CITATION_BUCKETS, RATING_BUCKETS, facets_of
from ..mapview import STATIC_DIR as MAPVIEW_STATIC
from ..mapview import htmlsafe_json, plotly_js_path
from ..model import STATUSES, Paper, Topic, status_rank
from ..sources.progress import ProgressFactory, progress_of
from . import map_html
from ._common import (
    ENV,
    TEMPLATES,
    code_link,
    default_title,
    one_line,
    overview_cited,
    overview_note,
    overview_parts,
    paper_link,
    paper_sort_key,
)
from ._output import replace_folder
from ._trends import published_trends, site_page_args, topic_args

FORMAT = "site"

_HERE = Path(__file__).resolve().parent
_TEMPLATES = TEMPLATES / "site"
_VENDOR = _HERE / "vendor"
#: Static files copied to ``DIR/assets/``: (source, name in assets).
_ASSETS = ((_TEMPLATES / "site.css", "site.css"), (_TEMPLATES / "site.js", "site.js"),
           (_TEMPLATES / "bookmarks.js", "bookmarks.js"), (_TEMPLATES / "copy.js", "copy.js"),
           (_VENDOR / "minisearch.min.js", "minisearch.min.js"),
           (_VENDOR / "minisearch.LICENSE.txt", "minisearch.LICENSE.txt"),
           (MAPVIEW_STATIC / "trendchart.js", "trendchart.js"))
#: Thresholds of the site's "at least" facets (as the web app's): the finite lower bounds of
#: :data:`paperatlas.facets.RATING_BUCKETS` and those above 0 of :data:`paperatlas.facets.CITATION_BUCKETS`, and ours
#: for the mean reviewer confidence and (at most) the rating spread.
FACET_STEPS = {"rating": [lo for lo, _ in RATING_BUCKETS if math.isfinite(lo)],
               "citations": [lo for lo, _ in CITATION_BUCKETS if lo > 0],
               "confidence": [4.0, 3.0], "spread": [0.5, 1.0]}
#: The site's navigation, on every page (relative to the site root; pages below it prefix ``../``).
SITE_NAV = [("Search", "index.html"), ("All papers", "index.html?sort=title"), ("Topics", "topics.html"),
            ("Map", "map.html"), ("Trends", "trends.html"), ("Bookmarks", "index.html#bookmarks")]
ENV.globals["site_nav"] = SITE_NAV
_ASSET_RE = re.compile(r"""<(?:script\b[^>]*\bsrc|link\b[^>]*\bhref)\s*=\s*["']([^"']+)["']""", re.I)


def _slugs(papers: list[Paper]) -> dict[str, str]:
    """Paper id -> file name stem (ids restricted to ``[A-Za-z0-9_-]``, made unique)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for i, p in enumerate(papers):
        base = re.sub(r"[^A-Za-z0-9_-]", "_", p.id)[:80] or f"paper{i}"
        slug, n = base, 1
        while slug.lower() in used:
            n += 1
            slug = f"{base}-{n}"
        used.add(slug.lower())
        out[p.id] = slug
    return out


def first_load_bytes(out_dir: str | Path) -> int:
    """Bytes the first page costs: ``index.html`` plus every local script and stylesheet it references.

    Args:
        out_dir: a site folder written by :func:`write_site`.

    Returns:
        The total size in bytes (each referenced file counted once; remote and ``data:`` references not counted).

    Raises:
        FileNotFoundError: ``index.html`` or a file it references is missing.
    """
    root = Path(out_dir)
    index = root / "index.html"
    total = index.stat().st_size
    for ref in dict.fromkeys(_ASSET_RE.findall(index.read_text(encoding="utf-8"))):
        if "://" not in ref and not ref.startswith(("//", "data:")):  # a data: URI is inside index.html already
            total += (root / ref.split("?")[0].split("#")[0]).stat().st_size
    return total


def _row_links(p: Paper) -> dict[str, Any]:
    """A result row's links out: ``{"out": [[label, url], ...]}`` (forum/PDF/arXiv/DOI/paper links, at most 3).

    Nothing when it has none: ``site.js`` then links title searches on arXiv and Semantic Scholar.
    """
    real = [[o.label, o.url] for o in out_links(p) if o.kind in ("forum", "pdf", "arxiv", "doi", "paper")][:3]
    return {"out": real} if real else {}


def _facet_fields(p: Paper) -> dict[str, Any]:
    """A paper's facets for the search data: only those the listing gives (missing stays missing, never 0)."""
    f = facets_of(p)
    out: dict[str, Any] = {"rating": f.rating_mean, "spread": f.rating_spread, "reviews": f.n_reviews,
                           "confidence": f.confidence_mean, "decision": f.decision, "citations": f.citations,
                           "code": 1 if f.has_code else None, "institutions": list(f.institutions) or None}
    return {k: v for k, v in out.items() if v is not None}


def _ratings(p: Paper) -> list[str]:
    """The paper's per-review ratings as written on its page (``["5", "7", "6.5"]``); finite numbers only."""
    rs = p.extra.get("ratings")
    return [f"{r:g}" for r in (rs if isinstance(rs, list) else [])
            if isinstance(r, int | float) and not isinstance(r, bool) and math.isfinite(r)]


def _site_data(papers: list[Paper], by_id: dict[int, Topic], slugs: dict[str, str], title: str) -> dict[str, Any]:
    def area_of(tid: int | None) -> Topic | None:
        t = by_id.get(tid) if tid is not None else None
        if t is None:
            return None
        return by_id.get(t.parent_id, t) if t.parent_id is not None else t

    rows = []
    for p in papers:
        area = area_of(p.topic_id)
        rows.append({"id": p.id, "file": slugs[p.id], "title": one_line(p.title),
                     "authors": ", ".join(p.authors), "keyphrases": "; ".join(p.keyphrases),
                     "tldr": one_line(p.tldr), "status": one_line(p.status), "year": p.year,
                     "area": area.id if area else None,
                     "topic": p.topic_id if p.topic_id in by_id else None, **_facet_fields(p),
                     **_row_links(p)})
    statuses = sorted({r["status"] for r in rows if r["status"]}, key=lambda s: (status_rank(s), s))
    used_areas = {r["area"] for r in rows if r["area"] is not None}
    areas = sorted((by_id[a] for a in used_areas), key=lambda t: (-t.size, t.id))
    used_subs = {r["topic"] for r in rows if r["topic"] is not None and r["topic"] not in used_areas}
    subs_of: dict[int, list[Topic]] = {}
    for t in sorted((by_id[s] for s in used_subs), key=lambda t: (-t.size, t.id)):
        if t.parent_id is not None:
            subs_of.setdefault(t.parent_id, []).append(t)
    return {"title": title, "statuses": statuses, "steps": FACET_STEPS,
            "years": sorted({r["year"] for r in rows if r["year"]}, reverse=True),
            "areas": [{"id": a.id, "label": a.label,
                       "topics": [{"id": t.id, "label": t.label} for t in subs_of.get(a.id, [])]}
                      for a in areas],
            "topics": {str(t.id): t.label for t in by_id.values()},
            "papers": rows}


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def _build(papers: list[Paper], topics: list[Topic], related: dict[str, list[str]], out: Path, title: str,
           progress: ProgressFactory | None = None) -> None:
    with progress_of("site pages", len(papers) + len(topics) + len(author_index(papers).entries) + 5, "page",
                     progress) as update:
        _pages(papers, topics, related, out, title, update)


def _pages(papers: list[Paper], topics: list[Topic], related: dict[str, list[str]], out: Path, title: str,
           update: Callable[[int], None]) -> None:
    """Write every file of the site into ``out``, calling ``update(1)`` after each page or data file."""

    def write(path: Path, text: str) -> None:
        _write(path, text)
        update(1)

    by_id = {t.id: t for t in topics}
    slugs = _slugs(papers)
    by_paper = {p.id: p for p in papers}
    (out / "assets").mkdir()
    (out / "data").mkdir()
    (out / "paper").mkdir()
    (out / "topic").mkdir()
    for src, name in _ASSETS:
        shutil.copyfile(src, out / "assets" / name)

    data = _site_data(papers, by_id, slugs, title)
    write(out / "data" / "papers.js", "window.ATLAS = " + htmlsafe_json(data) + ";\n")
    write(out / "index.html", ENV.get_template("site/index.html").render(
        title=title, root="", n_papers=len(papers), n_areas=len(data["areas"])))

    def topic_ref(t: Topic | None) -> dict[str, Any] | None:
        return {"id": t.id, "label": t.label} if t is not None else None

    def paper_ref(p: Paper) -> dict[str, Any]:
        return {"file": slugs[p.id], "id": p.id, "title": one_line(p.title), "status": one_line(p.status),
                "tldr": one_line(p.tldr), "authors": p.authors}

    members: dict[int, list[Paper]] = {}
    for p in papers:
        t = by_id.get(p.topic_id) if p.topic_id is not None else None
        while t is not None:  # the sub-topic and its area
            members.setdefault(t.id, []).append(p)
            t = by_id.get(t.parent_id) if t.parent_id is not None and t.parent_id != t.id else None

    index = author_index(papers)
    page = ENV.get_template("site/paper.html")
    for p in papers:
        topic = by_id.get(p.topic_id) if p.topic_id is not None else None
        area = by_id.get(topic.parent_id) if topic is not None and topic.parent_id is not None else None
        rel = [paper_ref(by_paper[r]) for r in related.get(p.id, []) if r in by_paper and r != p.id]
        write(out / "paper" / f"{slugs[p.id]}.html", page.render(
            title=title, root="../", p=p, paper_title=one_line(p.title), status=one_line(p.status),
            venue=one_line(p.venue), year=p.year, tldr=one_line(p.tldr), abstract=[
                one_line(x) for x in (p.abstract or "").split("\n\n") if x.strip()],
            links=out_links(p), main_url=paper_link(p), code_url=code_link(p), f=facets_of(p),
            bibtex=bibtex_entry(p), author_keys=index.keys_of(p),
            ratings=_ratings(p),
            topic=topic_ref(topic), area=topic_ref(area), related=rel))

    trends = published_trends(papers, topics)
    # Plotly.js once, for the map and the trend charts (a <script src> works from file://)
    shutil.copyfile(plotly_js_path(), out / "assets" / "plotly.min.js")
    write(out / "trends.html", ENV.get_template("site/trends.html").render(title=title, root="",
                                                                             **site_page_args(trends)))
    page = ENV.get_template("site/topic.html")
    for t in topics:
        overview = [{"text": text, "n": n, "file": slugs[p.id] if p is not None else None}
                    for text, n, p in overview_parts(t, by_paper)]
        cited = [{"n": n, **paper_ref(p)} for n, p in overview_cited(t, by_paper)]
        ps = sorted(members.get(t.id, []), key=paper_sort_key)
        subs = sorted((s for s in topics if s.parent_id == t.id and s.id != t.id), key=lambda s: (-s.size, s.id))
        parent = by_id.get(t.parent_id) if t.parent_id is not None else None
        groups = []
        for status in (*STATUSES, None):
            group = [paper_ref(p) for p in ps if (p.status in STATUSES and p.status == status)
                     or (status is None and p.status not in STATUSES)]
            if group:
                groups.append({"status": status or "Other", "papers": group})
        write(out / "topic" / f"{t.id}.html", page.render(
            title=title, root="../", t=t, label=one_line(t.label), keyphrases=t.keyphrases[:12],
            subs=[{"id": s.id, "label": s.label, "n": len(members.get(s.id, []))} for s in subs],
            parent=topic_ref(parent), groups=groups, n=len(ps), overview=overview, cited=cited,
            overview_note=overview_note(t), **topic_args(trends, t)))

    authors = author_index(papers)
    (out / "author").mkdir()
    page = ENV.get_template("site/author.html")
    for key, a in authors.entries.items():
        co = authors.coauthors(key)
        write(out / "author" / f"{key}.html", page.render(
            title=title, root="../", name=a.name, papers=[paper_ref(p) for p in a.papers],
            coauthors=[{"key": c.key, "name": c.name, "n": n} for c, n in co],
            spellings=[x for x in a.spellings if x != a.name]))
    areas = sorted((t for t in topics if t.parent_id is None or t.parent_id == t.id), key=lambda t: (-t.size, t.id))
    write(out / "topics.html", ENV.get_template("site/topics.html").render(
        title=title, root="", areas=[{"id": a.id, "label": a.label, "n": len(members.get(a.id, [])),
                                      "keyphrases": a.keyphrases[:6],
                                      "subs": [{"id": t.id, "label": t.label, "n": len(members.get(t.id, [])),
                                                "keyphrases": t.keyphrases[:5]}
                                               for t in sorted((t for t in topics if t.parent_id == a.id
                                                                and t.id != a.id), key=lambda t: (-t.size, t.id))]}
                                     for a in areas]))
    write(out / "map.html", map_html.render(papers, topics, related, title=f"{title} — map", nav=SITE_NAV,
                                             paper_href="paper/__ID__.html", topic_href="topic/__ID__.html",
                                             plotly_src="assets/plotly.min.js"))


def write_site(papers: Iterable[Paper], topics: Iterable[Topic] | dict[int, Topic],
               related: dict[str, list[str]] | None, out_dir: str | Path, title: str = "",
               progress: ProgressFactory | None = None) -> Path:
    """Write the static site (see the module docstring) to the folder ``out_dir``.

    Atomic and never destructive (:func:`paperatlas.publish._output.replace_folder`): the site is built in a
    temporary folder and moved into place only once complete (a failure leaves an older site untouched). The site
    carries the marker ``.paperatlas-site`` listing its files; ``out_dir`` may be new, empty, or an earlier site
    holding only the files it lists, and only those are removed when it is replaced.

    Args:
        papers: the papers (one page each).
        topics: the atlas's areas and sub-topics: a list or an atlas's ``{id: Topic}`` dict.
        related: paper id -> related paper ids (shown on each paper's page), or ``None``.
        out_dir: the site folder to write (its parent is created when missing).
        title: the site title; default ``"<venue>"`` (e.g. ``"ICLR 2021"``), ``"Papers"`` when no venue covers
            half of the papers.
        progress: Where the pages written are counted (:func:`paperatlas.sources.progress.progress_of`; default
            a tqdm bar on stderr when it is a terminal): one page per paper, topic and author, and 5 more.

    Returns:
        ``out_dir`` as a Path.

    Raises:
        OutputRefused: (a ``FileExistsError``) ``out_dir`` is an existing file, a non-empty folder that is not an
            earlier site, or an earlier site holding files it did not write; nothing is written.
        OSError: The folder cannot be written.
        FileNotFoundError: as :func:`paperatlas.publish.map_html.render` raises it; whatever else the map renderer
            raises is passed on too.
    """
    papers = list(papers)
    topics = list(topics.values()) if isinstance(topics, dict) else list(topics)
    title = one_line(title) or default_title(papers).replace("Awesome ", "")
    return replace_folder(out_dir, FORMAT, lambda folder: _build(papers, topics, dict(related or {}), folder, title,
                                                                 progress))


__all__ = ["FORMAT", "first_load_bytes", "write_site"]
