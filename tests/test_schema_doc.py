"""docs/atlas-schema.md is generated from the migrations (paperatlas.store.schema_doc) and kept current by cog, the
way docs/cli.md is: a migration that adds a table or a column without regenerating the page fails here."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from cogapp import Cog

from paperatlas.store import schema_doc
from paperatlas.store.migrations import LATEST, MIGRATIONS, expected_schema

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "atlas-schema.md"


def cog_check(path: Path) -> int:
    return Cog().main(["cog", "--check", str(path)])


def test_schema_doc_is_current(capsys):
    status = cog_check(DOC)
    assert status == 0, f"stale docs/atlas-schema.md: run `cog -r docs/atlas-schema.md`\n{capsys.readouterr().out}"


def test_every_table_and_column_of_a_new_atlas_is_documented():
    text = DOC.read_text(encoding="utf-8")
    for table, columns in expected_schema().items():
        if table.startswith("papers_fts_"):  # FTS5 shadow tables: named, not detailed
            assert f"`{table}`" in text
            continue
        section = text.split(f"### `{table}`\n", 1)[1].split("\n### ", 1)[0]
        for column in columns:
            assert f"| `{column}` |" in section, (table, column)
    for number, fn in MIGRATIONS:
        assert f"### {number}. `{fn.__name__}`" in text
    assert f"Schema version **{LATEST}**" in text


def test_columns_are_tagged_with_the_migration_that_added_them():
    tables = {t.name: t for t in schema_doc.schema_tables()}
    topics = {c.name: c for c in tables["topics"].columns}
    assert topics["label"].migration == 1 and topics["label"].not_null
    assert topics["level"].migration == 2
    assert topics["overview_key"].migration == 5
    assert tables["paper_terms"].migration == 3
    assert tables["papers_fts"].kind == "virtual"
    assert {c.name for c in tables["list_items"].columns if c.primary_key} == {"list", "paper_id"}
    assert ("papers_topic", 1) in tables["papers"].indexes
    marks = {c.name: c for c in tables["marks"].columns}
    assert marks["rating"].default == "0" and marks["rating"].sql_type == "INTEGER"


def test_a_new_migration_shows_in_the_doc_and_makes_the_committed_page_stale(tmp_path, monkeypatch, capsys):
    def m999_reading_notes(con: sqlite3.Connection) -> None:
        """Migration 6: a made-up table of the test.

        Args:
            con: unused.
        """
        con.execute("CREATE TABLE IF NOT EXISTS reading_notes (paper_id TEXT PRIMARY KEY, body TEXT NOT NULL)")
        con.execute("ALTER TABLE marks ADD COLUMN colour TEXT")

    monkeypatch.setattr(schema_doc, "MIGRATIONS", [*MIGRATIONS, (len(MIGRATIONS) + 1, m999_reading_notes)])
    text = schema_doc.schema_markdown()
    assert f"### {len(MIGRATIONS) + 1}. `m999_reading_notes`\n\nMigration 6: a made-up table of the test." in text
    assert "con: unused" not in text
    assert "| `body` | TEXT | not null | 6 |" in text
    assert "| `colour` | TEXT |  | 6 |" in text

    copy = tmp_path / DOC.name
    shutil.copy(DOC, copy)
    assert cog_check(copy) != 0  # the committed page lacks the new migration
    assert "changed" in capsys.readouterr().out.lower()
