"""The FTS5 index lives in the store: one schema, one set of columns and bm25() weights (paperatlas.store.fts)."""

from __future__ import annotations

import re
import sqlite3

from conftest import ROOT
from paperatlas.search import BM25_WEIGHTS
from paperatlas.search.together import SALIENT
from paperatlas.store import Atlas, fts

SRC = ROOT / "src" / "paperatlas"
#: SQL about the FTS5 table that only store/fts.py may hold
FTS_SQL = re.compile(r"CREATE VIRTUAL TABLE|USING fts5|bm25\(papers_fts"
                     r"|(INSERT INTO|UPDATE|DELETE FROM|FROM) papers_fts\b")


def test_fts_sql_is_only_in_store_fts():
    offenders = {}
    for path in SRC.rglob("*.py"):
        if path.name == "fts.py" and path.parent.name == "store":
            continue
        lines = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if FTS_SQL.search(line) and not line.lstrip().startswith(("#", "``", '"""')) and "``" not in line]
        if lines:
            offenders[str(path.relative_to(SRC))] = lines
    assert not offenders, f"FTS5 SQL outside store/fts.py: {offenders}"


def test_the_atlas_table_has_the_stores_columns_and_tokenizer(sample_atlas):
    con = sqlite3.connect(sample_atlas)
    try:
        cols = [r[1] for r in con.execute(f"PRAGMA table_info({fts.TABLE})")]
        sql = con.execute("SELECT sql FROM sqlite_master WHERE name = ?", (fts.TABLE,)).fetchone()[0]
    finally:
        con.close()
    assert cols == [fts.ID_COLUMN, *fts.COLUMNS]
    assert f"tokenize = '{fts.TOKENIZE}'" in sql
    assert BM25_WEIGHTS is fts.BM25_WEIGHTS and len(BM25_WEIGHTS) == len(fts.COLUMNS)
    assert SALIENT == (1, 4, 5)  # title, keyphrases, tldr as FTS5 column numbers


def test_phrase_bm25_uses_the_weights(sample_atlas):
    atlas = Atlas(sample_atlas)
    try:
        cur = atlas.con.cursor()
        cur.row_factory = None
        rows = fts.phrase_bm25(cur, fts.quote("learning"))
        w = ", ".join(str(x) for x in BM25_WEIGHTS)
        ref = cur.execute(f"SELECT rowid, bm25(papers_fts, 0, {w}) FROM papers_fts WHERE papers_fts MATCH ?",
                          ('"learning"',)).fetchall()
        assert rows == ref and rows
        lo, hi = rows[0][0], rows[len(rows) // 2][0]
        assert fts.phrase_bm25(cur, fts.quote("learning"), (lo, hi)) == [r for r in ref if lo <= r[0] < hi]
        assert fts.match_rowids(atlas.con, ['"learning"', '"learning"']) == [r[0] for r in ref] * 2
        texts = fts.column_texts(cur, [rows[0][0]])
        assert len(texts) == 1 and len(texts[0]) == 1 + len(fts.COLUMNS)
        terms = dict(fts.frequent_terms(atlas.con, 1))
        assert terms["learn"] == len(ref)
        tok = fts.make_tokenizer(atlas.con)
        assert fts.tokenize(tok, ["Graph Networks", "", "self-supervised"]) == [("graph", "network"), (),
                                                                                 ("self", "supervis")]
    finally:
        atlas.close()


def test_quote_never_reads_as_syntax():
    assert fts.quote('a "b" OR c') == '"a ""b"" OR c"'
