"""Topic overviews (``Topic.overview``, issue 29 part 3) scored without gold data.

Do they cite the topic's own papers, how many, do their sentences repeat one another, are they copied from the
papers they cite.

An overview is 2-4 sentences, each followed by ``[n]`` (one or more), ``[n]`` being ``Topic.overview_papers[n-1]``
(:func:`parse_overview`). Per overview (:func:`score_overview`):

* ``in_topic``: the share of its cited papers that belong to the topic (a sub-topic: papers whose ``topic_id`` is
  it; an area: papers of any of its sub-topics, or filed under the area itself);
* ``cited``: the distinct papers it cites;
* ``redundancy``: the largest content-word Jaccard index (:func:`paperatlas.text.content_words`, stop words out)
  over its sentence pairs (0 for one sentence): 1.0 = two sentences with the same words;
* ``traced``: its sentences found verbatim (whitespace collapsed) in the abstract, TL;DR or digest of a paper
  they cite (:func:`traceable`); a sentence with a ``[n]`` beyond ``overview_papers``
  is not traceable;
* ``oral``: the share of its cited papers that are Oral or Spotlight (the overview prefers them).

:func:`overview_rows` averages them over areas, sub-topics and all topics; :func:`sample` picks overviews to read
and judge by hand (``paperatlas eval ask --overview-sample 10``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable

import numpy as np

from ..text import content_words, jaccard
from ..vocab import STOP

_CITED = re.compile(r"(.+?)((?:\s*\[\d+\])+)(?=\s|$)", re.DOTALL)


def _norm(text: str) -> str:
    return " ".join(text.split())


def traceable(sentence: str, paper) -> bool:
    """True when ``sentence`` occurs verbatim (whitespace collapsed) in ``paper``'s abstract, TL;DR or digest.

    The check of both evaluations (answers, :mod:`.ask_eval`, and overviews): a sentence is true to its source
    when it is copied from it.
    """
    s = _norm(sentence)
    return bool(s) and any(s in _norm(t or "") for t in (paper.abstract, paper.tldr, paper.digest))


def parse_overview(text: str) -> list[tuple[str, list[int]]]:
    """Split an overview into its sentences and their citation numbers.

    Args:
        text: e.g. ``"Papers study X. [1] They find Y. [2][3]"``.

    Returns:
        ``[(sentence, [n, ...]), ...]`` in order, each sentence stripped and without its markers; text after the
        last marker (an uncited tail) is a sentence with no numbers.
    """
    out, end = [], 0
    for m in _CITED.finditer(text):
        s = m.group(1).strip()
        if s:
            out.append((s, [int(n) for n in re.findall(r"\d+", m.group(2))]))
        end = m.end()
    tail = text[end:].strip()
    if tail:
        out.append((tail, []))
    return out


def members(topic, topics: dict, papers: Iterable) -> set[str]:
    """The ids of ``topic``'s papers: its own (a sub-topic), or its sub-topics' and its own (an area)."""
    ids = {topic.id} | ({t.id for t in topics.values() if t.parent_id == topic.id} if topic.level == 0 else set())
    return {p.id for p in papers if p.topic_id in ids}


def score_overview(topic, topics: dict, by_id: dict, papers: list) -> dict:
    """The metrics of the module docstring for one topic with an overview.

    Args:
        topic: a :class:`paperatlas.model.Topic` whose ``overview`` is not empty.
        topics: the atlas's topics by id.
        by_id: ``paper id -> Paper``.
        papers: all papers (for :func:`members`).

    Returns:
        ``id``, ``label``, ``level``, ``size``, ``sentences``, ``traced`` (counts), ``cited`` (distinct papers),
        ``in_topic``, ``oral`` (shares of the cited papers, None when it cites none) and ``redundancy``.
    """
    sents = parse_overview(topic.overview)
    refs = list(topic.overview_papers)
    cited = list(dict.fromkeys(refs[n - 1] for _s, ns in sents for n in ns if 1 <= n <= len(refs)))
    mine = members(topic, topics, papers)
    traced = sum(any(1 <= n <= len(refs) and refs[n - 1] in by_id and traceable(s, by_id[refs[n - 1]]) for n in ns)
                 for s, ns in sents)
    words = [content_words(s, STOP) for s, _ns in sents]
    red = max((jaccard(words[i], words[j]) for i in range(len(words)) for j in range(i)), default=0.0)
    statuses = [(by_id[c].status or "").lower() for c in cited if c in by_id]
    return {"id": topic.id, "label": topic.label, "level": topic.level, "size": topic.size,
            "sentences": len(sents), "traced": traced, "cited": len(cited),
            "in_topic": sum(c in mine for c in cited) / len(cited) if cited else None,
            "oral": sum(s in ("oral", "spotlight") for s in statuses) / len(statuses) if statuses else None,
            "redundancy": red}


def overview_scores(atlas) -> list[dict]:
    """:func:`score_overview` of every topic of ``atlas`` that has an overview (areas first, then by id)."""
    papers = atlas.papers
    return [score_overview(t, atlas.topics, atlas.by_id, papers)
            for t in sorted(atlas.topics.values(), key=lambda t: (t.level, t.id)) if t.overview]


def overview_rows(scores: list[dict], n_topics: dict[str, int]) -> list[dict]:
    """Means of :func:`overview_scores` for areas, sub-topics and all.

    Args:
        scores: per-overview scores.
        n_topics: how many topics there are per group (``"areas"``, ``"sub-topics"``, ``"all"``), for coverage.

    Returns:
        Rows ``group``, ``topics``, ``with`` (topics with an overview), ``in_topic``, ``cited``, ``redundancy``,
        ``oral`` (means over overviews), ``traceable`` (share of all their sentences), ``sentences`` (mean).
    """
    rows = []
    for g, levels in (("areas", (0,)), ("sub-topics", (1,)), ("all", (0, 1))):
        ss = [s for s in scores if s["level"] in levels]
        n_s = sum(s["sentences"] for s in ss)

        def mean(key: str, ss=ss) -> float | None:
            xs = [s[key] for s in ss if s[key] is not None]
            return float(np.mean(xs)) if xs else None

        rows.append({"group": g, "topics": n_topics.get(g, 0), "with": len(ss), "in_topic": mean("in_topic"),
                     "cited": mean("cited"), "redundancy": mean("redundancy"), "oral": mean("oral"),
                     "traceable": sum(s["traced"] for s in ss) / n_s if n_s else None,
                     "sentences": mean("sentences")})
    return rows


def topic_counts(atlas) -> dict[str, int]:
    """Topics per group of :func:`overview_rows`."""
    levels = [t.level for t in atlas.topics.values()]
    return {"areas": levels.count(0), "sub-topics": levels.count(1), "all": len(levels)}


COLUMNS = [("group", "topics", "{}"), ("topics", "n", "{}"), ("with", "with overview", "{}"),
           ("in_topic", "cites own papers", "{:.3f}"), ("cited", "distinct cited", "{:.2f}"),
           ("redundancy", "redundancy", "{:.3f}"), ("traceable", "traceable", "{:.3f}"),
           ("sentences", "sents", "{:.2f}"), ("oral", "oral/spotlight", "{:.3f}")]


def sample(atlas, n: int = 10, seed: int = 0) -> list[str]:
    """``n`` overviews picked at random (seeded; areas and sub-topics alike) as text to read and judge.

    Returns:
        Per overview a block of lines: ``#id label (area|sub-topic, size)``, the overview, then each cited
        paper's ``[n] title``.
    """
    topics = sorted((t for t in atlas.topics.values() if t.overview), key=lambda t: t.id)
    picked = sorted(random.Random(seed).sample(topics, min(n, len(topics))), key=lambda t: (t.level, t.id))
    out = []
    for t in picked:
        lines = [f"#{t.id} {t.label} ({'area' if t.level == 0 else 'sub-topic'}, {t.size} papers; "
                 f"{t.overview_method or '?'})", f"  {t.overview}"]
        for i, pid in enumerate(t.overview_papers, 1):
            p = atlas.by_id.get(pid)
            lines.append(f"  [{i}] {p.title if p else pid + ' (not in the atlas)'}")
        out.append("\n".join(lines))
    return out
