"""Every stored value an atlas is read with is checked: one set of per-column validators.

:class:`~paperatlas.store.Atlas` loading, the per-request readers (the reader's tables, the stored models, the build
history) and ``paperatlas check`` share the validators of :data:`COLUMNS`: the type of each scalar column, finite
numbers, JSON of the column's shape nested at most :data:`MAX_JSON_DEPTH` levels (checked before decoding, so a
cell of ``[`` × 100,000 never recurses), and embeddings of the atlas's dimension. A damaged cell is reported as
:class:`DamagedAtlas`, a :class:`~paperatlas.store.connection.MalformedAtlas` whose one-line message names the file,
the cell and what is wrong, and says how to repair it::

    iclr.db: papers.year of paper 'a1b2c3' is damaged: text 'soon', not an integer; rebuild it with `paperatlas
    build LISTING --db iclr.db`

:func:`audit` lists every damaged cell of a file (``paperatlas check``).
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .migrations import LATEST, MIGRATIONS, MalformedAtlas

#: Deepest JSON nesting a column may hold (the deepest an atlas writes is 3: ``extra``'s lists in an object).
MAX_JSON_DEPTH = 32
#: Largest absolute value of ``papers.year``.
MAX_YEAR = 9999
#: Tables a build rewrites from its listings: damage there is repaired by a rebuild. The others (the reader's
#: tables, the build history, meta keys a build does not write) are kept by a rebuild as they are.
REBUILT_TABLES = frozenset({"papers", "papers_fts", "embeddings", "topics", "models", "paper_terms"})
#: Meta keys a build writes (:func:`paperatlas.store.sqlite.set_meta`, and ``schema_version`` by the migrations).
REBUILT_META = frozenset({"schema_version", "sources", "embed_model", "layout_method", "built_at", "n_papers",
                          "acronyms"})


class Bad(ValueError):
    """A value a validator refuses; the message says what is wrong with it (``text 'x', not an integer``)."""


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


# ----------------------------------------------------------------------------------------------------- values
def _show(value: object) -> str:
    """A short description of a stored value for a message: its SQLite type and the start of it."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"a BLOB of {len(value)} bytes"
    if isinstance(value, str):
        return f"text {value[:24]!r}{'…' if len(value) > 24 else ''}"
    if isinstance(value, float):
        return f"the real {value!r}"
    return f"the {type(value).__name__} {value!r}"[:60]


def text(value: object) -> str:
    """A required text column.

    Raises:
        Bad: ``value`` is not text (NULL, a number, a BLOB).
    """
    if type(value) is not str:
        raise Bad(f"{_show(value)}, not text")
    return value


def opt_text(value: object) -> str | None:
    """A text column that may be NULL.

    Raises:
        Bad: ``value`` is a number or a BLOB.
    """
    if value is not None and type(value) is not str:
        raise Bad(f"{_show(value)}, not text")
    return value


def nonempty_text(value: object) -> str:
    """A required, non-empty text column (an id).

    Raises:
        Bad: ``value`` is not text, or is empty.
    """
    if type(value) is not str or not value:
        raise Bad(f"{_show(value)}, not an id")
    return value


def integer(value: object) -> int:
    """A required integer column.

    Raises:
        Bad: ``value`` is not an integer.
    """
    if type(value) is not int:
        raise Bad(f"{_show(value)}, not an integer")
    return value


def opt_integer(value: object) -> int | None:
    """An integer column that may be NULL.

    Raises:
        Bad: ``value`` is text, a real or a BLOB.
    """
    if value is not None and type(value) is not int:
        raise Bad(f"{_show(value)}, not an integer")
    return value


def year(value: object) -> int | None:
    """``papers.year``: NULL or an integer of at most 4 digits.

    Raises:
        Bad: ``value`` is not an integer, or its absolute value exceeds :data:`MAX_YEAR`.
    """
    value = opt_integer(value)
    if value is not None and abs(value) > MAX_YEAR:
        raise Bad(f"{value}, not a year")
    return value


def rating(value: object) -> int:
    """``marks.rating``: -1, 0 or +1.

    Raises:
        Bad: ``value`` is another value.
    """
    if type(value) is not int or value not in (-1, 0, 1):
        raise Bad(f"{_show(value)}, not -1, 0 or 1")
    return value


def opt_real(value: object) -> float | None:
    """A real column that may be NULL: a finite number.

    Raises:
        Bad: ``value`` is text, a BLOB, or infinite.
    """
    if value is None:
        return None
    if type(value) not in (float, int):
        raise Bad(f"{_show(value)}, not a number")
    if not math.isfinite(value):
        raise Bad(f"{_show(value)}, not a finite number")
    return value


def blob(value: object) -> bytes:
    """A required BLOB column (``models.blob``).

    Raises:
        Bad: ``value`` is not a BLOB.
    """
    if type(value) is not bytes:
        raise Bad(f"{_show(value)}, not a BLOB")
    return value


def anything(value: object) -> object:
    """A column whose value is not read as a type (kept as it is)."""
    return value


# ------------------------------------------------------------------------------------------------------- JSON
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_depth(text_: str, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep the arrays and objects of a JSON text nest, counted up to ``limit + 1`` (no recursion).

    Args:
        text_: JSON text (need not be valid).
        limit: Stop counting above this depth.

    Returns:
        The greatest nesting depth, or ``limit + 1`` when it is deeper than ``limit``.
    """
    depth = deepest = 0
    for m in _BRACKET.finditer(_STRING.sub("", text_)):
        if m.group() in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def _no_constant(name: str) -> float:
    raise Bad(f"JSON with {name}, not a finite number")


def _finite(literal: str) -> float:
    x = float(literal)
    if not math.isfinite(x):
        raise Bad(f"JSON with the number {literal[:24]}, too large to be finite")
    return x


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)


def decode_json(value: object) -> object:
    r"""Decode a JSON column's text without deep recursion: nested at most :data:`MAX_JSON_DEPTH`, numbers finite.

    Args:
        value: The stored value.

    Returns:
        The decoded value.

    Raises:
        Bad: ``value`` is not text, not JSON, nested deeper than :data:`MAX_JSON_DEPTH`, holds NaN, Infinity or a
            number too large for a float, or a lone surrogate (``"\\ud800"``, which no file can hold).
    """
    if type(value) is not str:
        raise Bad(f"{_show(value)}, not JSON text")
    if value.count("[") + value.count("{") > MAX_JSON_DEPTH and json_depth(value) > MAX_JSON_DEPTH:
        raise Bad(f"JSON nested deeper than {MAX_JSON_DEPTH} levels ({len(value)} characters)")
    try:
        out = _DECODER.decode(value)
    except Bad:
        raise
    except RecursionError:  # cannot happen after the depth check; never let it out
        raise Bad("JSON nested too deep") from None
    except ValueError as e:  # not JSON; an integer of more than 4300 digits
        raise Bad(f"bad JSON ({str(e)[:60]})") from None
    if "\\u" in value and _has_surrogate(out):
        raise Bad("JSON with a lone surrogate (\\ud800-\\udfff), which is not text")
    return out


def _has_surrogate(value: object) -> bool:
    """Whether a decoded JSON value holds a lone surrogate in a string (depth is bounded: recursion is fine)."""
    if isinstance(value, str):
        return bool(_SURROGATE.search(value))
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


def _kind(value: object) -> str:
    return {list: "a list", dict: "an object", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def json_list(item: Callable[[object], object], what: str) -> Callable[[object], list]:
    """A validator of a JSON column holding a list whose items ``item`` accepts (NULL or ``""``: empty).

    Args:
        item: Validates one item (raises :class:`Bad`).
        what: The items, for messages (``"strings"``).

    Returns:
        ``value -> list``.
    """

    def validate(value: object) -> list:
        if value is None or value == "":
            return []
        out = decode_json(value)
        if type(out) is not list:
            raise Bad(f"JSON {_kind(out)}, not a list of {what}")
        for i, x in enumerate(out):
            try:
                item(x)
            except Bad as e:
                raise Bad(f"item {i} is {e}") from None
        return out

    validate.__doc__ = f"A JSON list of {what} (NULL or empty text: an empty list)."
    return validate


def _json_str(x: object) -> str:
    if type(x) is not str:
        raise Bad(f"JSON {_kind(x)}, not a string")
    return x


def _json_int(x: object) -> int:
    if type(x) is not int:
        raise Bad(f"JSON {_kind(x)}, not an integer")
    return x


def _json_number(x: object) -> float:
    if type(x) not in (int, float):
        raise Bad(f"JSON {_kind(x)}, not a number")
    return x


def _record(fields: dict[str, Callable[[object], object]], required: tuple[str, ...]) -> Callable[[object], dict]:
    """An item that is an object with only ``fields`` (each validated), ``required`` among them."""

    def validate(x: object) -> dict:
        if type(x) is not dict:
            raise Bad(f"JSON {_kind(x)}, not an object")
        for k, v in x.items():
            check = fields.get(k)
            if check is None:
                raise Bad(f"an object with the unknown key {k[:24]!r}")
            try:
                check(v)
            except Bad as e:
                raise Bad(f"an object whose {k!r} is {e}") from None
        missing = [k for k in required if k not in x]
        if missing:
            raise Bad(f"an object without {', '.join(map(repr, missing))}")
        return x

    return validate


def _opt(check: Callable[[object], object]) -> Callable[[object], object]:
    return lambda x: None if x is None else check(x)


_LINK = _record({"url": _json_str, "kind": _json_str, "label": _json_str}, ("url",))
_SOURCE = _record({"format": _json_str, "path": _json_str, "line": _opt(_json_int), "record": _opt(_json_int),
                   "section": _json_str, "year_heading": _json_str, "native_id": _json_str}, ("format", "path"))
#: Keys of ``papers.extra`` that pages show as text (:data:`paperatlas.model.EXTRA_KEYS`); the numbers there are
#: read leniently (:mod:`paperatlas.facets`).
_EXTRA_TEXT = ("decision", "doi", "arxiv_id", "openreview_id", "primary_area", "session", "starts_at", "ends_at",
               "timezone", "location", "poster")


def json_object(value: object) -> dict:
    """A JSON column holding an object (NULL or ``""``: empty), e.g. ``papers.extra``.

    The keys of :data:`paperatlas.model.EXTRA_KEYS` that are text must be strings, ``institutions`` a list of
    strings.

    Raises:
        Bad: Not JSON (see :func:`decode_json`), not an object, or a known key of the wrong type.
    """
    if value is None or value == "":
        return {}
    out = decode_json(value)
    if type(out) is not dict:
        raise Bad(f"JSON {_kind(out)}, not an object")
    for k in _EXTRA_TEXT:
        if k in out and out[k] is not None and type(out[k]) is not str:
            raise Bad(f"an object whose {k!r} is JSON {_kind(out[k])}, not a string")
    if "institutions" in out and out["institutions"] is not None:
        json_list(_json_str, "strings")(json.dumps(out["institutions"]))
    return out


def any_json(value: object) -> object:
    """A JSON column of any shape (``meta.value`` of a key this code does not know).

    Raises:
        Bad: Not JSON (see :func:`decode_json`).
    """
    return decode_json(value)


_STRINGS = json_list(_json_str, "strings")


def _meta_typed(check: Callable[[object], object], what: str) -> Callable[[object], object]:
    def validate(value: object) -> object:
        out = decode_json(value)
        try:
            check(out)
        except Bad:
            raise Bad(f"JSON {_kind(out)}, not {what}") from None
        return out

    return validate


def _str_map(x: object) -> dict:
    if type(x) is not dict or any(type(v) is not str for v in x.values()):
        raise Bad("not an object of strings")
    return x


def _str_list(x: object) -> list:
    if type(x) is not list or any(type(v) is not str for v in x):
        raise Bad("not a list of strings")
    return x


#: ``meta`` key -> validator of its value (others: :func:`any_json`).
META = {"schema_version": _meta_typed(_json_int, "an integer"), "sources": _meta_typed(_str_list, "a list of strings"),
        "embed_model": _meta_typed(_json_str, "a string"), "layout_method": _meta_typed(_json_str, "a string"),
        "built_at": _meta_typed(_json_str, "a string"), "n_papers": _meta_typed(_json_int, "an integer"),
        "acronyms": _meta_typed(_str_map, "an object of strings")}


def meta_value(key: object, value: object) -> object:
    """The decoded value of a ``meta`` row.

    Raises:
        Bad: ``value`` is not JSON (:func:`decode_json`), or not of the type a known key has.
    """
    return META.get(key, any_json)(value)


def override_value(field_: object, value: object) -> object:
    """The decoded value of an ``overrides`` row: a string for ``tldr``, a list of strings for ``keyphrases``.

    Raises:
        Bad: Not JSON, or not of the field's type.
    """
    out = decode_json(value)
    if field_ == "tldr" and type(out) is not str:
        raise Bad(f"JSON {_kind(out)}, not the string a TL;DR is")
    if field_ == "keyphrases":
        _STRINGS(value)
    return out


def listings(value: object) -> list:
    """``builds.listings``: a JSON list of strings.

    Raises:
        Bad: Not JSON, or not a list of strings.
    """
    return _STRINGS(value)


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
               "x": opt_real, "y": opt_real, "method": opt_text, "level": opt_integer},
    "models": {"name": text, "blob": blob},
    "overrides": {"paper_id": text, "field": text, "value": anything, "title": opt_text, "edited_at": text},
    "marks": {"paper_id": text, "title": text, "rating": rating, "note": text, "read_at": opt_text,
              "updated_at": text},
    "list_items": {"list": text, "paper_id": text, "title": text, "added_at": text},
    "paper_terms": {"paper_id": text, "text_hash": text, "method": text, "terms": _STRINGS},
    "builds": {"id": integer, "finished_at": text, "listings": listings, "n_papers": integer, "n_new": integer},
    "paper_history": {"paper_id": text, "title": text, "first_build": integer},
    "papers_fts": {"paper_id": text, "title": opt_text, "authors": opt_text, "abstract": opt_text,
                   "keyphrases": opt_text, "tldr": opt_text},
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
                yield col, meta_value(row["key"], value)
            elif table == "overrides" and col == "value":
                yield col, override_value(row["field"], value)
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


def read_checked(con: sqlite3.Connection, table: str, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
    """Run a ``SELECT rowid, ... FROM table`` and validate every row; for the per-request readers.

    Args:
        con: A connection to the atlas (any row factory: a cursor of its own reads ``sqlite3.Row``).
        table: The table the columns belong to (:data:`COLUMNS`).
        sql: The query; its first column is the rowid, the others named as the table's columns.
        params: Its parameters.

    Returns:
        One dict per row: ``column -> decoded value`` (``rowid`` too).

    Raises:
        DamagedAtlas: A value is damaged, a column is missing or text is not UTF-8.
        sqlite3.OperationalError: The table does not exist (an atlas older than it: the caller decides), or the
            file is locked.
    """
    cur = con.cursor()
    cur.row_factory = sqlite3.Row
    try:
        rows = cur.execute(sql, params).fetchall()
    except sqlite3.OperationalError as e:
        m = re.search(r"no such column: (\w+)", str(e))
        if m:
            raise damaged(con, Damage(table, m.group(1), None, "missing")) from None
        if "decode" in str(e).lower():
            raise damaged(con, _undecodable(con, table) or Damage(table, "?", None, str(e))) from None
        raise
    out = []
    for r in rows:
        rowid = r[0]
        try:
            d = dict(validate_row(table, r, [c for c in r.keys()[1:] if c in COLUMNS[table]], rowid))
        except CellError as e:
            raise damaged(con, e.damage) from None
        d["rowid"] = rowid
        out.append(d)
    return out


# ----------------------------------------------------------------------------------------------- whole files
class _Undecodable(bytes):
    """Stored text that is not UTF-8 (read by the audit's text factory instead of failing the whole query)."""


def _lenient_text(b: bytes) -> str | bytes:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return _Undecodable(b)


def _check_text(value: object) -> None:
    if isinstance(value, _Undecodable):
        raise Bad(f"text that is not UTF-8 ({bytes(value[:16])!r})")


def _undecodable(con: sqlite3.Connection, table: str) -> Damage | None:
    """The first cell of ``table`` whose text is not UTF-8 (read again on a connection of its own)."""
    path = db_path(con)
    if path == "<atlas>":
        return None
    for d in audit_tables(path, [table]):
        if "not UTF-8" in d.what:
            return d
    return None


def expected_schema(version: int) -> dict[str, frozenset[str]]:
    """The tables and columns migrations 1 … ``version`` create (FTS5 shadow tables left out).

    Args:
        version: A schema version (above :data:`~paperatlas.store.migrations.LATEST`: the latest schema).

    Returns:
        ``table -> column names``.
    """
    mem = sqlite3.connect(":memory:")
    try:
        for number, fn in MIGRATIONS:
            if number <= min(version, LATEST):
                fn(mem)
        return _schema(mem)
    finally:
        mem.close()


def _schema(con: sqlite3.Connection) -> dict[str, frozenset[str]]:
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                       "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'papers_fts_%'")]
    return {n: frozenset(r[1] for r in con.execute(f"PRAGMA table_info({n})")) for n in names}


_SCHEMAS: dict[int, dict[str, frozenset[str]]] = {}


def schema_damage(con: sqlite3.Connection) -> list[Damage]:
    """The tables and columns the atlas's schema version promises but the file lacks.

    Args:
        con: An open connection to the atlas.

    Returns:
        One :class:`Damage` per missing table (column None) or column (row None); empty when complete. An atlas
        whose ``meta.schema_version`` cannot be read is judged by the latest schema.
    """
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = int(row[0]) if row is not None else 0
    except (sqlite3.Error, TypeError, ValueError):
        version = LATEST
    if version not in _SCHEMAS:
        _SCHEMAS[version] = expected_schema(version)
    have = _schema(con)
    out = []
    for table, cols in _SCHEMAS[version].items():
        if table not in have:
            out.append(Damage(table, None, None, "missing"))
            continue
        out += [Damage(table, c, None, "missing") for c in sorted(cols - have[table])]
    return out


def check_vectors(rows: list[tuple[object, object, int | None]], dim: int | None = None
                  ) -> tuple[dict[str, np.ndarray], int, list[Damage]]:
    """Check the stored embeddings: each a finite float32 vector of the atlas's dimension.

    Args:
        rows: ``(paper_id, vector blob, rowid)`` per embeddings row (ids already checked as text).
        dim: The atlas's dimension; None: the length most vectors have (the longer one on a tie).

    Returns:
        ``(paper id -> (dim,) float32 vector, dim, damage)``: the good vectors, the dimension (0 without
        vectors) and one :class:`Damage` per bad vector, in ``rows`` order.
    """
    from .embeddings import _vector

    good: dict[str, np.ndarray] = {}
    bad: dict[str, tuple[str, int | None]] = {}
    for pid, b, rowid in rows:
        v = _vector(b)
        if v is not None:
            good[str(pid)] = v
        elif isinstance(b, bytes) and b and len(b) % 4 == 0:
            bad[str(pid)] = (f"{len(b) // 4} float32 values, not all finite (or a norm above 1e6)", rowid)
        elif isinstance(b, bytes) and b:
            bad[str(pid)] = (f"not a vector of finite float32 values ({len(b)} bytes)", rowid)
        else:
            bad[str(pid)] = (f"{_show(b)}, not a vector of float32 values", rowid)
    if dim is None:
        counts = Counter(len(v) for v in good.values())
        dim = max(counts, key=lambda n: (counts[n], n)) if counts else 0
    for pid, _, rowid in rows:
        v = good.get(str(pid))
        if v is not None and len(v) != dim:
            del good[str(pid)]
            bad[str(pid)] = (f"{len(v)} float32 values, not the atlas's {dim}", rowid)
    out = [Damage("embeddings", "vector", f"paper {pid!r}", what, rowid) for pid, (what, rowid) in bad.items()]
    return good, dim, out


def audit_tables(path: str | Path, tables: list[str] | None = None) -> list[Damage]:
    """Every damaged cell of some tables of an atlas (no schema check; see :func:`audit`).

    Args:
        path: The atlas file.
        tables: Tables of :data:`COLUMNS` (default: all); a table the file lacks is skipped.

    Returns:
        One :class:`Damage` per damaged cell, in table, row and column order.
    """
    con = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    con.text_factory = _lenient_text
    out: list[Damage] = []
    try:
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table in tables or list(COLUMNS):
            if table not in have:
                continue
            spec = COLUMNS[table]
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})") if r[1] in spec]
            if not cols:
                continue
            vectors = []
            for r in con.execute(f"SELECT rowid AS _rowid, {', '.join(cols)} FROM {table} ORDER BY rowid"):
                name = row_name(table, r, r["_rowid"])
                for col in cols:
                    try:
                        _check_text(r[col])
                        list(validate_row(table, r, [col], r["_rowid"]))
                    except Bad as e:
                        out.append(Damage(table, col, name, str(e), r["_rowid"]))
                    except CellError as e:
                        out.append(e.damage)
                if table == "embeddings" and "vector" in cols and type(r["paper_id"]) is str:
                    vectors.append((r["paper_id"], r["vector"], r["_rowid"]))
            if vectors:
                out += check_vectors(vectors)[2]
    finally:
        con.close()
    return out


def audit(path: str | Path) -> list[Damage]:
    """Every damaged cell of an atlas file: missing tables and columns, then each bad value.

    Args:
        path: The atlas file.

    Returns:
        One :class:`Damage` per missing table or column and per damaged cell (empty: the atlas is sound).

    Raises:
        paperatlas.store.AtlasNotFound: There is no file at ``path``.
        MalformedAtlas: The file is not SQLite or lacks an atlas table.
    """
    from .connection import connect

    con = connect(path, readonly=True)
    try:
        out = schema_damage(con)
    finally:
        con.close()
    return out + audit_tables(path)
