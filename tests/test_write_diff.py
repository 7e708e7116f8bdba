"""A rebuild that adds a listing writes only the rows that differ, and the atlas reads back as a full write would.

Papers come from ``icml2019_200.json`` (the first 200 ICML 2019 papers of the Paper Copilot paperlists dump).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import ICML200
from paperatlas import sources
from paperatlas.sources.merge import merge_papers
from paperatlas.store import sqlite as store


def _papers():
    return merge_papers(list(sources.read(ICML200)))


def _write(path: Path, papers) -> None:
    with store.atomic_rebuild(path) as con:
        store.write_papers(con, papers, {p.id: f"h{p.id}" for p in papers})


def _contents(path: Path):
    con = sqlite3.connect(path)
    try:
        rows = con.execute("SELECT * FROM papers ORDER BY rowid").fetchall()
        fts = sorted(con.execute("SELECT paper_id, title, authors, abstract, keyphrases, tldr FROM papers_fts"))
        hits = {q: sorted(r[0] for r in con.execute("SELECT paper_id FROM papers_fts WHERE papers_fts MATCH ?", (q,)))
                for q in ("adversarial", "reinforcement learning", "graph", "variational", "quokka")}
        return rows, fts, hits
    finally:
        con.close()


def test_adding_papers_changing_one_and_dropping_one_reads_back_as_a_full_write(tmp_path):
    papers = _papers()
    first, added = papers[:150], papers[150:]
    incremental = tmp_path / "incremental.db"
    _write(incremental, first)
    later = [p for p in first if p.id != first[3].id]  # one paper left the listing
    later[10].tldr = "A TL;DR that mentions a quokka."
    later[20].keyphrases = ["quokka counting"]
    later[30].x, later[30].y = 1.5, -2.5  # a move on the map: not an FTS change
    _write(incremental, later + added)
    full = tmp_path / "full.db"
    _write(full, later + added)
    got, want = _contents(incremental), _contents(full)
    assert [r[0] for r in got[0]] == [p.id for p in later + added]
    assert got == want
    assert got[2]["quokka"] == sorted([later[10].id, later[20].id])
    assert first[3].id not in {r[0] for r in got[1]}


def test_a_listing_in_another_order_is_written_in_that_order(tmp_path):
    papers = _papers()[:60]
    db = tmp_path / "a.db"
    _write(db, papers)
    _write(db, papers[::-1])
    got = _contents(db)
    assert [r[0] for r in got[0]] == [p.id for p in papers[::-1]]
    assert len(got[1]) == 60
