"""The reader's edits: TL;DR and keyphrase overrides that win over every later rebuild.

Overrides live in the atlas file's ``overrides`` table (one row per paper and field, with the paper's title and
the time of the edit), which builds never write: a rebuild carries it over and re-applies it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from .model import Paper
from .store import sqlite as store


def parse_keyphrases(text: str) -> list[str]:
    """``"a; b ;c"`` → ``["a", "b", "c"]`` (``;``-separated, blanks and case-insensitive repeats dropped)."""
    out: list[str] = []
    for k in text.split(";"):
        k = " ".join(k.split())
        if k and k.lower() not in {x.lower() for x in out}:
            out.append(k)
    return out


def show_overrides(con: sqlite3.Connection, row: sqlite3.Row, overrides: dict[str, dict[str, object]]) -> Paper:
    """Put the reader's ``overrides`` of the paper in ``row`` (a ``papers`` row) on its stored row and search index
    at once, without a rebuild; returns the paper as now stored. Runs inside the caller's transaction."""
    paper = store._row_to_paper(row)
    store.apply_overrides([paper], overrides)
    con.execute("UPDATE papers SET tldr = ?, tldr_method = ?, keyphrases = ?, keyphrases_method = ? WHERE id = ?",
                (paper.tldr, paper.tldr_method, json.dumps(paper.keyphrases, ensure_ascii=False),
                 paper.keyphrases_method, paper.id))
    con.execute("UPDATE papers_fts SET keyphrases = ?, tldr = ? WHERE paper_id = ?",
                ("; ".join(paper.keyphrases + paper.given_keyphrases), paper.tldr, paper.id))
    return paper


def edit_paper(db: str | Path, paper_id: str, tldr: str | None = None, keyphrases: list[str] | None = None,
               clear: bool = False) -> Paper:
    """Record the reader's TL;DR and/or keyphrases for ``paper_id`` and show them at once (papers row and search
    index updated in one transaction). ``clear=True`` removes the paper's overrides instead; the generated values
    come back at the next build.

    Raises ``LookupError`` when the atlas has no such paper, ``ValueError`` for an empty TL;DR or keyphrase list,
    :class:`paperatlas.store.AtlasNotFound` when the file is missing.
    """
    path = Path(db)
    if not path.is_file():
        raise store.AtlasNotFound(f"{path}: no atlas here; build one with `paperatlas build LISTING --db {path}`")
    if tldr is not None and not tldr.strip():
        raise ValueError("the TL;DR is empty")
    if keyphrases is not None and not keyphrases:
        raise ValueError("no keyphrases given (separate them with ';')")
    con = sqlite3.connect(path, timeout=30)
    con.row_factory = sqlite3.Row
    try:
        con.executescript(store.SCHEMA)
        with con:  # one transaction: all of it or nothing
            row = con.execute("SELECT * FROM papers WHERE id = ?", (paper_id,)).fetchone()
            if row is None:
                raise LookupError(f"no paper with id {paper_id!r} in {path}")
            now = time.strftime("%Y-%m-%dT%H:%M:%S")
            if clear:
                con.execute("DELETE FROM overrides WHERE paper_id = ?", (paper_id,))
            for field, value in (("tldr", None if tldr is None else " ".join(tldr.split())),
                                 ("keyphrases", keyphrases)):
                if value is None:
                    continue
                con.execute("INSERT OR REPLACE INTO overrides (paper_id, field, value, title, edited_at) "
                            "VALUES (?, ?, ?, ?, ?)",
                            (paper_id, field, json.dumps(value, ensure_ascii=False), row["title"], now))
            paper = show_overrides(con, row, store.get_overrides(con))
        return paper
    finally:
        con.close()
