"""Every stored value an atlas is read with is checked: one set of per-column validators.

:class:`~paperatlas.store.Atlas` loading, the per-request readers (the reader's tables, the stored models, the build
history) and ``paperatlas check`` share the validators of :data:`COLUMNS`: the type of each scalar column, finite
numbers, JSON of the column's shape nested at most :data:`MAX_JSON_DEPTH` levels (checked before decoding, so a
cell of ``[`` × 100,000 never recurses), and embeddings of the atlas's dimension. A damaged cell is reported as
:class:`DamagedAtlas`, a :class:`~paperatlas.store.connection.MalformedAtlas` whose one-line message names the file,
the cell and what is wrong, and says how to repair it::

    iclr.db: papers.year of paper 'a1b2c3' is damaged: text 'soon', not an integer; rebuild it with `paperatlas
    build LISTING --db iclr.db`

The validators of single values are in :mod:`.cells`; reading a table with them and checking a whole file
(:func:`paperatlas.store.audit.audit`, ``paperatlas check``) in :mod:`.audit`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import fts
from .cells import (  # noqa: F401 - the validators are this module's API too
    _LINK,
    _SOURCE,
    _STRINGS,
    MAX_JSON_DEPTH,
    MAX_YEAR,
    Bad,
    _json_int,
    _show,
    anything,
    blob,
    decode_json,
    integer,
    json_depth,
    json_list,
    json_object,
    listings,
    meta_value,
    nonempty_text,
    opt_integer,
    opt_real,
    opt_text,
    override_value,
    rating,
    text,
    year,
)
from .migrations import MalformedAtlas

#: Tables a build rewrites from its listings: damage there is repaired by a rebuild. The others (the reader's
#: tables, the build history, meta keys a build does not write) are kept by a rebuild as they are.
REBUILT_TABLES = frozenset({"papers", "papers_fts", "embeddings", "topics", "models", "paper_terms"})
#: Meta keys a build writes (:func:`paperatlas.store.sqlite.set_meta`, and ``schema_version`` by the migrations).
REBUILT_META = frozenset({"schema_version", "sources", "embed_model", "layout_method", "built_at", "n_papers",
                          "acronyms"})



class DamagedAtlas(MalformedAtlas):
    """One damaged cell (or a missing table or column) of an atlas; the message is one line.

    ``PATH: TABLE.COLUMN of paper ID is damaged: WHAT; REMEDY``, where the remedy is a rebuild for what a build
    rewrites (:data:`REBUILT_TABLES`) and deleting the row for what a rebuild keeps (the reader's tables).

    Attributes:
        path: The atlas file.
        damage: The :class:`Damage` found.
    """

    def __init__(self, path: str | Path, damage: Damage):
        """Make the one-line message.

        Args:
            path: The atlas file.
            damage: What is damaged, and how.
        """
        ValueError.__init__(self, damage.message(path))
        self.path = Path(path)
        self.problem = f"{damage.cell} is damaged: {damage.what}"
        self.damage = damage


@dataclass(frozen=True)
class Damage:
    """A damaged cell, or a missing table or column.

    Attributes:
        table: The table.
        column: The column; None for a missing table.
        row: How the row is named (``paper 'a1b2'``, ``topic 3``, ``key 'sources'``, ``row 7``); None for a
            missing table or column.
        what: What is wrong (``"text 'x', not an integer"``, ``"missing"``).
        rowid: SQLite's rowid of the row, where there is one.
    """

    table: str
    column: str | None
    row: str | None
    what: str
    rowid: int | None = None

    @property
    def cell(self) -> str:
        """``table.column of ROW``, ``column table.column`` or ``table TABLE``."""
        if self.column is None:
            return f"table {self.table}"
        if self.row is None:
            return f"column {self.table}.{self.column}"
        return f"{self.table}.{self.column} of {self.row}"

    @property
    def kept_by_rebuild(self) -> bool:
        """Whether a rebuild keeps this row as it is (the reader's tables, the build history, other meta keys)."""
        return self.table not in REBUILT_TABLES and self.rowid is not None and (
            self.table != "meta" or not self.row or self.row.removeprefix("key ").strip("'\"") not in REBUILT_META)

    def remedy(self, path: str | Path) -> str:
        """How to repair it: a rebuild, or deleting the row a rebuild would keep."""
        if self.kept_by_rebuild:
            return (f"a rebuild keeps this row: delete it with "
                    f"`sqlite3 {path} \"DELETE FROM {self.table} WHERE rowid = {self.rowid}\"`")
        return f"rebuild it with `paperatlas build LISTING --db {path}`"

    def message(self, path: str | Path) -> str:
        """The one-line message (see :class:`DamagedAtlas`)."""
        what = " ".join(str(self.what).split())
        return f"{path}: {self.cell} is damaged: {what}; {self.remedy(path)}"


# ------------------------------------------------------------------------------------------------ the columns
#: ``table -> {column: validator}``: what every column read must hold. The validators raise :class:`Bad`.
COLUMNS: dict[str, dict[str, Callable[[Any], Any]]] = {
    "meta": {"key": text, "value": anything},  # value: meta_value(key, value)
    "papers": {"id": nonempty_text, "title": text, "abstract": opt_text, "venue": opt_text, "year": year,
               "status": opt_text, "track": opt_text, "digest": opt_text, "tldr": opt_text, "tldr_method": opt_text,
               "keyphrases_method": opt_text, "topic_id": opt_integer, "topic_confidence": opt_real,
               "low_confidence": opt_integer, "x": opt_real, "y": opt_real, "content_hash": opt_text,
               "authors": _STRINGS, "links": json_list(_LINK, "links"), "sources": json_list(_SOURCE, "sources"),
               "given_keyphrases": _STRINGS, "sections": _STRINGS, "affiliations": _STRINGS, "extra": json_object,
               "keyphrases": _STRINGS, "secondary_topic_ids": json_list(_json_int, "topic ids")},
    "embeddings": {"paper_id": nonempty_text, "model": text, "content_hash": text, "vector": anything},
    "topics": {"id": integer, "label": text, "size": opt_integer, "keyphrases": _STRINGS, "parent_id": opt_integer,
               "x": opt_real, "y": opt_real, "method": opt_text, "level": opt_integer, "overview": opt_text,
               "overview_papers": _STRINGS, "overview_method": opt_text, "overview_key": opt_text},
    "models": {"name": text, "blob": blob},
    "overrides": {"paper_id": text, "field": text, "value": anything, "title": opt_text, "edited_at": text},
    "marks": {"paper_id": text, "title": text, "rating": rating, "note": text, "read_at": opt_text,
              "updated_at": text},
    "list_items": {"list": text, "paper_id": text, "title": text, "added_at": text},
    "paper_terms": {"paper_id": text, "text_hash": text, "method": text, "terms": _STRINGS},
    "builds": {"id": integer, "finished_at": text, "listings": listings, "n_papers": integer, "n_new": integer},
    "paper_history": {"paper_id": text, "title": text, "first_build": integer},
    fts.TABLE: {fts.ID_COLUMN: text, **dict.fromkeys(fts.COLUMNS, opt_text)},
}
#: How a row of each table is named in a message: ``(key column, word)``.
ROW_NAMES = {"meta": ("key", "key"), "topics": ("id", "topic"), "models": ("name", "model"),
             "builds": ("id", "build"), "list_items": ("paper_id", "paper"), "papers": ("id", "paper")}


def row_name(table: str, row: sqlite3.Row | dict, rowid: int | None = None) -> str:
    """How a row is named in a message.

    Returns:
        ``paper 'a1b2'``, ``topic 3``, ``key 'sources'``; ``row N`` when its key is itself damaged.
    """
    key, word = ROW_NAMES.get(table, ("paper_id", "paper"))
    try:
        value = row[key]
    except (IndexError, KeyError):
        value = None
    if type(value) is str and value and len(value) <= 80:
        return f"{word} {value!r}"
    if type(value) is int:
        return f"{word} {value}"
    return f"row {rowid}" if rowid is not None else "a row"


def validate_row(table: str, row: sqlite3.Row, columns: list[str] | None = None,
                 rowid: int | None = None) -> Iterator[tuple[str, object]]:
    """Validate the known columns of one row.

    Args:
        table: A table of :data:`COLUMNS`.
        row: The row (``sqlite3.Row``, columns by name).
        columns: The columns to check (default: the row's columns that :data:`COLUMNS` knows).
        rowid: The row's rowid, for messages.

    Yields:
        ``(column, decoded value)`` of each column checked.

    Raises:
        CellError: A column's value is damaged (the first one).
    """
    spec = COLUMNS[table]
    for col in columns if columns is not None else [c for c in row.keys() if c in spec]:
        value = row[col]
        try:
            if table == "meta" and col == "value":
                yield col, meta_value(row["key"] if "key" in row.keys() else None, value)
            elif table == "overrides" and col == "value":
                yield col, override_value(row["field"] if "field" in row.keys() else None, value)
            else:
                yield col, spec[col](value)
        except Bad as e:
            raise CellError(Damage(table, col, row_name(table, row, rowid), str(e), rowid)) from None


class CellError(ValueError):
    """A damaged cell found without the file's name at hand (a ValueError).

    The caller turns it into :class:`DamagedAtlas` (:func:`damaged`). The message is ``CELL is damaged: WHAT``.

    Attributes:
        damage: The :class:`Damage`.
    """

    def __init__(self, damage: Damage):
        super().__init__(f"{damage.cell} is damaged: {damage.what}")
        self.damage = damage


def db_path(con: sqlite3.Connection) -> str:
    """The file of ``con``'s main database, for messages (``<atlas>`` when it cannot be told)."""
    try:
        row = next((r for r in con.execute("PRAGMA database_list") if r[1] == "main"), None)
    except sqlite3.Error:
        return "<atlas>"
    return row[2] if row and row[2] else "<atlas>"


def damaged(con: sqlite3.Connection, damage: Damage) -> DamagedAtlas:
    """:class:`DamagedAtlas` of a damage found on ``con`` (the file named from the connection)."""
    return DamagedAtlas(db_path(con), damage)
