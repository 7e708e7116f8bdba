"""What the last build generated per paper (TL;DRs, keyphrases, label terms), for a rebuild to keep.

A rebuild that adds a thousand papers to forty thousand should not re-score the forty thousand: their TL;DRs and
keyphrases are read here (:func:`previous_enrichment`) and kept when the text they were made from is unchanged
(:func:`paperatlas.build.build` decides). The label terms live in the ``paper_terms`` table (migration 3).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass


@dataclass
class PreviousEnrichment:
    """What the last build generated for one paper, to be reused when its text has not changed.

    Attributes:
        text_hash: hash of the text its keyphrases and TL;DR were made from (title + abstract or digest).
        tldr: its TL;DR, made by ``tldr_method``.
        tldr_method: e.g. ``"extractive v2"`` (``"edited by reader"`` for an override).
        keyphrases: its keyphrases, made by ``keyphrases_method``.
        keyphrases_method: e.g. ``"phrase-logreg v2"``.
        label_terms: its label terms (``[]`` when the atlas has none stored).
        terms_method: the keyphrase method of ``label_terms``.
    """

    text_hash: str
    tldr: str
    tldr_method: str
    keyphrases: list[str]
    keyphrases_method: str
    label_terms: list[str]
    terms_method: str


def previous_enrichment(con: sqlite3.Connection) -> dict[str, PreviousEnrichment]:
    """TL;DRs, keyphrases and label terms the atlas holds, before this build rewrites them.

    Args:
        con: A connection to the atlas (a build's copy, before :func:`write_papers`).

    Returns:
        ``paper_id -> PreviousEnrichment`` (empty for a new atlas). A row whose JSON cannot be read is left out.
    """
    try:
        rows = con.execute("SELECT p.id, t.text_hash, p.tldr, p.tldr_method, p.keyphrases, p.keyphrases_method, "
                           "t.method, t.terms FROM papers p LEFT JOIN paper_terms t ON t.paper_id = p.id").fetchall()
    except sqlite3.OperationalError:
        return {}
    out = {}
    for r in rows:
        try:
            kps = json.loads(r[4] or "[]")
            terms = json.loads(r[7] or "[]")
        except ValueError:
            continue
        out[r[0]] = PreviousEnrichment(str(r[1] or ""), str(r[2] or ""), str(r[3] or ""), [str(k) for k in kps],
                                       str(r[5] or ""), [str(t) for t in terms], str(r[6] or ""))
    return out


def write_label_terms(con: sqlite3.Connection, rows: list[tuple[str, str, str, list[str]]]) -> None:
    """Replace the stored label terms.

    Args:
        con: A writable connection (a build's copy).
        rows: ``(paper_id, text hash, keyphrase method, label terms)`` per paper.
    """
    con.execute("DELETE FROM paper_terms")
    con.executemany("INSERT INTO paper_terms VALUES (?, ?, ?, ?)",
                    [(pid, h, m, json.dumps(t, ensure_ascii=False)) for pid, h, m, t in rows])
