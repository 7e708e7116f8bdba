"""Topic labels and keyphrases without visible slips (issue 15): an area's label describes most of its sub-topics,
"X and Y" only for phrases the same papers carry, no generic single-word keyphrases."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from conftest import FIXTURES
from paperatlas.enrich.keyphrases import GENERIC_SINGLE, single_word_ok
from paperatlas.enrich.labels import COOCCUR_MIN, label_topics
from paperatlas.store import Atlas
from paperatlas.vocab import phrase_key

AREAS = json.loads((FIXTURES / "labels_iclr_areas.json").read_text(encoding="utf-8"))["areas"]


def _area(name: str):
    papers = AREAS[name]["papers"]
    subs = sorted({p["subtopic"] for p in papers})
    children = np.array([subs.index(p["subtopic"]) for p in papers])
    return [p["keyphrases"] for p in papers], children


def _carriers(kps: list[list[str]], phrase: str) -> set[int]:
    key = phrase_key(phrase)
    return {i for i, ks in enumerate(kps) if key in {phrase_key(k) for k in ks}}


@pytest.mark.parametrize("name", ["cnn", "language"])
def test_an_area_label_is_shared_by_most_of_its_sub_topics(name):
    kps, children = _area(name)
    label, _ = label_topics(np.zeros(len(kps), dtype=int), kps, children=children)[0]
    assert label != AREAS[name]["label_before"]
    first = label.split(" and ")[0]
    carriers = _carriers(kps, first)
    # the sub-topics where the label's phrase is common hold most of the area's papers
    sizes = Counter(children.tolist())
    common = {c for c in sizes if sum(children[i] == c for i in carriers) >= max(2, 0.1 * sizes[c])}
    assert sum(sizes[c] for c in common) >= 0.5 * len(kps), (label, common, sizes)


@pytest.mark.parametrize("name", ["cnn", "language"])
def test_x_and_y_labels_only_join_phrases_the_same_papers_carry(name):
    kps, children = _area(name)
    labels = [lab for lab, _ in label_topics(children, kps)]
    labels.append(label_topics(np.zeros(len(kps), dtype=int), kps, children=children)[0][0])
    for lab in labels:
        if " and " not in lab:
            continue
        x, y = lab.split(" and ", 1)
        a, b = _carriers(kps, x), _carriers(kps, y)
        assert a and b and len(a & b) >= COOCCUR_MIN * min(len(a), len(b)), lab
    assert not any(lab.endswith("and catastrophic forgetting") and lab.startswith("Language models")
                   for lab in labels)


def test_no_generic_single_word_keyphrases_on_the_iclr_papers(sample_atlas):
    atlas = Atlas(sample_atlas)
    singles = [k for p in atlas.papers for k in p.keyphrases if " " not in k.strip()]
    assert not [k for k in singles if k.lower() in GENERIC_SINGLE]
    assert all(single_word_ok(k) for k in singles)
    # the words seen before: gone; concepts and acronyms stay
    assert not {"value", "worth", "linear", "depth", "pre-trained"} & {k.lower() for k in singles}
    assert all(single_word_ok(w) for w in ("pruning", "meta-learning", "BERT", "mixup", "zero-shot", "multilingual"))
    assert not any(single_word_ok(w) for w in ("value", "worth", "linear", "depth", "pre-trained", "model-based"))


def test_a_mixed_area_whose_only_frequent_phrase_is_generic_still_gets_a_label():
    fixture = json.loads((FIXTURES / "labels_nips_mixed_area.json").read_text(encoding="utf-8"))
    kps = [p["keyphrases"] for p in fixture["papers"]]
    children = np.array([p["subtopic"] for p in fixture["papers"]])
    label, terms = label_topics(np.zeros(len(kps), dtype=int), kps, children=children)[0]
    assert fixture["label_before"] == "Topic 1" and not label.startswith("Topic ")
    assert terms and "machine learning" not in terms
    assert len(_carriers(kps, label.split(" and ")[0])) >= 5  # a phrase several of its papers carry


@pytest.mark.parametrize("fragment", ["layer-wise", "worst-case", "model-free"])
def test_a_hyphenated_adjective_is_not_a_label_on_its_own(fragment):
    # a topic where the fragment is the most frequent phrase (8 papers), and a longer phrase starting with it is in 3:
    # too few to take its place as a fragment's extension, enough as an adjective's
    longer = {"layer-wise": "layer-wise training", "worst-case": "worst-case robustness",
              "model-free": "model-free reinforcement learning"}[fragment]
    kps = [[fragment, longer, "sample complexity"]] * 3 + [[fragment, "convergence"]] * 5 + [["image"]] * 8
    labels = [lab for lab, _ in label_topics(np.array([0] * 8 + [1] * 8), kps)]
    assert labels[0].lower() != fragment and labels[0].lower().startswith(longer), labels
