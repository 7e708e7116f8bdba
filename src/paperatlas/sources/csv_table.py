"""CSV and TSV tables with a header row (a spreadsheet, a conference's accepted-paper table, ``publish --format csv``).

Read with the stdlib :mod:`csv` (delimiter ``,``, ``;``, tab or ``|`` detected by :class:`csv.Sniffer`; quoted cells
may span lines). Column names are matched case-insensitively, ignoring spaces, punctuation and a trailing ``(s)``, and
by common aliases (:data:`COLUMNS`): "Paper Title" or "Title" -> title; "Author(s)", "Authors" -> authors (split on
``;``, or on ``,``/`` and `` when no ``;`` is present; Zotero's "Last, First; Last, First" is turned around);
"Abstract"; "Year"; "Venue"/"Conference"/"Journal" (normalised by :func:`.bibtex.venue_label`: ``ICLR`` + year 2021 ->
``ICLR 2021``); "DOI"; "URL"/"Link"/"PDF"/"paper_url" (a bare arXiv id becomes its arxiv.org link) and
"Code"/"GitHub"/"code_url" -> links (every such column); "Decision"/"Status" -> status, a decision's wording made
the status it gives (:func:`._common.decision_status`: "Accept (poster)" -> ``Poster``, "Reject" -> ``Rejected``),
and a "Decision" column also ``extra["decision"]`` as worded (numeric decision codes, as some scraped tables have,
are dropped); "Track"; "Keywords"
(``;``/``,``-separated, or a Python list as pandas writes one: ``['a', 'b']``); "Affiliations"/"institutions"
(``;``-separated); "TL;DR" -> the authors' TL;DR (kept by the build), except in paperatlas's own export, whose TL;DRs
were generated. The facet columns ``publish --format csv`` writes are read back into :attr:`Paper.extra` where they
map: ``rating_mean``, ``citations`` (also "Ratings"/"Confidences" lists of review scores). When and where a paper
is presented goes to ``extra`` (:mod:`._presentation`): "Session" -> ``session``; "Start"/"starttime"/"start_time" and
"End"/"endtime"/"end_time" (ISO 8601 with a UTC offset, ``2025-12-05T16:30:00-08:00``, or local times with a
"Timezone" column naming an IANA zone) -> ``starts_at``/``ends_at``/``timezone``; "Location"/"Room"/"room_name" ->
``location``; "Poster"/"Poster number"/"poster_position"/"Board" -> ``poster``. HTML character references
left by scrapers (``BN&#39;s``) are decoded, and the ``'`` a writer puts before a cell starting with ``=``, ``+``,
``-`` or ``@`` (against formula injection) is dropped. Other columns (a pandas index, ``topic_id``, ``x``, ...) are
ignored. Without a venue or year column, the ``venue``/``year`` hints apply, else a venue and year in the file name
(``nips2018.csv`` -> ``NeurIPS 2018``).

A row without a title is skipped and reported with its line (:func:`._common.skip_record`).
"""

from __future__ import annotations

import csv
import html
import io
import re

from ..model import AUTHOR_TLDR, Link, Paper, SourceError
from ._common import arxiv_id, bibliographic_paper, decision_status, skip_record, venue_from_filename
from ._presentation import presentation
from .bibtex import venue_label

FORMAT = "csv"
#: The library that parses it, one example and the fields it fills (README table).
LIBRARY = "csv (stdlib)"
EXAMPLE = "paperatlas build accepted-papers.csv"
FIELDS = ("title, authors, abstract, year, venue, DOI, links (URL, PDF, code), status/decision, track, keywords, "
          "affiliations, TL;DR, rating, citations, session, start/end time, room, poster number")
TESTED_ON = ("scraped ICML/NeurIPS/ICLR tables (pandas CSV), Zotero's CSV layout and paperatlas's own CSV "
             "(round trip)")

#: Field -> accepted column names, compared after :func:`_key` (lower-case, letters and digits only).
COLUMNS = {
    "title": ("title", "papertitle", "name", "articletitle", "documenttitle"),
    "authors": ("authors", "author", "authorss", "authornames", "creators", "creator"),
    "abstract": ("abstract", "summary", "abstractnote", "description"),
    "year": ("year", "publicationyear", "pubyear", "date", "published"),
    "venue": ("venue", "conference", "journal", "booktitle", "publicationtitle", "source", "sourcetitle",
              "proceedings"),
    "doi": ("doi",),
    "url": ("url", "link", "paperurl", "paperlink", "pdf", "pdfurl", "arxiv", "openreview", "site", "forum"),
    "code": ("code", "codeurl", "github", "repository", "repo"),
    "status": ("status", "presentation", "presentationtype"),
    "decision": ("decision", "accepttype", "acceptance"),
    "track": ("track",),
    "keywords": ("keywords", "keyword", "tags", "manualtags", "keyphrases", "topics"),
    "affiliations": ("affiliations", "affiliation", "institutions", "aff"),
    "tldr": ("tldr", "tldrs", "onesentencesummary"),
    "rating_mean": ("ratingmean", "rating", "averagerating", "score", "avgrating", "ratingavg"),
    "ratings": ("ratings", "scores", "reviewratings", "reviewscores"),
    "confidences": ("confidences", "confidence", "reviewconfidences"),
    "citations": ("citations", "citationcount", "citedby", "gscitation"),
    # when and where it is presented (the NeurIPS/ICML virtual-site export says starttime, endtime, room_name,
    # poster_position; ACL's miniconf start_time, end_time, room)
    "session": ("session", "sessionname", "sessiontitle", "sessions"),
    "start": ("start", "starttime", "startsat", "starts", "begin", "begins", "startdatetime"),
    "end": ("end", "endtime", "endsat", "ends", "finish", "enddatetime"),
    "timezone": ("timezone", "tz", "timezonename"),
    "location": ("location", "room", "roomname", "hall", "place"),
    "poster": ("poster", "posternumber", "posterno", "posterid", "posterposition", "board", "boardnumber",
               "posterboard"),
}
_ALIAS = {alias: name for name, aliases in COLUMNS.items() for alias in aliases}
_PRESENTATION = ("session", "start", "end", "timezone", "location", "poster")
# Columns that only paperatlas's own export has: its TL;DRs are generated, not the authors'.
_OWN_EXPORT = {"topiclabel", "topicid"}
# What makes a spreadsheet read a cell as a formula (OWASP's CSV-injection guidance).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_ENTITY_RE = re.compile(r"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|amp|quot|lt|gt|apos|nbsp);")
_QUOTED_RE = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def _key(column: str) -> str:
    """A column name's comparison key: ``"Author(s)"`` -> ``"authors"``, ``"TL;DR"`` -> ``"tldr"``."""
    k = column.strip().lower().replace("(s)", "s")
    return re.sub(r"[^a-z0-9]", "", k)


def _dialect(text: str) -> type[csv.Dialect]:
    """Excel's CSV dialect (``"``-quoting, doubled quotes) with the header line's delimiter: ``,`` ``;`` tab ``|``."""
    first = text[:20000].split("\n", 1)[0]
    try:
        delimiter = csv.Sniffer().sniff(first + "\n", delimiters=",;\t|").delimiter
    except csv.Error:
        delimiter = "\t" if first.count("\t") > first.count(",") else ","

    class Dialect(csv.excel):
        pass

    Dialect.delimiter = delimiter
    return Dialect


def sniff(head: str) -> bool:
    """Whether a file is a CSV/TSV table of papers.

    Args:
        head: The start of the file's text (the first 20,000 characters).

    Returns:
        True when its first line, split as CSV/TSV, has at least two cells and a title column (:data:`COLUMNS`).
    """
    first = head.lstrip("\ufeff").split("\n", 1)[0]
    if not first.strip() or first.lstrip().startswith(("{", "[", "<", "#", "@", "TY  -")):
        return False
    try:
        cells = next(csv.reader([first], _dialect(head)))
    except (csv.Error, StopIteration):
        return False
    return len(cells) >= 2 and any(_ALIAS.get(_key(c)) == "title" for c in cells)


def _unguard(cell: str) -> str:
    """``cell`` without the ``'`` a CSV writer puts before a leading ``=``, ``+``, ``-``, ``@``, tab or return.

    ``publish --format csv`` (:func:`paperatlas.publish.csv_out.text_cell`) and others guard such cells so that
    spreadsheets show them as text instead of running them as formulas.
    """
    return cell[1:] if cell[:1] == "'" and cell[1:2] in _FORMULA_START else cell


def _unescape(text: str) -> str:
    """``text`` with HTML character references decoded, when it has any (``BN&#39;s`` -> ``BN's``)."""
    return html.unescape(text) if _ENTITY_RE.search(text) else text


def _items(value: str) -> list[str] | None:
    """The strings of a cell holding a Python list (``"['a', 'b']"``, as pandas writes a list column); else None."""
    value = value.strip()
    if len(value) < 2 or value[0] != "[" or value[-1] != "]":
        return None
    inner = value[1:-1]
    if _QUOTED_RE.sub("", inner).replace(",", "").strip():
        return None
    return [re.sub(r"\\(.)", r"\1", a or b) for a, b in _QUOTED_RE.findall(inner)]


def _split_authors(value: str) -> list[str]:
    """``"A B; C D"``, ``"B, A; D, C"`` (Zotero's CSV), ``"A B, C D and E F"`` or ``"['A B', 'C D']"`` -> names."""
    listed = _items(value)
    if listed is not None:
        return listed
    if ";" in value:
        parts = [a.strip() for a in value.split(";")]
        if all(a.count(",") == 1 for a in parts if a):  # "Last, First" each
            parts = [f"{a.split(',')[1].strip()} {a.split(',')[0].strip()}".strip() for a in parts]
        return parts
    return [a.strip() for a in re.split(r",|\band\b|&", value)]


def _split_list(value: str) -> list[str]:
    listed = _items(value)
    return listed if listed is not None else [k.strip() for k in re.split(r"[;,]", value)]


def _number(value: str) -> float | None:
    try:
        x = float(value.strip().lstrip("'"))
    except ValueError:
        return None
    return x if x == x and abs(x) != float("inf") else None


def _numbers(value: str) -> list[float]:
    parts = _items(value)
    parts = parts if parts is not None else re.split(r"[;,\s]+", value.strip("[]() "))
    return [x for x in (_number(v) for v in parts if v.strip()) if x is not None]


def _urls(value: str) -> list[str]:
    """The links of a URL cell (``;``/space separated); a bare arXiv id (``1706.03762``) becomes its abs page."""
    out = []
    for u in re.split(r"[;\s]+", value):
        if u and not u.startswith(("http://", "https://")) and (ax := arxiv_id(u)):
            u = f"https://arxiv.org/abs/{ax}"
        if u:
            out.append(u)
    return out


def _row_paper(rec: dict[str, str], path: str, line: int, venue: str, year: int | None, own_export: bool,
               strict: bool = False) -> Paper:
    """The paper of one row (``rec``: field -> non-empty cell, with a title)."""
    row_year = rec.get("year") or year
    # "2", "-1": a scraper's codes, not a decision or status
    decision, status = ("" if _number(v) is not None else v for v in (rec.get("decision", ""), rec.get("status", "")))
    p = bibliographic_paper(
        FORMAT, path, line, title=_unescape(rec["title"]), authors=_split_authors(_unescape(rec.get("authors", ""))),
        year=row_year, venue=venue_label(rec.get("venue") or venue, row_year),
        abstract=_unescape(rec.get("abstract", "")), doi=rec.get("doi", ""), urls=_urls(rec.get("url", "")),
        keywords=_split_list(_unescape(rec.get("keywords", ""))),
        status=decision_status(status or decision) or status or decision)
    p.track = rec.get("track", "")
    for url in _urls(rec.get("code", "")):
        if url.startswith(("http://", "https://")) and all(x.url != url for x in p.links):
            p.links.append(Link(url=url, kind="code", label="code"))
    if rec.get("affiliations"):
        p.affiliations = [a.strip() for a in rec["affiliations"].split(";") if a.strip()]
    if decision:
        p.extra["decision"] = decision
    if rec.get("tldr") and not own_export:
        p.tldr, p.tldr_method = " ".join(_unescape(rec["tldr"]).split()), AUTHOR_TLDR
    for key in ("ratings", "confidences"):
        if values := _numbers(rec.get(key, "")):
            p.extra[key] = values
    if "ratings" not in p.extra and (r := _number(rec.get("rating_mean", ""))) is not None:
        p.extra["rating_mean"] = r
    if (c := _number(rec.get("citations", ""))) is not None and c >= 0:
        p.extra["citations"] = int(c)
    p.extra.update(presentation(path, line, strict, **{k: rec.get(k, "") for k in _PRESENTATION}))
    return p


def read_text(text: str, path: str, strict: bool = False, venue: str | None = None, year: int | None = None,
              **_hints) -> list[Paper]:
    """Parse a CSV/TSV table into :class:`Paper` records, in row order.

    Args:
        text: The file's whole text.
        path: The file (provenance, error messages; a venue and year in its name are the default).
        strict: Raise on the first row without a title (or that cannot be split) instead of skipping it.
        venue: Venue of rows whose table has no venue column or leaves it empty.
        year: Year of rows whose table has no year column or leaves it empty.
        **_hints: Ignored.

    Returns:
        One paper per row with a title (column mapping in the module docstring).

    Raises:
        SourceError: The header has no title column (file:1), the table cannot be split (file and line); when
            ``strict``, a row without a title (file and 1-based line).
    """
    reader = csv.reader(io.StringIO(text), _dialect(text))
    try:
        header = next(reader)
    except StopIteration as e:
        raise SourceError(path, None, "empty table") from e
    except csv.Error as e:
        raise SourceError(path, 1, f"cannot read the header row: {e}") from e
    fields = [_ALIAS.get(_key(c), "") for c in header]
    if "title" not in fields:
        raise SourceError(path, 1, "no title column in the header (expected e.g. 'Title' or 'Paper Title'); "
                                   f"columns: {', '.join(header)[:200]}")
    own_export = bool(_OWN_EXPORT & {_key(c) for c in header})
    file_venue, file_year = venue_from_filename(path)
    venue = venue if venue is not None else file_venue
    year = year if year is not None else file_year
    papers: list[Paper] = []
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            skip_record(SourceError(path, line, f"cannot split this row: {e}"), strict)
            continue
        if not any(c.strip() for c in row):
            continue
        rec: dict[str, str] = {}
        for name, cell in zip(fields, row, strict=False):
            if not name or not cell.strip():
                continue
            if name not in rec:
                rec[name] = _unguard(cell.strip())
            elif name in ("url", "code"):  # e.g. "URL" and "PDF" columns: every link
                rec[name] += " " + cell.strip()
        if not rec.get("title"):
            skip_record(SourceError(path, line, "row without a title"), strict)
            continue
        papers.append(_row_paper(rec, path, line, venue or "", year, own_export, strict))
    return papers
