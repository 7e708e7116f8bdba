"""Reader for the Paper Copilot ``paperlists`` JSON format: one JSON array of paper objects per file, maybe gzipped.

A file such as ``data/paperlists/iclr/iclr2021.json.gz``.

Field mapping: ``title``; ``author`` (``;``-separated) → authors; ``aff`` (``;``-separated) → affiliations;
``status`` (Poster/Oral/Spotlight/Technical/...) → status; ``track`` → track; ``abstract``; ``keywords``
(``;``-separated) → given_keyphrases; ``site``/``pdf``/``openreview``/``arxiv`` → paper links, ``github`` →
code link; ``gs_citation``, ``primary_area`` → ``extra``; the review scores ``rating`` and ``confidence``
(``"5;7;7;7"``) → ``extra["ratings"]``/``extra["confidences"]`` (``rating_avg`` → ``extra["rating_mean"]`` when
there are no per-review scores), ``gs_citation`` → ``extra["citations"]`` (-1 or empty: missing), ``doi`` →
``extra["doi"]`` (bare), the ``arxiv`` link's id → ``extra["arxiv_id"]``, and Paper Copilot's normalised
institution names ``aff_unique_norm`` → ``extra["institutions"]``, the presentation ``session`` (CVPR and ICCV
files name it: ``"Low-Level & Optimization"``; no file gives times or rooms) → ``extra["session"]``. Venue and
year come from the file name (``iclr2021.json`` → ``ICLR 2021``) unless given as hints.
"""

from __future__ import annotations

import json

from ..model import Link, Paper, SourceError, SourceRef
from ..text import classify_link
from ._common import arxiv_id, bare_doi, skip_record, venue_from_filename

FORMAT = "paperlists-json"
#: The library that parses it ("" for our own parser), one example and the fields it fills (README table).
LIBRARY = "json (stdlib)"
EXAMPLE = "paperatlas build ../shared/data/paperlists/iclr/iclr2021.json.gz"
FIELDS = ("title, authors, abstract, venue, year, status, track, affiliations, keywords, links (site, PDF, code), "
          "rating and confidence per review, citations, DOI, session")
#: what some records hold instead of an abstract (55 NeurIPS 1987-2000 papers): read as no abstract, else they form
#: a topic of their own ("Abstract unavailable") on the placeholder's words
PLACEHOLDER_ABSTRACTS = frozenset({"abstract unavailable", "abstract not available", "no abstract available"})
TESTED_ON = "cuts of real paperlists files (AAAI 2022, COLM 2024, ACL 2022) and the 42k shared corpus"


def sniff(head: str) -> bool:
    """Whether a file is in this format.

    Args:
        head: the start of the file's text (the first 20,000 characters).

    Returns:
        True when it starts like a JSON array and a ``"title"`` key occurs in its first 5,000 characters.
    """
    s = head.lstrip()
    return s.startswith("[") and '"title"' in s[:5000]


_SCALARS = (str, int, float)


def _text(rec: dict, key: str, path: str, i: int) -> str:
    """A record's text field as a string (numbers as text, missing/null as ``""``); SourceError for other types."""
    value = rec.get(key)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, _SCALARS):
        raise SourceError(path, f"record {i}", f"field {key!r} is a JSON {_json_type(value)}, expected a string")
    return str(value)


def _json_type(value) -> str:
    return {dict: "object", list: "array", bool: "boolean"}.get(type(value), type(value).__name__)


def _split(rec: dict, key: str, path: str, i: int) -> list[str]:
    """A ``;``-separated text field (or an array of strings) as a list of stripped, non-empty parts."""
    value = rec.get(key)
    if isinstance(value, list):
        if not all(isinstance(v, _SCALARS) and not isinstance(v, bool) for v in value):
            raise SourceError(path, f"record {i}", f"field {key!r} is an array holding a non-string")
        return [str(v).strip() for v in value if str(v).strip()]
    return [v.strip() for v in _text(rec, key, path, i).split(";") if v.strip()]


def _scores(rec: dict, key: str, path: str, i: int) -> list[float]:
    """A ``;``-separated list of review scores (``"5;7;7;7"``) as floats; empty or non-numeric parts dropped."""
    out = []
    for part in _split(rec, key, path, i):
        try:
            x = float(part)
        except ValueError:
            continue
        if x == x and abs(x) != float("inf"):
            out.append(x)
    return out


def read_text(text: str, path: str, venue: str | None = None, year: int | None = None, strict: bool = False,
              **_hints) -> list[Paper]:
    """Parse one paperlists JSON document into :class:`Paper` records, in array order.

    Args:
        text: the file's whole text (already decompressed).
        path: the file's path: provenance, error messages, and the venue and year when not given
            (:func:`._common.venue_from_filename` with ``any_venue``: ``iclr2021.json`` -> ``ICLR 2021``).
        venue: the venue of every paper, e.g. ``"ICLR 2021"`` (default: from the file name, else ``""``).
        year: the year of every paper (default: from the file name, else ``None``).
        strict: raise on the first malformed record instead of skipping it.
        **_hints: other hints, ignored.

    Returns:
        One paper per array element (fields as in the module docstring; ``id`` left for
        :func:`paperatlas.sources.merge.merge_papers`).

    Raises:
        SourceError: naming the file and line (invalid JSON) when the JSON is invalid or nested too deeply or is not
            an array; when ``strict``, naming the record index (``file:record 12``) when a record is not an object,
            lacks a title, or has a field of the wrong JSON type (an object where a string is expected, say).
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SourceError(path, e.lineno, f"invalid JSON: {e.msg} (column {e.colno})") from e
    except RecursionError as e:  # "[" x 100,000: the parser gives up on the nesting
        raise SourceError(path, None, "invalid JSON: nested too deeply") from e
    except ValueError as e:  # e.g. a number of more than 4,300 digits
        raise SourceError(path, None, f"invalid JSON: {e}") from e
    if not isinstance(data, list):
        raise SourceError(path, None, f"expected a JSON array of papers, got {type(data).__name__}")
    fv, fy = venue_from_filename(path, any_venue=True)
    venue = venue if venue is not None else fv
    year = year if year is not None else fy
    papers: list[Paper] = []
    for i, rec in enumerate(data):
        try:
            papers.append(_paper(rec, path, i, venue, year))
        except SourceError as e:
            skip_record(e, strict)
    return papers


def _paper(rec, path: str, i: int, venue: str | None, year: int | None) -> Paper:
    """The :class:`Paper` of record ``i``; SourceError when it is malformed."""
    if not isinstance(rec, dict):
        raise SourceError(path, f"record {i}", f"expected an object, got {type(rec).__name__}")
    title = " ".join(_text(rec, "title", path, i).split())
    if not title:
        raise SourceError(path, f"record {i}", "missing or empty 'title'")
    links: list[Link] = []
    for key in ("site", "openreview", "pdf", "arxiv", "project"):
        for url in _split(rec, key, path, i):
            if url.startswith("http") and all(link.url != url for link in links):
                kind = classify_link(url)
                links.append(Link(url=url, kind="paper" if kind == "other" else kind, label=key))
    for url in _split(rec, "github", path, i):
        if url.startswith("http"):
            links.append(Link(url=url, kind="code", label="github"))
    extra = {k: rec[k] for k in ("gs_citation", "primary_area", "doi") if rec.get(k) not in (None, "", -1)}
    for k, v in extra.items():
        if not isinstance(v, _SCALARS):
            raise SourceError(path, f"record {i}",
                              f"field {k!r} is a JSON {_json_type(v)}, expected a string or number")
    ratings, confidences = _scores(rec, "rating", path, i), _scores(rec, "confidence", path, i)
    if ratings:
        extra["ratings"] = ratings
    elif (avg := _scores(rec, "rating_avg", path, i)):
        extra["rating_mean"] = avg[0]
    if confidences:
        extra["confidences"] = confidences
    cites = _scores(rec, "gs_citation", path, i)
    if cites and cites[0] >= 0:
        extra["citations"] = int(cites[0])
    if "doi" in extra:
        extra["doi"] = bare_doi(str(extra["doi"])) or str(extra["doi"])
    ax = next((a for a in (arxiv_id(u) for u in _split(rec, "arxiv", path, i)) if a), "")
    if ax:
        extra["arxiv_id"] = ax
    if session := " ".join(_text(rec, "session", path, i).split()):  # CVPR 2016-2019, ICCV 2015-2019
        extra["session"] = session
    institutions = list(dict.fromkeys(_split(rec, "aff_unique_norm", path, i)))
    if institutions:
        extra["institutions"] = institutions
    return Paper(
        title=title,
        authors=_split(rec, "author", path, i),
        abstract=_abstract(_text(rec, "abstract", path, i)),
        venue=venue or "",
        year=year,
        status=_text(rec, "status", path, i).strip(),
        track=_text(rec, "track", path, i).strip(),
        links=links,
        sources=[SourceRef(format=FORMAT, path=path, record=i, native_id=_text(rec, "id", path, i))],
        given_keyphrases=_split(rec, "keywords", path, i),
        affiliations=_split(rec, "aff", path, i),
        extra=extra,
    )


def _abstract(text: str) -> str:
    """The record's abstract, ``""`` for a placeholder (:data:`PLACEHOLDER_ABSTRACTS`)."""
    text = text.strip()
    return "" if " ".join(text.lower().rstrip(".").split()) in PLACEHOLDER_ABSTRACTS else text
