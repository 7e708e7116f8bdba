"""``paperatlas ask``: extractive, cited answers from the 60-paper ICLR 2021 sample atlas, and the honest miss."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from paperatlas.ask import (
    MAX_QUESTION_CHARS,
    REDUNDANCY_MAX_JACCARD,
    QuestionTooLong,
    ask,
    content_words,
    jaccard,
)
from paperatlas.cli import main
from paperatlas.store import Atlas
from paperatlas.text import split_sentences

QUESTIONS = ["how do neural ODEs relate to residual networks", "what are Hopfield networks",
             "how can reinforcement learning be made robust to adversarial observations"]


@pytest.fixture(scope="module")
def atlas(sample_atlas):
    return Atlas(sample_atlas)


@pytest.fixture(scope="module")
def encode():
    from paperatlas.enrich.query_embed import query_embedder

    return query_embedder().encode


@pytest.mark.parametrize("meaning", [False, True], ids=["words", "meaning"])
@pytest.mark.parametrize("question", QUESTIONS)
def test_answer_is_cited_verbatim_and_not_redundant(atlas, encode, question, meaning):
    ans = ask(atlas, question, encode=encode if meaning else None)
    assert not ans.miss
    assert 2 <= len(ans.sentences) <= 6
    assert [c.cite for c in ans.papers] == list(range(1, len(ans.papers) + 1))
    assert {s.cite for s in ans.sentences} == {c.cite for c in ans.papers}
    by_cite = {c.cite: c for c in ans.papers}
    for s in ans.sentences:
        p = atlas.by_id[by_cite[s.cite].id]
        assert s.paper_id == p.id
        assert s.text == p.tldr if s.source == "tldr" else s.text in split_sentences(p.abstract), s.text
    words = [content_words(s.text) for s in ans.sentences]
    for i in range(len(words)):
        for j in range(i):
            assert jaccard(words[i], words[j]) <= REDUNDANCY_MAX_JACCARD
    # the first cited paper is on the question: the ODE question cites the ODE/ResNet paper first
    if question.startswith("how do neural ODEs"):
        assert "ODE" in ans.papers[0].title


def test_answer_json_round_trips(atlas):
    d = json.loads(json.dumps(ask(atlas, QUESTIONS[1]).to_json()))
    assert d["miss"] is False and d["sentences"][0]["cite"] == 1
    assert "Hopfield" in " ".join(p["title"] for p in d["papers"])


@pytest.mark.parametrize("meaning", [False, True], ids=["words", "meaning"])
def test_off_topic_question_is_an_honest_miss(atlas, encode, meaning):
    ans = ask(atlas, "best pizza dough hydration", encode=encode if meaning else None)
    assert ans.miss and not ans.sentences and not ans.papers
    assert ans.message
    assert 1 <= len(ans.nearest_topics) <= 3
    assert all(t.id in atlas.topics for t in ans.nearest_topics)


def test_question_length_cap(atlas):
    with pytest.raises(QuestionTooLong, match=f"{MAX_QUESTION_CHARS:,} characters"):
        ask(atlas, "why " * MAX_QUESTION_CHARS)
    r = CliRunner().invoke(main, ["ask", "why " * MAX_QUESTION_CHARS, "--db", str(atlas.path)])
    assert r.exit_code == 2 and "longer than 1,000 characters" in r.output and "Traceback" not in r.output


def test_cli_prints_paragraph_and_cited_papers(sample_atlas):
    r = CliRunner().invoke(main, ["ask", QUESTIONS[0], "--db", str(sample_atlas)])
    assert r.exit_code == 0, r.output
    js = CliRunner().invoke(main, ["ask", QUESTIONS[0], "--db", str(sample_atlas), "--json"])
    ans = json.loads(js.output)
    assert "[1]" in r.output
    for c in ans["papers"]:
        assert f"[{c['cite']}] {c['title']}" in r.output
    assert ans["sentences"][0]["text"].split()[0] in r.output
    miss = CliRunner().invoke(main, ["ask", "best pizza dough hydration", "--db", str(sample_atlas)])
    assert miss.exit_code == 0 and "Nearest topics:" in miss.output and "[1]" not in miss.output
    js = CliRunner().invoke(main, ["ask", QUESTIONS[1], "--db", str(sample_atlas), "--json", "--no-meaning"])
    assert json.loads(js.output)["papers"]
