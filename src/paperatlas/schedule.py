"""A plan for the conference: the reading list as a schedule, its clashes, and an ``.ics`` calendar of it.

When the listing says when and where papers are presented (``Paper.extra`` keys ``session``, ``starts_at``,
``ends_at``, ``timezone``, ``location``, ``poster``, filled by the CSV reader from columns such as *Session*,
*Start*, *End*, *Room*, *Poster number*, and by the paperlists reader from CVPR/ICCV's ``session``), the plan lists
the papers by start time and finds the **clashes**: two papers whose presentations overlap in time and are not in
the one session (two posters of one poster session are seen in the same visit; two talks in parallel rooms are not).
Papers without a time follow, ordered as papers without any time are: by session (when the listing names sessions)
or by topic (area, then sub-topic), and within a group by poster number when every paper of it has one, else along
the map (a nearest-neighbour walk over the papers' x/y), so posters that hang near each other are seen together.

Times keep the conference's own zone: a paper is shown at the local time the listing gave, with its UTC offset. The
``.ics`` export (RFC 5545, written with the ``icalendar`` library) has one ``VEVENT`` per paper with a start time:
``TZID`` times with the zone's ``VTIMEZONE`` when the listing named an IANA zone, UTC (``...Z``) times otherwise, so
any calendar app puts them at the right instant.
"""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from . import readinglist as rl
from .cite.links import paper_link
from .files import write_bytes_atomic
from .model import Paper
from .store import Atlas

#: ``PRODID`` of the calendars written by :func:`to_ics`.
PRODID = "-//paperatlas//conference schedule//EN"
#: Domain part of every event ``UID`` (``<paper id>@`` this): stable, so a re-import updates instead of duplicating.
UID_DOMAIN = "paperatlas"


@dataclass
class Slot:
    """One paper of the plan.

    Attributes:
        paper: The paper (its TL;DR with the reader's override applied).
        entry: The reader's entry for it (rating, note, lists), or None.
        start: When its presentation starts (timezone-aware, in the listing's zone or offset), or None.
        end: When it ends (same), or None when the listing gives only a start.
        session: The session name, or ``""``.
        location: The room or hall, or ``""``.
        poster: The poster board as given (``"#2504"``), or ``""``.
        group: The heading it is listed under: the day (``"Fri 5 Dec 2025"``) for a timed paper, else its session
            or ``"Area › Sub-topic"``.
        clash: The 1-based number of its clash group (:attr:`Schedule.clashes`), or None.
        clashes_with: The ids of the papers it clashes with, in plan order.
    """

    paper: Paper
    entry: rl.Entry | None = None
    start: datetime | None = None
    end: datetime | None = None
    session: str = ""
    location: str = ""
    poster: str = ""
    group: str = ""
    clash: int | None = None
    clashes_with: list[str] = field(default_factory=list)

    @property
    def when(self) -> str:
        """Its time as shown: ``"16:30–19:30 UTC-08:00"`` (local to the listing's zone), or ``""``."""
        if self.start is None:
            return ""
        span = self.start.strftime("%H:%M")
        if self.end is not None:
            span += "–" + self.end.strftime("%H:%M") + (
                f" (+{(self.end.date() - self.start.date()).days}d)" if self.end.date() != self.start.date() else "")
        return f"{span} {self.start.tzname() or ''}".strip()

    @property
    def where(self) -> str:
        """Session, room and poster board as one line: ``"San Diego Poster Session 6 · Exhibit Hall C,D,E · #2504"``."""
        poster = self.poster if not self.poster or self.poster.startswith("#") else f"poster {self.poster}"
        return " · ".join(x for x in (self.session, self.location, poster) if x)


@dataclass
class Schedule:
    """A plan: papers with a time first, by start time, then the others in walking order.

    Attributes:
        slots: The papers of the plan, in plan order.
        clashes: Each clash group as the ids of its papers, in time order (a group: papers linked by overlaps).
        list_name: The named list it was made from, or None for the whole reading list.
        missing: Reading-list entries whose paper is not in this atlas (ids), left out.
    """

    slots: list[Slot] = field(default_factory=list)
    clashes: list[list[str]] = field(default_factory=list)
    list_name: str | None = None
    missing: list[str] = field(default_factory=list)

    @property
    def timed(self) -> list[Slot]:
        """The slots with a start time, by start."""
        return [s for s in self.slots if s.start is not None]

    @property
    def untimed(self) -> list[Slot]:
        """The slots without a time, in walking order."""
        return [s for s in self.slots if s.start is None]


def _stored_time(p: Paper, key: str) -> datetime | None:
    """``extra[key]`` as an aware datetime, in ``extra["timezone"]`` when named; None when absent or unreadable."""
    value = p.extra.get(key)
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:  # readers always store an offset; an atlas edited by hand may not
        return None
    zone = p.extra.get("timezone")
    if isinstance(zone, str) and zone:
        with contextlib.suppress(ZoneInfoNotFoundError, ValueError):
            when = when.astimezone(ZoneInfo(zone))
    return when


def _text(p: Paper, key: str) -> str:
    value = p.extra.get(key)
    return " ".join(str(value).split()) if isinstance(value, str | int | float) and not isinstance(value, bool) else ""


def _poster_key(poster: str) -> tuple[int, str]:
    """Sort key of a poster board: ``"#2504"`` -> ``(2504, "#2504")``; no number -> after every number."""
    m = re.search(r"\d+", poster)
    return (int(m.group()) if m else 1 << 62, poster)


def slot_of(p: Paper, entry: rl.Entry | None = None) -> Slot:
    """The plan's view of one paper: its time, session, room and poster board from ``p.extra``.

    Args:
        p: The paper.
        entry: The reader's entry for it, if any.

    Returns:
        A :class:`Slot` (``group``, ``clash`` not yet set). A start or end that is missing, unreadable or without a
        UTC offset is None; an end before the start is dropped.
    """
    start, end = _stored_time(p, "starts_at"), _stored_time(p, "ends_at")
    if start is None or (end is not None and end < start):
        end = None
    return Slot(p, entry, start, end, _text(p, "session"), _text(p, "location"), _text(p, "poster"))


def _together(a: Slot, b: Slot) -> bool:
    """Whether two timed slots are one visit: the same session (or, unnamed, the same room) at the same times."""
    place_a, place_b = a.session or a.location, b.session or b.location
    return bool(place_a) and place_a == place_b and a.start == b.start and a.end == b.end


def _overlap(a: Slot, b: Slot) -> bool:
    """Whether two timed slots overlap; a slot without an end is a moment (it overlaps what runs at its start)."""
    if a.start == b.start:
        return True
    a_end, b_end = a.end or a.start, b.end or b.start
    return a.start < b_end and b.start < a_end


def find_clashes(timed: list[Slot]) -> list[list[str]]:
    """Mark the clashes among slots sorted by start time, and group them.

    Two slots clash when their times overlap (:func:`_overlap`) and they are not one visit (:func:`_together`);
    a clash group is a connected set of clashing slots. Sets :attr:`Slot.clash` and :attr:`Slot.clashes_with`.

    Args:
        timed: Slots with a start time, sorted by start.

    Returns:
        The groups, each as paper ids in the slots' order; groups numbered from 1 in order of their first start.
    """
    parent = list(range(len(timed)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(timed):
        for j in range(i + 1, len(timed)):
            b = timed[j]
            if b.start > (a.end or a.start):  # sorted by start: nothing later overlaps a
                break
            if _overlap(a, b) and not _together(a, b):
                a.clashes_with.append(b.paper.id)
                b.clashes_with.append(a.paper.id)
                parent[root(j)] = root(i)
    groups: dict[int, list[int]] = {}
    for i, s in enumerate(timed):
        if s.clashes_with:
            groups.setdefault(root(i), []).append(i)
    out = []
    for number, members in enumerate(sorted(groups.values(), key=min), start=1):
        for i in members:
            timed[i].clash = number
        out.append([timed[i].paper.id for i in members])
    return out


def _walk(items: list, xy) -> list:
    """``items`` in nearest-neighbour order over their map positions ``xy(item) -> (x, y) | None``.

    Starts at the leftmost item; items without a position follow in their given order.
    """
    placed = [(it, xy(it)) for it in items]
    todo = [(it, pos) for it, pos in placed if pos is not None]
    out = []
    if todo:
        here = min(todo, key=lambda t: (t[1][0], t[1][1]))
        while todo:
            here = min(todo, key=lambda t: (math.dist(t[1], here[1]), t[1]))
            todo.remove(here)
            out.append(here[0])
    return out + [it for it, pos in placed if pos is None]


def _centroid(slots: list[Slot]) -> tuple[float, float] | None:
    pts = [(s.paper.x, s.paper.y) for s in slots if s.paper.x is not None and s.paper.y is not None]
    return (sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts)) if pts else None


def _within(slots: list[Slot]) -> list[Slot]:
    """One group's slots: by poster number when every one has a number, else along the map."""
    if slots and all(re.search(r"\d", s.poster) for s in slots):
        return sorted(slots, key=lambda s: (_poster_key(s.poster), s.paper.title))
    return _walk(sorted(slots, key=lambda s: s.paper.title),
                 lambda s: (s.paper.x, s.paper.y) if s.paper.x is not None and s.paper.y is not None else None)


def topic_order(atlas: Atlas, slots: list[Slot]) -> list[Slot]:
    """Slots without a time in walking order, each with its :attr:`Slot.group` set.

    Grouped by session when any slot names one (the sessions in map order of their papers' centroids; slots
    without a session after them, by topic), else by area and sub-topic (areas in map order of their centroids,
    sub-topics likewise within their area); within a group by poster number or along the map (:func:`_within`).

    Args:
        atlas: The atlas (topic labels and hierarchy).
        slots: The slots.

    Returns:
        The same slots, reordered.
    """
    by_session: dict[str, list[Slot]] = {}
    rest = []
    for s in slots:
        (by_session.setdefault(s.session, []) if s.session else rest).append(s)
    out = []
    for name in _walk(sorted(by_session), lambda k: _centroid(by_session[k])):
        for s in _within(by_session[name]):
            s.group = name
            out.append(s)
    areas: dict[str, dict[str, list[Slot]]] = {}
    for s in rest:
        area = atlas.area_of(s.paper.topic_id)
        area_label = area.label if area else "No topic"
        topic_label = atlas.topic_label(s.paper.topic_id) if area and area.id != s.paper.topic_id else ""
        areas.setdefault(area_label, {}).setdefault(topic_label, []).append(s)
    for area_label in _walk(sorted(areas), lambda k: _centroid([s for g in areas[k].values() for s in g])):
        topics = areas[area_label]
        for topic_label in _walk(sorted(topics), lambda k, t=topics: _centroid(t[k])):
            for s in _within(topics[topic_label]):
                s.group = f"{area_label} › {topic_label}" if topic_label else area_label
                out.append(s)
    return out


def plan(atlas: Atlas, paper_ids: list[str], entries: dict[str, rl.Entry] | None = None,
         list_name: str | None = None) -> Schedule:
    """The schedule of some papers of an atlas.

    Args:
        atlas: The atlas.
        paper_ids: The papers to plan (ids; unknown ids are reported in :attr:`Schedule.missing`, duplicates once).
        entries: The reader's entries by paper id (shown with the slots), if any.
        list_name: Recorded in :attr:`Schedule.list_name`.

    Returns:
        The :class:`Schedule`: timed slots by (start, end, session, room, poster, title) with their clashes,
        grouped by day (the start's date in its own zone), then the untimed ones in :func:`topic_order`.
    """
    entries = entries or {}
    ids = list(dict.fromkeys(paper_ids))
    slots = [slot_of(atlas.by_id[i], entries.get(i)) for i in ids if i in atlas.by_id]
    timed = sorted((s for s in slots if s.start is not None),
                   key=lambda s: (s.start, s.end or s.start, s.session, s.location, _poster_key(s.poster),
                                  s.paper.title))
    for s in timed:
        s.group = f"{s.start:%a} {s.start.day} {s.start:%b %Y}"
    clashes = find_clashes(timed)
    untimed = topic_order(atlas, [s for s in slots if s.start is None])
    return Schedule(timed + untimed, clashes, list_name, [i for i in ids if i not in atlas.by_id])


def reading_plan(atlas: Atlas, list_name: str | None = None) -> Schedule:
    """The schedule of the reader's reading list, or of one named list.

    The reading list is every paper on a named list, liked, noted or marked read (:mod:`paperatlas.readinglist`);
    papers only disliked are left out.

    Args:
        atlas: The atlas (its file holds the reading list).
        list_name: One named list (None: the whole reading list).

    Returns:
        The :class:`Schedule` (see :func:`plan`); empty when the list is.

    Raises:
        LookupError: ``list_name`` is given and no paper is on a list of that name.
    """
    es = rl.entries(atlas.path, list_name)
    if list_name is not None and not es:
        names = ", ".join(rl.list_names(atlas.path)) or "none yet"
        raise LookupError(f"no list named {list_name!r} (lists: {names})")
    chosen = [e for e in es if list_name is not None or e.lists or e.rating > 0 or e.note or e.read_at]
    return plan(atlas, [e.paper_id for e in chosen], {e.paper_id: e for e in chosen}, list_name)


def _description(p: Paper) -> str:
    link = paper_link(p)
    return "\n\n".join(x for x in (p.tldr.strip(), ", ".join(p.authors), link) if x)


NO_TIMES = ("no paper of this schedule has a start time: the atlas's listing gives no session times, so there is "
            "nothing to put in a calendar and no .ics was written (the plan is in walking order instead). Times come "
            "from a virtual-site export of NeurIPS/ICML/ICLR or a CSV with Start/End columns (README: 'A plan for "
            "the conference').")
"""The reason :func:`to_ics` gives when no paper has a time: what is missing and which listings have times."""


def to_ics(schedule: Schedule, name: str = "paperatlas schedule", now: datetime | None = None) -> bytes:
    """The schedule's papers with a start time as an iCalendar (RFC 5545) file, made with ``icalendar``.

    One ``VEVENT`` per timed paper: ``UID`` ``<paper id>@paperatlas`` (stable across exports, so importing again
    updates the events), ``SUMMARY`` the title, ``DESCRIPTION`` the TL;DR, authors and the paper's link, ``URL``
    the link, ``LOCATION`` room and poster board, ``CATEGORIES`` the session, ``DTSTART``/``DTEND`` in the
    listing's IANA zone (with its ``VTIMEZONE``) when it named one, else in UTC; a paper with a start but no end
    gets no ``DTEND`` (RFC 5545: it then lasts no time). The reader's notes are not written: a calendar is often
    synced to a server.

    Args:
        schedule: The plan.
        name: The calendar's name (``X-WR-CALNAME``, shown by calendar apps).
        now: ``DTSTAMP`` of the events (default: the current time, UTC).

    Returns:
        The file's bytes (CRLF line ends, lines folded at 75 octets).

    Raises:
        ValueError: No paper of the schedule has a start time (nothing to put in a calendar).
    """
    import icalendar

    timed = schedule.timed
    if not timed:
        raise ValueError(NO_TIMES)
    stamp = (now or datetime.now(UTC)).astimezone(UTC)
    cal = icalendar.Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("x-wr-calname", name)
    for s in timed:
        zone = s.start.tzinfo if isinstance(s.start.tzinfo, ZoneInfo) else UTC  # a bare offset: written in UTC
        ev = icalendar.Event()
        ev.add("uid", f"{s.paper.id}@{UID_DOMAIN}")
        ev.add("dtstamp", stamp)
        ev.add("summary", s.paper.title)
        ev.add("dtstart", s.start.astimezone(zone))
        if s.end is not None:
            ev.add("dtend", s.end.astimezone(zone))
        if desc := _description(s.paper):
            ev.add("description", desc)
        if link := paper_link(s.paper):
            ev.add("url", link)
        if where := " · ".join(x for x in (s.location, f"poster {s.poster}" if s.poster else "") if x):
            ev.add("location", where)
        if s.session:
            ev.add("categories", [s.session])
        cal.add_component(ev)
    cal.add_missing_timezones()
    return cal.to_ical()


def write_ics(schedule: Schedule, path: str | Path, name: str = "paperatlas schedule") -> Path:
    """Write :func:`to_ics` of the schedule to ``path`` atomically.

    The bytes go to a temporary file in the same directory, fsynced, then moved over ``path``
    (:func:`os.replace`): an error leaves a previous file at ``path`` as it was, and no temporary file behind.

    Args:
        schedule: The plan.
        path: The ``.ics`` file to write (parent directories are made).
        name: The calendar's name.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: No paper of the schedule has a start time (nothing is written).
        OSError: The file cannot be written.
    """
    return write_bytes_atomic(path, to_ics(schedule, name), mode=0o644)
