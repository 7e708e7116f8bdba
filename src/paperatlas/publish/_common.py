"""What the publishers share: paper fields, Markdown escaping, heading anchors and the Jinja2 environment.

A paper's links, year, sort order and one-line texts, Markdown escaping, GitHub heading anchors, and the one
Jinja2 environment of the HTML publishers (:data:`ENV`).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from ..markup import FAVICON
from ..model import Paper, status_rank

#: The HTML publishers' templates: ``map.html`` (:mod:`.map_html`) and ``site/*`` (:mod:`.site`).
TEMPLATES = Path(__file__).resolve().parent / "templates"

#: The one Jinja2 environment of the HTML publishers: templates from :data:`TEMPLATES` (by path below it:
#: ``"map.html"``, ``"site/index.html"``), HTML autoescaped, undefined variables an error (StrictUndefined), block
#: tags alone on their line leave no blank line (``trim_blocks``/``lstrip_blocks``), and the global ``favicon``
#: (:data:`paperatlas.markup.FAVICON`, the inline page icon).
ENV = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]),
                  undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
ENV.globals["favicon"] = Markup(FAVICON)

# Inline $...$ math: kept verbatim (no escaping inside). Escaped dollars (\$) do not delimit math.
_MATH_RE = re.compile(r"(?<!\\)\$(?=\S)(?:[^$\\\n]|\\.)+?(?<=\S)\$")
# Characters that can start or end Markdown inline constructs (emphasis, links, code, HTML, strikethrough).
_INLINE_SPECIAL_RE = re.compile(r"([\\`*_\[\]<>~$|])")
# A character entity ("&amp;", "&#42;") would be decoded by the renderer: escape its "&".
_ENTITY_RE = re.compile(r"&(?=#?\w+;)")
# Text that would open a block construct when it starts a list item's content.
_ORDERED_START_RE = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")
# A 4-digit year inside a venue string ("ICLR 2021").
_YEAR_RE = re.compile(r"\b(?:19|20)\d{2}\b")

_PAPER_KINDS = ("paper", "openreview", "project", "other")


def paper_link(p: Paper) -> str:
    """The paper's main URL.

    Unlike :attr:`Paper.paper_url` this skips placeholder links whose ``url`` is empty.

    Args:
        p: the paper.

    Returns:
        The URL (stripped) of its first non-empty ``paper`` link, else ``openreview``, ``project``, ``other``
        link; ``""`` when it has none.
    """
    for kind in _PAPER_KINDS:
        for link in p.links:
            if link.kind == kind and link.url.strip():
                return link.url.strip()
    return ""


def code_link(p: Paper) -> str:
    """The paper's code URL.

    Args:
        p: the paper.

    Returns:
        The URL (stripped) of its first non-empty ``code`` link, or ``""`` (placeholder links with an empty URL are
        skipped).
    """
    return next((link.url.strip() for link in p.links if link.kind == "code" and link.url.strip()), "")


def one_line(text: str | None) -> str:
    """``text`` on one line.

    Args:
        text: any text, or ``None``.

    Returns:
        The text with every run of whitespace (newlines included) folded to one space and none at either end.
    """
    return " ".join((text or "").split())


def paper_year(p: Paper) -> int | None:
    """The year a paper is listed under (BibTeX/CSL ``year``, awesome-list year sub-sections).

    Args:
        p: the paper.

    Returns:
        :attr:`Paper.year` when set (non-zero), else the first 19xx/20xx year in its venue (``"ICLR 2021"`` ->
        2021), else ``None``.
    """
    if p.year:
        return int(p.year)
    m = _YEAR_RE.search(p.venue or "")
    return int(m.group(0)) if m else None


def paper_sort_key(p: Paper) -> tuple:
    """Sort key of papers within a list: by status then title.

    Args:
        p: the paper.

    Returns:
        ``(status rank, one-line case-folded title, id)``: Oral, Spotlight, Poster, anything else
        (:func:`paperatlas.model.status_rank`, any case), then title, with the id breaking ties.
    """
    return (status_rank(p.status), one_line(p.title).casefold(), p.id)


def venue_text(p: Paper) -> str:
    """The venue and status as shown after a paper's authors.

    Args:
        p: the paper.

    Returns:
        ``"ICLR 2021 (Oral)"``, ``"ICLR 2021"``, ``"(Oral)"`` or ``""``, each part on one line (not escaped).
    """
    venue, status = one_line(p.venue), one_line(p.status)
    if venue and status:
        return f"{venue} ({status})"
    return venue or (f"({status})" if status else "")


def default_title(papers: list[Paper]) -> str:
    """The default title of a published list.

    Args:
        papers: the papers published.

    Returns:
        ``"Awesome <venue>"`` for the most common (one-line) venue when it covers at least half of the papers, else
        ``"Awesome Papers"``.
    """
    venues = Counter(one_line(p.venue) for p in papers if one_line(p.venue))
    if venues:
        venue, n = venues.most_common(1)[0]
        if 2 * n >= len(papers):
            return f"Awesome {venue}"
    return "Awesome Papers"


def escape_md(text: str) -> str:
    """Escape text for use inline in a Markdown list item or heading.

    Whitespace (including newlines) is folded to single spaces; Markdown punctuation outside ``$...$`` math is
    backslash-escaped (and the ``&`` of a character entity becomes ``&amp;``); a leading ``#``, ``>``, ``+``,
    ``-``, ``=`` or ``1.`` is escaped so the text cannot open a heading, quote or nested list.

    Args:
        text: plain text from a paper or topic (``$...$`` spans are LaTeX math, kept verbatim).

    Returns:
        The escaped text, on one line.
    """
    text = one_line(text)
    out: list[str] = []
    pos = 0
    for m in _MATH_RE.finditer(text):
        out.append(_escape_plain(text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_escape_plain(text[pos:]))
    s = "".join(out)
    m = _ORDERED_START_RE.match(s)
    if m:
        s = f"{m.group(1)}\\{m.group(2)}{s[m.end():]}"
    elif s[:1] in ("#", ">", "+", "-", "="):
        s = "\\" + s
    return s


def _escape_plain(text: str) -> str:
    return _ENTITY_RE.sub("&amp;", _INLINE_SPECIAL_RE.sub(r"\\\1", text))


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading.

    Args:
        heading: the heading's rendered text.

    Returns:
        The text lower-cased, with characters other than letters, digits, spaces, ``-`` and ``_`` dropped and
        spaces turned into hyphens; without the ``-1``, ``-2`` suffixes GitHub adds for repeated headings.
    """
    s = heading.strip().lower()
    s = "".join(c for c in s if c.isalnum() or c in " -_")
    return s.replace(" ", "-")
