"""Publishers: turn an atlas (papers, topics, related papers) into a file others can read.

Every output format is one :class:`Format` record (:class:`paperatlas.plugins.Format`, returned by a plugin's
``paperatlas_formats`` hook; the built-in ones too) in :data:`REGISTRY`: its name, a one-line description, and
either ``render(papers, topics, related, title) -> str`` (a text format, e.g. ``json`` by :mod:`.json_out`),
``write(papers, topics, related, out_dir, title) -> Path`` (a directory format: ``site``, by
:func:`.site.write_site`) or ``from_atlas(atlas, title) -> str`` (a text made from the atlas's history and the
reader's own data: ``new-md``, by :mod:`.new_md`), plus whether it shows related papers and whether it is a
file export for a reference manager or a data tool (``search --export``). :data:`FORMATS`, :data:`ATLAS_FORMATS`,
:data:`DIRECTORY_FORMATS`, :data:`USES_RELATED` and :data:`EXPORT_FORMATS` are views of it; the CLI's choices and
help and the README's table of output formats are made from it, so a new format needs only its record here.

:func:`render` returns the text; :func:`publish` writes it atomically (a failed render or write leaves any
previous file at the path untouched); for a directory format it writes the folder atomically instead. Neither
ever replaces what publish did not write (:mod:`._output`): a file output refuses a folder or an SQLite database
(an atlas), a folder output refuses a non-empty folder that is not an earlier output of its format
(:class:`OutputRefused`); :func:`check_output` refuses the same before any work is done, and the atlas too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from .. import plugins as _plugins
from ..feed import render as atom_feed
from ..files import write_bytes_atomic
from ..model import Paper, Topic
from ..plugins import Format, Renderer, Writer
from . import awesome_md, bibtex_out, csl_json, csv_out, highlights_md, json_out, map_html, new_md, site, topics_md
from ._output import OutputRefused, atlas_files, check_file_output, check_folder_output

__all__ = ["ATLAS_FORMATS", "DIRECTORY_FORMATS", "EXPORT_FORMATS", "FORMATS", "REGISTRY", "USES_RELATED", "Format",
           "OutputRefused", "Renderer", "Writer", "check_output", "publish", "render", "write_text_atomic"]

#: The built-in formats, in the order ``publish --help`` lists them; registered through the plugin door
#: (:mod:`paperatlas.plugins`, hook ``paperatlas_formats``) like any outside format.
_BUILTIN = (
    Format("awesome-md", "a GitHub-flavoured Markdown awesome list, one section per topic", awesome_md.render),
    Format("highlights-md", "a reading list as a highlights post: reading time, table of contents by area, per "
           "paper its links, authors, status, TL;DR and the reader's note", highlights_md.render),
    Format("highlights-html", "the highlights post as one standalone HTML page", highlights_md.render_html),
    Format("topics-md", "the topic pages in Markdown: table of contents (areas → sub-topics), then per sub-topic "
           "its keyphrases, nearest topics and papers Oral → Spotlight → Poster", topics_md.render),
    Format("json", "every paper field plus `topic_label` and `related_ids`", json_out.render, uses_related=True,
           export=True),
    Format("csv", "one row per paper with the main fields", csv_out.render, export=True),
    Format("bibtex", "one BibTeX entry per paper, for Zotero, JabRef or LaTeX", bibtex_out.render, export=True),
    Format("csl-json", "CSL-JSON for Zotero, Mendeley, pandoc", csl_json.render, export=True),
    Format("map", "one self-contained interactive HTML map: Plotly.js inlined, works from `file://`",
           map_html.render),
    Format("site", "a static website: search, paper and topic pages, map, bookmarks; works from `file://`",
           write=site.write_site, uses_related=True),
    Format("new-md", "what's new for you: the papers the last build added, ranked for your likes, by topic, with "
           "the topics that grew and new papers by authors you liked", from_atlas=new_md.render),
    Format("new-html", "the what's-new digest as one standalone HTML page", from_atlas=new_md.render_html),
    Format("atom", "an Atom feed of the papers the last builds added, ranked for your likes, TL;DR as summary; "
           "`--topic`/`--query` narrow it", from_atlas=atom_feed),
)
_plugins.register_builtin("paperatlas.publish", paperatlas_formats=lambda: list(_BUILTIN))

#: Format name -> :class:`Format` (:class:`paperatlas.plugins.Format`): a view of the plugins'
#: ``paperatlas_formats`` records, the built-ins first, in the order ``publish --help`` lists them.
REGISTRY: dict[str, Format] = {f.name: f for f in _plugins.collect("paperatlas_formats")}

#: Text format name -> renderer. Looked up at call time, so tests and plugins may add or replace entries.
FORMATS: dict[str, Renderer] = {f.name: f.render for f in REGISTRY.values() if f.render is not None}

#: Formats made from the whole atlas (history, reader's data): name -> ``render(atlas, title) -> str``.
ATLAS_FORMATS: dict[str, Callable[..., str]] = {f.name: f.from_atlas for f in REGISTRY.values()
                                                 if f.from_atlas is not None}

#: Formats that write a folder: name -> ``write(papers, topics, related, out_dir, title) -> Path`` (atomic).
DIRECTORY_FORMATS: dict[str, Writer] = {f.name: f.write for f in REGISTRY.values() if f.write is not None}

#: Formats whose output shows related papers (the others ignore ``related``: callers need not compute it, which
#: costs a nearest-neighbour search per paper).
USES_RELATED = {f.name for f in REGISTRY.values() if f.uses_related}

#: Formats that are file exports for a reference manager or a data tool (``search --export``), in registry order.
EXPORT_FORMATS = [f.name for f in REGISTRY.values() if f.export]


def _refresh() -> None:
    """Add the outside plugins' formats to :data:`REGISTRY` and its views, in place."""
    for f in _plugins.collect("paperatlas_formats", builtin=False):
        if f.name in REGISTRY:
            continue
        REGISTRY[f.name] = f
        for view, fn in ((FORMATS, f.render), (ATLAS_FORMATS, f.from_atlas), (DIRECTORY_FORMATS, f.write)):
            if fn is not None:
                view[f.name] = fn
        if f.uses_related:
            USES_RELATED.add(f.name)
        if f.export:
            EXPORT_FORMATS.append(f.name)


_plugins.on_load(_refresh)


def check_output(fmt: str, path: str | Path, atlas: str | Path | None = None) -> None:
    """Refuse, before any work, an output path where ``publish --format fmt`` would replace what it did not write.

    Args:
        fmt: A key of :data:`REGISTRY`.
        path: The ``-o`` path.
        atlas: The atlas file published from: neither it nor its companion files (``-wal``, ``.lock``, ...) may be
            the output or inside a folder output.

    Raises:
        OutputRefused: (a ``FileExistsError``, one line naming the path and what to do) a file format's ``path`` is
            a folder, the atlas or one of its files, or an SQLite database; a folder format's ``path`` is a file, holds
            the atlas, or is a non-empty folder that is not an earlier output of ``fmt`` (or holds files that output
            did not write).
    """
    _plugins.load()
    protect = atlas_files(atlas) if atlas is not None else []
    if fmt in DIRECTORY_FORMATS:
        check_folder_output(path, fmt, protect)
    else:
        check_file_output(path, protect)


#: The text formats whose topic overviews cite papers by ``[n]``: they take the papers an overview may cite.
CITES_OVERVIEWS = frozenset({"topics-md", "awesome-md", "highlights-md", "highlights-html"})


def render(fmt: str, papers: Iterable[Paper], topics: Iterable[Topic], related: dict[str, list[str]] | None,
           title: str = "", cited: Iterable[Paper] | None = None) -> str:
    """Render ``papers`` in format ``fmt`` and return the text.

    Only text formats (:data:`FORMATS`) render; a directory format is written by :func:`publish`.

    Args:
        fmt: A key of :data:`FORMATS`, e.g. ``awesome-md``, ``json``, ``csv``, ``bibtex``, ``map``.
        papers: The papers to publish.
        topics: The atlas's topics (labels, sections): a list, or a dict ``{id: Topic}``.
        related: Paper id -> ids of related papers (``None`` for none).
        title: Document title where the format has one (awesome-md, map), else ignored.
        cited: The papers a topic overview may cite beyond ``papers`` (the whole atlas's, when ``papers`` is a
            reading list), for the formats of :data:`CITES_OVERVIEWS`; ignored by the others. None for ``papers``.

    Returns:
        The rendered text.

    Raises:
        ValueError: ``fmt`` is not a text format (the message names the known ones).
        Exception: Whatever the renderer raises propagates.
    """
    _plugins.load()
    try:
        renderer = FORMATS[fmt]
    except (KeyError, TypeError):
        raise ValueError(f"unknown publish format {fmt!r}; known formats: {', '.join(sorted(FORMATS))}") from None
    if isinstance(topics, dict):  # an atlas's ``{id: Topic}`` map
        topics = topics.values()
    if fmt in CITES_OVERVIEWS and cited is not None:
        return renderer(list(papers), list(topics), dict(related or {}), title, cited=cited)
    return renderer(list(papers), list(topics), dict(related or {}), title)


def publish(fmt: str, papers: Iterable[Paper], topics: Iterable[Topic], related: dict[str, list[str]] | None,
            path: str | Path, title: str = "", cited: Iterable[Paper] | None = None) -> Path:
    """Publish ``papers`` in format ``fmt`` at ``path``.

    A text format is rendered whole first (:func:`render`), then written as UTF-8 atomically
    (:func:`write_text_atomic`); a directory format (:data:`DIRECTORY_FORMATS`) writes its folder atomically itself.

    Args:
        fmt: A key of :data:`FORMATS` or :data:`DIRECTORY_FORMATS`.
        papers: The papers to publish.
        topics: The atlas's topics: a list, or a dict ``{id: Topic}``.
        related: Paper id -> ids of related papers (``None`` for none).
        path: The file to write (the folder, for a directory format).
        title: Document title where the format has one, else ignored.
        cited: As for :func:`render`.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: ``fmt`` is not a known format (the message names the known ones).
        OutputRefused: (an ``OSError``) ``path`` would replace what publish did not write: a folder or an SQLite
            database for a file format; for a folder format see :func:`paperatlas.publish.site.write_site`.
        OSError: The file cannot be written.
        Exception: Whatever the renderer or writer raises propagates.
    """
    _plugins.load()
    if fmt in DIRECTORY_FORMATS:  # a folder, written atomically by the format itself
        topics = topics.values() if isinstance(topics, dict) else topics
        return DIRECTORY_FORMATS[fmt](list(papers), list(topics), dict(related or {}), path, title)
    check_file_output(path)  # before the rendering, which may take a while
    return write_text_atomic(path, render(fmt, papers, topics, related, title=title, cited=cited))


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically.

    The text goes to a temporary file in the same directory, fsynced, then moved over ``path`` with
    :func:`os.replace`, so a failure at any point leaves a previous file at ``path`` unchanged (and no temporary
    file behind). Missing parent directories are created. The new file gets the previous file's permissions, or
    the usual ones for a new file (``0o666`` minus the umask).

    Args:
        path: The file to write.
        text: Its new content.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        OutputRefused: (an ``OSError``) ``path`` is a folder or an SQLite database (:func:`check_file_output`).
        OSError: The file cannot be written.
    """
    check_file_output(path)
    return write_bytes_atomic(path, text.encode("utf-8"))
