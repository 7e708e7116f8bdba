"""Optional generated topic labels (``build --label-backend``), against a real local OpenAI-compatible server."""

from __future__ import annotations

import pytest

from paperatlas.build import build
from paperatlas.llm.backends import OpenAIChatBackend
from paperatlas.llm.labels import acceptable, clean_label, rewrite_labels
from paperatlas.model import Topic
from paperatlas.store import Atlas
from test_tldr_llm import FakeOpenAI

PRUNING_TITLES = ["Pruning Neural Networks at Initialization: Why Are We Missing the Mark?",
                  "Layer-adaptive Sparsity for the Magnitude-based Pruning",
                  "Long Live the Lottery: The Existence of Winning Tickets in Lifelong Learning"]
NTK_TITLES = ["Tensor Programs II: Neural Tangent Kernel for Any Architecture",
              "Deep Equals Shallow for ReLU Networks in Kernel Regimes"]


@pytest.fixture
def fake():
    srv = FakeOpenAI()
    yield srv
    srv.close()


def _topics():
    return [Topic(id=1, label="Pruning at initialization", keyphrases=["pruning", "lottery tickets", "sparsity"],
                  method="m"),
            Topic(id=2, label="Neural tangent kernel", keyphrases=["neural tangent kernel", "kernel regimes"],
                  method="m"),
            Topic(id=3, label="Kernel regimes", keyphrases=["kernel", "ReLU networks"], method="m"),
            Topic(id=4, label="Sparsity", keyphrases=["sparsity", "pruning"], method="m"),
            Topic(id=5, label="Lottery tickets", keyphrases=["lottery tickets"], method="m")]


def test_supported_answers_replace_labels_and_bad_ones_keep_the_extractive_label(fake):
    titles = {1: PRUNING_TITLES, 2: NTK_TITLES, 3: NTK_TITLES, 4: PRUNING_TITLES, 5: PRUNING_TITLES}
    fake.answers = ["Current name: Lottery tickets and pruning.",      # cleaned and used
                    "Quantum chemistry of protein folding",             # words the topic never uses
                    "Kernel regimes of deep ReLU networks in the infinite width limit",  # too long
                    500,                                                # server error
                    "Lottery tickets and pruning"]                      # taken by topic 1 now
    topics = _topics()
    backend = OpenAIChatBackend(fake.base_url, "tiny")
    rejected = rewrite_labels(backend, topics, titles)
    assert [t.label for t in topics] == ["Lottery tickets and pruning", "Neural tangent kernel", "Kernel regimes",
                                         "Sparsity", "Lottery tickets"]
    assert topics[0].method == "m; label by " + backend.method and topics[1].method == "m"
    assert rejected[2].startswith("unsupported words") and rejected[3] == "11 words"
    assert rejected[4] == "HTTP 500" and rejected[5] == "duplicate"
    # the prompt carries the extractive label, the keyphrases and the titles
    prompt = fake.requests[0]["messages"][1]["content"]
    assert "Pruning at initialization" in prompt and "lottery tickets" in prompt and PRUNING_TITLES[0] in prompt


def test_only_fresh_topics_are_sent(fake):
    fake.answers = ["Neural tangent kernel theory"]
    topics = _topics()
    rewrite_labels(OpenAIChatBackend(fake.base_url, "tiny"), topics, {2: NTK_TITLES}, only={2})
    assert len(fake.requests) == 1 and topics[1].label == "Neural tangent kernel theory"


def test_clean_and_acceptable():
    assert clean_label('"Generative adversarial networks (GANs)".\nBecause ...') == "Generative adversarial networks"
    assert clean_label("Attention: reinforcement learning") == "Reinforcement learning"
    assert acceptable("Neural tangent kernel theory", ["neural tangent kernel"], NTK_TITLES, set())[0]
    assert not acceptable("", [], [], set())[0]
    # what SmolLM2-135M answered on ICLR 2021 and must not become a label
    assert acceptable("A new approach to pruning", ["pruning"], PRUNING_TITLES, set()) == (
        False, "starts like a sentence")
    assert acceptable("Pruning neural networks for", ["pruning"], PRUNING_TITLES, set()) == (False, "cut off")
    assert acceptable("Pruning Neural Networks at", ["pruning"], PRUNING_TITLES, set())[1] == "cut off"
    assert acceptable("Layer-adaptive sparsity", ["sparsity"], PRUNING_TITLES, set()) == (
        False, "copies a paper title")


def test_build_with_label_backend_keeps_labels_on_an_update(copy_atlas, fake):
    db = copy_atlas()
    source = Atlas(db).meta["sources"][0]
    # a refit asks for every topic's label; unsupported answers leave the extractive labels
    fake.answers = ["Quantum chemistry"] * 100
    before = {t.id: t.label for t in Atlas(db).topics.values()}
    rep = build([source], db, venue="ICLR 2021", year=2021, refit_topics=True,
                label_backend=OpenAIChatBackend(fake.base_url, "tiny"))
    assert len(fake.requests) == 0  # the refit matched every topic to its old id and label: nothing is fresh
    assert {t.id: t.label for t in Atlas(db).topics.values()} == before and rep.n_labels_generated == 0
    # with no earlier topics to match, every topic is asked once
    import sqlite3

    con = sqlite3.connect(db)
    con.execute("DELETE FROM topics")
    con.execute("DELETE FROM models")
    con.commit()
    con.close()
    rep = build([source], db, venue="ICLR 2021", year=2021, label_backend=OpenAIChatBackend(fake.base_url, "tiny"))
    assert len(fake.requests) == len(Atlas(db).topics) == len(rep.labels_rejected)
    assert set(rep.labels_rejected.values()) == {"unsupported words (0% found)"}
