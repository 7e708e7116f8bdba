"""NeighbourIndex (search/ann.py): exact mode is numpy's argsort, the HNSW mode finds ≥ 98 % of the true 10 nearest
rows, and an index survives to_bytes/from_bytes (and refuses a corrupt one instead of crashing)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import FIXTURES
from paperatlas.search.ann import ANN_MIN_PAPERS, NeighbourIndex
from paperatlas.store import Atlas

NEED_USEARCH = "the approximate mode needs USearch (pip install 'paperatlas[ann]')"


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def real_vectors() -> np.ndarray:
    """The real MiniLM vectors of the released-atlas fixture (12 papers)."""
    atlas = Atlas(FIXTURES / "atlas_release_0.1.0.db")
    try:
        assert atlas.vectors.shape == (12, 384) and atlas.vectors.dtype == np.float32
        return atlas.vectors.copy()
    finally:
        atlas.con.close()


@pytest.fixture(scope="module")
def matrix(real_vectors) -> np.ndarray:
    """4,800 rows made from the real vectors by repetition with N(0, 0.05²) noise per component, normalised (the
    benchmark's recipe: near-duplicates of 12 papers, a hard case for a graph)."""
    rng = np.random.default_rng(0)
    copies = np.repeat(real_vectors, 400, axis=0)
    return _unit(copies + 0.05 * rng.standard_normal(copies.shape, dtype=np.float32))


@pytest.fixture(scope="module")
def queries(matrix) -> np.ndarray:
    rng = np.random.default_rng(1)
    picks = matrix[rng.choice(len(matrix), 200, replace=False)]
    return _unit(picks + 0.05 * rng.standard_normal(picks.shape, dtype=np.float32))


@pytest.fixture(scope="module")
def graph(matrix) -> NeighbourIndex:
    pytest.importorskip("usearch", reason=NEED_USEARCH)
    return NeighbourIndex.build(matrix, min_papers=0, threads=1)  # one thread: the same graph every run


def test_small_atlases_are_exact_and_equal_numpy_argsort(matrix, queries, real_vectors):
    assert len(matrix) < ANN_MIN_PAPERS
    index = NeighbourIndex.build(matrix)
    assert index.exact
    for q in queries[:50]:
        sims = matrix @ q
        rows, cos = index.search(q, 10)
        assert rows.dtype == np.int64 and cos.dtype == np.float32 and rows.shape == cos.shape == (10,)
        assert rows.tolist() == np.argsort(-sims, kind="stable")[:10].tolist()
        assert np.array_equal(cos, sims[rows])
    many_rows, many_cos = index.search_many(queries, 10)
    assert many_rows.shape == many_cos.shape == (len(queries), 10)
    assert many_rows[7].tolist() == np.argsort(-(matrix @ queries[7]), kind="stable")[:10].tolist()
    # more rows asked for than there are; ties (duplicate rows) keep row order as argsort(kind="stable") does
    dup = np.repeat(real_vectors, 2, axis=0)
    rows, cos = NeighbourIndex.build(dup).search(real_vectors[3], 100)
    assert rows.tolist() == np.argsort(-(dup @ real_vectors[3]), kind="stable").tolist() and len(rows) == 24


def test_exact_mode_needs_only_numpy_and_the_graph_mode_says_what_to_install():
    code = textwrap.dedent("""
        import sys
        sys.modules["usearch"] = None  # as if not installed
        import numpy as np
        from paperatlas.search.ann import NeighbourIndex
        v = np.eye(5, 8, dtype=np.float32)
        index = NeighbourIndex.from_bytes(NeighbourIndex.build(v).to_bytes(), v)
        assert index.exact and index.search(v[2], 2)[0][0] == 2
        try:
            NeighbourIndex.build(v, min_papers=0)
        except ImportError as e:
            print(e)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "pip install 'paperatlas[ann]'" in res.stdout


def test_graph_finds_98_percent_of_the_true_10_nearest(graph, matrix, queries):
    assert not graph.exact
    exact_rows, _ = NeighbourIndex.build(matrix).search_many(queries, 10)
    rows, cos = graph.search_many(queries, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(rows.tolist(), exact_rows.tolist(), strict=True)])
    assert recall >= 0.98, recall
    # the cosines are the exact ones of the rows found, best first
    assert np.allclose(cos, np.einsum("mkd,md->mk", matrix[rows], queries), atol=1e-6)
    assert (np.diff(cos, axis=1) <= 0).all()
    one_rows, one_cos = graph.search(queries[0], 10)
    assert one_rows.tolist() == rows[0].tolist() and np.array_equal(one_cos, cos[0])


def test_round_trip_gives_identical_results(graph, matrix, queries):
    data = graph.to_bytes()
    assert data.startswith(b"paperatlas-ann\n")  # a JSON header and USearch's own format, no pickle
    loaded = NeighbourIndex.from_bytes(data, matrix)
    assert not loaded.exact
    for a, b in zip(graph.search_many(queries, 10), loaded.search_many(queries, 10), strict=True):
        assert np.array_equal(a, b)
    exact = NeighbourIndex.build(matrix)
    again = NeighbourIndex.from_bytes(exact.to_bytes(), matrix)
    assert again.exact and np.array_equal(again.search_many(queries, 10)[0], exact.search_many(queries, 10)[0])


def test_from_bytes_refuses_other_vectors_and_damaged_bytes(graph, matrix):
    data = graph.to_bytes()
    with pytest.raises(ValueError, match="rebuild"):
        NeighbourIndex.from_bytes(data, matrix[:-1])
    with pytest.raises(ValueError):
        NeighbourIndex.from_bytes(data[:-100], matrix)
    with pytest.raises(ValueError):
        NeighbourIndex.from_bytes(b"\x80\x04K\x01.", matrix)  # a pickle is not an index


def test_a_corrupt_graph_raises_instead_of_crashing(tmp_path):
    """USearch follows neighbour slots unchecked (a bad one is a segmentation fault at the first search):
    from_bytes must check them. Run in a child process so that a crash fails this test, not the session."""
    pytest.importorskip("usearch", reason=NEED_USEARCH)
    code = textwrap.dedent("""
        import numpy as np
        from paperatlas.search.ann import NeighbourIndex
        rng = np.random.default_rng(0)
        v = rng.standard_normal((1500, 384)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        data = NeighbourIndex.build(v, min_papers=0, threads=1).to_bytes()
        graph_start = 1500 * 384 + 300  # past the JSON header and the int8 vectors: in the graph
        rejected = 0
        for seed in range(300):
            r = np.random.default_rng(seed)
            bad = bytearray(data)
            for p in r.integers(graph_start, len(data), 1 + seed % 3):
                bad[p] = r.integers(0, 256)
            try:
                NeighbourIndex.from_bytes(bytes(bad), v).search_many(v[:20], 10)
            except ValueError:
                rejected += 1
        print(rejected)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"crashed ({res.returncode}): {res.stderr[-2000:]}"
    assert int(res.stdout.split()[-1]) > 50
