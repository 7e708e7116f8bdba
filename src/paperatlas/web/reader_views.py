"""The reader's routes: actions on a paper (in place, with or without JavaScript), the reading list, *For you*.

Actions are like, dislike, read, add to or remove from a list (or every list), and a note; the reading-list page
has Unlike and Remove buttons on each entry (the same CSRF-checked ``mark`` form as the paper pages).
"""

from __future__ import annotations

from flask import Flask, abort, g, jsonify, redirect, render_template, request, url_for

from .. import readinglist as rl
from ..latex import title_text
from ..limits import LimitExceeded, check_list_name
from .context import WebContext
from .security import safe_next


def reader_entries(ctx: WebContext) -> list:
    """The reader's entries, read from the live atlas file once per request (:func:`paperatlas.readinglist.entries`).

    Args:
        ctx: the shared state.

    Returns:
        The entries.
    """
    if "reader_entries" not in g:
        g.reader_entries = rl.entries(ctx.atlas.path)
    return g.reader_entries


def mine_of(ctx: WebContext, pid: str):
    """The reader's entry for paper ``pid`` (None when they have not touched it)."""
    if "reader_by_id" not in g:
        g.reader_by_id = {e.paper_id: e for e in reader_entries(ctx)}
    return g.reader_by_id.get(pid)


def entry_json(e, pid: str) -> dict:
    """What the page's action buttons show of an entry: ``{"id", "rating", "read", "lists"}``."""
    return {"id": pid, "rating": e.rating if e else 0, "read": bool(e and e.read_at),
            "lists": list(e.lists) if e else []}


def register(app: Flask, ctx: WebContext) -> None:
    """Add the reader's routes (``mark``, ``reading_list``, ``for_you``) and the ``title_text`` filter to ``app``.

    Args:
        app: the Flask app.
        ctx: the shared state.
    """
    atlas = ctx.atlas
    # ``{{ p.title|title_text }}``: a title's inline math as text ($i$-Mix → i-Mix), for every template
    app.add_template_filter(title_text, "title_text")

    @app.post("/paper/<pid>/mark")
    def mark(pid: str):
        """One action on one paper; JSON (the new state) for a page script, else a redirect back to ``next``."""
        action = request.form.get("action", "")
        # a paper no longer in the atlas (kept on the reading list) can still be taken off it and unliked
        if pid not in atlas.by_id and not (action in ("remove", "remove-all", "unrate") and mine_of(ctx, pid)):
            abort(404)
        try:
            list_name = check_list_name(request.form.get("list", ""), pid) or rl.DEFAULT_LIST
        except LimitExceeded as e:
            abort(400, str(e))
        try:
            if action in ("like", "dislike", "unrate"):
                rl.rate(atlas.path, pid, {"like": 1, "dislike": -1, "unrate": 0}[action])
            elif action in ("read", "unread"):
                rl.mark_read(atlas.path, pid, action == "read")
            elif action == "add":
                rl.add(atlas.path, pid, list_name)
            elif action == "remove":
                rl.remove(atlas.path, pid, list_name)
            elif action == "remove-all":  # off every list (its note, rating and read mark stay)
                rl.remove(atlas.path, pid, None)
            elif action == "note":
                rl.set_note(atlas.path, pid, request.form.get("note", ""))
            else:
                abort(400, f"unknown action {action!r}")
        except ValueError as e:
            abort(400, str(e))
        if request.accept_mimetypes.best == "application/json":
            mine = next((e for e in rl.entries(atlas.path) if e.paper_id == pid), None)
            return jsonify(entry_json(mine, pid))
        return redirect(safe_next(request.form.get("next")) or url_for("paper", pid=pid))

    @app.get("/list")
    def reading_list():
        """The reader's entries (``?list=NAME``: one list), each with Unlike / Remove buttons."""
        # an entry unliked and taken off every list, with no note or read mark, is no longer on the reading list
        es = [e for e in reader_entries(ctx) if e.rating or e.note or e.read_at or e.lists]
        name = request.args.get("list") or None
        shown = [e for e in es if name is None or name in e.lists]
        return render_template("list.html", entries=shown, names=rl.list_names(atlas.path), current=name,
                               n_liked=sum(e.rating > 0 for e in es))

    @app.get("/foryou")
    def for_you():
        """Recommendations from the liked papers; liked, disliked and read papers are left out (as ``recommend``)."""
        from ..recommend import recommend

        es = reader_entries(ctx)  # one read of the reading list serves likes, dislikes and read marks
        liked = [e.paper_id for e in es if e.rating > 0 and e.paper_id in atlas.by_id]
        disliked = [e.paper_id for e in es if e.rating < 0 and e.paper_id in atlas.by_id]
        no_topic = [x for x in request.args.getlist("no_topic") if x.strip()]
        no_kp = [x for x in request.args.getlist("no_keyphrase") if x.strip()]
        already = [e.paper_id for e in es if e.read_at]
        k = ctx.int_arg("k", 20)
        recs = recommend(atlas, liked, disliked, k=k, exclude_topics=no_topic,
                         exclude_keyphrases=no_kp, exclude=already) if liked else []
        return render_template("foryou.html", recs=recs, liked=[atlas.by_id[i] for i in liked],
                               disliked=[atlas.by_id[i] for i in disliked], no_topic=no_topic, no_kp=no_kp)
