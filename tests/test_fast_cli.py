"""The fast command line: queries embedded by ONNX Runtime give what sentence-transformers gives, without torch."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from paperatlas.enrich import query_embed
from paperatlas.enrich.embed import get_embedder
from paperatlas.search import search_results
from paperatlas.store import Atlas

QUERIES = ["lottery ticket", "Hopfield networks", "certified robustness for graph neural networks",
           "pruning at initialization", "text-to-speech", "grokking", "reinforcement learning with an adversary",
           "disentangled representations transfer", "neural ODE", "data poisoning"]


@pytest.fixture(scope="module")
def fast(model_cache):
    import os

    os.environ["PAPERATLAS_MODEL_CACHE"] = str(model_cache)
    query_embed._FAST.clear()
    return query_embed.query_embedder()


def test_the_onnx_query_vectors_equal_sentence_transformers(fast):
    assert isinstance(fast, query_embed.OnnxEmbedder)
    slow = get_embedder(precision="fp32")
    a, b = slow.encode(QUERIES), fast.encode(QUERIES)
    assert a.shape == b.shape == (len(QUERIES), 384)
    assert np.abs(a - b).max() < 1e-5
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)


def test_search_results_are_identical_with_either_embedder(fast, sample_atlas):
    atlas = Atlas(sample_atlas)
    slow = get_embedder(precision="fp32")
    for q in QUERIES:
        one = search_results(atlas, q, embed_query=lambda s: slow.encode([s])[0])
        two = search_results(atlas, q, embed_query=lambda s: fast.encode([s])[0])
        assert [(h.paper.id, h.match) for h in one.hits] == [(h.paper.id, h.match) for h in two.hits], q


def test_a_command_line_search_never_imports_torch(fast, sample_atlas):
    code = ("import sys, runpy\n"
            "sys.argv = ['paperatlas', 'search', 'Hopfield networks', '--db', sys.argv[1], '--json']\n"
            "try:\n    runpy.run_module('paperatlas.cli', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print('TORCH' if 'torch' in sys.modules else 'NO TORCH')")
    out = subprocess.run([sys.executable, "-c", code, str(sample_atlas)], capture_output=True, text=True, check=True,
                         timeout=120).stdout
    rows = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    assert rows and rows[0]["title"] in ("Hopfield Networks is All You Need",
                                         "On the mapping between Hopfield networks and Restricted Boltzmann Machines")
    assert out.splitlines()[-1].strip() == "NO TORCH"


def test_without_onnxruntime_the_query_model_falls_back_to_sentence_transformers(monkeypatch, sample_atlas):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime -> ImportError
    monkeypatch.setattr(query_embed, "_FAST", {})
    model = query_embed.query_embedder()
    assert not isinstance(model, query_embed.OnnxEmbedder)
    res = search_results(Atlas(sample_atlas), "Hopfield networks", embed_query=lambda s: model.encode([s])[0])
    assert res.n_keyword == 2
