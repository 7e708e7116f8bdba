"""The one schema every stage speaks: :class:`Paper` and its parts.

Readers (``paperatlas.sources``) produce ``Paper`` records with the *given* fields filled (title, authors,
abstract, venue, ...). Enrichers fill the *generated* fields (TL;DR, keyphrases, topic, map coordinates),
each with the method and version that produced it. The store persists both.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: Link kinds recognised across readers and publishers.
LINK_KINDS = ("paper", "code", "openreview", "project", "other")

#: The statuses of accepted conference papers in the spelling :attr:`Paper.status` stores, talks first: the order
#: every page and list shows papers in.
STATUSES = ("Oral", "Spotlight", "Poster")


def status_rank(status: str | None) -> int:
    """Sort rank of a status, talks first.

    Case and surrounding whitespace do not matter: ``"Oral"``, ``"oral"`` and ``" Oral "`` all rank 0.

    Args:
        status: a status as a listing states it (:attr:`Paper.status`), or ``None``.

    Returns:
        Its index in :data:`STATUSES` (0 Oral, 1 Spotlight, 2 Poster); ``len(STATUSES)`` (3) for anything else,
        including ``""``.
    """
    key = (status or "").strip().lower()
    return next((i for i, s in enumerate(STATUSES) if s.lower() == key), len(STATUSES))


class SourceError(ValueError):
    """A reader could not make sense of its input.

    The message always names the file, the line (1-based) or record index (0-based), and what is wrong,
    e.g. ``seeds/001.txt:812: paper heading without an author line``.
    """

    def __init__(self, path: str, where: str | int | None, problem: str):
        self.path = str(path)
        self.where = where
        self.problem = problem
        loc = f"{self.path}:{where}" if where not in (None, "") else self.path
        super().__init__(f"{loc}: {problem}")


@dataclass
class Link:
    """A URL attached to a paper.

    ``kind`` is one of :data:`LINK_KINDS`; GitHub/GitLab URLs are ``code``.
    """

    url: str
    kind: str = "other"
    label: str = ""


@dataclass
class SourceRef:
    """Where a paper record came from (provenance).

    ``line`` is the 1-based line where the record starts (text formats); ``record`` the 0-based index in a JSON
    array. ``section`` and ``year_heading`` are the curated headings it was listed under (awesome lists).
    """

    format: str
    path: str
    line: int | None = None
    record: int | None = None
    section: str = ""
    year_heading: str = ""
    native_id: str = ""


@dataclass
class Paper:
    """One paper: given fields from a listing plus generated fields from enrichment.

    Given fields
        ``title`` (cleaned, single line), ``authors`` (list of display names), ``abstract`` (paragraphs separated
        by a blank line), ``venue`` (e.g. ``"ICLR 2021"``, ``"Nature"``, ``""``), ``year`` (int or None),
        ``status`` (``Oral``/``Spotlight``/``Poster``/... as listed), ``track`` (e.g. ``main``), ``links``,
        ``sources`` (one :class:`SourceRef` per listing it came from), ``given_keyphrases`` (e.g. an awesome list's
        ``Key Word:`` line, or author keywords), ``digest`` (a curator's summary), ``sections`` (curated section
        headings it is filed under), ``affiliations`` (one string per author where known), ``extra`` (other
        source fields such as ``gs_citation``).

    Generated fields (filled by :func:`paperatlas.build.build`)
        ``tldr`` + ``tldr_method``, ``keyphrases`` + ``keyphrases_method``, ``topic_id`` (the paper's sub-topic,
        a :class:`Topic` of level 1 whose ``parent_id`` is its area), ``topic_confidence`` (cosine similarity,
        -1..1, of the paper's topic embedding to its topic's centroid), ``low_confidence`` (True when the paper
        fits no topic well and was placed in the nearest one), ``secondary_topic_ids`` (other sub-topics it
        plainly also belongs to, best first), ``x``/``y`` (2-D map coordinates, unitless).

    ``id`` is assigned by :func:`paperatlas.dedup.assign_ids` (stable: derived from the normalised title).
    """

    title: str
    authors: list[str] = field(default_factory=list)
    abstract: str = ""
    venue: str = ""
    year: int | None = None
    status: str = ""
    track: str = ""
    links: list[Link] = field(default_factory=list)
    sources: list[SourceRef] = field(default_factory=list)
    given_keyphrases: list[str] = field(default_factory=list)
    digest: str = ""
    sections: list[str] = field(default_factory=list)
    affiliations: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    # generated
    tldr: str = ""
    tldr_method: str = ""
    keyphrases: list[str] = field(default_factory=list)
    keyphrases_method: str = ""
    topic_id: int | None = None
    topic_confidence: float | None = None
    low_confidence: bool = False
    secondary_topic_ids: list[int] = field(default_factory=list)
    x: float | None = None
    y: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """All fields as plain JSON-serialisable Python values."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Paper:
        """Inverse of :meth:`to_dict` (unknown keys are ignored)."""
        d = dict(d)
        d["links"] = [Link(**x) for x in d.get("links") or []]
        d["sources"] = [SourceRef(**x) for x in d.get("sources") or []]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})

    @property
    def code_url(self) -> str:
        """The first ``code`` link's URL, or ``""``."""
        return next((link.url for link in self.links if link.kind == "code"), "")

    @property
    def paper_url(self) -> str:
        """The first paper/OpenReview/project link's URL, or ``""``."""
        for kind in ("paper", "openreview", "project", "other"):
            for link in self.links:
                if link.kind == kind:
                    return link.url
        return ""


@dataclass
class Topic:
    """A labelled group of papers on the map: an *area* (``level`` 0, ``parent_id`` None) or a *sub-topic*
    (``level`` 1, ``parent_id`` = its area's id). Areas and sub-topics share one id space.

    ``id`` is stable across rebuilds where membership allows; ``label`` is a human label (1-5 words);
    ``keyphrases`` the topic's top c-TF-IDF terms; ``size`` its number of papers (an area's is the sum of its
    sub-topics'); ``x``/``y`` the median of its papers' map coordinates; ``method`` records how it was made.
    """

    id: int
    label: str
    size: int = 0
    keyphrases: list[str] = field(default_factory=list)
    parent_id: int | None = None
    x: float = 0.0
    y: float = 0.0
    method: str = ""
    level: int = 1
