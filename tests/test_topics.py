"""Topics: hierarchy, curator-style labels, confidence/secondary topics and stability across rebuilds."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import topic_inputs
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.enrich.labels import GENERIC_TERMS, MAX_LABEL_WORDS, label_topics
from paperatlas.enrich.topics import (
    TopicModel,
    default_n_areas,
    default_n_topics,
    fit_hierarchy,
    lay_out,
    topic_embedding,
    update_topics,
)
from paperatlas.store import Atlas
from paperatlas.vocab import phrase_key


@pytest.fixture(scope="module")
def sample(sample_atlas):
    """(ids, dense vectors, texts, label keyphrases) of the 60 real ICLR 2021 papers of the sample atlas."""
    return topic_inputs(sample_atlas)


def test_default_sizes_give_a_table_of_contents():
    assert default_n_areas(860) == 10 and default_n_topics(860) == 34  # ICLR 2021
    assert 8 <= default_n_areas(329) <= 20 and 8 <= default_n_areas(40_000) <= 20
    assert default_n_topics(40_000) <= 15 * default_n_areas(40_000)
    assert default_n_areas(30) == 2 and default_n_topics(30) >= 2  # tiny corpora are not cut into 8 areas


def test_topic_embedding_is_normalised_and_adds_the_lexical_half(sample):
    _, dense, texts, _ = sample
    x, space = topic_embedding(dense, texts)
    assert x.shape == (60, 384 + space.dim) and space.dim >= 2
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    # reusing the stored space gives the same vectors (what an update relies on)
    x2, _ = topic_embedding(dense, texts, space=space)
    assert np.allclose(x, x2)


def test_hierarchy_is_nested_and_every_paper_has_a_subtopic(sample):
    _, dense, texts, _ = sample
    x, _ = topic_embedding(dense, texts)
    h = fit_hierarchy(x, n_areas=3, n_topics=9)
    assert h.leaf.shape == (60,) and set(h.leaf.tolist()) == set(range(len(h.parent)))
    assert len(set(h.parent.tolist())) == 3 and 3 <= len(h.parent) <= 9
    assert np.array_equal(h.area, h.parent[h.leaf])
    sizes = np.bincount(h.area)
    assert list(sizes) == sorted(sizes, reverse=True)  # areas numbered by size


def test_same_input_gives_the_same_topics_and_map(sample):
    ids, dense, texts, kps = sample
    a = update_topics(ids, dense, texts, kps)
    b = update_topics(ids, dense, texts, kps)
    assert np.array_equal(a.topic_id, b.topic_id)
    assert np.array_equal(a.xy, b.xy)
    assert [(t.id, t.label) for t in a.topics] == [(t.id, t.label) for t in b.topics]


def test_the_map_as_its_own_stage_is_the_same_map(sample):
    """The build fits topics, then lays the map out as a separate stage: the same map and topic positions."""
    ids, dense, texts, kps = sample
    order = list(range(len(ids)))[::-1]  # the caller's order is not id order: the map is still fitted in id order
    args = ([ids[i] for i in order], dense[order], [texts[i] for i in order], [kps[i] for i in order])
    whole = update_topics(*args)
    split = update_topics(*args, layout=False)
    assert split.xy is None and split.model.xy is None
    assert np.array_equal(split.topic_id, whole.topic_id)
    lay_out(split)
    assert np.array_equal(split.xy, whole.xy) and np.array_equal(split.model.xy, whole.model.xy)
    assert [(t.id, t.x, t.y) for t in split.topics] == [(t.id, t.x, t.y) for t in whole.topics]
    assert len({(t.x, t.y) for t in split.topics}) > 1  # placed, not left at the origin


def _previous(ids, res):
    return {pid: (int(res.topic_id[i]), float(res.xy[i, 0]), float(res.xy[i, 1]), True)
            for i, pid in enumerate(ids)}


def test_adding_ten_percent_keeps_ids_labels_and_points(sample):
    ids, dense, texts, kps = sample
    rng = np.random.default_rng(0)
    new = set(rng.choice(60, size=6, replace=False).tolist())
    old = [i for i in range(60) if i not in new]
    first = update_topics([ids[i] for i in old], dense[old], [texts[i] for i in old], [kps[i] for i in old])
    model = TopicModel.loads(first.model.dumps(), "")  # through the stored arrays, as a rebuild does
    prev = _previous([ids[i] for i in old], first)
    second = update_topics(ids, dense, texts, kps, previous=model, previous_papers=prev,
                           previous_topics={t.id: t for t in first.topics})
    assert second.mode == "update"
    # every earlier paper keeps its exact map position; new ones land inside the existing map
    for i in old:
        assert tuple(second.xy[i]) == pytest.approx(prev[ids[i]][1:3])
    lo, hi = first.xy.min(axis=0) - 1, first.xy.max(axis=0) + 1
    assert all((lo <= second.xy[i]).all() and (second.xy[i] <= hi).all() for i in new)
    # topic ids survive; the reported share of papers keeping their topic is what it says
    kept = sum(second.topic_id[i] == prev[ids[i]][0] for i in old) / len(old)
    assert second.kept_share == pytest.approx(kept) and kept >= 0.8
    before = {t.id: t.label for t in first.topics}
    after = {t.id: t.label for t in second.topics}
    assert set(after) <= set(before) | set()
    assert all(after[t] == before[t] for t in after if t not in second.relabelled)


def test_refit_matches_topics_to_the_previous_ids_and_labels(sample):
    ids, dense, texts, kps = sample
    first = update_topics(ids, dense, texts, kps)
    again = update_topics(ids, dense, texts, kps, previous=first.model, previous_papers=_previous(ids, first),
                          previous_topics={t.id: t for t in first.topics}, refit=True)
    assert again.mode == "refit"
    assert {(t.id, t.label) for t in again.topics} == {(t.id, t.label) for t in first.topics}


def test_confidence_low_confidence_and_secondary_topics(sample):
    ids, dense, texts, kps = sample
    r = update_topics(ids, dense, texts, kps, n_areas=3, n_topics=8)
    subtopics = {t.id for t in r.topics if t.level == 1}
    assert set(r.topic_id.tolist()) <= subtopics
    assert r.confidence.shape == (60,) and (r.confidence > 0).all()
    assert r.low_confidence.sum() <= 6  # an exception, not a bucket
    for own, sec in zip(r.topic_id.tolist(), r.secondary, strict=True):
        assert own not in sec and set(sec) <= subtopics and len(sec) <= 2


def test_labels_are_specific_short_and_distinct():
    # three topics of real-looking keyphrase lists (cut from ICLR 2021 papers)
    kps = [["graph neural networks", "graph neural", "message passing"]] * 6 + \
          [["lottery tickets", "pruning", "pruning at initialization", "neural networks"]] * 6 + \
          [["self-supervised", "self-supervised learning", "contrastive learning", "deep learning"]] * 6
    assign = np.repeat([0, 1, 2], 6)
    labels = [lab for lab, _ in label_topics(assign, kps)]
    assert len(set(labels)) == 3
    assert labels[0].startswith("Graph neural networks")
    assert "Lottery tickets" in labels[1] or "Pruning" in labels[1]
    assert "Self-supervised learning" in labels[2] or labels[2].startswith("Contrastive learning")
    generic = {phrase_key(g) for g in GENERIC_TERMS}
    for lab in labels:
        assert 1 <= len(lab.split()) <= MAX_LABEL_WORDS
        assert phrase_key(lab) not in generic and "_" not in lab
        assert not lab.lower().endswith(("self-supervised", "graph neural"))  # no dangling adjective fragments


def test_build_then_rebuild_updates_and_the_cli_prints_a_table_of_contents(copy_atlas):
    db = copy_atlas()
    before = Atlas(db)
    rep = build([Atlas(db).meta["sources"][0]], db, venue="ICLR 2021", year=2021)
    after = Atlas(db)
    assert rep.topic_mode == "update" and rep.topics_kept_share == 1.0
    assert [(p.id, p.topic_id, p.x, p.y) for p in after.papers] == [(p.id, p.topic_id, p.x, p.y)
                                                                    for p in before.papers]
    out = CliRunner().invoke(main, ["topics", "--db", str(db), "--terms", "0"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    areas = after.areas()
    assert len(lines) == len(after.topics)
    for area in areas:  # each area line is followed by its sub-topics, indented
        i = next(n for n, line in enumerate(lines) if line.split(None, 2)[2] == area.label)
        for j, sub in enumerate(after.subtopics(area.id), start=1):
            assert lines[i + j].split(None, 2)[2] == sub.label and lines[i + j].startswith("    ")
    # `show` names the paper's area and sub-topic
    p = after.papers[0]
    sub = after.topics[p.topic_id]
    out = CliRunner().invoke(main, ["show", p.id, "--db", str(db)])
    assert f"Topic: {after.topics[sub.parent_id].label} › {sub.label} (#{sub.id})" in out.output



def test_topic_model_streamed_into_the_atlas_reads_back_as_the_bytes_do(sample, tmp_path):
    import sqlite3

    from paperatlas.store import sqlite as store

    ids, dense, texts, kps = sample
    model = update_topics(ids, dense, texts, kps).model
    con = sqlite3.connect(tmp_path / "a.db")
    con.execute("CREATE TABLE models (name TEXT PRIMARY KEY, blob BLOB NOT NULL)")
    store.write_model(con, "topics", b"an older model")
    store.write_model_from(con, "topics", model.dump_file)
    store.write_model_from(con, "empty", lambda path: path.write_bytes(b""))
    assert con.execute("SELECT count(*) FROM models").fetchone()[0] == 2
    assert store.read_model(con, "empty") == b""
    streamed, direct = (TopicModel.loads(b, "") for b in (store.read_model(con, "topics"), model.dumps()))
    assert streamed is not None and direct is not None
    for a, b in ((streamed.x, direct.x), (streamed.xy, direct.xy), (streamed.hierarchy.leaf, direct.hierarchy.leaf),
                 (streamed.hierarchy.centroids, direct.hierarchy.centroids)):
        assert np.array_equal(a, b)
    assert (streamed.paper_ids, streamed.leaf_ids, streamed.area_ids) == (direct.paper_ids, direct.leaf_ids,
                                                                         direct.area_ids)
