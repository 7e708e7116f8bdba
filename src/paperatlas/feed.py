"""The papers the last builds added as an Atom feed (RFC 4287): ``publish --format atom`` and ``/feed.atom``.

One module below both the publishers and the web app (siblings that may not import each other), above
:mod:`paperatlas.whatsnew`.

The entries are the papers of the last :data:`BUILDS` builds that added papers, newest build first, each build's
papers in the order of the reader's *What's new* ranking (:func:`paperatlas.whatsnew.whats_new`: ranked for the
reader's likes, else spread over the topics), at most :data:`MAX_ENTRIES`. A feed for one topic keeps the papers of
that topic (an id or part of a label, an area with its sub-topics: :func:`paperatlas.topics.resolve_topics`); a
feed for a search keeps the papers the search finds (:func:`paperatlas.search.engine.search_results`, its word
tiers: no query model is loaded).

Each entry's id is a ``tag:`` URI (RFC 4151) made from the paper's stable id alone, so a feed reader sees the same
entry across publishes and rebuilds; its ``updated`` is the time of the build that added the paper; its summary is
the TL;DR (the abstract's first 300 characters when the paper has none); its link the paper's main URL
(:func:`paperatlas.cite.links.paper_link`). Written with :mod:`xml.etree.ElementTree`; characters XML 1.0 forbids
are dropped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from urllib.parse import quote

from .cite.links import paper_link
from .model import Paper
from .store import Atlas

#: Builds (that added papers) whose papers the feed carries, newest first.
BUILDS = 3

#: Most entries in one feed.
MAX_ENTRIES = 100

#: The ``tag:`` URI authority and date of every id the feed writes (RFC 4151); never change it: readers key on it.
TAG = "tag:paperatlas.local,2026"

ATOM_NS = "http://www.w3.org/2005/Atom"

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

#: ``updated`` of a build recorded without a time (atlases built before builds were recorded).
_EPOCH = "1970-01-01T00:00:00Z"


def entry_id(paper_id: str) -> str:
    """The feed entry id of a paper: a ``tag:`` URI of its stable id, the same in every publish.

    Args:
        paper_id: :attr:`Paper.id <paperatlas.model.Paper.id>`.

    Returns:
        E.g. ``tag:paperatlas.local,2026:paper/openreview%3Aabc``.
    """
    return f"{TAG}:paper/{quote(paper_id, safe='')}"


def _clean(text: str) -> str:
    return _NOT_XML.sub("", text or "")


def _rfc3339(finished_at: str) -> str:
    """A build's local ISO time as RFC 3339 in UTC (``_EPOCH`` when unknown or unreadable)."""
    if not finished_at:
        return _EPOCH
    try:
        t = datetime.fromisoformat(finished_at)
    except ValueError:
        return _EPOCH
    t = t.astimezone() if t.tzinfo is None else t  # recorded as local time
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def feed_papers(atlas: Atlas, topic: str | None = None, query: str | None = None,
                builds: int = BUILDS, limit: int = MAX_ENTRIES) -> list[tuple[Paper, str]]:
    """The papers a feed carries, with the RFC 3339 time of the build that added each.

    Args:
        atlas: The atlas (its build history and the reader's likes).
        topic: Keep the papers of this topic: an id or part of a label (an area includes its sub-topics).
        query: Keep the papers this search finds (word tiers).
        builds: How many of the last builds that added papers to take, newest first.
        limit: Most papers returned.

    Returns:
        ``[(paper, updated)]``, newest build first, each build's papers in *What's new* order.

    Raises:
        ValueError: ``topic`` names no topic of the atlas.
    """
    from .topics import resolve_topics
    from .whatsnew import new_builds, whats_new

    keep: set[str] | None = None
    if topic is not None and topic.strip():
        tids = resolve_topics(atlas, [topic])
        if not tids & set(atlas.topics):
            raise ValueError(f"no topic {topic!r} in this atlas (give a topic id or part of its label)")
        keep = {p.id for p in atlas.papers if p.topic_id in tids}
    if query is not None and query.strip():
        from .search.engine import search_results

        found = {h.paper.id for h in search_results(atlas, query).hits}
        keep = found if keep is None else keep & found
    out: list[tuple[Paper, str]] = []
    for b in reversed(new_builds(atlas)[-builds:] if builds > 0 else []):
        when = _rfc3339(b.finished_at)
        for n in whats_new(atlas, build=b.id, limit=None).papers:
            if keep is None or n.paper.id in keep:
                out.append((n.paper, when))
                if len(out) >= limit:
                    return out
    return out


def render_feed(atlas: Atlas, title: str = "", topic: str | None = None, query: str | None = None,
                feed_url: str = "") -> str:
    """The Atom feed of :func:`feed_papers`.

    Args:
        atlas: The atlas.
        title: The feed's title; default "What's new" (with the topic or search).
        topic: As :func:`feed_papers`.
        query: As :func:`feed_papers`.
        feed_url: The feed's own URL for its ``rel="self"`` link (the web app); ``""`` for none.

    Returns:
        The feed document (UTF-8 XML text with its declaration).

    Raises:
        ValueError: ``topic`` names no topic of the atlas.
    """
    items = feed_papers(atlas, topic, query)
    named = topic.strip() if topic is not None else ""
    if named.isdigit() and int(named) in atlas.topics:  # its label, as the reader knows it, not "topic 9"
        named = atlas.topics[int(named)].label
    what = "".join(f" — {k} {v}" for k, v in (("topic", named), ("search", (query or "").strip())) if v)
    ET.register_namespace("", ATOM_NS)

    def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        el = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}", attrs)
        if text is not None:
            el.text = _clean(text)
        return el

    feed = ET.Element(f"{{{ATOM_NS}}}feed")
    selector = "&".join(f"{k}={quote(v.strip().lower(), safe='')}" for k, v in (("topic", topic), ("query", query))
                        if v and v.strip())
    sub(feed, "id", f"{TAG}:feed/{quote(atlas.path.stem, safe='')}" + (f"?{selector}" if selector else ""))
    sub(feed, "title", (title or "What’s new") + what)
    sub(feed, "updated", max((w for _, w in items), default=_EPOCH))
    sub(sub(feed, "author"), "name", "paperatlas")
    sub(feed, "generator", "paperatlas")
    if feed_url:
        sub(feed, "link", rel="self", type="application/atom+xml", href=_clean(feed_url))
    for p, when in items:
        e = sub(feed, "entry")
        sub(e, "id", entry_id(p.id))
        sub(e, "title", p.title or p.id)
        sub(e, "updated", when)
        url = paper_link(p)
        if url:
            sub(e, "link", rel="alternate", href=_clean(url))
        for name in p.authors:
            sub(sub(e, "author"), "name", name)
        label = atlas.topic_label(p.topic_id) if p.topic_id is not None else ""
        if label:
            sub(e, "category", term=_clean(label))
        summary = p.tldr or (p.abstract or "")[:300]
        if summary:
            sub(e, "summary", summary, type="text")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(feed, encoding="unicode") + "\n"


def render(atlas: Atlas, title: str = "", topic: str | None = None, query: str | None = None) -> str:
    """``publish --format atom``: :func:`render_feed` without a self link.

    Args:
        atlas: The atlas.
        title: The feed's title.
        topic: Only this topic's papers (``--topic``).
        query: Only the papers this search finds (``--query``).

    Returns:
        The feed document.

    Raises:
        ValueError: ``topic`` names no topic of the atlas.
    """
    return render_feed(atlas, title, topic, query)
