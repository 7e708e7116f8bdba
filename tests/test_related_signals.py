"""Related papers come from more than one signal, on the paper representation every judgement shares (issue 27)."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from paperatlas.recommend import recommender_for
from paperatlas.search import find_paper, related
from paperatlas.search.neighbours import neighbour_index
from paperatlas.search.related import SIGNALS, fuse
from paperatlas.search.representation import dense_query, paper_vectors
from paperatlas.store import Atlas


@pytest.fixture(scope="module")
def atlas(sample_atlas):
    a = Atlas(sample_atlas)
    yield a
    a.close()


def test_related_recommendations_and_the_index_share_one_representation(atlas):
    x = paper_vectors(atlas)
    assert x.shape[0] == len(atlas.ids) and x.shape[1] > atlas.vectors.shape[1]  # MiniLM ⊕ LSA, not MiniLM alone
    assert np.allclose(np.linalg.norm(x, axis=1), 1, atol=1e-4)
    assert recommender_for(atlas).vectors is x or np.array_equal(recommender_for(atlas).vectors, x)
    assert neighbour_index(atlas).dim == x.shape[1]
    p = find_paper(atlas, "Robust Reinforcement Learning on State Observations with Learned Optimal Adversary")
    me = atlas.row_of[p.id]
    for r in related(atlas, p, k=5):  # the cosine shown is the representation's
        assert r.similarity == pytest.approx(float(x[atlas.row_of[r.paper.id]] @ x[me]), abs=1e-5)


def test_every_related_paper_names_the_signal_that_put_it_there(atlas):
    seen = set()
    for p in atlas.papers[:30]:
        rel = related(atlas, p, k=8)
        assert [r.score for r in rel] == sorted((r.score for r in rel), reverse=True)
        for r in rel:
            assert r.signal in SIGNALS
            prefix = {"meaning": "close in meaning", "words": "shares words: ", "keyphrases": "shares keyphrases: ",
                      "authors": "same authors: "}[r.signal]
            assert r.reason.startswith(prefix), (r.signal, r.reason)
            seen.add(r.signal)
    assert "meaning" in seen and len(seen) >= 2  # on 30 papers, the other signals put some papers there too


def test_a_shared_author_and_keyphrases_lift_a_paper_above_a_slightly_closer_one():
    cosine = np.array([0.62, 0.60, 0.45, 0.40, 0.38])
    lexical = np.array([0.20, 0.19, 0.10, 0.08, 0.05])
    scores, signal = fuse(cosine, lexical, keyphrases=np.array([0, 2, 0, 0, 0]), authors=np.array([0, 1, 0, 0, 0]))
    assert np.argmax(scores) == 1 and SIGNALS[signal[1]] == "authors"
    assert SIGNALS[signal[0]] == "meaning"
    # words alone: a paper much closer in wording than in meaning is there because of its words
    scores, signal = fuse(np.array([0.5, 0.49, 0.48, 0.47]), np.array([0.05, 0.06, 0.9, 0.04]))
    assert SIGNALS[signal[2]] == "words"
    with pytest.raises(ValueError, match="different lengths"):
        fuse(cosine, lexical[:3])


def test_an_atlas_without_a_stored_topic_model_falls_back_to_minilm(copy_atlas):
    db = copy_atlas()
    con = sqlite3.connect(db)
    con.execute("DELETE FROM models WHERE name = 'topics'")
    con.commit()
    con.close()
    a = Atlas(db)
    try:
        assert paper_vectors(a) is a.vectors
        p = a.papers[0]
        rel = related(a, p, k=5)
        assert len(rel) == 5 and p.id not in {r.paper.id for r in rel}
    finally:
        a.close()


def test_a_minilm_query_ranks_the_representation_as_minilm_alone(atlas):
    x = paper_vectors(atlas)
    q = atlas.vectors[3]
    padded = dense_query(q, x.shape[1])
    assert padded.shape == (x.shape[1],)
    assert np.array_equal(np.argsort(-(x @ padded), kind="stable")[:10], np.argsort(-(atlas.vectors @ q),
                                                                                   kind="stable")[:10])
    with pytest.raises(ValueError):
        dense_query(np.ones(x.shape[1] + 1, np.float32), x.shape[1])


def test_the_pool_signals_are_the_sparse_dot_products(atlas):
    import importlib

    from paperatlas.search.representation import lexical_matrix

    rel = importlib.import_module("paperatlas.search.related")
    x, _ = lexical_matrix(atlas)
    phrases, authors = rel._keys(atlas)
    rng = np.random.default_rng(0)
    for _ in range(20):
        me = int(rng.integers(len(atlas.ids)))
        rows = rng.choice(len(atlas.ids), 30, replace=False)
        for m in (x, phrases, authors):
            want = np.asarray((m[rows] @ m[me].T).todense()).ravel()
            assert np.allclose(rel._row_dots(m, rows, me), want, atol=1e-6)
    shared = [rel._row_dots(phrases, np.arange(len(atlas.ids)), me)[me] for me in range(len(atlas.ids))]
    assert max(shared) >= 1  # a paper shares its own specific keyphrases with itself
