"""Topic trends: each topic's share of papers per year and per venue, and the topics rising and falling over years.

Pure computation over an atlas's papers and topics (an opened :class:`paperatlas.store.Atlas`, or the lists a
publisher gets). The topic model is one model fitted on all papers of the atlas, so a topic is the same topic in
every year; only the papers' years and venues are used here.

Method (:func:`year_trends`):

* **share** of topic *T* in year *y* = papers of *y* whose topic (sub-topic, or its area at ``level="area"``) is
  *T* / all papers of *y* with a year; a fraction in [0, 1] (printed in percent).
* **Years with few papers are left out** of the fit: only years with at least ``min_papers`` papers (default
  :data:`MIN_PAPERS` = 30) count. A share over fewer papers moves by several percentage points from one paper
  more or less (its binomial standard error is up to 0.5 / sqrt(n): 9 points at n = 30) and would decide the
  slope of a small topic alone. The years left out are reported (:attr:`YearTrends.sparse_years`).
* **slope** = the ordinary least-squares (OLS) slope of the yearly share on the year, over the kept years, each
  year one observation (unweighted, so 2018's 1,000 papers do not drown 1990's 100): ``scipy.stats.linregress``
  (SciPy reference: *scipy.stats.linregress*), in share per year (printed as percentage points per year, pp/yr).
  Its **standard error** is linregress's (from the residual scatter, which includes the binomial noise of the
  smaller years), and its **95 % interval** is ``slope ± t(0.975, n - 2) * stderr`` with Student's *t*
  (``scipy.stats.t.ppf``), n = kept years (the textbook OLS interval, e.g. Montgomery, Peck & Vining,
  *Introduction to Linear Regression Analysis*, 2.3.1).
* a topic is named **rising** when the whole interval is above 0, **falling** when it is below 0, else *flat*.
  Caveats: the interval assumes independent, equally noisy yearly residuals (shares of neighbouring years are
  correlated, which makes it optimistic), and with hundreds of topics about 5 % of topics with no trend at all
  are expected to be named by chance; the slope is a linear summary of a curve the chart shows in full.

Per venue (:func:`venue_shares`): the venue *series* is the venue with a trailing year removed (``"NeurIPS
2018"`` -> ``"NeurIPS"``), and each topic's share of each series' papers comes with its 95 % Wilson score interval
(``scipy.stats.binomtest(...).proportion_ci(method="wilson")``; Wilson 1927, *JASA* 22:209).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .model import Paper, Topic

#: Fewest papers a year needs for its shares to enter a slope (see the module docstring).
MIN_PAPERS = 30
#: Fewest kept years a slope needs (two points always fit a line; three leave one degree of freedom).
MIN_YEARS = 3
#: Confidence level of the slope's interval and of the venue shares' intervals.
CONFIDENCE = 0.95

Level = Literal["area", "topic"]
LEVELS: tuple[str, ...] = ("area", "topic")
_YEAR_SUFFIX = re.compile(r"[\s'’,-]*\b(?:19|20)\d\d\s*$")


class TrendsUnavailable(ValueError):
    """The atlas does not span enough years (or venues) for trends; the message says what it spans.

    ``str(e)`` is the command line's message (it may name a flag, ``lower --min-papers``); :attr:`reason` is the
    same without the flag, for pages where no flag can be given (the web app's Trends page).
    """

    def __init__(self, reason: str, cli_hint: str = ""):
        """Keep the reason; the message is the reason and the command line's hint.

        Args:
            reason: What the atlas spans and what would give trends (no command-line flag named).
            cli_hint: What a command-line user can also do (e.g. ``"or lower --min-papers"``), appended to
                ``str(e)`` only.
        """
        super().__init__(f"{reason[:-1]}, {cli_hint}." if cli_hint and reason.endswith(".") else
                         f"{reason} {cli_hint}".strip())
        self.reason = reason
        self.cli_hint = cli_hint


@dataclass(frozen=True)
class Trend:
    """One topic's share of papers per year and the OLS slope of that share on the year.

    Attributes:
        topic: The area or sub-topic.
        years: The kept years (at least ``min_papers`` papers each), ascending; shape ``(n,)``.
        counts: The topic's papers in each kept year; shape ``(n,)``.
        totals: All papers (with a year) in each kept year; shape ``(n,)``.
        shares: ``counts / totals``, fractions in [0, 1]; shape ``(n,)``.
        slope: OLS slope of share on year, share per year (0.001 = 0.1 percentage points a year).
        intercept: OLS intercept, share at year 0 (the fitted share in year y is ``intercept + slope * y``).
        stderr: Standard error of ``slope``, share per year.
        ci_low: Lower end of the slope's 95 % interval, share per year.
        ci_high: Upper end of the slope's 95 % interval, share per year.
        p_value: Two-sided p-value of slope = 0 (Wald test with the *t* distribution, as linregress gives it).
        direction: ``"rising"`` (interval above 0), ``"falling"`` (below 0) or ``"flat"``.
    """

    topic: Topic
    years: tuple[int, ...]
    counts: tuple[int, ...]
    totals: tuple[int, ...]
    shares: tuple[float, ...]
    slope: float
    intercept: float
    stderr: float
    ci_low: float
    ci_high: float
    p_value: float
    direction: str

    @property
    def share(self) -> float:
        """The topic's share of all papers of the kept years together (a fraction)."""
        return sum(self.counts) / max(1, sum(self.totals))

    def pooled_share(self, first: bool, k: int = 3) -> float:
        """The share over the first (or last) ``k`` kept years pooled: their topic papers / their papers."""
        sl = slice(0, k) if first else slice(-k, None)
        return sum(self.counts[sl]) / max(1, sum(self.totals[sl]))


@dataclass(frozen=True)
class YearTrends:
    """The trends of every topic of one level over the atlas's years.

    Attributes:
        level: ``"area"`` (level-0 topics) or ``"topic"`` (sub-topics).
        min_papers: The fewest papers a kept year has.
        years: The kept years, ascending.
        totals: Papers in each kept year.
        sparse_years: ``year -> papers`` of the years left out (fewer than ``min_papers``).
        n_papers: Papers with a year and a topic in the kept years.
        n_undated: Papers without a year (not counted anywhere).
        trends: One :class:`Trend` per topic with papers in the kept years, largest share first.
    """

    level: str
    min_papers: int
    years: tuple[int, ...]
    totals: tuple[int, ...]
    sparse_years: dict[int, int]
    n_papers: int
    n_undated: int
    trends: tuple[Trend, ...]

    @property
    def rising(self) -> list[Trend]:
        """Topics whose slope's 95 % interval is above 0, steepest first."""
        return sorted((t for t in self.trends if t.direction == "rising"), key=lambda t: (-t.slope, t.topic.id))

    @property
    def falling(self) -> list[Trend]:
        """Topics whose slope's 95 % interval is below 0, steepest fall first."""
        return sorted((t for t in self.trends if t.direction == "falling"), key=lambda t: (t.slope, t.topic.id))

    def of(self, topic_id: int) -> Trend | None:
        """The trend of the topic with id ``topic_id``, or None when it has no papers in the kept years."""
        return next((t for t in self.trends if t.topic.id == topic_id), None)


def _group_of(topics: Mapping[int, Topic], level: str):
    """``topic_id -> the Topic counted at this level`` (its area for ``"area"``), None for no topic."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    has_areas = any(t.level == 0 for t in topics.values())

    def group(tid: int | None) -> Topic | None:
        t = topics.get(tid) if tid is not None else None
        if t is None or level == "topic" or not has_areas:
            return t
        return topics.get(t.parent_id, t) if t.parent_id is not None else t

    return group


def year_trends(papers: Iterable[Paper], topics: Mapping[int, Topic], level: Level = "topic",
                min_papers: int = MIN_PAPERS, since: int | None = None, until: int | None = None) -> YearTrends:
    """Each topic's share of papers per year and its OLS slope with a 95 % interval (module docstring: method).

    Args:
        papers: The atlas's papers (``year`` and ``topic_id`` are read).
        topics: ``topic id -> Topic`` (an atlas's ``topics``).
        level: ``"topic"`` for sub-topics (a paper's ``topic_id``), ``"area"`` for their areas.
        min_papers: Fewest papers a year needs to be kept (>= 1).
        since: Count only papers of this year and later (e.g. the last decade, where a topic that appeared late
            has a steeper slope than over the whole span); None for all.
        until: Count only papers of this year and earlier; None for all.

    Returns:
        The :class:`YearTrends` (papers outside ``since``-``until`` are not counted anywhere).

    Raises:
        ValueError: ``level`` is not ``"area"`` or ``"topic"``, or ``min_papers`` < 1.
        TrendsUnavailable: Fewer than :data:`MIN_YEARS` years have ``min_papers`` papers (the message lists the
            papers per year).
    """
    from scipy import stats

    if min_papers < 1:
        raise ValueError(f"min_papers must be at least 1, not {min_papers}")
    group = _group_of(topics, level)
    per_year: Counter[int] = Counter()
    cells: Counter[tuple[int, int]] = Counter()
    by_id: dict[int, Topic] = {}
    n_undated = 0
    for p in papers:
        if p.year is None:
            n_undated += 1
            continue
        if (since is not None and p.year < since) or (until is not None and p.year > until):
            continue
        per_year[p.year] += 1
        t = group(p.topic_id)
        if t is not None:
            cells[(t.id, p.year)] += 1
            by_id[t.id] = t
    years = tuple(sorted(y for y, n in per_year.items() if n >= min_papers))
    sparse = {y: n for y, n in sorted(per_year.items()) if n < min_papers}
    if len(years) < MIN_YEARS:
        spans = ", ".join(f"{y}: {n}" for y, n in sorted(per_year.items())) or "no paper has a year"
        raise TrendsUnavailable(
            f"trends need at least {MIN_YEARS} years with {min_papers} or more papers each; this atlas has "
            f"{len(years)} ({spans}). Build it from listings of more years (e.g. paperlists' nips*.json.gz).",
            cli_hint="or lower --min-papers")
    totals = tuple(per_year[y] for y in years)
    t_crit = float(stats.t.ppf(0.5 + CONFIDENCE / 2, len(years) - 2))
    out = []
    for tid, topic in by_id.items():
        counts = tuple(cells[(tid, y)] for y in years)
        if not any(counts):
            continue
        shares = tuple(c / n for c, n in zip(counts, totals, strict=True))
        fit = stats.linregress(years, shares)
        slope, se = float(fit.slope), float(fit.stderr)
        lo, hi = slope - t_crit * se, slope + t_crit * se
        p_value = float(fit.pvalue) if math.isfinite(fit.pvalue) else 1.0
        direction = "rising" if lo > 0 else "falling" if hi < 0 else "flat"
        out.append(Trend(topic, years, counts, totals, shares, slope, float(fit.intercept), se, lo, hi,
                         p_value, direction))
    out.sort(key=lambda t: (-t.share, t.topic.id))
    return YearTrends(level, min_papers, years, totals, sparse,
                      sum(sum(t.counts) for t in out), n_undated, tuple(out))


def venue_series(venue: str) -> str:
    """The venue without a trailing year: ``"NeurIPS 2018"`` -> ``"NeurIPS"``; ``"Nature"`` stays; ``""`` stays."""
    return _YEAR_SUFFIX.sub("", venue or "").strip() or (venue or "").strip()


@dataclass(frozen=True)
class VenueShares:
    """Each topic's share of each venue series' papers, with 95 % Wilson intervals.

    Attributes:
        level: ``"area"`` or ``"topic"``.
        venues: The venue series, most papers first; shape ``(v,)``.
        totals: Papers per venue series; shape ``(v,)``.
        rows: One ``(topic, counts, shares, intervals)`` per topic, largest first: ``counts`` shape ``(v,)``
            papers, ``shares`` shape ``(v,)`` fractions, ``intervals`` shape ``(v, 2)`` fractions ``(low, high)``.
        n_unlabelled: Papers without a venue (not counted).
    """

    level: str
    venues: tuple[str, ...]
    totals: tuple[int, ...]
    rows: tuple[tuple[Topic, tuple[int, ...], tuple[float, ...], tuple[tuple[float, float], ...]], ...]
    n_unlabelled: int


def venue_shares(papers: Iterable[Paper], topics: Mapping[int, Topic], level: Level = "topic") -> VenueShares:
    """Each topic's share of papers per venue series (:func:`venue_series`) with its 95 % Wilson interval.

    Args:
        papers: The atlas's papers (``venue`` and ``topic_id`` are read).
        topics: ``topic id -> Topic``.
        level: ``"topic"`` or ``"area"``.

    Returns:
        The :class:`VenueShares`.

    Raises:
        ValueError: An unknown ``level``.
        TrendsUnavailable: The papers come from fewer than two venue series.
    """
    from scipy import stats

    group = _group_of(topics, level)
    per_venue: Counter[str] = Counter()
    cells: Counter[tuple[int, str]] = Counter()
    by_id: dict[int, Topic] = {}
    n_unlabelled = 0
    for p in papers:
        v = venue_series(p.venue)
        if not v:
            n_unlabelled += 1
            continue
        per_venue[v] += 1
        t = group(p.topic_id)
        if t is not None:
            cells[(t.id, v)] += 1
            by_id[t.id] = t
    if len(per_venue) < 2:
        only = next(iter(per_venue), "none")
        raise TrendsUnavailable(f"shares by venue need papers of two or more venues; this atlas has one ({only}). "
                                f"Use --by year, or build from listings of several venues.")
    venues = tuple(v for v, _ in sorted(per_venue.items(), key=lambda kv: (-kv[1], kv[0])))
    totals = tuple(per_venue[v] for v in venues)
    rows = []
    for tid, topic in sorted(by_id.items(), key=lambda kv: (-sum(cells[(kv[0], v)] for v in venues), kv[0])):
        counts = tuple(cells[(tid, v)] for v in venues)
        cis = []
        for c, n in zip(counts, totals, strict=True):
            ci = stats.binomtest(c, n).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
            cis.append((float(ci.low), float(ci.high)))
        rows.append((topic, counts, tuple(c / n for c, n in zip(counts, totals, strict=True)), tuple(cis)))
    return VenueShares(level, venues, totals, tuple(rows), n_unlabelled)


def atlas_trends(atlas, level: Level = "topic", min_papers: int = MIN_PAPERS, since: int | None = None,
                 until: int | None = None) -> YearTrends:
    """:func:`year_trends` of an opened :class:`paperatlas.store.Atlas`, computed once per atlas object.

    Args:
        atlas: The opened atlas.
        level: ``"topic"`` or ``"area"``.
        min_papers: As :func:`year_trends`.
        since: As :func:`year_trends`.
        until: As :func:`year_trends`.

    Returns:
        The :class:`YearTrends` (cached with the atlas: ``atlas.derived``).

    Raises:
        ValueError: As :func:`year_trends`.
        TrendsUnavailable: As :func:`year_trends` (the verdict is cached too: raised again without recounting).
    """
    def compute() -> YearTrends | TrendsUnavailable:
        try:
            return year_trends(atlas.papers, atlas.topics, level, min_papers, since, until)
        except TrendsUnavailable as e:
            return e

    value = atlas.derived(f"trends.{level}.{min_papers}.{since}.{until}", compute)
    if isinstance(value, TrendsUnavailable):
        raise TrendsUnavailable(value.reason, value.cli_hint)  # a fresh one: the cached one keeps no traceback
    return value


def pp(share: float, sign: bool = False) -> str:
    """A share (or a share per year) as percentage points: ``0.0123`` -> ``"1.23"`` (``"+1.23"`` with ``sign``)."""
    return f"{share * 100:+.2f}" if sign else f"{share * 100:.2f}"


def describe(t: Trend) -> str:
    """One line for a topic's trend.

    E.g. ``"rising +0.21 pp/yr (95% CI +0.15 to +0.27; 1987–1989 2.10% → 2016–2018 6.30%)"``.
    The shares are those of the first and last three kept years pooled (:meth:`Trend.pooled_share`).
    """
    first, last = t.years[:3], t.years[-3:]
    span = (f"{first[0]}–{first[-1]} {pp(t.pooled_share(True))}% → {last[0]}–{last[-1]} "
            f"{pp(t.pooled_share(False))}%")
    return (f"{t.direction} {pp(t.slope, True)} pp/yr (95% CI {pp(t.ci_low, True)} to {pp(t.ci_high, True)}; "
            f"{span})")


def chart_payload(yt: YearTrends, trends: Sequence[Trend], title: str = "") -> dict[str, Any]:
    """The data the trends chart (``mapview/static/trendchart.js``) draws: one line per topic plus its OLS fit.

    Args:
        yt: The year trends the lines come from.
        trends: The topics to draw (e.g. ``yt.rising[:5] + yt.falling[:5]``, or one topic).
        title: The chart's title.

    Returns:
        A JSON-able dict: ``title``, ``years`` (kept years), ``totals`` (papers per year) and ``series``: per topic
        ``id``, ``label``, ``direction``, ``shares`` (percent, one per year), ``counts``, ``fit`` (percent at the
        first and last year), ``slope``/``ci`` (percentage points per year), ``slope_text`` (the slope as
        :func:`pp` prints it everywhere else, e.g. ``"+0.62"``) and ``text`` (:func:`describe`).
    """
    y0, y1 = yt.years[0], yt.years[-1]
    series = [{"id": t.topic.id, "label": t.topic.label, "direction": t.direction,
               "shares": [round(s * 100, 4) for s in t.shares], "counts": list(t.counts),
               "fit": [round((t.intercept + t.slope * y) * 100, 4) for y in (y0, y1)],
               "slope": round(t.slope * 100, 4), "slope_text": pp(t.slope, True),
               "ci": [round(t.ci_low * 100, 4), round(t.ci_high * 100, 4)],
               "text": describe(t)} for t in trends]
    return {"title": title, "years": list(yt.years), "totals": list(yt.totals), "series": series}


__all__ = ["CONFIDENCE", "LEVELS", "MIN_PAPERS", "MIN_YEARS", "Trend", "TrendsUnavailable", "VenueShares",
           "YearTrends", "atlas_trends", "chart_payload", "describe", "pp", "venue_series", "venue_shares",
           "year_trends"]
