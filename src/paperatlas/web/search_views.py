"""The search page (``/``) and its JSON twin (``/api/search``): honest results, true counts, pages, facets."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from flask import Flask, abort, jsonify, render_template, request, url_for

from ..cite import out_links
from ..facets import CITATION_BUCKETS, RATING_BUCKETS, SORT_KEYS
from ..model import Paper
from ..search import Filters, SearchResults, parse_years, search_results
from ..search.hits import Hit, HitList
from .context import PAGE_SIZE, WebContext, pages
from .facet_table import FacetCounts, FacetTable

#: Thresholds of the "at least" facets: the finite lower bounds of :data:`paperatlas.facets.RATING_BUCKETS`
#: (mean review rating) and of :data:`paperatlas.facets.CITATION_BUCKETS` above 0 (citations), and ours for the mean
#: reviewer confidence (venue scales of 1-5) and the rating spread (population standard deviation; at most).
RATING_STEPS = tuple(lo for lo, _ in RATING_BUCKETS if math.isfinite(lo))
CITATION_STEPS = tuple(lo for lo, _ in CITATION_BUCKETS if lo > 0)
CONFIDENCE_STEPS = (4.0, 3.0)
SPREAD_STEPS = (0.5, 1.0)
#: Institutions listed in the facet before "more", and at most.
TOP_INSTITUTIONS, MAX_INSTITUTIONS = 8, 40
#: Labels of the sort keys (:data:`paperatlas.facets.SORT_KEYS`).
SORT_LABELS = {"relevance": "Relevance", "rating": "Rating", "citations": "Citations", "year": "Year"}
#: The search page's filter parameters, as the removable chips above the results name them.
CHIP_LABELS = {"institution": "institution: {}", "affiliation": "affiliation: {}", "decision": "decision: {}",
               "min_rating": "rating ≥ {}", "max_spread": "rating spread ≤ {}", "min_confidence": "confidence ≥ {}",
               "min_citations": "citations ≥ {}", "has_code": "code available", "author": "author: {}",
               "venue": "venue: {}", "year": "year: {}", "keyphrase": "keyphrase: {}", "topic": "topic: {}"}


#: The search filters the web app builds from a request: the one implementation, :class:`paperatlas.search.Filters`
#: (this name is kept for callers of the app's former subclass).
FacetFilters = Filters


def current_filters(ctx: WebContext) -> Filters:
    """The filters in the request's query string (a malformed year is ignored; a malformed number is a 400).

    The same :class:`paperatlas.search.Filters` the CLI builds from its options, matched by the same code; only
    its facets come from the app's cache (``facets_for``).
    """
    try:
        years = parse_years(request.args.get("year", ""))
    except ValueError:
        years = (None, None)
    a = request.args
    return Filters(status=[s for s in a.getlist("status") if s.strip()], venue=a.get("venue", ""), year=years,
                        author=a.get("author", ""), topic=a.get("topic", ""), keyphrase=a.get("keyphrase", ""),
                        min_rating=ctx.number_arg("min_rating"), affiliation=a.get("affiliation", ""),
                        has_code=a.get("has_code", "").strip().lower() in ("1", "true", "yes", "on"),
                        institution=a.get("institution", ""), decision=a.get("decision", ""),
                        min_citations=ctx.int_arg("min_citations", None, lo=0, hi=10**12),
                        min_confidence=ctx.number_arg("min_confidence"), max_spread=ctx.number_arg("max_spread"),
                        facets_for=ctx.facets_for)


def sort_hits(ctx: WebContext, hits: Sequence[Hit], key: str) -> Sequence[Hit]:
    """Hits by a sort key: :func:`paperatlas.facets.sort_papers`'s order, on the cached facets.

    Highest first, ties in their present order, hits without a value last (:meth:`FacetTable.order_by`). Read from
    the facet table of the whole atlas once the app's warm-up has made it, else from a table of the hits' own facets.
    """
    if key == "relevance":
        return hits
    table = ctx.state.get("facet_table")
    if table is not None and isinstance(hits, HitList):
        return hits.take(table.order_by(key, hits.docs))
    own = FacetTable((ctx.facets_for(h.paper) for h in hits), (h.paper.year for h in hits))
    return [hits[i] for i in own.order_by(key, np.arange(len(hits))).tolist()]


@dataclass
class SearchPage:
    """The current request's search.

    Attributes:
        q: the query.
        flt: its filters.
        res: every result (:class:`paperatlas.search.SearchResults`), sorted as asked.
        mode: ``hybrid`` or ``bm25`` (before the query model is loaded).
        searched: whether anything was asked (a query, a filter or a sort).
        sort: the sort key.
    """

    q: str
    flt: Filters
    res: SearchResults
    mode: str
    searched: bool
    sort: str


def run_search(ctx: WebContext) -> SearchPage:
    """Every result of the request's search (``q``, filters, ``sort``), honest tiers and true count included."""
    q = request.args.get("q", "")
    flt = current_filters(ctx)
    sort = request.args.get("sort", "").strip() or "relevance"
    if sort not in SORT_KEYS:
        abort(400, f"sort must be one of: {', '.join(SORT_KEYS)}")
    embed = ctx.embed_query()
    mode = "hybrid" if embed is not None else "bm25"
    searched = bool(q.strip() or flt.any() or "sort" in request.args)
    res = search_results(ctx.atlas, q, filters=flt, mode=mode, embed_query=embed) if searched \
        else SearchResults(q)
    res.hits = sort_hits(ctx, res.hits, sort)
    return SearchPage(q, flt, res, mode, searched, sort)


def page_window(ctx: WebContext, total: int, endpoint: str = "index") -> tuple[int, int, list[dict], bool]:
    """``(offset, size, page links, showing all)`` of the request's ``page`` / ``show=all`` over ``total`` items."""
    show_all = request.args.get("show", "") == "all"
    size = max(total, 1) if show_all else PAGE_SIZE
    last = max(1, -(-total // PAGE_SIZE))
    page = min(ctx.int_arg("page", 1, lo=1, hi=10**6) or 1, last)
    links = [] if show_all else pages(total, page, PAGE_SIZE,
                                      lambda n: ctx.url_with(endpoint, page=str(n) if n > 1 else None))
    return (0 if show_all else (page - 1) * PAGE_SIZE), size, links, show_all


def facet_counts(ctx: WebContext, res: SearchResults) -> FacetCounts:
    """The facets of every result of ``res``, counted.

    From the facet table of the whole atlas once the app's warm-up has made it (a gather and a ``bincount`` per
    facet), else from a table of the results' own facets (:meth:`WebContext.facets_for`): the same counts.
    """
    table = ctx.state.get("facet_table")
    if table is not None:
        return table.count(res.docs(ctx.atlas))
    return FacetTable(ctx.facets_for(h.paper) for h in res.hits).count(np.arange(res.total))


def facet_panel(ctx: WebContext, counts: FacetCounts, flt: Filters, links: bool = True) -> list[dict]:
    """The facets of the current results (``counts``: :func:`facet_counts`), as the sidebar lists them.

    A value's count is the number of results that clicking it lists; a paper without the facet (no review
    scores, no citation count) is counted nowhere. Its href adds the filter to the current URL, or removes it
    when it is on (``links=False``: ``""``, for the JSON API, which has no use for them). Returns sections
    ``{"key", "title", "opts": [{"label", "value", "count", "href", "on"}], "more": [...], "note"}``.
    """
    sections: list[dict] = []

    def value(param: str, label: str, v: str, count: int, on: bool, multi: bool = False) -> dict:
        if not links:
            href = ""
        elif multi:
            cur = [x for x in request.args.getlist(param) if x.strip()]
            href = ctx.url_with(**{param: [x for x in cur if x.lower() != v.lower()] if on else [*cur, v]})
        else:
            href = ctx.url_with(**{param: None if on else v})
        return {"label": label, "value": v, "count": count, "href": href, "on": on}

    def counted(key: str, title: str, counter: dict[str, int], current: list[str], multi: bool = False,
                top: int | None = None) -> None:
        items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_INSTITUTIONS]
        vals = [value(key, v, v, n, v.lower() in current, multi) for v, n in items]
        if vals:
            sections.append({"key": key, "title": title, "opts": vals[:top], "more": vals[top:] if top else [],
                             "note": ""})

    def steps(key: str, title: str, param: str, arr: np.ndarray, bounds, current, fmt: str, note: str = "",
              at_most: bool = False) -> None:
        vals = []
        for b in bounds:
            n = int((arr <= b).sum()) if at_most else int((arr >= b).sum())
            on = current is not None and float(current) == float(b)
            if n or on:
                vals.append(value(param, fmt.format(b), f"{b:g}", n, on))
        if vals:
            sections.append({"key": key, "title": title, "opts": vals, "more": [],
                             "note": note.format(n=len(arr), of=counts.n)})

    counted("status", "Status", counts.status, [s.lower() for s in flt.status], multi=True)
    counted("decision", "Decision", counts.decision, [flt.decision.lower()])
    steps("rating", "Mean rating", "min_rating", counts.rating_mean, RATING_STEPS, flt.min_rating,
          "≥ {:g}", "{n} of {of} have review scores")
    steps("spread", "Reviewers agree", "max_spread", counts.rating_spread, SPREAD_STEPS,
          flt.max_spread, "spread ≤ {:g}", at_most=True)
    steps("confidence", "Reviewer confidence", "min_confidence", counts.confidence_mean,
          CONFIDENCE_STEPS, flt.min_confidence, "≥ {:g}")
    steps("citations", "Citations", "min_citations", counts.citations, CITATION_STEPS,
          flt.min_citations, "≥ {:,}", "{n} of {of} have a citation count")
    if counts.n_code or flt.has_code:
        sections.append({"key": "has_code", "title": "Code", "more": [], "note": "", "opts": [
            value("has_code", "code available", "1", counts.n_code, flt.has_code)]})
    counted("institution", "Institution", counts.institutions, [flt.institution.strip().lower()],
            top=TOP_INSTITUTIONS)
    return sections

def active_filters(ctx: WebContext, flt: Filters) -> list[dict]:
    """The filters set in the URL as removable chips: ``[{"label", "href"}]``."""
    chips = [{"label": f"status: {s}", "href": ctx.url_with(status=[x for x in flt.status if x != s])}
             for s in flt.status]
    for param, label in CHIP_LABELS.items():
        v = request.args.get(param, "").strip()
        v = ctx.atlas.topic_label(int(v)) if param == "topic" and v.isdecimal() and len(v) < 10 else v
        if v and (param != "has_code" or flt.has_code):
            chips.append({"label": label.format(v), "href": ctx.url_with(**{param: None})})
    return chips



def register(app: Flask, ctx: WebContext, map_args: Callable[[bool], dict]) -> None:
    """Add the search routes (``index``, ``api_search``) to ``app``.

    Args:
        app: the Flask app.
        ctx: the shared state.
        map_args: ``compact -> template arguments of _map.html`` (the overview map on the empty search page).
    """
    links_of: dict[str, list[dict]] = {}  # paper id -> its links out as the API gives them (they never change)

    @app.get("/")
    def index():
        sp = run_search(ctx)
        res = sp.res
        offset, size, page_links, show_all = page_window(ctx, res.total)
        sorts = [{"key": k, "label": SORT_LABELS.get(k, k) if k != "relevance" or sp.q.strip() else "Listing order",
                  "href": ctx.url_with(sort=k, page=None), "on": k == sp.sort} for k in SORT_KEYS]
        return render_template(
            "index.html", q=sp.q, res=res, hits=res.page(offset, size), n_hits=res.total, offset=offset,
            page_links=page_links, show_all=show_all, show_all_href=ctx.url_with(show="all", page=None),
            mode=sp.mode, searched=sp.searched, args=request.args, sort=sp.sort, sorts=sorts,
            facet_sections=facet_panel(ctx, facet_counts(ctx, res), sp.flt) if sp.searched else [],
            chips=active_filters(ctx, sp.flt) if sp.searched else [],
            clear_href=url_for("index", q=sp.q) if sp.q.strip() else url_for("index"), **map_args(True))

    @app.get("/api/search")
    def api_search():
        """Search results as JSON: the true total, each result's match kind, links and facets, the facet counts."""
        k = ctx.int_arg("k", 20)
        offset = ctx.int_arg("offset", 0, lo=0, hi=10**6) or 0
        sp = run_search(ctx)

        def links(p: Paper) -> list[dict]:
            out = links_of.get(p.id)
            if out is None:
                out = links_of[p.id] = [{"label": o.label, "url": o.url, "kind": o.kind} for o in out_links(p)]
            return out

        def row(h) -> dict:
            f = ctx.facets_for(h.paper)
            return {"id": h.paper.id, "title": h.paper.title, "status": h.paper.status, "score": h.score,
                    "match": h.match, "topic": ctx.atlas.topic_label(h.paper.topic_id), "tldr": h.paper.tldr,
                    "rating_mean": f.rating_mean, "rating_spread": f.rating_spread, "n_reviews": f.n_reviews,
                    "confidence_mean": f.confidence_mean, "decision": f.decision, "citations": f.citations,
                    "has_code": f.has_code, "institutions": list(f.institutions),
                    "links": links(h.paper)}

        facets = {sec["key"]: [[v["value"], v["count"]] for v in sec["opts"] + sec["more"]]
                  for sec in facet_panel(ctx, facet_counts(ctx, sp.res), sp.flt, links=False)}
        return jsonify({"query": sp.q, "mode": sp.mode, "sort": sp.sort, "total": sp.res.total, "offset": offset,
                        "message": sp.res.message, "corrected": sp.res.corrected, "facets": facets,
                        "results": [row(h) for h in sp.res.page(offset, k)]})
