"""Resolving what a person already has (a bibliography, a list of links, a blog post) to the papers of an atlas.

References come from any file a reader understands (:func:`paperatlas.sources.read`), one per record, or from any
other text (:func:`references_in_text`: each line's identifiers, headings, link texts, bold/italic and quoted spans,
table cells, the parts of a ``Title. Authors. Venue`` citation and the line itself, with the authors of an author
line under a title or of the highlights post's byline).

:func:`resolve` matches each reference, in this order: an identifier (DOI, arXiv id, OpenReview forum id, atlas id
or page, a link URL) that exactly one atlas paper carries; a title equal after :func:`_key` (case, accents, hyphens,
punctuation and spaces do not matter); a title at least :data:`TITLE_MIN_SIMILARITY` similar (rapidfuzz's Indel
ratio) whose differing words are typos (:func:`typo_like`); in free text, a whole atlas title standing in the line
between punctuation (``Title (Author et al., 2021)``). A paper none of whose authors the reference shares (when both
name some) is not it (:func:`paperatlas.sources.merge.authors_overlap`); equally similar papers are told apart by
the authors, else the reference is *ambiguous* and nothing is added. Precision comes first.

Only references that plainly name a paper are reported as *not in the atlas* (:attr:`Reference.explicit`): a
record, an identifier, a list item or span that reads like a title, a title line followed by its authors or by a
paragraph (not one citing ``[n]``: a topic's overview). Prose, equations, headings and detail lines are not.
"""
from __future__ import annotations

import re
from collections import Counter, namedtuple
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from itertools import takewhile
from pathlib import Path

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from . import sources
from .latex import unescape_markdown
from .model import Paper, SourceError
from .sources._common import arxiv_id, bare_doi
from .sources.merge import authors_overlap
from .text import find_urls, normalize_title, strip_accents
from .vocab import BROAD, GENERIC, STOP

#: Smallest title similarity (0-100, rapidfuzz ``fuzz.ratio`` of normalised titles) that counts as a match.
TITLE_MIN_SIMILARITY = 90.0
#: Two candidates whose similarities differ by less than this are a tie (decided by authors, else ambiguous).
TIE_MARGIN = 3.0
#: Candidate titles shorter than this (normalised characters) are matched exactly only (not by similarity).
MIN_FUZZY_CHARS = 16
#: An atlas title found inside a longer line must have at least this many words and normalised characters.
MIN_CONTAINED_WORDS, MIN_CONTAINED_CHARS = 4, 24

_OPENREVIEW_RE = re.compile(r"openreview\.net/(?:forum|pdf)\?(?:[^#\s]*&)?id=([A-Za-z0-9_-]+)")
_ARXIV_TEXT_RE = re.compile(r"(?:\barxiv\s*:?\s*|arxiv\.org/(?:abs|pdf|html)/)(\d{4}\.\d{4,5})(?:v\d+)?", re.I)
_BARE_ID_RE = re.compile(r"^\s*(?:[-*+•]\s+)?(?:(\d{4}\.\d{4,5})(?:v\d+)?|([0-9a-f]{10}))\s*$")  # arXiv, atlas id
_ATLAS_LINK_RE = re.compile(r"\bpaper/([0-9a-f]{10})(?:\.html)?\b")  # the web app's and the site's paper pages
_DOI_TEXT_RE = re.compile(r"\b10\.\d{4,9}/[^\s\"<>]+")
_LINK_TEXT_RE = re.compile(r"\[([^\]]{8,300})\]\(([^)\s]*)\)")
_EMPHASIS_RE = re.compile(r"\*\*([^*]{8,300})\*\*|__([^_]{8,300})__|(?<!\w)\*([^*\s][^*]{6,298})\*|"
                          r"(?<!\w)_([^_\s][^_]{6,298})_(?!\w)")
_QUOTED_RE = re.compile(r"[\"“”]([^\"“”]{8,300})[\"“”]")
_CITES_RE = re.compile(r"\\?\[\d{1,3}\\?\](?:\(|\s|$)")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
# the highlights post's byline under a paper heading: "*Author, Author · ICLR 2021 · Oral*"
_BYLINE_RE = re.compile(r"^\*[^*]+·[^*]*(?:19|20)\d\d[^*]*\*$")
_DOTTED_RE = re.compile(r"^\*[^*]+·[^*]+\*$")
_TAGS_RE = re.compile(r"(?:\s*\[[^\]]{1,24}\](?!\())+\s*$")
_BULLET_RE = re.compile(r"^(\s*)(?:[-*+•]|\d+[.)])\s+")
# "Title. Author, Author." / "Title - Author" / "Title (ICLR 2020)": the title is the first segment
_SEGMENT_RE = re.compile(r"\s+(?:--|[-–—|])\s+|\.\s+(?=[A-Z])|\s*\((?:19|20)\d\d\)|\s*\(\w+ (?:19|20)\d\d\)|,\s+by\s+")
_PAREN_TAIL_RE = re.compile(r"\s*\([^()]*\)\s*$")
_YEAR_RE = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
# label lines under a paper (an awesome list's "Key Word:", "Digest", notes' "Goal:"): details, not titles
_LABEL_RE = re.compile(r"^(?:key\s*w[a-z]{0,4}|keywords?|digest|abstract|authors?|author list|tl;?\s?dr|code|pdf|"
                       r"slides|video|venue|summary|notes?|goal|idea|results?|contributions?|criticism|intuition|"
                       r"motivation|takeaways?|reading time|posted|published|tags?|table of contents)\b", re.I)
_TITLE_LABEL_RE = re.compile(r"^(?:paper|title|reference|ref)\s*:\s*", re.I)
_SENTENCE_RE = re.compile(r"\b(?:was|were|had|has been|my|our|we|i)\b")  # lower-case: prose, not a title line
_PROSE_START_RE = re.compile(r"^(?:this (?:paper|work|study|article)|we|i|they|it|the authors|authors|our)\b", re.I)
_NAME_PARTICLES = {"van", "der", "den", "de", "von", "da", "di", "del", "della", "la", "le", "du", "dos", "das",
                   "bin", "al", "y", "zu", "ter", "ten", "et"}
_STOPWORDS = {"a", "an", "the", "of", "for", "in", "on", "to", "and", "with", "via", "by", "from", "at", "is"}
# words of titles and headings, not of names: "Generative Models", "Anomaly Detection" are not authors
_WORDY = (GENERIC | BROAD | STOP) - _NAME_PARTICLES
_WORDY_END_RE = re.compile(r"(?:tion|sion|ness|ment|ity|ics|ance|ence|ogy|ive|ous|[a-z]{4}ing|ization)$")


@dataclass
class Reference:
    """One paper a file names, as far as the file says.

    Attributes:
        where: ``FILE:LINE`` or ``FILE:record N`` of the reference.
        titles: Candidate titles, most likely first (a structured record has exactly one).
        authors: Author names, when the file gives them.
        ids: Identifiers: ``doi:10....``, ``arxiv:2106.09685``, ``openreview:ID``, ``url:https://...``.
        explicit: Whether the file plainly names a paper here (the module docstring): only these can be missing.
        text: The line itself (free text only), searched for whole atlas titles standing in it.
    """

    where: str
    titles: list[str] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    explicit: bool = True
    text: str = ""

    def label(self) -> str:
        """What the reference names, for a report: its title (the first that reads like one), else an identifier."""
        if self.titles and (not self.text or _title_like(self.titles[0])):  # a record; a link text, span or line
            return self.titles[0]
        ids = [i for i in self.ids if not i.startswith("url:")] or [i[4:] for i in self.ids]
        return (ids or [t for t in self.titles if _title_like(t)] or self.titles or [self.where])[0]


@dataclass
class Resolution:
    """What one reference resolved to.

    Attributes:
        ref: The reference.
        status: ``"matched"``, ``"ambiguous"`` (several papers fit; nothing added) or ``"missing"``.
        paper_id: The matched paper's id (``"matched"`` only).
        how: ``"doi"``, ``"arxiv"``, ``"openreview"``, ``"url"``, ``"title"``, ``"similar title (93)"``, ….
        candidates: For ``"ambiguous"``: ``(paper_id, title, similarity)`` of the papers that fit.
    """

    ref: Reference
    status: str
    paper_id: str = ""
    how: str = ""
    candidates: list[tuple[str, str, float]] = field(default_factory=list)


def _ids_in(urls: Iterable[str], extra: dict | None = None, line: str = "") -> list[str]:
    """Identifier keys of links, a record's ``extra``, and a line of text (``arXiv:ID``, a bare id or DOI)."""
    out: list[str] = []
    for url in urls:
        if (d := bare_doi(url)) and ("doi" in url.lower() or url.startswith("10.")):
            out.append(f"doi:{d.lower()}")
        if "arxiv" in url.lower() and (a := arxiv_id(url)):
            out.append(f"arxiv:{a}")
        if m := _OPENREVIEW_RE.search(url):
            out.append(f"openreview:{m.group(1)}")
        if url.startswith(("http://", "https://")):
            out.append("url:" + url.rstrip("/").split("#")[0].lower())
    for key, prefix in (("doi", "doi"), ("arxiv_id", "arxiv"), ("openreview_id", "openreview")):
        if value := str((extra or {}).get(key) or ""):
            out.append(f"{prefix}:{value.lower() if prefix == 'doi' else value}")
    out += [f"arxiv:{m.group(1)}" for m in _ARXIV_TEXT_RE.finditer(line)]
    if m := _BARE_ID_RE.match(line):
        out.append(f"arxiv:{m.group(1)}" if m.group(1) else f"id:{m.group(2)}")
    out += [f"id:{m.group(1)}" for m in _ATLAS_LINK_RE.finditer(line)]
    out += [f"doi:{bare_doi(m.group(0)).lower()}" for m in _DOI_TEXT_RE.finditer(line)]
    return sorted(dict.fromkeys(out), key=lambda k: k.startswith("url:"))  # a DOI or arXiv id before a link


def author_names(line: str) -> list[str] | None:
    """The names in an author line, or None when the line is not one.

    ``"Chiyuan Zhang, Samy Bengio, and Yoram Singer"``, ``"Lechao Xiao."`` and an awesome list's ``"A, B. NeurIPS
    2023"`` are author lines; a title, a sentence or an equation is not (every name is 1-5 capitalised words or
    particles such as *van der*, with no digits or colons; a single name has 2-4 words).

    Args:
        line: One line of text, Markdown emphasis allowed.

    Returns:
        The names in order, or None.
    """
    s = re.sub(r"^\s*author list\s*:?\s*", "", line.strip(" *_"), flags=re.I)
    s = re.sub(r"[.\s]+[A-Z][\w&.\- ]{0,40}(?:19|20)\d\d\.?\s*$", "", s).strip().rstrip(".")
    if not s or re.search(r"[:?!\d()\[\]\"“”=$\\/·|]", s):
        return None
    parts = [p.strip() for p in re.split(r",|;|&|\band\b", s) if p.strip()]
    if any(not 1 <= len(p.split()) <= 5 or any(not (t[0].isupper() or t.lower() in _NAME_PARTICLES)
                                                for t in p.split()) for p in parts):
        return None
    toks = [t.lower().strip(".") for p in parts for t in p.split()]
    if not parts or len(parts) > 200 or not any(len(p.split()) >= 2 for p in parts) or \
            (len(parts) == 1 and len(toks) > 4) or sum(t in _WORDY or bool(_WORDY_END_RE.search(t)) for t in toks) \
            >= 0.25 * len(toks):
        return None
    return parts


def _key(title: str) -> str:
    """A title's matching key: :func:`normalize_title` with ``++`` kept; Unicode words for a non-Latin title."""
    key = normalize_title(title.replace("++", " plusplus "))
    uni = " ".join(re.sub(r"[\W_]+", " ", title.lower()).split())
    return key if len(key) >= len(uni) // 2 else uni


def _title_like(s: str) -> bool:
    """Whether a candidate reads like a paper title (not a sentence fragment, label, author list or equation)."""
    return (3 <= len(s.split()) <= 30 and len(s) <= 300 and (s[0].isupper() or s[0].isdigit() or s[0] in "(\"'“")
            and not (re.search(r"[$\\=^{}]|https?://", s) or _LABEL_RE.match(s) or _YEAR_RE.search(s))
            and author_names(s) is None)


def _title_cased(s: str) -> bool:
    words = [w for w in re.findall(r"[^\W\d_][\w'’-]*", s) if len(w) >= 4]
    return bool(words) and sum(w[0].isupper() for w in words) >= 0.6 * len(words)


def _clean(c: str) -> str:
    return " ".join(unescape_markdown(c).strip(" *_`>#-").split()).rstrip(".").strip()


# one line of a post: kind is "heading", "bullet", "plain", "table" or "toc"; first is the body's first segment
_Line = namedtuple("_Line", "n raw kind indent body first spans ids link_only")


def _parse_line(n: int, raw: str) -> _Line:
    line = raw.rstrip()
    urls = list(dict.fromkeys(find_urls(line) + [u for _, u in _LINK_TEXT_RE.findall(line) if u.startswith("http")]))
    kind, indent = "plain", len(line) - len(line.lstrip())
    if m := _HEADING_RE.match(line):
        kind, body = "heading", m.group(1)
    elif m := _BULLET_RE.match(line):
        kind, indent, body = "bullet", len(m.group(1).expandtabs(4)), line[m.end():]
    elif line.lstrip().startswith("|"):
        kind, body = "table", line
    else:
        body = line
    if re.fullmatch(r"\[[^\]]*\]\(#[^)]*\)", body.strip()):
        kind = "toc"  # "- [Topic](#topic)": a table of contents entry (the section itself says what it is)
    spans = [t for t, u in _LINK_TEXT_RE.findall(body) if not u.startswith("#")]
    spans += [next(g for g in m.groups() if g) for m in _EMPHASIS_RE.finditer(body)]
    spans += _QUOTED_RE.findall(body)
    if kind == "table":
        spans += [c for c in body.strip().strip("|").split("|") if c.strip()]
    text = _TAGS_RE.sub("", _LINK_TEXT_RE.sub(r"\1", body).replace("**", "").replace("__", "")).strip()
    text = _clean(re.sub(r"https?://\S+", " ", _TITLE_LABEL_RE.sub("", text)))  # "Title. [paper]", "Paper: Title"
    first = _clean(_SEGMENT_RE.split(text, maxsplit=1)[0])
    spans = [c for c in dict.fromkeys(_clean(s) for s in spans) if len(normalize_title(c)) >= 8]
    link_only = bool(urls) and len(re.sub(r"[<>()\[\]]", " ", text).split()) < 3
    return _Line(n, line, kind, indent, text, first, spans, _ids_in(urls, line=line), link_only)


def _candidates(ln: _Line) -> list[str]:
    cands = list(ln.spans) + [ln.first, _PAREN_TAIL_RE.sub("", ln.first), ln.body]
    cands += [_clean(s) for s in _SEGMENT_RE.split(ln.body)[1:4]]  # "Authors (2021). Title. Venue."
    return [c for c in dict.fromkeys(cands) if len(normalize_title(c)) >= 8 and not c.startswith("http")]


def _lines_of(text: str) -> list[_Line]:
    """The lines worth reading: no code blocks, display maths, HTML comments or table rulers."""
    out: list[_Line] = []
    inside = False
    for n, raw in enumerate(text.split("\n"), start=1):
        s = raw.strip()
        if s.startswith(("```", "~~~")) or (s.startswith("$$") and not (len(s) > 2 and s.endswith("$$"))):
            inside = not inside
        elif not (inside or not s or s.startswith(("<!--", "|---", "| ---", "|:--")) or len(s) > 5000):
            out.append(_parse_line(n, raw))
    return out


def references_in_text(text: str, path: str) -> list[Reference]:
    """Candidate references in free text (Markdown or plain): one per line, one per title span when a line has several.

    Args:
        text: The post or list.
        path: Its file name (for ``where``).

    Returns:
        The references in file order, with the line's identifiers, its candidate titles (see the module
        docstring), the authors of an author line under a title line or of a highlights post's byline, the line's
        text, and whether it plainly names a paper (:attr:`Reference.explicit`).
    """
    lines = _lines_of(text)
    seen = Counter(normalize_title(ln.body) for ln in lines)
    listing = sum(ln.first == ln.body and _title_like(ln.body) or bool(ln.ids) for ln in lines) >= 0.6 * len(lines)

    def names(i: int) -> list[str]:  # the author list on line i (two names at least: one may be a heading)
        found = author_names(lines[i].body) if 0 <= i < len(lines) and lines[i].kind != "heading" else []
        return found if len(found or ()) > 1 else []

    def title_line(i: int) -> bool:  # a title standing alone on a heading or plain line
        return ((ln := lines[i]).kind in ("heading", "plain") and ln.first == ln.body and _title_like(ln.body)
                and len(ln.body.split()) <= 24 and not ln.body.endswith((",", ";", ":"))
                and not _SENTENCE_RE.search(ln.body)
                and (_title_cased(ln.body) or seen[normalize_title(ln.body)] > 1 or bool(names(i + 1))))

    refs: list[Reference] = []
    title_bullet_indent: int | None = None
    for i, ln in enumerate(lines):
        cands = _candidates(ln)
        if (not cands and not ln.ids) or _DOTTED_RE.match(ln.raw.strip()):
            continue  # "*Author, Author · ICLR 2021 · Oral*" under a paper heading (read with it), "*30 papers · ...*"
        # the highlights post: a paper heading, its links, then the byline "*Author, Author · ICLR 2021 · Oral*"
        under = takewhile(lambda x: x.kind != "heading", lines[i + 1:i + 4] if ln.kind == "heading" else [])
        byline = next((x.raw.strip() for x in under if _BYLINE_RE.match(x.raw.strip())), "")
        authors = [a.strip() for a in byline.strip("*").split("·")[0].split(",") if a.strip()]
        # (the line under an author list is their affiliations)
        is_title = title_line(i) and not names(i - 1) and not (
            i > 1 and lines[i - 1].kind != "heading" and author_names(lines[i - 1].body) and title_line(i - 2))
        if is_title and not authors:
            authors = names(i + 1)
        # a bullet under a listed paper's bullet is a detail of it (an awesome list's authors, Key Word, Digest)
        nested = ln.kind == "bullet" and title_bullet_indent is not None and ln.indent > title_bullet_indent
        if any(not k.startswith("url:") for k in ln.ids) or ln.link_only or authors:
            explicit = True
        elif ln.kind == "bullet" or (listing and ln.kind == "plain"):
            explicit = (not nested and _title_like(ln.first) and not _PROSE_START_RE.match(ln.first)
                        and len(ln.body.split()) <= 60)
        elif is_title and i + 1 < len(lines):  # followed by a paragraph about it, not by the next title
            nxt = lines[i + 1]
            prose = len(nxt.body.split()) >= 5 and not title_line(i + 1) and not _CITES_RE.search(nxt.raw)
            explicit = bool(nxt.ids) or nxt.link_only or prose
        else:
            explicit = False
        if not nested:
            title_bullet_indent = ln.indent if ln.kind == "bullet" and explicit else None
        spans = [x for x in ln.spans if _title_like(x) and (_title_cased(x) or ":" in x) and len(x.split()) >= 4]
        if len(spans) > 1 and not nested:  # "I liked [A](...) and "B"": one reference per title
            for x in spans:
                urls = [u for t, u in _LINK_TEXT_RE.findall(ln.raw) if _clean(t) == x and u.startswith("http")]
                refs.append(Reference(f"{path}:{ln.n}", [x], ids=_ids_in(urls), explicit=True))
        else:
            refs.append(Reference(f"{path}:{ln.n}", cands, authors, ln.ids, explicit or bool(spans and not nested),
                                  ln.raw))
    return refs


def references_in_file(path: str | Path, strict: bool = False) -> list[Reference]:
    """The references a file names: records of a known format, else lines of text.

    A Markdown listing (awesome list, paperlists) gives its records and the other lines that name a paper.

    Args:
        path: A ``.bib``/CSL-JSON/RIS/CSV export, any listing paperatlas reads, or a text/Markdown file.
        strict: Raise on the first malformed record instead of skipping it (a ``RecordSkipped`` warning).

    Returns:
        The references in file order.

    Raises:
        SourceError: The file cannot be read, or is in a known format but malformed as a whole (or a record is,
            when ``strict``).
    """
    text = sources.open_text(path)
    try:
        fmt = sources.detect_format(path, text)
    except SourceError:
        fmt = None
    if fmt in (None, "arxiv"):  # free text; an arXiv id list resolves by its ids (no fetching)
        return references_in_text(text, str(path))
    refs, lines = [], set()
    for p in sources.read(path, format=fmt, strict=strict):
        src = p.sources[0] if p.sources else None
        loc = f"record {src.record}" if src and src.record is not None else str(src.line if src else "")
        if src and src.line is not None:
            lines.add(src.line)
        refs.append(Reference(where=f"{path}:{loc}", titles=[p.title], authors=p.authors,
                              ids=_ids_in([x.url for x in p.links if x.url], p.extra)))
    if fmt in ("awesome-md", "paperlists-md"):
        extra = [r for r in references_in_text(text, str(path))
                 if r.explicit and int(r.where.rsplit(":", 1)[1]) not in lines]
        refs = sorted(refs + extra, key=lambda r: int(x) if (x := r.where.rsplit(":", 1)[1]).isdigit() else 0)
    return refs


def typo_like(a: str, b: str, known: Container[str] = ()) -> bool:
    """Whether two similar normalised titles differ only by typos, not by a word.

    Each run of differing words (:class:`difflib.SequenceMatcher`) must be the same letters spaced otherwise, a
    dropped function word, or a typo: rapidfuzz ``OSA`` distance (a swap is one edit) at most ``max(2, length // 5)``,
    the same numbers, not a ``known`` 4+ letter word two edits from another. Different papers it tells apart:
    *Submodular Minimization* / *Maximization*, *Stacked* / *Structured GANs*, *COLT 2015* / *2016*, *CLEVR* / *QLEVR*.

    Args:
        a: A normalised title (:func:`paperatlas.text.normalize_title`).
        b: Another.
        known: Words that are words (the atlas's title words): one changed into another is not a typo.

    Returns:
        True when ``a`` may be ``b`` mistyped.
    """
    ta, tb = a.split(), b.split()
    for _, i1, i2, j1, j2 in SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        sa, sb = "".join(ta[i1:i2]), "".join(tb[j1:j2])
        if sa == sb:
            continue
        if not sa or not sb:
            if not set(ta[i1:i2] + tb[j1:j2]) <= _STOPWORDS:
                return False
        elif re.findall(r"\d+", sa) != re.findall(r"\d+", sb) or (d := OSA.distance(sa, sb)) > max(2, len(sb) // 5) \
                or (d > 1 and min(len(sa), len(sb)) > 3 and i2 - i1 == j2 - j1 == 1 and sa in known and sb in known):
            return False
    return True


class _Index:
    """The atlas papers by identifier, by normalised title, by title without spaces, by their first two words."""

    def __init__(self, papers: list[Paper]):
        self.papers = {p.id: p for p in papers}
        self.by_id: dict[str, set[str]] = {}
        self.by_title, self.by_compact, self.by_word, self.by_start = {}, {}, {}, {}
        for p in papers:
            for key in _ids_in([x.url for x in p.links if x.url], p.extra) + [f"id:{p.id}"]:
                self.by_id.setdefault(key, set()).add(p.id)
            key = _key(p.title)
            self.by_title.setdefault(key, []).append(p.id)
            self.by_compact.setdefault(key.replace(" ", ""), []).append(p.id)
        self.keys = list(self.by_title)
        for n, key in enumerate(self.keys):
            words = key.split()
            for w in set(words):
                self.by_word.setdefault(w, []).append(n)
            if len(words) >= MIN_CONTAINED_WORDS and len(key) >= MIN_CONTAINED_CHARS:
                self.by_start.setdefault((words[0], words[1]), []).append(key)

    def similar(self, key: str) -> list[tuple[str, float]]:
        """Up to 5 ``(title key, similarity >= TITLE_MIN_SIMILARITY)``, scoring titles with a rare word of the key."""
        known = sorted((len(self.by_word[w]), w) for w in set(key.split()) if w in self.by_word)
        keys = self.keys
        if len(known) >= 2:
            picked = set(self.by_word[known[0][1]]) | set(self.by_word[known[1][1]])
            for n, w in known[2:4]:
                if len(picked) + n > 5000:
                    break
                picked.update(self.by_word[w])
            keys = [self.keys[n] for n in sorted(picked)] if len(picked) < len(keys) // 2 else keys
        found = process.extract(key, keys, scorer=fuzz.ratio, limit=5, score_cutoff=TITLE_MIN_SIMILARITY)
        return [(k, s) for k, s, _ in found]

    def contained(self, line: str) -> list[str]:
        """Atlas title keys standing whole in ``line``: between punctuation (or the line's ends), longest first."""
        words = normalize_title(line).split()
        found = {k for i in range(len(words) - 1) for k in self.by_start.get((words[i], words[i + 1]), ())
                 if " ".join(words[i:i + len(k.split())]) == k}
        low = strip_accents(line).lower()
        out: list[str] = []
        for k in sorted(found, key=lambda k: (-len(k), k)):
            pat = r"[^a-z0-9]+".join(map(re.escape, k.split()))
            for m in re.finditer(rf"(?<![a-z0-9]){pat}(?![a-z0-9])", low):
                before, after = low[:m.start()].rstrip(), low[m.end():].lstrip()
                start_ok = not before or before[-1] in "([{\"“'‘*_:|>-–—.,;•"
                rest = after[1:].lstrip() if after[:1] in "?!" else after
                end_ok = not rest or rest[0] in ".,;)]}\"”'’*_|([-–—" or (rest is not after and not rest[0].isalpha())
                if start_ok and end_ok and not any(k in o for o in out):
                    out.append(k)
                    break
        return out


def _pick(index: _Index, ids: list[str], authors: list[str]) -> list[str]:
    """Narrow equally good candidates by authors; all of them when the authors do not decide."""
    fit = [i for i in ids if authors_overlap(authors, index.papers[i].authors)] if len(ids) > 1 and authors else []
    return fit or ids


def _exact(index: _Index, ref: Reference) -> Resolution | None:
    for title in ref.titles:
        key = _key(title)
        if not (ids := index.by_title.get(key) or index.by_compact.get(key.replace(" ", ""))):
            continue
        cands = [(i, index.papers[i].title, 100.0) for i in ids]
        ids = [i for i in ids if not ref.authors or authors_overlap(ref.authors, index.papers[i].authors)]
        if not ids:  # the same title by other people: another paper (or the names are spelled beyond recognition)
            return Resolution(ref, "ambiguous", how="same title, other authors", candidates=cands)
        ids = _pick(index, ids, ref.authors)
        return Resolution(ref, "matched", ids[0], "title") if len(ids) == 1 else \
            Resolution(ref, "ambiguous", candidates=[(i, index.papers[i].title, 100.0) for i in ids])
    return None


def _similar(index: _Index, ref: Reference) -> Resolution | None:
    best: tuple[float, list[str]] | None = None
    for title in ref.titles:
        key = _key(title)
        if len(key) < MIN_FUZZY_CHARS or len(key.split()) > 30:
            continue
        found = [(k, s) for k, s in index.similar(key) if typo_like(key, k, index.by_word)]
        ids = [(i, s) for k, s in found for i in index.by_title[k]
               if not ref.authors or authors_overlap(ref.authors, index.papers[i].authors)]
        if not ids:
            continue
        top = ids[0][1]
        close = _pick(index, [i for i, s in ids if top - s < TIE_MARGIN], ref.authors)
        if best is None or top > best[0]:
            best = (top, close)
    if best is None or len(best[1]) == 1:
        return best and Resolution(ref, "matched", best[1][0], f"similar title ({best[0]:.0f})")
    return Resolution(ref, "ambiguous", candidates=[(i, index.papers[i].title, round(best[0], 1)) for i in best[1]])


def _resolve_one(index: _Index, ref: Reference) -> list[Resolution]:
    for key in ref.ids:
        hits = sorted(index.by_id.get(key, ()))
        if len(hits) == 1:
            return [Resolution(ref, "matched", hits[0], key.split(":", 1)[0])]
    first = _exact(index, ref) or _similar(index, ref)
    contained = index.contained(ref.text) if ref.text else []
    if first is not None and first.status == "matched":
        own = _key(index.papers[first.paper_id].title)
        contained = [k for k in contained if k not in own]
    out = [first] if first is not None else []
    taken = {first.paper_id} | {c[0] for c in first.candidates} if first is not None else set()
    for k in contained:
        ids = [i for i in index.by_title[k] if not ref.authors or authors_overlap(ref.authors, index.papers[i].authors)]
        if len(ids) == 1 and ids[0] not in taken:
            out.append(Resolution(ref, "matched", ids[0], "title in text"))
    return out or [Resolution(ref, "missing")]


def resolve(papers: list[Paper], refs: list[Reference]) -> list[Resolution]:
    """Match references to atlas papers (the rules in the module docstring).

    Args:
        papers: The atlas's papers.
        refs: The references, e.g. from :func:`references_in_file`.

    Returns:
        One :class:`Resolution` per reference, in order, plus one more for each further atlas title a line of
        free text holds. Free-text lines that name no paper come back ``"missing"`` (report only the
        :attr:`Reference.explicit` ones); a paper named twice is matched twice (the caller adds it once).
    """
    index = _Index(papers)
    return [r for ref in refs for r in _resolve_one(index, ref)]
