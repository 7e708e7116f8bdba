"""The ``trends`` command: topics rising and falling over the atlas's years, and topic shares per venue."""

from __future__ import annotations

import click

from ._common import db_option, open_atlas


def _cut(text: str, width: int) -> str:
    """``text`` on one line, at most ``width`` characters (an ellipsis marks a cut)."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _year_table(yt, top: int) -> list[str]:
    """The lines ``trends --by year`` prints for a :class:`paperatlas.trends.YearTrends`."""
    from ..trends import pp

    y0, y1 = yt.years[0], yt.years[-1]
    first, last = yt.years[:3], yt.years[-3:]
    kind = "areas" if yt.level == "area" else "topics"
    lines = [f"Topic trends ({kind}): {yt.n_papers:,} papers in {len(yt.years)} years {y0}-{y1} "
             f"(years with {yt.min_papers} or more papers), {len(yt.trends)} {kind}.",
             "Share = a topic's papers / all papers of the year. Slope = OLS of yearly share on year",
             "(scipy.stats.linregress), in percentage points per year, with its 95% interval (t, n-2 df);",
             "rising or falling only when the interval excludes 0."]
    head = (f"  {'id':>5}  {'topic':<40} {'slope pp/yr':>11}  {'95% interval':<17} "
            f"share {first[0]}-{str(first[-1])[-2:]} -> {last[0]}-{str(last[-1])[-2:]}")
    for name, rows in (("Rising", yt.rising), ("Falling", yt.falling)):
        lines.append("")
        if not rows:
            lines.append(f"{name}: none of the {len(yt.trends)} {kind} (no slope's interval excludes 0).")
            continue
        lines.append(f"{name}: {len(rows)} of {len(yt.trends)} {kind}"
                     + (f" ({min(top, len(rows))} fastest)" if top < len(rows) else ""))
        lines.append(head)
        for t in rows[:top]:
            ci = f"[{pp(t.ci_low, True)}, {pp(t.ci_high, True)}]"
            lines.append(f"  {t.topic.id:>5}  {_cut(t.topic.label, 40):<40} {pp(t.slope, True):>11}  {ci:<17} "
                         f"{pp(t.pooled_share(True)):>5}% -> {pp(t.pooled_share(False))}%")
    n_flat = sum(t.direction == "flat" for t in yt.trends)
    lines += ["", f"Flat: {n_flat} {kind} (the slope's 95% interval includes 0)."]
    if yt.sparse_years:
        few = ", ".join(f"{y}: {n}" for y, n in yt.sparse_years.items())
        lines.append(f"Left out: {len(yt.sparse_years)} years with fewer than {yt.min_papers} papers ({few}).")
    if yt.n_undated:
        lines.append(f"Left out: {yt.n_undated} papers without a year.")
    return lines


def _venue_table(vs, top: int) -> list[str]:
    """The lines ``trends --by venue`` prints for a :class:`paperatlas.trends.VenueShares`."""
    kind = "areas" if vs.level == "area" else "topics"
    w = 15
    lines = [f"Topic shares by venue ({kind}): the share of each venue's papers in the topic, in percent, with its "
             "95% Wilson interval", "(scipy.stats.binomtest). Venues without their year; "
             f"the {min(top, len(vs.rows))} largest of {len(vs.rows)} {kind}.", "",
             f"  {'id':>5}  {'topic':<34}" + "".join(f" {_cut(v, w):>{w}}" for v in vs.venues),
             f"  {'':>5}  {'papers':<34}" + "".join(f" {n:>{w},}" for n in vs.totals)]
    for topic, _counts, shares, cis in vs.rows[:top]:
        lines.append(f"  {topic.id:>5}  {_cut(topic.label, 34):<34}"
                     + "".join(f" {s * 100:>{w}.1f}" for s in shares))
        lines.append(f"  {'':>5}  {'':<34}"
                     + "".join(f" {f'[{lo * 100:.1f}-{hi * 100:.1f}]':>{w}}" for lo, hi in cis))
    if vs.n_unlabelled:
        lines += ["", f"Left out: {vs.n_unlabelled} papers without a venue."]
    return lines


@click.command(name="trends")
@db_option
@click.option("--by", "by", type=click.Choice(["year", "venue"]), default="year", show_default=True,
              help="year: each topic's share of papers per year and its slope, rising and falling topics named. "
                   "venue: each topic's share of each venue's papers (venue without its year).")
@click.option("--level", type=click.Choice(["area", "topic"]), default="topic", show_default=True,
              help="area: the top-level areas; topic: their sub-topics.")
@click.option("--top", default=None, type=click.IntRange(min=1), metavar="N",
              help="Rising and falling topics shown (--by year, default 5 each), or topics shown (--by venue, "
                   "default 10, largest first).")
@click.option("--min-papers", default=None, type=click.IntRange(min=1), metavar="N",
              help="--by year: leave out years with fewer than N papers (default 30): their shares are too "
                   "noisy to weigh in a slope.")
@click.option("--since", type=int, default=None, metavar="YEAR",
              help="--by year: count only papers of YEAR and later (e.g. the last decade: a topic that appeared "
                   "late rises more steeply there than over the whole span).")
@click.option("--until", type=int, default=None, metavar="YEAR", help="--by year: count only papers of YEAR and "
              "earlier.")
def trends_command(db, by, level, top, min_papers, since, until):
    """Topic trends: which topics rise and fall across the atlas's years (or how venues differ).

    For an atlas built from listings of several years (e.g. paperlists' nips1987..nips2018.json.gz). A topic's
    share of a year is its papers / the year's papers; its slope is the OLS slope of the yearly share on the year
    (scipy.stats.linregress) in percentage points per year, with its standard error and 95% interval. A topic is
    named rising or falling only when the interval excludes 0; the others are counted as flat. Years with fewer
    than --min-papers papers are left out of the fit and listed. The topics are one model over all years, so a
    topic is the same topic in every year. Needs at least 3 such years (--by venue: 2 venues).

    \b
    Examples:
      paperatlas trends --db nips.db                   # 5 fastest rising and falling sub-topics
      paperatlas trends --db nips.db --level area --top 3
      paperatlas trends --db nips.db --since 2009         # the last decade of NeurIPS 1987-2018
      paperatlas trends --by venue --level area        # share of each area per venue
    """
    from ..trends import MIN_PAPERS, TrendsUnavailable, atlas_trends, venue_shares

    atlas = open_atlas(db)
    try:
        if by == "year":
            yt = atlas_trends(atlas, level, min_papers or MIN_PAPERS, since, until)
            lines = _year_table(yt, top or 5)
        else:
            if min_papers is not None or since is not None or until is not None:
                raise click.UsageError("--min-papers, --since and --until apply to --by year only")
            lines = _venue_table(venue_shares(atlas.papers, atlas.topics, level), top or 10)
    except TrendsUnavailable as e:
        raise click.ClickException(f"{atlas.path}: {e}") from e
    finally:
        atlas.close()
    for line in lines:
        click.echo(line)
