"""Label–name agreement: do our topic labels name the gold classes the way their curators did (issue 28)?

The gold papers go through the build's own topic pipeline (:func:`build_topics`): keyphrase statistics fitted on
the whole set (:func:`paperatlas.enrich.keyphrase_stats.fit`), each paper's label terms (its keyphrases then its
best other candidate phrases, :func:`paperatlas.engines.work.annotate_batch`), then
:func:`paperatlas.enrich.topics.update_topics` on the MiniLM embeddings: the same areas, sub-topics and labels a
build of these papers gives (a first build: no previous atlas).

For each gold class (:func:`agreement_rows`), the topic at the level nearest the class count
(:func:`paperatlas.eval.filing.nearest_level`) that holds most of the class's papers (a tie goes to the topic seen
first in paper order) is the class's topic; its label is compared with the class name by

* **token overlap** (:func:`token_overlap`): Jaccard similarity of the two sets of content-word stems: lower-cased
  words (runs of letters and digits; hyphens and ``&`` split words), stop words out (scikit-learn's English list
  plus ``via``, ``et``, ``al`` ...: :data:`paperatlas.vocab.STOP`), each through the light stemmer
  :func:`paperatlas.vocab.stem` (plurals, ``-ation``, ``-ing``, ``-ize`` ...);
* **embedding similarity**: cosine of the all-MiniLM-L6-v2 embeddings of label and class name (the evaluations'
  embedder, :func:`paperatlas.eval.topic_eval.embed_texts`, L2-normalised, so the dot product).

Class names are curators' folder names and some are not subjects (``Deep Learning``, ``Machine Learning II``,
``Applications, Medical, & Robotics``), so a perfect score is not reachable; the figures compare labelling
methods on the same papers.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .gold_sets import GoldPaper

_WORD = re.compile(r"[a-z0-9]+")


def content_stems(text: str) -> set[str]:
    """The content-word stems of a label or a class name.

    Args:
        text: Any text.

    Returns:
        The :func:`paperatlas.vocab.stem` of every lower-cased word (a run of letters and digits) that is not in
        :data:`paperatlas.vocab.STOP` and not a bare number.
    """
    from ..vocab import STOP, stem

    return {stem(w) for w in _WORD.findall(text.lower()) if w not in STOP and not w.isdigit()}


def token_overlap(a: str, b: str) -> float:
    """Jaccard similarity of the content-word stems of two names (:func:`content_stems`).

    Args:
        a: A label.
        b: A class name.

    Returns:
        ``|A ∩ B| / |A ∪ B|`` in [0, 1]; 0.0 when both have no content word.
    """
    sa, sb = content_stems(a), content_stems(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


# --------------------------------------------------------------------------------------------------- the build's labels
def label_terms(papers: Sequence[GoldPaper]) -> list[list[str]]:
    """The label evidence a build gives each paper: keyphrases then the best other candidate phrases.

    Args:
        papers: The gold papers (title, abstract or digest).

    Returns:
        One list of phrases per paper (:func:`paperatlas.engines.work.annotate_batch`'s ``label_terms``, with
        the keyphrase statistics fitted on these papers as a first build fits them).
    """
    from ..engines.work import WorkItem, annotate_batch
    from ..enrich import keyphrase_stats

    kx = keyphrase_stats.fit((p.title, p.text) for p in papers)
    items = [WorkItem(row=i, title=p.title, text=p.text, abstract=p.text, embed=False, tldr=False)
             for i, p in enumerate(papers)]
    res = annotate_batch(items, kx)
    return [t or [] for t in res.label_terms]


@dataclass
class BuiltTopics:
    """What a build of the gold papers files them under.

    Attributes:
        area: ``(n,)`` int area index per paper (0..).
        leaf: ``(n,)`` int sub-topic index per paper (0..).
        area_labels: label per area index.
        leaf_labels: label per sub-topic index.
    """

    area: np.ndarray
    leaf: np.ndarray
    area_labels: list[str]
    leaf_labels: list[str]

    def level(self, name: str) -> tuple[np.ndarray, list[str]]:
        """``(assignment, labels)`` of ``"areas"`` or ``"sub-topics"``."""
        return (self.area, self.area_labels) if name == "areas" else (self.leaf, self.leaf_labels)


def build_topics(papers: Sequence[GoldPaper], embeddings: np.ndarray, terms: list[list[str]],
                 seed: int = 42) -> BuiltTopics:
    """Areas, sub-topics and labels of the gold papers, by :func:`paperatlas.enrich.topics.update_topics`.

    Args:
        papers: The gold papers.
        embeddings: ``(n, 384)`` float32 MiniLM embeddings of :func:`paperatlas.enrich.embed.paper_text`.
        terms: Label evidence per paper (:func:`label_terms`; empty lists give the clustering with poor labels).
        seed: Seed of LSA, k-means and UMAP.

    Returns:
        The :class:`BuiltTopics` (topic ids renumbered 0.. in id order per level).
    """
    from ..enrich.embed import paper_text
    from ..enrich.topics import update_topics

    ids = [f"g{i}" for i in range(len(papers))]
    res = update_topics(ids, np.asarray(embeddings, dtype=np.float32), [paper_text(p.title, p.text) for p in papers],
                        terms, seed=seed)
    topics = {t.id: t for t in res.topics}
    leaf_ids = sorted(t.id for t in res.topics if t.level == 1)
    area_ids = sorted(t.id for t in res.topics if t.level == 0)
    leaf_index = {tid: j for j, tid in enumerate(leaf_ids)}
    area_index = {tid: j for j, tid in enumerate(area_ids)}
    leaf = np.array([leaf_index[int(t)] for t in res.topic_id], dtype=int)
    area = np.array([area_index[topics[int(t)].parent_id] for t in res.topic_id], dtype=int)
    return BuiltTopics(area, leaf, [topics[t].label for t in area_ids], [topics[t].label for t in leaf_ids])


# --------------------------------------------------------------------------------------------------- agreement
def class_topics(gold: Sequence[str], pred: Sequence[int]) -> dict[str, tuple[int, int, int]]:
    """The topic holding most of each gold class's papers.

    Args:
        gold: ``(n,)`` gold classes.
        pred: ``(n,)`` topic per paper.

    Returns:
        ``class -> (topic, papers of the class in it, papers of the class)``, classes largest first (then by
        name); a tie between topics goes to the one seen first in paper order.
    """
    by_class: dict[str, Counter] = defaultdict(Counter)
    for g, p in zip(gold, pred, strict=True):
        by_class[g][int(p)] += 1
    out = {}
    for g in sorted(by_class, key=lambda c: (-sum(by_class[c].values()), c)):
        topic, held = by_class[g].most_common(1)[0]
        out[g] = (topic, held, sum(by_class[g].values()))
    return out


def agreement_rows(gold: Sequence[str], pred: Sequence[int], labels: Sequence[str],
                   embed: Callable[[list[str]], np.ndarray]) -> list[dict]:
    """Score each gold class's name against the label of its topic.

    Args:
        gold: ``(n,)`` gold classes.
        pred: ``(n,)`` topic index per paper (at the level nearest the class count).
        labels: Label per topic index.
        embed: Texts -> ``(len, dim)`` L2-normalised embeddings (MiniLM in the command).

    Returns:
        One dict per class, largest first: ``class``, ``topic`` (index of its topic), ``label`` (its topic's),
        ``held`` (share of the class's papers in that topic), ``n`` (papers of the class), ``overlap``
        (:func:`token_overlap`) and ``cosine`` (embedding similarity).
    """
    ct = class_topics(gold, pred)
    names = list(ct)
    shown = [labels[ct[c][0]] for c in names]
    if not names:
        return []
    vecs = np.asarray(embed(names + shown), dtype=np.float32)
    cos = np.sum(vecs[: len(names)] * vecs[len(names):], axis=1)
    return [{"class": c, "topic": ct[c][0], "label": lab, "held": ct[c][1] / ct[c][2], "n": ct[c][2],
             "overlap": token_overlap(lab, c), "cosine": float(s)}
            for c, lab, s in zip(names, shown, cos.tolist(), strict=True)]


def mean_agreement(rows: list[dict]) -> dict:
    """Macro means over classes of :func:`agreement_rows`.

    Returns:
        ``overlap`` and ``cosine`` means (0.0 for no rows), ``exact`` (share of classes whose label shares every
        content stem with the class name, overlap 1) and ``distinct`` (distinct topics among the classes' topics
        / classes: 1.0 when every class has a topic of its own, lower when classes share one).
    """
    if not rows:
        return {"overlap": 0.0, "cosine": 0.0, "exact": 0.0, "distinct": 0.0}
    return {"overlap": float(np.mean([r["overlap"] for r in rows])),
            "cosine": float(np.mean([r["cosine"] for r in rows])),
            "exact": float(np.mean([r["overlap"] == 1.0 for r in rows])),
            "distinct": len({r["topic"] for r in rows}) / len(rows)}
