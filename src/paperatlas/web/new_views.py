"""The *What's new* page (``/new``): the papers the last build added, ranked for the reader, by topic."""

from __future__ import annotations

from flask import Flask, render_template

from ..whatsnew import whats_new
from .context import WebContext
from .reader_views import reader_entries


def register(app: Flask, ctx: WebContext) -> None:
    """Add the ``new`` route (``/new?build=N&k=50``) to ``app``.

    Args:
        app: the Flask app.
        ctx: the shared state.
    """

    @app.get("/new")
    def new():
        es = reader_entries(ctx)  # the reader's likes as they are now (the live file)
        liked = [e.paper_id for e in es if e.rating > 0]
        disliked = [e.paper_id for e in es if e.rating < 0]
        try:
            digest = whats_new(ctx.atlas, build=ctx.int_arg("build", None, hi=10**9),
                               limit=ctx.int_arg("k", 50), liked=liked, disliked=disliked)
        except ValueError as e:
            return render_template("new.html", digest=None, error=str(e)), 404
        return render_template("new.html", digest=digest, error=None)
