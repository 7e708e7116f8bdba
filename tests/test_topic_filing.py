"""Topic filing: no area takes over a large atlas, and a small library gets a few topics of its own subjects."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from paperatlas.enrich import hierarchy
from paperatlas.enrich.embed import paper_text
from paperatlas.enrich.hierarchy import AREA_CAP_MIN_PAPERS, MAX_AREA_SHARE, fit_hierarchy, small_corpus_k
from paperatlas.enrich.text_space import _l2, fit_text_space

FIXTURES = Path(__file__).parent / "fixtures"


def _papers() -> list[dict]:
    papers = json.loads((FIXTURES / "icml2019_200.json").read_text())
    for name in ("nips2018_200.json.gz", "nips2017_160.json.gz"):
        papers += json.loads(gzip.decompress((FIXTURES / name).read_bytes()))
    return papers


def _papers_texts() -> list[str]:
    return [paper_text(p["title"], p.get("abstract") or "") for p in _papers()]


def _lsa(texts: list[str]) -> np.ndarray:
    """The lexical half of the topic embedding alone (no model needed): (n, k) float32, L2-normalised."""
    space = fit_text_space(texts)
    return _l2(space.svd.transform(space.vectorizer.transform(texts)).astype(np.float32))


def test_no_area_holds_more_than_its_share_of_a_large_atlas(monkeypatch):
    x = _lsa(_papers_texts())
    n = len(x)
    assert n >= AREA_CAP_MIN_PAPERS
    h = fit_hierarchy(x)
    assert np.bincount(h.area).max() <= MAX_AREA_SHARE * n
    monkeypatch.setattr(hierarchy, "MAX_AREA_SHARE", 1.0)  # k-means alone puts more in its largest area
    assert np.bincount(fit_hierarchy(x).area).max() > MAX_AREA_SHARE * n
    # nesting holds and every sub-topic keeps papers
    assert np.array_equal(h.area, h.parent[h.leaf]) and set(h.leaf.tolist()) == set(range(len(h.parent)))


def test_a_small_library_gets_one_topic_per_subject():
    """Three subjects of a 24-paper cut (ICML 2019, NeurIPS 2017/2018): 2-5 topics, each mostly one subject."""
    papers = _papers()
    subjects = {"reinforcement": "rl", "policy": "rl", "graph": "graph", "privacy": "privacy", "private": "privacy"}
    picked: dict[str, list[dict]] = {"rl": [], "graph": [], "privacy": []}
    for p in papers:
        title = p["title"].lower()
        hits = {s for w, s in subjects.items() if w in title}
        if len(hits) == 1 and len(picked[s := hits.pop()]) < 8:
            picked[s].append(p)
    chosen = [(s, p) for s, ps in picked.items() for p in ps]
    assert len(chosen) == 24
    x = _lsa([paper_text(p["title"], p.get("abstract") or "") for _, p in chosen])
    assert 2 <= small_corpus_k(x) <= 5
    h = fit_hierarchy(x)
    assert 2 <= len(h.parent) <= 5
    gold = [s for s, _ in chosen]
    for t in range(len(h.parent)):
        members = [gold[i] for i in np.flatnonzero(h.leaf == t)]
        top = max(set(members), key=members.count)
        assert members.count(top) >= 0.6 * len(members), members
