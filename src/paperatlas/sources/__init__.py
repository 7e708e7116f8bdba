"""Readers: one module per listing format or service, registered by name in :data:`READERS`.

Each reader module exposes:

* ``FORMAT`` (its name in :data:`READERS`), ``LIBRARY`` (the library that parses or fetches it, ``""`` for our
  own parser), ``EXAMPLE`` (one ``paperatlas build ...`` line) and ``FIELDS`` (the :class:`Paper` fields it fills):
  the README's table of sources is made from them;
* ``sniff(head: str) -> bool``: whether a file's first 20,000 characters are in this format (always False for a
  reader that reads no files);
* ``read_text(text, path, strict=False, **hints) -> list[Paper]`` (``hints``: ``venue``, ``year`` for listings that
  do not state them, and the network options below); a malformed record is passed to
  :func:`._common.skip_record` (skipped with a :class:`RecordSkipped` warning, or raised when ``strict``);
* network readers also ``SCHEME`` (``"openreview"`` for ``openreview:ICLR.cc/2025/Conference``) and
  ``fetch(query, strict=False, cache_dir=None, refresh=False, **options) -> list[Paper]``, which keep what they
  fetched in a :class:`._common.FetchCache` and build from it when it is there (``refresh`` fetches again).

Its docstring's first paragraph is the description shown by ``--help``, ``docs/cli.md`` and the README
(:func:`describe`).

:func:`read` picks the reader from the file's content (see :func:`detect_format`) unless ``format`` is given,
and bounds what a listing can feed the build with the limits of :mod:`paperatlas.limits`, each time with a
:class:`SourceWarning` naming the file and line/record: titles longer than :data:`MAX_TITLE_CHARS` characters,
abstracts/digests longer than :data:`MAX_ABSTRACT_CHARS` and a given TL;DR (an author's) longer than
:data:`paperatlas.limits.MAX_TLDR_CHARS` are cut; a given keyphrase longer than
:data:`paperatlas.limits.MAX_KEYPHRASE_CHARS` is dropped and only the first
:data:`paperatlas.limits.MAX_KEYPHRASES` are kept.
"""

from __future__ import annotations

import gzip
import re
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path

from .. import plugins as _plugins
from ..limits import MAX_ABSTRACT_CHARS as MAX_ABSTRACT_CHARS
from ..limits import MAX_KEYPHRASE_CHARS, MAX_KEYPHRASES, MAX_TLDR_CHARS
from ..limits import MAX_TITLE_CHARS as MAX_TITLE_CHARS
from ..model import Paper, SourceError
from . import (
    acl_anthology,
    arxiv_api,
    awesome_md,
    bibtex,
    csl_json,
    csv_table,
    dblp,
    openreview,
    paperlists_json,
    paperlists_md,
    ris,
    virtual_site,
)
from ._common import RecordSkipped, SourceWarning

__all__ = ["READERS", "SCHEMES", "RecordSkipped", "SourceWarning", "describe", "detect_format", "open_text", "read"]

#: The built-in readers, in detection order (the more specific formats first, CSV last); registered through the
#: plugin door (:mod:`paperatlas.plugins`, hook ``paperatlas_readers``) like any outside reader.
_BUILTIN = (csl_json, openreview, paperlists_json, virtual_site, dblp, bibtex, ris, acl_anthology, awesome_md,
            paperlists_md, arxiv_api, csv_table)
_plugins.register_builtin("paperatlas.sources", paperatlas_readers=lambda: [
    _plugins.Reader(mod.FORMAT, module=mod) for mod in _BUILTIN])

#: name -> reader module (see the module docstring; a plugin's reader is a module made by
#: :meth:`paperatlas.plugins.Reader.as_module`): a view of the plugins' ``paperatlas_readers`` records, built-ins
#: first, in detection order. The CLI's ``build --format`` help, the README's table of sources and ``docs/cli.md``
#: are made from it, so a new built-in reader needs only its module and its place in ``_BUILTIN``.
READERS = {r.name: r.as_module() for r in _plugins.collect("paperatlas_readers")}


def _refresh() -> None:
    """Add the outside plugins' readers to :data:`READERS`, in place (after the built-ins: detected after them)."""
    for r in _plugins.collect("paperatlas_readers", builtin=False):
        READERS.setdefault(r.name, r.as_module())


_plugins.on_load(_refresh)

#: URI scheme -> name of the network reader that fetches it (``openreview:``, ``arxiv:``, ``acl:``).
SCHEMES = {mod.SCHEME: name for name, mod in READERS.items() if getattr(mod, "SCHEME", "")}

# "scheme:rest", not a URL ("https://...") and not a Windows drive ("C:\...").
_SOURCE_RE = re.compile(r"^(?P<scheme>[a-z][a-z0-9-]+):(?!//)(?P<query>.+)$", re.DOTALL)



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
    return text if text.startswith("arXiv") else text[:1].upper() + text[1:]


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
    _plugins.load()
    head = (text if text is not None else open_text(path))[:20000]
    for name, mod in READERS.items():
        if mod.sniff(head):
            return name
    raise SourceError(str(path), None, "unrecognised listing format; pass --format with one of: "
                      + ", ".join(READERS))


def network_source(source: str | Path) -> tuple[str, str] | None:
    """The network reader and query a source names, when it is not a file.

    Args:
        source: A build source: a file path, or ``scheme:query`` such as ``openreview:ICLR.cc/2025/Conference``,
            ``arxiv:cs.LG``, ``arxiv:"diffusion models"``, ``acl:2023.acl-long``.

    Returns:
        ``(reader name, query)`` for a ``scheme:query`` of :data:`SCHEMES` that is not an existing file; else None.
    """
    m = _SOURCE_RE.match(str(source))
    if m is None or m.group("scheme") not in SCHEMES or Path(source).exists():
        return None
    return SCHEMES[m.group("scheme")], m.group("query")


def read(path: str | Path, format: str | None = None, progress: Callable[[int], None] | None = None,
         strict: bool = False, **hints) -> list[Paper]:
    """Read one listing (a file, or a network source such as ``openreview:VENUE``) into :class:`Paper` records.

    ``hints`` (e.g. ``venue="ICLR 2021"``, ``year=2021``) fill fields the listing itself does not state; they are
    ignored for readers whose entries state their own venue (awesome lists). The network readers' options are
    hints too: ``include_rejected``, ``max_results``, ``date_from``, ``date_to`` (``YYYY-MM-DD``), ``refresh``,
    ``cache_dir``; file readers ignore them.

    Args:
        path: The listing file (UTF-8, optionally gzipped), or ``scheme:query`` (:func:`network_source`).
        format: A key of :data:`READERS`; detected from the content when ``None`` (:func:`detect_format`).
        progress: Not used: readers do not report progress.
        strict: Raise on the first malformed record instead of skipping it with a :class:`RecordSkipped` warning.
        **hints: Fields for papers whose listing does not state them; network options.

    Returns:
        The papers of the listing, in listing order.

    Raises:
        SourceError: The file cannot be read, its format is unknown or unrecognised, it is malformed as a whole
            (or a record is, when ``strict``), or a network source cannot be fetched and is not cached.
    """
    _plugins.load()
    net = network_source(path)
    if net is not None:
        name, query = net
        reader = READERS[name]
        papers = reader.fetch(query, strict=strict, **hints)
        for p in papers:
            _bound(p, str(path))
        return papers
    text = open_text(path)
    name = format or detect_format(path, text)
    if name not in READERS:
        raise SourceError(str(path), None, f"unknown format {name!r}; known: {', '.join(READERS)}")
    reader = READERS[name]
    if getattr(reader, "STATES_VENUE_PER_ENTRY", False):
        hints = {k: v for k, v in hints.items() if k not in ("venue", "year")}
    try:
        papers = reader.read_text(text, str(path), strict=strict, **hints)
    except RecursionError as e:  # e.g. JSON nested thousands of levels deep
        raise SourceError(str(path), None, "nested too deeply to read") from e
    for p in papers:
        _bound(p, str(path))
    return papers


def _bound(p: Paper, path: str) -> None:
    """Bound ``p`` in place by :mod:`paperatlas.limits`, with a :class:`SourceWarning` for each change.

    An over-long title, abstract, digest or TL;DR is cut; an over-long given keyphrase is dropped; given keyphrases
    past :data:`paperatlas.limits.MAX_KEYPHRASES` are dropped.
    """
    src = p.sources[0] if p.sources else None
    where = "" if src is None else (f"record {src.record}" if src.record is not None else
                                    (src.line if src.line is not None else ""))
    loc = f"{path}:{where}" if where != "" else path
    for field, limit in (("title", MAX_TITLE_CHARS), ("abstract", MAX_ABSTRACT_CHARS),
                         ("digest", MAX_ABSTRACT_CHARS), ("tldr", MAX_TLDR_CHARS)):
        value = getattr(p, field)
        if len(value) > limit:
            warnings.warn(f"{loc}: {field} of {len(value):,} characters cut to {limit:,}", SourceWarning,
                          stacklevel=3)
            setattr(p, field, value[:limit].rstrip())
    given = p.given_keyphrases
    if any(len(k) > MAX_KEYPHRASE_CHARS for k in given):
        long = [k for k in given if len(k) > MAX_KEYPHRASE_CHARS]
        warnings.warn(f"{loc}: {len(long):,} keyphrase{'s' if len(long) > 1 else ''} longer than "
                      f"{MAX_KEYPHRASE_CHARS:,} characters dropped (the longest: {max(map(len, long)):,}); the "
                      f"limit is {MAX_KEYPHRASE_CHARS:,}", SourceWarning, stacklevel=3)
        given = [k for k in given if len(k) <= MAX_KEYPHRASE_CHARS]
    if len(given) > MAX_KEYPHRASES:
        warnings.warn(f"{loc}: {len(given):,} keyphrases given, the first {MAX_KEYPHRASES:,} kept; the limit is "
                      f"{MAX_KEYPHRASES:,}", SourceWarning, stacklevel=3)
        given = given[:MAX_KEYPHRASES]
    p.given_keyphrases = given
