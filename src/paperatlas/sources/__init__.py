"""Readers: one module per listing format, registered by name in :data:`READERS`.

Each reader module exposes ``sniff(head: str) -> bool`` and ``read_text(text, path, **hints) -> list[Paper]``
(``hints``: ``venue``, ``year`` for listings that do not state them); its docstring's first paragraph is the
description shown by ``--help``, ``docs/cli.md`` and the README (:func:`describe`).

:func:`read` picks the reader from the file's content (see :func:`detect_format`) unless ``format`` is given,
and bounds what a listing can feed the build: titles longer than :data:`MAX_TITLE_CHARS` and abstracts/digests
longer than :data:`MAX_ABSTRACT_CHARS` are cut, with a :class:`SourceWarning` naming the file and line/record.
"""

from __future__ import annotations

import gzip
import re
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path

from ..model import Paper, SourceError
from . import awesome_md, paperlists_json, paperlists_md

#: name -> module with ``read`` and ``sniff``; order is the detection order. The first paragraph of a module's
#: docstring is its description (:func:`describe`): the CLI's ``build --format`` help and the README's table of
#: readers are made from this registry, so a new reader needs only its entry here.
READERS = {
    "paperlists-json": paperlists_json,
    "awesome-md": awesome_md,
    "paperlists-md": paperlists_md,
}


#: Abstracts (and awesome-list digests) are cut to this many characters at ingest; the longest real abstract in
#: the seeds is under 5,000.
MAX_ABSTRACT_CHARS = 20_000
#: Titles are cut to this many characters at ingest.
MAX_TITLE_CHARS = 1_000


class SourceWarning(UserWarning):
    """A listing was read, but something in it was changed (e.g. an over-long abstract cut); names the record."""


def describe(name: str) -> str:
    """One-line description of the reader registered as ``name``.

    It is the first paragraph of the reader module's docstring, on one line, without its leading "Reader for"
    and with reStructuredText's double backquotes as Markdown's single ones.

    Args:
        name: A key of :data:`READERS`.

    Returns:
        The description, e.g. "Markdown accepted-paper listings such as the ICLR 2021 one (...)".

    Raises:
        KeyError: ``name`` is not a registered reader.
    """
    doc = (READERS[name].__doc__ or name).strip().split("\n\n", 1)[0]
    text = " ".join(doc.split()).replace("``", "`")
    text = re.sub(r"^Reader (?:for|of) (?:the )?", "", text)
    return text[:1].upper() + text[1:]


def open_text(path: str | Path) -> str:
    r"""Read a listing file's text.

    The file is decoded as UTF-8 (a leading byte-order mark dropped); a ``.gz`` file is transparently
    decompressed first. Line ends ``\r\n`` and ``\r`` become ``\n``, so sniffing and line numbers work on
    listings saved on Windows or classic Mac OS.

    Args:
        path: The listing file.

    Returns:
        The file's text, with ``\n`` line ends.

    Raises:
        SourceError: The file is missing, unreadable or not UTF-8 text (the error names the line).
    """
    p = Path(path)
    if not p.is_file():
        raise SourceError(str(path), None, "no such file")
    try:
        raw = p.read_bytes()
        if p.suffix == ".gz":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise SourceError(str(path), None, f"cannot read file: {e}") from e
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise SourceError(str(path), line, f"not UTF-8 text ({e.reason} at byte {e.start})") from e
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def detect_format(path: str | Path, text: str | None = None) -> str:
    """Name the reader that recognises the file's content.

    Each reader's ``sniff`` is asked in the order of :data:`READERS`, on the first 20,000 characters.

    Args:
        path: The listing file (read only when ``text`` is not given; named in errors).
        text: The file's text, when already read.

    Returns:
        The first key of :data:`READERS` whose reader recognises the content.

    Raises:
        SourceError: No reader recognises it (the message lists the known formats), or the file cannot be read.
    """
    head = (text if text is not None else open_text(path))[:20000]
    for name, mod in READERS.items():
        if mod.sniff(head):
            return name
    raise SourceError(str(path), None, "unrecognised listing format; pass --format with one of: "
                      + ", ".join(READERS))


def read(path: str | Path, format: str | None = None, progress: Callable[[int], None] | None = None,
         **hints) -> list[Paper]:
    """Read one listing into :class:`Paper` records.

    ``hints`` (e.g. ``venue="ICLR 2021"``, ``year=2021``) fill fields the listing itself does not state; they are
    ignored for readers whose entries state their own venue (awesome lists).

    Args:
        path: The listing file (UTF-8, optionally gzipped).
        format: A key of :data:`READERS`; detected from the content when ``None`` (:func:`detect_format`).
        progress: Not used: readers do not report progress.
        **hints: Fields for papers whose listing does not state them.

    Returns:
        The papers of the listing, in listing order.

    Raises:
        SourceError: The file cannot be read, its format is unknown or unrecognised, or it is malformed.
    """
    text = open_text(path)
    name = format or detect_format(path, text)
    if name not in READERS:
        raise SourceError(str(path), None, f"unknown format {name!r}; known: {', '.join(READERS)}")
    reader = READERS[name]
    if getattr(reader, "STATES_VENUE_PER_ENTRY", False):
        hints = {k: v for k, v in hints.items() if k not in ("venue", "year")}
    try:
        papers = reader.read_text(text, str(path), **hints)
    except RecursionError as e:  # e.g. JSON nested thousands of levels deep
        raise SourceError(str(path), None, "nested too deeply to read") from e
    for p in papers:
        _bound(p, str(path))
    return papers


def _bound(p: Paper, path: str) -> None:
    """Cut ``p``'s over-long title, abstract and digest in place, with a :class:`SourceWarning` for each."""
    src = p.sources[0] if p.sources else None
    where = "" if src is None else (f"record {src.record}" if src.record is not None else
                                    (src.line if src.line is not None else ""))
    loc = f"{path}:{where}" if where != "" else path
    for field, limit in (("title", MAX_TITLE_CHARS), ("abstract", MAX_ABSTRACT_CHARS),
                         ("digest", MAX_ABSTRACT_CHARS)):
        value = getattr(p, field)
        if len(value) > limit:
            warnings.warn(f"{loc}: {field} of {len(value):,} characters cut to {limit:,}", SourceWarning,
                          stacklevel=3)
            setattr(p, field, value[:limit].rstrip())
