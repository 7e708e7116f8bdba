"""The reader's own data: likes and dislikes, named lists, Markdown notes and read marks.

Everything lives in the atlas file, in tables a build never writes (``marks`` and ``list_items``, see
:data:`paperatlas.store.sqlite.USER_TABLES`): a rebuild carries them over, and re-links a row to its paper when a
corrected title changed the paper's id. Each write is one transaction on the live file, so a reader's change made
while a build runs is kept too. :func:`export_json` / :func:`import_json` move all of it (and the TL;DR/keyphrase
overrides) to another atlas.

A paper is *on the reading list* when it is in at least one named list (default :data:`DEFAULT_LIST`), or liked,
or has a note, or is marked read.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .overrides import show_overrides
from .store import sqlite as store

#: the list ``paperatlas list add`` uses when no ``--list`` is given
DEFAULT_LIST = "reading"
#: version of the JSON written by :func:`export_json`
EXPORT_VERSION = 1


@dataclass
class Entry:
    """One paper the reader did something with: ``rating`` +1 liked / -1 disliked / 0, ``note`` (Markdown, may be
    empty), ``read_at`` (ISO time or None), ``lists`` (names, sorted), ``title`` as it was when last touched."""

    paper_id: str
    title: str
    rating: int = 0
    note: str = ""
    read_at: str | None = None
    lists: list[str] = field(default_factory=list)
    updated_at: str = ""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def _connect(db: str | Path) -> sqlite3.Connection:
    path = Path(db)
    if not path.is_file():
        raise store.AtlasNotFound(f"{path}: no atlas here; build one with `paperatlas build LISTING --db {path}`")
    con = sqlite3.connect(path, timeout=30)
    con.row_factory = sqlite3.Row
    con.executescript(store.SCHEMA)  # an atlas built before the reading list gets its tables
    return con


@contextmanager
def _transaction(db: str | Path) -> Iterator[sqlite3.Connection]:
    """One write transaction on the live atlas file (committed on success, rolled back on error), then closed."""
    con = _connect(db)
    try:
        with con:
            yield con
    finally:
        con.close()


def _title(con: sqlite3.Connection, paper_id: str) -> str:
    row = con.execute("SELECT title FROM papers WHERE id = ?", (paper_id,)).fetchone()
    if row is None:
        raise LookupError(f"no paper with id {paper_id!r} in this atlas")
    return row[0]


def _upsert_mark(con: sqlite3.Connection, paper_id: str, **values) -> None:
    title = _title(con, paper_id)
    con.execute("INSERT OR IGNORE INTO marks (paper_id, title, updated_at) VALUES (?, ?, ?)",
                (paper_id, title, _now()))
    sets = ", ".join(f"{k} = ?" for k in values)
    con.execute(f"UPDATE marks SET {sets}, title = ?, updated_at = ? WHERE paper_id = ?",
                (*values.values(), title, _now(), paper_id))


def rate(db: str | Path, paper_id: str, rating: int) -> None:
    """Like (``+1``), dislike (``-1``) or clear (``0``) the rating of ``paper_id``. Raises ``LookupError`` for an
    unknown paper, ``ValueError`` for another rating, :class:`~paperatlas.store.AtlasNotFound`."""
    if rating not in (-1, 0, 1):
        raise ValueError(f"rating must be -1, 0 or 1, not {rating!r}")
    with _transaction(db) as con:
        _upsert_mark(con, paper_id, rating=rating)


def set_note(db: str | Path, paper_id: str, text: str, append: bool = False) -> str:
    """Set (or with ``append`` add a paragraph to) the reader's Markdown note on ``paper_id``; an empty text clears
    it. Returns the note now stored. Raises ``LookupError`` for an unknown paper."""
    with _transaction(db) as con:
        row = con.execute("SELECT note FROM marks WHERE paper_id = ?", (paper_id,)).fetchone()
        old = row[0] if row else ""
        note = f"{old.rstrip()}\n\n{text.strip()}".strip() if append and old else text.strip()
        _upsert_mark(con, paper_id, note=note)
    return note


def mark_read(db: str | Path, paper_id: str, read: bool = True) -> None:
    """Mark ``paper_id`` read now (or unread). Raises ``LookupError`` for an unknown paper."""
    with _transaction(db) as con:
        _upsert_mark(con, paper_id, read_at=_now() if read else None)


def add(db: str | Path, paper_id: str, list_name: str = DEFAULT_LIST) -> bool:
    """Put ``paper_id`` on the named list; False when it was already there. Raises ``LookupError`` for an unknown
    paper and ``ValueError`` for an empty list name."""
    list_name = " ".join((list_name or "").split())
    if not list_name:
        raise ValueError("the list name is empty")
    with _transaction(db) as con:
        cur = con.execute("INSERT OR IGNORE INTO list_items (list, paper_id, title, added_at) VALUES (?, ?, ?, ?)",
                          (list_name, paper_id, _title(con, paper_id), _now()))
    return cur.rowcount == 1


def remove(db: str | Path, paper_id: str, list_name: str | None = DEFAULT_LIST) -> int:
    """Take ``paper_id`` off the named list (``None``: off every list); the note, rating and read mark stay.
    Returns how many list entries were removed."""
    with _transaction(db) as con:
        if list_name is None:
            cur = con.execute("DELETE FROM list_items WHERE paper_id = ?", (paper_id,))
        else:
            cur = con.execute("DELETE FROM list_items WHERE paper_id = ? AND list = ?", (paper_id, list_name))
    return cur.rowcount


def _read_entries(con: sqlite3.Connection) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    try:
        for r in con.execute("SELECT * FROM marks"):
            out[r["paper_id"]] = Entry(r["paper_id"], r["title"], r["rating"], r["note"], r["read_at"],
                                       updated_at=r["updated_at"])
        for r in con.execute("SELECT list, paper_id, title FROM list_items ORDER BY list, added_at"):
            out.setdefault(r["paper_id"], Entry(r["paper_id"], r["title"])).lists.append(r["list"])
    except sqlite3.OperationalError:  # an atlas file made before the reading list
        return {}
    for e in out.values():
        e.lists.sort()
    return out


def entries(db: str | Path | sqlite3.Connection, list_name: str | None = None) -> list[Entry]:
    """The reader's entries (papers liked, disliked, noted, read or on a list), most recently touched first;
    ``list_name`` keeps only that list's papers. Accepts an atlas path or an open connection (read-only is fine).
    """
    if isinstance(db, sqlite3.Connection):
        db.row_factory = sqlite3.Row
        found = _read_entries(db)
    else:
        con = store.connect(db, readonly=True)
        try:
            found = _read_entries(con)
        finally:
            con.close()
    out = [e for e in found.values() if list_name is None or list_name in e.lists]
    return sorted(out, key=lambda e: (e.updated_at or "", e.paper_id), reverse=True)


def list_names(db: str | Path | sqlite3.Connection) -> dict[str, int]:
    """``list name -> number of papers`` of the reader's lists."""
    counts: dict[str, int] = {}
    for e in entries(db):
        for name in e.lists:
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def ratings(db: str | Path | sqlite3.Connection) -> tuple[list[str], list[str]]:
    """``(liked paper ids, disliked paper ids)``, most recent first."""
    es = entries(db)
    return [e.paper_id for e in es if e.rating > 0], [e.paper_id for e in es if e.rating < 0]


def export_json(db: str | Path) -> dict:
    """Everything the reader wrote, as a JSON-serialisable dict: ``{"paperatlas_reading_list": 1, "entries":
    [{paper_id, title, rating, note, read_at, lists, updated_at}], "overrides": [{paper_id, title, field, value,
    edited_at}]}``. Titles are included so :func:`import_json` can find the papers in another atlas."""
    con = store.connect(db, readonly=True)
    try:
        found = _read_entries(con)
        try:
            ov = [{"paper_id": r[0], "field": r[1], "value": json.loads(r[2]), "title": r[3], "edited_at": r[4]}
                  for r in con.execute("SELECT paper_id, field, value, title, edited_at FROM overrides")]
        except sqlite3.OperationalError:
            ov = []
    finally:
        con.close()
    return {"paperatlas_reading_list": EXPORT_VERSION,
            "entries": [vars(e) for e in sorted(found.values(), key=lambda e: e.paper_id)], "overrides": ov}


@dataclass
class ImportReport:
    """What :func:`import_json` did: entries and overrides written, and the titles it could not find."""

    entries: int = 0
    overrides: int = 0
    not_found: list[str] = field(default_factory=list)


def import_json(db: str | Path, data: dict, source: str = "<json>") -> ImportReport:
    """Merge an :func:`export_json` dict into the atlas at ``db``. Papers are found by id, else by title (exact
    normalised, then fuzzy, as rebuilds re-link); lists are united; a rating, note or read mark replaces the
    atlas's only when the imported one is newer; overrides are applied at once. Titles with no paper here are
    reported (and their data kept in the tables, re-linked if the paper appears in a later build).

    Raises ``ValueError`` naming ``source`` and the entry for malformed data."""
    if not isinstance(data, dict) or data.get("paperatlas_reading_list") != EXPORT_VERSION:
        raise ValueError(f"{source}: not a paperatlas reading-list export (missing 'paperatlas_reading_list': 1)")
    rep = ImportReport()
    with _transaction(db) as con:
        for i, e in enumerate(data.get("entries") or []):
            try:
                pid, title = str(e["paper_id"]), str(e["title"])
                rating, note, read_at = int(e.get("rating") or 0), str(e.get("note") or ""), e.get("read_at")
                lists, updated = [str(x) for x in e.get("lists") or []], str(e.get("updated_at") or _now())
            except (KeyError, TypeError, ValueError) as err:
                raise ValueError(f"{source}: entries[{i}]: {err!r} (needs paper_id, title)") from err
            old = con.execute("SELECT updated_at FROM marks WHERE paper_id = ?", (pid,)).fetchone()
            if rating or note or read_at:
                if old is None or old[0] < updated:
                    con.execute("INSERT OR REPLACE INTO marks (paper_id, title, rating, note, read_at, updated_at)"
                                " VALUES (?, ?, ?, ?, ?, ?)", (pid, title, rating, note, read_at, updated))
            for name in lists:
                con.execute("INSERT OR IGNORE INTO list_items (list, paper_id, title, added_at) "
                            "VALUES (?, ?, ?, ?)", (name, pid, title, updated))
            rep.entries += 1
        for i, o in enumerate(data.get("overrides") or []):
            try:
                con.execute("INSERT OR REPLACE INTO overrides (paper_id, field, value, title, edited_at) "
                            "VALUES (?, ?, ?, ?, ?)", (str(o["paper_id"]), str(o["field"]),
                                                       json.dumps(o["value"], ensure_ascii=False),
                                                       str(o.get("title") or ""), str(o.get("edited_at") or "")))
            except (KeyError, TypeError) as err:
                raise ValueError(f"{source}: overrides[{i}]: {err!r} (needs paper_id, field, value)") from err
            rep.overrides += 1
        store.relink_user_rows(con)  # ids from another atlas: find the papers by title
        ids = {r[0] for r in con.execute("SELECT id FROM papers")}
        rep.not_found = sorted({r[0] for r in con.execute(
            "SELECT title FROM marks WHERE paper_id NOT IN (SELECT id FROM papers) UNION "
            "SELECT title FROM list_items WHERE paper_id NOT IN (SELECT id FROM papers)")})
        overrides = store.get_overrides(con)  # show imported TL;DR/keyphrase edits at once, as `edit` does
        for pid in set(overrides) & ids:
            show_overrides(con, con.execute("SELECT * FROM papers WHERE id = ?", (pid,)).fetchone(), overrides)
    return rep
