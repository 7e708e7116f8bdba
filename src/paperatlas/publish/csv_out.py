"""Publish an atlas as CSV, one row per paper sorted by id, with a header row of :data:`COLUMNS`.

The file is written with the stdlib :mod:`csv` in the Excel dialect: comma-separated, ``"``-quoted where needed,
CRLF line ends.

The facet columns (``rating_mean`` ... ``institutions``, :func:`paperatlas.facets.facets_of`) are empty cells where
the listing gives no value (never 0); ``has_code`` is ``yes``/``no``.

List fields (``authors``, ``keyphrases``, ``institutions``) are joined with ``"; "``; ``keyphrases`` falls back to
the listing's given keyphrases; missing numbers (``year``, ``topic_id``, ``x``, ``y``) are empty cells; ``paper_url``
and ``code_url`` hold only http(s) and DOI links (:func:`paperatlas.text.safe_url`; placeholder links with an empty URL
and any other link are skipped). The last columns say when and where the paper is presented (``session``,
``starts_at``/``ends_at`` in ISO 8601 with their UTC offset, ``timezone``, ``location``, ``poster``), empty when the
listing does not say.

A text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` so a
spreadsheet shows it as text instead of running it as a formula (OWASP's CSV-injection guidance); numbers (``year``,
``topic_id``, ``x``, ``y``, a negative coordinate included) are written as they are.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable

from ..facets import facets_of
from ..model import Paper, Topic
from ._common import code_link, paper_link, second_link

FORMAT = "csv"

#: When and where the paper is presented (:data:`paperatlas.model.EXTRA_KEYS`; the CSV reader reads them back).
PRESENTATION = ("session", "starts_at", "ends_at", "timezone", "location", "poster")

#: Column order of the CSV output.
COLUMNS = ("id", "title", "authors", "venue", "year", "status", "track", "topic_id", "topic_label", "tldr",
           "keyphrases", "paper_url", "code_url", "x", "y", "abstract", "rating_mean", "rating_spread", "n_reviews",
           "confidence_mean", "decision", "citations", "has_code", "institutions", "pdf_url", *PRESENTATION)

#: First characters that make a spreadsheet read a cell as a formula (OWASP CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    if isinstance(value, str):
        return text_cell(value)
    return str(value)


def text_cell(text: str) -> str:
    """A text cell that a spreadsheet will not run as a formula.

    Args:
        text: the cell's text.

    Returns:
        ``text`` with a leading ``'`` when it starts with one of :data:`FORMULA_START`, else ``text`` unchanged.
    """
    return "'" + text if text.startswith(FORMULA_START) else text


def _facet_cells(p: Paper) -> tuple:
    """The facet columns of one paper; None (an empty cell) where the listing gives no value."""
    f = facets_of(p)
    return (f.rating_mean, f.rating_spread, f.n_reviews, f.confidence_mean, f.decision, f.citations,
            "yes" if f.has_code else "no", "; ".join(f.institutions))


def render(papers: Iterable[Paper], topics: Iterable[Topic], related: dict[str, list[str]] | None = None,
           title: str = "") -> str:
    """Render the papers as CSV text (see the module docstring for the columns).

    Args:
        papers: the papers.
        topics: the atlas's topics (for ``topic_label``).
        related: unused (uniform publisher signature).
        title: unused.

    Returns:
        The CSV text; write it without newline translation (``newline=""`` or as bytes). Raises nothing.
    """
    labels = {t.id: t.label for t in topics}
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(COLUMNS)
    for p in sorted(papers, key=lambda p: p.id):
        writer.writerow([_cell(v) for v in (
            p.id,
            p.title,
            "; ".join(p.authors),
            p.venue,
            p.year,
            p.status,
            p.track,
            p.topic_id,
            labels.get(p.topic_id, "") if p.topic_id is not None else "",
            p.tldr,
            "; ".join(p.keyphrases or p.given_keyphrases),
            paper_link(p),
            code_link(p),
            None if p.x is None else float(p.x),
            None if p.y is None else float(p.y),
            p.abstract,
            *_facet_cells(p),
            second_link(p),
            *(str(p.extra.get(k) or "") for k in PRESENTATION),
        )])
    return buf.getvalue()
