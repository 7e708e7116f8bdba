"""The conference plan's routes: ``/schedule`` and ``/schedule.ics``, both ``?list=NAME`` for one named list.

``/schedule`` shows the reading list by time with its clashes, or in walking order by topic; ``/schedule.ics``
downloads its papers with a time as an iCalendar file.

Both are GET pages that only read the atlas (:mod:`.security`: no CSRF token needed, the usual headers and Host
check apply); the ``.ics`` is sent as an attachment, ``text/calendar``, never cached.
"""

from __future__ import annotations

import re

from flask import Flask, Response, abort, render_template, request

from .. import readinglist as rl
from ..limits import LimitExceeded, check_list_name
from ..schedule import reading_plan, to_ics
from .context import WebContext


def _plan(ctx: WebContext):
    """The plan of ``?list=NAME`` (or the whole reading list); 404 for a list name nobody used."""
    name = request.args.get("list") or None
    try:
        if name is not None:
            check_list_name(name)
    except LimitExceeded as e:
        abort(400, str(e))
    try:
        return reading_plan(ctx.atlas, name)
    except LookupError as e:
        abort(404, str(e))


def register(app: Flask, ctx: WebContext) -> None:
    """Add ``schedule`` (``/schedule``) and ``schedule_ics`` (``/schedule.ics``) to ``app``.

    Args:
        app: The Flask app.
        ctx: The shared state.
    """

    @app.get("/schedule")
    def schedule():
        plan = _plan(ctx)
        titles = {s.paper.id: s.paper.title for s in plan.slots}
        return render_template("schedule.html", plan=plan, titles=titles, names=rl.list_names(ctx.atlas.path),
                               current=plan.list_name)

    @app.get("/schedule.ics")
    def schedule_ics():
        plan = _plan(ctx)
        label = plan.list_name or "reading list"
        try:
            data = to_ics(plan, name=f"paperatlas: {label}")
        except ValueError as e:  # no paper of the plan has a time
            abort(404, str(e))
        stem = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-") or "schedule"
        return Response(data, mimetype="text/calendar", headers={
            "Content-Disposition": f'attachment; filename="paperatlas-{stem}.ics"', "Cache-Control": "no-store"})
