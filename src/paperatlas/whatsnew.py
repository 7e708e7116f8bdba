"""What's new for me: the papers a rebuild added, ranked for this reader, by topic (``paperatlas new``).

Every build records which papers no earlier build had (:mod:`paperatlas.store.history`). :func:`whats_new` takes
the papers of one build (default: the last build that added any), ranks them for the reader's likes and dislikes
with the recommender of *For you* (:func:`paperatlas.recommend.recommend`: same scores, same reasons), groups them
by sub-topic (groups in the order of their best paper), and adds the topics that grew or appeared with them and the
new papers by authors of papers the reader liked. A topic "grew" when it gained share beyond chance: a one-sided
binomial test (``scipy.stats.binomtest``) of its new papers among its papers, against the atlas's share of new papers,
gives p < :data:`GROWTH_P`.

Without likes there is no ranking to follow, so the digest is spread over the topics rather than filled with the
first ``limit`` papers of one (:func:`_spread`): the topics that grew beyond chance come first (in the order of
:attr:`Digest.grown`), then the others by how many new papers they hold (on a first build, where every paper is new
and nothing "grew", that is by size alone), and each topic gives at most :attr:`Digest.per_topic` papers (about
``limit`` / number of topics, at least :data:`MIN_PER_TOPIC`): its Orals, then Spotlights, then the rest, each tier
the most central first (topic confidence), papers that fit no topic well last. :attr:`Digest.shown_note` says so. On
the ICLR 2021 listing (860 papers, 34 sub-topics, one build) the 50 shown came from one topic before (*Bounds*);
now from 17 topics, 3 each (the 17th 2): 34 Orals, 14 Spotlights, 2 Posters.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from . import readinglist
from .authors import atlas_authors
from .model import Paper, Topic
from .store import Atlas
from .store.history import BuildEntry, builds, first_builds

#: The p-value below which a sub-topic counts as grown (one-sided binomial test; see :func:`_growth`).
GROWTH_P = 0.05

#: The fewest papers one topic may give a digest without likes when ``limit`` cuts it (see :func:`_spread`).
MIN_PER_TOPIC = 3


@dataclass
class NewPaper:
    """One new paper of the digest.

    Attributes:
        paper: The paper.
        rank: 1-based position in the digest's ranking.
        score: The recommender's score (a sum of z-scores, higher is better); None without likes.
        reason: Why it is ranked here (the recommender's reason, or its topic without likes).
    """

    paper: Paper
    rank: int
    score: float | None
    reason: str


@dataclass
class TopicGrowth:
    """How much one sub-topic grew with the build, against the atlas as a whole.

    Attributes:
        topic: The sub-topic.
        n_new: Its papers new in the build.
        n_before: Its papers that earlier builds had.
        excess: ``n_new`` minus the new papers it would have got had it grown as the atlas did
            (observed − expected, in papers; > 0 for a topic that gained share).
        p_value: One-sided binomial test (``scipy.stats.binomtest``, ``alternative="greater"``) of ``n_new``
            successes in ``n_new + n_before`` trials at the atlas's share of new papers: how likely a topic that
            grew as the atlas did would gain this much share by chance.
    """

    topic: Topic
    n_new: int
    n_before: int
    excess: float = 0.0
    p_value: float = 1.0

    @property
    def appeared(self) -> bool:
        """Whether every paper of the topic is new."""
        return self.n_before == 0

    @property
    def growth(self) -> float:
        """New papers per paper it had before (``n_new / n_before``; ``inf`` for a topic that appeared)."""
        return self.n_new / self.n_before if self.n_before else float("inf")


@dataclass
class Digest:
    """The reader's digest of one build.

    Attributes:
        build: The build whose new papers these are (None when the atlas recorded no build).
        n_new: Papers new in it (all of them, also past ``limit``).
        papers: The new papers shown (at most the ``limit`` asked for): with likes the recommender's best first;
            without likes a few per topic, topic by topic (see the module docstring).
        groups: ``(sub-topic or None, its new papers)``, in the order of each group's best paper.
        grown: Sub-topics that gained share with the build beyond chance (``p_value`` < :data:`GROWTH_P`):
            appeared ones first, then by ``p_value`` (empty for the first build, where every topic is new).
        n_tested: Sub-topics the growth test ran on (those with new papers); about ``GROWTH_P * n_tested`` of
            them would pass by chance alone.
        atlas_growth: New papers per paper the atlas had before (``n_new / (n_papers - n_new)``).
        by_liked_authors: ``(author, their new papers)`` for authors of papers the reader liked, most papers first.
        n_liked: Liked papers the ranking used.
        per_topic: Without likes, the most papers one topic gives ``papers`` (see :func:`_spread`); None when
            the recommender ranked them (with likes).
        n_topics: Topics among all the new papers (papers without a topic count as one more).
    """

    build: BuildEntry | None
    n_new: int
    papers: list[NewPaper] = field(default_factory=list)
    groups: list[tuple[Topic | None, list[NewPaper]]] = field(default_factory=list)
    grown: list[TopicGrowth] = field(default_factory=list)
    by_liked_authors: list[tuple[str, list[Paper]]] = field(default_factory=list)
    n_liked: int = 0
    atlas_growth: float = 0.0
    n_tested: int = 0
    per_topic: int | None = None
    n_topics: int = 0

    @property
    def shown_note(self) -> str:
        """Which of the new papers ``papers`` holds, when not all of them (else ``""``); one phrase, no final stop.

        E.g. ``"the best 50 of 860"`` (ranked for likes) or ``"50 of the 860 new papers: up to 3 from each of 17
        of their 25 topics, those with the most new papers first; in each, Orals and Spotlights, then the most
        central"`` (without likes).
        """
        shown = len(self.papers)
        if shown >= self.n_new:
            return ""
        if self.per_topic is None:
            return f"the best {shown} of {self.n_new}"
        n_groups = len(self.groups)
        which = f"their {n_groups}" if n_groups == self.n_topics else f"{n_groups} of their {self.n_topics}"
        order = ("those that grew beyond chance first, then those with the most new papers" if self.grown
                 else "those with the most new papers first")
        inside = "Orals and Spotlights, then the most central" if any(_status_tier(n.paper) < 2 for n in self.papers) \
            else "the most central first"
        return (f"{shown} of the {self.n_new} new papers: up to {self.per_topic} from each of {which} topics, "
                f"{order}; in each, {inside}")

    @property
    def growth_note(self) -> str:
        """How :attr:`grown` was chosen, with the number of topics that would pass by chance (one sentence)."""
        return (f"These gained share beyond chance: a one-sided binomial test of each topic's new papers against "
                f"the atlas's growth (+{self.atlas_growth:.0%}) gives p < {GROWTH_P:g}. Of the {self.n_tested} topics "
                f"with new papers, about {GROWTH_P * self.n_tested:.0f} would pass by chance alone.")

    @property
    def everything_new(self) -> bool:
        """Whether every paper of the atlas came with this build (its first build): all of them are new."""
        return self.build is not None and self.n_new > 0 and self.build.n_papers == self.n_new

    @property
    def everything_new_note(self) -> str:
        """What to say when :attr:`everything_new`: why every paper is listed, and when that changes (else ``""``)."""
        if not self.everything_new:
            return ""
        return (f"Every paper of the atlas came with build {self.build.id}, so all {self.n_new} are new. Build "
                "again with a newer listing (paperatlas build old.json new.json) and only the papers it adds show "
                "here.")


def new_builds(atlas: Atlas) -> list[BuildEntry]:
    """The recorded builds of ``atlas`` that added papers, oldest first.

    Args:
        atlas: The atlas.

    Returns:
        The entries (empty for an atlas built before builds were recorded, until its next build).
    """
    return [b for b in builds(atlas.con) if b.n_new > 0]


def whats_new(atlas: Atlas, build: int | None = None, limit: int | None = 50,
              liked: list[str] | None = None, disliked: list[str] | None = None) -> Digest:
    """The digest of the papers that build ``build`` added, ranked for the reader (see the module docstring).

    Args:
        atlas: The atlas.
        build: A build number (:class:`~paperatlas.store.history.BuildEntry` ``id``); None for the last build that
            added papers.
        limit: The most papers in ``papers`` and ``groups`` (None: all); ``n_new`` and ``grown`` count all.
        liked: Liked paper ids; None to read the reader's likes from the atlas.
        disliked: Disliked paper ids; None to read them from the atlas.

    Returns:
        The :class:`Digest` (empty when no recorded build added papers).

    Raises:
        ValueError: ``build`` is not a recorded build of the atlas.
    """
    from .recommend import recommend

    recorded = builds(atlas.con)
    if build is None:
        chosen = next((b for b in reversed(recorded) if b.n_new > 0), None)
    else:
        chosen = next((b for b in recorded if b.id == build), None)
        if chosen is None:
            known = ", ".join(str(b.id) for b in recorded) or "none"
            raise ValueError(f"no build {build} in this atlas's history (recorded builds: {known})")
    if chosen is None:
        return Digest(None, 0)
    first = first_builds(atlas.con)
    new = [p for p in atlas.papers if first.get(p.id) == chosen.id]
    new_ids = {p.id for p in new}
    if liked is None or disliked is None:
        got_liked, got_disliked = readinglist.ratings(atlas.con)
        liked = got_liked if liked is None else liked
        disliked = got_disliked if disliked is None else disliked
    liked = [pid for pid in liked if pid in atlas.by_id]
    disliked = [pid for pid in disliked if pid in atlas.by_id]
    k = len(new) if limit is None else min(limit, len(new))
    ranked: list[NewPaper] = []
    if liked and new:
        old_ids = [pid for pid in atlas.ids if pid not in new_ids]
        recs = recommend(atlas, liked, disliked, k=k, exclude=old_ids)
        ranked = [NewPaper(r.paper, i + 1, r.score, r.reason) for i, r in enumerate(recs)]
        # what the recommender never returns (papers the reader rated already, papers without an embedding)
        seen = {n.paper.id for n in ranked}
        rated = {pid: "you liked it already" for pid in liked} | {pid: "you disliked it" for pid in disliked}
        for p in new:
            if len(ranked) < k and p.id not in seen:
                ranked.append(NewPaper(p, len(ranked) + 1, None, rated.get(p.id, "new (no embedding to rank it)")))
    before = len(atlas.papers) - len(new)
    grown, n_tested = _growth(atlas, new_ids) if before else ([], 0)
    per_topic = None
    if not ranked:  # no likes (or none embedded): a few papers from each topic, those that grew first
        order, per_topic = _spread(new, k, [g.topic.id for g in grown])
        ranked = [NewPaper(p, i + 1, None, f"new in {atlas.topic_label(p.topic_id)}"
                           if p.topic_id is not None else "new") for i, p in enumerate(order)]
    groups: dict[int | None, list[NewPaper]] = {}
    for n in ranked:
        groups.setdefault(n.paper.topic_id, []).append(n)
    return Digest(chosen, len(new), ranked,
                  [(atlas.topics.get(tid) if tid is not None else None, members) for tid, members in groups.items()],
                  grown, _by_liked_authors(atlas, liked, new), len(liked),
                  len(new) / before if before else float("inf"), n_tested, per_topic,
                  len({p.topic_id for p in new}))


def _status_tier(p: Paper) -> int:
    """0 for an Oral, 1 for a Spotlight, 2 for any other status (``Poster``, none, ...), from ``p.status``."""
    status = p.status.lower()
    return 0 if "oral" in status else 1 if "spotlight" in status else 2


def _spread(new: list[Paper], k: int, grown: list[int]) -> tuple[list[Paper], int]:
    """The ``k`` new papers a digest without likes shows: a few from each topic, topic after topic.

    Topics come in the order of ``grown`` (those that gained share beyond chance), then by their number of new papers
    (most first; ties by topic id), papers without a topic last. Each topic gives at most ``cap`` papers: the least
    cap of at least :data:`MIN_PER_TOPIC` and ``ceil(k / number of topics)`` with which the topics hold ``k`` papers
    (a larger cap only when small topics cannot fill their share). Within a topic: Orals, then Spotlights, then the
    rest (:func:`_status_tier`), each tier by topic confidence (most central first), papers that fit no topic well
    (``low_confidence``) after the others.

    Args:
        new: The new papers.
        k: How many to show (at most ``len(new)``).
        grown: Ids of the topics that grew, in the order to show them.

    Returns:
        ``(the papers in display order, grouped by topic, cap)``; ``cap`` is 0 when ``new`` is empty.
    """
    by_topic: dict[int | None, list[Paper]] = {}
    for p in new:
        by_topic.setdefault(p.topic_id, []).append(p)
    if not by_topic:
        return [], 0
    rank_grown = {tid: i for i, tid in enumerate(grown)}
    order = sorted(by_topic, key=lambda tid: (tid is None, rank_grown.get(tid, len(rank_grown)),
                                              -len(by_topic[tid]), tid if tid is not None else 0))
    cap = max(MIN_PER_TOPIC, math.ceil(k / len(order)))
    while sum(min(cap, len(ps)) for ps in by_topic.values()) < k:
        cap += 1
    out: list[Paper] = []
    for tid in order:
        members = sorted(by_topic[tid], key=lambda p: (p.low_confidence, _status_tier(p),
                                                       -(p.topic_confidence or 0.0), p.title, p.id))
        out += members[:min(cap, k - len(out))]
        if len(out) >= k:
            break
    return out, cap


def _growth(atlas: Atlas, new_ids: set[str]) -> tuple[list[TopicGrowth], int]:
    """The sub-topics that gained share beyond chance, and how many were tested.

    A topic's expected new papers are its size times the atlas's share of new papers (what it would have got had
    every topic grown alike). A topic with more is tested: a one-sided binomial test of its new papers among its
    papers at that share (:attr:`TopicGrowth.p_value`); those with p < :data:`GROWTH_P` are listed, appeared ones
    first, then by p. On NeurIPS 2017 + 2018, 35 of 68 topics had more new papers than expected and 5 pass.

    Returns:
        ``(grown topics, number of topics with new papers)``.
    """
    from scipy.stats import binomtest

    n_new: Counter = Counter()
    n_old: Counter = Counter()
    for p in atlas.papers:
        if p.topic_id is not None:
            (n_new if p.id in new_ids else n_old)[p.topic_id] += 1
    share = len(new_ids) / max(len(atlas.papers), 1)
    tested = [tid for tid in n_new if tid in atlas.topics]
    out = []
    for tid in tested:
        n, old = n_new[tid], n_old[tid]
        excess = n - share * (n + old)
        if excess > 0:
            p = float(binomtest(n, n + old, share, alternative="greater").pvalue)
            if p < GROWTH_P:
                out.append(TopicGrowth(atlas.topics[tid], n, old, excess, p))
    return sorted(out, key=lambda g: (not g.appeared, g.p_value, g.topic.id)), len(tested)


def _by_liked_authors(atlas: Atlas, liked: list[str], new: list[Paper]) -> list[tuple[str, list[Paper]]]:
    """``(author, new papers)`` for the authors of liked papers who have new papers, most papers first."""
    if not liked or not new:
        return []
    index = atlas_authors(atlas)
    keys = {k for pid in liked for _, k in index.keys_of(atlas.by_id[pid]) if k}
    found: dict[str, list[Paper]] = {}
    for p in new:
        for _, k in index.keys_of(p):
            if k in keys and p not in found.setdefault(k, []):
                found[k].append(p)
    return sorted(((index.entries[k].name, ps) for k, ps in found.items()), key=lambda x: (-len(x[1]), x[0]))
