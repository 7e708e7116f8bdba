"""The full-text index ``papers_fts``: its schema, columns, tokenizer, BM25 weights and every FTS5 statement.

One SQLite FTS5 table holds each paper's searchable text, one row per paper: ``paper_id`` (not indexed), then the
indexed :data:`COLUMNS` (title, authors, abstract, keyphrases, TL;DR), tokenized by :data:`TOKENIZE` (porter stems
over ``unicode61``). A build writes it (:func:`paper_row`, :func:`replace_all`, :func:`replace_rows`), a reader's
keyphrase/TL;DR override updates it (:func:`set_generated`), and search reads it: a phrase's ``(rowid, bm25())``
with :data:`BM25_WEIGHTS` (:func:`phrase_bm25`), the rows an FTS5 expression matches (:func:`match_rowids`), the
stored text of some rows (:func:`column_texts`), the index's frequent terms (:func:`frequent_terms`) and the
table's own tokenizer on an in-memory copy (:func:`make_tokenizer`, :func:`tokenize`). The arrays and scoring built
on these answers are :mod:`paperatlas.search`'s (:mod:`paperatlas.search.postings`, :mod:`paperatlas.search.together`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence

from ..model import Paper

#: the FTS5 table
TABLE = "papers_fts"
#: its first column, the paper's id (``UNINDEXED``: FTS5 column 0, never matched)
ID_COLUMN = "paper_id"
#: the indexed columns, FTS5 columns 1 to 5, in this order
COLUMNS = ("title", "authors", "abstract", "keyphrases", "tldr")
#: the columns where a word is salient (a query's words each found in one of them are "used together")
SALIENT = ("title", "keyphrases", "tldr")
#: the FTS5 tokenizer: porter stems (``Networks`` → ``network``) of unicode61 tokens, diacritics removed
TOKENIZE = "porter unicode61 remove_diacritics 2"
#: ``bm25()`` weights of :data:`COLUMNS`: title 10, authors 4, abstract 1, keyphrases 5, TL;DR 2 (``paper_id``: 0)
BM25_WEIGHTS = (10.0, 4.0, 1.0, 5.0, 2.0)

#: the table as migration 1 creates it (:func:`create`)
CREATE_SQL = f"""CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5(
    {ID_COLUMN} UNINDEXED, {', '.join(COLUMNS)},
    tokenize = '{TOKENIZE}'
)"""
_INSERT_SQL = (f"INSERT INTO {TABLE} ({ID_COLUMN}, {', '.join(COLUMNS)}) "
               f"VALUES ({', '.join('?' * (1 + len(COLUMNS)))})")
#: ``(rowid, bm25)`` of every row an FTS5 expression matches, with :data:`BM25_WEIGHTS`
_BM25_SQL = (f"SELECT rowid, bm25({TABLE}, 0, {', '.join(str(w) for w in BM25_WEIGHTS)}) "
             f"FROM {TABLE} WHERE {TABLE} MATCH ?")
_MATCH_SQL = f"SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ?"
_TEXTS_SQL = f"SELECT rowid, {', '.join(COLUMNS)} FROM {TABLE} WHERE rowid IN (SELECT value FROM json_each(?))"


def create(con: sqlite3.Connection) -> None:
    """Create the FTS5 table when missing (:data:`CREATE_SQL`; migration 1 runs it).

    Args:
        con: A writable connection, inside the migration transaction.
    """
    con.execute(CREATE_SQL)


def keyphrases_text(keyphrases: list[str], given: list[str]) -> str:
    """The ``keyphrases`` column's text: the generated keyphrases, then the listing's own, ``"; "``-joined."""
    return "; ".join(keyphrases + given)


def paper_row(p: Paper) -> tuple:
    """The FTS5 row of ``p``: ``(paper_id, title, authors, abstract, keyphrases, tldr)``, texts as indexed.

    Authors are ``", "``-joined, keyphrases as :func:`keyphrases_text`; the rest as stored on the paper.
    """
    return (p.id, p.title, ", ".join(p.authors), p.abstract, keyphrases_text(p.keyphrases, p.given_keyphrases),
            p.tldr)


def replace_all(con: sqlite3.Connection, rows: Iterable[tuple]) -> None:
    """Empty the table and insert ``rows`` (:func:`paper_row` tuples), in order.

    Args:
        con: A writable connection (a build's copy).
        rows: The rows.
    """
    con.execute(f"DELETE FROM {TABLE}")
    con.executemany(_INSERT_SQL, rows)


def stored_rows(con: sqlite3.Connection) -> Iterator[tuple]:
    """Every row as stored: ``(rowid, paper_id, title, authors, abstract, keyphrases, tldr)``, in rowid order."""
    yield from con.execute(f"SELECT rowid, {ID_COLUMN}, {', '.join(COLUMNS)} FROM {TABLE}")


def delete_rowids(con: sqlite3.Connection, rowids: Iterable[int]) -> None:
    """Delete the rows ``rowids`` (ints; a missing one is no error).

    Args:
        con: A writable connection.
        rowids: FTS5 rowids.
    """
    con.executemany(f"DELETE FROM {TABLE} WHERE rowid = ?", [(r,) for r in rowids])


def insert_rows(con: sqlite3.Connection, rows: Iterable[tuple]) -> None:
    """Insert ``rows`` (:func:`paper_row` tuples), in order.

    Args:
        con: A writable connection.
        rows: The rows.
    """
    con.executemany(_INSERT_SQL, rows)


def set_generated(con: sqlite3.Connection, paper_id: str, keyphrases: str, tldr: str) -> None:
    """Set a paper's indexed keyphrases (:func:`keyphrases_text`) and TL;DR (a reader's override).

    Args:
        con: A writable connection, in the override's transaction.
        paper_id: The paper's id (no row: nothing changes).
        keyphrases: The ``keyphrases`` column's text.
        tldr: The ``tldr`` column's text.
    """
    con.execute(f"UPDATE {TABLE} SET keyphrases = ?, tldr = ? WHERE {ID_COLUMN} = ?", (keyphrases, tldr, paper_id))


def quote(text: str) -> str:
    """``text`` as one FTS5 string (a phrase; double quotes doubled): never read as query syntax.

    Args:
        text: any string.

    Returns:
        E.g. ``'"self-supervised"'``.
    """
    return '"' + text.replace('"', '""') + '"'


def rowid_paper_ids(cur: sqlite3.Cursor) -> list[tuple[int, str]]:
    """``(rowid, paper_id)`` of every row, in rowid order.

    Args:
        cur: A cursor on the atlas giving plain tuples.
    """
    return cur.execute(f"SELECT rowid, {ID_COLUMN} FROM {TABLE}").fetchall()


def phrase_bm25(cur: sqlite3.Cursor, expression: str, rowids: tuple[int, int] | None = None) -> list[tuple[int, float]]:
    """``(rowid, bm25)`` of every row the FTS5 ``expression`` matches: SQLite's ``bm25()`` with :data:`BM25_WEIGHTS`.

    Args:
        cur: A cursor on the atlas giving plain tuples.
        expression: An FTS5 query expression (one quoted phrase: :func:`quote`).
        rowids: ``(lo, hi)``: only rows with ``lo <= rowid < hi`` (``bm25()`` is the same float: its idf and
            average length are the whole table's).

    Returns:
        The rows, in rowid order; ``bm25`` negative (lower is better).

    Raises:
        sqlite3.OperationalError: ``expression`` is not FTS5 syntax.
    """
    if rowids is None:
        return cur.execute(_BM25_SQL, (expression,)).fetchall()
    return cur.execute(_BM25_SQL + " AND rowid >= ? AND rowid < ?", (expression, *rowids)).fetchall()


def match_rowids(con: sqlite3.Connection, expressions: list[str]) -> list[int]:
    """Every rowid each FTS5 expression matches, statement after statement (repeats kept).

    Args:
        con: A connection to the atlas.
        expressions: FTS5 query expressions.

    Returns:
        The rowids, in statement order.

    Raises:
        sqlite3.OperationalError: an expression is not FTS5 syntax.
    """
    out: list[int] = []
    for expr in expressions:
        out.extend(r[0] for r in con.execute(_MATCH_SQL, (expr,)))
    return out


def column_texts(cur: sqlite3.Cursor, rowids: Sequence[int]) -> list[tuple]:
    """The stored text of the rows ``rowids``, one statement: ``(rowid, title, authors, abstract, keyphrases, tldr)``.

    Args:
        cur: A cursor on the atlas giving plain tuples.
        rowids: FTS5 rowids (Python ints).

    Returns:
        One tuple per row found, in the order SQLite reads them; texts ``None`` where empty.
    """
    return cur.execute(_TEXTS_SQL, (json.dumps(list(rowids)),)).fetchall()


def frequent_terms(con: sqlite3.Connection, min_docs: int) -> list[tuple[str, int]]:
    """``(term, rows containing it)`` of the index's terms in at least ``min_docs`` rows, most first (then by term).

    Reads a temporary ``fts5vocab`` table (``temp.paperatlas_terms``, made on first use on this connection).

    Args:
        con: A connection to the atlas (read-only is enough).
        min_docs: The fewest rows.

    Returns:
        The terms (FTS5 tokens: porter stems); empty without the ``fts5vocab`` module.
    """
    try:
        con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.paperatlas_terms USING fts5vocab(main, {TABLE}, row)")
        return [(str(t), int(n)) for t, n in con.execute(
            "SELECT term, doc FROM temp.paperatlas_terms WHERE doc >= ? ORDER BY doc DESC, term",
            (min_docs,)).fetchall()]
    except sqlite3.Error:  # an old SQLite without fts5vocab
        return []


def make_tokenizer(con: sqlite3.Connection) -> sqlite3.Connection | None:
    """An in-memory FTS5 table tokenizing like the atlas's :data:`TABLE` (its own ``tokenize``), for :func:`tokenize`.

    It has its own connection: the atlas's stays read-only and out of any transaction.

    Args:
        con: A connection to the atlas.

    Returns:
        The in-memory connection (usable from any thread; one caller at a time), or None when the atlas's table
        has no ``tokenize`` option or its tokenizer is unknown to this SQLite.
    """
    row = con.execute(f"SELECT sql FROM sqlite_master WHERE name = '{TABLE}'").fetchone()
    m = re.search(r"tokenize\s*=\s*('(?:[^']|'')*')", row[0] if row else "")
    if not m:
        return None
    try:
        tok = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        tok.execute(f"CREATE VIRTUAL TABLE tok USING fts5(x, tokenize = {m.group(1)})")
        tok.execute("CREATE VIRTUAL TABLE tok_v USING fts5vocab(tok, instance)")
    except sqlite3.Error:  # an unknown tokenizer
        return None
    return tok


def tokenize(tok: sqlite3.Connection, texts: list[str]) -> list[tuple[str, ...]]:
    """The FTS5 tokens of each text, as the atlas's table indexes them (``"Networks"`` → ``("network",)``).

    Args:
        tok: A :func:`make_tokenizer` connection (the caller keeps other threads off it meanwhile).
        texts: Strings (plain text, never query syntax).

    Returns:
        One tuple per text, its tokens in order (empty for a text without a token).
    """
    out: dict[int, list[tuple[int, str]]] = {}
    try:
        tok.executemany("INSERT INTO tok(rowid, x) VALUES (?, ?)", list(enumerate(texts, start=1)))
        for doc, term, offset in tok.execute("SELECT doc, term, offset FROM tok_v"):
            out.setdefault(doc, []).append((offset, term))
    finally:
        tok.execute("DELETE FROM tok")
    return [tuple(term for _, term in sorted(out.get(i + 1, []))) for i in range(len(texts))]
