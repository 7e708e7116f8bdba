"""Query-side indexes are made by the build, not by a reader's first request.

On the bundled 60-paper ICLR 2021 sample: the recommender's TF-IDF matrix is stored in the atlas and used as is
while the papers' texts are those it was made from; a graph (HNSW) neighbour index is stored above the size
threshold and gives the related papers exact search gives.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from conftest import ICML200, SAMPLE
from paperatlas.build import build
from paperatlas.enrich import lexical
from paperatlas.recommend import Recommender, _atlas_text, recommender_for
from paperatlas.search import related
from paperatlas.search.ann import NeighbourIndex
from paperatlas.search.neighbours import STORED, neighbour_index
from paperatlas.search.representation import paper_vectors
from paperatlas.store import Atlas


def test_the_recommenders_tfidf_is_stored_by_the_build_and_used(sample_atlas):
    atlas = Atlas(sample_atlas)
    texts = [_atlas_text(atlas.by_id[i]) for i in atlas.ids]
    stored = lexical.loads(atlas.stored_model(lexical.NAME), atlas.ids, texts)
    assert stored is not None
    fitted = Recommender(texts, atlas.vectors)
    assert (stored[0] != fitted.tfidf).nnz == 0 and list(stored[1]) == list(fitted.terms)
    rec = recommender_for(atlas)
    assert (rec.tfidf != fitted.tfidf).nnz == 0
    # made from other texts (a paper's text changed since): not used
    changed = texts[:-1] + [texts[-1] + " changed"]
    assert lexical.loads(atlas.stored_model(lexical.NAME), atlas.ids, changed) is None
    assert lexical.loads(b"garbage" * 10, atlas.ids, texts) is None


def test_a_large_atlas_carries_a_graph_index_that_finds_the_exact_related_papers(tmp_path, monkeypatch):
    pytest.importorskip("usearch", reason="pip install 'paperatlas[ann]'")
    monkeypatch.setattr("paperatlas.search.neighbours.ANN_MIN_PAPERS", 50)  # the sample counts as large
    db = tmp_path / "sample.db"
    build([SAMPLE], db, venue="ICLR 2021", year=2021)
    with sqlite3.connect(db) as con:
        (blob,) = con.execute("SELECT blob FROM models WHERE name = ?", (STORED,)).fetchone()
    atlas = Atlas(db)
    index = neighbour_index(atlas)
    assert not index.exact and len(index) == len(atlas.ids) == 60
    vectors = paper_vectors(atlas)  # the graph holds the paper representation (MiniLM ⊕ LSA)
    assert index.dim == vectors.shape[1] > atlas.vectors.shape[1]
    exact = NeighbourIndex.build(vectors, min_papers=10**9)
    found = 0
    for pid in atlas.ids:
        assert len(related(atlas, atlas.by_id[pid], k=5)) == 5
        got, _ = index.search(vectors[atlas.row_of[pid]], 6)
        rows, _ = exact.search(vectors[atlas.row_of[pid]], 6)
        found += len(set(got.tolist()) & set(rows.tolist())) - 1  # the paper itself is in both
    assert found / (5 * 60) >= 0.98
    # a rebuild under the threshold removes the graph: no stale index is left behind
    monkeypatch.setattr("paperatlas.search.neighbours.ANN_MIN_PAPERS", 10**9)
    build([SAMPLE], db, venue="ICLR 2021", year=2021)
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM models WHERE name = ?", (STORED,)).fetchone()[0] == 0
    assert neighbour_index(Atlas(db)).exact
    assert isinstance(blob, bytes) and np.frombuffer(blob[:4], np.uint8).size == 4


def test_a_rebuild_that_adds_few_papers_keeps_the_stored_tfidf_rows_and_adds_the_new_ones():
    from paperatlas import sources
    from paperatlas.enrich.hierarchy import tfidf_vectorizer
    from paperatlas.sources.merge import merge_papers

    papers = merge_papers(list(sources.read(ICML200)))
    texts = {p.id: lexical.lexical_text(p.title, p.abstract, p.digest, p.tldr) for p in papers}
    first = [p.id for p in papers[:160]]
    matrix, terms, idf = lexical.fit_index([texts[i] for i in first])
    blob = lexical.dumps(matrix, terms, first, [texts[i] for i in first], idf)
    # one paper leaves, one changes its text, 30 are added (and the order is not the stored one)
    now = first[1:][::-1] + [p.id for p in papers[160:190]]
    now_texts = [texts[i] + (" A new sentence about quokkas." if i == first[5] else "") for i in now]
    got = lexical.update_index(blob, now, now_texts, max_new_share=0.25)
    assert got is not None
    m, t, _ = got
    assert m.shape == (len(now), len(terms)) and list(t) == list(terms)
    vec = tfidf_vectorizer().fit([texts[i] for i in first])
    for j, pid in enumerate(now):
        want = matrix[first.index(pid)] if pid in first and pid != first[5] else vec.transform([now_texts[j]])
        assert abs(m[j] - want).max() < 1e-6, pid
    # the blob written after it is read back by the recommender for exactly these papers and texts
    again = lexical.dumps(m, t, now, now_texts, idf)
    assert lexical.loads(again, now, now_texts)[0].shape == m.shape
    # too much new: refit
    assert lexical.update_index(blob, now, now_texts, max_new_share=0.1) is None
    assert lexical.update_index(lexical.dumps(matrix, terms, first, [texts[i] for i in first]), now, now_texts,
                                0.25) is None  # no idf stored: cannot add rows
