"""Topic trends in the published outputs: the site's ``trends.html`` and topic-page charts, and ``topics-md``'s.

The numbers are :func:`paperatlas.trends.year_trends`'s (OLS slope of each topic's yearly share, with its 95 %
interval; rising or falling only when the interval excludes 0) over the papers being published; an atlas with
fewer than 3 years of at least :data:`paperatlas.trends.MIN_PAPERS` papers gets a sentence saying so instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..model import Paper, Topic
from ..trends import TrendsUnavailable, YearTrends, chart_payload, describe, pp, year_trends
from ._common import escape_md, github_anchor

#: Rising and falling sub-topics the site's trends page and the Markdown section list.
TOP = 5


@dataclass(frozen=True)
class PublishedTrends:
    """The trends of the papers being published, at both levels.

    Attributes:
        areas: Trends of the areas, or None when unavailable.
        topics: Trends of the sub-topics, or None when unavailable.
        unavailable: Why there are none (:class:`paperatlas.trends.TrendsUnavailable`'s message), else ``""``.
    """

    areas: YearTrends | None
    topics: YearTrends | None
    unavailable: str

    def of(self, t: Topic):
        """The :class:`paperatlas.trends.Trend` of topic ``t`` (an area among areas, a sub-topic among sub-topics)."""
        yt = self.areas if t.level == 0 else self.topics
        return yt.of(t.id) if yt is not None else None


def published_trends(papers: Sequence[Paper], topics: Sequence[Topic]) -> PublishedTrends:
    """The area and sub-topic trends of ``papers`` (never raises for too few years: ``unavailable`` says why).

    Args:
        papers: The papers being published.
        topics: Their areas and sub-topics.

    Returns:
        The :class:`PublishedTrends`.
    """
    by_id = {t.id: t for t in topics}
    try:
        return PublishedTrends(year_trends(papers, by_id, "area"), year_trends(papers, by_id, "topic"), "")
    except TrendsUnavailable as e:
        return PublishedTrends(None, None, str(e))


def site_page_args(tr: PublishedTrends, top: int = TOP) -> dict[str, Any]:
    """Template arguments of the site's ``trends.html`` (``site/trends.html``).

    Args:
        tr: The trends.
        top: Rising and falling sub-topics drawn and listed.

    Returns:
        ``unavailable`` (a sentence or ``""``) and, when available, ``method`` (one sentence), ``topic_chart`` and
        ``area_chart`` (:func:`paperatlas.trends.chart_payload`), and the rows ``rising``, ``falling``,
        ``area_rows`` (dicts: ``id``, ``label``, ``slope``, ``ci``, ``shares`` as text, ``direction``), ``n_flat``.
    """
    if tr.topics is None or tr.areas is None:
        return {"unavailable": tr.unavailable}
    yt, ya = tr.topics, tr.areas
    moving = yt.rising[:top] + yt.falling[:top]

    def row(t) -> dict[str, Any]:
        return {"id": t.topic.id, "label": t.topic.label, "direction": t.direction, "slope": pp(t.slope, True),
                "ci": f"[{pp(t.ci_low, True)}, {pp(t.ci_high, True)}]",
                "shares": f"{pp(t.pooled_share(True))}% → {pp(t.pooled_share(False))}%"}

    return {"unavailable": "", "method": method_sentence(yt),
            "topic_chart": chart_payload(yt, moving, title=f"The {len(moving)} fastest rising and falling topics")
            if moving else None,
            "area_chart": chart_payload(ya, sorted(ya.trends, key=lambda t: -abs(t.slope))[:10],
                                        title="Areas (the 10 that moved most): share of each year's papers"),
            "rising": [row(t) for t in yt.rising[:top]], "falling": [row(t) for t in yt.falling[:top]],
            "n_rising": len(yt.rising), "n_falling": len(yt.falling),
            "n_flat": sum(t.direction == "flat" for t in yt.trends), "n_topics": len(yt.trends),
            "area_rows": [row(t) for t in ya.rising + ya.falling] + [row(t) for t in ya.trends
                                                                     if t.direction == "flat"]}


def method_sentence(yt: YearTrends) -> str:
    """One paragraph saying what the trend numbers are, over which years, and which years were left out."""
    left = ""
    if yt.sparse_years:
        left = "; left out: " + ", ".join(f"{y} ({n} papers)" for y, n in yt.sparse_years.items())
    return (f"{yt.n_papers} papers over {len(yt.years)} years, {yt.years[0]}–{yt.years[-1]} (years with "
            f"{yt.min_papers} or more papers{left}). A topic's share of a year is its papers / the year's papers; "
            "its slope is the OLS slope of the yearly share on the year (scipy.stats.linregress), in percentage "
            "points per year (pp/yr), with its 95% interval. A topic is called rising or falling only when the "
            "interval excludes 0. The topics are one model over all years.")


def topic_args(tr: PublishedTrends, t: Topic) -> dict[str, Any]:
    """Template arguments of a topic page's trend: ``trend_text`` and ``trend_chart`` (``""`` and None without one)."""
    trend = tr.of(t)
    yt = tr.areas if t.level == 0 else tr.topics
    if trend is None or yt is None:
        return {"trend_text": "", "trend_chart": None}
    return {"trend_text": describe(trend),
            "trend_chart": chart_payload(yt, [trend], title=f"Share of papers: {t.label}")}


def markdown_section(tr: PublishedTrends, top: int = TOP) -> list[str]:
    """The ``## Trends`` section of ``topics-md``: the method, then tables of rising and falling topics and areas.

    Args:
        tr: The trends.
        top: Rising and falling sub-topics listed.

    Returns:
        Markdown lines (no trailing blank line); ``[]`` when the papers span too few years.
    """
    if tr.topics is None or tr.areas is None:
        return []
    out = ["## Trends", "", method_sentence(tr.topics)]
    for yt, kind in ((tr.topics, "topics"), (tr.areas, "areas")):
        y = yt.years
        head = (f"| {kind[:-1]} | slope (pp/yr) | 95% interval | share {y[0]}–{y[min(2, len(y) - 1)]} → "
                f"{y[-3]}–{y[-1]} |")
        for name, rows in (("Rising", yt.rising), ("Falling", yt.falling)):
            shown = rows[:top] if kind == "topics" else rows
            out += ["", f"{name} {kind}: {len(rows)} of {len(yt.trends)}" + ("" if rows else ".")]
            if not rows:
                continue
            out += ["", head, "|---|---:|---|---|"]
            out += [f"| [{escape_md(t.topic.label)}](#{github_anchor(t.topic.label)}) | {pp(t.slope, True)} | "
                    f"[{pp(t.ci_low, True)}, {pp(t.ci_high, True)}] | {pp(t.pooled_share(True))}% → "
                    f"{pp(t.pooled_share(False))}% |" for t in shown]
    return out


def markdown_line(tr: PublishedTrends, t: Topic) -> str | None:
    """A topic's one-line trend for ``topics-md`` (``Trend: rising +0.97 pp/yr (95% CI ...)``), or None."""
    trend = tr.of(t)
    return f"Trend: {escape_md(describe(trend))}" if trend is not None else None
