"""A large atlas's papers are read from the file on demand (issue 31: a million papers in 4 GB).

The same atlas opened eagerly and lazily (``LAZY_MIN_PAPERS`` lowered to 0 so the 60-paper sample is read as a
million-paper one is) must give the same answers: the papers, search, related papers, topic pages, sorted lists,
author pages and recommendations; a lazy atlas keeps at most ``CACHE_SIZE`` papers however many are read.
"""

from __future__ import annotations

import re
import shutil
import sqlite3

import numpy as np
import pytest

from paperatlas import readinglist
from paperatlas.enrich.lexical import StoredRows
from paperatlas.search.representation import lexical_rows
from paperatlas.store import Atlas, lazy
from paperatlas.store.check import DamagedAtlas
from paperatlas.web import create_app


def _open(db, monkeypatch, lazy_min: int) -> Atlas:
    monkeypatch.setattr(lazy, "LAZY_MIN_PAPERS", lazy_min)
    return Atlas(db)


def test_a_lazy_atlas_reads_the_same_papers_and_vectors(sample_atlas, monkeypatch):
    eager = _open(sample_atlas, monkeypatch, 10**9)
    monkeypatch.setattr(lazy, "CACHE_SIZE", 5)
    big = _open(sample_atlas, monkeypatch, 0)
    assert not eager.lazy and big.lazy
    assert [p.to_dict() for p in big.papers] == [p.to_dict() for p in eager.papers]
    assert big.paper_ids == eager.paper_ids and big.ids == eager.ids
    assert np.array_equal(big.vectors, eager.vectors) and big.vectors.dtype == np.float32
    assert big.by_id[eager.papers[7].id].to_dict() == eager.papers[7].to_dict()
    assert [p.id for p in big.papers[-3:]] == eager.paper_ids[-3:]
    assert big.papers[2] is big.papers[2]  # one object per paper while kept
    fields = ("id", "status", "topic_id", "keyphrases", "authors", "year")
    assert list(big.fields(*fields)) == list(eager.fields(*fields))
    for i in range(len(big.papers)):  # read one by one: at most CACHE_SIZE of them stay in memory
        big.papers[i]
    assert len(big.papers._kept) == 5
    rows, _ = lexical_rows(big)  # related papers read the stored TF-IDF row by row, the same rows
    want, _ = lexical_rows(eager)
    assert isinstance(rows, StoredRows) and not isinstance(want, StoredRows)
    for i in (0, 17, len(eager.ids) - 1):
        assert np.array_equal(rows[i].indices, want[i].indices) and np.array_equal(rows[i].data, want[i].data)
    with pytest.raises(IndexError, match="out of range"):
        big.papers[len(eager.papers)]
    with pytest.raises(TypeError, match="by_id"):
        eager.papers[0] in big.papers  # noqa: B015 - the check itself is what is tested


def _paper_links(html: str) -> list[str]:
    return re.findall(r'href="/paper/([^"?#]+)"', html)


def test_the_web_app_answers_alike_on_a_lazy_atlas(sample_atlas, tmp_path, monkeypatch):
    db = tmp_path / "a.db"
    shutil.copy(sample_atlas, db)
    eager_atlas = _open(db, monkeypatch, 10**9)
    liked = eager_atlas.papers[3].id
    readinglist.rate(db, liked, 1)
    author = eager_atlas.papers[0].authors[0]
    tid = max((t for t in eager_atlas.topics.values() if t.level == 1), key=lambda t: t.size).id
    urls = ["/api/search?q=graph+neural+networks", "/api/search?q=lottery+ticket&status=Poster",
            f"/api/search?q=training&topic={tid}", f"/api/related/{liked}", f"/topic/{tid}", "/papers?sort=status",
            "/papers?sort=topic", "/?q=adversarial+robustness", "/foryou", f"/paper/{liked}"]
    answers = {}
    for lazy_min in (10**9, 0):
        monkeypatch.setattr(lazy, "LAZY_MIN_PAPERS", lazy_min)
        # the large atlas also reads its stored TF-IDF piece by piece into a buffer, as at 1M papers
        monkeypatch.setattr(lazy, "BLOB_CHUNK", 10**9 if lazy_min else 1000)
        app = create_app(db, preload_model=False)
        assert app.extensions["paperatlas"].atlas.lazy == (lazy_min == 0)
        client = app.test_client()
        got = {}
        for url in urls:
            res = client.get(url)
            assert res.status_code == 200, (url, lazy_min)
            got[url] = res.get_json() if url.startswith("/api/") else _paper_links(res.get_data(as_text=True))
        page = client.get(f"/paper/{eager_atlas.papers[0].id}").get_data(as_text=True)
        key = re.search(r'href="/author/([^"]+)"[^>]*>' + re.escape(author), page)
        assert key, "the paper page links its first author"
        got["author"] = _paper_links(client.get(f"/author/{key.group(1)}").get_data(as_text=True))
        answers[lazy_min] = got
    eager, big = answers[10**9], answers[0]
    # the lazy app holds no read transaction open (its TF-IDF rows are short blob reads): a like is written at once
    readinglist.rate(db, eager_atlas.papers[5].id, 1)
    assert client.get(f"/api/related/{liked}").get_json() == eager[f"/api/related/{liked}"]
    for url in [*urls, "author"]:
        assert big[url] == eager[url], url
    assert eager[f"/topic/{tid}"] and eager["/foryou"] and eager["author"]
    assert eager["/api/search?q=graph+neural+networks"]["total"] > 0
    assert eager[f"/api/related/{liked}"]["related"]


def test_a_damaged_paper_of_a_lazy_atlas_is_named_when_it_is_read(sample_atlas, tmp_path, monkeypatch):
    db = tmp_path / "a.db"
    shutil.copy(sample_atlas, db)
    with sqlite3.connect(db) as con:
        pid = con.execute("SELECT id FROM papers ORDER BY rowid LIMIT 1 OFFSET 4").fetchone()[0]
        con.execute("UPDATE papers SET authors = '[1, 2' WHERE id = ?", (pid,))
    with pytest.raises(DamagedAtlas, match="papers.authors"):  # a small atlas checks every cell when it opens
        _open(db, monkeypatch, 10**9)
    big = _open(db, monkeypatch, 0)  # a large one opens: its cells are checked when read
    assert big.papers[3].id != pid
    with pytest.raises(DamagedAtlas, match=re.escape(pid)) as e:
        big.by_id[pid]
    assert "authors" in str(e.value)
    monkeypatch.setattr(lazy, "LAZY_MIN_PAPERS", 0)
    res = create_app(db, preload_model=False).test_client().get(f"/paper/{pid}")
    assert res.status_code == 500 and "authors" in res.get_data(as_text=True)
