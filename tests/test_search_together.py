"""The together check on candidates' text (search/together.py) gives FTS5's NEAR / salient-fields answer exactly."""

from __future__ import annotations

import random
import re
import sqlite3

import numpy as np
import pytest

from paperatlas.search import terms as terms_mod
from paperatlas.search.postings import postings, quoted
from paperatlas.search.terms import NEAR_TOKENS, docs_using_together, docs_with
from paperatlas.search.together import near_match, using_together
from paperatlas.store import Atlas

#: crafted texts: (title, abstract, keyphrases, tldr) put in the first papers' FTS5 rows of an atlas copy
CRAFTED = [
    ("Alpha", "alpha " + "x " * 11 + "omega tail", "", ""),  # 11 tokens between: NEAR 12 holds
    ("Alpha", "alpha " + "x " * 12 + "omega tail", "", ""),  # 12 between: holds
    ("Alpha", "alpha " + "x " * 13 + "omega tail", "", ""),  # 13 between: does not
    ("Omega rising", "nothing " * 30, "alpha; beta", None),  # both salient (title, keyphrases)
    ("Omega", "alpha", "", ""),  # near across columns does not count; salient needs alpha in title/kp/tldr
    ("T", "the self-supervised–learning of naïve Müller's models, e.g. naïve-Bayes (self supervised)", "", "x"),
    ("T", "self " + "y " * 20 + "supervised; naive MÜLLER", "", "Networks network NETWORKS"),
    ("T", "t-t t t-t-t don't dont don t", "", ""),
    ("T", "learning_rate learning rate LEARNING-RATE Learning'rate", "", ""),
    ("T", "αβγ δ ﬁne-tuning fine tuning café CAFÉ cafe\u0301 Straße strasse", "", ""),
]
WORD_LISTS = [["alpha", "omega"], ["omega", "alpha"], ["alpha", "beta"], ["omega", "rising"], ["self-supervised",
              "learning"], ["naïve", "müller's"], ["naive", "muller"], ["self", "supervised"], ["network", "networks"],
              ["t-t", "don't"], ["t", "dont"], ["learning_rate", "rate"], ["learning", "rate"], ["fine-tuning", "café"],
              ["ﬁne", "tuning"], ["straße", "cafe"], ["αβγ", "δ"], ["alpha", "omega", "tail"], ["x", "omega"]]


def fts_together(atlas: Atlas, words: list[str]) -> set[int]:
    """papers positions FTS5 says use ``words`` together (NEAR or every word in the salient fields)."""
    index = {p.id: i for i, p in enumerate(atlas.papers)}
    exprs = [f"NEAR({' '.join(quoted(w) for w in words)}, {NEAR_TOKENS})",
             " AND ".join("{title keyphrases tldr}: " + quoted(w) for w in words)]
    return {index[r[0]] for e in exprs for r in atlas.con.execute(
        "SELECT paper_id FROM papers_fts WHERE papers_fts MATCH ?", (e,))}


def candidates(atlas: Atlas, words: list[str]) -> np.ndarray:
    """The papers containing every word (what the engine asks about)."""
    out = docs_with(atlas, words[0])
    for w in words[1:]:
        out = np.intersect1d(out, docs_with(atlas, w))
    return out


@pytest.fixture
def crafted(copy_atlas):
    db = copy_atlas()
    con = sqlite3.connect(db)
    rowids = [r[0] for r in con.execute("SELECT rowid FROM papers_fts ORDER BY rowid LIMIT ?", (len(CRAFTED),))]
    with con:
        for rowid, (title, abstract, kp, tldr) in zip(rowids, CRAFTED, strict=True):
            con.execute("UPDATE papers_fts SET title = ?, abstract = ?, keyphrases = ?, tldr = ? WHERE rowid = ?",
                        (title, abstract, kp, tldr, rowid))
    con.close()
    a = Atlas(db)
    yield a
    a.close()


def test_the_text_check_is_fts5s_answer_on_crafted_texts(crafted):
    px = postings(crafted)
    everyone = np.arange(len(crafted.papers))
    for words in WORD_LISTS:
        phrases = px.tokens(words)
        if not all(phrases):
            continue
        ref = fts_together(crafted, words)
        assert set(using_together(crafted, phrases, everyone, NEAR_TOKENS).tolist()) == ref, words
        cand = candidates(crafted, words)
        assert set(using_together(crafted, phrases, cand, NEAR_TOKENS).tolist()) == ref & set(cand.tolist()), words
    first = px.paper_of_rowid[np.sort(px.rowid_of_paper)[:3]].tolist()  # alpha ... omega 11, 12 and 13 apart
    got = set(using_together(crafted, px.tokens(["alpha", "omega"]), everyone, NEAR_TOKENS).tolist())
    assert [i in got for i in first] == [True, True, False]


def test_docs_using_together_among_candidates_is_the_whole_table_answer_restricted(atlas_sample, monkeypatch):
    rng = random.Random(7)
    texts = [r[0] + " " + (r[1] or "") for r in atlas_sample.con.execute("SELECT title, abstract FROM papers_fts")]
    lists = [["graph", "neural"], ["learning", "noisy", "labels"], ["self-supervised", "learning"],
             ["how", "performance", "scales", "model", "size"], ["the", "of"], ["robustness", "certified"]]
    for _ in range(150):
        ws = re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", rng.choice(texts))
        i = rng.randrange(len(ws))
        pick = ws[i:i + rng.choice([2, 3, 5, 15, 30])][::rng.choice([1, 3])]
        lists.append(list(dict.fromkeys(w.lower() for w in pick)))
    checked = 0
    for words in lists:
        if len(words) < 2 or not all(len(docs_with(atlas_sample, w)) for w in words):
            continue
        cand = candidates(atlas_sample, words)
        whole = set(docs_using_together(atlas_sample, words).tolist())
        assert whole == fts_together(atlas_sample, words)
        monkeypatch.setattr(terms_mod, "TOGETHER_TEXT_RATIO", 0)  # read on the candidates' text
        by_text = docs_using_together(atlas_sample, words, cand)
        assert by_text.dtype == np.int32 and list(by_text) == sorted(whole & set(cand.tolist())), words
        monkeypatch.setattr(terms_mod, "TOGETHER_TEXT_RATIO", 10**9)  # the same through FTS5 over the whole table
        assert list(docs_using_together(atlas_sample, words, cand)) == list(by_text)
        checked += len(cand) > 0
    assert checked > 50
    one = docs_using_together(atlas_sample, ["networks"], np.arange(len(atlas_sample.papers))[::-1])
    assert list(one) == sorted(fts_together(atlas_sample, ["networks"]))  # one word: wherever it is used


@pytest.fixture
def atlas_sample(sample_atlas):
    a = Atlas(sample_atlas)
    yield a
    a.close()


def test_near_match_is_fts5s_window_search():
    assert near_match([[0], [13]], [1, 1], 12)  # 12 tokens between
    assert not near_match([[0], [14]], [1, 1], 12)
    assert near_match([[14], [0, 10]], [1, 1], 12)  # any occurrence of each
    assert near_match([[5], [5]], [1, 1], 0)  # one token can stand for two identical phrases
    assert near_match([[0], [2, 40], [30]], [2, 1, 1], 12) is False
    assert near_match([[0, 28], [2, 40], [30]], [2, 1, 1], 12)
    assert not near_match([[0], []], [1, 1], 12)
    assert not near_match([[0], [1 << 32 | 1]], [1, 1], 12)  # another column


def test_fts5_in_the_worker_thread_gives_the_same_answers_and_a_replaced_file_is_never_read(copy_atlas,
                                                                                           monkeypatch):
    import threading

    from paperatlas.search import search_results
    from paperatlas.search import together as together_mod

    db = copy_atlas()
    atlas = Atlas(db)
    lists = [["graph", "neural"], ["learning", "noisy", "labels"], ["self-supervised", "learning"],
             ["how", "performance", "scales", "model", "size"], ["deep", "networks"], ["lottery", "ticket"],
             ["neural", "networks"], ["learning", "representations"], ["training", "models"]]
    monkeypatch.setattr(terms_mod, "TOGETHER_TEXT_RATIO", 10**9)  # FTS5 over the whole table
    monkeypatch.setattr(terms_mod, "TOGETHER_CACHE", 0)  # asked every time
    here = {tuple(w): list(docs_using_together(atlas, w, candidates(atlas, w))) for w in lists}
    queries = ["graph neural networks", "learning from noisy labels", "lottery ticket", "deep networks"]
    before = {q: [(h.paper.id, h.match, h.score) for h in search_results(atlas, q).hits] for q in queries}
    ran_in: list[str] = []
    run = together_mod.FtsWorker._run
    monkeypatch.setattr(together_mod.FtsWorker, "_run",
                        lambda self, exprs: (ran_in.append(threading.current_thread().name), run(self, exprs))[1])
    monkeypatch.setattr(terms_mod, "BACKGROUND_MIN_PAIRS", 0)  # every FTS5 check in the worker
    assert {tuple(w): list(docs_using_together(atlas, w, candidates(atlas, w))) for w in lists} == here
    assert {q: [(h.paper.id, h.match, h.score) for h in search_results(atlas, q).hits] for q in queries} == before
    asked = sum(len(candidates(atlas, w)) > 0 for w in lists)  # no candidate: nothing to ask FTS5
    assert asked >= 4 and len(ran_in) >= asked and all(name.startswith("paperatlas-fts") for name in ran_in)
    assert sum(len(v) for v in here.values()) > 10  # the checks found papers
    atlas.close()
    # a build renames a new file over the atlas: a served atlas must not read it through a new connection
    served = Atlas(db)
    other = copy_atlas("other.db")
    con = sqlite3.connect(other)
    with con:
        con.execute("DELETE FROM papers_fts")  # the new file has none of these papers
    con.close()
    other.replace(db)
    ran_in.clear()
    assert together_mod.fts_worker(served) is None
    assert {tuple(w): list(docs_using_together(served, w, candidates(served, w))) for w in lists} == here
    assert ran_in == []
    served.close()


def test_the_whole_table_answer_is_kept_for_the_same_words(copy_atlas, monkeypatch):
    """A facet click or a page asks about the same words again: FTS5 is asked once, the answer is the same."""
    atlas = Atlas(copy_atlas())
    monkeypatch.setattr(terms_mod, "TOGETHER_TEXT_RATIO", 10**9)
    monkeypatch.setattr(terms_mod, "TOGETHER_CACHE", 2)
    statements = []
    atlas.con.set_trace_callback(lambda sql: statements.append(sql) if sql.startswith("SELECT rowid FROM") else None)
    words = [["neural", "networks"], ["learning", "representations"], ["training", "models"]]
    first = [list(docs_using_together(atlas, w, candidates(atlas, w))) for w in words]
    asked = len(statements)
    assert asked == 2 * len(words) and any(first)
    assert list(docs_using_together(atlas, words[2], candidates(atlas, words[2]))) == first[2]
    assert list(docs_using_together(atlas, words[1], candidates(atlas, words[1])[::2])) == \
        [d for d in first[1] if d in set(candidates(atlas, words[1])[::2].tolist())]  # fewer candidates: same words
    assert len(statements) == asked  # both kept
    assert list(docs_using_together(atlas, words[0], candidates(atlas, words[0]))) == first[0]
    assert len(statements) == asked + 2  # the oldest of three was let go (two kept)
    assert list(docs_using_together(atlas, words[0])) == sorted(fts_together(atlas, words[0]))
    atlas.close()
