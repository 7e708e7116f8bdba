"""Reading with checks, and checking a whole atlas file (``paperatlas check``).

:func:`read_checked` is how the per-request readers (the reader's tables, the build history) read a table, every
value checked by :data:`paperatlas.store.check.COLUMNS`; :func:`audit` lists every damaged cell of a file: missing
tables and columns (:func:`schema_damage`), then each value, text that is not UTF-8 and embeddings of another
length than the atlas's (:func:`paperatlas.store.embeddings.check_vectors`).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from .cells import Bad
from .check import COLUMNS, CellError, Damage, damaged, db_path, row_name, validate_row
from .embeddings import check_vectors, model_dim
from .migrations import LATEST, expected_schema, table_columns


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


def read_table(con: sqlite3.Connection, table: str, columns: tuple[str, ...], order: str = "",
               skip_damaged: bool = False) -> list[dict[str, Any]] | None:
    """Every row of a table the atlas may lack (the reader's tables, the build history), every value checked.

    Args:
        con: A connection to the atlas.
        table: A table of :data:`~paperatlas.store.check.COLUMNS`.
        columns: The columns to read.
        order: An ``ORDER BY`` clause, or ``""``.
        skip_damaged: Leave damaged rows out instead of raising (a build, a write: ``paperatlas check`` names them).

    Returns:
        One dict per row, ``column -> decoded value``; None when the file has no such table (an older atlas).

    Raises:
        paperatlas.store.check.DamagedAtlas: A value is damaged or a column missing (unless ``skip_damaged``).
    """
    sql = f"SELECT rowid, {', '.join(columns)} FROM {table} {order}"
    try:
        if not skip_damaged:
            return [{c: r[c] for c in columns} for r in read_checked(con, table, sql)]
        cur = con.cursor()
        cur.row_factory = sqlite3.Row
        rows = cur.execute(sql).fetchall()
    except sqlite3.OperationalError as e:
        if "no such table" in str(e) or (skip_damaged and "no such column" in str(e)):
            return None
        raise
    out = []
    for r in rows:
        try:
            out.append(dict(validate_row(table, r, list(columns), r[0])))
        except CellError:
            continue
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


def _schema(con: sqlite3.Connection) -> dict[str, frozenset[str]]:
    """``table -> column names`` of an open file (FTS5 shadow tables left out)."""
    return {t: cols for t, cols in table_columns(con).items() if not t.startswith("papers_fts_")}


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
    have = _schema(con)
    out = []
    for table, cols in expected_schema(version).items():
        if table.startswith("papers_fts_"):
            continue
        if table not in have:
            out.append(Damage(table, None, None, "missing"))
            continue
        out += [Damage(table, c, None, "missing") for c in sorted(cols - have[table])]
    return out


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
                if table == "embeddings" and {"vector", "paper_id"} <= set(cols) and type(r["paper_id"]) is str:
                    vectors.append((r["paper_id"], r["vector"], r["_rowid"]))
                    model = r["model"] if "model" in cols else None
            if vectors:
                out += check_vectors(vectors, model_dim(model))[2]
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
