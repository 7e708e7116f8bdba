"""Shared text handling: link extraction, title normalisation, sentence splitting, word tokens.

Readers use the link helpers; dedup uses :func:`normalize_title`; TL;DR and keyphrase stages use
:func:`split_sentences` and :func:`word_tokens`.
"""

from __future__ import annotations

import re
import unicodedata

from .model import Link

# A URL ends at whitespace, a closing bracket/angle bracket or quote; trailing punctuation is trimmed below.
_URL_RE = re.compile(r"https?://[^\s<>\"'\]\[)(}{]+(?:\([^\s()]*\)[^\s<>\"'\]\[)(}{]*)*")
_CODE_HOSTS = ("github.com", "gitlab.com", "bitbucket.org", "huggingface.co/spaces")
# A web URL: http(s), "://" and at least one character of host.
_WEB_URL_RE = re.compile(r"https?://[^/\s?#]", re.I)
# A bare DOI ("10.1234/abc", optionally "doi:10.1234/abc"): registrant code of 4-9 digits, a "/" and a suffix.
_BARE_DOI_RE = re.compile(r"(?:doi:\s*)?(10\.\d{4,9}(?:\.\d+)*/\S+)", re.I)


def safe_url(url: str | None) -> str | None:
    """The URL a link may point at, or ``None`` when it must not be a link.

    Only web and DOI links are safe to render as links: ``javascript:``, ``data:``, ``vbscript:``, ``file:``,
    relative and scheme-less URLs are refused (a refused link is left out or shown as plain text).

    Args:
        url: A URL as listed, or ``None``.

    Returns:
        The URL with surrounding whitespace stripped when it is ``http://`` or ``https://`` (either case) with a
        host; ``https://doi.org/<doi>`` for a bare DOI (``10.1234/abc`` or ``doi:10.1234/abc``); else ``None``
        (also for a URL holding a control character, which browsers would silently drop).
    """
    u = (url or "").strip()
    if not u or any(ord(c) < 0x20 or ord(c) == 0x7F for c in u):
        return None
    if _WEB_URL_RE.match(u):
        return u
    m = _BARE_DOI_RE.fullmatch(u)
    return f"https://doi.org/{m.group(1)}" if m else None


def classify_link(url: str) -> str:
    """Return the link kind for ``url``.

    Args:
        url: The URL (matched case-insensitively).

    Returns:
        ``code`` for GitHub/GitLab/Bitbucket (and Hugging Face Spaces), ``openreview``, ``paper`` for
        arXiv/DOI/PDF/proceedings, else ``other``.
    """
    u = url.lower()
    if any(h in u for h in _CODE_HOSTS):
        return "code"
    if "openreview.net" in u:
        return "openreview"
    if any(h in u for h in ("arxiv.org", "doi.org", ".pdf", "proceedings", "aclanthology", "nature.com",
                             "sciencedirect", "springer", "ieeexplore", "acm.org", "jmlr.org", "aaai.org")):
        return "paper"
    return "other"


def find_urls(text: str) -> list[str]:
    r"""All http(s) URLs in ``text``.

    Args:
        text: Any text, e.g. a Markdown line.

    Returns:
        The URLs in order of appearance, de-duplicated, with Markdown escapes (``\_``) undone and trailing
        punctuation (``.,;:``) removed.
    """
    out: list[str] = []
    for m in _URL_RE.finditer(text):
        url = m.group(0).replace("\\_", "_").replace("\\", "")
        url = url.rstrip(".,;:!?*")
        if url and url not in out:
            out.append(url)
    return out


def links_from_text(text: str) -> list[Link]:
    """:class:`Link` objects for every URL in ``text``.

    Args:
        text: Any text (URLs found by :func:`find_urls`).

    Returns:
        One link per URL, in order, with its kind from :func:`classify_link`.
    """
    return [Link(url=u, kind=classify_link(u)) for u in find_urls(text)]


def strip_accents(s: str) -> str:
    """Strip accents: ``"Schölkopf"`` → ``"Scholkopf"``.

    Args:
        s: Any text.

    Returns:
        The text after NFKD decomposition, combining marks dropped.
    """
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


def normalize_title(title: str) -> str:
    """Key for matching the same paper across sources.

    ``"Sharpness-Aware Minimization ..."`` and ``"sharpness aware minimization ..."`` give the same key.

    Args:
        title: A paper title.

    Returns:
        The title with accents stripped, lower-cased, LaTeX/Markdown markup and punctuation removed, whitespace
        collapsed.
    """
    s = strip_accents(title).lower()
    s = re.sub(r"\\[a-z]+", " ", s)  # LaTeX commands
    s = re.sub(r"[^a-z0-9]+", " ", s)
    return " ".join(s.split())


_ABBREV = r"(?:e\.g|i\.e|et al|etc|vs|cf|Fig|Figs|Eq|Eqs|Sec|resp|approx|al|No|Dr|Prof|St)\."
_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[$\\])")


def split_sentences(text: str) -> list[str]:
    """Split an abstract into sentences.

    A rule-based splitter: breaks after ``.``/``!``/``?`` followed by whitespace and an upper-case letter,
    digit, quote, bracket or ``$``, but not after common abbreviations (``e.g.``, ``et al.``, ``Fig.``) or
    single initials. Paragraph breaks always split.

    Args:
        text: An abstract (paragraphs separated by blank lines).

    Returns:
        Stripped, non-empty sentences.
    """
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if not para:
            continue
        start = 0
        for m in _SENT_END.finditer(para):
            end = m.start()  # just after the sentence-final punctuation
            chunk = para[start:end]
            # don't split after an abbreviation ("et al.", "e.g.") or an initial like "J."
            tail = para[max(0, end - 10):end]
            if re.search(r"(?<![A-Za-z])" + _ABBREV + r"$", tail) or re.search(r"(?:^|\s)[A-Z]\.$", tail):
                continue
            if chunk.strip():
                out.append(para[start:m.end()].strip())
            start = m.end()
        rest = para[start:].strip()
        if rest:
            out.append(rest)
    return out


_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*")


def word_tokens(text: str) -> list[str]:
    """Word tokens of ``text``.

    Args:
        text: Any text.

    Returns:
        The words (letters/digits starting with a letter, inner hyphens and apostrophes kept:
        ``"floating-point"``), in original case.
    """
    return _WORD_RE.findall(text)


#: A query word as FTS5's unicode61 tokenizer reads it: letters and digits of any script (``16x16``, ``3D``,
#: ``Fréchet``, ``ε``) joined by inner hyphens, apostrophes, dots or underscores (``GPT-3.5``, ``t-SNE``, ``L_2``);
#: it must hold a letter, so a bare number (``2021``, ``0.5``) is not a word.
_QUERY_WORD_RE = re.compile(r"[^\W_]+(?:[-'._][^\W_]+)*")
#: a multiplication sign between numbers (``1×1``, ``3 × 3``, ``16 x 16``) is read as the ``x`` of ``1x1``
_TIMES_RE = re.compile(r"(?<=\d) ?[x×] ?(?=\d)")


def query_tokens(text: str) -> list[str]:
    """The words of a search query, as the search index holds them.

    Args:
        text: A user's query.

    Returns:
        The words in original case: like :func:`word_tokens`, but a word may start with digits (``"16x16"``,
        ``"1x1"``, ``"3D"``: :func:`word_tokens` gives ``"x16"``, ``"x1"``, ``"D"``), hold letters of any script
        (``"Fréchet"``, ``"ε-greedy"``) and inner dots (``"GPT-3.5"``); ``1×1`` and ``3 x 3`` are read as ``1x1``
        and ``3x3``; bare numbers are left out.
    """
    return [w for w in _QUERY_WORD_RE.findall(_TIMES_RE.sub("x", text)) if any(c.isalpha() for c in w)]


def slugify(text: str, max_len: int = 60) -> str:
    """URL/anchor-safe slug: ``"Graph neural networks"`` → ``"graph-neural-networks"``.

    Args:
        text: Any text.
        max_len: The longest slug returned.

    Returns:
        Accent-stripped lower-case letters and digits with runs of anything else as one ``-`` (none at the ends),
        cut to ``max_len`` characters.
    """
    s = re.sub(r"[^a-z0-9]+", "-", strip_accents(text).lower()).strip("-")
    return s[:max_len].rstrip("-")


#: A 4-digit year (1900-2099) standing as a word, e.g. in a venue string ("ICLR 2021", "ICML 2023 Workshop").
YEAR_RE = re.compile(r"\b(?:19|20)\d{2}\b")


def year_in(text: str | None) -> int | None:
    """The first 4-digit year (1900-2099) standing as a word in ``text``.

    Args:
        text: e.g. a venue string such as ``"ICLR 2021"``; None or empty is fine.

    Returns:
        The year as an int (``2021``), or None when there is none.
    """
    m = YEAR_RE.search(text or "")
    return int(m.group(0)) if m else None


#: A content word as :func:`content_words` reads it: letters and digits of any script, inner hyphens/apostrophes.
_CONTENT_WORD_RE = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")


def content_words(text: str, stop: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """The lower-case words of ``text`` of two or more characters, other than those in ``stop``.

    The word set the extractive answers (:mod:`paperatlas.ask`) and topic overviews
    (:mod:`paperatlas.enrich.overview`) compare sentences by; callers pass :data:`paperatlas.vocab.STOP` (this
    module is below :mod:`paperatlas.vocab` and does not import it).

    Args:
        text: any text.
        stop: the words to leave out (lower case).

    Returns:
        The set of words, e.g. ``"We study the grokking of networks."`` with English stop words →
        ``{"study", "grokking", "networks"}``.
    """
    return {w for w in (m.lower() for m in _CONTENT_WORD_RE.findall(text)) if len(w) > 1 and w not in stop}


def jaccard(a: set[str], b: set[str]) -> float:
    """Jaccard index ``|a ∩ b| / |a ∪ b|`` of two word sets, 0..1 (0.0 when both are empty)."""
    return len(a & b) / len(a | b) if a or b else 0.0
