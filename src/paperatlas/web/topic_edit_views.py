"""The reader's topic edits in the web app: rename a topic or write its overview, file a paper under a sub-topic.

A topic's rename and overview are made on its page, a paper's move on the paper's page.

All are form POSTs, under the same host, origin and CSRF checks as every other write (:mod:`.security`), written
to the live atlas file by :func:`paperatlas.overrides.rename_topic`,
:func:`paperatlas.store.overviews.set_topic_overview` and :func:`paperatlas.overrides.move_paper` (kept across
rebuilds), then shown at once: the app's in-memory topics and papers are changed the same way and
what was computed from them is dropped (:meth:`~paperatlas.web.context.WebContext.topics_changed`).
"""

from __future__ import annotations

from flask import Flask, abort, redirect, request, url_for

from ..enrich.overview import EDIT_METHOD, overview_parts, without_paper
from ..store.topic_overrides import file_under
from .context import WebContext


def register(app: Flask, ctx: WebContext) -> None:
    """Add the topic edit routes to ``app``.

    ``rename_topic`` (``POST /topic/<id>/label``), ``topic_overview`` (``POST /topic/<id>/overview``) and
    ``move_paper`` (``POST /paper/<id>/topic``).

    Args:
        app: the Flask app.
        ctx: the shared state.
    """
    atlas = ctx.atlas
    # the topic page links each [n] of the overview to its paper (enrich.overview.overview_parts)
    app.jinja_env.globals["overview_parts"] = overview_parts

    @app.post("/topic/<int:tid>/label")
    def rename_topic(tid: int):
        """Form fields ``label``, and ``action``: ``rename`` (the default) or ``reset`` (the generated label back)."""
        from ..overrides import rename_topic as rename

        t = atlas.topics.get(tid)
        if t is None:
            abort(404)
        reset = request.form.get("action") == "reset"
        try:
            stored = rename(atlas.path, tid, None if reset else request.form.get("label", ""))
        except LookupError:  # in the app's atlas, not in the file (rebuilt since the app started)
            abort(404)
        except ValueError as e:
            abort(400, str(e))
        if stored is None:  # the file no longer has the topic (rebuilt since the app started)
            abort(404)
        t.label, t.method = stored.label, stored.method
        ctx.topics_changed()
        return redirect(url_for("topic", tid=tid))

    @app.post("/topic/<int:tid>/overview")
    def topic_overview(tid: int):
        """Form fields ``overview``, and ``action``: ``save`` (the default) or ``reset`` (the computed one back)."""
        from ..store.overviews import set_topic_overview

        t = atlas.topics.get(tid)
        if t is None:
            abort(404)
        reset = request.form.get("action") == "reset"
        try:
            stored = set_topic_overview(atlas.path, tid, None if reset else request.form.get("overview", ""))
        except LookupError:  # in the app's atlas, not in the file (rebuilt since the app started)
            abort(404)
        except ValueError as e:
            abort(400, str(e))
        if stored is None:
            abort(404)
        t.overview, t.overview_papers, t.overview_method = stored.overview, stored.overview_papers, \
            stored.overview_method
        ctx.topics_changed()
        return redirect(url_for("topic", tid=tid))

    @app.post("/paper/<pid>/topic")
    def move_paper(pid: str):
        """Form fields ``topic`` (a sub-topic's id), and ``action``: ``move`` (the default) or ``reset``."""
        from ..overrides import move_paper as move

        p = atlas.by_id.get(pid)
        if p is None:
            abort(404)
        reset = request.form.get("action") == "reset"
        raw = request.form.get("topic", "").strip()
        if not reset and not (raw.isdecimal() and len(raw) < 10):
            abort(400, "choose a sub-topic (topic must be a topic id)")
        target = None if reset else int(raw)
        if target is not None and target not in atlas.topics:
            abort(400, f"no topic {target} in this atlas")
        try:
            stored, placed = move(atlas.path, pid, target)
        except (LookupError, ValueError) as e:  # an area, or a topic the file no longer has
            abort(400, str(e))
        if placed and stored.topic_id in atlas.topics:
            file_under(p, stored.topic_id, atlas.topics)  # sizes of the topics it left and joined, as stored
            inside = {p.topic_id, atlas.topics[p.topic_id].parent_id}
            for t in atlas.topics.values():  # as stored: the topics it left no longer cite it in their overviews
                if t.id not in inside and t.overview_method != EDIT_METHOD and pid in t.overview_papers:
                    t.overview, t.overview_papers = without_paper(t.overview, t.overview_papers, pid)
            ctx.topics_changed()
        return redirect(url_for("paper", pid=pid))
