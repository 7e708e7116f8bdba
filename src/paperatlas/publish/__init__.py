"""Publishers: turn an atlas (papers, topics, related papers) into a file others can read.

Each format is a module with ``render(papers, topics, related, title) -> str``, registered by name in
:data:`FORMATS`:

``awesome-md``
    a GitHub-flavoured Markdown awesome list, one section per topic (:mod:`.awesome_md`);
``json``
    every paper field plus ``topic_label`` and ``related_ids`` (:mod:`.json_out`);
``csv``
    one row per paper with the main fields (:mod:`.csv_out`);
``bibtex``
    one BibTeX entry per paper, written with bibtexparser (:mod:`.bibtex_out`);
``highlights-html``
    the same post as one standalone HTML page (:func:`.highlights_md.render_html`);
``csl-json``
    CSL-JSON for Zotero, Mendeley, pandoc (:mod:`.csl_json`);
``highlights-md``
    a reading list as a highlights post: reading time, table of contents by area, per paper its links,
    authors, status, TL;DR and the reader's note (:mod:`.highlights_md`);
``topics-md``
    the topic pages in Markdown: table of contents (areas → sub-topics), then per sub-topic its keyphrases,
    nearest topics and papers Oral → Spotlight → Poster (:mod:`.topics_md`);
``map``
    one self-contained interactive HTML map (Plotly.js inlined; works from ``file://``) (:mod:`.map_html`);
``site``
    a static website *folder* (search, paper and topic pages, map, bookmarks; works from ``file://``), written by
    :func:`.site.write_site` — registered in :data:`DIRECTORY_FORMATS`, not :data:`FORMATS`, as it is not one text.

:func:`render` returns the text; :func:`publish` writes it atomically (a failed render or write leaves any
previous file at the path untouched); for a directory format it writes the folder atomically instead.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from ..model import Paper, Topic
from . import awesome_md, bibtex_out, csl_json, csv_out, highlights_md, json_out, map_html, site, topics_md

#: A publisher: ``render(papers, topics, related, title) -> str``.
Renderer = Callable[[list[Paper], list[Topic], dict[str, list[str]], str], str]

#: Format name -> renderer. Looked up at call time, so tests and plugins may add or replace entries.
FORMATS: dict[str, Renderer] = {
    "awesome-md": awesome_md.render,
    "json": json_out.render,
    "csv": csv_out.render,
    "bibtex": bibtex_out.render,
    "map": map_html.render,
    "topics-md": topics_md.render,
    "highlights-md": highlights_md.render,
    "highlights-html": highlights_md.render_html,
    "csl-json": csl_json.render,
}

#: Formats that write a folder: name -> ``write(papers, topics, related, out_dir, title) -> Path`` (atomic).
DIRECTORY_FORMATS: dict[str, Callable[..., Path]] = {"site": site.write_site}

#: Formats whose output shows related papers (the others ignore ``related``: callers need not compute it, which
#: costs a nearest-neighbour search per paper).
USES_RELATED = frozenset({"json", "site"})

__all__ = ["DIRECTORY_FORMATS", "FORMATS", "USES_RELATED", "publish", "render", "write_text_atomic"]


def render(fmt: str, papers: Iterable[Paper], topics: Iterable[Topic], related: dict[str, list[str]] | None,
           title: str = "") -> str:
    """Render ``papers`` in format ``fmt`` and return the text.

    Arguments
        ``fmt``: a key of :data:`FORMATS` (``awesome-md``, ``json``, ``csv``, ``bibtex``, ``map``);
        ``papers``: the papers to publish; ``topics``: the atlas's topics (labels, sections; a list, or a dict
        ``{id: Topic}``);
        ``related``: paper id -> ids of related papers (``None`` for none); ``title``: document title where the
        format has one (awesome-md, map), else ignored.

    Raises ``ValueError`` naming the known formats when ``fmt`` is not one of them; renderer errors propagate.
    """
    try:
        renderer = FORMATS[fmt]
    except (KeyError, TypeError):
        raise ValueError(f"unknown publish format {fmt!r}; known formats: {', '.join(sorted(FORMATS))}") from None
    if isinstance(topics, dict):  # an atlas's ``{id: Topic}`` map
        topics = topics.values()
    return renderer(list(papers), list(topics), dict(related or {}), title)


def publish(fmt: str, papers: Iterable[Paper], topics: Iterable[Topic], related: dict[str, list[str]] | None,
            path: str | Path, title: str = "") -> Path:
    """Render ``papers`` in format ``fmt`` (see :func:`render`) and write the text to ``path`` as UTF-8.

    The whole text is rendered first, then written atomically (:func:`write_text_atomic`).

    Returns ``path`` as a :class:`~pathlib.Path`. Raises ``ValueError`` for an unknown format (naming the known
    ones), ``OSError`` when the file cannot be written, and whatever the renderer raises.
    """
    if fmt in DIRECTORY_FORMATS:  # a folder, written atomically by the format itself
        topics = topics.values() if isinstance(topics, dict) else topics
        return DIRECTORY_FORMATS[fmt](list(papers), list(topics), dict(related or {}), path, title)
    return write_text_atomic(path, render(fmt, papers, topics, related, title=title))


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically: to a temporary file in the same directory, fsynced, then
    moved over ``path`` with :func:`os.replace`, so a failure at any point leaves a previous file at ``path``
    unchanged (and no temporary file behind). Missing parent directories are created. The new file gets the
    previous file's permissions, or the usual ones for a new file (``0o666`` minus the umask). Returns ``path``
    as a :class:`~pathlib.Path`; raises ``OSError`` when it cannot be written."""
    data = text.encode("utf-8")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target
