"""Reader for the Paper Copilot ``paperlists`` JSON format: one JSON array of paper objects per file, maybe gzipped.

A file such as ``data/paperlists/iclr/iclr2021.json.gz``.

Field mapping: ``title``; ``author`` (``;``-separated) → authors; ``aff`` (``;``-separated) → affiliations;
``status`` (Poster/Oral/Spotlight/Technical/...) → status; ``track`` → track; ``abstract``; ``keywords``
(``;``-separated) → given_keyphrases; ``site``/``pdf``/``openreview``/``arxiv`` → paper links, ``github`` →
code link; ``gs_citation``, ``primary_area``, ``doi`` → ``extra``. Venue and year come from the file name
(``iclr2021.json`` → ``ICLR 2021``) unless given as hints.
"""

from __future__ import annotations

import json

from ..model import Link, Paper, SourceError, SourceRef
from ..text import classify_link
from ._common import venue_from_filename

FORMAT = "paperlists-json"


def sniff(head: str) -> bool:
    """Whether a file is in this format.

    Args:
        head: the start of the file's text (the first 20,000 characters).

    Returns:
        True when it starts like a JSON array and a ``"title"`` key occurs in its first 5,000 characters.
    """
    s = head.lstrip()
    return s.startswith("[") and '"title"' in s[:5000]


def _split(value) -> list[str]:
    if not value:
        return []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [v.strip() for v in str(value).split(";") if v.strip()]


def read_text(text: str, path: str, venue: str | None = None, year: int | None = None, **_hints) -> list[Paper]:
    """Parse one paperlists JSON document into :class:`Paper` records, in array order.

    Args:
        text: the file's whole text (already decompressed).
        path: the file's path: provenance, error messages, and the venue and year when not given
            (:func:`._common.venue_from_filename` with ``any_venue``: ``iclr2021.json`` -> ``ICLR 2021``).
        venue: the venue of every paper, e.g. ``"ICLR 2021"`` (default: from the file name, else ``""``).
        year: the year of every paper (default: from the file name, else ``None``).
        **_hints: other hints, ignored.

    Returns:
        One paper per array element (fields as in the module docstring; ``id`` left for
        :func:`paperatlas.sources.merge.merge_papers`).

    Raises:
        SourceError: naming the file and line (invalid JSON) or record index (``file:record 12``) when the JSON
            is invalid, is not an array, a record is not an object, or a record lacks a title.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SourceError(path, e.lineno, f"invalid JSON: {e.msg} (column {e.colno})") from e
    if not isinstance(data, list):
        raise SourceError(path, None, f"expected a JSON array of papers, got {type(data).__name__}")
    fv, fy = venue_from_filename(path, any_venue=True)
    venue = venue if venue is not None else fv
    year = year if year is not None else fy
    papers: list[Paper] = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise SourceError(path, f"record {i}", f"expected an object, got {type(rec).__name__}")
        title = " ".join(str(rec.get("title") or "").split())
        if not title:
            raise SourceError(path, f"record {i}", "missing or empty 'title'")
        links: list[Link] = []
        for key in ("site", "openreview", "pdf", "arxiv", "project"):
            for url in _split(rec.get(key)):
                if url.startswith("http") and all(link.url != url for link in links):
                    kind = classify_link(url)
                    links.append(Link(url=url, kind="paper" if kind == "other" else kind, label=key))
        for url in _split(rec.get("github")):
            if url.startswith("http"):
                links.append(Link(url=url, kind="code", label="github"))
        extra = {k: rec[k] for k in ("gs_citation", "primary_area", "doi") if rec.get(k) not in (None, "", -1)}
        papers.append(Paper(
            title=title,
            authors=_split(rec.get("author")),
            abstract=str(rec.get("abstract") or "").strip(),
            venue=venue or "",
            year=year,
            status=str(rec.get("status") or "").strip(),
            track=str(rec.get("track") or "").strip(),
            links=links,
            sources=[SourceRef(format=FORMAT, path=path, record=i, native_id=str(rec.get("id") or ""))],
            given_keyphrases=_split(rec.get("keywords")),
            affiliations=_split(rec.get("aff")),
            extra=extra,
        ))
    return papers
