"""A query word no paper uses is named, and the papers with the other words are still shown (issue 27, part 3).

On ICLR 2021, ``t-SNE visualization`` answered "No paper mentions “t-sne”, and none is close in meaning." although
69 papers mention visualization: one word no paper used dropped every paper. Now the missing word is named as typed
and the other words are searched alone, unless they are fewer than the missing ones or common enough to say little
(``federated learning`` does not list every paper saying "learning"). A query nothing is about still says so.

The small atlas is the excerpt plus three entries cut from seed 001 (the ICLR 2021 listing): ViT, a feature
visualization paper and a subspace clustering paper. Meaning tests use the real model (``sample_atlas``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, SEEDS, need
from paperatlas.build import build
from paperatlas.search import search_results
from paperatlas.store import Atlas

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_build_safety import HashEmbedder  # noqa: E402

VISUALIZATION = "Exemplary Natural Images Explain CNN Activations Better than State-of-the-Art Feature Visualization"
CLUSTERING = "A Critique of Self-Expressive Deep Subspace Clustering"
CUT = ["## [An Image is Worth 16x16 Words", "## " + VISUALIZATION, "## [" + CLUSTERING]


@pytest.fixture(scope="module")
def atlas(tmp_path_factory) -> Atlas:
    seed = need(SEEDS / "001_2614e1796f49d7fd.txt").read_text(encoding="utf-8")
    entries = []
    for head in CUT:
        start = seed.index(head)
        entries.append(seed[start:seed.index("\n## ", start + 1)])
    listing = tmp_path_factory.mktemp("misses") / "iclr2021_misses.md"
    listing.write_text((FIXTURES / "iclr2021_excerpt.md").read_text(encoding="utf-8") + "\n"
                       + "\n\n".join(entries) + "\n", encoding="utf-8")
    db = listing.with_suffix(".db")
    build([listing], db, venue="ICLR 2021", year=2021, embedder=HashEmbedder())
    return Atlas(db)


@pytest.mark.parametrize("query, missing, used, title", [
    ("t-SNE visualization", "t-SNE", "visualization", VISUALIZATION),
    ("k-means clustering", "k-means", "clustering", CLUSTERING),
    ("1x1 convolution", "1x1", "convolution", "AdaGCN: AdaBoosting Graph Convolutional Networks into Deep Models"),
])
def test_a_word_no_paper_uses_is_named_and_the_other_words_papers_are_shown(atlas, query, missing, used, title):
    res = search_results(atlas, query, mode="bm25")
    k = res.n_keyword
    assert k >= 1 and res.total == k
    assert res.message == f"No paper mentions “{missing}”; {k} mention{'s' if k == 1 else ''} “{used}”"
    assert title in [h.paper.title for h in res.hits]
    assert {h.match for h in res.hits} == {"keyword"}


def test_words_that_are_fewer_than_the_missing_ones_or_common_are_not_searched_alone(atlas):
    assert sum("learning" in f"{p.title} {p.abstract}".lower() for p in atlas.papers) > len(atlas.papers) / 4
    res = search_results(atlas, "federated learning", mode="bm25")
    assert res.hits == [] and res.message == "No paper mentions “federated”."
    res = search_results(atlas, "banana bread recipe", mode="bm25")
    assert res.hits == [] and res.message.startswith("No paper mentions “banana")


def test_every_word_used_gives_no_message(atlas):
    res = search_results(atlas, "visualization", mode="bm25")
    assert res.message == "" and VISUALIZATION in [h.paper.title for h in res.hits]


# --- with the real model: the meaning tier still runs, and a query nothing is about still says so --------------------

@pytest.fixture(scope="module")
def sample(sample_atlas) -> Atlas:
    return Atlas(sample_atlas)


@pytest.fixture(scope="module")
def embed():
    from paperatlas.enrich.embed import get_embedder

    model = get_embedder()
    return lambda q: model.encode([q])[0]


def test_the_other_words_papers_come_first_and_the_meaning_tier_still_runs(sample, embed):
    res = search_results(sample, "t-SNE reinforcement learning", embed_query=embed)
    k, m, n = res.n_keyword, res.n_meaning, res.mentioning
    assert k >= 5
    # the count is of every paper using the other words; those shown are the ones plausible in meaning too
    assert n == search_results(sample, "reinforcement learning", mode="bm25").n_keyword >= k
    assert res.message == (f"No paper mentions “t-SNE”; {n} mention “reinforcement learning”"
                           + (f", {k} of them close in meaning" if n > k else "")
                           + (f"; {m} more close in meaning" if m else ""))
    tiers = [h.match for h in res.hits]
    assert tiers == sorted(tiers, key=["keyword", "partial", "meaning"].index)
    assert all("reinforcement" in f"{h.paper.title} {h.paper.abstract} {h.paper.tldr}".lower()
               for h in res.hits if h.match != "meaning")


def test_a_short_technical_query_with_no_keyword_match_gets_marked_meaning_hits(sample, embed):
    res = search_results(sample, "ConvNets", embed_query=embed)
    assert res.n_keyword == 0 and res.total >= 1
    assert {h.match for h in res.hits} == {"meaning"}
    assert res.message == "No paper mentions “ConvNets”; nearest by meaning:"


@pytest.mark.parametrize("query, named", [
    ("grokking", "grokking"), ("banana bread recipe", "banana bread"), ("federated learning", "federated"),
    # the other word is in 9 abstracts, none about earthquakes: the papers that only say it are not shown
    ("earthquake prediction", "earthquake")])
def test_a_query_nothing_is_about_still_says_so(sample, embed, query, named):
    res = search_results(sample, query, embed_query=embed)
    assert res.hits == [] and res.total == 0
    assert res.message == f"No paper mentions “{named}”, and none is close in meaning."


def test_a_short_term_stands_out_of_its_background_only_when_its_nearest_papers_do():
    import numpy as np

    from paperatlas.search.shapes import MEANING_MIN_COSINE, meaning_floor
    from paperatlas.search.terms import Term

    rng = np.random.default_rng(0)
    background = rng.normal(0.06, 0.058, 860).astype(np.float32)  # k-means on ICLR 2021: mean 0.06, sd 0.058
    unused = [Term("k-means", "k-means", np.zeros(0, np.int32), 7.0)]
    # nothing stands out: the usual floor, so no paper is a meaning match
    assert meaning_floor(background, unused) == MEANING_MIN_COSINE
    # three papers well above the rest (the third 4 deviations out, where 2.7 are expected by chance): the floor drops
    standout = background.copy()
    standout[:3] = [0.31, 0.30, 0.29]
    floor = meaning_floor(standout, unused)
    assert 0.2 < floor <= 0.29
    # not for a word some paper uses, nor for two words
    used = [Term("k-means", "k-means", np.arange(3, dtype=np.int32), 5.0)]
    assert meaning_floor(standout, used) == MEANING_MIN_COSINE
    assert meaning_floor(standout, unused * 2) == MEANING_MIN_COSINE
