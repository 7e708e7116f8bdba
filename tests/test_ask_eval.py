"""``paperatlas eval ask``: cited answers vs baselines on a real cut (3 sections of seed 004 + 12 ICLR 2021 papers),
the metrics on a hand-made case, and the topic overview scores on hand-set overviews."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from conftest import AWESOME_SEED, FIXTURES, need
from paperatlas.cli import main
from paperatlas.eval import ask_atlas, ask_eval, overview_eval
from paperatlas.eval.ask_eval import MethodAnswer, Question
from paperatlas.store import Atlas
from paperatlas.text import split_sentences

AWESOME = FIXTURES / "awesome_topics.txt"  # seed 004's Deep Double Descent, Information Bottleneck, Neural Collapse
ICLR = FIXTURES / "iclr2021_excerpt.md"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The cut built as ``eval ask`` builds its atlas (Key Word lines stripped) and its questions."""
    db = ask_atlas.build_atlas(tmp_path_factory.mktemp("askeval") / "cut.db", seeds=(ICLR, AWESOME))
    atlas = Atlas(db)
    yield atlas, ask_eval.load_questions(atlas, seed=AWESOME)
    atlas.close()


@pytest.fixture(scope="module")
def encode():
    from paperatlas.enrich.query_embed import query_embedder

    return query_embedder().encode


def test_questions_come_from_sections_and_key_words_not_in_the_atlas(small):
    atlas, qs = small
    sections = {q.source: q for q in qs if q.kind == "section"}
    assert set(sections) == {"Deep Double Descent", "Information Bottleneck", "Neural Collapse"}  # not "Others"
    assert sections["Neural Collapse"].text == "What is known about neural collapse?"
    assert len(sections["Deep Double Descent"].relevant) == 22
    kws = {q.source: q for q in qs if q.kind == "keyword"}
    assert "information bottleneck" in kws and all(len(q.relevant) >= ask_eval.MIN_KEYWORD_PAPERS for q in kws.values())
    assert all(q.relevant <= set(atlas.by_id) for q in qs)
    assert sum(q.kind == "unanswerable" for q in qs) == 10
    # the gold phrases are not indexed: the atlas was built without seed 004's Key Word lines
    assert not any(p.given_keyphrases for p in atlas.papers)


def test_eval_on_the_cut_traces_every_extractive_sentence_and_misses_off_topic(small, encode):
    atlas, qs = small
    pizza = Question("What hydration gives the best sourdough pizza dough?", "unanswerable")
    qs = [q for q in qs if q.kind == "section"] + [pizza]
    rows, details = ask_eval.evaluate(atlas, qs, encode)
    by = {(r["kind"], r["method"]): r for r in rows}
    ours = by[("all", "ours (extractive)")]
    assert ours["traceable"] == 1.0 and ours["sents"] >= 2
    assert ours["honest_miss"] == 1.0 and details[-1]["methods"]["ours (extractive)"]["miss"]
    assert by[("all", "top search TL;DRs")]["honest_miss"] == 0.0
    # the section questions are answered from their own section's papers
    assert by[("section", "ours (extractive)")]["p"] >= 0.5 and ours["false_miss"] == 0.0
    for d in details[:-1]:
        base = d["methods"]["top search TL;DRs"]
        assert base["k"] == d["methods"]["ours (extractive)"]["k"]  # the baseline cites as many papers as ours
        assert all(t == atlas.by_id[pid].tldr for t, pid in base["sentences"])
        first = d["methods"]["first sentences"]["sentences"]
        assert all(t == split_sentences(atlas.by_id[pid].abstract or atlas.by_id[pid].digest)[0] for t, pid in first)


def test_metrics_on_a_hand_made_case():
    paper = {i: SimpleNamespace(abstract="Alpha beta gamma. Delta epsilon zeta.", tldr="Eta theta iota.", digest="")
             for i in "abcx"}
    q = Question("q?", "keyword", "q", {"a", "b", "c"})
    ans = MethodAnswer([("Alpha beta gamma.", "a"), ("Eta theta iota.", "a"), ("Made up words here.", "x")])
    s = ask_eval.score_answer(ans, q, paper)
    assert ans.cited == ["a", "x"] and s["k"] == 2
    assert s["p"] == 0.5 and s["r"] == pytest.approx(1 / 3) and s["rk"] == 0.5  # 1 / min(3 relevant, 2 cited)
    assert s["sents"] == 3 and s["traced"] == 2
    assert s["pj"] == 0.5  # every paper judged
    judged = Question("q?", "keyword", "q", {"a", "b", "c"}, judged={"a", "b", "c"})  # x: a paper no list files
    assert ask_eval.score_answer(ans, judged, paper)["pj"] == 1.0
    miss = ask_eval.score_answer(MethodAnswer([], miss=True), q, paper)
    assert (miss["p"], miss["r"], miss["rk"], miss["miss"]) == (0.0, 0.0, 0.0, True)
    una = ask_eval.score_answer(MethodAnswer([], miss=True), Question("z?", "unanswerable"), paper)
    details = [{"kind": k, "methods": {"m": x}} for k, x in (("keyword", s), ("keyword", miss), ("unanswerable", una))]
    row = next(r for r in ask_eval.summarise(details, ["m"]) if r["kind"] == "all")
    assert row["p"] == 0.25 and row["false_miss"] == 0.5 and row["honest_miss"] == 1.0
    assert row["pj"] == 0.5  # the miss has no judged citation: left out of Pj
    assert row["traceable"] == pytest.approx(2 / 3) and row["sents"] == 3.0  # misses are not answers


def test_key_word_lines_are_stripped_and_phrases_merged():
    text = AWESOME.read_text("utf-8")
    assert "Key Word" in text and "Key Word" not in ask_atlas.strip_key_words(text)
    assert ask_eval.keyword_key("Neural Scaling Laws") == ask_eval.keyword_key("neural scaling law")
    assert ask_eval.keyword_key("Out-of-Distribution Generalization") == "out of distribution generalization"


def test_overview_scores_on_hand_set_overviews(small):
    atlas, _qs = small
    sub = max((t for t in atlas.topics.values() if t.level == 1), key=lambda t: t.size)
    own = [p for p in atlas.papers if p.topic_id == sub.id and p.tldr]
    other = next(p for p in atlas.papers if p.topic_id != sub.id and p.tldr)
    sub.overview = f"{own[0].tldr} [1] {own[1].tldr} [2] {other.tldr} [3] Words nobody wrote. [1]"
    sub.overview_papers = [own[0].id, own[1].id, other.id]
    assert [ns for _s, ns in overview_eval.parse_overview(sub.overview)] == [[1], [2], [3], [1]]
    s = overview_eval.score_overview(sub, atlas.topics, atlas.by_id, atlas.papers)
    assert s["sentences"] == 4 and s["traced"] == 3 and s["cited"] == 3
    assert s["in_topic"] == pytest.approx(2 / 3)
    area = atlas.topics[sub.parent_id]
    assert own[0].id in overview_eval.members(area, atlas.topics, atlas.papers)  # an area holds its sub-topics' papers
    twice = SimpleNamespace(id=-1, level=1, size=2, label="x", overview=f"{own[0].tldr} [1] {own[0].tldr} [1]",
                            overview_papers=[own[0].id])
    assert overview_eval.score_overview(twice, atlas.topics, atlas.by_id, atlas.papers)["redundancy"] == 1.0
    rows = overview_eval.overview_rows([s], overview_eval.topic_counts(atlas))
    assert rows[1]["group"] == "sub-topics" and rows[1]["with"] == 1 and rows[1]["traceable"] == 0.75
    assert any(b.startswith(f"#{sub.id} {sub.label} (sub-topic") and "Words nobody wrote." in b
               for b in overview_eval.sample(atlas, len(atlas.topics)))


def test_cli_reuses_the_given_atlas_and_writes_json(small, tmp_path):
    atlas, _qs = small
    need(AWESOME_SEED)  # the questions come from the whole seed 004 (its papers in this atlas)
    out = tmp_path / "ask.json"
    r = CliRunner().invoke(main, ["eval", "ask", "--db", str(atlas.path), "--no-meaning", "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "top search TL;DRs" in r.output and "honest miss" in r.output
    report = json.loads(out.read_text("utf-8"))
    assert report["papers"] == len(atlas.papers) and report["rows"][0]["method"] == "ours (extractive)"
    assert {d["kind"] for d in report["questions"]} == {"section", "keyword", "unanswerable"}


def test_a_generative_backend_is_scored_beside_ours(sample_atlas):
    """A stub OpenAI-compatible server rewrites the answer: its written sentences are counted, and the ones not
    copied verbatim lower its traceability while the extractive answer's stays 1.0."""
    from _fake_openai import FakeOpenAI
    from paperatlas.llm.backends import OpenAIChatBackend

    atlas = Atlas(sample_atlas)
    modern = next(p.id for p in atlas.papers if p.title == "Hopfield Networks is All You Need")
    rewrite = ("A modern Hopfield network has continuous states and a corresponding update rule [2]. It stores "
               "exponentially many patterns, retrieves a pattern with one update and has exponentially small "
               "retrieval errors [2]. Hopfield layers cure tax law in 37 countries [1].")
    srv = FakeOpenAI()
    srv.answers = [rewrite]
    try:
        rows, details = ask_eval.evaluate(atlas, [Question("what are Hopfield networks", "keyword", "hopfield",
                                                           {modern})], backend=OpenAIChatBackend(srv.base_url, "tiny"))
    finally:
        srv.close()
    by = {r["method"]: r for r in rows if r["kind"] == "all"}
    gen = next(r for m, r in by.items() if m.startswith("ours + "))
    assert by["ours (extractive)"]["traceable"] == 1.0 and by["ours (extractive)"]["written"] is None
    s = next(v for m, v in details[0]["methods"].items() if m.startswith("ours + "))
    assert s["written"] == 2 and s["dropped"] == 1  # the invented claim is refused, the extractive sentence stays
    assert gen["written"] == pytest.approx(2 / s["sents"]) and gen["traceable"] < 1.0
    assert gen["traceable"] == pytest.approx(s["traced"] / s["sents"])  # the paraphrases are not verbatim
