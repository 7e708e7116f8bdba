"""ACL Anthology volumes and events (``acl:2023.acl-long``, ``acl:acl-2023``) and Anthology XML collection files.

Two ways in:

* ``paperatlas build acl:2023.acl-long`` -- a volume (``2023.acl-long``, ``P19-1``), a collection (``2022.acl``:
  all its volumes), a paper (``2022.acl-long.1``) or an event (``acl-2022``: the event's own volumes and its
  Findings volume; co-located workshops are left out, build them by their volume ids) -- read with the
  ``acl-anthology`` package from the Anthology's data directory: ``PAPERATLAS_ACL_DATA`` or the ``acl_data`` build
  option when set (a checkout's ``data/`` folder), else the package's ``Anthology.from_repo()``, which clones (or
  pulls) github.com/acl-org/acl-anthology, about 1 GB: the network. What was read is kept in a
  :class:`._common.FetchCache`, so a rebuild neither clones nor parses again (``--refresh`` reads again);
* an Anthology XML file (``data/xml/2022.acl.xml``: a ``<collection id="2022.acl">`` of volumes of papers),
  detected from its content and parsed here with ``defusedxml`` -- not with the package, whose parser needs a
  whole data directory around the file (schema, venues, people) and reads only the schema of its own release
  (``acl-anthology`` 1.3 wants ``<pdf hash=..>`` where files saved before 2025 have ``<url hash=..>`` and
  Papers-with-Code elements); both schemas are read here.

Field mapping: title and abstract with the Anthology's markup flattened (``<fixed-case>`` kept as its letters,
``<tex-math>`` as ``$...$``, ``<url>`` as its text); authors ``first last`` (affiliations when stated); venue
``ACL 2022`` from the volume's ``<venue>`` (a Findings volume is ``ACL 2022`` with track ``findings``); year; track
from the volume (``long``, ``short``, ``demo``, ``findings``...); DOI; links: the paper's Anthology page
(``https://aclanthology.org/<id>/``), its PDF, code (``<pwccode>``, a code host's ``<url>``, GitHub/GitLab links in
the abstract); awards and the bibkey in ``extra``. Front matter and removed papers are left out.
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

from ..model import Link, Paper, SourceError, SourceRef
from ..settings import settings
from ..text import classify_link
from ._common import FetchCache, SourceWarning, bare_doi, offline, skip_record
from .dblp import line_of, parse_xml
from .progress import ProgressFactory, progress_of

FORMAT = "acl-anthology"
SCHEME = "acl"
#: The library that reads it, one example and the fields it fills (README table).
LIBRARY = "acl-anthology 1.3 (acl:), defusedxml (XML files)"
EXAMPLE = "paperatlas build acl:2023.acl-long"
FIELDS = ("title, authors, abstract, venue + year, track (long/short/findings...), DOI, links (Anthology page, PDF, "
          "code), affiliations, awards, bibkey")
TESTED_ON = "real Anthology XML (ACL 2022 main and Findings volumes) as files and through the acl-anthology package"

#: The environment variable naming the Anthology's data directory (a checkout's ``data/`` folder).
DATA_ENV = "PAPERATLAS_ACL_DATA"
_SERVICE = "the ACL Anthology data (github.com/acl-org/acl-anthology)"
_PAGE = "https://aclanthology.org/{}/"
_PDF = "https://aclanthology.org/{}.pdf"
#: Venue ids whose display spelling is not the id in capitals (the Anthology's ``venues.json`` acronyms; used when
#: reading a file, where no ``venues.json`` is at hand).
ACRONYMS = {"findings": "Findings", "conll": "CoNLL", "semeval": "SemEval", "bionlp": "BioNLP", "starsem": "*SEM",
            "blackboxnlp": "BlackboxNLP", "americasnlp": "AmericasNLP", "clpsych": "CLPsych", "repl4nlp": "RepL4NLP",
            "insights": "Insights", "nlp4convai": "NLP4ConvAI", "wnut": "W-NUT", "gem": "GEM", "inlg": "INLG"}
#: Venues of old-style collection ids (``P18`` is ACL 2018), for volumes that name no ``<venue>`` (the Anthology's
#: ``venues.json`` ``oldstyle_letter``; ``W`` is a workshop: no single venue).
OLD_LETTERS = {"P": "ACL", "N": "NAACL", "D": "EMNLP", "E": "EACL", "C": "COLING", "Q": "TACL", "J": "CL",
               "K": "CoNLL", "L": "LREC", "S": "SemEval", "I": "IJCNLP", "H": "HLT", "A": "ANLP"}
_EVENT_RE = re.compile(r"^([a-z0-9]+)-(\d{4})$")
_ROOT_RE = re.compile(r"^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>\s*)*"
                      r"<collection\s+id=", re.DOTALL)


def sniff(head: str) -> bool:
    """Whether a file is an ACL Anthology XML collection.

    Args:
        head: The start of the file's text (the first 20,000 characters).

    Returns:
        True when its root element is ``<collection id=...>`` (after an XML declaration, comments, a DOCTYPE).
    """
    return _ROOT_RE.match(head[:3000]) is not None


# ------------------------------------------------------------------------------------------------- markup
def flatten(el, paragraphs: bool = False) -> str:
    """The text of an Anthology markup element (``<title>``, ``<abstract>``).

    Args:
        el: The element, or None.
        paragraphs: Keep ``<par/>`` breaks as blank lines (abstracts); else all whitespace is collapsed.

    Returns:
        The text: ``<fixed-case>``, ``<i>``, ``<b>``... as their text, ``<tex-math>`` as ``$...$``, ``<url>`` and
        ``<a>`` as their text; ``""`` for None.
    """
    if el is None:
        return ""
    parts: list[str] = []

    def walk(node) -> None:
        parts.append(node.text or "")
        for child in node:
            if child.tag == "tex-math":
                parts.append("$" + "".join(child.itertext()).strip() + "$")
            elif child.tag == "par":
                parts.append("\n\n")
            else:
                walk(child)
            parts.append(child.tail or "")

    walk(el)
    text = "".join(parts)
    if not paragraphs:
        return " ".join(text.split())
    return "\n\n".join(" ".join(p.split()) for p in text.split("\n\n") if p.strip())


def _code_urls(el) -> list[str]:
    """GitHub/GitLab links in an abstract's ``<url>`` markup ("our code is at <url>github.com/..</url>")."""
    if el is None:
        return []
    return [u for u in ("".join(x.itertext()).strip() for x in el.iter("url")) if classify_link(u) == "code"]


# ------------------------------------------------------------------------------------------------ records
def anthology_id(collection: str, volume: str, paper: str | None = None) -> str:
    """The Anthology id of a volume or paper.

    New-style collections (``2022.acl``) give ``2022.acl-long`` / ``2022.acl-long.42``; old-style ones pad the
    numbers as the Anthology does (``P18``, ``1``, ``42`` -> ``P18-1042``; workshops ``W18``, ``64``, ``1`` ->
    ``W18-6401``).

    Args:
        collection: The collection id (the file's ``<collection id>``).
        volume: The volume id.
        paper: The paper id, or None for the volume.

    Returns:
        The id, e.g. ``2022.acl-long.42``.
    """
    if collection[:1].isdigit() or not volume.isdigit() or (paper is not None and not paper.isdigit()):
        return f"{collection}-{volume}" + (f".{paper}" if paper is not None else "")
    wide = collection.startswith("W") or collection == "C69" or (collection == "D19" and int(volume) >= 5)
    if wide:
        return f"{collection}-{int(volume):02d}" + (f"{int(paper):02d}" if paper is not None else "")
    return f"{collection}-{int(volume):01d}" + (f"{int(paper):03d}" if paper is not None else "")


def venue_and_track(collection: str, volume: str, venue_ids: list[str], acronym=None) -> tuple[str, str]:
    """The venue acronym and track of a volume.

    Args:
        collection: The collection id, e.g. ``2022.findings``.
        volume: The volume id, e.g. ``acl``.
        venue_ids: The volume's ``<venue>`` ids, e.g. ``["findings"]``.
        acronym: A function venue id -> acronym (the package's venue index); default :data:`ACRONYMS`, else the
            id in capitals.

    Returns:
        ``(acronym, track)``: ``("ACL", "long")`` for ``2022.acl-long``, ``("ACL", "findings")`` for
        ``2022.findings-acl``; the track is ``""`` for numbered volumes (``2022.bionlp-1``, ``P19-1``).
    """
    def spell(vid: str) -> str:
        name = acronym(vid) if acronym is not None else ""
        return name or ACRONYMS.get(vid, vid.upper())

    ids = [v for v in venue_ids if v and v != "ws"]
    if "findings" in ids or collection.endswith(".findings"):
        return spell(volume) if not volume.isdigit() else "Findings", "findings"
    if not ids and "." in collection:
        ids = [collection.split(".", 1)[1]]
    if not ids:
        return OLD_LETTERS.get(collection[:1], ""), ""
    return spell(ids[0]), ("" if volume.isdigit() else volume)


def _record(el, collection: str, volume: str, venue: str, track: str, year: str, path: str) -> dict | None:
    """The JSON record of one ``<paper>`` element (None for a removed paper); SourceError when malformed."""
    line = line_of(el)
    pid = el.get("id", "").strip()
    if not pid:
        raise SourceError(path, line, "<paper> without an id attribute")
    url = el.find("url")
    ident = (url.text or "").strip() if url is not None and url.get("hash") else ""
    ident = ident if ident and "/" not in ident else anthology_id(collection, volume, pid)
    if el.find("removed") is not None:
        return None
    title = flatten(el.find("title"))
    if not title:
        raise SourceError(path, line, f"paper {ident} has no <title>")
    authors, affiliations = [], []
    for a in el.findall("author"):
        name = " ".join(f"{flatten(a.find('first'))} {flatten(a.find('last'))}".split())
        if name:
            authors.append(name)
            affiliations.append(flatten(a.find("affiliation")))
    abstract = el.find("abstract")
    code = [c.get("url", "") for c in el.findall("pwccode") if c.get("url")]
    code += [(u.text or "").strip() for u in el.findall("url")
             if u.get("type") and classify_link(u.text or "") == "code"]
    retracted = el.find("retracted")
    return {"id": ident, "title": title, "authors": authors,
            "affiliations": affiliations if any(affiliations) else [], "abstract": flatten(abstract, True),
            "doi": flatten(el.find("doi")), "year": year, "venue": venue, "track": track,
            "pdf": bool(ident) and (el.find("pdf") is not None or bool(url is not None and url.get("hash"))),
            "code": code + _code_urls(abstract), "awards": [a.get("name") or flatten(a) for a in el.findall("award")],
            "bibkey": flatten(el.find("bibkey")), "line": line,
            "retracted": retracted.get("date", "yes") if retracted is not None else ""}


def _paper(rec: dict, path: str, where: int | str) -> Paper:
    """The :class:`Paper` of a record (from a file or from the package); SourceError when it has no title."""
    if not isinstance(rec, dict) or not str(rec.get("title") or "").strip():
        raise SourceError(path, where, "Anthology record without a title")
    ident = str(rec.get("id") or "")
    links = [Link(url=_PAGE.format(ident), kind="paper", label="acl anthology")] if ident else []
    if ident and rec.get("pdf"):
        links.append(Link(url=_PDF.format(ident), kind="paper", label="pdf"))
    for url in rec.get("code") or []:
        if str(url).startswith("http") and all(x.url.lower().rstrip("/") != str(url).lower().rstrip("/")
                                               for x in links):
            links.append(Link(url=str(url), kind="code", label="code"))
    extra: dict = {"acl_id": ident} if ident else {}
    if bare_doi(str(rec.get("doi") or "")):
        extra["doi"] = bare_doi(str(rec["doi"]))
    for key in ("awards", "bibkey", "retracted"):
        if rec.get(key):
            extra[key] = rec[key]
    year = str(rec.get("year") or "")
    venue = f"{rec['venue']} {year}".strip() if rec.get("venue") else ""
    line = where if isinstance(where, int) else None
    return Paper(title=str(rec["title"]), authors=[str(a) for a in rec.get("authors") or []],
                 abstract=str(rec.get("abstract") or ""), venue=venue, year=int(year) if year.isdigit() else None,
                 track=str(rec.get("track") or ""), links=links, affiliations=list(rec.get("affiliations") or []),
                 sources=[SourceRef(format=FORMAT, path=path, line=line,
                                    record=None if line is not None else int(str(where).split()[-1]),
                                    native_id=ident)],
                 extra=extra)


def _papers(records: list, path: str, strict: bool) -> list[Paper]:
    papers = []
    for i, rec in enumerate(records):
        line = rec.get("line") if isinstance(rec, dict) and isinstance(rec.get("line"), int) else None
        try:
            papers.append(_paper(rec, path, line if line is not None else f"record {i}"))
        except SourceError as e:
            skip_record(e, strict)
    return papers


# -------------------------------------------------------------------------------------------------- files
def read_text(text: str, path: str, strict: bool = False, **_hints) -> list[Paper]:
    """Parse an ACL Anthology XML collection file into :class:`Paper` records, in file order.

    Args:
        text: The file's whole text.
        path: The file (provenance, error messages).
        strict: Raise on the first malformed paper instead of skipping it.
        **_hints: Ignored (the file states its venues and years).

    Returns:
        One paper per ``<paper>`` (front matter and removed papers left out; fields in the module docstring).

    Raises:
        SourceError: The XML is not well-formed (names the line) or declares entities, or its root is not a
            ``<collection id=...>``; when ``strict``, a paper without an id or a title (file and line).
    """
    root = parse_xml(text, path)
    collection = (root.get("id") or "").strip()
    if root.tag != "collection" or not collection:
        raise SourceError(path, None, f"not an ACL Anthology collection: the root element is <{root.tag}>"
                          + ("" if root.tag != "collection" else " without an id"))
    records: list[dict] = []
    for vol in root.findall("volume"):
        vid = (vol.get("id") or "").strip()
        meta = vol.find("meta")
        year = flatten(meta.find("year")) if meta is not None else ""
        year = year or (collection[:4] if collection[:4].isdigit() else "")
        venues = [flatten(v) for v in meta.findall("venue")] if meta is not None else []
        venue, track = venue_and_track(collection, vid, venues)
        for el in vol.findall("paper"):
            try:
                rec = _record(el, collection, vid, venue, track, year, path)
            except SourceError as e:
                skip_record(e, strict)
                continue
            if rec is not None:
                records.append(rec)
    return _papers(records, path, strict)


# ---------------------------------------------------------------------------------------------- acl: source
def _package_record(paper, volume, acronym) -> dict:
    """The JSON record of an ``acl_anthology`` Paper, built as from its XML (same flattening as for files)."""
    from defusedxml.ElementTree import fromstring

    def markup(m):
        return fromstring(f"<x>{m.as_xml()}</x>") if m is not None else None

    coll, vid = volume.collection_id, volume.id
    venue, track = venue_and_track(coll, vid, list(volume.venue_ids), acronym)
    abstract = markup(paper.abstract)
    code = [ref.name for kind, ref in paper.urls if classify_link(ref.name) == "code"]
    names = list(paper.authors)
    affiliations = [ns.affiliation or "" for ns in names]
    return {"id": paper.full_id, "title": flatten(markup(paper.title)),
            "authors": [ns.name.as_first_last() for ns in names],
            "affiliations": affiliations if any(affiliations) else [], "abstract": flatten(abstract, True),
            "doi": paper.doi or "", "year": str(volume.year or ""), "venue": venue, "track": track,
            "pdf": paper.pdf is not None, "code": code + _code_urls(abstract),
            "awards": [a.name for a in paper.awards], "bibkey": paper.bibkey or "",
            "retracted": (paper.deletion.date or "yes") if paper.deletion is not None else ""}


def _volumes(anthology, query: str, source: str) -> list:
    """The volumes (or a one-paper list) a query names; SourceError when it names nothing."""
    m = _EVENT_RE.match(query)
    if m is not None:
        event = anthology.get_event(query)
        if event is not None:
            venue, vols, missing = m.group(1), [], []
            for vid in event.colocated_ids:
                vol = anthology.get_volume(vid)
                if vol is None:
                    missing.append(anthology_id(vid[0], vid[1]))
                elif venue in vol.venue_ids or ("findings" in vol.venue_ids and vol.id == venue):
                    vols.append(vol)
            if missing:
                warnings.warn(f"{source}: co-located volumes not in the data directory, left out: "
                              f"{', '.join(missing)}", SourceWarning, stacklevel=3)
            return vols
    found = anthology.get(query)
    if found is None:
        raise SourceError(source, None, f"no ACL Anthology volume, paper or event {query!r} in the data; a volume "
                                        "id looks like 2023.acl-long, an event id like acl-2023")
    if hasattr(found, "volumes"):
        return list(found.volumes())
    return [found]


def _anthology(datadir: str, source: str, cache: FetchCache, refresh: bool):
    """An ``acl_anthology.Anthology`` over ``datadir``, or cloned from GitHub when it is ``""``."""
    try:
        from acl_anthology import Anthology
    except ImportError as e:
        raise SourceError(source, None, "the ACL Anthology reader needs the acl-anthology package: "
                                        "pip install 'paperatlas[acl]'") from e
    if datadir:
        root = Path(datadir)
        root = root / "data" if not (root / "xml").is_dir() and (root / "data" / "xml").is_dir() else root
        if not (root / "xml").is_dir():
            raise SourceError(source, None, f"{datadir} is not an ACL Anthology data directory (it has no xml/ "
                                            f"folder); point {DATA_ENV} at a checkout's data/ folder")
        try:
            return Anthology(datadir=root, verbose=False)
        except (OSError, ValueError) as e:  # e.g. no xml/schema.rnc: not a whole data directory
            raise SourceError(source, None, f"cannot open the ACL Anthology data in {datadir}: {e}") from e
    if offline():
        raise cache.unreachable(_SERVICE, RuntimeError("offline (PAPERATLAS_OFFLINE is set)"), refresh)
    try:  # the package's own progress display of the clone (rich), when someone is watching
        return Anthology.from_repo(verbose=sys.stderr.isatty())
    except Exception as e:  # git's and the file system's errors, whatever cloning raises: the network source failed
        raise cache.unreachable(_SERVICE, e, refresh) from e


def fetch(query: str, strict: bool = False, cache_dir=None, refresh: bool = False, acl_data: str | None = None,
          fetch_progress: ProgressFactory | None = None, **_options) -> list[Paper]:
    """Papers of an Anthology volume, collection, paper or event (``paperatlas build acl:QUERY``).

    Args:
        query: ``2023.acl-long`` (volume), ``2022.acl`` (collection), ``2022.acl-long.1`` (paper) or ``acl-2023``
            (event: its own volumes and its Findings volume).
        strict: Raise on a paper without a title instead of skipping it.
        cache_dir: The cache directory (default :func:`._common.cache_root`).
        refresh: Read the Anthology again even when this query is cached.
        acl_data: The Anthology's data directory (default ``$PAPERATLAS_ACL_DATA``; when neither is set, the
            package clones the Anthology from GitHub, showing its own progress when stderr is a terminal).
        fetch_progress: Where reading the matched volumes reports them (:func:`.progress.progress_of`; default a tqdm
            bar on stderr when it is a terminal).
        **_options: Other build options, ignored.

    Returns:
        The papers in the Anthology's order (front matter and removed papers left out).

    Raises:
        SourceError: The acl-anthology package is missing, the data directory is not one, the query names nothing
            in it, the Anthology's data cannot be parsed, or GitHub cannot be reached and the query is not cached
            (the message names the source and the cache).
    """
    source = f"acl:{query.strip()}"
    datadir = str(acl_data or settings.acl_data or "")
    cache = FetchCache(f"{source}|{Path(datadir).resolve() if datadir else 'github'}", cache_dir, label=source)
    cached = cache.load()
    if cached is not None and not refresh:
        return _papers(cached[0], source, strict)
    anthology = _anthology(datadir, source, cache, refresh)
    from acl_anthology.exceptions import AnthologyException

    def acronym(vid: str) -> str:
        return getattr(anthology.venues.get(vid), "acronym", "") or ""

    try:
        records = []
        found_all = _volumes(anthology, query.strip(), source)
        with progress_of("ACL Anthology", len(found_all), "volume", fetch_progress) as update:
            for found in found_all:
                volume, papers = (found, list(found.papers())) if hasattr(found, "papers") else (found.parent, [found])
                for p in papers:
                    removed = p.deletion is not None and str(p.deletion.type.value) == "removed"
                    if not p.is_frontmatter and not removed:
                        records.append(_package_record(p, volume, acronym))
                update(1)
    except SourceError:
        raise
    except (AnthologyException, ValueError, KeyError, TypeError, OSError) as e:
        raise SourceError(source, None, f"cannot read the ACL Anthology data in {datadir or 'the clone'}: {e}") from e
    cache.save(records)
    return _papers(records, source, strict)
