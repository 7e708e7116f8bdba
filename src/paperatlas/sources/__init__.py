"""Readers: one module per listing format, each exposing ``read(path, **hints) -> list[Paper]`` and
``sniff(head: str) -> bool``, registered by name in :data:`READERS`.

:func:`read` picks the reader from the file's content (see :func:`detect_format`) unless ``format`` is given.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

from ..model import Paper, SourceError
from . import awesome_md, paperlists_json, paperlists_md

#: name -> module with ``read`` and ``sniff``; order is the detection order.
READERS = {
    "paperlists-json": paperlists_json,
    "awesome-md": awesome_md,
    "paperlists-md": paperlists_md,
}


def open_text(path: str | Path) -> str:
    """The file's text (UTF-8; ``.gz`` transparently decompressed).

    Raises :class:`SourceError` when the file is missing or not UTF-8 text.
    """
    p = Path(path)
    if not p.is_file():
        raise SourceError(str(path), None, "no such file")
    try:
        raw = p.read_bytes()
        if p.suffix == ".gz":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8")
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise SourceError(str(path), None, f"cannot read file: {e}") from e
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise SourceError(str(path), line, f"not UTF-8 text ({e.reason} at byte {e.start})") from e


def detect_format(path: str | Path, text: str | None = None) -> str:
    """Name of the reader that recognises the file's content.

    Raises :class:`SourceError` listing the known formats when none does.
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

    ``format`` is a key of :data:`READERS` (auto-detected when ``None``); ``hints`` (e.g. ``venue="ICLR 2021"``,
    ``year=2021``) fill fields the listing itself does not state; they are ignored for readers whose entries
    state their own venue (awesome lists). Raises :class:`SourceError`.
    """
    text = open_text(path)
    name = format or detect_format(path, text)
    if name not in READERS:
        raise SourceError(str(path), None, f"unknown format {name!r}; known: {', '.join(READERS)}")
    reader = READERS[name]
    if getattr(reader, "STATES_VENUE_PER_ENTRY", False):
        hints = {k: v for k, v in hints.items() if k not in ("venue", "year")}
    return reader.read_text(text, str(path), **hints)
