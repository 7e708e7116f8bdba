"""The reader's own data: likes and dislikes, named lists, Markdown notes and read marks.

Everything lives in the atlas file, in tables a build never writes (``marks`` and ``list_items``, see
:data:`paperatlas.store.USER_TABLES`): a rebuild carries them over, and re-links a row to its paper when a
corrected title changed the paper's id. Each write is one transaction on the live file, so a reader's change made
while a build runs is kept too. :func:`export_json` / :func:`import_json` move all of it (and the TL;DR/keyphrase
overrides) to another atlas.

A paper is *on the reading list* when it is in at least one named list (default :data:`DEFAULT_LIST`), or liked,
or has a note, or is marked read.

Every value is checked against :mod:`paperatlas.limits` (a note of at most 100 kB, a list name of at most 200
characters, ...), whichever way it comes in: the web app, the command line or an imported export.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import store
from .limits import LimitExceeded, check_entry, check_list_name, check_note, check_override_row, check_rating

#: the list ``paperatlas list add`` uses when no ``--list`` is given
DEFAULT_LIST = "reading"
#: version of the JSON written by :func:`export_json`
EXPORT_VERSION = 1


@dataclass
class Entry:
    """One paper the reader did something with.

    Attributes:
        paper_id: The paper's id.
        title: The paper's title as it was when last touched.
        rating: +1 liked, -1 disliked, 0 neither.
        note: The reader's Markdown note (may be empty).
        read_at: When it was marked read (ISO time) or None.
        lists: The names of the lists it is on, sorted.
        updated_at: When its rating, note or read mark last changed (ISO time; empty when only on a list).
    """

    paper_id: str
    title: str
    rating: int = 0
    note: str = ""
    read_at: str | None = None
    lists: list[str] = field(default_factory=list)
    updated_at: str = ""


def rate(db: str | Path, paper_id: str, rating: int) -> None:
    """Like, dislike or clear the rating of a paper.

    Args:
        db: The atlas file.
        paper_id: The paper's id.
        rating: ``+1`` like, ``-1`` dislike, ``0`` clear.

    Raises:
        paperatlas.limits.LimitExceeded: ``rating`` is another value (a ValueError).
        LookupError: The atlas has no paper ``paper_id``.
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    store.set_mark(db, paper_id, rating=check_rating(rating, paper_id))



def set_note(db: str | Path, paper_id: str, text: str, append: bool = False) -> str:
    """Set, or add a paragraph to, the reader's Markdown note on a paper.

    Args:
        db: The atlas file.
        paper_id: The paper's id.
        text: The note (surrounding whitespace dropped); empty clears the note.
        append: Add ``text`` as a new paragraph after the stored note instead of replacing it.

    Returns:
        The note now stored.

    Raises:
        LookupError: The atlas has no paper ``paper_id``.
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
        paperatlas.limits.LimitExceeded: The note (after appending) is longer than
            :data:`paperatlas.limits.MAX_NOTE_BYTES` bytes of UTF-8 (a ValueError); nothing is written.
    """
    check_note(text, paper_id)

    def compose(old: str) -> str:
        if append and old:
            return check_note(f"{old.rstrip()}\n\n{text.strip()}".strip(), paper_id, appended=True)
        return text.strip()

    return store.update_note(db, paper_id, compose)


def mark_read(db: str | Path, paper_id: str, read: bool = True) -> None:
    """Mark a paper read now, or unread.

    Args:
        db: The atlas file.
        paper_id: The paper's id.
        read: True: read now; False: clear the read mark.

    Raises:
        LookupError: The atlas has no paper ``paper_id``.
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    store.set_mark(db, paper_id, read_at=store.timestamp() if read else None)


def add(db: str | Path, paper_id: str, list_name: str = DEFAULT_LIST) -> bool:
    """Put a paper on a named list.

    Args:
        db: The atlas file.
        paper_id: The paper's id.
        list_name: The list (whitespace collapsed); default :data:`DEFAULT_LIST`.

    Returns:
        True when it was added, False when it was on the list already.

    Raises:
        ValueError: The list name is empty.
        paperatlas.limits.LimitExceeded: The list name is longer than
            :data:`paperatlas.limits.MAX_LIST_NAME_CHARS` characters, or the paper is on
            :data:`paperatlas.limits.MAX_LISTS_PER_PAPER` lists already (a ValueError).
        LookupError: The atlas has no paper ``paper_id``.
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    list_name = check_list_name(list_name or "", paper_id)
    if not list_name:
        raise ValueError("the list name is empty")
    return store.add_to_list(db, paper_id, list_name)


def remove(db: str | Path, paper_id: str, list_name: str | None = DEFAULT_LIST) -> int:
    """Take a paper off a named list, or off every list; its note, rating and read mark stay.

    Args:
        db: The atlas file.
        paper_id: The paper's id.
        list_name: The list; None for every list.

    Returns:
        How many list entries were removed.

    Raises:
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    return store.remove_from_list(db, paper_id, list_name)


def _entries(marks: list[dict[str, Any]], items: list[dict[str, Any]]) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for r in marks:
        out[r["paper_id"]] = Entry(r["paper_id"], r["title"], r["rating"], r["note"], r["read_at"],
                                   updated_at=r["updated_at"])
    for r in items:
        out.setdefault(r["paper_id"], Entry(r["paper_id"], r["title"])).lists.append(r["list"])
    for e in out.values():
        e.lists.sort()
    return out


def entries(db: str | Path | store.Connection, list_name: str | None = None) -> list[Entry]:
    """The reader's entries: papers liked, disliked, noted, read or on a list.

    Args:
        db: The atlas file, or an open connection to it (read-only is fine).
        list_name: Keep only the papers of this list (None: all).

    Returns:
        The entries, most recently touched first (empty for an atlas made before the reading list).

    Raises:
        paperatlas.store.AtlasNotFound: ``db`` is a path with no file.
    """
    found = _entries(*store.read_user_rows(db))
    out = [e for e in found.values() if list_name is None or list_name in e.lists]
    return sorted(out, key=lambda e: (e.updated_at or "", e.paper_id), reverse=True)


def list_names(db: str | Path | store.Connection) -> dict[str, int]:
    """The reader's lists.

    Args:
        db: The atlas file, or an open connection to it.

    Returns:
        ``list name -> number of papers``, by name.
    """
    counts: dict[str, int] = {}
    for e in entries(db):
        for name in e.lists:
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def ratings(db: str | Path | store.Connection) -> tuple[list[str], list[str]]:
    """The papers the reader liked and disliked.

    Args:
        db: The atlas file, or an open connection to it.

    Returns:
        ``(liked paper ids, disliked paper ids)``, most recent first.
    """
    es = entries(db)
    return [e.paper_id for e in es if e.rating > 0], [e.paper_id for e in es if e.rating < 0]


def export_json(db: str | Path) -> dict:
    """Everything the reader wrote, as a JSON-serialisable dict.

    Titles are included so :func:`import_json` can find the papers in another atlas.

    Args:
        db: The atlas file.

    Returns:
        ``{"paperatlas_reading_list": 1, "entries": [{paper_id, title, rating, note, read_at, lists,
        updated_at}] (by paper id), "overrides": [{paper_id, field, value, title, edited_at}]}``.

    Raises:
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    marks, items, overrides = store.export_rows(db)
    found = _entries(marks, items)
    return {"paperatlas_reading_list": EXPORT_VERSION,
            "entries": [vars(e) for e in sorted(found.values(), key=lambda e: e.paper_id)], "overrides": overrides}


@dataclass
class ImportReport:
    """What :func:`import_json` did.

    Attributes:
        entries: The number of entries read and merged.
        overrides: The number of overrides written.
        not_found: The titles (sorted) that match no paper of the atlas (their data is kept).
        skipped: The entries and overrides over a limit of :mod:`paperatlas.limits`, not imported:
            ``FILE: entries[I]: what is over which limit`` each.
    """

    entries: int = 0
    overrides: int = 0
    not_found: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def import_json(db: str | Path, data: dict, source: str = "<json>", strict: bool = False) -> ImportReport:
    """Merge an :func:`export_json` dict into an atlas, in one transaction.

    Papers are found by id, else by title (exact normalised, then fuzzy, as rebuilds re-link); lists are united;
    a rating, note or read mark replaces the atlas's only when the imported one is newer; overrides are applied
    at once. Titles with no paper here are reported (and their data kept in the tables, re-linked if the paper
    appears in a later build). Malformed data (an entry without ``paper_id``) writes nothing. An entry or override
    with a value over a limit of :mod:`paperatlas.limits` (a 5 MB note, a rating of ``10**30``, 100,000
    keyphrases) is skipped and listed in :attr:`ImportReport.skipped`; ``strict``: nothing is imported.

    Args:
        db: The atlas file.
        data: The export (``{"paperatlas_reading_list": 1, "entries": [...], "overrides": [...]}``).
        source: Where ``data`` came from, for error messages.
        strict: Refuse the whole export when an entry or override is over a limit.

    Returns:
        The :class:`ImportReport`.

    Raises:
        ValueError: ``data`` is not an export, an entry or override is malformed, or (``strict``) one is over a
            limit (naming ``source``, the entry and the limit).
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    if not isinstance(data, dict) or data.get("paperatlas_reading_list") != EXPORT_VERSION:
        raise ValueError(f"{source}: not a paperatlas reading-list export (missing 'paperatlas_reading_list': 1)")
    rows, ovs, skipped = [], [], []
    for key, make, out, needs in (("entries", check_entry, rows, "paper_id, title"),
                                  ("overrides", check_override_row, ovs, "paper_id, field, value")):
        items = data.get(key) or []
        if not isinstance(items, list):
            raise ValueError(f"{source}: {key} is {type(items).__name__}, not a list")
        for i, item in enumerate(items):
            try:
                out.append(make(item))
            except LimitExceeded as err:
                if strict:
                    raise ValueError(f"{source}: {key}[{i}]: {err} (--strict: nothing imported)") from err
                skipped.append(f"{source}: {key}[{i}]: {err}")
            except (KeyError, TypeError, ValueError) as err:
                raise ValueError(f"{source}: {key}[{i}]: {err!r} (needs {needs})") from err
    now = store.timestamp()
    rows = [{**r, "updated_at": r["updated_at"] or now} for r in rows]
    not_found = store.import_rows(db, rows, ovs)
    return ImportReport(entries=len(rows), overrides=len(ovs), not_found=not_found, skipped=skipped)


@dataclass
class ReferenceImport:
    """What :func:`import_references` did.

    Attributes:
        matched: ``(reference location, paper id, title, how)`` per paper found, first mention only.
        ambiguous: ``(reference location, what it names, [(paper id, title, similarity), ...], why)``: several
            papers fit (``why`` empty), or the one paper with this title has other authors (``why`` says so); none
            added.
        missing: ``(reference location, what it names)`` of references naming no paper of the atlas (each title or
            identifier once).
        skipped: The malformed records skipped, ``FILE:LINE: what is wrong`` each.
        changed: Papers newly liked or newly put on the list.
    """

    matched: list[tuple[str, str, str, str]] = field(default_factory=list)
    ambiguous: list[tuple[str, str, list[tuple[str, str, float]], str]] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    changed: int = 0


def import_references(db: str | Path, path: str | Path, list_name: str | None = None,
                      strict: bool = False) -> ReferenceImport:
    """Like (or put on ``list_name``) every atlas paper a file names: a bibliography, links, a post.

    References are read and matched by :mod:`paperatlas.resolve` (identifiers first, then titles; ambiguous ones
    are reported, not added); all matched papers are written in one transaction, so a failure adds none. A
    malformed record of a bibliography is skipped and listed in :attr:`ReferenceImport.skipped` (``strict``:
    the import stops with nothing added).

    Args:
        db: The atlas file.
        path: The file: ``.bib``, CSL-JSON, RIS, CSV, any listing, a list of arXiv/OpenReview/DOI links, or any
            Markdown/text post that names papers.
        list_name: Put the papers on this list (whitespace collapsed) instead of liking them.
        strict: Stop at the first malformed record.

    Returns:
        The :class:`ReferenceImport`.

    Raises:
        paperatlas.model.SourceError: The file cannot be read, or (``strict``) a record is malformed; names the
            file and line.
        ValueError: ``list_name`` is given but empty.
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
    """
    import warnings

    from .resolve import references_in_file, resolve
    from .sources import RecordSkipped
    from .text import normalize_title

    if list_name is not None:
        list_name = " ".join(list_name.split())
        if not list_name:
            raise ValueError("the list name is empty")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecordSkipped)
        refs = references_in_file(path, strict=strict)
    for w in caught:  # others (a title cut to length...) are shown as usual
        if not issubclass(w.category, RecordSkipped):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    atlas = store.Atlas(db)
    rep = ReferenceImport(skipped=[str(w.message) for w in caught if issubclass(w.category, RecordSkipped)])
    found = resolve(atlas.papers, refs)
    seen = {r.paper_id for r in found if r.status == "matched"}
    named = {normalize_title(r.ref.label()) for r in found if r.status == "matched"}  # e.g. a contents entry
    added: set[str] = set()
    for r in found:
        if r.status == "matched":
            if r.paper_id not in added:
                added.add(r.paper_id)
                rep.matched.append((r.ref.where, r.paper_id, atlas.by_id[r.paper_id].title, r.how))
            continue
        key = normalize_title(label := r.ref.label())
        if key in named or (r.status == "missing" and not r.ref.explicit):
            continue
        named.add(key)
        if r.status == "ambiguous" and not seen.issuperset(i for i, _, _ in r.candidates):
            rep.ambiguous.append((r.ref.where, label, r.candidates, r.how))
        elif r.status == "missing":
            rep.missing.append((r.ref.where, label))
    rep.changed = store.like_or_list(db, [(pid, title) for _, pid, title, _ in rep.matched], list_name)
    return rep
