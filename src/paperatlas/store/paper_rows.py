"""The papers table and its FTS5 index as a build writes them, and the stored text of papers a rebuild takes out.

Split from :mod:`paperatlas.store.sqlite` (which re-exports both functions): the column lists here are the ones
:func:`paperatlas.store.sqlite.row_to_paper` reads back.
"""

from __future__ import annotations

import json
import sqlite3

from ..model import Link, Paper, SourceRef
from . import fts

_JSON_FIELDS = ("authors", "links", "sources", "given_keyphrases", "sections", "affiliations", "extra", "keyphrases",
                "secondary_topic_ids")
_SCALAR_FIELDS = ("id", "title", "abstract", "venue", "year", "status", "track", "digest", "tldr", "tldr_method",
                  "keyphrases_method", "topic_id", "topic_confidence", "low_confidence", "x", "y")
_PAPER_COLS = _SCALAR_FIELDS + _JSON_FIELDS
_FLAT = {cls: tuple(cls.__dataclass_fields__) for cls in (Link, SourceRef)}
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(v, ensure_ascii=False), one encoder for all


def _json(value: object) -> str:
    """A JSON column's text: ``json.dumps(value, ensure_ascii=False)`` of :meth:`Paper.to_dict`'s value."""
    if isinstance(value, list) and value and type(value[0]) in _FLAT:
        value = [{f: getattr(x, f) for f in _FLAT[type(x)]} for x in value]
    return _ENCODE(value)


def paper_row(p: Paper, content_hash: str) -> tuple:
    """The ``papers`` row of ``p``: the values of :data:`_PAPER_COLS` (JSON fields as text), then ``content_hash``.

    What ``[to_dict()[k] for k in _SCALAR_FIELDS] + [json.dumps(to_dict()[k]) ...]`` gives, without copying the
    paper first (half of a 42k rebuild's write).
    """
    return tuple([getattr(p, k) for k in _SCALAR_FIELDS] + [_json(getattr(p, k)) for k in _JSON_FIELDS]
                 + [content_hash])


def write_papers(con: sqlite3.Connection, papers: list[Paper], content_hashes: dict[str, str]) -> None:
    """Make the atlas's papers and FTS index exactly ``papers`` (all fields, generated ones included).

    When the atlas already holds papers in the same order (the kept ones first, in their stored order, new ones
    after them: a rebuild that adds a listing), only the rows that differ are written, so adding 1,000 papers to
    42,000 rewrites neither the table nor the FTS index; otherwise both are replaced. Either way the atlas reads
    back the same.

    Args:
        con: A writable connection (a build's copy, see :func:`atomic_rebuild`).
        papers: The papers, in the order they are stored.
        content_hashes: ``paper_id -> hash`` of the text that was embedded (missing ids store ``""``).
    """
    cols = list(_PAPER_COLS) + ["content_hash"]
    rows = [paper_row(p, content_hashes.get(p.id, "")) for p in papers]
    fts_rows = [fts.paper_row(p) for p in papers]
    insert = f"INSERT INTO papers ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
    old = {r[0]: tuple(r) for r in con.execute(f"SELECT {', '.join(cols)} FROM papers ORDER BY rowid")}
    new_ids = {p.id for p in papers}
    kept = [pid for pid in old if pid in new_ids]
    if not old or [p.id for p in papers[:len(kept)]] != kept:  # a new atlas, or another order: write it all
        con.execute("DELETE FROM papers")
        con.executemany(insert, rows)
        fts.replace_all(con, fts_rows)
        return
    fts_rowid, fts_old = {}, {}
    for r in fts.stored_rows(con):
        fts_rowid[r[1]], fts_old[r[1]] = r[0], tuple(r[1:])
    gone = [pid for pid in old if pid not in new_ids]
    con.executemany("DELETE FROM papers WHERE id = ?", [(pid,) for pid in gone])
    fts.delete_rowids(con, [fts_rowid[pid] for pid in gone if pid in fts_rowid])
    update = f"UPDATE papers SET {', '.join(f'{c} = ?' for c in cols[1:])} WHERE id = ?"
    changed, changed_fts, fresh = [], [], []
    for row, f in zip(rows, fts_rows, strict=True):
        before = old.get(row[0])
        if before is None:
            fresh.append((row, f))
            continue
        if before != row:
            changed.append(row[1:] + row[:1])
        if fts_old.get(row[0]) != f:
            changed_fts.append(f)
    con.executemany(update, changed)
    fts.delete_rowids(con, [fts_rowid[f[0]] for f in changed_fts if f[0] in fts_rowid])
    fts.insert_rows(con, changed_fts)
    con.executemany(insert, [r for r, _ in fresh])
    fts.insert_rows(con, [f for _, f in fresh])


def paper_texts(con: sqlite3.Connection, ids: list[str]) -> dict[str, tuple[str, str]]:
    """The stored title and text (abstract, else digest) of the papers ``ids`` that the atlas holds.

    Args:
        con: A connection to the atlas (a build's copy, before :func:`write_papers`).
        ids: Paper ids.

    Returns:
        ``paper_id -> (title, abstract or digest)``; ids the atlas lacks are left out, and so are damaged rows
        (a value that is not text): the build treats those papers as changed.
    """
    out = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        for r in con.execute(f"SELECT id, title, abstract, digest FROM papers WHERE id IN ({marks})", chunk):
            if all(v is None or type(v) is str for v in r) and r[1] is not None:
                out[r[0]] = (r[1], r[2] or r[3] or "")
    return out
