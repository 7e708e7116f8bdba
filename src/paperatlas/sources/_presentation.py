"""When and where a paper is presented, as readers keep it in :attr:`paperatlas.model.Paper.extra`.

Shared by the readers whose listings name a session, a start and end time, a room or a poster board (the CSV table;
the paperlists JSON names sessions only). The keys are those of :data:`paperatlas.model.EXTRA_KEYS`: ``session``,
``starts_at``, ``ends_at``, ``timezone``, ``location``, ``poster``.

Times: ISO 8601 as :meth:`datetime.datetime.fromisoformat` reads it (``2025-12-05T16:30:00-08:00``,
``2025-12-05 16:30Z``, ``2025-12-05T16:30``); an end may also be a bare time of day (``19:30``), on the start's
day. A time with a UTC offset is an exact instant. A time without one is local to the row's IANA time zone (a
``timezone`` column: ``America/Los_Angeles``); with neither, the row's times are dropped with a warning naming the
file and line (the paper itself is kept), because guessing the machine's own zone would put a talk at the wrong
hour in a calendar. Stored times always carry their UTC offset (``starts_at``, ``ends_at``), and the zone name
when one was given (``timezone``), so a calendar export can say ``TZID=America/Los_Angeles``.
"""

from __future__ import annotations

import warnings
from datetime import datetime, time
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..model import SourceError
from ._common import SourceWarning


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise ValueError(f"unknown time zone {name!r} (expected an IANA name such as 'Europe/Vienna')") from e


def _instant(text: str, zone: ZoneInfo | None, what: str) -> datetime:
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError as e:
        raise ValueError(f"{what} {text!r} is not an ISO 8601 date and time (e.g. 2025-12-05T16:30:00-08:00)") from e
    if when.tzinfo is None:
        if zone is None:
            raise ValueError(f"{what} {text!r} has no UTC offset and the row names no time zone: write it as "
                             "2025-12-05T16:30:00-08:00, or add a 'timezone' column (e.g. America/Los_Angeles)")
        return when.replace(tzinfo=zone)
    return when.astimezone(zone) if zone is not None else when


def _end(text: str, start: datetime, zone: ZoneInfo | None) -> datetime:
    """The end: a full date and time, or a time of day on the start's day (in the start's zone)."""
    try:
        clock = time.fromisoformat(text.strip())
    except ValueError:
        return _instant(text, zone, "end")
    when = datetime.combine(start.date(), clock.replace(tzinfo=None), tzinfo=clock.tzinfo or start.tzinfo)
    return when.astimezone(zone) if zone is not None else when


def presentation(path: str, where: str | int, strict: bool = False, *, session: str = "", start: str = "",
                 end: str = "", timezone: str = "", location: str = "", poster: str = "") -> dict[str, str]:
    """The ``extra`` entries of one record's session, times, room and poster board.

    Args:
        path: The listing (for messages).
        where: The record's 1-based line or record index (for messages).
        strict: Raise on a time that cannot be read instead of warning and dropping the times.
        session: The session name as given.
        start: The start time (see the module docstring for the forms read).
        end: The end time, or a time of day on the start's day.
        timezone: The IANA time zone that times without a UTC offset are local to.
        location: The room or hall.
        poster: The poster board number or position.

    Returns:
        The non-empty ones of ``session``, ``starts_at``, ``ends_at`` (ISO 8601 with the UTC offset, to the
        second), ``timezone``, ``location``, ``poster``; no times when they cannot be read (warned).

    Raises:
        SourceError: When ``strict``: a time that is not ISO 8601, has no offset and no zone, names an unknown
            zone, or an end before its start (naming the file and line).
    """
    out = {k: " ".join(v.split()) for k, v in (("session", session), ("location", location), ("poster", poster))
           if v and v.strip()}
    if not (start.strip() or end.strip()):
        return out
    try:
        zone = _zone(timezone) if timezone.strip() else None
        if not start.strip():
            raise ValueError(f"end {end!r} without a start")
        begins = _instant(start, zone, "start")
        ends = _end(end, begins, zone) if end.strip() else None
        if ends is not None and ends < begins:
            raise ValueError(f"end {end!r} is before the start {start!r}")
    except ValueError as e:
        err = SourceError(path, where, f"{e}; the row's times are left out")
        if strict:
            raise err from e
        warnings.warn(str(err), SourceWarning, stacklevel=2)
        return out
    out["starts_at"] = begins.isoformat(timespec="seconds")
    if ends is not None:
        out["ends_at"] = ends.isoformat(timespec="seconds")
    if zone is not None:
        out["timezone"] = zone.key
    return out
