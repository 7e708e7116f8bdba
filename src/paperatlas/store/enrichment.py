"""What the last build generated per paper (TL;DRs, keyphrases, label terms), for a rebuild to keep.

A rebuild that adds a thousand papers to forty thousand should not re-score the forty thousand: their TL;DRs and
keyphrases are read here (:func:`previous_enrichment`) and kept when the text they were made from is unchanged
(:func:`paperatlas.build.build` decides). The label terms live in the ``paper_terms`` table (migration 3).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from ..enrich import keyphrase_stats
from ..enrich.topics import TopicModel
from .check import Bad, decode_json
from .sqlite import previous_placement, previous_topics, read_model


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
        ``paper_id -> PreviousEnrichment`` (empty for a new atlas). A damaged row (JSON that cannot be read or is
        nested too deep, a value of the wrong type) is left out: the build makes that paper's afresh.
    """
    try:
        rows = con.execute("SELECT p.id, t.text_hash, p.tldr, p.tldr_method, p.keyphrases, p.keyphrases_method, "
                           "t.method, t.terms FROM papers p LEFT JOIN paper_terms t ON t.paper_id = p.id").fetchall()
    except sqlite3.OperationalError:
        return {}
    out = {}
    for r in rows:
        if not all(v is None or type(v) is str for v in r):
            continue
        try:
            kps = decode_json(r[4] or "[]")
            terms = decode_json(r[7] or "[]")
        except Bad:
            continue
        if not isinstance(kps, list) or not isinstance(terms, list):
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


@dataclass
class PreviousBuild:
    """What a build's stages after the per-paper work need and can have before its vectors are in.

    Attributes:
        topic_model: the last build's topic model (None: there is none, or it is not usable with ``model_name``).
        placement: paper id -> (topic id, x, y, same embedded text as now).
        topics: the last build's topics by id.
        keyphrase_stats: the keyphrase statistics to store (:func:`paperatlas.enrich.keyphrase_stats.dumps`).
    """

    topic_model: TopicModel | None
    placement: dict[str, tuple[int | None, float | None, float | None, bool]]
    topics: dict
    keyphrase_stats: bytes


def previous_build(con: sqlite3.Connection, kx, papers: list, text_hashes: list[str], label_terms: list[list[str]],
                   hashes_by_id: dict[str, str], model_name: str) -> PreviousBuild:
    """Read the last build's topics and placement, store the label terms, serialise the keyphrase statistics.

    None of it needs the vectors, so a build whose embedding runs in a child process does it while the child is
    still embedding (when the engine yields a result marked ``waiting``); otherwise right after the per-paper work.

    Args:
        con: the build's connection (its copy of the atlas).
        kx: the fitted :class:`paperatlas.enrich.keyphrases.KeyphraseExtractor`.
        papers: the build's papers.
        text_hashes: per paper, the hash of the text its keyphrases were made from.
        label_terms: per paper, its label terms.
        hashes_by_id: paper id -> hash of its embedded text (:func:`paperatlas.build.content_hash`).
        model_name: the embedding model's name (a topic model of another one is not used).

    Returns:
        The :class:`PreviousBuild`.
    """
    write_label_terms(con, [(p.id, th, kx.method, t) for p, th, t in zip(papers, text_hashes, label_terms,
                                                                         strict=True)])
    return PreviousBuild(topic_model=TopicModel.loads(read_model(con, "topics"), model_name),
                         placement={pid: (t, x, y, h == hashes_by_id.get(pid))
                                    for pid, (t, x, y, h) in previous_placement(con).items()},
                         topics=previous_topics(con), keyphrase_stats=keyphrase_stats.dumps(kx))
