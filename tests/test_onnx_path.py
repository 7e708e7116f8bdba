"""The ``onnx-fp32`` embedding path (issue 31): a build may embed with ONNX Runtime instead of torch, where
``--precision auto`` measures it faster, and gets the vectors torch's fp32 gives, without importing torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import SAMPLE
from paperatlas.cli import main
from paperatlas.engines.embed_child import ChildEmbedder
from paperatlas.enrich.embed import calibration_texts, get_embedder, paper_text
from paperatlas.enrich.onnx_embed import OnnxEmbedder, export_onnx
from paperatlas.store import Atlas


@pytest.fixture(scope="module")
def texts(model_cache) -> list[str]:
    """The bundled sample's 60 ICLR 2021 abstracts (title + abstract), with the ONNX export made once."""
    import os

    os.environ["PAPERATLAS_MODEL_CACHE"] = str(model_cache)
    export_onnx(quiet=True)
    return calibration_texts()


@pytest.fixture(scope="module")
def torch_fp32(texts) -> np.ndarray:
    return get_embedder(precision="fp32").encode(texts)


def test_onnx_fp32_embeds_what_torch_fp32_embeds_and_reports_progress(texts, torch_fp32):
    emb = get_embedder(precision="onnx-fp32")
    assert isinstance(emb, OnnxEmbedder) and emb.precision == "onnx-fp32" and emb.chunk == 1
    steps: list[int] = []
    vecs = emb.encode(texts, progress=steps.append)
    assert vecs.shape == (60, 384) and vecs.dtype == np.float32
    assert np.abs(vecs - torch_fp32).max() < 1e-5
    assert sum(steps) == 60 and len(steps) >= 2  # a build's progress bar moves during a long call
    emb.set_threads(1)  # a child that spares a core for the build's annotations
    assert np.abs(emb.encode(texts[:5]) - torch_fp32[:5]).max() < 1e-5
    emb.set_threads(2)


def test_the_embedding_child_runs_onnx_without_torch(texts, torch_fp32):
    code = ("import sys\nfrom paperatlas.engines.embed_child import load_embedder\n"
            "e = load_embedder('onnx-fp32', 32, 1)\nv = e.encode(sys.argv[1:])\n"
            "print(e.precision, e.threads, v.shape[0], 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, *texts[:3]], capture_output=True, text=True, check=True,
                         timeout=120).stdout.split()
    assert out == ["onnx-fp32", "1", "3", "False"]
    with ChildEmbedder(precision="onnx-fp32", threads=1) as child:
        assert child.precision == "onnx-fp32"
        child.spare_cores(1)  # at least one thread is kept
        assert np.abs(child.encode(texts) - torch_fp32).max() < 1e-5


def test_a_build_asked_for_onnx_fp32_says_so_and_stores_torchs_vectors(texts, tmp_path):
    db = tmp_path / "sample.db"
    res = CliRunner().invoke(main, ["build", str(SAMPLE), "--db", str(db), "--precision", "onnx-fp32"])
    assert res.exit_code == 0, res.output
    assert "embedding precision: onnx-fp32 (asked with --precision)" in res.output
    atlas = Atlas(db)
    papers = [atlas.by_id[i] for i in atlas.ids]
    expected = get_embedder(precision="fp32").encode([paper_text(p.title, p.abstract) for p in papers])
    assert np.abs(atlas.vectors - expected).max() < 1e-5
