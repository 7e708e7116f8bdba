"""The reader's data in the atlas file: marks, named lists and TL;DR/keyphrase overrides.

Tables (:data:`USER_TABLES`, never written by a build): ``marks`` (per paper: like +1 / dislike -1 / 0, Markdown
note, read time, last change), ``list_items`` (the papers of the reader's named lists) and ``overrides`` (per paper
and field: the reader's TL;DR or keyphrases, JSON-encoded). Every row keeps the paper's title, so a rebuild that
changes a paper's id (a corrected title) can re-link it (:func:`relink_user_rows`).

Each write function here is one transaction on the live file (:func:`paperatlas.store.connection.write_transaction`:
migrated first, ``timeout=30``), so a reader's change made while a build runs is kept: the build copies these
tables from the live file again just before its copy replaces it (:func:`carry_user_tables`). Both hold the
atlas's swap lock (:func:`paperatlas.store.lock.swap_lock`: shared for a write, exclusive for the swap), so no
write lands between that copy and the rename, nor in the replaced file.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import limits
from ..model import Paper
from . import fts
from .audit import read_table
from .connection import connect, write_transaction

#: Tables written by the reader (never by a build): copied again from the live atlas just before a rebuilt copy
#: replaces it, so an edit made while a build was running is not lost; then re-linked to the rebuilt papers
#: (:func:`relink_user_rows`).
USER_TABLES = ("overrides", "marks", "list_items")
#: Fields a reader may override with ``paperatlas edit`` (value types: str for tldr, list[str] for keyphrases).
EDITABLE_FIELDS = ("tldr", "keyphrases")
#: Provenance recorded for an overridden field.
EDIT_METHOD = "edited by reader"
#: The columns of a mark, in the order :func:`read_user_rows` gives them.
MARK_FIELDS = ("paper_id", "title", "rating", "note", "read_at", "updated_at")

_MARK_VALUES = ("rating", "note", "read_at")


def timestamp() -> str:
    """The local time as the reader's rows record it.

    Returns:
        ``"YYYY-MM-DDTHH:MM:SS"`` (ISO 8601, seconds, no zone).
    """
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def _title(con: sqlite3.Connection, paper_id: str) -> str:
    row = con.execute("SELECT title FROM papers WHERE id = ?", (paper_id,)).fetchone()
    if row is None:
        raise LookupError(f"no paper with id {paper_id!r} in this atlas")
    return row[0]


def _upsert_mark(con: sqlite3.Connection, paper_id: str, values: dict[str, Any]) -> None:
    bad = set(values) - set(_MARK_VALUES)
    if bad:
        raise ValueError(f"not a mark field: {', '.join(sorted(bad))} (use {', '.join(_MARK_VALUES)})")
    limits.check_mark(values, paper_id)  # the last guard of paperatlas.limits, on every way in
    title = _title(con, paper_id)
    con.execute("INSERT OR IGNORE INTO marks (paper_id, title, updated_at) VALUES (?, ?, ?)",
                (paper_id, title, timestamp()))
    sets = "".join(f"{k} = ?, " for k in values)
    con.execute(f"UPDATE marks SET {sets}title = ?, updated_at = ? WHERE paper_id = ?",
                (*values.values(), title, timestamp(), paper_id))


def set_mark(db: str | Path, paper_id: str, **values: Any) -> None:
    """Set fields of the reader's mark on a paper (created if needed) and its time of change, in one transaction.

    Args:
        db: The atlas file.
        paper_id: The paper's id.
        **values: ``rating`` (int: +1, -1 or 0), ``note`` (str, Markdown) and/or ``read_at`` (ISO time str or
            None).

    Raises:
        LookupError: The atlas has no paper ``paper_id``.
        ValueError: A keyword is not one of the three fields.
        paperatlas.limits.LimitExceeded: A value is over its limit (a ValueError); nothing is written.
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    with write_transaction(db) as con:
        _upsert_mark(con, paper_id, values)


def update_note(db: str | Path, paper_id: str, compose: Callable[[str], str]) -> str:
    """Replace the reader's note on a paper by ``compose(old note)``, read and written in one transaction.

    Args:
        db: The atlas file.
        paper_id: The paper's id.
        compose: Gets the stored note (``""`` for none) and returns the new one.

    Returns:
        The note now stored.

    Raises:
        LookupError: The atlas has no paper ``paper_id``.
        paperatlas.limits.LimitExceeded: The new note is over its limit (a ValueError); nothing is written.
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    with write_transaction(db) as con:
        row = con.execute("SELECT note FROM marks WHERE paper_id = ?", (paper_id,)).fetchone()
        note = compose(row[0] if row else "")
        _upsert_mark(con, paper_id, {"note": note})
    return note


def add_to_list(db: str | Path, paper_id: str, list_name: str) -> bool:
    """Put a paper on one of the reader's named lists.

    Args:
        db: The atlas file.
        paper_id: The paper's id.
        list_name: The list's name (used as given).

    Returns:
        True when the paper was added, False when it was on the list already.

    Raises:
        LookupError: The atlas has no paper ``paper_id``.
        paperatlas.limits.LimitExceeded: The name is over its limit, or the paper is on too many lists.
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    limits.check_list_name(list_name, paper_id)
    with write_transaction(db) as con:
        on = {r[0] for r in con.execute("SELECT list FROM list_items WHERE paper_id = ?", (paper_id,))}
        if list_name not in on:
            limits.check_list_count(len(on) + 1, paper_id)
        cur = con.execute("INSERT OR IGNORE INTO list_items (list, paper_id, title, added_at) VALUES (?, ?, ?, ?)",
                          (list_name, paper_id, _title(con, paper_id), timestamp()))
    return cur.rowcount == 1


def remove_from_list(db: str | Path, paper_id: str, list_name: str | None) -> int:
    """Take a paper off one of the reader's lists, or off all of them.

    Args:
        db: The atlas file.
        paper_id: The paper's id (need not be in the atlas any more).
        list_name: The list's name; None for every list.

    Returns:
        The number of list entries removed (0 when it was on none).

    Raises:
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    with write_transaction(db) as con:
        if list_name is None:
            cur = con.execute("DELETE FROM list_items WHERE paper_id = ?", (paper_id,))
        else:
            cur = con.execute("DELETE FROM list_items WHERE paper_id = ? AND list = ?", (paper_id, list_name))
    return cur.rowcount


def _user_rows(con: sqlite3.Connection) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Marks and list entries, every value checked (raises :class:`~paperatlas.store.check.DamagedAtlas`)."""
    marks = read_table(con, "marks", MARK_FIELDS)
    items = read_table(con, "list_items", ("list", "paper_id", "title"), "ORDER BY list, added_at")
    return (marks, items) if marks is not None and items is not None else ([], [])  # None: made before lists


def _override_rows(con: sqlite3.Connection) -> list[dict[str, Any]]:
    """The TL;DR/keyphrase overrides (not :mod:`.topic_overrides`: topic ids are this atlas's own), checked."""
    rows = read_table(con, "overrides", ("paper_id", "field", "value", "title", "edited_at")) or []
    return [r for r in rows if r["field"] in EDITABLE_FIELDS]


def read_user_rows(db: str | Path | sqlite3.Connection) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The reader's marks and list entries as stored.

    Args:
        db: The atlas file, or an open connection to it (read-only is fine; its row factory is not changed).

    Returns:
        ``(marks, list_items)``: marks as dicts with the keys of :data:`MARK_FIELDS` (``rating`` int, ``read_at``
        str or None), list entries as ``{"list", "paper_id", "title"}`` ordered by list, then time added. Both
        empty for an atlas made before the reading list.

    Raises:
        paperatlas.store.AtlasNotFound: ``db`` is a path with no file.
        paperatlas.store.check.DamagedAtlas: A stored value is damaged (a MalformedAtlas; one line naming it).
    """
    if isinstance(db, sqlite3.Connection):
        return _user_rows(db)
    con = connect(db, readonly=True)
    try:
        return _user_rows(con)
    finally:
        con.close()


def export_rows(db: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Everything the reader wrote, read from one read-only connection.

    Args:
        db: The atlas file.

    Returns:
        ``(marks, list_items, overrides)``: the first two as :func:`read_user_rows` gives them; overrides as
        ``{"paper_id", "field", "value" (decoded: str or list[str]), "title", "edited_at"}``.

    Raises:
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
        paperatlas.store.check.DamagedAtlas: A stored value is damaged (a MalformedAtlas; one line naming it).
    """
    con = connect(db, readonly=True)
    try:
        marks, items = _user_rows(con)
        return marks, items, _override_rows(con)
    finally:
        con.close()


def like_or_list(db: str | Path, papers: list[tuple[str, str]], list_name: str | None) -> int:
    """Like papers, or put them on a list, all in one transaction; notes, read marks and other lists are kept.

    Args:
        db: The atlas file.
        papers: ``(paper_id, title)`` of papers of this atlas.
        list_name: Put them on this list; None to like them (rating +1).

    Returns:
        How many papers changed (newly liked, or newly on the list).

    Raises:
        paperatlas.limits.LimitExceeded: ``list_name`` is over its limit (a ValueError); nothing is written.
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    if list_name:
        limits.check_list_name(list_name)
    now, changed = timestamp(), 0
    with write_transaction(db) as con:
        for pid, title in papers:
            if list_name:
                changed += con.execute("INSERT OR IGNORE INTO list_items (list, paper_id, title, added_at) "
                                       "VALUES (?, ?, ?, ?)", (list_name, pid, title, now)).rowcount
                continue
            row = con.execute("SELECT rating FROM marks WHERE paper_id = ?", (pid,)).fetchone()
            if row is None:
                con.execute("INSERT INTO marks (paper_id, title, rating, note, read_at, updated_at) "
                            "VALUES (?, ?, 1, '', NULL, ?)", (pid, title, now))
                changed += 1
            elif row[0] != 1:
                con.execute("UPDATE marks SET rating = 1, updated_at = ? WHERE paper_id = ?", (now, pid))
                changed += 1
    return changed


def import_rows(db: str | Path, entries: list[dict[str, Any]], overrides: list[dict[str, Any]]) -> list[str]:
    """Merge another atlas's reader data into this one, in one transaction.

    A mark (rating, note, read time) replaces the stored one only when it is newer; list memberships are united;
    overrides replace the stored ones and are shown at once on the papers and the search index. Rows whose paper
    id is not in this atlas are re-linked by title (:func:`relink_user_rows`); the rest are kept as they are.

    Args:
        db: The atlas file.
        entries: ``{"paper_id", "title", "rating" (int), "note" (str), "read_at" (str or None), "lists"
            (list[str]), "updated_at" (str)}`` per paper.
        overrides: ``{"paper_id", "field", "value" (JSON-serialisable), "title", "edited_at"}`` per paper and
            field.

    Returns:
        The titles (sorted) of the marks and list entries that match no paper of this atlas.

    Raises:
        paperatlas.limits.LimitExceeded: A value is over its limit (a ValueError); nothing is written.
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    for e in entries:  # the last guard (import_json skips these first)
        limits.check_entry(e)
    for o in overrides:
        limits.check_override_row(o)
    with write_transaction(db) as con:
        for e in entries:
            pid, updated = e["paper_id"], e["updated_at"]
            if e["rating"] or e["note"] or e["read_at"]:
                old = con.execute("SELECT updated_at FROM marks WHERE paper_id = ?", (pid,)).fetchone()
                if old is None or old[0] < updated:
                    con.execute("INSERT OR REPLACE INTO marks (paper_id, title, rating, note, read_at, updated_at)"
                                " VALUES (?, ?, ?, ?, ?, ?)",
                                (pid, e["title"], e["rating"], e["note"], e["read_at"], updated))
            for name in e["lists"]:
                con.execute("INSERT OR IGNORE INTO list_items (list, paper_id, title, added_at) "
                            "VALUES (?, ?, ?, ?)", (name, pid, e["title"], updated))
        con.executemany("INSERT OR REPLACE INTO overrides (paper_id, field, value, title, edited_at) "
                        "VALUES (?, ?, ?, ?, ?)",
                        [(o["paper_id"], o["field"], json.dumps(o["value"], ensure_ascii=False), o["title"],
                          o["edited_at"]) for o in overrides])
        relink_user_rows(con)  # ids from another atlas: find the papers by title
        ids = {r[0] for r in con.execute("SELECT id FROM papers")}
        not_found = sorted({r[0] for r in con.execute(
            "SELECT title FROM marks WHERE paper_id NOT IN (SELECT id FROM papers) UNION "
            "SELECT title FROM list_items WHERE paper_id NOT IN (SELECT id FROM papers)")})
        stored = get_overrides(con)  # show imported TL;DR/keyphrase overrides at once, as `edit` does
        for pid in sorted(set(stored) & ids):
            show_overrides(con, pid, stored)
    return not_found


def get_overrides(con: sqlite3.Connection) -> dict[str, dict[str, object]]:
    """The reader's overrides.

    Args:
        con: An open connection to the atlas (read-only is fine).

    Returns:
        ``paper_id -> {field: value}`` (value: str for ``tldr``, list[str] for ``keyphrases``); empty for an atlas
        made before overrides. A damaged row (not JSON of its field's type, a BLOB id, ...) is left out: a build
        or an edit goes on without it, and ``paperatlas check`` names it.
    """
    out: dict[str, dict[str, object]] = {}
    for r in read_table(con, "overrides", ("paper_id", "field", "value"), skip_damaged=True) or []:
        out.setdefault(r["paper_id"], {})[r["field"]] = r["value"]
    return out


def _overridden(ov: dict[str, object]) -> dict[str, Any]:
    """``Paper attribute -> value`` that the overrides ``ov`` of one paper set (methods included)."""
    out: dict[str, Any] = {}
    if "tldr" in ov:
        out.update(tldr=str(ov["tldr"]), tldr_method=EDIT_METHOD)
    if "keyphrases" in ov:
        out.update(keyphrases=[str(k) for k in ov["keyphrases"]], keyphrases_method=EDIT_METHOD)  # type: ignore
    return out


def apply_overrides(papers: list[Paper], overrides: dict[str, dict[str, object]]) -> int:
    """Put the reader's overrides on papers in place (the fields' method set to :data:`EDIT_METHOD`).

    Overrides of papers not in ``papers`` are kept in the store, untouched.

    Args:
        papers: The papers to change.
        overrides: As :func:`get_overrides` gives them.

    Returns:
        How many papers were changed.
    """
    n = 0
    for p in papers:
        ov = overrides.get(p.id)
        if not ov:
            continue
        for attr, value in _overridden(ov).items():
            setattr(p, attr, value)
        n += 1
    return n


def show_overrides(con: sqlite3.Connection, paper_id: str, overrides: dict[str, dict[str, object]]) -> sqlite3.Row:
    """Put the reader's overrides of one paper on its ``papers`` row and its search-index row at once.

    No rebuild needed; runs inside the caller's transaction (nothing committed here).

    Args:
        con: A writable connection to the atlas.
        paper_id: The paper's id.
        overrides: As :func:`get_overrides` gives them (only ``paper_id``'s are used; none: the rows are
            re-indexed as they are).

    Returns:
        The paper's ``papers`` row as now stored (``sqlite3.Row``; see :func:`paperatlas.store.row_to_paper`).

    Raises:
        LookupError: The atlas has no paper ``paper_id``.
    """
    cur = con.cursor()
    cur.row_factory = sqlite3.Row  # whatever the connection's row factory
    row = cur.execute("SELECT * FROM papers WHERE id = ?", (paper_id,)).fetchone()
    if row is None:
        raise LookupError(f"no paper with id {paper_id!r} in this atlas")
    vals = _overridden(overrides.get(paper_id) or {})
    if vals:
        cols = {k: json.dumps(v, ensure_ascii=False) if k == "keyphrases" else v for k, v in vals.items()}
        con.execute(f"UPDATE papers SET {', '.join(f'{k} = ?' for k in cols)} WHERE id = ?",
                    (*cols.values(), paper_id))
    tldr = vals.get("tldr", row["tldr"] or "")
    keyphrases = vals["keyphrases"] if "keyphrases" in vals else json.loads(row["keyphrases"] or "[]")
    given = json.loads(row["given_keyphrases"] or "[]")
    fts.set_generated(con, paper_id, fts.keyphrases_text(keyphrases, given), tldr)
    return cur.execute("SELECT * FROM papers WHERE id = ?", (paper_id,)).fetchone()


def set_overrides(db: str | Path, paper_id: str, values: dict[str, object], clear: bool = False) -> sqlite3.Row:
    """Record the reader's overrides of a paper and show them at once, in one transaction.

    Args:
        db: The atlas file.
        paper_id: The paper's id.
        values: ``field -> value`` for fields of :data:`EDITABLE_FIELDS` (``tldr``: str, ``keyphrases``:
            list[str]); may be empty.
        clear: Remove the paper's stored TL;DR/keyphrase overrides first (the generated values come back at the
            next build; a move to another topic is :func:`paperatlas.store.topic_overrides.undo_move`'s).

    Returns:
        The paper's ``papers`` row as now stored (``sqlite3.Row``).

    Raises:
        LookupError: The atlas has no paper ``paper_id``.
        ValueError: A field is not one of :data:`EDITABLE_FIELDS`.
        paperatlas.limits.LimitExceeded: A value is over its limits (a ValueError); nothing is written.
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    bad = set(values) - set(EDITABLE_FIELDS)
    if bad:
        raise ValueError(f"cannot edit {', '.join(sorted(bad))} (editable: {', '.join(EDITABLE_FIELDS)})")
    for f, v in values.items():
        limits.check_override(f, v, paper_id)
    with write_transaction(db) as con:
        row = con.execute("SELECT title FROM papers WHERE id = ?", (paper_id,)).fetchone()
        if row is None:
            raise LookupError(f"no paper with id {paper_id!r} in {db}")
        if clear:  # a move to another topic is not a field of this function's (undo_move puts the paper back)
            fields = ", ".join("?" * len(EDITABLE_FIELDS))
            con.execute(f"DELETE FROM overrides WHERE paper_id = ? AND field IN ({fields})",
                        (paper_id, *EDITABLE_FIELDS))
        now = timestamp()
        con.executemany("INSERT OR REPLACE INTO overrides (paper_id, field, value, title, edited_at) "
                        "VALUES (?, ?, ?, ?, ?)",
                        [(paper_id, f, json.dumps(v, ensure_ascii=False), row["title"], now)
                         for f, v in values.items()])
        return show_overrides(con, paper_id, get_overrides(con))


def _columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in con.execute(f"PRAGMA table_info({table})")]


def carry_user_tables(live: Path, con: sqlite3.Connection) -> None:
    """Copy the reader's tables from the live atlas into a build's copy, replacing the copy's rows.

    Columns are matched by name, so a live file of an older schema version is copied too. Commits ``con``.

    Args:
        live: The live atlas file (opened read-only); a table it lacks is left as the copy has it. The build holds
            its swap lock (:func:`paperatlas.store.lock.swap_lock`), so no reader's write is in progress.
        con: A writable connection to the build's copy (migrated to the current schema).
    """
    src = sqlite3.connect(f"file:{live}?mode=ro", uri=True)
    try:
        for table in USER_TABLES:
            exists = src.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()
            if not exists:
                continue
            mine = set(_columns(con, table))
            cols = ", ".join(c for c in _columns(src, table) if c in mine)
            rows = src.execute(f"SELECT {cols} FROM {table}").fetchall()
            con.execute(f"DELETE FROM {table}")
            if rows:
                con.executemany(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' * len(rows[0]))})", rows)
        con.commit()
    finally:
        src.close()


def relink_user_rows(con: sqlite3.Connection, papers: list[tuple[str, str]] | None = None,
                     min_score: float = 90.0) -> int:
    """Point the reader's rows whose paper id is no longer in the atlas at the paper they meant.

    A corrected typo or a changed subtitle changes a paper's id (derived from the title): a row (override, mark,
    list item) is moved to the paper with the same normalised title, else the most similar title (rapidfuzz
    ``token_sort_ratio`` ≥ ``min_score``). A row with no match, or whose target already has a row of its own, is
    left as it is (kept, never deleted). Commits only when ``con`` was not inside a transaction already.

    Args:
        con: A writable connection to the atlas.
        papers: The ``(id, title)`` pairs to link to (default: the ``papers`` table).
        min_score: The lowest fuzzy title score (0–100) accepted as the same paper.

    Returns:
        The number of rows re-linked.
    """
    from rapidfuzz import fuzz, process

    from ..text import normalize_title

    own = not con.in_transaction
    if papers is None:
        papers = [(r[0], r[1]) for r in con.execute("SELECT id, title FROM papers")]
    ids = {r[0] for r in papers}
    orphans = []  # the reader's rows whose paper is gone: usually none, and then no title is normalised
    for table, key_cols in (("overrides", ("field",)), ("marks", ()), ("list_items", ("list",))):
        try:
            rows = con.execute(f"SELECT rowid, paper_id, title{''.join(', ' + c for c in key_cols)} FROM {table}"
                               ).fetchall()
        except sqlite3.OperationalError:
            continue
        orphans.extend((table, key_cols, row) for row in rows if row[1] not in ids and row[2])
    by_norm = {normalize_title(r[1]): r[0] for r in papers} if orphans else {}
    norm_titles = list(by_norm)
    moved = 0
    for table, key_cols, (rowid, _pid, title, *keys) in orphans:
        norm = normalize_title(title)
        new = by_norm.get(norm)
        if new is None and norm_titles:
            hit = process.extractOne(norm, norm_titles, scorer=fuzz.token_sort_ratio, score_cutoff=min_score)
            new = by_norm[hit[0]] if hit else None
        if new is None:
            continue
        clash = f"SELECT 1 FROM {table} WHERE paper_id = ?" + "".join(f" AND {c} = ?" for c in key_cols)
        if con.execute(clash, (new, *keys)).fetchone():
            continue
        con.execute(f"UPDATE {table} SET paper_id = ? WHERE rowid = ?", (new, rowid))
        moved += 1
    if own:
        con.commit()
    return moved
