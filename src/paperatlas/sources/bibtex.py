r"""BibTeX files (``.bib``: a Zotero, DBLP or Google Scholar export, or paperatlas's own ``publish --format bibtex``).

Parsed with bibtexparser 2; author lists are split by :func:`split_names` (``Devlin, Jacob and Chang, Ming-Wei``
reads ``Jacob Devlin; Ming-Wei Chang``); LaTeX in values is unfolded by :func:`paperatlas.latex.clean_markup`
(``Rockt{\"a}schel`` reads ``Rocktäschel``, ``\&`` reads ``&``; ``$...$`` math is kept) and BibTeX's protective
braces are dropped outside math (``{BERT}`` reads ``BERT``). Zotero's escaping of a backslash in a value
(``{\textbackslash}url\{https://...\}``) is undone first. bibtexparser's own LaTeX decoding (pylatexenc) is not
used: it is 100 times slower on a 10k-entry file and turns math into Unicode text.

Field mapping: ``title``; ``author`` -> authors; ``year`` (else ``date``); venue from ``booktitle``, ``journal``,
``howpublished`` (unless it is a URL), a preprint server named in ``publisher`` (``arXiv``), ``institution`` or
``school``, normalised by :func:`venue_label` (a known acronym and a year -> ``ICLR 2021``; any arXiv reference ->
``arXiv``); ``abstract``; ``doi`` (else the DOI of a ``doi.org`` URL); ``url``, ``pdf``, a URL in ``howpublished`` and
the arXiv id of ``eprint`` (with ``archiveprefix``), ``journal`` or ``note`` (``arXiv: 1510.03820``) -> links and
``extra["arxiv_id"]``; ``code``/``github`` (non-standard fields some exports add) -> code links; ``keywords`` (``,``
or ``;`` separated) -> given keyphrases; the citation key -> the record's native id; a ``Status: Oral`` statement in
``note`` -> status. ``@string`` macros are resolved; ``@comment`` and ``@preamble`` blocks are ignored.

A block bibtexparser cannot parse, or an entry without a title, is skipped and reported with its line
(:func:`._common.skip_record`).
"""

from __future__ import annotations

import logging
import re

from ..latex import clean_markup
from ..model import Link, Paper, SourceError
from ._common import VENUES, arxiv_id, bare_doi, bibliographic_paper, skip_record, venue_name

FORMAT = "bibtex"
#: The library that parses it, one example and the fields it fills (README table).
LIBRARY = "bibtexparser 2.1"
EXAMPLE = "paperatlas build my-zotero-library.bib"
FIELDS = ("title, authors, year, venue (booktitle/journal; ICLR 2021 from an acronym + year), abstract, DOI, "
          "links (url, arXiv eprint/note), arXiv id, keywords")
TESTED_ON = "a Zotero export, three publishers' BibTeX from paperlists, and paperatlas's own BibTeX (round trip)"

_ENTRY_RE = re.compile(r"^\s*@\s*(?!comment\b|preamble\b|string\b)[A-Za-z]+\s*[{(]", re.IGNORECASE | re.MULTILINE)

# A known venue acronym as a listing spells it: in capitals (ICLR, NIPS) or as the venue writes itself (NeurIPS).
_ACRONYM_RE = re.compile(r"(?<![A-Za-z])(" + "|".join(sorted(
    {v.upper() for v in VENUES} | {venue_name(v) for v in VENUES}, key=len, reverse=True)) + r")(?![A-Za-z])")
# Venues that carry a conference's acronym but are not its main proceedings.
_NOT_MAIN_RE = re.compile(r"\b(?:workshops?|findings|companion|demos?|demonstrations?|tutorials?|student|"
                          r"transactions|journal|letters|doctoral|shared tasks?|adjunct|extended abstracts?|forum|"
                          r"explorations|magazine|newsletter|posters?|challenges?|competitions?|symposium)\b",
                          re.IGNORECASE)
_YEAR_RE = re.compile(r"(?<!\d)(19[5-9]\d|20\d\d)(?!\d)")
# A conference's main proceedings named in full, without its acronym ("Proceedings of the 38th International
# Conference on Machine Learning", "Advances in Neural Information Processing Systems 33"): the acronym. The name
# must end the venue or be followed by punctuation, a number or "and the" (ACL-IJCNLP), so that "International
# Conference on Machine Learning and Applications" (ICMLA) or "... on Computer Vision Theory and Applications"
# (VISAPP) is not taken for ICML or ICCV. The NAACL and EACL names are tried before ACL's.
_FULL_NAMES = (
    ("neurips", r"Neural Information Processing Systems"),
    ("icml", r"International Conference on Machine Learning"),
    ("iclr", r"International Conference on Learning Representations"),
    ("cvpr", r"Conference on Computer Vision and Pattern Recognition"),
    ("eccv", r"European Conference on Computer Vision"),
    ("iccv", r"International Conference on Computer Vision"),
    ("naacl", r"North American Chapter of the Association for Computational Linguistics"),
    ("eacl", r"European Chapter of the Association for Computational Linguistics"),
    ("acl", r"Annual Meeting of the Association for Computational Linguistics"),
    ("emnlp", r"Conference on Empirical Methods in Natural Language Processing"),
    ("aaai", r"AAAI Conference on Artificial Intelligence"),
    ("ijcai", r"International Joint Conference on Artificial Intelligence"),
)
_FULL_NAME_RES = tuple((a, re.compile(r"\b" + n.replace(" ", r"\s+") + r"(?!\s+(?!and\s+the\b)[A-Za-z])",
                                      re.IGNORECASE)) for a, n in _FULL_NAMES)
# The year of the n-th meeting, for conferences held every year since: ICML 38th = 2021 (from the 20th, 2003),
# ICLR 9th = 2021, NeurIPS 35th = 2021, ACL 59th = 2021 (from the 40th, 2002), AAAI 35th = 2021 (from the 25th,
# 2011; there was no AAAI 2009). ``(offset, first n it holds for)``. IJCAI (biennial until 2015), CVPR, ICCV, ECCV,
# EMNLP and NAACL do not number their meetings in a way that maps to a year: only a year field gives theirs.
_ORDINAL_YEAR = {"icml": (1983, 20), "iclr": (2012, 1), "neurips": (1986, 1), "acl": (1962, 40),
                 "aaai": (1986, 25)}
_ORDINAL_RE = re.compile(r"\b(\d{1,3})(?:st|nd|rd|th)\b", re.IGNORECASE)
# "Advances in Neural Information Processing Systems 33": the proceedings' volume, 1987 + n (33 = NeurIPS 2020).
_NEURIPS_VOLUME_RE = re.compile(r"Processing\s+Systems\s+(\d{1,2})(?!\d)", re.IGNORECASE)


def _full_name_acronym(venue: str) -> str | None:
    """The acronym of a conference named in full in ``venue`` (see ``_FULL_NAMES``), else None."""
    return next((a for a, rx in _FULL_NAME_RES if rx.search(venue)), None)


def _ordinal_year(acronym: str, venue: str) -> str | None:
    """The year an ordinal ("38th") or a NeurIPS volume number in ``venue`` stands for, where that is reliable."""
    key = acronym.lower()
    if key in ("neurips", "nips") and (m := _NEURIPS_VOLUME_RE.search(venue)):
        return str(1987 + int(m.group(1)))
    key = "neurips" if key == "nips" else key
    if key in _ORDINAL_YEAR and (m := _ORDINAL_RE.search(venue)):
        offset, first = _ORDINAL_YEAR[key]
        n = int(m.group(1))
        return str(offset + n) if n >= first and offset + n <= 2100 else None
    return None


# Preprint servers a ``publisher`` field may name (Zotero's arXiv entries: ``publisher = {arXiv}``).
_PREPRINT_RE = re.compile(r"^(?:arxiv|biorxiv|medrxiv|chemrxiv|techrxiv|psyarxiv|ssrn|research square|"
                          r"preprints(?:\.org)?|osf preprints)$", re.IGNORECASE)


def venue_label(venue: str, year: str | int | None = None) -> str:
    """The venue as the atlas names it: ``ICLR 2021`` for a conference's main proceedings, ``arXiv`` for preprints.

    A venue that names a known conference acronym (:data:`._common.VENUES`, written in capitals or the venue's own
    spelling: ``ICLR``, ``NIPS``, ``NeurIPS``) becomes the acronym's display name and a year: the year written in
    the venue, else ``year``. ``9th International Conference on Learning Representations, {ICLR} 2021`` (DBLP),
    ``Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)`` with year 2022,
    ``31st AAAI Conference on Artificial Intelligence, AAAI 2017`` -> ``ICLR 2021``, ``CVPR 2022``, ``AAAI 2017``.
    A main conference named in full without its acronym is recognised too (NeurIPS/NIPS, ICML, ICLR, CVPR, ICCV,
    ECCV, ACL, EMNLP, NAACL, EACL, AAAI, IJCAI): ``Proceedings of the 38th International Conference on Machine
    Learning`` -> ``ICML 2021``. Its year is the one written in the venue, else ``year``, else (ICML, ICLR, NeurIPS,
    ACL, AAAI only, whose meetings are numbered one a year) the ordinal's (38th ICML = 2021) or the NeurIPS volume's
    (``Advances in Neural Information Processing Systems 33`` = 2020).
    Workshops, Findings, companions, demos, journals and the like (``ICLR 2021 Workshop on ...``,
    ``Transactions of the ACL``) keep their name, as does a venue with no acronym or no year. A venue starting with
    ``arXiv`` (Zotero's ``arXiv:1510.03820 [cs]``, Google Scholar's ``arXiv preprint arXiv:...``, ``ArXiv``) is
    ``arXiv``. Whitespace is collapsed.

    Args:
        venue: The venue as the record writes it (booktitle, journal, container-title, a CSV column).
        year: The record's year (an int or a text holding one), used when the venue states none.

    Returns:
        The venue label; ``""`` for an empty venue.
    """
    v = " ".join((venue or "").split())
    if not v:
        return ""
    if re.match(r"arxiv\b", v, re.IGNORECASE):
        return "arXiv"
    m = _ACRONYM_RE.search(v)
    acronym = m.group(1) if m else _full_name_acronym(v)
    if acronym is None or _NOT_MAIN_RE.search(v):
        return v
    y = _YEAR_RE.search(v) or _YEAR_RE.search(str(year or ""))
    found = y.group(1) if y else _ordinal_year(acronym, v)
    return f"{venue_name(acronym)} {found}" if found else v


def sniff(head: str) -> bool:
    """Whether a file is BibTeX.

    Args:
        head: The start of the file's text (the first 20,000 characters).

    Returns:
        True when a line starts an entry such as ``@inproceedings{`` or ``@article(``.
    """
    return _ENTRY_RE.search(head) is not None


def _unbrace(text: str) -> str:
    """Drop BibTeX's protective braces (``{BERT}`` -> ``BERT``) outside ``$...$`` math, where they are LaTeX."""
    if "{" not in text and "}" not in text:
        return text
    parts = re.split(r"(\$[^$]*\$)", text)
    return "".join(p if p.startswith("$") and p.endswith("$") and len(p) > 1 else re.sub(r"(?<!\\)[{}]", "", p)
                   for p in parts)


def _unzotero(text: str) -> str:
    r"""Undo Zotero's escaping of a literal backslash: ``{\textbackslash}url\{x\}`` -> ``\url{x}``."""
    if "textbackslash" not in text:
        return text
    text = re.sub(r"\{\\textbackslash\}|\\textbackslash(?:\{\}|\s+|(?![A-Za-z]))", lambda _: "\\", text)
    return text.replace("\\{", "{").replace("\\}", "}")


# Literal braces (``\{``, ``\textbraceleft{}``) are set aside while LaTeX is unfolded and protective braces dropped.
_LBRACE, _RBRACE = "\ue002", "\ue003"
_TEXTBRACE_RE = re.compile(r"\{\\textbrace(left|right)\}|\\textbrace(left|right)(?:\{\}|\s+|(?![A-Za-z]))")


def _protect_braces(text: str) -> str:
    r"""``text`` with its literal braces outside math (``\{``, ``\textbraceleft{}``) replaced by placeholders."""
    text = text.replace(_LBRACE, "").replace(_RBRACE, "")
    if "\\" not in text:
        return text
    text = _TEXTBRACE_RE.sub(lambda m: _LBRACE if "left" in (m.group(1), m.group(2)) else _RBRACE, text)
    parts = re.split(r"(\$[^$]*\$)", text)
    return "".join(p if p.startswith("$") and p.endswith("$") and len(p) > 1
                   else p.replace("\\{", _LBRACE).replace("\\}", _RBRACE) for p in parts)


# A value with none of the characters LaTeX, Markdown or HTML markup needs: clean_markup would only fold its
# whitespace (checked on the 166k such titles, abstracts and BibTeX values of the shared paperlists).
_PLAIN_RE = re.compile(r"[^\\$\[\]<>`~*{}]*")


# LaTeX's special letters (``Jakub \L\k{a}cki``, ``Bj\o rn``), and the dotless i and j under an accent (``\'\i``).
_LETTERS = {"L": "Ł", "l": "ł", "O": "Ø", "o": "ø", "ss": "ß", "AE": "Æ", "ae": "æ", "AA": "Å", "aa": "å",
            "OE": "Œ", "oe": "œ", "i": "i", "j": "j"}
_LETTER_RE = re.compile(r"\\(" + "|".join(sorted(_LETTERS, key=len, reverse=True)) + r")(?![A-Za-z])(?:\{\}| ?)")


def _clean(value: str) -> str:
    if _PLAIN_RE.fullmatch(value) and "''" not in value:
        return " ".join(value.split())
    if "\\" in value:
        value = _LETTER_RE.sub(lambda m: _LETTERS[m.group(1)], value)
    text = _unbrace(clean_markup(_protect_braces(_unzotero(value))))
    return text.replace(_LBRACE, "{").replace(_RBRACE, "}") if _LBRACE in text or _RBRACE in text else text


def _value(fields: dict[str, str], key: str) -> str:
    """Field ``key`` of an entry's ``fields`` (lower-cased keys), LaTeX unfolded; ``""`` when absent."""
    value = fields.get(key)
    if not value:
        return ""
    paragraphs = re.split(r"\n\s*\n", value.strip())  # an abstract's paragraph breaks survive
    return "\n\n".join(_clean(x) for x in paragraphs if x.strip())


_NAME_SEP_RE = re.compile(r"[{}]|\s+and\s+", re.IGNORECASE)
_COMMA_RE = re.compile(r"[{}]|,")


def _split_top(text: str, sep: re.Pattern[str]) -> list[str]:
    """``text`` split at the matches of ``sep`` that are outside braces (``sep`` also matches the braces)."""
    parts, depth, start = [], 0, 0
    for m in sep.finditer(text):
        tok = m.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            parts.append(text[start:m.start()])
            start = m.end()
    parts.append(text[start:])
    return parts


def split_names(value: str) -> list[str]:
    r"""BibTeX's name list as display names, "First von Last Jr".

    Names are split at ``and`` outside braces (``{Barnes and Noble}`` is one name); each is in one of BibTeX's three
    forms (Patashnik, *BibTeXing*, 1988, section 4): ``First von Last`` (kept), ``von Last, First`` and
    ``von Last, Jr, First`` (turned around). On the 25,694 author lists of the shared paperlists' BibTeX the result
    equals bibtexparser 2's ``SeparateCoAuthors`` + ``SplitNameParts`` + ``MergeNameParts(style="first")``, at a
    fraction of the cost, except for 58 lists where those drop an accent command that starts a word
    (``\'{A}lvarez`` -> ``{A}lvarez``, ``Jo\~{a}o`` -> ``Jo\ {a}o``) and this keeps it. Braces and LaTeX are left
    for :func:`_clean`.

    Args:
        value: An ``author`` field's raw value, e.g. ``"Devlin, Jacob and M{\"u}ller, Anna"``.

    Returns:
        E.g. ``["Jacob Devlin", 'Anna M{\"u}ller']``; empty names dropped, and so is ``others`` (BibTeX's
        ``and others``, "et al.": :func:`read_text` keeps it as ``extra["authors_truncated"] = True``).
    """
    out = []
    for name in _split_top(value, _NAME_SEP_RE):
        parts = [" ".join(p.split()) for p in _split_top(name, _COMMA_RE)]
        if len(parts) == 2:
            name = f"{parts[1]} {parts[0]}"
        elif len(parts) >= 3:
            name = f"{parts[2]} {parts[0]} {parts[1]}"
        name = " ".join(name.split())
        if name and name.lower() != "others":  # BibTeX's "and others" is "et al.", not an author
            out.append(name)
    return out


def _has_others(value: str) -> bool:
    """Whether an ``author`` field ends its list with BibTeX's ``and others`` (the list is cut: et al.)."""
    return any(" ".join(n.split()).lower() == "others" for n in _split_top(value, _NAME_SEP_RE))


def _authors(fields: dict[str, str]) -> list[str]:
    return [_clean(n) for n in split_names(fields.get("author", ""))]


def _venue_and_urls(entry: dict[str, str], urls: list[str]) -> str:
    """The entry's venue as written (see the module docstring); a URL found in ``howpublished`` goes to ``urls``."""
    for key in ("booktitle", "journal", "howpublished"):
        value = _value(entry, key)
        if value.startswith(("http://", "https://")):
            urls.append(value.split()[0])
        elif value:
            return value
    publisher = _value(entry, "publisher")
    if _PREPRINT_RE.match(publisher):
        return publisher
    return _value(entry, "institution") or _value(entry, "school")


def _arxiv(entry: dict[str, str]) -> str:
    """The entry's arXiv id (``""`` when none).

    From ``eprint`` (with ``archiveprefix`` arXiv, or an arXiv-shaped id), else from ``arxivid`` (Mendeley) or an
    ``arXiv:`` reference in ``journal``, ``note`` or ``number``.
    """
    eprint = _value(entry, "eprint")
    if eprint and ("arxiv" in _value(entry, "archiveprefix").lower() or re.fullmatch(r"\d{4}\.\d{4,5}(v\d+)?",
                                                                                        eprint)):
        return arxiv_id(eprint)
    ax = arxiv_id(_value(entry, "arxivid"))
    for key in ("journal", "note", "number"):
        text = _value(entry, key)
        if not ax and "arxiv" in text.lower():
            ax = arxiv_id(text)
    return ax


def _status(note: str) -> str:
    """A ``Status: Oral`` statement in ``note`` (as paperatlas's CSL-JSON writes one), else ``""``."""
    m = re.search(r"\bStatus:\s*([A-Za-z][\w -]*?)\s*(?:[.;\n]|$)", note)
    return m.group(1) if m else ""


def read_text(text: str, path: str, strict: bool = False, **_hints) -> list[Paper]:
    """Parse a BibTeX file's text into :class:`Paper` records, in file order.

    Args:
        text: The file's whole text.
        path: The file (provenance, error messages).
        strict: Raise on the first block that cannot be parsed or entry without a title, instead of skipping it.
        **_hints: Ignored (every entry states its own venue and year).

    Returns:
        One paper per entry with a title (field mapping in the module docstring).

    Raises:
        SourceError: When ``strict`` and a block is malformed or an entry has no title (file and 1-based line).
    """
    import bibtexparser
    from bibtexparser.exceptions import ParsingException

    log = logging.getLogger("bibtexparser")
    level = log.level
    log.setLevel(logging.CRITICAL)  # its "Parsing of block aborted" warnings: we report each one as RecordSkipped
    try:
        lib = bibtexparser.parse_string(text)
    except (ParsingException, ValueError, IndexError, KeyError, TypeError, AttributeError) as e:
        raise SourceError(path, None, f"cannot parse BibTeX: {e}") from e
    finally:
        log.setLevel(level)
    problems = [(b.start_line + 1, "cannot parse this entry: " + " ".join(
        str(getattr(b.error, "abort_reason", "") or "syntax error").split())[:160]) for b in lib.failed_blocks]
    papers: list[tuple[int, Paper]] = []
    for block in lib.entries:
        line = block.start_line + 1
        entry = {f.key.lower(): str(f.value) for f in block.fields}
        title = " ".join(_value(entry, "title").split())
        if not title:
            problems.append((line, f"entry {block.key!r} has no title"))
            continue
        urls = [u for u in (_value(entry, "url"), _value(entry, "pdf")) if u]
        venue = _venue_and_urls(entry, urls)
        ax = _arxiv(entry)
        if ax and not any("arxiv.org" in u for u in urls):
            urls.append(f"https://arxiv.org/abs/{ax}")
        doi = _value(entry, "doi") or next((bare_doi(u) for u in urls if "doi.org/" in u), "")
        year = _value(entry, "year") or _value(entry, "date")
        code = [u for u in (_value(entry, k) for k in ("code", "github", "codeurl")) if u.startswith("http")]
        papers.append((line, bibliographic_paper(
            FORMAT, path, line, title=title, authors=_authors(entry), year=year, venue=venue_label(venue, year),
            abstract=_value(entry, "abstract"), doi=doi, urls=urls,
            keywords=re.split(r"[;,]", _value(entry, "keywords")), status=_status(_value(entry, "note")),
            native_id=block.key)))
        p = papers[-1][1]
        if ax:
            p.extra.setdefault("arxiv_id", ax)
        if p.year is None and (vy := re.search(r" ((?:19|20)\d\d)$", p.venue or "")):
            p.year = int(vy.group(1))  # no year field: the year the venue label found (38th ICML -> 2021)
        if _has_others(entry.get("author", "")):
            p.extra["authors_truncated"] = True  # "and others": the authors named are the first few (et al.)
        p.links += [Link(url=u, kind="code", label="code") for u in code if all(x.url != u for x in p.links)]
    for line, problem in sorted(problems):
        skip_record(SourceError(path, line, problem), strict)
    return [p for _, p in sorted(papers, key=lambda x: x[0])]
