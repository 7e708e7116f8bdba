"""The topics' overviews in the atlas: their cells (migration 5), what the last build stored, the reader's own.

The four columns (``overview``, ``overview_papers``, ``overview_method``, ``overview_key``) are written with the
topics by :func:`paperatlas.store.sqlite.write_topics` and read into :class:`paperatlas.model.Topic` by its reader;
an atlas made before migration 5 lacks them and reads with empty overviews.

A reader's overview (:func:`set_topic_overview`, ``paperatlas edit --topic ID --overview TEXT``, the topic page's
form) is a row of the reader's ``overrides`` table, which builds never write, re-applied by every build
(:func:`paperatlas.store.topic_overrides.apply_reader_edits`): ``paper_id = "topic:<id>"`` (:func:`topic_key`),
``field = "overview"``, ``value = {"overview": the reader's text, "papers": the paper ids its ``[n]`` point at,
"was": the overview before the reader's first edit, "was_papers", "was_method"}``, ``title`` NULL. The reader's
text keeps the cited papers of the overview it replaces when every ``[n]`` in it is one of theirs (the reader
edited the computed sentences, :func:`reader_citations`); otherwise it cites nothing (``papers`` empty; a ``[n]``
in it is then plain text). Its ``overview_method`` is ``"edit"`` (:data:`OVERVIEW_EDIT_METHOD`); a build never
computes over it, and dropping it puts the ``was`` overview back at once (the next build computes one anew when
the topic changed).
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import limits
from ..enrich.overview import EDIT_METHOD as OVERVIEW_EDIT_METHOD
from ..enrich.overview import StoredOverview, without_paper
from ..model import Topic
from .audit import read_table
from .cells import _STRINGS, Bad, opt_text
from .check import CellError, Damage, row_name, validate_row
from .connection import write_transaction
from .userdata import timestamp

#: The ``field`` of a reader's topic overview in ``overrides``.
OVERVIEW_FIELD = "overview"
#: The longest overview a reader may give a topic, in characters (a computed one is 2-4 sentences).
MAX_TOPIC_OVERVIEW_CHARS = 2_000
_KEY_PREFIX = "topic:"
_CITE = re.compile(r"\[(\d{1,4})\]")

#: The overview columns of ``topics`` and the validator of each (:mod:`.cells`).
OVERVIEW_COLUMNS = {"overview": opt_text, "overview_papers": _STRINGS, "overview_method": opt_text,
                    "overview_key": opt_text}


def overview_cells(row: sqlite3.Row | Mapping) -> dict[str, object]:
    """The overview cells of a ``topics`` row, checked.

    Args:
        row: A ``topics`` row (``sqlite3.Row``; columns it lacks read as None).

    Returns:
        ``column -> value`` for the four :data:`OVERVIEW_COLUMNS`: text or None, and ``overview_papers`` a list of
        paper ids (``[]`` for NULL).

    Raises:
        paperatlas.store.check.CellError: A cell holds a value of the wrong type (a number in ``overview``, a
            ``overview_papers`` that is not a JSON list of strings); the message names the column and topic.
    """
    have = set(row.keys())
    out: dict[str, object] = {}
    for col, check in OVERVIEW_COLUMNS.items():
        try:
            out[col] = check(row[col] if col in have else None)
        except Bad as e:
            raise CellError(Damage("topics", col, row_name("topics", row), str(e))) from None
    return out


def previous_overviews(con: sqlite3.Connection) -> dict[int, StoredOverview]:
    """The overviews the atlas held before this build rewrites the topics.

    Args:
        con: A connection to the atlas (a build's copy, before :func:`paperatlas.store.sqlite.write_topics`).

    Returns:
        ``topic id -> StoredOverview`` of the topics that have a stored overview (empty for a new atlas or one
        made before migration 5). A row whose cells cannot be decoded is left out (its overview is made again).
    """
    cur = con.cursor()
    cur.row_factory = sqlite3.Row
    try:
        rows = cur.execute("SELECT id, overview, overview_papers, overview_method, overview_key FROM topics "
                           "WHERE overview IS NOT NULL").fetchall()
    except sqlite3.OperationalError:  # no topics table, or no overview columns yet
        return {}
    out: dict[int, StoredOverview] = {}
    for r in rows:
        with contextlib.suppress(CellError):
            c = overview_cells(r)
            if isinstance(r["id"], int):
                out[r["id"]] = StoredOverview(c["overview_key"] or "", c["overview"] or "", list(c["overview_papers"]),
                                              c["overview_method"] or "")
    return out


def topic_key(topic_id: int) -> str:
    """The ``overrides.paper_id`` of topic ``topic_id``'s rename and overview, e.g. ``"topic:37"``."""
    return f"{_KEY_PREFIX}{int(topic_id)}"


def _overview_value(v: object) -> dict[str, Any] | None:
    """An overview edit's stored value, or None when it is not of its shape (then ignored)."""
    if isinstance(v, dict) and isinstance(v.get("overview"), str) and v["overview"].strip() \
            and isinstance(v.get("papers", []), list) and all(isinstance(x, str) for x in v.get("papers", [])):
        return v
    return None


def read_overview_edits(con: sqlite3.Connection) -> dict[int, dict[str, Any]]:
    """The reader's topic overviews.

    Args:
        con: An open connection to the atlas (read-only is fine).

    Returns:
        ``topic id -> {"overview", "papers", "was", "was_papers", "was_method"}`` (rows of another shape left out).
    """
    out: dict[int, dict[str, Any]] = {}
    for r in read_table(con, "overrides", ("paper_id", "field", "value"), skip_damaged=True) or []:
        key = r["paper_id"]
        if r["field"] == OVERVIEW_FIELD and key.startswith(_KEY_PREFIX) and key[len(_KEY_PREFIX):].isdecimal():
            v = _overview_value(r["value"])
            if v is not None:
                out[int(key[len(_KEY_PREFIX):])] = v
    return out


def check_topic_overview(text: str, topic_id: int | None = None) -> str:
    """A topic overview as the reader typed it, checked: whitespace collapsed, not blank, not over the limit.

    Args:
        text: The overview.
        topic_id: The topic's id, for the message.

    Returns:
        The text on one line.

    Raises:
        ValueError: It is blank.
        paperatlas.limits.LimitExceeded: It is longer than :data:`MAX_TOPIC_OVERVIEW_CHARS` characters (a
            ValueError).
    """
    text = " ".join(str(text).split())
    if not text:
        raise ValueError("the topic overview is empty")
    return limits.check_text(text, "topic overview", MAX_TOPIC_OVERVIEW_CHARS,
                             None if topic_id is None else f"topic {topic_id}")


def reader_citations(text: str, cited: list[str]) -> list[str]:
    """The papers a reader's overview cites: ``cited`` when it has a ``[n]`` and every one is in 1..len(cited).

    Args:
        text: The reader's overview.
        cited: The paper ids of the overview it replaces (``[n]`` is ``cited[n - 1]``).

    Returns:
        ``cited`` (a copy), or ``[]`` when the text cites nothing or a number none of them has.
    """
    ns = [int(m.group(1)) for m in _CITE.finditer(text)]
    return list(cited) if ns and cited and all(1 <= n <= len(cited) for n in ns) else []


def set_topic_overview(db: str | Path, topic_id: int, text: str | None) -> Topic | None:
    """Record the reader's overview of a topic (an area or a sub-topic) and show it at once; None drops it.

    One transaction on the live atlas: the edit's ``overrides`` row and the topic's overview columns. Dropping it
    puts back the overview (text, cited papers, method) the topic had before the reader's first edit; it also
    drops the kept overview of a topic a rebuild no longer has. A build never replaces a reader's overview.

    Args:
        db: The atlas file.
        topic_id: The topic's id (as ``paperatlas topics`` lists them).
        text: The reader's overview (see :func:`check_topic_overview`; its ``[n]`` keep pointing at the replaced
            overview's papers when all are in range, :func:`reader_citations`), or None to drop it.

    Returns:
        The topic as now stored (``overview_method`` :data:`OVERVIEW_EDIT_METHOD` when set); None when dropping
        removed the overview of a topic the atlas no longer has.

    Raises:
        LookupError: The atlas has no topic ``topic_id`` (and, dropping, no overview of it either).
        ValueError: The text is blank.
        paperatlas.limits.LimitExceeded: The text is over :data:`MAX_TOPIC_OVERVIEW_CHARS` (a ValueError).
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    if text is not None:
        text = check_topic_overview(text, topic_id)
    with write_transaction(db) as con:
        key = topic_key(topic_id)
        cur = con.cursor()
        cur.row_factory = sqlite3.Row
        row = cur.execute("SELECT * FROM topics WHERE id = ?", (topic_id,)).fetchone()
        if row is None and text is None and con.execute("DELETE FROM overrides WHERE paper_id = ? AND field = ?",
                                                        (key, OVERVIEW_FIELD)).rowcount:
            return None
        if row is None:
            raise LookupError(f"no topic {topic_id} in this atlas (`paperatlas topics` lists the topic ids)")
        v = dict(validate_row("topics", row, ["id", "label", "size", "parent_id", "method", "level"]))
        c = overview_cells(row)
        t = Topic(id=v["id"], label=v["label"], size=v["size"] or 0, parent_id=v["parent_id"],
                  method=v["method"] or "", level=1 if v["level"] is None else v["level"],
                  overview=c["overview"] or "", overview_papers=list(c["overview_papers"]),  # type: ignore[arg-type]
                  overview_method=c["overview_method"] or "")
        stored = cur.execute("SELECT value FROM overrides WHERE paper_id = ? AND field = ?",
                             (key, OVERVIEW_FIELD)).fetchone()
        try:
            old = _overview_value(json.loads(stored[0])) if stored is not None else None
        except (TypeError, ValueError):
            old = None
        if text is None:
            con.execute("DELETE FROM overrides WHERE paper_id = ? AND field = ?", (key, OVERVIEW_FIELD))
            if old is not None:
                was_papers = old.get("was_papers")
                t.overview = str(old.get("was") or "")
                t.overview_papers = [str(x) for x in was_papers] if isinstance(was_papers, list) else []
                t.overview_method = str(old.get("was_method") or "")
        else:
            was = old if old is not None else {"was": t.overview, "was_papers": t.overview_papers,
                                               "was_method": t.overview_method}
            was_papers = [str(x) for x in was.get("was_papers") or []]
            papers = reader_citations(text, was_papers)
            value = {"overview": text, "papers": papers, "was": was.get("was") or "", "was_papers": was_papers,
                     "was_method": was.get("was_method") or ""}
            con.execute("INSERT OR REPLACE INTO overrides (paper_id, field, value, title, edited_at) "
                        "VALUES (?, ?, ?, NULL, ?)", (key, OVERVIEW_FIELD, json.dumps(value, ensure_ascii=False),
                                                      timestamp()))
            t.overview, t.overview_papers, t.overview_method = text, papers, OVERVIEW_EDIT_METHOD
        con.execute("UPDATE topics SET overview = ?, overview_papers = ?, overview_method = ? WHERE id = ?",
                    (t.overview or None, json.dumps(t.overview_papers) if t.overview_papers else None,
                     t.overview_method or None, topic_id))
    return t


def drop_moved_citations(con: sqlite3.Connection, paper_id: str) -> list[int]:
    """After the reader moved a paper: the computed overviews citing it of topics it is no longer in lose its sentences.

    Runs inside the caller's transaction. The overviews changed get no key (``overview_key`` NULL), so the next
    build makes them anew; a reader's own overview is left as it is.

    Args:
        con: A writable connection to the live atlas, inside a transaction.
        paper_id: The moved paper's id (its ``papers.topic_id`` already its new sub-topic).

    Returns:
        The ids of the topics whose overview changed.
    """
    row = con.execute("SELECT topic_id FROM papers WHERE id = ?", (paper_id,)).fetchone()
    now = row[0] if row is not None else None
    parent = con.execute("SELECT parent_id FROM topics WHERE id = ?", (now,)).fetchone() if now is not None else None
    inside = {now, parent[0] if parent is not None else None}
    cur = con.cursor()
    cur.row_factory = sqlite3.Row
    changed = []
    for r in cur.execute("SELECT * FROM topics WHERE overview_papers LIKE ? AND COALESCE(overview_method, '') != ?",
                         (f"%{json.dumps(paper_id)}%", OVERVIEW_EDIT_METHOD)).fetchall():
        if r["id"] in inside:
            continue
        try:
            c = overview_cells(r)
        except CellError:
            continue
        text, cited = without_paper(c["overview"] or "", list(c["overview_papers"]), paper_id)  # type: ignore
        if cited != c["overview_papers"]:
            con.execute("UPDATE topics SET overview = ?, overview_papers = ?, overview_key = NULL WHERE id = ?",
                        (text or None, json.dumps(cited) if cited else None, r["id"]))
            changed.append(r["id"])
    return changed
