"""The one set of limits on what goes into an atlas, checked alike on every way in.

The web forms, ``paperatlas edit``, ``paperatlas list add/note``, ``paperatlas list import`` of an export file, the
store's write functions (a last guard) and the listing readers (at ingest, :func:`paperatlas.sources.read`) all
check these, so a value refused by one is refused by all, with the same one-line message naming the field and the
limit, e.g. ``note of paper 1a2b3c4d5e is longer than 100 kB (5,000,000 bytes of UTF-8); the limit is 100,000
bytes``.

The limits are far above anything real (measured on ``../shared``), so a reader never meets them:

=================================  ==================  ==============================================================
field                              limit               real data
=================================  ==================  ==============================================================
note (Markdown)                    100,000 bytes UTF-8 a page of notes is ~5 kB
list name                          200 characters      list names are a few words
lists one paper is on              100                 a handful
TL;DR                              1,000 characters    longest of SciTLDR's 3,445 gold TL;DRs: 668 (99 %: ≤ 256)
keyphrases of one paper            50                  paperlists: at most 16 (COLM 2025); awesome list: 6
one keyphrase                      100 characters      paperlists: at most 69; awesome list: 59
rating                             -1, 0 or 1          like / neither / dislike
time stamp (read, updated, edited) ISO 8601, ≤ 40 ch.  ``2021-05-03T10:00:00`` (19 characters)
title                              1,000 characters    (cut at ingest, as before)
abstract, digest                   20,000 characters   the longest abstract in the seeds is under 5,000
paper id (in an export)            100 characters      10 hex digits
JSON nesting of an export file     20 levels           an export nests 4 levels deep
question (``ask``, ``/api/ask``)   1,000 characters    a question is a search query: a few sentences at most
=================================  ==================  ==============================================================

Each ``check_*`` function returns the value (normalised where it says so) or raises :class:`LimitExceeded`, a
:class:`ValueError`, whose message is the one line to show.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

#: Longest reader's note, in bytes of UTF-8 (100 kB).
MAX_NOTE_BYTES = 100_000
#: Longest list name, in characters (whitespace collapsed).
MAX_LIST_NAME_CHARS = 200
#: Most lists one paper can be on.
MAX_LISTS_PER_PAPER = 100
#: Longest TL;DR, in characters (the longest real one, in SciTLDR, has 668).
MAX_TLDR_CHARS = 1_000
#: Most keyphrases of one paper (a reader's edit, an import, or a listing's given keyphrases).
MAX_KEYPHRASES = 50
#: Longest keyphrase, in characters (whitespace collapsed).
MAX_KEYPHRASE_CHARS = 100
#: The ratings a reader can give: dislike, neither, like.
RATINGS = (-1, 0, 1)
#: Longest time stamp (ISO 8601) of a read mark, an update or an edit.
MAX_TIMESTAMP_CHARS = 40
#: Titles are cut to this many characters at ingest; an imported entry with a longer title is refused.
MAX_TITLE_CHARS = 1_000
#: Abstracts (and awesome-list digests) are cut to this many characters at ingest (the longest real abstract in
#: the seeds is under 5,000).
MAX_ABSTRACT_CHARS = 20_000
#: Longest paper id in an export file (ids are 10 hex digits).
MAX_ID_CHARS = 100
#: Deepest nesting of arrays and objects in an export file.
MAX_JSON_DEPTH = 20
#: Longest question to ``paperatlas ask`` and the web's ``/api/ask``, in characters, once stripped (a question is a
#: search query of a few sentences at most).
MAX_QUESTION_CHARS = 1_000


class LimitExceeded(ValueError):
    """A value is over one of the limits (or not of the field's type); the message is one line naming both.

    Args:
        message: The line to show, e.g. ``"TL;DR of paper X is 5,000 characters; the limit is 1,000"``.
        field: The field, e.g. ``"TL;DR"``.
        limit: The limit as the message states it.

    Attributes:
        field: As given.
        limit: As given.
    """

    def __init__(self, message: str, field: str, limit: object):
        super().__init__(message)
        self.field = field
        self.limit = limit


class QuestionTooLong(LimitExceeded):
    """A question longer than :data:`MAX_QUESTION_CHARS` characters (a :class:`LimitExceeded`, so a ValueError).

    Args:
        n: The question's length in characters (stripped).

    Attributes:
        n: As given.
    """

    def __init__(self, n: int):
        super().__init__(f"the question is longer than {MAX_QUESTION_CHARS:,} characters ({n:,}); ask it in fewer "
                         f"words", "question", MAX_QUESTION_CHARS)
        self.n = n


def check_question(question: str) -> str:
    """The question, stripped, when it is at most :data:`MAX_QUESTION_CHARS` characters long.

    The one check of ``paperatlas ask`` and the web's ``/api/ask`` (which answers it with a 400/422 and the
    message).

    Args:
        question: The question as typed (may be empty: the caller says whether that is allowed).

    Returns:
        ``question.strip()``.

    Raises:
        QuestionTooLong: It is longer.
        LimitExceeded: It is not a text.
    """
    if not isinstance(question, str):
        raise LimitExceeded(f"the question is {_short(question)}, not a text", "question", MAX_QUESTION_CHARS)
    q = question.strip()
    if len(q) > MAX_QUESTION_CHARS:
        raise QuestionTooLong(len(q))
    return q


def _subject(field: str, paper: str | None) -> str:
    return f"{field} of paper {paper}" if paper else f"the {field}"


def _short(value: Any, n: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= n else text[:n - 3] + "..."


def check_note(note: str, paper: str | None = None, appended: bool = False) -> str:
    """Refuse a note longer than :data:`MAX_NOTE_BYTES` bytes of UTF-8.

    Args:
        note: The note.
        paper: The paper's id, for the message.
        appended: The note is the stored one with a paragraph appended (the message says so).

    Returns:
        ``note``.

    Raises:
        LimitExceeded: The note is not a text, or is too long.
    """
    if not isinstance(note, str):
        raise LimitExceeded(f"{_subject('note', paper)} is {_short(note)}, not a text", "note", MAX_NOTE_BYTES)
    n = len(note.encode("utf-8", "surrogatepass")) if len(note) * 4 > MAX_NOTE_BYTES else len(note)
    if n > MAX_NOTE_BYTES:
        what = " with the paragraph appended" if appended else ""
        raise LimitExceeded(f"{_subject('note', paper)} is longer than {MAX_NOTE_BYTES // 1000} kB{what} ({n:,} bytes "
                            f"of UTF-8); the limit is {MAX_NOTE_BYTES:,} bytes", "note", MAX_NOTE_BYTES)
    return note


def check_list_name(name: str, paper: str | None = None) -> str:
    """Refuse a list name longer than :data:`MAX_LIST_NAME_CHARS` characters.

    Args:
        name: The list's name (whitespace is collapsed first).
        paper: The paper's id, for the message.

    Returns:
        The name, whitespace collapsed (may be empty: the caller says whether that is allowed).

    Raises:
        LimitExceeded: The name is not a text, or is too long.
    """
    if not isinstance(name, str):
        raise LimitExceeded(f"a list name of paper {paper} is {_short(name)}, not a text" if paper else
                            f"the list name is {_short(name)}, not a text", "list name", MAX_LIST_NAME_CHARS)
    name = " ".join(name.split())
    if len(name) > MAX_LIST_NAME_CHARS:
        subject = f"a list name of paper {paper}" if paper else "the list name"
        raise LimitExceeded(f"{subject} is longer than {MAX_LIST_NAME_CHARS:,} characters ({len(name):,}); the limit "
                            f"is {MAX_LIST_NAME_CHARS:,}", "list name", MAX_LIST_NAME_CHARS)
    return name


def check_list_count(n: int, paper: str | None = None) -> int:
    """Refuse a paper on more than :data:`MAX_LISTS_PER_PAPER` lists.

    Args:
        n: The number of lists the paper would be on.
        paper: The paper's id, for the message.

    Returns:
        ``n``.

    Raises:
        LimitExceeded: ``n`` is over the limit.
    """
    return _check_count(n, MAX_LISTS_PER_PAPER, "lists", "would be on", paper)


def _check_count(n: int, limit: int, what: str, verb: str, paper: str | None) -> int:
    """``n``, or :class:`LimitExceeded` (``paper X <verb> more than <limit> <what> (n); the limit is <limit>``)."""
    if n > limit:
        raise LimitExceeded(f"{'paper ' + paper if paper else 'the paper'} {verb} more than {limit:,} {what} "
                            f"({n:,}); the limit is {limit:,}", what, limit)
    return n


def check_tldr(tldr: str, paper: str | None = None) -> str:
    """Refuse a TL;DR longer than :data:`MAX_TLDR_CHARS` characters.

    Args:
        tldr: The TL;DR (counted as given).
        paper: The paper's id, for the message.

    Returns:
        ``tldr``.

    Raises:
        LimitExceeded: The TL;DR is not a text, or is too long.
    """
    return check_text(tldr, "TL;DR", MAX_TLDR_CHARS, paper)


def check_keyphrase(keyphrase: str, paper: str | None = None) -> str:
    """Refuse a keyphrase longer than :data:`MAX_KEYPHRASE_CHARS` characters.

    Args:
        keyphrase: One keyphrase.
        paper: The paper's id, for the message.

    Returns:
        ``keyphrase``.

    Raises:
        LimitExceeded: The keyphrase is not a text, or is too long.
    """
    of = f" of paper {paper}" if paper else ""
    if not isinstance(keyphrase, str):
        raise LimitExceeded(f"a keyphrase{of} is {_short(keyphrase)}, not a text", "keyphrase", MAX_KEYPHRASE_CHARS)
    if len(keyphrase) > MAX_KEYPHRASE_CHARS:
        raise LimitExceeded(f"a keyphrase{of} is longer than {MAX_KEYPHRASE_CHARS:,} characters ({len(keyphrase):,}: "
                            f"{keyphrase[:30]!r}...); the limit is {MAX_KEYPHRASE_CHARS:,}", "keyphrase",
                            MAX_KEYPHRASE_CHARS)
    return keyphrase


def check_keyphrase_count(n: int, paper: str | None = None) -> int:
    """Refuse more than :data:`MAX_KEYPHRASES` keyphrases for one paper.

    Args:
        n: How many keyphrases (distinct, when the caller drops repeats).
        paper: The paper's id, for the message.

    Returns:
        ``n``.

    Raises:
        LimitExceeded: ``n`` is over the limit.
    """
    return _check_count(n, MAX_KEYPHRASES, "keyphrases", "is given", paper)


def check_keyphrases(keyphrases: list[str], paper: str | None = None) -> list[str]:
    """Refuse more than :data:`MAX_KEYPHRASES` keyphrases, or one longer than :data:`MAX_KEYPHRASE_CHARS`.

    Args:
        keyphrases: The keyphrases.
        paper: The paper's id, for the message.

    Returns:
        ``keyphrases``.

    Raises:
        LimitExceeded: Not a list of texts, too many, or one too long.
    """
    if not isinstance(keyphrases, list):
        raise LimitExceeded(f"{_subject('keyphrases', paper)} are {_short(keyphrases)}, not a list of texts",
                            "keyphrases", MAX_KEYPHRASES)
    check_keyphrase_count(len(keyphrases), paper)
    for k in keyphrases:
        check_keyphrase(k, paper)
    return keyphrases


def check_rating(rating: Any, paper: str | None = None) -> int:
    """Refuse a rating that is not one of :data:`RATINGS` (a huge, fractional, infinite or non-number value).

    Args:
        rating: The rating as given (an int; ``True``/``False`` and floats are refused).
        paper: The paper's id, for the message.

    Returns:
        The rating.

    Raises:
        LimitExceeded: ``rating`` is not -1, 0 or 1.
    """
    if isinstance(rating, bool) or not isinstance(rating, int) or rating not in RATINGS:
        raise LimitExceeded(f"{_subject('rating', paper)} is {_short(rating)}; the limit is -1, 0 or 1",
                            "rating", RATINGS)
    return rating


def check_timestamp(value: Any, field: str, paper: str | None = None, optional: bool = True) -> str | None:
    """Refuse a time stamp that is not an ISO 8601 date or time of at most :data:`MAX_TIMESTAMP_CHARS` characters.

    Args:
        value: The time stamp, e.g. ``"2021-05-03T10:00:00"``.
        field: Its name for the message, e.g. ``"read_at"``.
        paper: The paper's id, for the message.
        optional: None and ``""`` are allowed (returned as given).

    Returns:
        ``value``.

    Raises:
        LimitExceeded: ``value`` is not such a time stamp.
    """
    if optional and value in (None, ""):
        return value
    if isinstance(value, str) and len(value) <= MAX_TIMESTAMP_CHARS:
        try:
            datetime.fromisoformat(value)
            return value
        except ValueError:
            pass
    raise LimitExceeded(f"{_subject(field, paper)} is {_short(value)}; the limit is an ISO 8601 time of at most "
                        f"{MAX_TIMESTAMP_CHARS} characters, e.g. '2021-05-03T10:00:00'", field, MAX_TIMESTAMP_CHARS)


def check_text(value: Any, field: str, limit: int, paper: str | None = None) -> str:
    """Refuse a text field (a title, an id) longer than ``limit`` characters.

    Args:
        value: The text.
        field: Its name for the message, e.g. ``"title"``.
        limit: The most characters.
        paper: The paper's id, for the message.

    Returns:
        ``value``.

    Raises:
        LimitExceeded: ``value`` is not a text, or is too long.
    """
    if not isinstance(value, str):
        raise LimitExceeded(f"{_subject(field, paper)} is {_short(value)}, not a text", field, limit)
    if len(value) > limit:
        raise LimitExceeded(f"{_subject(field, paper)} is longer than {limit:,} characters ({len(value):,}); the limit "
                            f"is {limit:,}", field, limit)
    return value


#: The fields a reader may override, and the check of each value.
OVERRIDE_CHECKS = {"tldr": check_tldr, "keyphrases": check_keyphrases}


def check_override(field: str, value: Any, paper: str | None = None) -> Any:
    """Refuse an override (``tldr``: a text, ``keyphrases``: a list of texts) over its limits.

    Args:
        field: ``"tldr"`` or ``"keyphrases"``.
        value: The value.
        paper: The paper's id, for the message.

    Returns:
        ``value``.

    Raises:
        LimitExceeded: Another field, a value of another type, or over a limit.
    """
    check = OVERRIDE_CHECKS.get(field)
    if check is None:
        raise LimitExceeded(f"{_subject('override', paper)} is of field {_short(field)}; the fields are "
                            f"{', '.join(OVERRIDE_CHECKS)}", "override field", tuple(OVERRIDE_CHECKS))
    return check(value, paper)


def check_mark(values: dict[str, Any], paper: str | None = None) -> dict[str, Any]:
    """Refuse a reader's mark over its limits: its ``rating``, ``note`` and ``read_at``, where given.

    Args:
        values: Some of ``rating``, ``note``, ``read_at`` (other keys are ignored).
        paper: The paper's id, for the message.

    Returns:
        ``values``.

    Raises:
        LimitExceeded: A value is over its limit (or not of its type).
    """
    if "rating" in values:
        check_rating(values["rating"], paper)
    if "note" in values:
        check_note(values["note"], paper)
    if "read_at" in values:
        check_timestamp(values["read_at"], "read_at", paper)
    return values


def check_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """Check one entry of a reading-list export (a paper's marks and lists) against the limits.

    Args:
        entry: ``{"paper_id", "title", "rating", "note", "read_at", "lists", "updated_at"}``; all but the first
            two may be missing or empty.

    Returns:
        The entry with every key: ``paper_id`` and ``title`` as texts, ``rating`` (0 when missing), ``note``
        (``""``), ``read_at`` (None), ``lists`` (names whitespace-collapsed, blanks and repeats dropped) and
        ``updated_at`` (``""`` when missing: the caller puts the time of the import).

    Raises:
        KeyError: It has no ``paper_id`` or ``title``.
        TypeError: It is not an object.
        LimitExceeded: A value is over its limit (or not of its type).
    """
    pid = check_text(str(entry["paper_id"]), "id", MAX_ID_CHARS)
    title = check_text(str(entry["title"]), "title", MAX_TITLE_CHARS, pid)
    lists = entry.get("lists") or []
    if not isinstance(lists, list):
        raise LimitExceeded(f"lists of paper {pid} are {_short(lists)}, not a list of names", "lists", None)
    check_list_count(len(lists), pid)
    mark = check_mark({"rating": entry.get("rating") or 0, "note": entry.get("note") or "",
                       "read_at": entry.get("read_at")}, pid)
    return {"paper_id": pid, "title": title, **mark,
            "lists": list(dict.fromkeys(n for n in (check_list_name(x, pid) for x in lists) if n)),
            "updated_at": check_timestamp(entry.get("updated_at") or "", "updated_at", pid)}


def check_override_row(row: dict[str, Any]) -> dict[str, Any]:
    """Check one override of a reading-list export against the limits (:func:`check_override`).

    Args:
        row: ``{"paper_id", "field", "value", "title", "edited_at"}``; the last two may be missing.

    Returns:
        The row with every key (``title`` and ``edited_at`` ``""`` when missing).

    Raises:
        KeyError: It has no ``paper_id``, ``field`` or ``value``.
        TypeError: It is not an object.
        LimitExceeded: The field is not editable, or its value is over its limits.
    """
    pid = check_text(str(row["paper_id"]), "id", MAX_ID_CHARS)
    fld = str(row["field"])
    return {"paper_id": pid, "field": fld, "value": check_override(fld, row["value"], pid),
            "title": check_text(str(row.get("title") or ""), "title", MAX_TITLE_CHARS, pid),
            "edited_at": check_timestamp(str(row.get("edited_at") or ""), "edited_at", pid)}


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def json_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep the arrays and objects of a JSON text nest, counted before decoding (no recursion).

    Brackets inside strings do not count. The one depth count of every JSON read: an import file
    (:func:`loads_json`) and a stored column (:func:`paperatlas.store.cells.decode_json`).

    Args:
        text: JSON text (need not be valid).
        limit: Stop counting above this depth.

    Returns:
        The greatest nesting depth (``1`` for ``[]``), or ``limit + 1`` when it is deeper than ``limit``.
    """
    depth = deepest = 0
    for m in _JSON_BRACKET.finditer(_JSON_STRING.sub("", text)):
        if m.group() in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def loads_json(text: str, source: str = "<json>") -> Any:
    """Decode a JSON document, refusing one nested deeper than :data:`MAX_JSON_DEPTH` (never a RecursionError).

    ``NaN`` and ``Infinity`` (not JSON) are refused too.

    Args:
        text: The document.
        source: Where it came from, for the message.

    Returns:
        The decoded value.

    Raises:
        LimitExceeded: It nests deeper than :data:`MAX_JSON_DEPTH` levels.
        ValueError: It is not JSON (``json.JSONDecodeError``, or a number with too many digits).
    """
    if json_depth(text) > MAX_JSON_DEPTH:
        raise LimitExceeded(f"{source}: JSON nested more than {MAX_JSON_DEPTH} levels deep; the limit is "
                            f"{MAX_JSON_DEPTH}", "JSON nesting", MAX_JSON_DEPTH)
    return json.loads(text, parse_constant=_no_constant)
