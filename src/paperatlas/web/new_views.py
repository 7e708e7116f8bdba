"""The *What's new* page (``/new``): the papers the last build added, ranked for the reader, by topic.

Also its Atom feed (``/feed.atom``, :mod:`paperatlas.feed`).
"""

from __future__ import annotations

from urllib.parse import urlencode

from flask import Flask, Response, render_template, request

from ..whatsnew import whats_new
from .context import WebContext
from .reader_views import reader_entries


def register(app: Flask, ctx: WebContext) -> None:
    """Add the ``new`` route (``/new?build=N&k=50``) and ``feed_atom`` (``/feed.atom?topic=T&query=Q``) to ``app``.

    On a served atlas with an access token the feed's URL carries it (``/feed.atom?token=...``): the security
    checks answer a feed reader there without a session (:func:`paperatlas.web.security.install`).

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

    @app.get("/feed.atom")
    def feed_atom():
        from ..feed import render_feed

        topic = (request.args.get("topic") or "")[:200] or None
        query = (request.args.get("query") or request.args.get("q") or "")[:500] or None
        try:
            rest = [(k, v) for k, v in request.args.items(multi=True) if k != "token"]  # the self link names no token
            self_url = request.base_url + ("?" + urlencode(rest) if rest else "")
            text = render_feed(ctx.atlas, topic=topic, query=query, feed_url=self_url)
        except ValueError as e:
            return Response(str(e) + "\n", status=404, mimetype="text/plain")
        return Response(text, mimetype="application/atom+xml")
