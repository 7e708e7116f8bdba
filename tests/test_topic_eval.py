"""``paperatlas eval topics``: clustering scores, 10-NN accuracy, gold loading and the command, on small real
fixtures (``awesome_topics.txt``: 64 seed 004 entries from 3 named sections + 5 from Others;
``aaai2022_head.json``: the first 20 AAAI 2022 records)."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import AWESOME_SEED, FIXTURES, PAPERLISTS, need
from paperatlas.eval.topic_eval import format_table, knn_accuracy, load_gold, sample, score_clustering

AWESOME_FIXTURE = FIXTURES / "awesome_topics.txt"
AAAI_FIXTURE = FIXTURES / "aaai2022_head.json"
PHENOMENA = {"Empirical Study", "Neural Collapse", "Deep Double Descent", "Lottery Ticket Hypothesis",
             "Emergence and Phase Transitions", "Interactions with Neuroscience", "Information Bottleneck",
             "Neural Tangent Kernel"}


def _two_blobs(n: int = 40, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    a = rng.normal([10, 0, 0], 0.5, size=(n, 3))
    b = rng.normal([0, 10, 0], 0.5, size=(n, 3))
    return np.vstack([a, b]), ["a"] * n + ["b"] * n


def test_knn_accuracy_separated_clusters_is_perfect():
    x, y = _two_blobs()
    acc, used, classes = knn_accuracy(x, y)
    assert (acc, used, classes) == (1.0, 80, 2)


def test_knn_accuracy_shuffled_labels_is_chance():
    x, y = _two_blobs(n=100)
    y = list(np.random.default_rng(1).permutation(y))
    acc, used, _ = knn_accuracy(x, y)
    assert used == 200 and 0.3 < acc < 0.7


def test_knn_accuracy_leaves_the_paper_itself_out():
    # 10 tight pairs (one "a", one "b") far apart: each paper's nearest other paper is of the other class
    angles = np.concatenate([np.arange(10) * 0.3, np.arange(10) * 0.3 + 0.01])
    x = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    y = ["a"] * 10 + ["b"] * 10
    assert knn_accuracy(x, y, k=1) == (0.0, 20, 2)  # would be 1.0 if a paper could vote for itself


def test_knn_accuracy_excludes_small_classes():
    x, y = _two_blobs(n=12)
    x = np.vstack([x, np.random.default_rng(2).normal([0, 0, 10], 0.5, size=(5, 3))])
    acc, used, classes = knn_accuracy(x, y + ["small"] * 5)
    assert (acc, used, classes) == (1.0, 24, 2)
    assert np.isnan(knn_accuracy(x[:5], ["a"] * 5)[0])  # nobody left


def test_knn_accuracy_tie_goes_to_nearest_class():
    # k = 2: the query's two neighbours are one of each class; the nearer one's class wins
    x = np.array([[1.0, 0.0], [1.0, 0.05], [1.0, 0.2], [1.0, -0.5]])
    y = ["b", "b", "a", "c"]
    acc, used, _ = knn_accuracy(x, y, k=2, min_class=1)
    # paper 0: neighbours 1 (b), 2 (a) -> tie, b is nearer: correct; paper 1: 0 (b), 2 (a) -> b, correct;
    # paper 2: 1 (b), 0 (b) -> b, wrong; paper 3: 0 (b), 1 (b) -> b, wrong. (Alphabetical ties would give 0.)
    assert (acc, used) == (0.5, 4)


def test_knn_accuracy_on_sparse_tfidf():
    from paperatlas.enrich.topics import tfidf_vectorizer

    texts = [f"pruning lottery ticket sparse subnetwork {i}" for i in range(12)] + \
            [f"neural collapse class means simplex {i}" for i in range(12)]
    x = tfidf_vectorizer().set_params(ngram_range=(1, 1), min_df=1).fit_transform(texts)
    assert knn_accuracy(x, ["lt"] * 12 + ["nc"] * 12)[0] == 1.0


def test_score_clustering_relabelled_partition_and_outliers():
    gold = ["x", "x", "y", "y", "z", "z"]
    s = score_clustering(gold, [5, 5, 0, 0, 9, 9])
    assert s["nmi"] == pytest.approx(1.0) and s["ari"] == pytest.approx(1.0)
    assert s["n_topics"] == 3 and s["no_topic"] == 0.0
    # BERTopic's -1 is one cluster of its own: here it is exactly gold class z, so the partition is still perfect
    s = score_clustering(gold, [0, 0, 1, 1, -1, -1])
    assert s["nmi"] == pytest.approx(1.0) and s["n_topics"] == 2 and s["no_topic"] == pytest.approx(1 / 3)
    s = score_clustering(gold, [-1] * 6)  # everything an outlier: no topics, no information
    assert s["n_topics"] == 0 and s["no_topic"] == 1.0 and s["nmi"] == pytest.approx(0.0)
    with pytest.raises(ValueError):
        score_clustering(gold, [0, 1])


def test_load_gold_fixture_awesome_drops_others():
    label, texts, gold = load_gold(str(AWESOME_FIXTURE))
    assert Counter(gold) == {"Deep Double Descent": 22, "Information Bottleneck": 22, "Neural Collapse": 20}
    assert len(texts) == len(gold) and all(t and ". " in t for t in texts)  # "title. digest"
    assert label == str(AWESOME_FIXTURE)


def test_load_gold_fixture_paperlists_uses_primary_area():
    _, texts, gold = load_gold(str(AAAI_FIXTURE))
    assert len(gold) == 20 and "Computer Vision I" in gold and all(len(t) > 200 for t in texts)


def test_load_gold_missing_file_names_it(tmp_path):
    from paperatlas.eval import EvalUnavailable

    missing = tmp_path / "nope.json.gz"
    with pytest.raises(EvalUnavailable, match="nope.json.gz"):
        load_gold(str(missing))


def test_load_gold_awesome_is_the_8_named_sections():
    need(AWESOME_SEED)
    label, texts, gold = load_gold("awesome")
    assert set(gold) == PHENOMENA and len(gold) == 329 and "Others" not in gold
    assert "Awesome Deep Phenomena" in label and len(texts) == 329


def test_load_gold_aaai_has_20_tracks():
    need(PAPERLISTS / "aaai" / "aaai2022.json.gz")
    _, texts, gold = load_gold("aaai")
    assert len(gold) == 1319 and len(set(gold)) == 20


def test_limit_samples_every_class_of_a_sorted_list():
    _, _, gold = load_gold(str(AWESOME_FIXTURE))
    idx = sample(len(gold), 30, seed=42)
    assert len(idx) == 30 and list(idx) == sorted(set(idx.tolist()))
    assert len({gold[i] for i in idx}) == 3  # a head of 30 would be a single section
    assert list(sample(10, None)) == list(range(10)) and list(sample(10, 50)) == list(range(10))


def test_format_table_shows_failures_in_the_row():
    rows = [{"method": "paperatlas areas", "n_topics": 8, "no_topic": 0.0, "nmi": 0.5, "ari": 0.25,
             "seconds": 1.0},
            {"method": "BERTopic (default)", "error": "ValueError: too few papers"}]
    out = format_table(rows).splitlines()
    assert out[0].split() == ["method", "#topics", "no", "topic", "NMI", "ARI", "misfiled", "largest", "seconds"]
    assert out[2].split() == ["paperatlas", "areas", "8", "0.0%", "0.500", "0.250", "-", "-", "1.0"]
    assert out[3].startswith("BERTopic (default)") and "failed: ValueError: too few papers" in out[3]


def test_cli_missing_gold_file(tmp_path):
    from paperatlas.cli.eval import eval_group

    missing = tmp_path / "nope.txt"
    res = CliRunner().invoke(eval_group, ["topics", "--gold", str(missing)])
    assert res.exit_code != 0 and str(missing) in res.output


def test_cli_without_bertopic_says_how_to_install(monkeypatch, tmp_path):
    from paperatlas.cli.eval import eval_group
    from paperatlas.eval import topic_eval

    class FakeEmbedder:
        def encode(self, texts, progress=None):
            return np.random.default_rng(len(texts)).normal(size=(len(texts), 8)).astype("float32")

    monkeypatch.setattr(topic_eval, "bertopic_available", lambda: False)
    monkeypatch.setattr("paperatlas.enrich.embed.get_embedder", lambda *a, **k: FakeEmbedder())
    # the build's 2-D map plays no part in topics or labels: a flat one spares UMAP's compilation (~50 s)
    monkeypatch.setattr("paperatlas.enrich.topics.fit_layout",
                        lambda x, seed=42, **k: np.zeros((len(x), 2), dtype=np.float32))
    res = CliRunner().invoke(eval_group, ["topics", "--gold", str(AWESOME_FIXTURE), "--seeds", "2",
                                          "--json", str(tmp_path / "rows.json")])
    assert res.exit_code == 0, res.output
    assert "BERTopic not installed: pip install 'paperatlas[eval]'" in res.output
    assert "BERTopic (default)" not in res.output and "paperatlas sub-topics" in res.output
    assert "NMI above BERTopic: n/a" in res.output
    # issue 28: the level nearest the 3 sections, misfiled shares, k-means baselines, a label per section
    out = res.output.splitlines()
    head = out.index(next(ln for ln in out if ln.startswith("method ") and "misfiled" in ln))
    rows = {ln.split("  ")[0].strip(): ln for ln in out[head + 2:head + 9]}
    assert set(rows) == {"paperatlas areas", "paperatlas sub-topics", "paperatlas nearest level = areas",
                         "paperatlas areas (k = #gold)", "k-means MiniLM (k = #gold)", "k-means MiniLM (k = #areas)",
                         "k-means MiniLM (k = #sub-topics)"}
    assert all(ln.split()[-3].endswith("%") and ln.split()[-2].endswith("%") for ln in rows.values())  # shares
    agree = out.index(next(ln for ln in out if ln.startswith("gold class ")))
    assert {out[agree + 2 + i].split("  ")[0] for i in range(3)} == {
        "Deep Double Descent", "Information Bottleneck", "Neural Collapse"}
    assert out[agree + 5].startswith("mean over 3 classes: token overlap ")
    assert "misfiles fewer than k-means MiniLM (k = #areas): " in res.output
    saved = json.loads((tmp_path / "rows.json").read_text(encoding="utf-8"))
    assert [(s["papers"], s["classes"], s["seeds"], s["level"]) for s in saved] == [(64, 3, [42, 43], "areas")]
    near = next(r for r in saved[0]["clustering"] if r["method"] == "paperatlas nearest level = areas")
    assert near["seeds"] == 2 and 0 <= near["misfiled"] <= 1 and "misfiled_sd" in near
    assert len(saved[0]["agreement"]) == 3 and len(saved[0]["agreement_means"]) == 2
    assert all(0 <= m["label_score_areas"] <= 1 and 0 <= m["label_score_subtopics"] <= 1
               for m in saved[0]["agreement_means"])
    assert out[agree + 6].startswith("eval labels' score of the build's labels")


@pytest.mark.slow
def test_cli_prints_both_tables():
    pytest.importorskip("bertopic")
    from paperatlas.cli.eval import eval_group

    gold = "awesome" if AWESOME_SEED.exists() else str(AWESOME_FIXTURE)
    res = CliRunner().invoke(eval_group, ["topics", "--gold", gold, "--limit", "80"])
    assert res.exit_code == 0, res.output
    for row in ("paperatlas areas ", "paperatlas areas (k = #gold)", "paperatlas sub-topics", "BERTopic (default)",
                "k-means MiniLM (k = #gold)", "paperatlas topic embedding", "TF-IDF ", "MiniLM "):
        assert f"\n{row}" in res.output, row
    assert "NMI" in res.output and "10-NN acc" in res.output
    assert "NMI above BERTopic: " in res.output and "10-NN beats TF-IDF and MiniLM: " in res.output


def test_aggregate_gives_mean_and_sd_over_seeds_and_keeps_errors():
    from paperatlas.eval.topic_eval import aggregate, format_table

    runs = [[{"method": "ours", "n_topics": 8, "no_topic": 0.0, "nmi": 0.6, "ari": 0.4, "seconds": 1.0},
             {"method": "BERTopic (default)", "error": "ValueError: tiny"}],
            [{"method": "ours", "n_topics": 8, "no_topic": 0.0, "nmi": 0.5, "ari": 0.2, "seconds": 3.0},
             {"method": "BERTopic (default)", "n_topics": 3, "no_topic": 0.5, "nmi": 0.1, "ari": 0.0,
              "seconds": 1.0}]]
    ours, bt = aggregate(runs)
    assert ours["nmi"] == pytest.approx(0.55) and ours["nmi_sd"] == pytest.approx(0.05) and ours["seeds"] == 2
    assert ours["seconds"] == pytest.approx(2.0)
    assert bt == {"method": "BERTopic (default)", "error": "ValueError: tiny"}
    table = format_table([ours, bt])
    assert "0.550 ± 0.050" in table and "failed: ValueError: tiny" in table
