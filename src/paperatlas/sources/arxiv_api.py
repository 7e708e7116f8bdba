"""arXiv categories and queries (``arxiv:cs.LG``, ``arxiv:"QUERY"``) via the ``arxiv`` package; files of arXiv ids.

Three ways in:

* ``paperatlas build arxiv:cs.LG`` (a category: ``cat:cs.LG``), ``arxiv:"grokking"`` (quoted words: ``all:``
  search), or any arXiv API query (``arxiv:'ti:transformer AND cat:cs.CL'``), with ``--since``/``--until``
  (``submittedDate:[YYYYMMDD0000 TO YYYYMMDD2359]``) and ``--max`` (default :data:`DEFAULT_MAX`), fetched with
  the ``arxiv`` package's client (3 s between requests, as arXiv's API terms ask; pages of 100);
* a text file of arXiv ids or links, one per line (``2106.09685``, ``arXiv:2106.09685v2``,
  ``https://arxiv.org/abs/...``, ``hep-th/9901001``), fetched by ``id_list``;
* a saved arXiv API response (an Atom feed), read directly with ``defusedxml``.

Fetched entries are kept in a :class:`._common.FetchCache`, so a rebuild reads them offline (``--refresh`` fetches
again). Field mapping: title, authors, summary -> abstract, year of first submission, venue: the journal or
conference the ``journal_ref`` names (:func:`journal_venue`, ``Phys. Rev. B``), else ``arXiv`` (the whole
``journal_ref`` is kept in ``extra``), the abstract page (kind ``paper``, label ``arxiv``) and PDF links, DOI, the
id without version (``extra["arxiv_id"]``), all categories and the authors' comment (often "Accepted at NeurIPS
2023") in ``extra``. The primary category (``cs.LG``) goes to ``track``: arXiv has no tracks, and its archive is
the nearest thing to one (a paper also in a conference listing keeps that listing's track when merged, as the
first listing's non-empty fields win). A paper listed twice (results shift while paging) is kept once.
"""

from __future__ import annotations

import re
from datetime import date

from ..model import Link, Paper, SourceError, SourceRef
from ._common import FetchCache, arxiv_id, bare_doi, offline, skip_record
from .progress import ProgressFactory, progress_of

FORMAT = "arxiv"
SCHEME = "arxiv"
#: The library that fetches it, one example and the fields it fills (README table).
LIBRARY = "arxiv 4.0 (network), defusedxml (saved feeds)"
EXAMPLE = "paperatlas build arxiv:cs.LG --since 2026-10-01 --max 500"
FIELDS = ("title, authors, abstract, year, venue (the journal_ref's, else arXiv), links (abstract page, PDF), DOI, "
          "arXiv id, primary category (track), categories, journal reference, comment")
TESTED_ON = "recorded arXiv API responses (the arxiv package's own test fixtures), replayed through its client"

#: Papers fetched per query unless ``--max`` says otherwise.
DEFAULT_MAX = 1000
_SERVICE = "arXiv (export.arxiv.org)"
_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"
_CATEGORY_RE = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?$")
_NUMBER_RE = re.compile(r"(?:^|[\s,;:(])(\d+)(?![\dA-Za-z])")
_REF_PREFIX_RE = re.compile(r"^(?:published\s+in|accepted\s+(?:at|to|in|by|for)|to\s+appear\s+in|in)\s*:?\s+",
                            re.IGNORECASE)
_ID_LINE_RE = re.compile(r"^\s*(?:arxiv:\s*|https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/)?"
                         r"(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?(?:\.pdf)?/?\s*$", re.IGNORECASE)


def sniff(head: str) -> bool:
    """Whether a file is a saved arXiv Atom feed or a list of arXiv ids/links.

    Args:
        head: The start of the file's text (the first 20,000 characters).

    Returns:
        True for an Atom ``<feed`` that mentions arxiv.org, or when at least 60% of the (at least one) non-blank,
        non-``#`` lines are arXiv ids or arxiv.org links.
    """
    s = head.lstrip()
    if s.startswith(("<?xml", "<feed")):
        return "<feed" in s[:500] and "arxiv.org" in s[:5000]
    lines = [x for x in head.split("\n")[:200] if x.strip() and not x.lstrip().startswith("#")]
    return bool(lines) and sum(bool(_ID_LINE_RE.match(x)) for x in lines) >= 0.6 * len(lines)


def search_query(query: str, date_from: str | None = None, date_to: str | None = None) -> str:
    """The arXiv API ``search_query`` for a source's query and date range.

    Args:
        query: ``cs.LG`` (a category), ``"some words"`` (quoted: all fields), or an arXiv API query as is.
        date_from: First submission day, ``YYYY-MM-DD``.
        date_to: Last submission day, ``YYYY-MM-DD``.

    Returns:
        E.g. ``cat:cs.LG AND submittedDate:[202601010000 TO 202612312359]``.

    Raises:
        SourceError: A date is not ``YYYY-MM-DD`` (names the source).
    """
    q = query.strip()
    if len(q) >= 2 and q[0] == q[-1] and q[0] in "\"'":
        words = q[1:-1].split()
        q = " AND ".join(f"all:{w}" for w in words) if words else ""
    elif _CATEGORY_RE.match(q) and ":" not in q:
        q = f"cat:{q}"
    if date_from or date_to:
        try:
            lo = date.fromisoformat(date_from).strftime("%Y%m%d") if date_from else "19910101"
            hi = date.fromisoformat(date_to).strftime("%Y%m%d") if date_to else date.today().strftime("%Y%m%d")
        except ValueError as e:
            raise SourceError(f"arxiv:{query}", None, f"dates must be YYYY-MM-DD: {e}") from e
        q = f"{q} AND submittedDate:[{lo}0000 TO {hi}2359]" if q else f"submittedDate:[{lo}0000 TO {hi}2359]"
    return q


def journal_venue(journal_ref: str) -> str:
    """The venue a ``journal_ref`` names: the text before its first volume, page or year number.

    A year right after the name (``NeurIPS 2023``) is kept, as conference listings name venues; ``In``,
    ``Published in``, ``Accepted at`` and ``To appear in`` are dropped.

    Args:
        journal_ref: arXiv's free-text journal reference, e.g. ``"Phys. Rev. B 74, 024520 (2006)"``.

    Returns:
        E.g. ``"Phys. Rev. B"``, ``"JHEP"`` (of ``JHEP0712:012,2007``), ``"NeurIPS 2023"``, ``"Proceedings of
        the 40th International Conference on Machine Learning, PMLR"``; ``""`` when it names none (no name with
        two letters before the first number).
    """
    ref = _REF_PREFIX_RE.sub("", " ".join(journal_ref.split()))
    m = _NUMBER_RE.search(ref)
    name = re.sub(r"(?<=[A-Za-z])\d{3,}$", "", (ref[:m.start()] if m else ref).rstrip(" ,;:(-\u2013\u2014"))
    if len(re.findall(r"[A-Za-z]", name)) < 2:
        return ""
    if m and re.fullmatch(r"(?:19|20)\d\d", m.group(1)) and ref[m.start()].isspace():
        return f"{name} {m.group(1)}"
    return name


def _record(result) -> dict:
    """An ``arxiv.Result`` as the JSON record the cache keeps."""
    return {"id": result.entry_id, "title": result.title, "summary": result.summary,
            "authors": [a.name for a in result.authors], "published": result.published.isoformat(),
            "comment": result.comment or "", "journal_ref": result.journal_ref or "", "doi": result.doi or "",
            "primary_category": result.primary_category or "", "categories": list(result.categories),
            "pdf_url": result.pdf_url or ""}


def _paper(rec: dict, path: str, where: int | str) -> Paper:
    """The :class:`Paper` of one entry record; SourceError when it has no title or id."""
    if not isinstance(rec, dict):
        raise SourceError(path, where, "entry is not an object")
    title = " ".join(str(rec.get("title") or "").split())
    ident = arxiv_id(str(rec.get("id") or ""))
    if not title or not ident:
        raise SourceError(path, where, "arXiv entry without a title" if not title else "arXiv entry without an id")
    links = [Link(url=f"https://arxiv.org/abs/{ident}", kind="paper", label="arxiv")]
    if rec.get("pdf_url"):
        links.append(Link(url=str(rec["pdf_url"]), kind="paper", label="pdf"))
    extra: dict = {"arxiv_id": ident}
    for key in ("comment", "journal_ref"):
        if rec.get(key):
            extra[key] = " ".join(str(rec[key]).split())
    if bare_doi(str(rec.get("doi") or "")):
        extra["doi"] = bare_doi(str(rec["doi"]))
    if rec.get("categories"):
        extra["categories"] = [str(c) for c in rec["categories"]]
    year = re.match(r"(\d{4})", str(rec.get("published") or ""))
    where_kw = {"line": where} if isinstance(where, int) else {"record": int(str(where).split()[-1])}
    return Paper(title=title, authors=[" ".join(str(a).split()) for a in rec.get("authors") or []],
                 abstract=" ".join(str(rec.get("summary") or "").split()),
                 venue=journal_venue(extra.get("journal_ref", "")) or "arXiv",
                 year=int(year.group(1)) if year else None, track=str(rec.get("primary_category") or ""),
                 links=links, sources=[SourceRef(format=FORMAT, path=path, native_id=ident, **where_kw)],
                 extra=extra)


def _papers(records: list, path: str, strict: bool) -> list[Paper]:
    """The papers of entry records; a paper listed again (results shift while paging) is kept once."""
    papers, seen = [], set()
    for i, rec in enumerate(records):
        try:
            paper = _paper(rec, path, f"record {i}")
        except SourceError as e:
            skip_record(e, strict)
            continue
        if paper.extra["arxiv_id"] not in seen:
            seen.add(paper.extra["arxiv_id"])
            papers.append(paper)
    return papers


def _fetch_records(source: str, search_kwargs: dict, cache_dir, refresh: bool, client=None, label=None,
                   progress: ProgressFactory | None = None) -> list:
    """The entry records of one arXiv API search: from the cache, else fetched (and cached); errors name ``label``.

    A fetch counts its entries on a progress bar (``progress``, default tqdm on stderr; pages of 100 come 3 s apart).
    """
    cache = FetchCache(source, cache_dir, label=label)
    cached = cache.load()
    if cached is not None and not refresh:
        return cached[0]
    if offline():
        raise cache.unreachable(_SERVICE, RuntimeError("offline (PAPERATLAS_OFFLINE is set)"), refresh)
    try:
        import arxiv
    except ImportError as e:
        raise SourceError(cache.label, None, "the arXiv reader needs the arxiv package: "
                                        "pip install 'paperatlas[arxiv]'") from e
    limit = search_kwargs.get("max_results") or DEFAULT_MAX
    client = client or arxiv.Client(page_size=min(100, limit), delay_seconds=3.0, num_retries=3)
    try:
        records = []
        with progress_of("arXiv", limit, "paper", progress) as update:
            for result in client.results(arxiv.Search(**search_kwargs)):
                records.append(_record(result))
                update(1)
    except (arxiv.ArxivError, OSError, ValueError) as e:  # HTTP errors, connection failures, unparsable pages
        raise cache.unreachable(_SERVICE, e, refresh) from e
    cache.save(records)
    return records


def fetch(query: str, strict: bool = False, cache_dir=None, refresh: bool = False, max_results: int | None = None,
          date_from: str | None = None, date_to: str | None = None, client=None,
          fetch_progress: ProgressFactory | None = None, **_options) -> list[Paper]:
    """Papers of an arXiv search (``paperatlas build arxiv:QUERY``).

    Args:
        query: A category (``cs.LG``), quoted words, or an arXiv API query (:func:`search_query`).
        strict: Raise on an entry without a title instead of skipping it.
        cache_dir: The cache directory (default :func:`._common.cache_root`).
        refresh: Fetch again even when this search is cached.
        max_results: At most this many papers (default :data:`DEFAULT_MAX`).
        date_from: First submission day, ``YYYY-MM-DD``.
        date_to: Last submission day, ``YYYY-MM-DD``.
        client: An ``arxiv.Client`` to use (tests); default: pages of up to 100, 3 s apart, 3 retries.
        fetch_progress: Where a fetch reports the entries received (:func:`.progress.progress_of`; default a tqdm bar
            on stderr when it is a terminal).
        **_options: Other build options, ignored.

    Returns:
        The papers in the API's order (relevance).

    Raises:
        SourceError: The arxiv package is missing, a date is malformed, or arXiv cannot be reached and the search
            is not cached (the message names the source and the cache).
    """
    limit = max_results or DEFAULT_MAX
    source = f"arxiv:{query}"
    key = f"{source}|{date_from or ''}|{date_to or ''}|{limit}"
    records = _fetch_records(key, {"query": search_query(query, date_from, date_to), "max_results": limit},
                             cache_dir, refresh, client, progress=fetch_progress)
    return _papers(records, source, strict)


def _read_feed(text: str, path: str, strict: bool) -> list[Paper]:
    from xml.etree.ElementTree import ParseError

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    try:
        root = fromstring(text)
    except (ParseError, DefusedXmlException, ValueError) as e:
        raise SourceError(path, None, f"not a readable Atom feed: {e}") from e
    records = []
    for entry in root.iter(f"{_ATOM}entry"):
        def text_of(tag: str, ns: str = _ATOM, el=entry) -> str:
            node = el.find(f"{ns}{tag}")
            return (node.text or "") if node is not None else ""

        pdf = next((x.get("href", "") for x in entry.findall(f"{_ATOM}link") if x.get("title") == "pdf"), "")
        primary = entry.find(f"{_ARXIV}primary_category")
        records.append({"id": text_of("id"), "title": text_of("title"), "summary": text_of("summary"),
                        "authors": [text_of("name", el=a) for a in entry.findall(f"{_ATOM}author")],
                        "published": text_of("published"), "comment": text_of("comment", _ARXIV),
                        "journal_ref": text_of("journal_ref", _ARXIV), "doi": text_of("doi", _ARXIV),
                        "primary_category": primary.get("term", "") if primary is not None else "",
                        "categories": [c.get("term", "") for c in entry.findall(f"{_ATOM}category")],
                        "pdf_url": pdf})
    return _papers(records, path, strict)


def read_text(text: str, path: str, strict: bool = False, cache_dir=None, refresh: bool = False, client=None,
              fetch_progress: ProgressFactory | None = None, **_hints) -> list[Paper]:
    """Read a saved arXiv Atom feed, or fetch the papers a file of arXiv ids/links names.

    Args:
        text: The file's whole text.
        path: The file (provenance, error messages).
        strict: Raise on a malformed entry or line instead of skipping it.
        cache_dir: The fetch cache directory (id lists).
        refresh: Fetch an id list again even when cached.
        client: An ``arxiv.Client`` (tests).
        fetch_progress: Where fetching an id list reports the entries received (default a tqdm bar on stderr).
        **_hints: Ignored.

    Returns:
        The papers, in file order.

    Raises:
        SourceError: The feed is not XML, or an id list cannot be fetched and is not cached.
    """
    if text.lstrip().startswith("<"):
        return _read_feed(text, path, strict)
    ids: list[str] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        ident = arxiv_id(line) if _ID_LINE_RE.match(line) else ""
        if not ident:
            skip_record(SourceError(path, n, f"not an arXiv id or link: {line.strip()[:60]!r}"), strict)
        elif ident not in ids:
            ids.append(ident)
    if not ids:
        raise SourceError(path, None, "no arXiv ids or links in the file")
    records = _fetch_records(f"arxiv:ids:{','.join(ids)}", {"id_list": ids, "max_results": len(ids)}, cache_dir,
                             refresh, client, label=path, progress=fetch_progress)
    return _papers(records, path, strict)
