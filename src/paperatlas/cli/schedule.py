"""``paperatlas schedule``: the reading list as a plan for the conference (see :mod:`paperatlas.schedule`)."""

from __future__ import annotations

import click

from ..schedule import Schedule, reading_plan, write_ics
from ._common import db_option, open_atlas


def _short(text: str, n: int = 100) -> str:
    return text if len(text) <= n else text[:n - 1].rstrip() + "…"


def render(schedule: Schedule) -> str:
    """The plan as the command prints it: headings (day, session or topic), one line per paper, clashes marked.

    Args:
        schedule: The plan.

    Returns:
        The text (no trailing newline).
    """
    timed, untimed = schedule.timed, schedule.untimed
    n = len(schedule.slots)
    what = f"the list {schedule.list_name!r}" if schedule.list_name else "your reading list"
    lines = [f"{n} paper{'s' if n != 1 else ''} on {what}: {len(timed)} with a time, "
             f"{len(schedule.clashes)} clash{'es' if len(schedule.clashes) != 1 else ''}"]
    titles = {s.paper.id: s.paper.title for s in schedule.slots}
    heading = None
    for s in timed:
        if s.group != heading:
            heading = s.group
            lines += ["", heading]
        mark = f"  CLASH {s.clash}" if s.clash else ""
        lines.append(f"  {s.when:<24} {_short(s.paper.title)}{mark}")
        if s.where:
            lines.append(f"  {'':<24}   {s.where}")
        for other in s.clashes_with:
            lines.append(f"  {'':<24}   ! overlaps: {_short(titles[other], 80)}")
    if untimed:
        lines += ["", "Without a time, in walking order (by session or topic, then poster number or map position):"
                  if timed else "No time in the listing: in walking order (by session or topic, then poster "
                                "number or map position):"]
        heading = None
        for s in untimed:
            if s.group != heading:
                heading = s.group
                lines += ["", heading]
            lines.append(f"  {s.poster or '-':<8} {_short(s.paper.title)}")
    if schedule.missing:
        lines += ["", f"{len(schedule.missing)} reading-list entries name papers not in this atlas (left out)."]
    return "\n".join(lines)


@click.command(name="schedule")
@click.option("--list", "list_name", default=None, metavar="NAME",
              help="Plan one named list (default: your whole reading list: listed, liked, noted or read papers).")
@click.option("--ics", "ics_path", default=None, metavar="FILE", type=click.Path(dir_okay=False),
              help="Also write the papers that have a time as an iCalendar file (one event each) for a calendar app.")
@db_option
def schedule_command(list_name, ics_path, db):
    """Your reading list as a plan for the conference: by time with clashes, or by topic.

    When the listing gives times (CSV columns Session, Start, End, Timezone, Room, Poster; see the README), papers
    are listed by start time in the conference's own time zone, and papers whose presentations overlap (other than
    two posters of one session) are marked CLASH. Papers without a time follow in walking order: by session or
    topic, then by poster number or map position, so posters hanging near each other are seen together.

    \b
    paperatlas schedule
    paperatlas schedule --list neurips --ics neurips.ics
    """
    atlas = open_atlas(db)
    try:
        plan = reading_plan(atlas, list_name)
    except LookupError as e:
        raise click.ClickException(str(e)) from e
    finally:
        atlas.close()
    if not plan.slots:
        raise click.ClickException("your reading list is empty: like papers or add them to a list first "
                                   "(paperatlas list like TITLE, paperatlas list add TITLE)")
    click.echo(render(plan))
    if ics_path:
        try:
            path = write_ics(plan, ics_path, name=f"paperatlas: {list_name or 'reading list'}")
        except (ValueError, OSError) as e:
            raise click.ClickException(str(e)) from e
        click.echo(f"\nwrote {path} ({len(plan.timed)} events)")
