"""A 20-paper library exported from Zotero (issue 28): its topics and labels come from the papers' own words.

``fixtures/small20.bib`` holds 7 diffusion-model papers (Sohl-Dickstein et al. 2015, DDIM, score-based SDEs,
DiffWave, composable diffusion, preconditioned diffusion sampling, discriminator guidance), 7 reinforcement
learning papers (TRPO, A3C, dueling DQN, TD3, SAC, BCQ, offline RL as anti-exploration) and 6 graph neural network
papers (ChebNet, MPNN, GraphSAGE, JK-Net, DiffPool, SGC), cut with their abstracts from ../shared (the ICLR 2021
seed and the paperlists JSON of ICML, NeurIPS, ECCV, AISTATS, AAAI) and written as Zotero's BibTeX export writes
them (braced capitals, ``\\$`` and ``{\\textbackslash}`` escapes). Before issue 28 DDPM-style papers landed under
*Natural language supervision*; here no label may name a subject none of its papers has.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter

import numpy as np
import pytest

from conftest import FIXTURES
from paperatlas.enrich.embed import paper_text
from paperatlas.enrich.labels import label_topics
from paperatlas.sources import read
from paperatlas.store import Atlas

BIB = FIXTURES / "small20.bib"
#: words that say a text is about each subject (a label naming it uses one of them)
SUBJECTS = {"diffusion": re.compile(r"diffus|score", re.I),
            "rl": re.compile(r"reinforcement|polic|agent|\bRL\b|actor|q-learning", re.I),
            "graph": re.compile(r"graph", re.I)}


#: the two fixture papers whose titles name no word of their subject
UNNAMED = {"Deep Unsupervised Learning using Nonequilibrium Thermodynamics": "diffusion",
           "Neural Message Passing for Quantum Chemistry": "graph"}


def _subject(title: str) -> str:
    """The subject of a fixture paper, from its title (the RL papers are those that name no other subject)."""
    if title in UNNAMED:
        return UNNAMED[title]
    hits = [s for s in ("diffusion", "graph") if SUBJECTS[s].search(title)]
    assert len(hits) <= 1, title
    return hits[0] if hits else "rl"


@pytest.fixture(scope="module")
def small_atlas(tmp_path_factory):
    from paperatlas.build import build

    db = tmp_path_factory.mktemp("small") / "small20.db"
    build([BIB], db)
    return db


def test_the_zotero_export_reads_as_twenty_papers_with_abstracts():
    papers = read(BIB)
    assert len(papers) == 20
    assert all(len(p.abstract) > 500 and p.authors and p.year for p in papers)
    assert Counter(_subject(p.title) for p in papers) == {"diffusion": 7, "rl": 7, "graph": 6}
    sde = next(p for p in papers if p.title.startswith("Score-Based"))
    assert "$1024 \\times 1024$" in sde.abstract  # Zotero's escapes undone, the math kept


def _labels_on_gold(db) -> list[tuple[str, str]]:
    """``(subject, label)`` of each subject when the 20 papers are filed by subject (the labels alone judged)."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT p.title, p.abstract, t.terms FROM papers p JOIN paper_terms t ON t.paper_id = p.id "
                       "ORDER BY p.id").fetchall()
    subjects = sorted(SUBJECTS)
    assign = np.array([subjects.index(_subject(title)) for title, _, _ in rows])
    labels = label_topics(assign, [json.loads(terms) for _, _, terms in rows],
                          texts=[paper_text(title, abstract) for title, abstract, _ in rows])
    return [(subjects[j], label) for j, (label, _terms) in enumerate(labels)]


def test_each_subject_of_twenty_papers_is_named_by_its_label(small_atlas):
    for subject, label in _labels_on_gold(small_atlas):
        assert SUBJECTS[subject].search(label), (subject, label)
        others = [s for s in SUBJECTS if s != subject and SUBJECTS[s].search(label)]
        assert not others, (subject, label)


def _shown_topics(atlas: Atlas):
    """The topics a reader browses: the areas, or the sub-topics of the only area."""
    areas = atlas.areas()
    return areas if len(areas) > 1 else atlas.subtopics(areas[0].id)


def test_no_label_names_a_subject_none_of_its_papers_has(small_atlas):
    atlas = Atlas(small_atlas)
    for topic in atlas.topics.values():
        ids = {topic.id} | {t.id for t in atlas.topics.values() if t.parent_id == topic.id}
        have = {_subject(p.title) for p in atlas.papers if p.topic_id in ids}
        named = {s for s, pat in SUBJECTS.items() if pat.search(topic.label)}
        assert named <= have, (topic.label, named, have)


def test_twenty_papers_of_three_subjects_make_two_to_five_topics_each_named_by_its_subject(small_atlas):
    atlas = Atlas(small_atlas)
    shown = _shown_topics(atlas)
    assert 2 <= len(shown) <= 5, [t.label for t in shown]
    for topic in shown:
        ids = {topic.id} | {t.id for t in atlas.topics.values() if t.parent_id == topic.id}
        subjects = Counter(_subject(p.title) for p in atlas.papers if p.topic_id in ids)
        subject, n = subjects.most_common(1)[0]
        assert n >= 0.75 * sum(subjects.values()), (topic.label, subjects)
        assert SUBJECTS[subject].search(topic.label), (topic.label, subjects)
