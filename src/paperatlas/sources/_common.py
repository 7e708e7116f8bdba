"""What the readers share: the venue table, venue + year from a file name, skipping bad records, the fetch cache."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
import warnings
from pathlib import Path

from ..model import Link, Paper, SourceError, SourceRef
from ..settings import settings
from ..text import classify_link

#: Venue acronyms recognised in file names (lower-case) -> their display spelling when it is not the acronym in
#: capitals (``nips`` and ``neurips`` are both NeurIPS; ``corl`` is CoRL). Any acronym not in :data:`VENUE_NAMES`
#: is shown in capitals (``iclr`` -> ``ICLR``).
VENUES = ("iclr", "neurips", "nips", "icml", "cvpr", "iccv", "eccv", "wacv", "acl", "emnlp", "naacl", "eacl",
          "coling", "aaai", "ijcai", "kdd", "www", "sigir", "colm", "corl", "uai", "aistats", "colt", "tmlr",
          "interspeech", "icassp", "miccai", "icra", "iros", "rss")
VENUE_NAMES = {"neurips": "NeurIPS", "nips": "NeurIPS", "corl": "CoRL", "interspeech": "Interspeech"}

# A known venue and a 19xx/20xx year anywhere in the name: "iclr2021.md", "NeurIPS_2020.txt", "cvpr-2019";
# not inside a longer word ("xiclr2021") or a longer number ("iclr20211").
_KNOWN_VENUE_RE = re.compile(r"(?<![a-z])(" + "|".join(VENUES) + r")[-_ ]?((?:19|20)\d\d)(?!\d)", re.IGNORECASE)
# The paperlists naming "<letters><year>...", any letters: "siggraph2023.json" -> SIGGRAPH 2023.
_LEADING_VENUE_RE = re.compile(r"([a-z]+)[-_]?(\d{4})")


def venue_name(acronym: str) -> str:
    """The display spelling of a venue acronym.

    Args:
        acronym: a venue acronym in any case, e.g. ``"nips"``, ``"CoRL"``, ``"iclr"``.

    Returns:
        The spelling of :data:`VENUE_NAMES` (``"NeurIPS"``, ``"CoRL"``), else the acronym in capitals (``"ICLR"``).
    """
    key = acronym.lower()
    return VENUE_NAMES.get(key, key.upper())


def venue_from_filename(path: str, any_venue: bool = False) -> tuple[str, int | None]:
    """Venue and year stated by a listing's file name.

    A known venue (:data:`VENUES`, any case) followed by a year, optionally after ``-``, ``_`` or a space, anywhere
    in the name: ``.../iclr2021_sample.md`` -> ``("ICLR 2021", 2021)``, ``NeurIPS-2020.md`` ->
    ``("NeurIPS 2020", 2020)``, ``nips1987.json.gz`` -> ``("NeurIPS 1987", 1987)``.

    Args:
        path: the file's path; only its name is looked at.
        any_venue: when no known venue is found, also accept a name that *starts* with letters and four digits
            (Paper Copilot's ``<venue><year>.json`` naming, for venues not in the table: ``siggraph2023.json`` ->
            ``("SIGGRAPH 2023", 2023)``). The JSON reader sets it; the Markdown reader does not, so
            ``papers2019.md`` states no venue.

    Returns:
        ``(venue, year)`` with the venue spelled by :func:`venue_name`; ``("", None)`` when the name states neither.
    """
    name = Path(path).name
    m = _KNOWN_VENUE_RE.search(name)
    if m is None and any_venue:
        m = _LEADING_VENUE_RE.match(name.lower())
    if m is None:
        return "", None
    return f"{venue_name(m.group(1))} {m.group(2)}", int(m.group(2))


class SourceWarning(UserWarning):
    """A listing was read, but something in it was changed (e.g. an over-long abstract cut); names the record."""


class RecordSkipped(SourceWarning):
    """A malformed record was skipped; the message is the :class:`paperatlas.model.SourceError` text.

    The message names the file and line (or record number) and what is wrong, e.g.
    ``refs.bib:42: entry 'smith2020' has no title``. ``build --strict`` (``strict=True``) raises the error instead.
    """


def skip_record(err: SourceError, strict: bool) -> None:
    """Report one malformed record: raise it when ``strict``, else warn with :class:`RecordSkipped`.

    Readers call this for a record they cannot read and then go on with the next one; whole-file problems
    (not JSON at all, an unknown format) are raised directly.

    Args:
        err: What is wrong, naming the file and line or record.
        strict: Raise ``err`` instead of warning.

    Raises:
        SourceError: ``err``, when ``strict``.
    """
    if strict:
        raise err
    warnings.warn(str(err), RecordSkipped, stacklevel=2)


def offline() -> bool:
    """Whether network readers must not fetch (``PAPERATLAS_OFFLINE`` set and not ``0``): only their cache is read.

    The test suite sets it for every test; a network reader then builds from its cache or raises
    :meth:`FetchCache.unreachable`'s error.

    Returns:
        True when offline.
    """
    return settings.offline


def cache_root() -> Path:
    """Directory of the network readers' caches.

    Returns:
        ``$PAPERATLAS_CACHE`` when set, else the user cache directory (``platformdirs``; on Linux
        ``$XDG_CACHE_HOME/paperatlas``, default ``~/.cache/paperatlas``): :attr:`.settings.Settings.cache_dir`.
    """
    return settings.cache_dir


class FetchCache:
    """What a network reader fetched for one query, kept as JSON so a rebuild works offline.

    The file is ``<root>/<scheme>/<slug>.json`` holding ``{"source", "fetched_at", "records"}``; ``records`` are
    the service's own records (e.g. OpenReview notes, arXiv entries) as JSON values, so the reader parses the
    cached and the fresh ones with the same code. Written atomically (a temporary file renamed into place).

    Args:
        source: The source as the user gave it, e.g. ``"openreview:ICLR.cc/2025/Conference"``; with the options
            that change what is fetched appended by the reader (e.g. ``"...|rejected"``).
        root: The cache directory (default :func:`cache_root`).
        label: The source as errors name it (default ``source`` up to its first ``|``).

    Attributes:
        source: As given.
        label: As errors name it.
        path: The cache file.
    """

    def __init__(self, source: str, root: str | Path | None = None, label: str | None = None):
        self.source = source
        self.label = label or source.split("|", 1)[0]
        scheme, _, rest = source.partition(":")
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", rest).strip("_")[:80]
        digest = hashlib.sha1(source.encode()).hexdigest()[:10]
        self.path = Path(root or cache_root()) / (scheme or "misc") / f"{slug}-{digest}.json"

    def load(self) -> tuple[list, str] | None:
        """The cached records and when they were fetched.

        Returns:
            ``(records, fetched_at)`` with ``fetched_at`` an ISO 8601 UTC time, or None when nothing is cached
            (or the cache file is unreadable: it is then fetched again).
        """
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return list(data["records"]), str(data.get("fetched_at", ""))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, records: list) -> None:
        """Store ``records`` (JSON values) as the cache of this source, replacing any earlier one.

        Args:
            records: The fetched records.

        Raises:
            OSError: The cache directory cannot be written.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"source": self.source, "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "records": records}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, ensure_ascii=False)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def unreachable(self, service: str, err: BaseException, refresh: bool) -> SourceError:
        """The error for a failed fetch, naming the source and how to build from the cache.

        Args:
            service: The service's name and host, e.g. ``"OpenReview (api2.openreview.net)"``.
            err: What the client library raised.
            refresh: Whether the cache was being bypassed (``--refresh``).

        Returns:
            A :class:`SourceError` to raise: with a cache, it says to build without ``--refresh``; without one,
            that nothing was fetched yet and where the cache would be.
        """
        cached = self.load()
        if cached is not None and refresh:
            how = f"drop --refresh to build from the copy fetched {cached[1]} ({self.path})"
        else:
            how = f"nothing is cached for it yet ({self.path}); build once where {service} can be reached"
        return SourceError(self.label, None, f"cannot reach {service}: {err}; {how}")


#: Words of a decision that name the presentation it was accepted for, first match wins (OpenReview's wordings:
#: "Accept (Oral)", "Accept: notable-top-5%" (ICLR 2023's oral), "Accept: notable-top-25%" (its spotlight),
#: "Accept (poster)").
STATUS_WORDS = (("oral", "Oral"), ("notable-top-5%", "Oral"), ("spotlight", "Spotlight"),
                ("notable-top-25%", "Spotlight"), ("poster", "Poster"))


def decision_status(decision: str) -> str:
    """The status a decision as a venue words it gives (see :attr:`paperatlas.model.Paper.status`).

    Args:
        decision: The decision text, e.g. ``"Accept (poster)"``, ``"Accept: notable-top-25%"``, ``"Reject"``.

    Returns:
        ``"Withdrawn"``, ``"Rejected"``, the presentation of an acceptance (``"Oral"``, ``"Spotlight"``,
        ``"Poster"``, see :data:`STATUS_WORDS`) or ``"Accepted"`` when it names none; ``""`` for any other text
        (e.g. ICLR 2018's "Invite to Workshop Track": decided, not accepted). Raises nothing.
    """
    d = decision.lower()
    if "withdraw" in d:
        return "Withdrawn"
    if "reject" in d:
        return "Rejected"
    if "accept" in d or "notable" in d:
        return next((status for word, status in STATUS_WORDS if word in d), "Accepted")
    return ""


_DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.IGNORECASE)
# New-style (2007+) arXiv ids with an optional version, and old-style archive/number ids.
_ARXIV_RE = re.compile(r"(?:arxiv\.org/(?:abs|pdf|html)/|arxiv:\s*|^)"
                       r"(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?(?:\.pdf)?\b", re.IGNORECASE)


def bare_doi(text: str) -> str:
    """The DOI in a DOI field or link, without ``https://doi.org/`` or ``doi:`` and trailing punctuation.

    Args:
        text: E.g. ``"https://doi.org/10.18653/v1/2022.acl-long.1"``, ``"doi:10.1145/3394486.3403166."``.

    Returns:
        The DOI as written, e.g. ``"10.18653/v1/2022.acl-long.1"``; ``""`` if none (DOIs are case-insensitive:
        compare them lower-cased).
    """
    m = _DOI_RE.search(text or "")
    return m.group(1).rstrip(".,;)]}") if m else ""


def arxiv_id(text: str) -> str:
    """The arXiv identifier in an id, ``arXiv:`` reference or arxiv.org link, without its version.

    Args:
        text: E.g. ``"2106.09685v2"``, ``"arXiv:2106.09685"``, ``"https://arxiv.org/pdf/2106.09685v1.pdf"``,
            ``"hep-th/9901001"``.

    Returns:
        E.g. ``"2106.09685"``; ``""`` when the text holds no arXiv id.
    """
    m = _ARXIV_RE.search((text or "").strip())
    return m.group(1) if m else ""


def bibliographic_paper(fmt: str, path: str, where: int | str, *, title: str, authors: list[str],
                        year: str | int | None = None, venue: str = "", abstract: str = "", doi: str = "",
                        urls: list[str] | tuple[str, ...] = (), keywords: list[str] | tuple[str, ...] = (),
                        status: str = "", native_id: str = "") -> Paper:
    """One :class:`Paper` from the fields every bibliography format has (BibTeX, RIS, CSL-JSON, CSV, DBLP).

    Whitespace is collapsed; the DOI is made bare (:func:`bare_doi`) and also kept as a ``https://doi.org/`` link
    when no URL is given; an arXiv id in a URL or DOI (``10.48550/arXiv.2106.09685``) goes to
    ``extra["arxiv_id"]``; each URL becomes a :class:`Link` (GitHub/GitLab ``code``, OpenReview ``openreview``,
    else ``paper``); a year is the first 19xx/20xx number of ``year``.

    Args:
        fmt: The reader's name (provenance).
        path: The file (provenance).
        where: The 1-based line (int) or ``"record N"`` (0-based) of the record.
        title: The title (required; raise before calling when it is missing).
        authors: Display names, "First Last".
        year: A year or a date text.
        venue: Journal, proceedings or conference name.
        abstract: The abstract.
        doi: A DOI in any spelling.
        urls: The record's links.
        keywords: Author keywords (to ``given_keyphrases``).
        status: A decision/status column, e.g. ``Oral``.
        native_id: The record's key in its source (a BibTeX key, a CSL id).

    Returns:
        The paper, ``id`` unset.
    """
    doi = bare_doi(doi)
    links: list[Link] = []
    for url in urls:
        url = (url or "").strip()
        if url.startswith(("http://", "https://")) and all(x.url != url for x in links):
            kind = classify_link(url)
            links.append(Link(url=url, kind="paper" if kind == "other" else kind, label=fmt))
    if doi and not any(x.kind == "paper" for x in links):
        links.append(Link(url=f"https://doi.org/{doi}", kind="paper", label="doi"))
    extra: dict = {}
    if doi:
        extra["doi"] = doi
    ax = next((a for a in (arxiv_id(x.url) for x in links if "arxiv.org" in x.url) if a), "") or \
        (arxiv_id(doi.split("arxiv.", 1)[1]) if "arxiv." in doi else "")
    if ax:
        extra["arxiv_id"] = ax
    m = re.search(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)", str(year or ""))
    line, record = (where, None) if isinstance(where, int) else (None, int(str(where).split()[-1]))
    return Paper(title=" ".join(title.split()), authors=[" ".join(a.split()) for a in authors if a and a.strip()],
                 abstract=(abstract or "").strip(), venue=" ".join((venue or "").split()),
                 year=int(m.group(1)) if m else None, status=(status or "").strip(), links=links,
                 sources=[SourceRef(format=fmt, path=path, line=line, record=record, native_id=native_id)],
                 given_keyphrases=[k.strip() for k in keywords if k and k.strip()], extra=extra)
