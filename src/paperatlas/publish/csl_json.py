r"""Publish papers as CSL-JSON (``publish --format csl-json``).

CSL-JSON is the Citation Style Language's JSON bibliography format that Zotero, Mendeley, pandoc and citeproc
import.

One item per paper (schema: https://github.com/citation-style-language/schema, ``csl-data.json``): ``id`` (the
same citation key as the BibTeX export), ``type`` (``paper-conference`` for a conference or workshop venue, else
``article-journal``; ``article`` without a venue), ``title``, ``author`` (``family``/``given``/``non-dropping-
particle``/``suffix``, split by bibtexparser's BibTeX name parser), ``issued`` (``date-parts`` of the year),
``container-title`` (the venue), ``URL`` (an http(s) or DOI link only, :func:`paperatlas.text.safe_url`; the
paper link, else its arXiv page, DOI or code link), ``DOI`` (bare),
``abstract``, ``keyword`` (the keyphrases, ``", "``-joined) and ``note`` (the TL;DR, the reader's note when the
paper carries one in ``extra["note"]``, the status and ``Code: URL``).

Texts are plain, as CSL-JSON's are, except inline math ``$...$``, which pandoc reads as TeX and writes into a LaTeX
document as it is: there only the commands a BibTeX value may keep stay commands
(:func:`paperatlas.cite.bibtex.neutralize_tex`), so ``$\input{/etc/passwd}$`` cannot read a file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from ..cite.bibtex import is_conference, lowercase_given_name, main_url, neutralize_tex, unique_keys
from ..cite.links import doi_of
from ..model import Paper, Topic
from ..text import safe_url
from ._common import code_link, paper_year

FORMAT = "csl-json"


def csl_name(name: str) -> dict[str, str]:
    """One author as a CSL name object.

    The name is split by bibtexparser's BibTeX name parser; a "First Last" name with a lower-case given name
    (:func:`~paperatlas.publish.bibtex_out.lowercase_given_name`) is split at its last word instead.

    Args:
        name: an author name as listed.

    Returns:
        E.g. ``"Ludwig van Beethoven"`` → ``{"given": "Ludwig", "non-dropping-particle": "van", "family":
        "Beethoven"}`` (plus ``suffix`` for a ``Jr.``); a single word, an organisation or a name the parser
        rejects stays ``{"literal": ...}``.
    """
    from bibtexparser.middlewares.names import parse_single_name_into_parts

    name = " ".join(name.split())
    if lowercase_given_name(name):  # "suchismita padhy": BibTeX's grammar would make "suchismita" a particle
        words = name.split(" ")
        return {"family": words[-1], "given": " ".join(words[:-1])}
    try:
        parts = parse_single_name_into_parts(name)
    except Exception:  # noqa: BLE001 - bibtexparser raises on odd braces; keep the name whole
        return {"literal": name}
    if not parts.last or not parts.first:
        return {"literal": name}
    out = {"family": " ".join(parts.last), "given": " ".join(parts.first)}
    if parts.von:
        out["non-dropping-particle"] = " ".join(parts.von)
    if parts.jr:
        out["suffix"] = " ".join(parts.jr)
    return out


def _text(text: str) -> str:
    """A text field: plain, its ``$...$`` math holding only commands that cannot act (see the module docstring)."""
    return neutralize_tex(text, math_only=True)


def paper_item(p: Paper, key: str) -> dict:
    """The CSL-JSON item of one paper (fields as in the module docstring; empty ones left out).

    Args:
        p: the paper.
        key: its citation key (the item's ``id``; see :func:`~paperatlas.cite.bibtex.unique_keys`).

    Returns:
        The item as a JSON-serialisable dict.
    """
    item: dict = {"id": key, "type": ("paper-conference" if is_conference(p.venue) else "article-journal")
                  if p.venue else "article", "title": _text(p.title)}
    if p.authors:
        item["author"] = [csl_name(a) for a in p.authors]
    year = paper_year(p)
    if year:
        item["issued"] = {"date-parts": [[year]]}
    if p.venue:
        item["container-title"] = _text(p.venue)
    url = safe_url(p.paper_url) or main_url(p)
    if url:
        item["URL"] = url
    if doi_of(p):
        item["DOI"] = doi_of(p)
    if p.abstract:
        item["abstract"] = _text(p.abstract)
    if p.keyphrases:
        item["keyword"] = _text(", ".join(p.keyphrases))
    notes = [f"TL;DR: {p.tldr}"] if p.tldr else []
    if p.extra.get("note"):
        notes.append(str(p.extra["note"]))
    if p.status:
        notes.append(f"Status: {p.status}")
    if code_link(p):
        notes.append(f"Code: {code_link(p)}")
    if notes:
        item["note"] = _text("\n\n".join(notes))
    return item


def render(papers: Iterable[Paper], topics: Iterable[Topic] = (), related: dict[str, list[str]] | None = None,
           title: str = "") -> str:
    """A CSL-JSON array of ``papers``.

    Args:
        papers: the papers, one item each in the given order.
        topics: unused (uniform publisher signature).
        related: unused.
        title: unused.

    Returns:
        The JSON text (two-space indentation, UTF-8 without escapes) ending with a newline.
    """
    papers = list(papers)
    keys = unique_keys(papers)
    return json.dumps([paper_item(p, k) for p, k in zip(papers, keys, strict=True)], ensure_ascii=False,
                      indent=2) + "\n"
