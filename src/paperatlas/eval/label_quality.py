"""``paperatlas eval labels``: how well each topic label of an atlas names its papers, and the worst labels (issue 28).

No gold data: a label is judged against the atlas's own papers, read as a boolean query over their text.

* **Paper text**: title + abstract (the curator's digest when there is no abstract), reduced to its set of
  content-word stems (:func:`paperatlas.eval.label_agreement.content_stems`: lower-cased words, stop words out,
  the light stemmer :func:`paperatlas.vocab.stem`).
* **A paper matches a label** when its text holds every content stem of the label, or, for a label naming two
  subjects (``"Fine-tuning and natural language processing"``: parts split at ``and``, ``or``, ``,``, ``;``,
  ``&``, ``/``), every content stem of at least one part (:func:`label_parts`). A label without content words
  matches nothing.
* **specificity** = matching papers of the whole atlas / all papers. High = too broad (the label names much more
  than its topic). A topic's own share of the atlas is the lowest a label that names all its papers can have.
* **coverage** = matching papers of the topic / the topic's papers (an area's papers are those of its
  sub-topics). Low = the label does not name its papers.
* **precision** = matching papers of the topic / matching papers of the atlas (0 when nothing matches).
* **score** = the F1 of precision and coverage, ``2PC / (P + C)`` in [0, 1] (0 when both are 0): how well the
  label, used as a search, would find exactly its topic's papers. Too broad lowers P, not naming the papers
  lowers C. The worst labels are those with the lowest score (ties: the larger topic first).

The **largest area's share** is the largest area's papers / all papers with a topic; the issue's goal is at most
15 % for an atlas of 500 papers or more (a researcher's filing has no catch-all folder).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .label_agreement import content_stems

#: the largest area may hold at most this share of an atlas of at least :data:`AREA_GOAL_MIN_PAPERS` papers
AREA_GOAL_SHARE = 0.15
AREA_GOAL_MIN_PAPERS = 500
_PARTS = re.compile(r"\s+(?:and|or)\s+|[,;&/]", re.IGNORECASE)


def label_parts(label: str) -> list[frozenset[str]]:
    """The subjects a label names, each as its set of content-word stems.

    Args:
        label: A topic label.

    Returns:
        One stem set per part (split at ``and``, ``or``, ``,``, ``;``, ``&``, ``/``), parts without content
        words dropped; empty when the label has no content word.
    """
    parts = [frozenset(content_stems(p)) for p in _PARTS.split(label)]
    return [p for p in parts if p]


def matches(parts: Sequence[frozenset[str]], stems: set[str] | frozenset[str]) -> bool:
    """Whether a paper's text (its stem set) holds every stem of at least one part of a label."""
    return any(p <= stems for p in parts)


@dataclass
class LabelScore:
    """The quality of one topic's label.

    Attributes:
        topic_id: The topic's id.
        label: Its label.
        level: 0 for an area, 1 for a sub-topic.
        size: Its papers in the atlas.
        specificity: Share of all papers the label matches, in [0, 1] (high = too broad).
        coverage: Share of its own papers the label matches, in [0, 1] (low = does not name them).
        precision: Share of the matching papers that are its own, in [0, 1].
        score: F1 of precision and coverage, in [0, 1].
    """

    topic_id: int
    label: str
    level: int
    size: int
    specificity: float
    coverage: float
    precision: float
    score: float


def score_labels(papers: Sequence[tuple[str, int | None]], topics: Sequence[tuple[int, str, int, int | None]]
                 ) -> list[LabelScore]:
    """Score every topic's label against the papers' texts.

    Args:
        papers: ``(text, sub-topic id or None)`` per paper; text = title + abstract (or digest).
        topics: ``(id, label, level, parent id or None)`` per topic; a paper belongs to its sub-topic and to
            that sub-topic's parent.

    Returns:
        One :class:`LabelScore` per topic with at least one paper, in the order given.
    """
    parent = {tid: pid for tid, _, _, pid in topics}
    stems = [content_stems(text) for text, _ in papers]
    members: dict[int, list[int]] = {}
    for i, (_, tid) in enumerate(papers):
        for t in (tid, parent.get(tid) if tid is not None else None):
            if t is not None:
                members.setdefault(t, []).append(i)
    n = len(papers)
    out = []
    for tid, label, level, _ in topics:
        own = members.get(tid, [])
        if not own:
            continue
        parts = label_parts(label)
        hit = [matches(parts, s) for s in stems] if parts else [False] * n
        n_hit = sum(hit)
        own_hit = sum(hit[i] for i in own)
        cov = own_hit / len(own)
        prec = own_hit / n_hit if n_hit else 0.0
        f1 = 2 * prec * cov / (prec + cov) if prec + cov else 0.0
        out.append(LabelScore(tid, label, level, len(own), n_hit / n if n else 0.0, cov, prec, f1))
    return out


def worst(scores: Sequence[LabelScore], k: int = 10) -> list[LabelScore]:
    """The ``k`` labels with the lowest score (ties: larger topic first, then lower id)."""
    return sorted(scores, key=lambda s: (s.score, -s.size, s.topic_id))[:k]


def largest_area_share(scores: Sequence[LabelScore], n_papers: int) -> tuple[float, LabelScore | None]:
    """The largest area's share of the papers.

    Args:
        scores: :func:`score_labels` (areas are level 0; without areas, every topic counts).
        n_papers: Papers with a topic.

    Returns:
        ``(share in [0, 1], the area)``; ``(0.0, None)`` without topics.
    """
    areas = [s for s in scores if s.level == 0] or list(scores)
    if not areas or not n_papers:
        return 0.0, None
    top = max(areas, key=lambda s: (s.size, -s.topic_id))
    return top.size / n_papers, top


def atlas_label_scores(atlas) -> tuple[list[LabelScore], int]:
    """Score the labels of an open atlas.

    Args:
        atlas: A :class:`paperatlas.store.Atlas`.

    Returns:
        ``(scores, papers with a topic)``; every paper of the atlas counts for specificity.
    """
    papers = [(f"{p.title}. {p.abstract or p.digest or ''}", p.topic_id) for p in atlas.papers]
    topics = [(t.id, t.label, t.level, t.parent_id) for t in atlas.topics.values()]
    return score_labels(papers, topics), sum(1 for p in atlas.papers if p.topic_id in atlas.topics)


#: ``(attribute, heading, format)`` of the label table
COLUMNS = [("level", "level", "{}"), ("topic_id", "id", "{}"), ("size", "papers", "{}"), ("label", "label", "{}"),
           ("specificity", "specificity", "{:.1%}"), ("coverage", "coverage", "{:.1%}"),
           ("precision", "precision", "{:.1%}"), ("score", "score", "{:.3f}")]


def format_scores(scores: Sequence[LabelScore]) -> str:
    """Format label scores as a table (level, id, papers, label, specificity, coverage, precision, score).

    Returns:
        Header, rule and one line per score, no final newline.
    """
    head = [h for _, h, _ in COLUMNS]
    body = [[("area" if s.level == 0 else "sub-topic") if k == "level" else f.format(getattr(s, k))
             for k, _, f in COLUMNS] for s in scores]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(COLUMNS))]
    left = {0, 3}

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i in left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths), *(fmt(b) for b in body)])


def summary(scores: Sequence[LabelScore], n_papers: int) -> list[str]:
    """The lines under the table: mean scores per level and the largest area's share with its goal.

    Args:
        scores: :func:`score_labels`.
        n_papers: Papers with a topic.

    Returns:
        Lines: mean score, specificity and coverage of the areas and of the sub-topics; the largest area's share
        and whether it meets :data:`AREA_GOAL_SHARE` (or that the goal applies only from
        :data:`AREA_GOAL_MIN_PAPERS` papers).
    """
    lines = []
    for level, name in ((0, "areas"), (1, "sub-topics")):
        group = [s for s in scores if s.level == level]
        if group:
            m = len(group)
            spec, cov = sum(s.specificity for s in group) / m, sum(s.coverage for s in group) / m
            lines.append(f"{name} ({m}): mean score {sum(s.score for s in group) / m:.3f}, specificity {spec:.1%}, "
                         f"coverage {cov:.1%}")
    share, top = largest_area_share(scores, n_papers)
    if top is not None:
        if n_papers >= AREA_GOAL_MIN_PAPERS:
            goal = f"goal <= {AREA_GOAL_SHARE:.0%}: {'yes' if share <= AREA_GOAL_SHARE else 'no'}"
        else:
            goal = f"goal <= {AREA_GOAL_SHARE:.0%} applies from {AREA_GOAL_MIN_PAPERS} papers"
        lines.append(f"largest area: {top.label!r}, {top.size} of {n_papers} papers = {share:.1%} ({goal})")
    return lines
