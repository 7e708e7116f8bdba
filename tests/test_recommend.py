"""Recommendations from liked papers (ours and the arxiv-sanity-lite baseline), their metrics and the CLI."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from paperatlas.cli import main
from paperatlas.eval.recommend_eval import draws, ndcg_at_k, precision_at_k
from paperatlas.recommend import Recommender, SvmBaseline, recommend
from paperatlas.search import find_paper
from paperatlas.store import Atlas

# the sample (60 ICLR 2021 papers) has no pruning papers; its tightest groups are neural ODEs and deep RL
ODE_LIKED = ["Neural Jump Ordinary Differential Equations", "ResNet After All: Neural ODEs",
             "Neural ODE Processes"]
ODE_OTHER = "Learning continuous-time PDEs from sparse data with graph neural networks"
RL_LIKED = ["Adversarially Guided Actor-Critic", "Parameter-Based Value Functions",
            "Temporally-Extended $\\epsilon$-Greedy Exploration"]


@pytest.fixture(scope="module")
def atlas(sample_atlas):
    return Atlas(sample_atlas)


def ids(atlas, titles):
    return [find_paper(atlas, t).id for t in titles]


def is_rl(p) -> bool:
    return any("reinforcement learning" in k.lower() for k in p.keyphrases + p.given_keyphrases)


def test_liked_papers_never_come_back_and_close_papers_rank_first(atlas):
    liked = ids(atlas, ODE_LIKED)
    recs = recommend(atlas, liked, k=len(atlas.papers))
    assert recs and not {r.paper.id for r in recs} & set(liked)
    assert len(recs) == len(atlas.ids) - len(liked)
    top3 = [r.paper.title for r in recs[:3]]
    assert ODE_OTHER in top3


def test_rl_likes_give_rl_papers(atlas):
    recs = recommend(atlas, ids(atlas, RL_LIKED), k=5)
    assert all(is_rl(r.paper) for r in recs), [r.paper.title for r in recs]


def test_every_recommendation_says_which_liked_paper_and_why(atlas):
    liked = ids(atlas, RL_LIKED)
    for r in recommend(atlas, liked, k=8):
        assert r.because.id in liked
        assert r.reason.startswith(f'close to "{r.because.title}": ')
        assert any(w in r.reason for w in ("shares keyphrases", "words: ", "same topic", "similar abstract"))
        if "words: " in r.reason:  # the words are ones a reader finds in the two titles or keyphrases
            seen = " ".join([r.paper.title, r.because.title, *r.paper.keyphrases, *r.because.keyphrases]).lower()
            for term in r.reason.split("words: ")[1].split(", "):
                assert all(w in seen for w in term.split()), (term, r.reason)
                assert term not in ("neural", "networks", "learning", "results")
    top = recommend(atlas, liked, k=1)[0]
    assert re.search(r"shares keyphrases: [^;]*reinforcement learning", top.reason), top.reason


def test_exclude_keyphrase_drops_rl_papers_and_excluded_ids(atlas):
    liked = ids(atlas, RL_LIKED)
    recs = recommend(atlas, liked, k=len(atlas.papers), exclude_keyphrases=["reinforcement learning"])
    assert recs and not any(is_rl(r.paper) for r in recs)
    recs_acr = recommend(atlas, liked, k=len(atlas.papers), exclude_keyphrases=["RL"])  # the corpus's acronym
    assert {r.paper.id for r in recs_acr} == {r.paper.id for r in recs}
    first = recommend(atlas, liked, k=1)[0].paper.id
    assert first not in {r.paper.id for r in recommend(atlas, liked, k=10, exclude=[first])}


def test_exclude_topic_drops_its_papers(atlas):
    liked = ids(atlas, RL_LIKED)
    tid = find_paper(atlas, RL_LIKED[0]).topic_id
    recs = recommend(atlas, liked, k=len(atlas.papers), exclude_topics=[str(tid)])
    assert recs and all(r.paper.topic_id != tid for r in recs)


def test_disliked_papers_push_similar_ones_down(atlas):
    liked = ids(atlas, ODE_LIKED)
    base = [r.paper.id for r in recommend(atlas, liked, k=len(atlas.papers))]
    target = find_paper(atlas, ODE_OTHER).id
    other = [r.paper.id for r in recommend(atlas, liked, [target], k=len(atlas.papers))]
    assert target not in other
    # the papers nearest to the disliked one (by embedding) move down on average
    row = atlas.row_of[target]
    sims = atlas.vectors @ atlas.vectors[row]
    near = [atlas.ids[i] for i in np.argsort(-sims) if atlas.ids[i] not in {target, *liked}][:3]
    assert sum(other.index(p) for p in near) > sum(base.index(p) for p in near)


def test_baseline_ranks_all_but_the_liked():
    texts = [f"paper {i} about {'graphs nodes edges' if i < 10 else 'images pixels convolution'} topic{i % 3}"
             for i in range(30)]
    base = SvmBaseline(texts)
    rows, scores = base.rank([0, 1, 2], k=None)
    assert len(rows) == 27 and not {0, 1, 2} & set(rows.tolist())
    assert set(rows[:7].tolist()) == set(range(3, 10))  # the other graph papers first
    assert list(scores) == sorted(scores, reverse=True)


def test_recommender_on_arrays_prefers_same_cluster():
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((2, 384))
    vec = np.vstack([centers[i // 10] + 0.3 * rng.standard_normal(384) for i in range(20)]).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    texts = [("graphs nodes edges message passing" if i < 10 else "images pixels convolution filters") + f" x{i}"
             for i in range(20)]
    rows, _ = Recommender(texts, vec).rank([0, 1, 2], k=7)
    assert set(rows.tolist()) == set(range(3, 10))


def test_precision_and_ndcg_on_a_hand_made_ranking():
    ranked = [1, 9, 2, 8, 7, 6, 5, 4, 3, 0]
    relevant = {1, 2, 3}
    assert precision_at_k(ranked, relevant) == pytest.approx(0.3)
    dcg = 1 + 1 / np.log2(4) + 1 / np.log2(10)
    ideal = 1 + 1 / np.log2(3) + 1 / np.log2(4)
    assert ndcg_at_k(ranked, relevant) == pytest.approx(dcg / ideal)
    assert ndcg_at_k([1, 2, 3], relevant) == pytest.approx(1.0)
    assert ndcg_at_k([4, 5], relevant) == 0.0 and precision_at_k([4, 5], relevant) == 0.0


def test_draws_use_only_large_classes_and_repeat_with_the_seed():
    gold = ["a"] * 12 + ["b"] * 4 + ["c"] * 10
    d = draws(gold, 5, 5, seed=1)
    assert len(d) == 10 and {c for c, _ in d} == {"a", "c"}
    assert all(len(set(rows)) == 5 and all(gold[r] == c for r in rows) for c, rows in d)
    assert d == draws(gold, 5, 5, seed=1)


def test_cli_prints_recommendations_with_reasons(sample_atlas):
    args = ["recommend", "--db", str(sample_atlas), "-k", "3"]
    for t in RL_LIKED:
        args += ["--like", t]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("Because you liked: Adversarially Guided Actor-Critic")
    assert lines[1].startswith(" 1. ") and lines[2].startswith("    score ") and 'close to "' in lines[2]
    res = CliRunner().invoke(main, [*args, "--json", "--exclude-keyphrase", "reinforcement learning"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in res.output.splitlines()]
    assert len(rows) == 3 and all(r["reason"] and r["because"] for r in rows)
    res = CliRunner().invoke(main, ["recommend", "--db", str(sample_atlas)])
    assert res.exit_code != 0 and "--like" in res.output
    res = CliRunner().invoke(main, ["recommend", "--db", str(sample_atlas), "--like", "no such paper zzz"])
    assert res.exit_code != 0 and "no paper" in res.output
