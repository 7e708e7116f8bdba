"""The same answer twice: the same papers give the same topics, labels and map, whatever their order, in another
process, and after a no-op rebuild."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import SAMPLE, topic_inputs
from paperatlas.build import build
from paperatlas.enrich.topics import update_topics


@pytest.fixture(scope="module")
def sample(sample_atlas):
    """(ids, dense vectors, texts, label keyphrases) of the 60 real ICLR 2021 papers of the sample atlas."""
    return topic_inputs(sample_atlas)


def test_a_shuffled_listing_gets_the_same_topics_labels_and_map(sample):
    ids, dense, texts, kps = sample
    a = update_topics(ids, dense, texts, kps)
    perm = np.random.default_rng(1).permutation(len(ids))
    b = update_topics([ids[i] for i in perm], dense[perm], [texts[i] for i in perm], [kps[i] for i in perm])
    assert {ids[i]: int(a.topic_id[i]) for i in range(len(ids))} == \
        {ids[j]: int(b.topic_id[k]) for k, j in enumerate(perm)}
    assert all(np.array_equal(a.xy[j], b.xy[k]) for k, j in enumerate(perm))
    assert all(a.secondary[j] == b.secondary[k] for k, j in enumerate(perm))
    assert [(t.id, t.label, t.size, t.parent_id) for t in a.topics] == \
        [(t.id, t.label, t.size, t.parent_id) for t in b.topics]
    # the stored model's rows follow the caller's order (the build reads the representation row by row)
    assert b.model.paper_ids == [ids[i] for i in perm]
    assert np.array_equal(b.model.x, a.model.x[perm]) and np.array_equal(b.model.xy, b.xy)
    assert np.array_equal(np.array(b.model.leaf_ids)[b.model.hierarchy.leaf], b.topic_id)


def _state(db: Path) -> tuple[dict, dict]:
    con = sqlite3.connect(db)
    try:
        papers = {r[0]: r[1:] for r in con.execute("SELECT id, topic_id, x, y FROM papers")}
        topics = {r[0]: r[1:] for r in con.execute("SELECT id, label, size, parent_id FROM topics")}
    finally:
        con.close()
    return papers, topics


def _build(listing: Path, db: Path) -> None:
    subprocess.run([sys.executable, "-m", "paperatlas.cli", "build", str(listing), "--db", str(db), "--venue",
                    "ICLR 2021", "--year", "2021"], capture_output=True, text=True, check=True)


def test_another_process_a_shuffled_listing_and_a_noop_rebuild_agree(sample_atlas, copy_atlas, tmp_path):
    first = _state(sample_atlas)
    assert len(first[0]) == 60 and len(first[1]) >= 3
    again = tmp_path / "again.db"
    _build(SAMPLE, again)
    assert _state(again) == first  # another process, same input
    blocks = SAMPLE.read_text(encoding="utf-8").split("\n## ")
    head, entries = blocks[0], blocks[1:]
    random.Random(1).shuffle(entries)
    shuffled = tmp_path / "iclr2021_sample_shuffled.md"
    shuffled.write_text("\n## ".join([head, *entries]), encoding="utf-8")
    other = tmp_path / "shuffled.db"
    _build(shuffled, other)
    assert _state(other) == first  # the listing in another order
    db = copy_atlas()
    build([SAMPLE], db, venue="ICLR 2021", year=2021)  # a no-op rebuild moves no paper and changes no label
    assert _state(db) == first


def test_the_maps_neighbour_graph_is_exact_and_the_same_bits_on_any_number_of_threads(sample_atlas):
    """UMAP's neighbour graph below 30,000 papers: the true nearest papers, distances identical however BLAS splits
    the work (another machine or process draws the same map)."""
    from paperatlas.enrich.layout import EXACT_KNN_MAX_PAPERS, knn_graph
    from paperatlas.search.representation import paper_vectors
    from paperatlas.store import Atlas

    atlas = Atlas(sample_atlas)
    try:
        x = np.ascontiguousarray(paper_vectors(atlas), dtype=np.float32)
    finally:
        atlas.close()
    assert len(x) == 60 < EXACT_KNN_MAX_PAPERS
    one, many = knn_graph(x, 15, n_jobs=1), knn_graph(x, 15, n_jobs=-1)
    assert np.array_equal(one[0], many[0]) and one[1].tobytes() == many[1].tobytes()
    idx, dist = one
    assert (idx[:, 0] == np.arange(60)).all() and np.allclose(dist[:, 0], 0, atol=1e-6)  # each paper first
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    sims = unit @ unit.T
    for i in range(60):  # the 15 most similar papers, nearest first
        assert set(idx[i]) == set(np.argsort(-sims[i], kind="stable")[:15])
        assert np.allclose(dist[i], 1 - sims[i, idx[i]], atol=1e-5) and (np.diff(dist[i]) >= 0).all()
