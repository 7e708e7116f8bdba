"""What every HTML page paperatlas writes shares: the page icon and the Markdown parser.

Shared whether the page is served (:mod:`paperatlas.web`) or published (:mod:`paperatlas.publish`): the inline
page icon and the one Markdown parser for readers' notes and highlights pages (markdown-it-py, raw HTML escaped).
"""

from __future__ import annotations

import functools
import html
import re

#: the page icon, inline (a data: URI) so a standalone page requests nothing
FAVICON = ("<link rel=\"icon\" href=\"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' "
           "viewBox='0 0 16 16'%3E%3Ccircle cx='8' cy='8' r='7' fill='%232b59c3'/%3E"
           "%3Ccircle cx='5.5' cy='6' r='1.6' fill='%23fff'/%3E"
           "%3Ccircle cx='10.5' cy='9.5' r='1.6' fill='%23fff'/%3E%3C/svg%3E\">")


def markdown_parser():
    """The Markdown parser of notes and highlights pages.

    markdown-it-py CommonMark with tables, raw HTML escaped (not rendered), links with unsafe schemes
    (``javascript:``) left as text by markdown-it's link validation.

    Returns:
        A new ``markdown_it.MarkdownIt`` parser.
    """
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


#: A note with more Markdown marks than this (brackets, parentheses, emphasis, ``<``, ``!``, backticks) is shown as
#: plain text: markdown-it-py's link and emphasis rules take time growing with the square of their number (1.2 s
#: for a 99 kB note of ``[``, 1.6 s of ``![``; 0.07 s at this limit). Real notes hold a few hundred.
MAX_NOTE_MARKS = 5_000

_MARKS = re.compile(r"[\[\]()*_<>!`]")


def note_html(note: str) -> str:
    """A reader's Markdown note as safe HTML (:func:`markdown_parser`).

    Rendered once per distinct note (a small cache: the pages showing a note are rendered again and again). A note
    with more than :data:`MAX_NOTE_MARKS` Markdown marks is shown as escaped plain text in ``<pre class="note-plain">``
    instead, so no note takes more than a few hundredths of a second to show.

    Args:
        note: The note's Markdown; ``None`` or ``""`` gives ``""``.

    Returns:
        The rendered HTML.
    """
    return _note_html(note or "")


@functools.lru_cache(maxsize=256)
def _note_html(note: str) -> str:
    if len(_MARKS.findall(note)) > MAX_NOTE_MARKS:
        return f'<pre class="note-plain">{html.escape(note)}</pre>'
    return markdown_parser().render(note)
