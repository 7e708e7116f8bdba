"""What the publishers share: paper fields, Markdown escaping, anchors, topic overviews, the Jinja2 environment.

A paper's links, year, sort order and one-line texts, Markdown escaping, GitHub heading anchors, a topic's cited
overview cut into text and citations (:func:`overview_parts`, :func:`overview_cited`) or written as Markdown
(:func:`overview_md`, its ``[n]`` links to :func:`paper_anchor` entries or URLs), and the one Jinja2 environment
of the HTML publishers (:data:`ENV`).

Every output renders only http(s) and DOI links (:func:`paperatlas.text.safe_url`): :func:`paper_link` and
:func:`code_link` skip any other link; Markdown outputs escape every text (:func:`escape_md`), percent-encode URLs
(:func:`md_url`) and neutralise raw HTML and unsafe links in the reader's own Markdown notes (:func:`safe_note_md`).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from ..cite.links import code_link, paper_link, paper_year, second_link
from ..enrich.overview import overview_parts as split_overview
from ..markup import FAVICON
from ..model import Paper, Topic, status_rank
from ..text import safe_url

__all__ = ["code_link", "paper_link", "paper_year", "second_link"]  # moved to paperatlas.cite.links

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
# What a "$...$" span must not hold to be kept verbatim: the start of raw HTML or an autolink, or a link.
_UNSAFE_MATH_RE = re.compile(r"<[A-Za-z/!?]|\]\s*[(:\[]")
# Characters percent-encoded in a Markdown link destination or bare URL: whitespace and control characters,
# brackets and quotes that would end the destination or open raw HTML, and the backslash (an escape in Markdown).
_URL_UNSAFE_RE = re.compile(r"[\s\x00-\x1f\x7f()<>\"'\\]")

def md_url(url: str | None) -> str:
    """A URL as written in Markdown: a link destination ``[text](URL)`` or a bare URL.

    Args:
        url: any URL, or ``None``.

    Returns:
        ``""`` when the URL is not safe to link (:func:`paperatlas.text.safe_url`), else the safe URL with
        whitespace, control characters, ``(``, ``)``, ``<``, ``>``, quotes and backslashes percent-encoded (UTF-8),
        so it can neither end the link early nor open raw HTML.
    """
    safe = safe_url(url)
    if not safe:
        return ""
    return _URL_UNSAFE_RE.sub(lambda m: quote(m.group(0), safe=""), safe)


def one_line(text: str | None) -> str:
    """``text`` on one line.

    Args:
        text: any text, or ``None``.

    Returns:
        The text with every run of whitespace (newlines included) folded to one space and none at either end.
    """
    return " ".join((text or "").split())


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
    ``-``, ``=`` or ``1.`` is escaped so the text cannot open a heading, quote or nested list. The result holds no
    raw HTML, autolink or link, whatever the renderer's raw-HTML setting.

    Args:
        text: plain text from a paper or topic (``$...$`` spans are LaTeX math, kept verbatim unless they hold the
            start of an HTML tag or a link, e.g. ``$<script>$``: those are escaped as plain text).

    Returns:
        The escaped text, on one line.
    """
    text = one_line(text)
    out: list[str] = []
    pos = 0
    for m in _MATH_RE.finditer(text):
        if _UNSAFE_MATH_RE.search(m.group(0)):
            continue
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


# A code span on one line (its content is literal): a backtick run, then the first run of the same length. No "|"
# inside (a GFM table splits cells there first); not after a backslash (an escaped backtick opens nothing).
_CODE_SPAN_RE = re.compile(r"(?<![`\\])(`+)(?!`)[^\n|]*?(?<!`)\1(?!`)")
# A link destination ("](dest" of an inline link or image, "]: dest" of a reference definition), up to whitespace.
_LINK_DEST_RE = re.compile(r"\](\(|:)([ \t]*\n?[ \t]*)(<[^>\n]*>?|[^\s]*)")
_MD_ESCAPED_RE = re.compile(r"\\([!-/:-@\[-`{-~])")


def safe_note_md(note: str) -> str:
    r"""A reader's Markdown note made safe to publish in Markdown.

    The note keeps its Markdown (emphasis, lists, code, http(s) links), but outside one-line code spans every
    ``<`` becomes ``&lt;`` (no raw HTML or autolink can open, whatever the renderer's raw-HTML setting; inside a
    fenced or indented code block it then shows as ``&lt;``), and an inline link, image or reference definition
    whose destination is not an http(s) URL (:func:`paperatlas.text.safe_url`, after Markdown escapes and
    character references are undone, as the renderer does) loses its ``]`` (escaped as ``\]``), so its text shows
    as typed instead of a link.

    Args:
        note: the note's Markdown.

    Returns:
        The note, unchanged when it holds no ``<`` outside code spans and no non-http(s) link.
    """
    out: list[str] = []
    pos = 0
    for m in _CODE_SPAN_RE.finditer(note):
        out.append(_safe_note_text(note[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_safe_note_text(note[pos:]))
    return "".join(out)


def _safe_note_text(text: str) -> str:
    def link(m: re.Match) -> str:
        before = m.string[:m.start()]
        if (len(before) - len(before.rstrip("\\"))) % 2:  # "\\]" is a literal bracket: no link to neutralise
            return m.group(0)
        dest = html.unescape(_MD_ESCAPED_RE.sub(r"\1", m.group(3)))
        dest = dest[1:].rstrip(">") if dest.startswith("<") else dest
        if dest and safe_url(dest) == dest:
            return m.group(0)
        return "\\" + m.group(0)

    return _LINK_DEST_RE.sub(link, text).replace("<", "&lt;")


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


_HTML_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
{icon}
<style>
body {{ font: 16px/1.6 system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 46rem; margin: 2rem auto;
       padding: 0 1rem; color: #1f2328; }}
h1 {{ line-height: 1.2; }} h2 {{ border-bottom: 1px solid #d0d7de; padding-bottom: .2em; margin-top: 2em; }}
h3 {{ margin-bottom: .2em; }} a {{ color: #0969da; }} em {{ color: #59636e; }}
blockquote, pre {{ background: #f6f8fa; padding: .4em .8em; }}
</style></head>
<body>
{body}
</body></html>
"""


def markdown_page(md_text: str) -> str:
    """A Markdown document as one standalone HTML page (no external assets), titled by its first line.

    Converted with markdown-it-py (CommonMark; raw HTML is escaped, not rendered: see
    :func:`paperatlas.markup.markdown_parser`); heading ids are GitHub-style anchors (:func:`github_anchor`), so a
    table of contents' links work.

    Args:
        md_text: The Markdown (its first line a ``# Title``).

    Returns:
        The HTML page.
    """
    from ..markup import markdown_parser

    md = markdown_parser()
    tokens = md.parse(md_text)
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and i + 1 < len(tokens):
            tok.attrSet("id", github_anchor(tokens[i + 1].content))
    body = md.renderer.render(tokens, md.options, {})
    first = md_text.splitlines()[0].lstrip("# ").strip() if md_text else ""
    return _HTML_PAGE.format(title=html.escape(first), body=body, icon=FAVICON)


# Private-use characters that stand for a citation while the overview's text is escaped (stripped from the text).
_CITE_OPEN, _CITE_CLOSE = "\ue000", "\ue001"
_CITE_HOLD_RE = re.compile(f"{_CITE_OPEN}(\\d+){_CITE_CLOSE}")


def paper_anchor(p: Paper) -> str:
    """The id of a paper's entry in a Markdown document, for an overview's ``[n]`` to link to.

    Written as ``<a id="..."></a>`` at the start of the entry (GitHub keeps it, prefixed ``user-content-``, and
    scrolls to it on ``#...``).

    Args:
        p: the paper.

    Returns:
        ``"paper-"`` and the paper's id with characters other than ``[A-Za-z0-9_-]`` replaced by ``_`` (safe in an
        HTML attribute and a URL fragment unescaped).
    """
    return "paper-" + re.sub(r"[^A-Za-z0-9_-]", "_", p.id)


def overview_parts(topic: Topic, papers: Mapping[str, Paper]) -> list[tuple[str, int, Paper | None]]:
    """A topic's overview (:attr:`paperatlas.model.Topic.overview`) cut into its text and its citations.

    Args:
        topic: the topic; its ``overview`` (any text, each sentence normally followed by ``[n]``) and
            ``overview_papers`` (``[n]`` is ``overview_papers[n - 1]``).
        papers: paper id -> paper, the papers a citation may point at (those of the published document).

    Returns:
        ``[(text, n, paper), ...]`` in reading order, the overview on one line (:func:`one_line`): a run of plain
        text is ``(text, 0, None)``; a citation ``[n]`` is ``("[n]", n, paper)`` with ``paper`` the cited paper, or
        ``None`` when ``n`` is out of range or the cited id is not in ``papers`` (a paper no longer in the atlas:
        the caller shows ``[n]`` as plain text). ``[]`` for an empty overview.
    """
    return [(run, n, papers.get(pid) if pid is not None else None)
            for run, n, pid in split_overview(one_line(topic.overview), topic.overview_papers)]


def overview_cited(topic: Topic, papers: Mapping[str, Paper]) -> list[tuple[int, Paper]]:
    """The papers a topic's overview cites that are in ``papers``, as ``[(n, paper), ...]`` in ``n`` order.

    Args:
        topic: the topic (its ``overview_papers``; ``[n]`` is ``overview_papers[n - 1]``).
        papers: paper id -> paper; a cited id missing from it is left out (its ``n`` is skipped, the others keep
            theirs).

    Returns:
        The list, ``[]`` when the overview is empty or cites nothing found.
    """
    if not one_line(topic.overview):
        return []
    return [(n, papers[pid]) for n, pid in enumerate(topic.overview_papers, 1) if pid in papers]


def overview_note(topic: Topic) -> str:
    """How a topic's overview was made, as shown after it.

    Args:
        topic: the topic (its ``overview_method``).

    Returns:
        ``""`` for sentences taken from the cited papers (``"extractive"`` or unknown), ``"edited by the reader"``
        for ``"edit"``, else ``"written by <method>"`` (a generative backend's name, on one line, not escaped).
    """
    method = one_line(topic.overview_method)
    if method in ("", "extractive"):
        return ""
    return "edited by the reader" if method == "edit" else f"written by {method}"


def overview_md(topic: Topic, papers: Mapping[str, Paper], href: Callable[[Paper], str]) -> list[str]:
    r"""A topic's overview as Markdown lines: the paragraph, then the cited papers on one line.

    Each ``[n]`` becomes the link ``[\[n\]](href)`` to the cited paper (plain ``\[n\]`` when the paper is not in
    ``papers`` or ``href`` gives ``""``); the text is escaped with :func:`escape_md`, so Markdown, HTML and
    ``]]>`` in an overview stay inert. The cited line reads ``Cited: \[1\] [Title](href) (Oral) · \[2\] ...``.

    Args:
        topic: the topic (``overview``, ``overview_papers``, ``overview_method``).
        papers: paper id -> paper, the papers a citation may link to.
        href: a cited paper -> the link target as written in Markdown (an in-document ``#anchor`` or an
            already-escaped URL, see :func:`md_url`), or ``""`` for no link.

    Returns:
        ``[]`` for an empty overview, else ``[paragraph]`` or ``[paragraph, "", cited line]`` (no trailing blank).
    """
    parts = overview_parts(topic, papers)
    if not parts:
        return []
    links: list[str] = []
    held = []
    for text, n, p in parts:
        if not n:
            held.append(text.replace(_CITE_OPEN, "").replace(_CITE_CLOSE, ""))
            continue
        target = href(p) if p is not None else ""
        links.append(f"[\\[{n}\\]]({target})" if target else f"\\[{n}\\]")
        held.append(f"{_CITE_OPEN}{len(links) - 1}{_CITE_CLOSE}")
    para = _CITE_HOLD_RE.sub(lambda m: links[int(m.group(1))], escape_md("".join(held)))
    note = overview_note(topic)
    lines = [para + (f" *({escape_md(note)})*" if note else "")]
    cited = []
    for n, p in overview_cited(topic, papers):
        name = escape_md(one_line(p.title)) or "Untitled"
        target = href(p)
        status = escape_md(one_line(p.status))
        cited.append(f"\\[{n}\\] " + (f"[{name}]({target})" if target else name) + (f" ({status})" if status else ""))
    if cited:
        lines += ["", "Cited: " + " · ".join(cited)]
    return lines
