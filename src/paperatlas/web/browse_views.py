"""Browsing every paper: the list of all papers (sortable, paged) and author pages with their co-authors."""

from __future__ import annotations

from flask import Flask, abort, render_template, request

from ..authors import atlas_authors
from ..model import status_rank
from ..store.lazy import PaperView
from .context import WebContext
from .search_views import page_window

#: Sort keys of the all-papers list and their labels.
PAPER_SORTS = {"title": "Title", "status": "Status", "topic": "Topic", "year": "Year"}


def register(app: Flask, ctx: WebContext) -> None:
    """Add ``papers`` (``/papers``) and ``author`` (``/author/<key>``) to ``app``.

    Args:
        app: the Flask app.
        ctx: the shared state.
    """
    atlas = ctx.atlas

    def title_key(title: str) -> str:
        return " ".join(title.split()).casefold()

    def topic_key(tid) -> str:
        return atlas.topic_label(tid).casefold() if tid is not None else "\uffff"

    keys = {  # (id, title, status, topic id, year) -> sort key
        "title": lambda pid, title, status, tid, year: (title_key(title), pid),
        "status": lambda pid, title, status, tid, year: (status_rank(status), title_key(title), pid),
        "topic": lambda pid, title, status, tid, year: (topic_key(tid), title_key(title), pid),
        "year": lambda pid, title, status, tid, year: (-(year or 0), title_key(title), pid),
    }

    def ordered_by(sort: str) -> PaperView:
        """Every paper in ``sort`` order, as positions (a large atlas's papers are read a page at a time)."""
        key = keys[sort]
        rows = atlas.fields("id", "title", "status", "topic_id", "year")
        return PaperView(atlas.papers, [i for _, i in sorted((key(*r), i) for i, r in enumerate(rows))])

    orders = keys

    @app.get("/papers")
    def papers():
        """Every paper of the atlas, sorted by title, status, topic or year, in pages of 50 (or all)."""
        sort = request.args.get("sort", "").strip() or "title"
        if sort not in orders:
            abort(400, f"sort must be one of: {', '.join(orders)}")
        ordered = atlas.derived(f"papers sorted by {sort}", lambda: ordered_by(sort))
        offset, size, page_links, show_all = page_window(ctx, len(ordered), "papers")
        sorts = [{"key": k, "label": v, "href": ctx.url_with("papers", sort=k, page=None), "on": k == sort}
                 for k, v in PAPER_SORTS.items()]
        return render_template("papers.html", papers=ordered[offset:offset + size], total=len(ordered),
                               offset=offset, page_links=page_links, show_all=show_all, sorts=sorts, sort=sort,
                               show_all_href=ctx.url_with("papers", show="all", page=None))

    @app.get("/author/<key>")
    def author(key: str):
        """One author's papers in the atlas and their co-authors (spellings merged, :mod:`paperatlas.authors`)."""
        index = atlas_authors(atlas)
        entry = index.entries.get(key)
        if entry is None:
            abort(404)
        return render_template("author.html", a=entry, coauthors=index.coauthors(key),
                               other_spellings=[s for s in entry.spellings if s != entry.name])
