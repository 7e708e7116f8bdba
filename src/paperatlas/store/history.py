"""Which build first brought each paper: the record behind ``paperatlas new``.

Tables (migration 4): ``builds`` (one row per finished build: time, listings, paper count, papers new in it) and
``paper_history`` (per paper id: its title and the build that first brought it). A build calls
:func:`record_build` on its private copy before it writes the papers; a corrected title changes a paper's id
(derived from the title), so a paper whose id is not in the history takes over the row of a vanished id with the
same normalised title, else the most similar one (rapidfuzz ``token_sort_ratio`` ≥ 90, as
:func:`paperatlas.store.userdata.relink_user_rows` does for the reader's rows): it is never announced twice.
Rows of papers that leave are kept, so a paper that comes back is not new either.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass

from .audit import read_checked


@dataclass(frozen=True)
class BuildEntry:
    """One recorded build.

    Attributes:
        id: The build number (1, 2, ...; 1 is the first build recorded, or the papers an atlas had before it
            recorded builds).
        finished_at: Local time the build wrote the atlas, ISO 8601 (``2026-11-25T21:04:11``); ``""`` for the
            papers an atlas held before builds were recorded.
        listings: The listing files (or network queries) it read.
        n_papers: Papers in the atlas after it.
        n_new: Papers it brought that no earlier build had.
    """

    id: int
    finished_at: str
    listings: list[str]
    n_papers: int
    n_new: int


def record_build(con: sqlite3.Connection, papers: list[tuple[str, str]], listings: list[str],
                 min_score: float = 90.0) -> BuildEntry:
    """Record a build of ``papers`` in the history and return its entry.

    Call it on the build's connection *before* the papers table is rewritten: when the history is empty but the
    atlas already holds papers (made before builds were recorded), those are recorded first as build 1, so only
    what this build adds is new.

    Args:
        con: A writable connection (a build's private copy), at schema version 4 or later.
        papers: ``(id, title)`` of every paper the build writes.
        listings: The listings it read (stored as given).
        min_score: The lowest fuzzy title score (0-100) for a new id to be a known paper with a corrected title.

    Returns:
        The new :class:`BuildEntry`.
    """
    from rapidfuzz import fuzz, process

    from ..text import normalize_title

    known = dict(con.execute("SELECT paper_id, first_build FROM paper_history").fetchall())
    if not known:
        before = con.execute("SELECT id, title FROM papers").fetchall()
        if before:
            con.execute("INSERT INTO builds (id, finished_at, listings, n_papers, n_new) VALUES (1, '', '[]', ?, ?)",
                        (len(before), len(before)))
            con.executemany("INSERT INTO paper_history (paper_id, title, first_build) VALUES (?, ?, 1)",
                            [(r[0], r[1]) for r in before])
            known = {r[0]: 1 for r in before}
    # a damaged row (text for a number, a BLOB title: paperatlas check names it) is kept as it is, never read
    number = (con.execute("SELECT MAX(id) FROM builds WHERE typeof(id) = 'integer'").fetchone()[0] or 0) + 1
    ids = {pid for pid, _ in papers}
    unknown = [(pid, title) for pid, title in papers if pid not in known]
    gone = {}  # normalised title -> history id of a paper this build no longer has (usually few or none)
    if unknown:
        for pid, title in con.execute("SELECT paper_id, title FROM paper_history WHERE typeof(title) = 'text'"
                                      ).fetchall():
            if pid not in ids:
                gone.setdefault(normalize_title(title), pid)
    fresh, moved = [], []
    for pid, title in unknown:
        old = None
        if gone:
            norm = normalize_title(title)
            old = gone.get(norm)
            if old is None:
                hit = process.extractOne(norm, list(gone), scorer=fuzz.token_sort_ratio, score_cutoff=min_score)
                old = gone[hit[0]] if hit else None
            if old is not None:
                gone = {k: v for k, v in gone.items() if v != old}
        if old is None:
            fresh.append((pid, title, number))
        else:
            moved.append((pid, title, old))
    con.executemany("UPDATE paper_history SET paper_id = ?, title = ? WHERE paper_id = ?", moved)
    con.executemany("INSERT INTO paper_history (paper_id, title, first_build) VALUES (?, ?, ?)", fresh)
    entry = BuildEntry(number, time.strftime("%Y-%m-%dT%H:%M:%S"), [str(s) for s in listings], len(papers),
                       len(fresh))
    con.execute("INSERT INTO builds (id, finished_at, listings, n_papers, n_new) VALUES (?, ?, ?, ?, ?)",
                (entry.id, entry.finished_at, json.dumps(entry.listings, ensure_ascii=False), entry.n_papers,
                 entry.n_new))
    return entry


def builds(con: sqlite3.Connection) -> list[BuildEntry]:
    """Every recorded build, oldest first (empty for an atlas that recorded none).

    Args:
        con: A connection to the atlas.

    Returns:
        The entries.

    Raises:
        paperatlas.store.check.DamagedAtlas: A row is damaged (a count that is not an integer, listings that are
            not a JSON list of strings), or a column is missing.
    """
    try:
        rows = read_checked(con, "builds", "SELECT rowid, id, finished_at, listings, n_papers, n_new FROM builds "
                                           "ORDER BY id")
    except sqlite3.OperationalError as e:  # an atlas older than migration 4, opened read-only
        if "no such table" not in str(e):
            raise
        return []
    return [BuildEntry(r["id"], r["finished_at"], list(r["listings"]), r["n_papers"], r["n_new"]) for r in rows]


def first_builds(con: sqlite3.Connection) -> dict[str, int]:
    """Paper id -> the build that first brought it (papers of the history; an unrecorded atlas gives ``{}``).

    Args:
        con: A connection to the atlas.

    Returns:
        The mapping.

    Raises:
        paperatlas.store.check.DamagedAtlas: A row is damaged (a BLOB id, a build number that is not an integer).
    """
    try:
        rows = read_checked(con, "paper_history", "SELECT rowid, paper_id, first_build FROM paper_history")
    except sqlite3.OperationalError as e:
        if "no such table" not in str(e):
            raise
        return {}
    return {r["paper_id"]: r["first_build"] for r in rows}
