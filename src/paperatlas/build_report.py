"""What a build reports, when it is refused, and the text hashes that decide what a rebuild may reuse.

:class:`BuildReport`, :class:`BuildRefused` and :func:`check_not_a_wipe`, :func:`content_hash`, :func:`text_hash`.
Split out of :mod:`paperatlas.build`, which re-exports these names.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from .enrich.embed import paper_text
from .model import Paper
from .store.keyphrase_counts import hash_text


class BuildRefused(ValueError):
    """A build that would wipe (most of) an atlas without ``replace=True``; nothing was written.

    The message names the atlas, the counts and the ``--replace`` flag (``replace=True``).
    """


def check_not_a_wipe(db: str | Path, n_new: int, old_ids: set[str], new_ids: set[str]) -> None:
    """Raise :class:`BuildRefused` when a build of ``n_new`` papers would empty or mostly replace the atlas.

    Args:
        db: The atlas file (named in the message).
        n_new: Papers the listings yield (after merging).
        old_ids: Ids of the papers now in the atlas (empty for a new atlas).
        new_ids: Ids of the papers the build would store.

    Raises:
        BuildRefused: ``n_new`` is 0, or fewer than half of ``old_ids`` are in ``new_ids``.
    """
    flag = "pass --replace to do it anyway"
    if n_new == 0:
        what = f"replace its {len(old_ids)} papers with none" if old_ids else "build an empty atlas"
        raise BuildRefused(f"{db}: the listings yield 0 papers; refusing to {what}; {flag}")
    kept = len(old_ids & new_ids)
    if old_ids and 2 * kept < len(old_ids):
        raise BuildRefused(f"{db}: this build would keep {kept} of the atlas's {len(old_ids)} papers ({n_new} papers "
                           f"in the listings); refusing to replace it; {flag}")


@dataclass
class BuildReport:
    """What a build did: per-stage wall time (seconds), counts, and peak resident memory (MiB).

    Attributes:
        n_read: records read from the sources (before merging).
        n_papers: papers after merging.
        n_embedded: papers embedded by this build.
        n_reused: papers whose stored embedding was reused.
        n_resumed: of those, papers whose vector an interrupted build had made.
        n_tldr_reused: papers whose TL;DR the last build made from the same text (kept, not recomputed).
        n_keyphrases_reused: papers whose keyphrases were kept (same text, and at most 25% of the papers new or
            changed: keyphrase scores depend on corpus counts).
        n_topics: sub-topics.
        n_areas: areas.
        topic_mode: how the topics were made: "fit" (first build), "refit" (fresh, matched to the old ids) or
            "update".
        topics_kept_share: share of the papers already in the atlas that keep their topic id (None on a first
            build).
        n_low_confidence: papers marked low-confidence in their topic.
        labels_rejected: topic id -> why its generated label was not used (only with a label backend).
        n_labels_generated: topic labels rewritten by the label backend.
        n_with_secondary: papers with at least one secondary topic.
        n_overviews_computed: topics whose overview this build made (the others kept the last build's).
        stage_seconds: stage name -> wall time, seconds.
        worker_seconds: per-paper stage -> seconds, summed over the engine's workers.
        per_paper_seconds: wall time of the per-paper stages together, seconds.
        peak_rss_mib: peak resident memory of the process, MiB.
        peak_rss_by_stage: stage -> peak resident memory when the stage ended, MiB.
        keyphrase_stats: "fit" (counted over the whole corpus) or "update" (the last build's counts, updated).
        build_number: this build's number in the atlas's history (:mod:`paperatlas.store.history`).
        n_new: papers no earlier build of the atlas had (``paperatlas new`` lists them).
        notes: one-line remarks for the reader (e.g. the neighbour index needs USearch).
        topic_edits_not_applied: the reader's topic renames/moves whose topic is gone, one line a kind (in notes).
    """

    n_read: int = 0
    n_papers: int = 0
    build_number: int = 0
    n_new: int = 0
    n_embedded: int = 0
    n_reused: int = 0
    #: of the reused vectors, those an interrupted build had made (the resume file, :mod:`paperatlas.store.resume`)
    n_resumed: int = 0
    #: papers whose TL;DR / keyphrases the last build made from the same text and this one kept
    n_tldr_reused: int = 0
    n_keyphrases_reused: int = 0
    n_topics: int = 0
    n_areas: int = 0
    #: how the topics were made: "fit" (first build), "refit" (fresh, matched to the old ids) or "update"
    topic_mode: str = ""
    #: share of the papers already in the atlas that keep their topic id (None on a first build)
    topics_kept_share: float | None = None
    n_low_confidence: int = 0
    #: topic id -> why its generated label was not used (only with a label backend)
    labels_rejected: dict[int, str] = field(default_factory=dict)
    n_labels_generated: int = 0
    n_with_secondary: int = 0
    n_overviews_computed: int = 0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    #: embed / keyphrases / tldr -> seconds spent in them, summed over the engine's workers
    worker_seconds: dict[str, float] = field(default_factory=dict)
    #: wall time of the per-paper stages (embedding, keyphrases, TL;DRs) together, seconds
    per_paper_seconds: float = 0.0
    peak_rss_mib: float = 0.0
    #: stage -> peak resident memory of the process when the stage ended, MiB (the first stage at the final peak
    #: is the one that set it; "per-paper" is the embedding, keyphrase and TL;DR work together)
    peak_rss_by_stage: dict[str, float] = field(default_factory=dict)
    #: the embedding's arithmetic and why (:func:`paperatlas.enrich.embed.precision_note`); empty when nothing was
    #: embedded
    precision: str = ""
    #: how the keyphrase statistics were made: "fit" (the whole corpus) or "update" (the last build's, updated)
    keyphrase_stats: str = ""
    #: what the reader should know (e.g. an index that could not be made)
    notes: list[str] = field(default_factory=list)
    topic_edits_not_applied: list[str] = field(default_factory=list)

    @property
    def total_seconds(self) -> float:
        """Sum of the stage times, seconds."""
        return sum(self.stage_seconds.values())

    def stage_table(self) -> list[str]:
        """The stage table as printed after a build: one line per stage row, then the total.

        Columns: the stage, its wall time (s), its share of the total (%) and the peak resident memory when it
        ended (MiB; blank on the rows only the per-paper stage writes, ``embed``, ``tldr`` and
        :data:`~paperatlas.build_stages.PREPARE`: its peak shows on the row after them).
        """
        total = self.total_seconds or 1.0
        width = max([len(k) for k in self.stage_seconds] + [5])
        lines = [f"{'stage':<{width}}  {'s':>7}  {'share':>6}  {'peak MiB':>8}"]
        for k, v in self.stage_seconds.items():
            rss = self.peak_rss_by_stage.get(k)
            lines.append(f"{k:<{width}}  {v:7.1f}  {v / total:6.1%}  " + (f"{rss:8,.0f}" if rss else f"{'':8}"))
        lines.append(f"{'total':<{width}}  {self.total_seconds:7.1f}  {'':6}  {self.peak_rss_mib:8,.0f}")
        return lines


def content_hash(p: Paper) -> str:
    """SHA-1 of the embedded text (title + abstract): a paper is re-embedded only when this changes.

    Args:
        p: the paper.

    Returns:
        The hex digest of :func:`paperatlas.enrich.embed.paper_text`.
    """
    return hashlib.sha1(paper_text(p.title, p.abstract).encode()).hexdigest()


def text_hash(p: Paper) -> str:
    """SHA-1 of the text keyphrases and TL;DR are made from (title + abstract, or the digest without abstract).

    Args:
        p: the paper.

    Returns:
        The hex digest.
    """
    return hash_text(p.title, p.abstract or p.digest)
