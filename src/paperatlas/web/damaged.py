"""The web app's page for a damaged atlas: the store's one line, never a traceback.

The app refuses a damaged atlas at load: :class:`~paperatlas.store.Atlas` checks every value it loads, so
``create_app`` raises :class:`~paperatlas.store.MalformedAtlas` (``serve`` says the one line and does not start).
What is read per request — the reader's tables (marks, lists, overrides), the stored models, the build history —
is checked when it is read; damage found there answers that request with a 500 page holding the one line
(:func:`register`), and the other pages keep working.
"""

from __future__ import annotations

from flask import Flask
from markupsafe import escape

from ..store import MalformedAtlas

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Damaged atlas</title></head>
<body><h1>This atlas is damaged</h1><p class="damaged">{line}</p></body></html>
"""


def damaged_page(error: MalformedAtlas) -> tuple[str, int, dict[str, str]]:
    """The answer to a request that read a damaged value.

    Args:
        error: The store's error (its message is one line naming the file, the cell and the repair).

    Returns:
        ``(HTML page with that line, 500, headers)``.
    """
    return PAGE.format(line=escape(str(error))), 500, {"Content-Type": "text/html; charset=utf-8"}


def register(app: Flask) -> None:
    """Answer a request that finds the atlas damaged with :func:`damaged_page` (500, the one line).

    Args:
        app: The Flask app.
    """
    app.register_error_handler(MalformedAtlas, damaged_page)
