"""What every route module of the web app shares: the atlas, the query model, cached facets, argument parsing."""

from __future__ import annotations

import contextlib
import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field

from flask import abort, request, url_for

from ..facets import PaperFacets, facets_of
from ..model import Paper
from ..store import Atlas
from .facet_table import FacetTable

#: Largest ``k`` (number of results) a request may ask for.
MAX_K = 500
#: Results per page on the search, all-papers, author and topic lists.
PAGE_SIZE = 50
#: The atlas's derived values (:meth:`paperatlas.store.Atlas.derived`) that depend on the topics' labels or on the
#: topic each paper is filed under: dropped when the reader renames a topic or moves a paper
#: (:meth:`WebContext.topics_changed`), then made again when next asked for.
TOPIC_DERIVED = ("papers by topic", "papers sorted by topic", "positions by topic", "topic centroids",
                 "excluded rows", "recommender", "trends.venues.area")


@dataclass
class WebContext:
    """The state the routes share (one per app).

    Attributes:
        atlas: the atlas, opened read-only and loaded into memory once.
        state: ``{"embedder": query embedder or None, "error": why it failed, "facet_table": the atlas's
            :class:`~paperatlas.web.facet_table.FacetTable` once made}``, filled by a background thread.
        facet_cache: ``paper id -> PaperFacets``, computed once per paper (not kept for a lazy atlas).
        on_topics_changed: called (no arguments) after the reader renamed a topic or moved a paper, by
            :meth:`topics_changed`: the route modules' own caches of topic labels and members.
    """

    atlas: Atlas
    state: dict = field(default_factory=lambda: {"embedder": None})
    facet_cache: dict[str, PaperFacets] = field(default_factory=dict)
    on_topics_changed: list[Callable[[], None]] = field(default_factory=list)

    def topics_changed(self) -> None:
        """Forget what was computed from the topics' labels and members (after a rename or a move).

        Drops the :data:`TOPIC_DERIVED` values of the atlas (each once no request is computing it) and calls
        :attr:`on_topics_changed`. The in-memory topics and papers must already show the edit.
        """
        atlas = self.atlas
        # Atlas has no public way to drop a derived value (it assumes a read-only atlas): its own lock and dict
        with atlas._derived_guard:
            locks = {name: atlas._derived_locks.get(name) for name in TOPIC_DERIVED}
        for name, lock in locks.items():
            with lock if lock is not None else contextlib.nullcontext(), atlas._derived_guard:
                atlas._derived.pop(name, None)
        for forget in self.on_topics_changed:
            forget()

    def facets_for(self, p: Paper) -> PaperFacets:
        """The paper's facets (:func:`paperatlas.facets.facets_of`), cached.

        Their inputs never change while the app runs.

        Args:
            p: the paper.

        Returns:
            Its facets.
        """
        f = self.facet_cache.get(p.id)
        if f is None:
            f = facets_of(p)
            if not self.atlas.lazy:  # a large atlas's papers are read on demand: their facets are not all kept
                self.facet_cache[p.id] = f
        return f

    def make_facet_table(self, pause: Callable[[], None] | None = None) -> FacetTable:
        """Make the facet table of every paper (``state["facet_table"]``), from which searches count facets.

        ~1 µs a paper once :meth:`facets_for` has cached the paper's facets (the app's warm-up does both).

        Args:
            pause: called every few thousand papers (a warm-up waits there while requests are answered).

        Returns:
            The table, rows in ``atlas.papers`` order.
        """
        years = array("d")  # NaN: no year

        def each():  # one pass over the papers (a large atlas reads them from the file)
            for p in self.atlas.papers:
                years.append(float("nan") if p.year is None else p.year)
                yield self.facets_for(p)

        table = FacetTable(each(), years, pause)
        self.state["facet_table"] = table
        return table

    def embed_query(self) -> Callable[[str], object] | None:
        """``query -> (384,) float32`` when the query model is loaded, else None (searches use words only)."""
        model = self.state.get("embedder")
        return (lambda q: model.encode([q])[0]) if model is not None else None

    @staticmethod
    def number_arg(name: str) -> float | None:
        """A number query parameter (e.g. ``6`` or ``6.5``), or None when absent; 400 when it is not one."""
        raw = request.args.get(name, "").strip()
        if not raw:
            return None
        if not re.fullmatch(r"[+-]?(?:\d{1,12}(?:\.\d{0,6})?|\.\d{1,6})", raw):
            abort(400, f"{name} must be a number")
        return float(raw)

    @staticmethod
    def int_arg(name: str, default: int | None, lo: int = 1, hi: int = MAX_K) -> int | None:
        """An integer query parameter clamped to ``[lo, hi]``; 400 when it is not an integer."""
        raw = request.args.get(name, "").strip()
        if not raw:
            return default
        if not re.fullmatch(r"[+-]?\d{1,12}", raw):
            abort(400, f"{name} must be an integer")
        return min(max(int(raw), lo), hi)

    @staticmethod
    def url_with(endpoint: str = "index", **changes: str | list[str] | None) -> str:
        """The URL of ``endpoint`` with the current query parameters and ``changes`` (None or "" removes one).

        Args:
            endpoint: the Flask endpoint (its view arguments come from the current request).
            **changes: parameters to set (a list sets a repeated parameter).

        Returns:
            The URL with its query string.
        """
        from urllib.parse import urlencode

        pairs = [(k, v) for k, v in request.args.items(multi=True) if k not in changes and v.strip()]
        for k, v in changes.items():
            pairs += [(k, x) for x in ([v] if isinstance(v, str) else v or []) if x]
        base = url_for(endpoint, **(request.view_args or {})) if endpoint == request.endpoint else url_for(endpoint)
        return base + ("?" + urlencode(pairs) if pairs else "")


def pages(total: int, page: int, size: int, href: Callable[[int], str]) -> list[dict]:
    """The page links of a list of ``total`` items: first, last, and two around the current page, with gaps.

    Args:
        total: number of items.
        page: the current page (1-based).
        size: items per page.
        href: ``page number -> URL``.

    Returns:
        ``[{"n": page or None for a gap, "href", "on"}]``; empty when everything fits on one page.
    """
    last = max(1, -(-total // size))
    if last == 1:
        return []
    shown = sorted({1, last, *range(max(1, page - 2), min(last, page + 2) + 1)})
    out: list[dict] = []
    for i, n in enumerate(shown):
        if i and n - shown[i - 1] > 1:
            out.append({"n": None, "href": "", "on": False})
        out.append({"n": n, "href": href(n), "on": n == page})
    return out
