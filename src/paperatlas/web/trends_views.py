"""Topic trend routes: the ``/trends`` overview, and the trend chart data a topic page shows.

Both read :func:`paperatlas.trends.atlas_trends` (computed once per atlas) and draw with
``mapview/static/trendchart.js`` and the bundled Plotly.js.
"""

from __future__ import annotations

from flask import Flask, render_template

from ..trends import TrendsUnavailable, atlas_trends, chart_payload, describe, venue_shares
from .context import WebContext

#: Rising and falling sub-topics the overview draws and lists by default (``?top=N``, at most 50).
TOP = 5


def topic_trend(ctx: WebContext, tid: int) -> dict | None:
    """Template arguments of a topic page's trend chart, or None when the atlas spans too few years.

    Args:
        ctx: the shared state.
        tid: the topic's id (an area is compared with the areas, a sub-topic with the sub-topics).

    Returns:
        ``{"trend_text": one line (:func:`paperatlas.trends.describe`), "trend_chart": the chart payload}``, or
        None (fewer than 3 years with enough papers, or the topic has no paper in them).
    """
    atlas = ctx.atlas
    t = atlas.topics.get(tid)
    if t is None:
        return None
    try:
        yt = atlas_trends(atlas, "area" if t.level == 0 else "topic")
    except TrendsUnavailable:
        return None
    tr = yt.of(tid)
    if tr is None:
        return None
    return {"trend_text": describe(tr), "trend_chart": chart_payload(yt, [tr], title=f"Share of papers: {t.label}")}


def register(app: Flask, ctx: WebContext) -> None:
    """Add ``trends_page`` (``/trends``, ``?top=N``, ``?since=YEAR``: fit only that year and later) to ``app``.

    Args:
        app: the Flask app.
        ctx: the shared state.
    """
    atlas = ctx.atlas

    def venue_table():
        """The areas' shares per venue, or None for an atlas of one venue (computed once)."""
        try:
            return venue_shares(atlas.papers, atlas.topics, "area")
        except TrendsUnavailable:
            return None

    @app.get("/trends")
    def trends_page():
        """Areas' shares per year, the fastest rising and falling sub-topics (chart and table), venue shares."""
        top = ctx.int_arg("top", TOP, hi=50)
        since = ctx.int_arg("since", None, lo=0, hi=9999)
        years = [p.year for p in atlas.papers if p.year is not None]
        # "the last ten years" only where the atlas reaches back further than that
        decade = max(years) - 9 if years and min(years) < max(years) - 9 else None
        try:
            areas = atlas_trends(atlas, "area", since=since)
            topics = atlas_trends(atlas, "topic", since=since)
        except TrendsUnavailable as e:
            # the reason without the command line's flag: here the reader can only widen the years (drop ?since)
            why = e.reason + (f" This page fits the years from {since} on: open /trends for every year."
                              if since is not None else "")
            return render_template("trends.html", unavailable=why, top=top, since=since, decade=decade)
        venues = atlas.derived("trends.venues.area", venue_table)
        moving = topics.rising[:top] + topics.falling[:top]
        return render_template(
            "trends.html", unavailable=None, top=top, since=since, decade=decade, areas=areas, topics=topics,
            venues=venues,
            area_chart=chart_payload(areas, sorted(areas.trends, key=lambda t: -abs(t.slope))[:10],
                                     title="Areas (the 10 that moved most): share of each year's papers"),
            topic_chart=chart_payload(topics, moving, title=f"The {len(moving)} fastest rising and falling topics")
            if moving else None)
