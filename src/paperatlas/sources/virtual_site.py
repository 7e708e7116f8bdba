"""Reader for a conference virtual site's paper export (NeurIPS, ICML, ICLR: ``neurips-2025-orals-posters.json``).

The virtual sites of NeurIPS, ICML and ICLR publish every oral, spotlight and poster as one JSON document,
``https://neurips.cc/static/virtual/data/neurips-2025-orals-posters.json``: an object whose ``results`` array holds
one record per presentation. This is the file that says when and where each paper is presented.

Field mapping: ``name`` → title; ``authors`` (objects with ``fullname`` and ``institution``, or plain names) →
authors, their institutions → affiliations (in author order, once each); ``abstract``; ``keywords`` → given
keyphrases; ``topic`` (``"Theory->Learning Theory"``) → ``extra["primary_area"]``; ``decision``
(``"Accept (oral)"``) → ``extra["decision"]`` and the status it gives (:func:`._common.decision_status`), else the
``eventtype`` (Oral/Spotlight/Poster); ``paper_url`` and ``url`` → links, ``virtualsite_url`` → a link to the
paper's page on the virtual site; ``session``, ``starttime``/``endtime`` (ISO 8601 with a UTC offset), ``room_name``
and ``poster_position`` → ``extra`` (:mod:`._presentation`: ``session``, ``starts_at``/``ends_at``, ``location``,
``poster``); ``id`` → the record's native id. HTML character references the export keeps (``Texas A&amp;M``) are
decoded. Venue, year and track come from ``sourceurl`` (``...group?id=NeurIPS.cc/2025/Conference`` → ``NeurIPS
2025``, main track; ``.../Position_Paper_Track`` → track ``Position Paper Track``), else the file name, unless given
as hints; the virtual site's host is the venue's (:data:`VIRTUAL_HOSTS`).

Newer exports (ICML 2026) leave the abstracts out and publish them beside it, ``icml-2026-abstracts.json``: an
object from event id to abstract. Put that file next to the export and the abstracts are taken from it.

A paper presented twice (a talk and its poster: two records sharing a ``uid``, a ``paper_url`` or a title) is read
as one paper: the record of its most selective presentation (Oral, then Spotlight, then Poster) gives the session,
time, room and poster board. An export that declares more presentations (``count``) than it holds is one page of
a longer list (the sites page it with ``next``): it is read with a warning saying so.
"""

from __future__ import annotations

import html
import json
import re
import warnings
from pathlib import Path

from ..model import STATUSES, Link, Paper, SourceError, SourceRef
from ..text import classify_link, normalize_title
from ._common import SourceWarning, decision_status, skip_record, venue_from_filename, venue_name
from ._presentation import presentation

FORMAT = "virtual-site"
#: The library that parses it, one example and the fields it fills (README table).
LIBRARY = "json (stdlib)"
EXAMPLE = "paperatlas build neurips-2025-orals-posters.json"
FIELDS = ("title, authors, affiliations, abstract (or from the abstracts file beside it), venue, year, track, status, "
          "decision, keywords, primary area, links (paper, PDF, virtual-site page), session, start/end time, room, "
          "poster number")
TESTED_ON = ("records of the NeurIPS 2025 export as recorded in the public neurips-abstracts project's tests, and "
             "records made in its format")

# "...group?id=NeurIPS.cc/2025/Conference" -> ("NeurIPS", "2025", "Conference")
_GROUP_RE = re.compile(r"[?&]id=([A-Za-z]+)\.cc/((?:19|20)\d\d)(?:/([A-Za-z_]+))?")
_ENTITY_RE = re.compile(r"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});")
# the most selective presentation first (a paper's talk before its poster)
_RANK = {status: i for i, status in enumerate(STATUSES)}
#: Venue acronym (lower case) -> the host of its virtual site, where ``virtualsite_url`` paths lead.
VIRTUAL_HOSTS = {"neurips": "neurips.cc", "nips": "neurips.cc", "icml": "icml.cc", "iclr": "iclr.cc",
                 "cvpr": "cvpr.thecvf.com", "eccv": "eccv.ecva.net", "mlsys": "mlsys.org"}


def sniff(head: str) -> bool:
    """Whether a file is a virtual site's paper export.

    Args:
        head: The start of the file's text (the first 20,000 characters).

    Returns:
        True for a JSON object with a ``"results"`` key whose start has ``"virtualsite_url"`` or ``"eventtype"``
        and ``"name"`` keys.
    """
    s = head.lstrip()
    return s.startswith("{") and '"results"' in s and '"name"' in s and (
        '"virtualsite_url"' in s or '"eventtype"' in s)


def _json_type(value) -> str:
    return {dict: "object", list: "array", bool: "boolean", type(None): "null"}.get(type(value), type(value).__name__)


def _text(rec: dict, key: str, path: str, i: int, fold: bool = True) -> str:
    """A record's text field, entities decoded, whitespace folded unless not ``fold`` (``""`` when missing/null)."""
    value = rec.get(key)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise SourceError(path, f"record {i}", f"field {key!r} is a JSON {_json_type(value)}, expected a string")
    text = str(value)
    text = html.unescape(text) if _ENTITY_RE.search(text) else text
    return " ".join(text.split()) if fold else text.strip()


def _authors(rec: dict, path: str, i: int) -> tuple[list[str], list[str]]:
    """``(author names, institutions in author order, once each)`` of a record."""
    value = rec.get("authors")
    if value is None:
        return [], []
    if not isinstance(value, list):
        raise SourceError(path, f"record {i}", f"field 'authors' is a JSON {_json_type(value)}, expected an array")
    names, institutions = [], []
    for a in value:
        if isinstance(a, dict):
            name, inst = _text(a, "fullname", path, i), _text(a, "institution", path, i)
        elif isinstance(a, str):
            name, inst = _text({"authors": a}, "authors", path, i), ""
        else:
            raise SourceError(path, f"record {i}", f"an author is a JSON {_json_type(a)}, expected an object")
        if name:
            names.append(name)
        if inst and inst not in institutions:
            institutions.append(inst)
    return names, institutions


def _keywords(rec: dict, path: str, i: int) -> list[str]:
    value = rec.get("keywords")
    if isinstance(value, list):
        return [k for k in (_text({"keywords": v}, "keywords", path, i) for v in value if v is not None) if k]
    return [k.strip() for k in _text(rec, "keywords", path, i).split(";") if k.strip()]


def _event(rec: dict, path: str, i: int) -> str:
    """The presentation a record is (Oral/Spotlight/Poster, else ``""``): ``eventtype``, or ``event_type``."""
    for key in ("eventtype", "event_type"):  # ICML uses both spellings; NeurIPS's event_type is "{location} Poster"
        words = _text(rec, key, path, i).replace("{location}", " ").split()
        if words and words[-1].title() in STATUSES:
            return words[-1].title()
    return ""


def _sidecar_abstracts(path: str) -> dict[str, str]:
    """The abstracts file published beside an export without abstracts (event id -> abstract), or ``{}``.

    Raises:
        SourceError: the file is there but is not a JSON object (naming it).
    """
    name = Path(path).name
    if "orals-posters" not in name:
        return {}
    side = Path(path).with_name(name.replace("orals-posters", "abstracts"))
    if not side.is_file():
        return {}
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SourceError(str(side), None, f"cannot read the abstracts published beside {name}: {e}") from e
    if not isinstance(data, dict):
        raise SourceError(str(side), None, "expected a JSON object from event id to abstract")
    return {str(k): v for k, v in data.items() if isinstance(v, str)}


def read_text(text: str, path: str, venue: str | None = None, year: int | None = None, strict: bool = False,
              **_hints) -> list[Paper]:
    """Parse a virtual site's paper export into :class:`Paper` records, in the order of their first record.

    Args:
        text: The file's whole text (already decompressed).
        path: The file's path: provenance, messages, and the venue and year when neither the hints nor the
            records' ``sourceurl`` give them (``neurips-2025-orals-posters.json`` -> ``NeurIPS 2025``).
        venue: The venue of every paper, e.g. ``"NeurIPS 2025"``.
        year: The year of every paper.
        strict: Raise on the first malformed record (or unreadable time) instead of skipping it with a warning.
        **_hints: Other hints, ignored.

    Returns:
        One paper per presented paper (fields as in the module docstring; ``id`` left for
        :func:`paperatlas.sources.merge.merge_papers`).

    Raises:
        SourceError: The JSON is invalid (naming the line) or not an object with a ``results`` array; the abstracts
            file beside it (``...-abstracts.json``) is not a JSON object (naming that file); when
            ``strict``, a record that is not an object, has no ``name``, or has a field of the wrong JSON type
            (naming ``file:record N``, 0-based).
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SourceError(path, e.lineno, f"invalid JSON: {e.msg} (column {e.colno})") from e
    except (RecursionError, ValueError) as e:  # nested too deeply; a number of more than 4,300 digits
        raise SourceError(path, None, f"invalid JSON: {e if isinstance(e, ValueError) else 'nested too deeply'}") from e
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise SourceError(path, None, "expected a JSON object with a 'results' array of presentations "
                          "(a virtual site's orals-posters export)")
    abstracts = _sidecar_abstracts(path)
    results = data["results"]
    declared = data.get("count")
    if isinstance(declared, int) and not isinstance(declared, bool) and declared > len(results):
        warnings.warn(f"{path}: the export declares {declared} presentations but holds {len(results)}: it is one "
                      f"page of a longer list (next: {data.get('next') or 'not given'}); the rest is not read",
                      SourceWarning, stacklevel=2)
    from_name = venue_from_filename(path, any_venue=True)
    slots: list[list] = []  # [presentation rank, paper], in the order of each paper's first record
    slot_of: dict[tuple[str, str], int] = {}
    for i, rec in enumerate(results):
        try:
            keys, rank, paper = _paper(rec, path, i, venue, year, from_name, strict, abstracts)
        except SourceError as e:
            skip_record(e, strict)
            continue
        k = next((slot_of[key] for key in keys if key in slot_of), None)
        if k is None:
            k = len(slots)
            slots.append([rank, paper])
        elif rank < slots[k][0]:
            if not paper.abstract:
                paper.abstract = slots[k][1].abstract
            slots[k] = [rank, paper]
        for key in keys:
            slot_of.setdefault(key, k)
    return [paper for _, paper in slots]


def _paper(rec, path: str, i: int, venue: str | None, year: int | None, from_name: tuple[str, int | None],
           strict: bool, abstracts: dict[str, str]) -> tuple[list[tuple[str, str]], int, Paper]:
    """``(identity keys, presentation rank, paper)`` of record ``i``; SourceError when it is malformed."""
    if not isinstance(rec, dict):
        raise SourceError(path, f"record {i}", f"expected an object, got a JSON {_json_type(rec)}")
    title = _text(rec, "name", path, i)
    if not title:
        raise SourceError(path, f"record {i}", "missing or empty 'name' (the paper's title)")
    authors, institutions = _authors(rec, path, i)
    group = _GROUP_RE.search(_text(rec, "sourceurl", path, i))
    conf = group.group(1).lower() if group else from_name[0].split(" ")[0].lower()
    if venue is None:
        venue = f"{venue_name(conf)} {group.group(2)}" if group else from_name[0]
    if year is None:
        year = int(group.group(2)) if group else from_name[1]
    links: list[Link] = []
    for key in ("paper_url", "paper_pdf_url", "url"):
        url = _text(rec, key, path, i)
        if url.startswith(("http://", "https://")) and all(x.url != url for x in links):
            kind = classify_link(url)
            links.append(Link(url=url, kind="paper" if kind == "other" else kind, label=key))
    page = _text(rec, "virtualsite_url", path, i)
    if page.startswith("/") and conf in VIRTUAL_HOSTS:
        links.append(Link(url=f"https://{VIRTUAL_HOSTS[conf]}{page}", kind="other", label="virtual site"))
    decision = _text(rec, "decision", path, i)
    event = _event(rec, path, i)
    status = decision_status(decision)
    if status not in STATUSES and event in STATUSES:
        status = event
    extra: dict = {}
    if decision:
        extra["decision"] = decision
    if topic := _text(rec, "topic", path, i):
        extra["primary_area"] = topic
    extra.update(presentation(path, f"record {i}", strict, session=_text(rec, "session", path, i),
                              start=_text(rec, "starttime", path, i), end=_text(rec, "endtime", path, i),
                              location=_text(rec, "room_name", path, i),
                              poster=_text(rec, "poster_position", path, i)))
    native = _text(rec, "id", path, i)
    abstract = _text(rec, "abstract", path, i, fold=False) or _text(abstracts, native, path, i, fold=False)
    track = (group.group(3) or "").replace("_", " ").strip() if group else ""
    paper = Paper(title=title, authors=authors, abstract=abstract, venue=venue or "", year=year, status=status,
                  track="" if track == "Conference" else track, links=links, affiliations=institutions,
                  given_keyphrases=_keywords(rec, path, i), extra=extra,
                  sources=[SourceRef(format=FORMAT, path=path, record=i, native_id=native)])
    keys = [("title", normalize_title(title))]
    keys += [(k, v) for k in ("uid", "paper_url") if (v := _text(rec, k, path, i))]
    return keys, _RANK.get(event, len(_RANK)), paper
