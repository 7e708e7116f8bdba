"""OpenReview venues (``openreview:ICLR.cc/2025/Conference``) via ``openreview-py``, and saved OpenReview notes JSON.

``paperatlas build openreview:VENUE_ID`` fetches the venue's submissions with their direct replies (reviews,
decision, meta-review) as a guest, no login for public venues: API v2 (``api2.openreview.net``,
``VENUE/-/Submission``) first, and API v1 (``api.openreview.net``, ``VENUE/-/Blind_Submission`` or
``/-/Submission``) for older venues that v2 does not serve, both with ``details=directReplies`` (the calls of the
OpenReview documentation, "How to Get All Reviews", https://docs.openreview.net/how-to-guides/
data-retrieval-and-modification/how-to-get-all-reviews). Accepted papers only unless ``--include-rejected``. The
notes are kept in a :class:`._common.FetchCache` so a rebuild reads them offline (``--refresh`` fetches again). A
file holding an API response body (``{"notes": [...]}``), a JSON array of notes, or such a cache file is read the
same way.

Field mapping: title, authors, abstract, keywords -> given keyphrases; the authors' TL;DR (``TLDR``, ``TL;DR``,
``one-sentence_summary``) -> :attr:`Paper.tldr` with ``tldr_method = "author"`` (kept by the build); the forum
(kind ``openreview``), PDF (kind ``paper``) and code (``code`` field) links; each review's rating and confidence
(the number before the colon of ``"8: accept, good paper"``) -> ``extra["ratings"]``/``extra["confidences"]``; the
decision -> ``extra["decision"]`` and status (``Accept (Oral)`` / ``notable-top-5%`` -> Oral, ``Accept
(Spotlight)`` / ``notable-top-25%`` -> Spotlight, ``Accept (Poster)`` -> Poster, other accepts -> Accepted,
``Reject`` -> Rejected, withdrawn -> Withdrawn; else from the ``venueid``/``venue`` fields, e.g. ``ICLR 2024
oral``); venue and year from the venue id (``ICLR.cc/2025/Conference`` -> ``ICLR 2025``; a venue id without a year,
such as ``TMLR``, takes the year of the note's publication date); the forum id -> ``extra["openreview_id"]``.
"""

from __future__ import annotations

import json
import re
import time

from ..model import AUTHOR_TLDR, Link, Paper, SourceError, SourceRef
from ..text import classify_link
from ._common import STATUS_WORDS, FetchCache, decision_status, offline, skip_record, venue_name

FORMAT = "openreview"
SCHEME = "openreview"
#: The library that fetches it, one example and the fields it fills (README table).
LIBRARY = "openreview-py 2.9 (network), json (saved notes)"
EXAMPLE = "paperatlas build openreview:ICLR.cc/2025/Conference"
FIELDS = "title, authors, abstract, keywords, authors' TL;DR, forum, PDF and code links, review ratings and " \
         "confidences, decision, status, venue, year"
TESTED_ON = "recorded OpenReview API v1 notes (a public crawler's output) replayed through openreview-py; the same " \
            "notes in API v2's content shape"

_SITE = "https://openreview.net"
_SERVICE = "OpenReview (api2.openreview.net, api.openreview.net)"
_TLDR_KEYS = ("TLDR", "TL;DR", "tldr", "one-sentence_summary")
_RATING_KEYS = ("rating", "recommendation", "overall_recommendation", "overall_assessment", "overall_rating")
_CODE_KEYS = ("code", "code_link", "code_url")
# Decision words -> status, in the order they are looked for (ICLR 2023 said "notable-top-5%" for orals).
_ACCEPTED = ("Oral", "Spotlight", "Poster", "Accepted")


def sniff(head: str) -> bool:
    """Whether a file holds OpenReview notes.

    Args:
        head: The start of the file's text (the first 20,000 characters).

    Returns:
        True for JSON whose start has a ``"notes"`` or ``"records"`` key (or is an array) with notes that have
        ``"forum"``, ``"invitation"`` (or ``"invitations"``) and ``"content"`` keys.
    """
    s = head.lstrip()
    return s[:1] in ("{", "[") and '"content"' in s and '"forum"' in s and '"invitation' in s and (
        s.startswith("[") or '"notes"' in s[:3000] or '"records"' in s[:3000])


def _value(content: dict, key: str):
    """A content field's value: API v2 wraps it as ``{"value": ...}``, v1 does not."""
    v = content.get(key)
    return v.get("value") if isinstance(v, dict) else v


def _text(content: dict, key: str) -> str:
    v = _value(content, key)
    return " ".join(v.split()) if isinstance(v, str) else ""


def _strings(content: dict, key: str) -> list[str]:
    v = _value(content, key)
    if isinstance(v, str):  # a few venues' keyword fields are one comma-separated string
        v = v.split(",")
    return [" ".join(str(x).split()) for x in v if str(x).strip()] if isinstance(v, list) else []


def _score(value) -> float | None:
    """``"8: accept, good paper"`` -> 8.0; ``6`` -> 6.0; None when there is no leading number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value == value and abs(value) != float("inf") else None
    m = re.match(r"\s*(-?\d+(?:\.\d+)?)", value if isinstance(value, str) else "")
    return float(m.group(1)) if m else None


def venue_of(venue_id: str) -> tuple[str, int | None]:
    """Venue name and year of an OpenReview venue id.

    Args:
        venue_id: E.g. ``"ICLR.cc/2025/Conference"``, ``"NIPS.cc/2018/Workshop/CDNNRIA"``.

    Returns:
        E.g. ``("ICLR 2025", 2025)``, ``("NeurIPS 2018 Workshop CDNNRIA", 2018)``; the id itself and None when it
        names no year (``"TMLR"``).
    """
    parts = [p for p in venue_id.split("/") if p]
    year = next((int(p) for p in parts if re.fullmatch(r"(?:19|20)\d\d", p)), None)
    if year is None:
        return venue_id, None
    acronym = venue_name(parts[0].split(".")[0])
    rest = [p for p in parts[2:] if p != "Conference"]
    return " ".join([acronym, str(year), *rest]), year


def _replies(note: dict) -> list[dict]:
    details = note.get("details") if isinstance(note.get("details"), dict) else {}
    out = details.get("directReplies") or details.get("replies") or []
    return [r for r in out if isinstance(r, dict)] if isinstance(out, list) else []


def _invitations(note: dict) -> list[str]:
    """The note's invitation ids (v2 ``invitations``, v1 ``invitation``)."""
    inv = note.get("invitations")
    if not isinstance(inv, list):
        inv = [note.get("invitation")]
    return [x for x in inv if isinstance(x, str) and x]


def _kind(reply: dict) -> str:
    """What a reply is, from the last part of its invitation ids: ``decision``, ``meta``, ``review`` or ``""``."""
    names = [i.rsplit("/-/", 1)[-1] for i in _invitations(reply)]
    if any(n.endswith("Decision") for n in names):
        return "decision"
    if any(n.endswith(("Meta_Review", "Metareview")) for n in names):
        return "meta"
    if any(n.endswith("Review") and "Ethic" not in n for n in names):
        return "review"
    return ""


def _status(decision: str, venue_text: str, venueid: str, venue_id: str) -> str:
    """The status (Oral/Spotlight/Poster/Accepted/Rejected/Withdrawn, or ``""``) of a submission."""
    d, v, where = decision.lower(), venue_text.lower(), venueid.lower()
    if any("withdraw" in x for x in (d, v, where)):
        return "Withdrawn"
    if any("reject" in x for x in (d, v, where)):
        return "Rejected"
    if decision:  # an acceptance's presentation; "" for ICLR 2018's "Invite to Workshop Track" (not accepted)
        return decision_status(decision)
    # v2 moves an accepted paper to the venue's own id and names its track: "ICLR 2024 oral"; submissions under
    # review are "Submitted to ICLR 2025" / "ICLR 2025 Conference Submission".
    if venueid and venueid == venue_id or re.search(r"\b(?:19|20)\d\d\b", v) and not re.search(r"submi", v):
        return next((status for word, status in STATUS_WORDS if word in v), "Accepted")
    return ""


def _venue_id_of(note: dict) -> str:
    """The venue id a note states: v2 ``domain``, else the prefix of its submission invitation."""
    if isinstance(note.get("domain"), str) and note["domain"]:
        return note["domain"]
    return next((x.split("/-/")[0] for x in _invitations(note) if "/-/" in x and "Submission" in x), "") or next(
        (x.split("/-/")[0] for x in _invitations(note) if "/-/" in x), "")


def _year_of(note: dict) -> int | None:
    """The year of a note's publication (``pdate``) or creation (``cdate``) date, in epoch milliseconds."""
    for key in ("pdate", "odate", "cdate"):
        ms = note.get(key)
        if isinstance(ms, int | float) and not isinstance(ms, bool) and 0 < ms < 4e12:
            return time.gmtime(ms / 1000).tm_year
    return None


def _paper(note, venue_id: str, path: str, i: int) -> tuple[Paper, bool]:
    """The paper of one submission note and whether it counts as accepted; SourceError when it is malformed."""
    where = f"record {i}"
    if not isinstance(note, dict) or not isinstance(note.get("content"), dict):
        raise SourceError(path, where, "not an OpenReview note (no content object)")
    c = note["content"]
    title = _text(c, "title")
    if not title:
        raise SourceError(path, where, f"note {str(note.get('id', '?'))!r} has no title")
    forum = next((str(note[k]) for k in ("forum", "id") if isinstance(note.get(k), str | int) and note[k]), "")
    vid = venue_id or _venue_id_of(note)
    venue, year = venue_of(vid) if vid else ("", None)
    ratings: list[float] = []
    confidences: list[float] = []
    decision = meta = ""
    for r in _replies(note):
        rc = r.get("content") if isinstance(r.get("content"), dict) else {}
        kind = _kind(r)
        if kind == "decision" or (not kind and "decision" in rc):
            decision = _text(rc, "decision") or decision
        elif kind == "meta":
            meta = _text(rc, "decision") or _text(rc, "recommendation") or meta
        elif kind == "review" or (not kind and "rating" in rc):
            rating = next((x for x in (_score(_value(rc, k)) for k in _RATING_KEYS) if x is not None), None)
            if rating is not None:
                ratings.append(rating)
            if (x := _score(_value(rc, "confidence"))) is not None:
                confidences.append(x)
    decision = decision or meta  # ICLR 2019 decided in the meta-review's recommendation
    status = _status(decision, _text(c, "venue"), _text(c, "venueid"), vid)
    links = [Link(url=f"{_SITE}/forum?id={forum}", kind="openreview", label="forum")] if forum else []
    pdf = _text(c, "pdf")
    if pdf:
        links.append(Link(url=pdf if pdf.startswith("http") else f"{_SITE}{pdf}", kind="paper", label="pdf"))
    for key in _CODE_KEYS:
        url = _text(c, key)
        if url.startswith("http"):
            links.append(Link(url=url, kind="code" if classify_link(url) == "code" else "other", label=key))
    extra: dict = {"openreview_id": forum} if forum else {}
    if ratings:
        extra["ratings"] = ratings
    if confidences:
        extra["confidences"] = confidences
    if decision:
        extra["decision"] = decision
    tldr = next((t for t in (_text(c, k) for k in _TLDR_KEYS) if t), "")
    abstract = _value(c, "abstract")
    paper = Paper(title=title, authors=_strings(c, "authors"),
                  abstract=abstract.strip() if isinstance(abstract, str) else "",
                  venue=venue, year=year or _year_of(note), status=status, links=links,
                  sources=[SourceRef(format=FORMAT, path=path, record=i, native_id=forum)],
                  given_keyphrases=_strings(c, "keywords"), extra=extra,
                  tldr=tldr, tldr_method=AUTHOR_TLDR if tldr else "")
    accepted = status in _ACCEPTED or (status == "" and not decision)  # undecided venues: every submission
    return paper, accepted


def papers_from_notes(notes: list, venue_id: str, path: str, strict: bool = False,
                      include_rejected: bool = False) -> list[Paper]:
    """Papers of OpenReview submission notes (with their replies under ``details``).

    Args:
        notes: Notes as the API returns them, v1 or v2, each with ``details.directReplies`` (or ``replies``).
        venue_id: The venue id (``""``: from each note's ``venueid`` field or invitation).
        path: The source named in provenance and errors.
        strict: Raise on a note without content or title instead of skipping it.
        include_rejected: Keep rejected, withdrawn and otherwise not accepted submissions too (default: accepted
            ones, and those of venues that have not decided yet).

    Returns:
        The papers, in note order.

    Raises:
        SourceError: When ``strict``, for a malformed note (``path:record N: what is wrong``).
    """
    out = []
    for i, note in enumerate(notes):
        try:
            paper, accepted = _paper(note, venue_id, path, i)
        except SourceError as e:
            skip_record(e, strict)
            continue
        if accepted or include_rejected:
            out.append(paper)
    return out


def _raw(note) -> dict:
    """A fetched Note as the API's JSON, with its replies (``Note.to_json()`` leaves ``details`` and ``domain`` out)."""
    out = note.to_json()
    for key in ("domain", "number", "details"):
        if getattr(note, key, None):
            out[key] = getattr(note, key)
    return out


def _not_found(err: Exception) -> bool:
    """Whether an OpenReview error says the invitation does not exist (the other API may hold the venue)."""
    info = err.args[0] if err.args else None
    return isinstance(info, dict) and "NotFound" in str(info.get("name", "")) or "not found" in str(info).lower()


def _download(venue_id: str) -> list[dict]:
    """All submission notes of a venue with their direct replies, API v2 first, then v1.

    Raises:
        openreview.OpenReviewException, requests.RequestException: As the client raises them.
    """
    import openreview

    v2 = openreview.api.OpenReviewClient(baseurl="https://api2.openreview.net")
    try:
        notes = v2.get_all_notes(invitation=f"{venue_id}/-/Submission", details="directReplies")
    except openreview.OpenReviewException as e:
        if not _not_found(e):
            raise
        notes = []
    if notes:
        return [_raw(n) for n in notes]
    v1 = openreview.Client(baseurl="https://api.openreview.net")
    for name in ("Blind_Submission", "Submission"):
        try:
            notes = v1.get_all_notes(invitation=f"{venue_id}/-/{name}", details="directReplies")
        except openreview.OpenReviewException as e:
            if not _not_found(e):
                raise
            notes = []
        if notes:
            return [_raw(n) for n in notes]
    return []


def fetch(query: str, strict: bool = False, cache_dir=None, refresh: bool = False, include_rejected: bool = False,
          **_options) -> list[Paper]:
    """Papers of an OpenReview venue (``paperatlas build openreview:VENUE_ID``).

    Every submission is fetched and cached; ``include_rejected`` only filters, so the cache key is the venue alone
    and switching ``--include-rejected`` on or off needs no new fetch.

    Args:
        query: The venue id, e.g. ``ICLR.cc/2025/Conference``.
        strict: Raise on a malformed note instead of skipping it.
        cache_dir: The cache directory (default :func:`._common.cache_root`).
        refresh: Fetch again even when the venue is cached.
        include_rejected: Also rejected and withdrawn submissions.
        **_options: Other build options, ignored.

    Returns:
        The papers.

    Raises:
        SourceError: openreview-py is missing; OpenReview cannot be reached (or answers with an error) and the venue
            is not cached (or ``refresh``); OpenReview has no submissions under this venue id.
    """
    venue_id = query.strip().strip("/")
    label = f"openreview:{venue_id}"
    cache = FetchCache(label, cache_dir)
    cached = None if refresh else cache.load()
    if cached is not None:
        notes = cached[0]
    else:
        if offline():
            raise cache.unreachable(_SERVICE, RuntimeError("offline (PAPERATLAS_OFFLINE is set)"), refresh)
        try:
            import openreview
            import requests
        except ImportError as e:
            raise SourceError(label, None, "the OpenReview reader needs openreview-py: "
                                           "pip install 'paperatlas[openreview]'") from e
        try:
            notes = _download(venue_id)
        except (openreview.OpenReviewException, requests.RequestException, OSError, ValueError, KeyError) as e:
            raise cache.unreachable(_SERVICE, e, refresh) from e
        if not notes:
            raise SourceError(label, None, "OpenReview has no submissions under this venue id (it is the id in the "
                                           "venue page's address, e.g. ICLR.cc/2025/Conference)")
        cache.save(notes)
    return papers_from_notes(notes, venue_id, label, strict, include_rejected)


def read_text(text: str, path: str, strict: bool = False, include_rejected: bool = False, venue: str | None = None,
              year: int | None = None, **_hints) -> list[Paper]:
    """Read saved OpenReview notes: an API response body, a JSON array of notes, or a fetch-cache file.

    Args:
        text: The file's whole text.
        path: The file (provenance, errors).
        strict: Raise on a malformed note instead of skipping it.
        include_rejected: Also rejected and withdrawn submissions.
        venue: The venue for notes whose invitation names none.
        year: The year for notes that state none.
        **_hints: Ignored.

    Returns:
        The papers (venue from the cache file's source, else each note's ``venueid`` or invitation).

    Raises:
        SourceError: The file is not JSON or holds no list of notes (file and line).
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SourceError(path, e.lineno, f"invalid JSON: {e.msg} (column {e.colno})") from e
    except ValueError as e:  # e.g. a number too long to convert
        raise SourceError(path, None, f"invalid JSON: {e}") from e
    notes = data.get("notes", data.get("records")) if isinstance(data, dict) else data
    if not isinstance(notes, list):
        raise SourceError(path, None, "expected OpenReview notes: {\"notes\": [...]} or a JSON array of notes")
    venue_id = ""
    if isinstance(data, dict) and str(data.get("source", "")).startswith("openreview:"):
        venue_id = str(data["source"]).split(":", 1)[1].split("|")[0]
    papers = papers_from_notes(notes, venue_id, path, strict, include_rejected)
    for p in papers:
        p.venue = p.venue or (venue or "")
        p.year = p.year or year
    return papers
