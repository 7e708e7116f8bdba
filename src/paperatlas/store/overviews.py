"""The topics' stored overviews (migration 5): reading their cells, and what the last build stored for the next one.

The four columns (``overview``, ``overview_papers``, ``overview_method``, ``overview_key``) are written with the
topics by :func:`paperatlas.store.sqlite.write_topics` and read into :class:`paperatlas.model.Topic` by its reader;
an atlas made before migration 5 lacks them and reads with empty overviews.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Mapping

from ..enrich.overview import StoredOverview
from .cells import _STRINGS, Bad, opt_text
from .check import CellError, Damage, row_name

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
