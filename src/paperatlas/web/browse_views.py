"""Browsing every paper: the list of all papers (sortable, paged) and author pages with their co-authors."""

from __future__ import annotations

from flask import Flask, abort, render_template, request

from ..authors import atlas_authors
from ..model import status_rank
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

    def title_key(p) -> str:
        return " ".join(p.title.split()).casefold()

    orders = {
        "title": lambda ps: sorted(ps, key=lambda p: (title_key(p), p.id)),
        "status": lambda ps: sorted(ps, key=lambda p: (status_rank(p.status), title_key(p), p.id)),
        "topic": lambda ps: sorted(ps, key=lambda p: (atlas.topic_label(p.topic_id).casefold()
                                                      if p.topic_id is not None else "\uffff", title_key(p), p.id)),
        "year": lambda ps: sorted(ps, key=lambda p: (-(p.year or 0), title_key(p), p.id)),
    }

    @app.get("/papers")
    def papers():
        """Every paper of the atlas, sorted by title, status, topic or year, in pages of 50 (or all)."""
        sort = request.args.get("sort", "").strip() or "title"
        if sort not in orders:
            abort(400, f"sort must be one of: {', '.join(orders)}")
        ordered = atlas.derived(f"papers sorted by {sort}", lambda: orders[sort](atlas.papers))
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
