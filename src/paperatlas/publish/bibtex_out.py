"""Publish an atlas as BibTeX: one entry per paper (:mod:`paperatlas.cite.bibtex` builds and writes them).

Entry types, fields, citation keys and escaping are described in :mod:`paperatlas.cite.bibtex`; the same entries
are what the web app's and the static site's "Copy BibTeX" buttons give.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..cite.bibtex import (
    balance_braces,
    citation_key,
    is_conference,
    lowercase_given_name,
    paper_entry,
    tex_escape,
    unique_keys,
    write_entries,
)
from ..model import Paper, Topic

FORMAT = "bibtex"

__all__ = ["balance_braces", "citation_key", "is_conference", "lowercase_given_name", "paper_entry", "render",
           "tex_escape", "unique_keys"]


def render(papers: Iterable[Paper], topics: Iterable[Topic] = (), related: dict[str, list[str]] | None = None,
           title: str = "") -> str:
    """Render the papers as a BibTeX file (see :mod:`paperatlas.cite.bibtex` for entry types, fields and keys).

    Args:
        papers: the papers (one entry each, in id order).
        topics: unused (uniform publisher signature).
        related: unused.
        title: unused.

    Returns:
        The BibTeX text ending with a newline.

    Raises:
        ValueError: (from bibtexparser) only if two entries end up with the same key, which
            :func:`paperatlas.cite.bibtex.unique_keys` prevents.
    """
    return write_entries(papers)
