"""Topic navigation on a built atlas: which topics a reference names, a topic's papers, and its nearest topics.

The topics themselves (hierarchy, labels, map) are made at build time by :mod:`paperatlas.enrich.topics`; this
module only reads them from an :class:`~paperatlas.store.Atlas`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .model import Paper, Topic, status_rank
from .store import Atlas


def resolve_topics(atlas: Atlas, refs: Iterable[str]) -> set[int]:
    """Topic ids named by ``refs``, with the sub-topics of every area among them.

    Args:
        atlas: the built atlas.
        refs: each a topic id or a case-insensitive substring of topic labels; blank references are ignored.

    Returns:
        The matching topic ids (an unknown numeric id is kept as given).
    """
    ids: set[int] = set()
    for ref in refs:
        ref = str(ref).strip()
        if ref.isdigit():
            ids.add(int(ref))
        elif ref:
            ids |= {t.id for t in atlas.topics.values() if ref.lower() in t.label.lower()}
    return ids | {t.id for t in atlas.topics.values() if t.parent_id in ids}


def by_status(p: Paper) -> tuple[int, str]:
    """Sort key putting Oral before Spotlight before Poster before anything else, then by title.

    The status order is :func:`model.status_rank <paperatlas.model.status_rank>`.

    Args:
        p: a paper.

    Returns:
        ``(status rank, case-folded title)``.
    """
    return (status_rank(p.status), p.title.casefold())


def topic_members(atlas: Atlas, topic_id: int) -> tuple[list[Paper], list[Paper]]:
    """The papers of a topic, each list ordered Oral → Spotlight → Poster → other, then title.

    Args:
        atlas: the built atlas.
        topic_id: an area or sub-topic id.

    Returns:
        ``(papers, also)``: ``papers`` are those filed under it (an area: under any of its sub-topics), ``also``
        those carrying it as a secondary topic (sub-topics only).
    """
    ids = {topic_id} | {t.id for t in atlas.topics.values() if t.parent_id == topic_id}
    members = sorted((p for p in atlas.papers if p.topic_id in ids), key=by_status)
    also = sorted((p for p in atlas.papers if topic_id in p.secondary_topic_ids and p.topic_id not in ids),
                  key=by_status)
    return members, also


def topic_centroids(atlas: Atlas) -> dict[int, np.ndarray]:
    """Mean embedding of each topic's papers (areas and sub-topics).

    Args:
        atlas: the built atlas (its stored paper vectors).

    Returns:
        ``topic id -> (dim,) float32`` L2-normalised mean embedding of its papers.
    """
    sums: dict[int, np.ndarray] = {}
    row_of = atlas.row_of
    for pid, tid in atlas.fields("id", "topic_id"):  # atlas.ids order (a large atlas: read by column)
        row = row_of.get(pid)
        if row is None or tid is None:
            continue
        for t in {tid, getattr(atlas.area_of(tid), "id", tid)}:
            sums[t] = sums.get(t, 0) + atlas.vectors[row]
    return {t: v / (np.linalg.norm(v) or 1.0) for t, v in sums.items()}


def nearest_topics(atlas: Atlas, topic_id: int, k: int = 5) -> list[tuple[Topic, float]]:
    """The ``k`` topics of the same level nearest to ``topic_id`` by cosine of their mean paper embeddings.

    Args:
        atlas: the built atlas (the centroids are cached as a derived value of it).
        topic_id: an area or sub-topic id.
        k: how many topics to return.

    Returns:
        ``(topic, cosine)`` pairs, most similar first; empty when the topic has no embedded papers or is unknown.
    """
    cents = atlas.derived("topic centroids", lambda: topic_centroids(atlas))
    me, t0 = cents.get(topic_id), atlas.topics.get(topic_id)
    if me is None or t0 is None:
        return []
    scored = [(float(me @ v), atlas.topics[t]) for t, v in cents.items()
              if t != topic_id and t in atlas.topics and atlas.topics[t].level == t0.level]
    return [(t, s) for s, t in sorted(scored, key=lambda st: (-st[0], st[1].id))[:k]]
