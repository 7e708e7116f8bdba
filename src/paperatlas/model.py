"""The one schema every stage speaks: :class:`Paper` and its parts.

Readers (``paperatlas.sources``) produce ``Paper`` records with the *given* fields filled (title, authors,
abstract, venue, ...). Enrichers fill the *generated* fields (TL;DR, keyphrases, topic, map coordinates),
each with the method and version that produced it. The store persists both.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields
from typing import Any

#: Link kinds recognised across readers and publishers.
LINK_KINDS = ("paper", "code", "openreview", "project", "other")

#: The statuses of accepted conference papers in the spelling :attr:`Paper.status` stores, talks first: the order
#: every page and list shows papers in.
STATUSES = ("Oral", "Spotlight", "Poster")


#: :attr:`Paper.tldr_method` of a TL;DR the authors wrote (OpenReview's TL;DR field): the build keeps it as given.
AUTHOR_TLDR = "author"

#: Keys of :attr:`Paper.extra` that readers fill with the same meaning, whatever the source (the facets of
#: :mod:`paperatlas.facets` read them). A key is absent when the source does not say: missing is never 0.
EXTRA_KEYS = {
    "ratings": "list[float]: each review's rating (OpenReview, paperlists ``rating``)",
    "rating_mean": "float: mean review rating, where only the mean is given (paperlists ``rating_avg``)",
    "confidences": "list[float]: each review's confidence",
    "decision": "str: the decision as the venue words it, e.g. 'Accept (Oral)', 'Reject'",
    "citations": "int: citation count (paperlists ``gs_citation``; Semantic Scholar, ...)",
    "doi": "str: the DOI, bare (10.xxxx/...), no https://doi.org/ prefix",
    "arxiv_id": "str: the arXiv identifier without version, e.g. '2106.09685'",
    "openreview_id": "str: the OpenReview forum id",
    "gs_citation": "int: Google Scholar citations as paperlists gives them (read by facets as citations)",
    "primary_area": "str: the venue's primary area (paperlists)",
    "institutions": "list[str]: the source's own normalised institution names (paperlists aff_unique_norm); "
                    "facets normalise them further",
    "session": "str: the session the paper is presented in, as the source names it (CSV, paperlists ``session``: "
               "'Deep Learning' at CVPR 2019, 'San Diego Poster Session 6' at NeurIPS 2025)",
    "starts_at": "str: when its presentation starts, ISO 8601 with a UTC offset, e.g. '2025-12-05T16:30:00-08:00'",
    "ends_at": "str: when it ends, same form (absent when the source gives only a start)",
    "timezone": "str: the IANA time zone the source's times are local to, e.g. 'America/Los_Angeles', where given",
    "location": "str: the room or hall, e.g. 'Exhibit Hall C,D,E'",
    "poster": "str: the poster board number or position as given, e.g. '#2504'",
}


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

    Args:
        path: The file being read.
        where: The 1-based line or 0-based record index of the problem; ``None`` or ``""`` when it concerns the
            whole file (the message then names the file only).
        problem: What is wrong.

    Attributes:
        path: The file, as a string.
        where: The line or record index as given.
        problem: What is wrong, without the location.
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

    Attributes:
        url: The URL; ``""`` for a link kind a listing names without a URL.
        kind: One of :data:`LINK_KINDS`; GitHub/GitLab URLs are ``code``.
        label: The link's text or tag in the listing, where it gives one.
    """

    url: str
    kind: str = "other"
    label: str = ""


@dataclass
class SourceRef:
    """Where a paper record came from (provenance).

    Attributes:
        format: The reader's name (a key of :data:`paperatlas.sources.READERS`).
        path: The listing file.
        line: The 1-based line where the record starts (text formats).
        record: The 0-based index in a JSON array.
        section: The curated section heading it was listed under (awesome lists).
        year_heading: The curated year heading it was listed under (awesome lists).
        native_id: The record's own id in the source (Paper Copilot JSON), where it has one.
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

    The given fields come from the listings; the generated ones (``tldr`` to ``y``) are filled by
    :func:`paperatlas.build.build`. ``id`` is assigned by :func:`paperatlas.sources.merge.merge_papers` (stable:
    derived from the normalised title).

    Attributes:
        title: Cleaned, single line.
        authors: Display names.
        abstract: Paragraphs separated by a blank line.
        venue: E.g. ``"ICLR 2021"``, ``"Nature"``, ``""``.
        year: The year, or None.
        status: ``Oral``/``Spotlight``/``Poster``/... as listed.
        track: E.g. ``main``.
        links: The paper's :class:`Link` objects.
        sources: One :class:`SourceRef` per listing it came from.
        given_keyphrases: E.g. an awesome list's ``Key Word:`` line, or author keywords.
        digest: A curator's summary.
        sections: Curated section headings it is filed under.
        affiliations: One string per author where known.
        extra: Other source fields such as ``gs_citation``.
        id: The stable paper id (see above).
        tldr: The generated TL;DR.
        tldr_method: The method and version that produced ``tldr``.
        keyphrases: Generated keyphrases.
        keyphrases_method: The method and version that produced ``keyphrases``.
        topic_id: The paper's sub-topic, a :class:`Topic` of level 1 whose ``parent_id`` is its area.
        topic_confidence: Cosine similarity, -1..1, of the paper's topic embedding to its topic's centroid.
        low_confidence: True when the paper fits no topic well and was placed in the nearest one.
        secondary_topic_ids: Other sub-topics it plainly also belongs to, best first.
        x: 2-D map coordinate, unitless.
        y: 2-D map coordinate, unitless.
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
        """All fields as plain JSON-serialisable Python values.

        Returns:
            A dict of every field, nested :class:`Link`/:class:`SourceRef` objects as dicts.
        """
        # what dataclasses.asdict gives, made field by field (asdict's generic recursion was 10 s a rebuild at 42k)
        out: dict[str, Any] = {}
        for name in _PAPER_FIELDS:
            v = getattr(self, name)
            if isinstance(v, list):
                v = [{f: getattr(x, f) for f in _FLAT_FIELDS[type(x)]} if type(x) in _FLAT_FIELDS
                     else asdict(x) if hasattr(x, "__dataclass_fields__")
                     else copy.deepcopy(x) if isinstance(x, (list, dict)) else x for x in v]
            elif isinstance(v, dict):
                v = copy.deepcopy(v)
            out[name] = v
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Paper:
        """Inverse of :meth:`to_dict`.

        Args:
            d: A dict as made by :meth:`to_dict`; unknown keys are ignored.

        Returns:
            The paper.
        """
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
    """A labelled group of papers on the map: an *area* or a *sub-topic*.

    An area has ``level`` 0 and ``parent_id`` None; a sub-topic has ``level`` 1 and ``parent_id`` = its area's id.
    Areas and sub-topics share one id space.

    Attributes:
        id: Stable across rebuilds where membership allows.
        label: A human label (1-5 words).
        size: Its number of papers (an area's is the sum of its sub-topics').
        keyphrases: The topic's top c-TF-IDF terms.
        parent_id: The area's id for a sub-topic; None for an area.
        x: The median of its papers' map x coordinates.
        y: The median of its papers' map y coordinates.
        method: Records how it was made.
        level: 0 for an area, 1 for a sub-topic.
        overview: 2-4 sentences on what its papers do together, each followed by ``[n]``, the 1-based index of
            its paper in ``overview_papers``; ``""`` when none has been made.
        overview_papers: the ids of the papers the overview cites, ``[n]`` being ``overview_papers[n - 1]``.
        overview_method: how the overview was made (``"extractive"``, a backend's name, or ``"edit"`` for a
            reader's own text).
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
    overview: str = ""
    overview_papers: list[str] = field(default_factory=list)
    overview_method: str = ""


#: the field names of :class:`Paper`, in order (:meth:`Paper.to_dict`)
_PAPER_FIELDS = tuple(f.name for f in fields(Paper))
# dataclasses of scalar fields only: their dict is asdict's without its recursion (7 s of a 42k rebuild's write)
_FLAT_FIELDS = {cls: tuple(f.name for f in fields(cls)) for cls in (Link, SourceRef)}
