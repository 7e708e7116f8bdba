"""Issue 28's measurements: misfiled share, nearest level, k-means baseline, label-name agreement, the session gold
sets, the embedding cache and ``eval labels``, on hand-made assignments and small real fixtures
(``cvpr2019_sessions.json``: 12 CVPR 2019 papers from each of 4 sessions, Paper Copilot format)."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import FIXTURES, PAPERLISTS, need
from paperatlas.eval import filing, label_agreement, label_quality
from paperatlas.eval.embed_cache import cached_encode, embedder_key
from paperatlas.eval.gold_sets import load_gold_papers

CVPR_FIXTURE = FIXTURES / "cvpr2019_sessions.json"
SESSIONS = {"Face & Body", "Action & Video", "3D Multiview", "Language & Reasoning"}


# --------------------------------------------------------------------------------------------------- misfiled
def test_misfiled_share_counts_papers_outside_their_topics_majority_class():
    gold = ["a", "a", "a", "b", "b", "b", "c", "c"]
    # topic 0 = a,a,b (majority a: one b misfiled); topic 1 = a,b,b,c (majority b: a and c misfiled); topic 2 = c
    pred = [0, 0, 1, 0, 1, 1, 1, 2]
    assert filing.misfiled_share(gold, pred) == pytest.approx(3 / 8)
    assert filing.majority_class(gold, pred) == {0: "a", 1: "b", 2: "c"}
    assert filing.misfiled_share(gold, [7, 7, 7, 3, 3, 3, 5, 5]) == 0.0  # a relabelled perfect filing
    assert filing.misfiled_share(gold, [0] * 8) == pytest.approx(5 / 8)  # one folder: all but the largest class


def test_misfiled_share_counts_bertopic_outliers_as_misfiled():
    gold = ["a", "a", "b", "b"]
    # as a cluster of its own the -1 papers (both b) would be perfectly filed; they are misfiled instead
    assert filing.misfiled_share(gold, [0, 0, -1, -1]) == pytest.approx(0.5)
    assert filing.misfiled_share(gold, [-1] * 4) == 1.0
    with pytest.raises(ValueError):
        filing.misfiled_share(gold, [0])


def test_score_clustering_reports_misfiled():
    from paperatlas.eval.topic_eval import score_clustering

    s = score_clustering(["x", "x", "y", "y"], [0, 1, 1, -1])
    assert s["misfiled"] == pytest.approx(0.5) and s["no_topic"] == pytest.approx(0.25)
    assert s["largest"] == pytest.approx(0.5)  # topic 1: 2 of 4 papers
    assert score_clustering(["x", "y", "y"], [-1, -1, 3])["largest"] == pytest.approx(1 / 3)


def test_nearest_level_picks_the_count_nearest_the_gold_classes():
    assert filing.nearest_level(20, 12, 40) == "areas"
    assert filing.nearest_level(29, 10, 34) == "sub-topics"
    assert filing.nearest_level(15, 10, 20) == "areas"  # as near: areas


def test_kmeans_baseline_separates_blobs():
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(c, 0.1, size=(15, 3)) for c in ([5, 0, 0], [0, 5, 0], [0, 0, 5])])
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    gold = ["a"] * 15 + ["b"] * 15 + ["c"] * 15
    pred = filing.kmeans_labels(x, 3, seed=1)
    assert len(set(pred.tolist())) == 3 and filing.misfiled_share(gold, pred) == 0.0
    assert len(set(filing.kmeans_labels(x[:2], 5).tolist())) == 2  # k clipped to the papers


# --------------------------------------------------------------------------------------------------- gold sets
def test_session_gold_set_from_paperlists_fixture():
    label, papers = load_gold_papers(str(CVPR_FIXTURE))
    assert Counter(p.gold for p in papers) == {s: 12 for s in SESSIONS}
    assert label == str(CVPR_FIXTURE) and all(len(p.text) > 200 and p.title for p in papers)


def test_papers_without_area_or_session_are_dropped(tmp_path):
    records = json.loads(CVPR_FIXTURE.read_text(encoding="utf-8"))
    del records[0]["session"]
    records[1]["primary_area"] = "Vision"  # primary_area wins over session
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    _, papers = load_gold_papers(str(path))
    assert len(papers) == 47 and papers[0].gold == "Vision" and papers[0].title == records[1]["title"]


@pytest.mark.parametrize(("name", "n_papers", "n_classes"), [("cvpr2019", 1294, 15), ("iccv2019", 1062, 29)])
def test_named_session_gold_sets(name, n_papers, n_classes):
    need(PAPERLISTS / name[:4] / f"{name}.json.gz")
    label, papers = load_gold_papers(name)
    assert len(papers) == n_papers and len({p.gold for p in papers}) == n_classes
    assert "sessions" in label and Counter(p.gold for p in papers).most_common(1)[0][0] == "Deep Learning"


# --------------------------------------------------------------------------------------------------- agreement
def test_token_overlap_stems_and_drops_stop_words():
    assert label_agreement.token_overlap("Neural Tangent Kernels", "Neural Tangent Kernel") == 1.0
    assert label_agreement.token_overlap("Action recognition in videos", "Action & Video") == pytest.approx(2 / 3)
    assert label_agreement.token_overlap("Face & Body", "3D Multiview") == 0.0
    assert label_agreement.content_stems("Statistics, Physics, Theory, & Datasets") == {
        "statistics", "physics", "theory", "dataset"}
    assert label_agreement.token_overlap("of the", "and") == 0.0


def test_agreement_rows_take_each_class_to_its_largest_topic():
    gold = ["Face & Body"] * 3 + ["Action & Video"] * 3
    pred = [0, 0, 1, 1, 1, 1]
    labels = ["Face recognition", "Video action recognition"]

    def embed(texts):  # one axis per distinct word set: identical stems -> cosine 1, disjoint -> 0
        keys = sorted({frozenset(label_agreement.content_stems(t)) for t in texts}, key=sorted)
        out = np.array([[float(k == frozenset(label_agreement.content_stems(t))) for k in keys] for t in texts])
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    rows = label_agreement.agreement_rows(gold, pred, labels, embed)
    by = {r["class"]: r for r in rows}
    assert by["Face & Body"]["label"] == "Face recognition" and by["Face & Body"]["held"] == pytest.approx(2 / 3)
    assert by["Face & Body"]["overlap"] == pytest.approx(1 / 3)  # {face} of {face, body, recognit...}
    assert by["Action & Video"]["label"] == "Video action recognition"
    assert by["Action & Video"]["overlap"] == pytest.approx(2 / 3) and by["Action & Video"]["cosine"] == 0.0
    m = label_agreement.mean_agreement(rows)
    assert m["overlap"] == pytest.approx(0.5) and m["exact"] == 0.0 and m["distinct"] == 1.0
    shared = label_agreement.agreement_rows(gold, [1] * 6, labels, embed)  # both classes in topic 1
    assert label_agreement.mean_agreement(shared)["distinct"] == 0.5


# --------------------------------------------------------------------------------------------------- cache
class CountingEmbedder:
    name = "fake-model"
    precision = "fp32"

    def __init__(self):
        self.seen: list[str] = []

    def encode(self, texts, progress=None):
        self.seen += texts
        if progress:
            progress(len(texts))
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)


def test_embedding_cache_embeds_each_text_once(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERATLAS_CACHE", str(tmp_path))
    emb = CountingEmbedder()
    key = embedder_key(emb.name, emb.precision)
    first = cached_encode(["alpha", "beta", "alpha"], key, lambda: emb)
    assert emb.seen == ["alpha", "beta"] and first.shape == (3, 3) and (first[0] == first[2]).all()
    loads = []
    again = cached_encode(["beta", "alpha"], key, lambda: loads.append(1) or emb)
    assert loads == [] and np.array_equal(again, first[[1, 0]])  # all cached: the model is not even loaded
    cached_encode(["gamma", "beta"], key, lambda: emb)
    assert emb.seen == ["alpha", "beta", "gamma"]
    assert (tmp_path / "eval-embeddings" / "fake-model@fp32.npz").is_file()


def test_embedding_cache_ignores_a_stand_in_without_the_name(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERATLAS_CACHE", str(tmp_path))
    emb = CountingEmbedder()
    emb.name = None
    cached_encode(["alpha"], "real-model@fp32", lambda: emb)
    cached_encode(["alpha"], "real-model@fp32", lambda: emb)
    assert emb.seen == ["alpha", "alpha"] and not (tmp_path / "eval-embeddings").exists()


# --------------------------------------------------------------------------------------------------- label quality
def test_label_scores_on_a_hand_made_atlas():
    papers = [("Graph neural networks for molecules", 1), ("Message passing graph neural networks", 1),
              ("Molecular property prediction", 1), ("Deep neural networks for images", 2),
              ("Image classification with neural networks", 2), ("Vision transformers", 2)]
    topics = [(0, "Neural networks", 0, None), (1, "Graph neural networks", 1, 0), (2, "Images and vision", 1, 0)]
    scores = {s.topic_id: s for s in label_quality.score_labels(papers, topics)}
    g = scores[1]  # matches papers 0 and 1 (stems graph, neural, network), both its own
    assert (g.size, g.specificity, g.coverage, g.precision) == (3, pytest.approx(2 / 6), pytest.approx(2 / 3), 1.0)
    assert g.score == pytest.approx(0.8)
    v = scores[2]  # "images" or "vision": papers 3, 4, 5
    assert v.coverage == 1.0 and v.precision == 1.0 and v.score == 1.0
    area = scores[0]  # the area holds all 6; "neural networks" matches 4 of them
    assert area.size == 6 and area.specificity == pytest.approx(4 / 6) and area.coverage == pytest.approx(4 / 6)
    assert [s.topic_id for s in label_quality.worst(scores.values(), 2)] == [0, 1]
    share, top = label_quality.largest_area_share(list(scores.values()), 6)
    assert share == 1.0 and top.topic_id == 0


def test_label_parts_split_two_subjects():
    assert label_quality.label_parts("Fine-tuning and natural language processing") == [
        frozenset({"fine", "tuning"}), frozenset({"natural", "languag", "process"})]
    assert label_quality.label_parts("The") == []


def test_eval_labels_command_on_sample_atlas(sample_atlas):
    from paperatlas.cli.eval import eval_group
    from paperatlas.store import Atlas

    atlas = Atlas(sample_atlas)
    labels = {t.label for t in atlas.topics.values()}
    n_areas = sum(t.level == 0 for t in atlas.topics.values())
    atlas.close()
    res = CliRunner().invoke(eval_group, ["labels", "--db", str(sample_atlas), "--worst", "3"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("level"))
    rows = lines[head + 2: head + 5]
    assert len(rows) == 3 and all(any(lab in r for lab in labels) for r in rows)
    scores = [float(r.split()[-1]) for r in rows]
    assert scores == sorted(scores)  # worst first
    assert f"{n_areas} areas" in lines[0] and "largest area: " in res.output
    assert "goal <= 15% applies from 500 papers" in res.output  # the sample has 60 papers
    full = CliRunner().invoke(eval_group, ["labels", "--db", str(sample_atlas), "--all"])
    assert sum(ln.startswith(("area ", "sub-topic ")) for ln in full.output.splitlines()) == len(labels)


def test_eval_labels_missing_atlas_names_it(tmp_path):
    from paperatlas.cli.eval import eval_group

    res = CliRunner().invoke(eval_group, ["labels", "--db", str(tmp_path / "none.db")])
    assert res.exit_code != 0 and "none.db" in res.output


# --------------------------------------------------------------------------------------------------- compare
def _run(level: str, nmi: float, misfiled: float, overlap: float) -> list[dict]:
    rows = [{"method": "paperatlas areas", "seeds": 1, "n_topics": 11, "nmi": nmi, "ari": 0.2,
             "misfiled": misfiled},
            {"method": f"paperatlas nearest level = {level}", "seeds": 1, "n_topics": 11, "nmi": nmi, "ari": 0.2,
             "misfiled": misfiled},
            {"method": "BERTopic (default)", "error": "ValueError: tiny"}]
    return [{"gold": "aaai", "label": "AAAI 2022 primary areas", "papers": 1319, "classes": 20, "seeds": [42],
             "level": level, "clustering": rows, "agreement": [],
             "agreement_means": [{"overlap": overlap, "cosine": 0.4, "exact": 0.0}], "knn": []}]


def test_eval_compare_shows_before_after_and_difference(tmp_path):
    from paperatlas.cli.eval import eval_group

    (tmp_path / "b.json").write_text(json.dumps(_run("areas", 0.317, 0.663, 0.05)), encoding="utf-8")
    (tmp_path / "a.json").write_text(json.dumps(_run("sub-topics", 0.350, 0.588, 0.15)), encoding="utf-8")
    res = CliRunner().invoke(eval_group, ["compare", str(tmp_path / "b.json"), str(tmp_path / "a.json")])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    areas = next(ln for ln in lines if ln.startswith("paperatlas areas "))
    assert areas.split()[2:5] == ["0.317", "0.350", "+0.033"] and areas.split()[8:11] == ["66.3%", "58.8%", "-7.5%"]
    assert areas.split()[-3:] == ["-", "-", "-"]  # no largest share in these runs
    assert any(ln.startswith("paperatlas nearest level = areas -> sub-topics ") for ln in lines)
    assert not any(ln.startswith("BERTopic") for ln in lines)  # failed in both: no row
    assert "token overlap 0.050 -> 0.150 (+0.100)" in res.output
    other = tmp_path / "o.json"
    other.write_text(json.dumps([{**_run("areas", 0.3, 0.6, 0.1)[0], "gold": "cvpr2019"}]), encoding="utf-8")
    res = CliRunner().invoke(eval_group, ["compare", str(tmp_path / "b.json"), str(other)])
    assert res.exit_code != 0 and "no gold set is in both" in res.output
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    res = CliRunner().invoke(eval_group, ["compare", str(tmp_path / "bad.json"), str(other)])
    assert res.exit_code != 0 and "not the output of eval topics --json" in res.output
