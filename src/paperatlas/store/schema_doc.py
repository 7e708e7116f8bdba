"""The atlas schema as Markdown, made from the migrations (``docs/atlas-schema.md`` is this text, through cog).

:func:`schema_markdown` runs :data:`paperatlas.store.migrations.MIGRATIONS` one at a time on an empty in-memory
SQLite database and, after each, reads which tables, columns and indexes it added (``PRAGMA table_info`` and
``sqlite_master``), so the document cannot drift from the ``CREATE``/``ALTER`` statements that make an atlas.
Regenerate the committed file with ``cog -r docs/atlas-schema.md``; ``tests/test_schema_doc.py`` fails when it is
stale.
"""

from __future__ import annotations

import inspect
import sqlite3
from dataclasses import dataclass

from .migrations import LATEST, MIGRATIONS


@dataclass(frozen=True)
class Column:
    """One column of an atlas table, as ``PRAGMA table_info`` reports it.

    Attributes:
        name: The column's name.
        sql_type: Its declared type (``TEXT``, ``INTEGER``, ``REAL``, ``BLOB``; empty for FTS5 columns).
        not_null: Declared ``NOT NULL``.
        default: The ``DEFAULT`` expression as written (``None`` when there is none).
        primary_key: Position in the primary key (1, 2, …), 0 when not part of it.
        migration: The number of the migration that added it.
    """

    name: str
    sql_type: str
    not_null: bool
    default: str | None
    primary_key: int
    migration: int


@dataclass(frozen=True)
class Table:
    """One table of the atlas schema.

    Attributes:
        name: The table's name.
        kind: ``table``, ``virtual`` (the FTS5 index) or ``shadow`` (FTS5's own storage tables).
        migration: The number of the migration that created it.
        columns: Its columns in table order.
        indexes: ``(index name, migration number)`` of the named indexes on it (SQLite's automatic ones left out).
    """

    name: str
    kind: str
    migration: int
    columns: tuple[Column, ...]
    indexes: tuple[tuple[str, int], ...]


def _table_rows(con: sqlite3.Connection) -> dict[str, str]:
    """``table name -> CREATE sql`` of the user tables (``sqlite_*`` left out)."""
    return {name: sql or "" for name, sql in con.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}


def _indexes(con: sqlite3.Connection) -> dict[str, str]:
    """``index name -> table name`` of the named indexes."""
    return dict(con.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"))


def schema_tables() -> list[Table]:
    """Every table an atlas of the latest schema has, each column tagged with the migration that added it.

    Runs the migrations in order on an empty ``:memory:`` database (nothing is read from or written to disk).

    Returns:
        The tables in the order the migrations created them (within one migration: by name).
    """
    con = sqlite3.connect(":memory:")
    try:
        created: dict[str, int] = {}
        column_from: dict[tuple[str, str], int] = {}
        index_from: dict[str, int] = {}
        for number, fn in MIGRATIONS:
            fn(con)
            for name in sorted(_table_rows(con)):
                created.setdefault(name, number)
                for row in con.execute(f"PRAGMA table_info({name})"):
                    column_from.setdefault((name, row[1]), number)
            for name in _indexes(con):
                index_from.setdefault(name, number)
        sql = _table_rows(con)
        virtual = {n for n, s in sql.items() if s.split()[1:2] == ["VIRTUAL"]}  # a virtual table (FTS5)
        index_table = _indexes(con)
        tables = []
        for name in sorted(created, key=lambda n: (created[n], n)):
            kind = "virtual" if name in virtual else "shadow" if any(name.startswith(v + "_") for v in virtual) \
                else "table"
            columns = tuple(Column(r[1], r[2] or "", bool(r[3]), r[4], r[5], column_from[(name, r[1])])
                            for r in con.execute(f"PRAGMA table_info({name})"))
            indexes = tuple(sorted((i, index_from[i]) for i, t in index_table.items() if t == name))
            tables.append(Table(name, kind, created[name], columns, indexes))
        return tables
    finally:
        con.close()


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _column_notes(col: Column) -> str:
    notes = []
    if col.primary_key:
        notes.append("primary key")
    if col.not_null:
        notes.append("not null")
    if col.default is not None:
        notes.append(f"default `{col.default}`")
    return ", ".join(notes)


def schema_markdown() -> str:
    """The Markdown body of ``docs/atlas-schema.md``: the migrations, then every table with its columns.

    Each migration is listed with its number, function name and docstring (its ``Args:`` section left out, reST
    double backquotes made single); each
    user table gets a table of ``column | type | constraints | added by``; the FTS5 shadow tables (SQLite's own
    storage of the search index) are named in one line, not detailed.

    Returns:
        Markdown text ending in a newline.
    """
    tables = schema_tables()
    out = [f"Schema version **{LATEST}** (`meta.schema_version`): {len(MIGRATIONS)} migrations, "
           f"{sum(t.kind != 'shadow' for t in tables)} tables.", "", "## Migrations", ""]
    for number, fn in MIGRATIONS:
        doc = (inspect.getdoc(fn) or "").split("\nArgs:")[0].strip().replace("``", "`")
        out += [f"### {number}. `{fn.__name__}`", "", doc, ""]
    out += ["## Tables", ""]
    for t in tables:
        if t.kind == "shadow":
            continue
        what = "FTS5 virtual table (the search index)" if t.kind == "virtual" else "Table"
        out += [f"### `{t.name}`", "", f"{what}, created by migration {t.migration}.", ""]
        out += ["| column | type | constraints | added by |", "|---|---|---|---|"]
        out += [f"| `{c.name}` | {c.sql_type or '—'} | {_cell(_column_notes(c))} | {c.migration} |"
                for c in t.columns]
        out.append("")
        if t.indexes:
            out += ["Indexes: " + ", ".join(f"`{i}` (migration {m})" for i, m in t.indexes) + ".", ""]
    shadows = [t.name for t in tables if t.kind == "shadow"]
    if shadows:
        out += ["### FTS5 shadow tables", "",
                "SQLite's own storage of the search index, made with it (not read or written by paperatlas "
                "directly): " + ", ".join(f"`{s}`" for s in shadows) + ".", ""]
    return "\n".join(out).rstrip("\n") + "\n"
