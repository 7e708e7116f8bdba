"""Flask application factory for ``paperatlas serve``.

The routes live in one module per kind of page, each with a ``register(app, ctx, ...)``: :mod:`.search_views`
(``/``, ``/api/search``), :mod:`.ask_views` (``/ask``, ``/api/ask``), :mod:`.browse_views` (``/papers``,
``/author/<key>``), :mod:`.paper_views` (paper, topic and map pages), :mod:`.trends_views` (``/trends``),
:mod:`.reader_views` (actions, reading list, *For you*), :mod:`.topic_edit_views` (a topic's rename, a paper's
move), :mod:`.schedule_views` (the conference plan and its ``.ics``), :mod:`.new_views` (*What's new*, the Atom
feed); :mod:`.context` holds what they share and :mod:`.security` the host, origin and CSRF checks.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from flask import Blueprint, Flask, render_template, request, session, url_for
from markupsafe import Markup, escape

from ..authors import atlas_authors
from ..cite import out_links
from ..mapview import STATIC_DIR as MAP_STATIC_DIR
from ..mapview import topic_color
from ..markup import FAVICON, note_html
from ..memory import trim_heap
from ..model import STATUSES
from ..search import warm_up
from ..store import Atlas
from ..vocab import concept_key
from . import (
    ask_views,
    browse_views,
    damaged,
    new_views,
    paper_views,
    reader_views,
    schedule_views,
    search_views,
    topic_edit_views,
    trends_views,
)
from .busy import fast_switching, one_blas_thread, request_gate
from .context import MAX_K, PAGE_SIZE, WebContext
from .search_views import FacetFilters
from .security import LOOPBACK_HOSTS, install

__all__ = ["MAX_K", "PAGE_SIZE", "STATUSES", "FacetFilters", "create_app", "topic_color"]


def create_app(db_path: str | Path, preload_model: bool = True, allowed_hosts: Iterable[str] | None = LOOPBACK_HOSTS,
               access_token: str | None = None, warm_up_now: bool = True) -> Flask:
    """The web app over the atlas at ``db_path`` (opened read-only and loaded into memory once).

    Searches made before the query embedding model is ready (or without the model package) use words alone.

    Args:
        db_path: the atlas file.
        preload_model: start loading the query embedding model (ONNX Runtime when it can,
            :func:`paperatlas.enrich.query_embed.query_embedder`) in a background thread so the first semantic
            search is fast, then prepare the recommender, facets and authors (~17 s at 42k papers in all, pausing
            while requests are answered) and freeze the loaded objects out of garbage collection (a server's atlas
            lives as long as the process). False: no model is loaded (words only), nothing frozen. Either way
            a background thread prepares search (its index arrays and the common words' postings).
        allowed_hosts: Host names the ``Host`` header may name (any port; ``localhost``, ``127.0.0.1`` and
            ``::1`` always), against DNS rebinding; None: any (a wildcard bind address, with ``access_token``).
        access_token: When given, every browser session must present it once (``?token=...``) or every request
            send ``Authorization: Bearer ...`` (``serve`` on a non-loopback address requires one).
        warm_up_now: Start the background thread now. False: ``app.extensions["paperatlas.warm_up"]()`` starts it
            (``serve`` binds its port first: a process that cannot listen then exits before the thread has loaded
            ONNX Runtime, which aborted the exit with "terminate called without an active exception").

    Returns:
        The Flask application.

    Raises:
        paperatlas.store.AtlasNotFound: when the file is missing.
    """
    atlas = Atlas(db_path)
    ctx = WebContext(atlas)
    app = Flask(__name__)
    app.config["ATLAS"] = atlas
    app.extensions["paperatlas"] = ctx  # the routes' shared state (tests and benchmarks reach it here)
    # host, origin and CSRF checks, headers (security.py); the map's pages need 'unsafe-eval' for Plotly's WebGL
    install(app, allowed_hosts=allowed_hosts, access_token=access_token, eval_endpoints=("index", "map_page"),
            feed_endpoints=("feed_atom",))
    # the map's script and stylesheet live with its Python in paperatlas.mapview (publish inlines the same files)
    app.register_blueprint(Blueprint("mapview", __name__, static_folder=MAP_STATIC_DIR,
                                     static_url_path="/mapview/static"))

    app.extensions["paperatlas.warm_up"] = lambda: _start_warm_up(app, atlas, ctx, preload_model)
    if warm_up_now:
        app.extensions["paperatlas.warm_up"]()

    def map_args(compact: bool) -> dict:
        """Template arguments of ``_map.html`` (the interactive map, drawn by mapview/static/atlasmap.js)."""
        return {"map_compact": compact, "map_paper_href": url_for("paper", pid="__ID__"),
                "map_topic_href": url_for("topic", tid=987654321).replace("987654321", "__ID__")}

    _install_page_globals(app, atlas, ctx, access_token)

    search_views.register(app, ctx, map_args)
    ask_views.register(app, ctx)
    browse_views.register(app, ctx)
    paper_views.register(app, ctx, map_args)
    topic_edit_views.register(app, ctx)
    reader_views.register(app, ctx)
    new_views.register(app, ctx)
    schedule_views.register(app, ctx)
    trends_views.register(app, ctx)
    damaged.register(app)  # a damaged value read per request: a 500 page with the store's one line

    @app.errorhandler(404)
    def not_found(_e):
        return render_template("404.html"), 404

    return app


def _start_warm_up(app: Flask, atlas: Atlas, ctx: WebContext, preload_model: bool) -> None:
    """Start the thread that computes ahead what the first requests would wait for (see :func:`create_app`)."""
    yield_to_requests = request_gate(app)
    def warm() -> None:
        """Compute ahead, one piece at a time, what the first requests would otherwise wait for.

        One thread, pausing every ~2 ms of work while a request is answered, with a short GIL switch interval
        (:func:`paperatlas.web.busy.fast_switching`): a CPU-bound thread sharing the GIL otherwise makes each of
        a request's SQLite and ONNX calls wait the 5 ms default interval for it (searches of 1-2 s in the first
        20 s at 42k papers). At 42k papers: the query model 1.6 s, search's indexes and postings ~5 s,
        the recommender 1 s, facets ~6 s, authors 3.5 s.
        """
        with fast_switching(), contextlib.suppress(Exception):  # noqa: BLE001 - a warm-up is never worth a traceback
            if preload_model:
                try:
                    from ..enrich.query_embed import query_embedder

                    ctx.state["embedder"] = query_embedder()
                except Exception as e:  # noqa: BLE001 - the app still works with words only
                    ctx.state["error"] = str(e)
            warm_up(atlas, yield_to_requests)  # search: index arrays, spelling vocabulary, common words' postings
            if not preload_model:
                return
            if atlas.ids and not atlas.lazy:  # a large atlas's TF-IDF (674 MB at 1M) loads with the first "For you"
                yield_to_requests()
                from ..recommend import recommender_for

                recommender_for(atlas)
            keyphrase_counts(atlas, yield_to_requests)
            if not atlas.lazy:  # a large atlas's facets are not kept per paper (the table below holds them)
                for i, p in enumerate(atlas.papers):
                    if i % 50 == 0:
                        yield_to_requests()
                    ctx.facets_for(p)
            # the facet panel's counts from columns (search_views.facet_counts)
            ctx.make_facet_table(yield_to_requests)
            atlas_authors(atlas, yield_to_requests)
            trim_heap()  # what the warm-up made and dropped (~80 MB of resident memory at 1M papers)
            gc.freeze()  # what is loaded now lives as long as the app: no full collection walks it again

    if preload_model:  # serving: the atlas lives as long as the process (tests make many apps: nothing frozen)
        gc.freeze()
        one_blas_thread()  # request threads each multiply on one core rather than all fight for both
    threading.Thread(target=warm, name="paperatlas-warm-up", daemon=True).start()


def keyphrase_counts(atlas: Atlas, pause: Callable[[], None] | None = None) -> dict[str, int]:
    """``concept key -> number of papers with that keyphrase`` (given or generated), computed once per atlas.

    Args:
        atlas: the atlas.
        pause: a background warm-up's ``wait``, called every 1,000 papers (the value is then made with
            :meth:`~paperatlas.store.Atlas.prepare`).
    """
    def count(wait: Callable[[], None]) -> dict[str, int]:
        kp_count: dict[str, int] = {}
        for i, (keyphrases, given) in enumerate(atlas.fields("keyphrases", "given_keyphrases")):
            if i % 1000 == 0:
                wait()
            for k in {concept_key(k) for k in keyphrases + given}:
                kp_count[k] = kp_count.get(k, 0) + 1
        return kp_count

    if pause is not None:
        atlas.prepare("keyphrase counts", lambda: count(pause))
    return atlas.derived("keyphrase counts", lambda: count(lambda: None))


def _install_page_globals(app: Flask, atlas: Atlas, ctx: WebContext, access_token: str | None) -> None:
    """The names every template sees (the topic menu, keyphrase counts, feed links, ...) and the note filter."""
    if not atlas.lazy:  # a large atlas counts them in the warm-up (keyphrase counts read every paper)
        keyphrase_counts(atlas)
    topics_sorted: list = []
    n_areas = sum(t.level == 0 for t in atlas.topics.values())
    menu = {"options": ""}

    def make_topic_menu() -> None:
        """Make the topics by size and the search form's topic menu.

        Made once (320 options at 42k papers: ~3 ms a page in the template), and again after a rename or a move.
        """
        topics_sorted[:] = sorted(atlas.topics.values(), key=lambda t: (-t.size, t.id))
        menu["options"] = "".join(
            f'<option value="{t.id}">{"&nbsp;&nbsp;– " if sub else ""}{escape(t.label)} ({t.size})</option>'
            for a in atlas.areas() for sub, t in [(False, a), *((True, s) for s in atlas.subtopics(a.id))])

    make_topic_menu()
    ctx.on_topics_changed.append(make_topic_menu)

    def topic_options(selected: str) -> Markup:
        """The topic menu's ``<option>`` elements, the one whose value is ``selected`` (a topic id) selected."""
        options = menu["options"]
        mark = f'<option value="{selected}">' if selected.isdecimal() else ""
        return Markup(options.replace(mark, mark[:-1] + " selected>", 1) if mark else options)

    @app.template_filter("note_html")
    def note_html_filter(note: str) -> Markup:
        return Markup(note_html(note))  # markdown-it output, raw HTML in the note escaped

    def author_links(p) -> list[tuple[str, str | None]]:
        """``(name, author page URL or None)`` for each author of ``p``."""
        index = atlas_authors(atlas)
        return [(name, url_for("author", key=k) if k else None) for name, k in index.keys_of(p)]

    def feed_href(**params: str | int | None) -> str:
        """The URL of ``/feed.atom`` with ``params`` (``topic``, ``q``; None or "" left out).

        On an atlas served with an access token it carries the token (``token=...``): a feed reader cannot log in,
        so the URL it is given must (:func:`paperatlas.web.security.install`'s ``feed_endpoints``). Only a reader
        who has presented the token (the session's flag, or a Bearer header the checks accepted) gets that URL:
        every page is refused to anyone else before it is rendered, and this checks again.
        """
        args = {k: v for k, v in params.items() if v not in (None, "")}
        if access_token is not None and (session.get("auth") or request.headers.get("Authorization", "")):
            args["token"] = access_token
        return url_for("feed_atom", **args)

    def page_feed() -> tuple[str, str]:
        """``(href, what)`` of the feed that fits the current page: a topic's, a search's, or what's new."""
        view = request.view_args or {}
        if request.endpoint == "topic" and "tid" in view:
            return feed_href(topic=view["tid"]), "this topic"
        q = request.args.get("q", "").strip()
        if request.endpoint == "index" and q:
            return feed_href(q=q[:500]), "this search"
        return feed_href(), "what’s new"

    @app.context_processor
    def globals_():
        return {"atlas": atlas, "topic_color": topic_color, "topics_sorted": topics_sorted,
                "area_color": lambda tid: topic_color(getattr(atlas.area_of(tid), "id", tid)),
                "kp_count": lambda k: keyphrase_counts(atlas).get(concept_key(k), 0), "n_papers": len(atlas.papers),
                "statuses": STATUSES, "favicon": Markup(FAVICON), "facets": ctx.facets_for,
                "n_areas": n_areas, "topic_options": topic_options,
                "out_links": out_links, "author_links": author_links, "feed_href": feed_href,
                "page_feed": page_feed,
                "mine_of": lambda pid: reader_views.mine_of(ctx, pid)}
