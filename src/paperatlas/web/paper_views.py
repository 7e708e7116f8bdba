"""Paper, topic and map routes: a paper's page (links out, BibTeX, related papers), edits, topics, the map."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable

from flask import Flask, Response, abort, jsonify, redirect, render_template, request, send_file, url_for

from ..cite import bibtex_entry, out_links
from ..limits import check_tldr
from ..mapview import map_payload, plotly_js_path
from ..model import STATUSES
from ..search import AmbiguousPaper, find_paper, related
from ..store.lazy import PaperView
from ..topics import by_status, nearest_topics
from .context import PAGE_SIZE, WebContext
from .search_views import page_window
from .trends_views import topic_trend


def topic_groups(atlas) -> tuple[dict[int, list], dict[int, list]]:
    """``(topic id -> papers filed under it, topic id -> papers carrying it as a secondary topic)``, in one pass.

    Args:
        atlas: the atlas.

    Returns:
        The two groupings as positions in ``atlas.papers``, ascending (a large atlas's papers are read per page).
    """
    own: dict[int, list] = {}
    secondary: dict[int, list] = {}
    for i, (tid, also) in enumerate(atlas.fields("topic_id", "secondary_topic_ids")):
        if tid is not None:
            own.setdefault(tid, []).append(i)
        for s in also:
            secondary.setdefault(s, []).append(i)
    return own, secondary


def register(app: Flask, ctx: WebContext, map_args: Callable[[bool], dict]) -> None:
    """Add the paper, topic and map routes to ``app``.

    Args:
        app: the Flask app.
        ctx: the shared state.
        map_args: ``compact -> template arguments of _map.html``.
    """
    _register_paper_routes(app, ctx)
    _register_topic_routes(app, ctx)
    _register_map_routes(app, ctx, map_args)


def _register_paper_routes(app: Flask, ctx: WebContext) -> None:
    """``/paper/<pid>``, its edit form's target and ``/api/related/<pid>``."""
    atlas = ctx.atlas

    @app.get("/paper/<pid>")
    def paper(pid: str):
        """A paper by id or title; a title fragment several papers match lists them ("which one?")."""
        from ..store.topic_overrides import stored_move
        from .reader_views import mine_of

        try:
            p = find_paper(atlas, pid)
        except AmbiguousPaper as e:
            return render_template("choose.html", ref=e.ref, candidates=e.candidates), 300
        except LookupError:
            abort(404)
        if p.id != pid:  # a title: the page's own address is its id
            return redirect(url_for("paper", pid=p.id))
        return render_template("paper.html", p=p, related=related(atlas, p, k=10), bibtex=bibtex_entry(p),
                               topic=atlas.topics.get(p.topic_id), mine=mine_of(ctx, p.id), links=out_links(p),
                               moved=stored_move(atlas.path, p.id))

    @app.get("/api/related/<pid>")
    def api_related(pid: str):
        """The paper's related papers as JSON ("more like this" on a result row)."""
        p = atlas.by_id.get(pid)
        if p is None:
            abort(404)
        k = ctx.int_arg("k", 5, hi=50)
        return jsonify({"id": pid, "related": [
            {"id": r.paper.id, "title": r.paper.title, "status": r.paper.status, "reason": r.reason,
             "similarity": round(r.similarity, 4), "href": url_for("paper", pid=r.paper.id)}
            for r in related(atlas, p, k=k)]})

    @app.post("/paper/<pid>/edit")
    def edit(pid: str):
        from ..overrides import override_paper, parse_keyphrases

        p = atlas.by_id.get(pid)
        if p is None:
            abort(404)
        tldr = request.form.get("tldr", "").strip()
        try:
            check_tldr(" ".join(tldr.split()), pid)  # counted as `paperatlas edit` counts it
            kps = parse_keyphrases(request.form.get("keyphrases", ""), pid)
            edited = override_paper(atlas.path, pid, tldr=tldr if tldr and tldr != p.tldr else None,
                                    keyphrases=kps if kps and kps != p.keyphrases else None)
        except ValueError as e:
            abort(400, str(e))
        p.tldr, p.tldr_method = edited.tldr, edited.tldr_method
        p.keyphrases, p.keyphrases_method = edited.keyphrases, edited.keyphrases_method
        return redirect(url_for("paper", pid=pid))


def _register_topic_routes(app: Flask, ctx: WebContext) -> None:
    """``/topics`` and ``/topic/<tid>`` (a topic's lists made once per topic, until the reader moves a paper)."""
    atlas = ctx.atlas

    @app.get("/topics")
    def topics():
        return render_template("topics.html")

    members_of: dict[int, tuple[list, list, dict[str, int]]] = {}  # topic id -> (members, also, count by status)
    ctx.on_topics_changed.append(members_of.clear)  # the reader moved a paper

    def topic_lists(tid: int) -> tuple[list, list, dict[str, int]]:
        """A topic's papers, its "also relevant" papers and its papers' count by status.

        The lists are :func:`paperatlas.topics.topic_members`'s, made from one pass over the atlas the first time
        a topic page is asked for, then kept per topic (until the reader moves a paper,
        :meth:`~paperatlas.web.context.WebContext.topics_changed`): a request's work is its page's, not the atlas's.
        """
        got = members_of.get(tid)
        if got is not None:
            return got
        own, secondary = atlas.derived("papers by topic", lambda: topic_groups(atlas))
        ids = {tid, *(t.id for t in atlas.topics.values() if t.parent_id == tid)}

        def ordered(positions: list[int]) -> PaperView:  # topic_members' order: status, title, then stored order
            keyed = sorted(((by_status(q), i) for i, q in zip(positions, PaperView(atlas.papers, positions),
                                                               strict=True)))
            return PaperView(atlas.papers, [i for _, i in keyed])

        members = ordered(sorted(i for t in ids for i in own.get(t, ())))
        carrying = secondary.get(tid, [])
        also = ordered([i for i, q in zip(carrying, PaperView(atlas.papers, carrying), strict=True)
                        if q.topic_id not in ids])
        statuses = Counter(q.status for q in members)
        got = members_of[tid] = (members, also, {s: statuses[s] for s in STATUSES})
        return got

    @app.get("/topic/<int:tid>")
    def topic(tid: int):
        """A topic: its sub-topics, nearest topics, trend, and its papers in pages of 50 (or all)."""
        t = atlas.topics.get(tid)
        if t is None:
            abort(404)
        members, also, n_status = topic_lists(tid)
        offset, size, page_links, show_all = page_window(ctx, len(members), "topic")
        return render_template("topic.html", t=t, members=members[offset:offset + size], n_members=len(members),
                               offset=offset, page_links=page_links, show_all=show_all,
                               show_all_href=ctx.url_with("topic", show="all", page=None),
                               also=also if show_all else also[:PAGE_SIZE] if offset == 0 else [], n_also=len(also),
                               area=atlas.topics.get(t.parent_id) if t.parent_id is not None else None,
                               subtopics=atlas.subtopics(tid), nearest=nearest_topics(atlas, tid, k=5),
                               n_status=n_status, **(topic_trend(ctx, tid) or {}))


def _register_map_routes(app: Flask, ctx: WebContext, map_args: Callable[[bool], dict]) -> None:
    """``/map``, its data ``/api/map`` and the bundled Plotly.js."""
    atlas = ctx.atlas

    @app.get("/map")
    def map_page():
        return render_template("map.html", **map_args(False))

    map_cache: dict = {}

    @app.get("/api/map")
    def map_data():
        """The map's data (:func:`paperatlas.mapview.map_payload`) as compact JSON with an ETag.

        It is rebuilt only when a paper's TL;DR, keyphrases or topic, or a topic's label changed (what an edit can
        change while the app runs).
        """
        key = hash((tuple((p.tldr, tuple(p.keyphrases), p.topic_id) for p in atlas.papers),
                    tuple((t.id, t.label, t.size) for t in atlas.topics.values())))
        if map_cache.get("key") != key:
            body = json.dumps(map_payload(atlas.papers, atlas.topics), ensure_ascii=False,
                              separators=(",", ":"), allow_nan=False).encode("utf-8")
            map_cache.update(key=key, body=body, etag=hashlib.sha1(body).hexdigest()[:20])
        resp = Response(map_cache["body"], mimetype="application/json")
        resp.set_etag(map_cache["etag"])
        resp.headers["Cache-Control"] = "no-cache"  # revalidate: an edit changes the ETag
        return resp.make_conditional(request)

    @app.get("/vendor/plotly.min.js")
    def plotly_js():
        """Plotly.js as bundled in the installed ``plotly`` package (never a CDN)."""
        try:
            path = plotly_js_path()
        except FileNotFoundError as e:
            abort(500, str(e))
        return send_file(path, mimetype="text/javascript", max_age=7 * 24 * 3600)
