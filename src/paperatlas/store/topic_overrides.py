"""The reader's topic edits: a topic's label, and the sub-topic a paper is filed under.

They are rows of the reader's ``overrides`` table (:mod:`.userdata`), which builds never write; every build
re-applies them after it has made the topics (:func:`apply_reader_edits`), and an edit shows at once in the live
atlas (:func:`rename_topic`, :func:`move_paper`):

* a rename: ``paper_id = "topic:<id>"`` (:func:`topic_key`), ``field = "label"``, ``value = {"label": the reader's
  label, "was": the label before the reader's first rename, "was_method": its provenance}``, ``title`` NULL (so
  it is never re-linked to a paper). Topic ids are kept across rebuilds (by construction when the topics are
  updated, by Hungarian matching when they are refitted), so a rename keyed by id survives them;
* a move: ``paper_id`` the paper's id, ``field = "topic"``, ``value = {"topic": the sub-topic's id, "was": the
  sub-topic before the reader's first move (or null)}``, ``title`` the paper's title (re-linked by title like the
  paper's other overrides);
* an overview: ``paper_id = "topic:<id>"``, ``field = "overview"`` (:mod:`.overviews`, where it is written).

The ``was`` values are what a reset (:func:`rename_topic` with ``label=None``, :func:`undo_move`) puts back: a
rebuild keeps a stored label or placement of an unchanged topic, so without them a reset would not be seen.
An edit whose topic no longer exists after a rebuild is kept, not applied, and named in the build's report.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import limits
from ..model import Paper, Topic
from .audit import read_table
from .connection import connect, write_transaction
from .overviews import _KEY_PREFIX, OVERVIEW_EDIT_METHOD, drop_moved_citations, read_overview_edits, topic_key
from .userdata import EDIT_METHOD, apply_overrides, get_overrides, relink_user_rows, timestamp

#: The ``field`` of a topic rename.
LABEL_FIELD = "label"
#: The ``field`` of a paper's move to another sub-topic.
TOPIC_FIELD = "topic"
#: The longest label a reader may give a topic, in characters (generated labels are 1-5 words).
MAX_TOPIC_LABEL_CHARS = 100


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _rename_value(v: object) -> dict[str, Any] | None:
    """A rename's stored value, or None when it is not of the rename's shape (then ignored)."""
    if isinstance(v, dict) and isinstance(v.get("label"), str) and v["label"].strip():
        return v
    return None


def _move_value(v: object) -> dict[str, Any] | None:
    """A move's stored value, or None when it is not of the move's shape (then ignored)."""
    if isinstance(v, dict) and _is_int(v.get("topic")) and (v.get("was") is None or _is_int(v["was"])):
        return v
    return None


def read_topic_edits(con: sqlite3.Connection) -> tuple[dict[int, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The reader's renames and moves.

    Args:
        con: An open connection to the atlas (read-only is fine).

    Returns:
        ``(renames, moves)``: ``topic id -> {"label", "was", "was_method"}`` and ``paper id -> {"topic", "was",
        "title"}``. Rows of another shape are left out (a build or an edit goes on without them).
    """
    renames: dict[int, dict[str, Any]] = {}
    moves: dict[str, dict[str, Any]] = {}
    rows = read_table(con, "overrides", ("paper_id", "field", "value", "title"), skip_damaged=True) or []
    for r in rows:
        key = r["paper_id"]
        if r["field"] == LABEL_FIELD and key.startswith(_KEY_PREFIX) and key[len(_KEY_PREFIX):].isdecimal():
            v = _rename_value(r["value"])
            if v is not None:
                renames[int(key[len(_KEY_PREFIX):])] = v
        elif r["field"] == TOPIC_FIELD:
            v = _move_value(r["value"])
            if v is not None:
                moves[key] = {**v, "title": r["title"] or key}
    return renames, moves


def _shift(topics: dict[int, Topic], topic_id: int | None, n: int) -> list[int]:
    """Add ``n`` papers to a sub-topic's size and its area's; the ids of the topics changed."""
    t = topics.get(topic_id) if topic_id is not None else None
    if t is None:
        return []
    changed = []
    for x in (t, topics.get(t.parent_id) if t.parent_id is not None else None):
        if x is not None:
            x.size = max(0, (x.size or 0) + n)
            changed.append(x.id)
    return changed


def file_under(p: Paper, topic_id: int, topics: dict[int, Topic]) -> list[int]:
    """File paper ``p`` under sub-topic ``topic_id`` in place, keeping the topics' sizes right.

    The paper's ``topic_id`` becomes ``topic_id``, that topic leaves its secondary topics, and it is no longer
    marked low-confidence (the reader placed it). ``Topic.size`` of the old and new sub-topic and of their areas
    (the same area: unchanged) move by one paper.

    Args:
        p: The paper.
        topic_id: The sub-topic's id (a key of ``topics``).
        topics: ``topic id -> Topic`` of the atlas, changed in place.

    Returns:
        The ids of the topics whose size changed (an id may appear twice).
    """
    changed: list[int] = []
    if p.topic_id != topic_id:
        changed = _shift(topics, p.topic_id, -1) + _shift(topics, topic_id, +1)
    p.topic_id = topic_id
    p.secondary_topic_ids = [s for s in p.secondary_topic_ids if s != topic_id]
    p.low_confidence = False
    return changed


def _missing(topic_id: int, topics: dict[int, Topic]) -> str | None:
    """Why ``topic_id`` cannot take a paper (it is gone, or an area), or None."""
    t = topics.get(topic_id)
    if t is None:
        return f"topic {topic_id} no longer exists"
    if t.level == 0:
        return f"topic {topic_id} is now an area"
    return None


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def apply_topic_edits(papers: Iterable[Paper], topics: list[Topic], renames: dict[int, dict[str, Any]],
                      moves: dict[str, dict[str, Any]],
                      overviews: dict[int, dict[str, Any]] | None = None) -> list[str]:
    """Put the reader's renames and moves on a build's papers and topics, in place.

    A rename sets the topic's label and its ``method`` to :data:`~paperatlas.store.userdata.EDIT_METHOD`; a move
    files the paper under its sub-topic (:func:`file_under`); an overview sets the topic's ``overview``,
    ``overview_papers`` and ``overview_method`` (:data:`~paperatlas.store.overviews.OVERVIEW_EDIT_METHOD`). An
    edit whose topic is gone (or is now an area) is not applied; a move of a paper not in ``papers`` is kept for a
    later build, silently (as TL;DR overrides are).

    Args:
        papers: The build's papers (their ``topic_id`` already set by the topic model).
        topics: The build's topics (areas and sub-topics).
        renames: As :func:`read_topic_edits` gives them.
        moves: As :func:`read_topic_edits` gives them.
        overviews: As :func:`~paperatlas.store.overviews.read_overview_edits` gives them (None: none).

    Returns:
        One line per kind of edit not applied, for the build's report, e.g. ``"1 topic rename not applied:
        topic 37 no longer exists"`` (empty when all were).
    """
    by_id = {t.id: t for t in topics}
    lost_renames = []
    for tid, v in sorted(renames.items()):
        t = by_id.get(tid)
        if t is None:
            lost_renames.append(f"topic {tid} no longer exists")
        else:
            t.label, t.method = v["label"], EDIT_METHOD
    lost_overviews = []
    for tid, v in sorted((overviews or {}).items()):
        t = by_id.get(tid)
        if t is None:
            lost_overviews.append(f"topic {tid} no longer exists")
        else:
            t.overview, t.overview_papers = v["overview"], list(v.get("papers") or [])
            t.overview_method = OVERVIEW_EDIT_METHOD
    lost_moves = []
    for p in papers:
        v = moves.get(p.id)
        if v is None:
            continue
        why = _missing(v["topic"], by_id)
        if why is None:
            file_under(p, v["topic"], by_id)
        else:
            lost_moves.append(f"{why} ({p.title})")
    out = []
    if lost_renames:
        out.append(f"{_count(len(lost_renames), 'topic rename')} not applied: {'; '.join(lost_renames)} "
                   "(kept; `paperatlas edit --topic ID --clear` drops one)")
    if lost_overviews:
        out.append(f"{_count(len(lost_overviews), 'topic overview')} not applied: {'; '.join(lost_overviews)} "
                   "(kept; `paperatlas edit --topic ID --clear` drops one)")
    if lost_moves:
        out.append(f"{_count(len(lost_moves), 'paper move')} not applied: {'; '.join(lost_moves)} "
                   "(kept; `paperatlas edit PAPER --clear` drops one)")
    return out


def apply_reader_edits(con: sqlite3.Connection, papers: list[Paper], topics: list[Topic], report: Any) -> None:
    """A build's last step before it writes: every override of the reader, on its papers and topics.

    Re-links the reader's rows to papers whose id changed (a corrected title,
    :func:`~paperatlas.store.userdata.relink_user_rows`), puts the TL;DR/keyphrase overrides on the papers
    (:func:`~paperatlas.store.userdata.apply_overrides`), then the topic renames, moves and overviews
    (:func:`apply_topic_edits`).

    Args:
        con: The build's writable copy of the atlas.
        papers: The build's papers, changed in place.
        topics: The build's topics, changed in place.
        report: The build's :class:`~paperatlas.build.BuildReport`: the edits not applied are set as its
            ``topic_edits_not_applied`` and added to its ``notes``.
    """
    relink_user_rows(con, [(p.id, p.title) for p in papers])
    apply_overrides(papers, get_overrides(con))
    report.topic_edits_not_applied = apply_topic_edits(papers, topics, *read_topic_edits(con),
                                                       read_overview_edits(con))
    report.notes.extend(report.topic_edits_not_applied)


# --- edits of the live atlas (one write transaction each) ---


def _topics(con: sqlite3.Connection) -> dict[int, Topic]:
    """``topic id -> Topic`` (id, label, size, parent, method, level) of the live atlas."""
    return {r["id"]: Topic(id=r["id"], label=r["label"], size=r["size"] or 0, parent_id=r["parent_id"],
                           method=r["method"] or "", level=1 if r["level"] is None else r["level"])
            for r in con.execute("SELECT id, label, size, parent_id, method, level FROM topics")}


def _stored(con: sqlite3.Connection, key: str, field: str) -> object:
    row = con.execute("SELECT value FROM overrides WHERE paper_id = ? AND field = ?", (key, field)).fetchone()
    if row is None:
        return None
    try:
        return json.loads(row[0])
    except (TypeError, ValueError):
        return None


def stored_move(db: str | Path, paper_id: str) -> dict[str, Any] | None:
    """The reader's move of a paper as the live atlas holds it.

    Args:
        db: The atlas file (opened read-only).
        paper_id: The paper's id.

    Returns:
        ``{"topic": its sub-topic, "was": the one before (or None)}``, or None when the reader did not move it.

    Raises:
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    con = connect(db, readonly=True)
    try:
        return _move_value(_stored(con, paper_id, TOPIC_FIELD))
    except sqlite3.OperationalError:  # an atlas made before overrides
        return None
    finally:
        con.close()


def _put(con: sqlite3.Connection, key: str, field: str, value: dict, title: str | None) -> None:
    con.execute("INSERT OR REPLACE INTO overrides (paper_id, field, value, title, edited_at) VALUES (?, ?, ?, ?, ?)",
                (key, field, json.dumps(value, ensure_ascii=False), title, timestamp()))


def check_topic_label(label: str, topic_id: int | None = None) -> str:
    """A topic label as the reader typed it, checked: whitespace collapsed, not blank, not over the limit.

    Args:
        label: The label.
        topic_id: The topic's id, for the message.

    Returns:
        The label, whitespace collapsed.

    Raises:
        ValueError: It is blank.
        paperatlas.limits.LimitExceeded: It is longer than :data:`MAX_TOPIC_LABEL_CHARS` characters (a
            ValueError).
    """
    label = " ".join(str(label).split())
    if not label:
        raise ValueError("the topic label is empty")
    return limits.check_text(label, "topic label", MAX_TOPIC_LABEL_CHARS,
                             None if topic_id is None else f"topic {topic_id}")


def rename_topic(db: str | Path, topic_id: int, label: str | None) -> Topic | None:
    """Record the reader's label for a topic (an area or a sub-topic) and show it at once; None resets it.

    One transaction on the live atlas: the rename's ``overrides`` row and the topic's ``topics`` row. A reset
    drops the row and puts back the label (and provenance) the topic had before the reader's first rename; it
    also drops the kept rename of a topic a rebuild no longer has.

    Args:
        db: The atlas file.
        topic_id: The topic's id (as ``paperatlas topics`` lists them).
        label: The new label (see :func:`check_topic_label`), or None to reset.

    Returns:
        The topic as now stored (``method`` :data:`~paperatlas.store.userdata.EDIT_METHOD` when renamed); None
        when a reset dropped the rename of a topic the atlas no longer has.

    Raises:
        LookupError: The atlas has no topic ``topic_id`` (the message says how to list them), and (a reset) no
            rename of it either.
        ValueError: The label is blank, or another topic already has it (case-insensitively).
        paperatlas.limits.LimitExceeded: The label is over :data:`MAX_TOPIC_LABEL_CHARS` (a ValueError).
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    if label is not None:
        label = check_topic_label(label, topic_id)
    with write_transaction(db) as con:
        topics = _topics(con)
        t = topics.get(topic_id)
        key = topic_key(topic_id)
        if t is None and label is None and con.execute("DELETE FROM overrides WHERE paper_id = ? AND field = ?",
                                                       (key, LABEL_FIELD)).rowcount:
            return None
        if t is None:
            raise LookupError(f"no topic {topic_id} in this atlas (`paperatlas topics` lists the topic ids)")
        old = _rename_value(_stored(con, key, LABEL_FIELD))
        if label is None:
            con.execute("DELETE FROM overrides WHERE paper_id = ? AND field = ?", (key, LABEL_FIELD))
            if old is not None and isinstance(old.get("was"), str) and old["was"].strip():
                t.label, t.method = old["was"], str(old.get("was_method") or "")
        else:
            twin = next((o for o in topics.values() if o.id != topic_id and o.label.casefold() == label.casefold()),
                        None)
            if twin is not None:
                raise ValueError(f"topic {twin.id} is already called {twin.label!r}; choose another label")
            was = old if old is not None else {"was": t.label, "was_method": t.method}
            _put(con, key, LABEL_FIELD, {"label": label, "was": was.get("was"), "was_method": was.get("was_method")},
                 None)
            t.label, t.method = label, EDIT_METHOD
        con.execute("UPDATE topics SET label = ?, method = ? WHERE id = ?", (t.label, t.method, topic_id))
    return t


def _sub_topic_or_fail(topic_id: int, topics: dict[int, Topic]) -> Topic:
    """The sub-topic ``topic_id``, or a LookupError/ValueError saying what to give instead."""
    t = topics.get(topic_id)
    if t is None:
        raise LookupError(f"no topic {topic_id} in this atlas (`paperatlas topics` lists the topic ids)")
    if t.level == 0:
        subs = sorted((s for s in topics.values() if s.parent_id == topic_id), key=lambda s: (-s.size, s.id))
        which = "; ".join(f"{s.id} {s.label!r}" for s in subs[:12]) + ("; ..." if len(subs) > 12 else "")
        raise ValueError(f"topic {topic_id} ({t.label!r}) is an area; a paper is filed under one of its sub-topics"
                         + (f": {which}" if which else ""))
    return t


def _write_placement(con: sqlite3.Connection, p: Paper, topics: dict[int, Topic], changed: list[int]) -> None:
    con.execute("UPDATE papers SET topic_id = ?, secondary_topic_ids = ?, low_confidence = ? WHERE id = ?",
                (p.topic_id, json.dumps(p.secondary_topic_ids), int(p.low_confidence), p.id))
    con.executemany("UPDATE topics SET size = ? WHERE id = ?", [(topics[t].size, t) for t in set(changed)])
    drop_moved_citations(con, p.id)  # the overviews of the topics it left cite only their own papers


def _paper(con: sqlite3.Connection, paper_id: str) -> Paper:
    from .sqlite import row_to_paper  # sqlite imports userdata, which imports this module

    cur = con.cursor()
    cur.row_factory = sqlite3.Row
    row = cur.execute("SELECT * FROM papers WHERE id = ?", (paper_id,)).fetchone()
    if row is None:
        raise LookupError(f"no paper with id {paper_id!r} in this atlas")
    return row_to_paper(row)


def undo_move(con: sqlite3.Connection, paper_id: str) -> bool:
    """Drop the reader's move of a paper and put it back under the sub-topic it had before.

    Runs inside the caller's transaction (nothing committed here).

    Args:
        con: A writable connection to the atlas, inside a transaction.
        paper_id: The paper's id.

    Returns:
        True when the paper is back under its earlier sub-topic; False when it had no move, the paper is not in
        the atlas, it is not under the move's sub-topic (a build could not apply the move), or the earlier
        sub-topic no longer exists (it then stays where it is until the topics are refitted:
        ``paperatlas build --refit-topics``).
    """
    old = _move_value(_stored(con, paper_id, TOPIC_FIELD))
    con.execute("DELETE FROM overrides WHERE paper_id = ? AND field = ?", (paper_id, TOPIC_FIELD))
    if old is None or old.get("was") is None:
        return False
    topics = _topics(con)
    try:
        p = _paper(con, paper_id)
    except LookupError:
        return False
    if p.topic_id != old["topic"] or _missing(old["was"], topics) is not None:  # not in effect, or nowhere to go
        return False
    _write_placement(con, p, topics, file_under(p, old["was"], topics))
    return True


def move_paper(db: str | Path, paper_id: str, topic_id: int | None) -> tuple[Paper, bool]:
    """File a paper under another sub-topic and show it at once; None undoes the reader's move.

    One transaction on the live atlas: the move's ``overrides`` row, the paper's ``topic_id``, secondary topics
    and low-confidence mark, and the sizes of the topics it leaves and joins (:func:`file_under`).

    Args:
        db: The atlas file.
        paper_id: The paper's id.
        topic_id: The sub-topic's id (an area is refused), or None to undo the move (:func:`undo_move`).

    Returns:
        ``(paper as now stored, placed)``: ``placed`` is True when the paper was moved, or put back by an undo.

    Raises:
        LookupError: The atlas has no paper ``paper_id`` or no topic ``topic_id`` (the message says how to list
            the topics).
        ValueError: ``topic_id`` is an area (the message names its sub-topics).
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    with write_transaction(db) as con:
        p = _paper(con, paper_id)
        if topic_id is None:
            placed = undo_move(con, paper_id)
            return (_paper(con, paper_id) if placed else p), placed
        topics = _topics(con)
        _sub_topic_or_fail(topic_id, topics)
        old = _move_value(_stored(con, paper_id, TOPIC_FIELD))
        was = old.get("was") if old is not None else p.topic_id
        _put(con, paper_id, TOPIC_FIELD, {"topic": topic_id, "was": was}, p.title)
        _write_placement(con, p, topics, file_under(p, topic_id, topics))
    return p, True
