"""Flask application factory for ``paperatlas serve``."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterable
from pathlib import Path

from flask import Blueprint, Flask, Response, abort, jsonify, redirect, render_template, request, send_file, url_for
from markupsafe import Markup

from ..mapview import STATIC_DIR as MAP_STATIC_DIR
from ..mapview import map_payload, plotly_js_path, topic_color
from ..markup import FAVICON, note_html
from ..model import STATUSES
from ..search import Filters, find_paper, parse_years, related, search
from ..store import Atlas
from ..vocab import concept_key
from .security import LOOPBACK_HOSTS, install, safe_next

__all__ = ["STATUSES", "create_app", "topic_color"]


#: Largest ``k`` (number of results) a request may ask for.
MAX_K = 500
#: Longest TL;DR the edit form accepts (characters).
MAX_TLDR_CHARS = 5000


def create_app(db_path: str | Path, preload_model: bool = True, allowed_hosts: Iterable[str] | None = LOOPBACK_HOSTS,
               access_token: str | None = None) -> Flask:
    """The web app over the atlas at ``db_path`` (opened read-only and loaded into memory once).

    Searches made before the query embedding model is ready (or without the model package) use BM25 alone.

    Args:
        db_path: the atlas file.
        preload_model: start loading the query embedding model in a background thread so the first semantic
            search is fast; the same thread then builds the recommender's TF-IDF matrix (~15 s at 40k papers) so
            the first *For you* visit is fast. False: no model is loaded (BM25 only).
        allowed_hosts: Host names the ``Host`` header may name (any port; ``localhost``, ``127.0.0.1`` and
            ``::1`` always), against DNS rebinding; None: any (a wildcard bind address, with ``access_token``).
        access_token: When given, every browser session must present it once (``?token=...``) or every request
            send ``Authorization: Bearer ...`` (``serve`` on a non-loopback address requires one).

    Returns:
        The Flask application.

    Raises:
        paperatlas.store.AtlasNotFound: when the file is missing.
    """
    atlas = Atlas(db_path)
    app = Flask(__name__)
    app.config["ATLAS"] = atlas
    # host, origin and CSRF checks, headers (security.py); the map's pages need 'unsafe-eval' for Plotly's WebGL
    install(app, allowed_hosts=allowed_hosts, access_token=access_token, eval_endpoints=("index", "map_page"))
    # the map's script and stylesheet live with its Python in paperatlas.mapview (publish inlines the same files)
    app.register_blueprint(Blueprint("mapview", __name__, static_folder=MAP_STATIC_DIR,
                                     static_url_path="/mapview/static"))
    state: dict = {"embedder": None}

    def load_model() -> None:
        try:
            from ..enrich.embed import get_embedder

            state["embedder"] = get_embedder()
        except Exception as e:  # noqa: BLE001 - the app still works with BM25 only
            state["error"] = str(e)
        if atlas.ids:
            from ..recommend import recommender_for

            recommender_for(atlas)

    if preload_model:
        threading.Thread(target=load_model, daemon=True).start()

    def embed_query(q: str):
        return state["embedder"].encode([q])[0]

    def map_args(compact: bool) -> dict:
        """Template arguments of ``_map.html`` (the interactive map, drawn by mapview/static/atlasmap.js)."""
        return {"map_compact": compact, "map_paper_href": url_for("paper", pid="__ID__"),
                "map_topic_href": url_for("topic", tid=987654321).replace("987654321", "__ID__")}

    kp_count: dict[str, int] = {}
    for p in atlas.papers:
        for k in {concept_key(k) for k in p.keyphrases + p.given_keyphrases}:
            kp_count[k] = kp_count.get(k, 0) + 1
    topics_sorted = sorted(atlas.topics.values(), key=lambda t: (-t.size, t.id))

    @app.template_filter("note_html")
    def note_html_filter(note: str) -> Markup:
        return Markup(note_html(note))  # markdown-it output, raw HTML in the note escaped

    @app.context_processor
    def globals_():
        return {"atlas": atlas, "topic_color": topic_color, "topics_sorted": topics_sorted,
                "area_color": lambda tid: topic_color(getattr(atlas.area_of(tid), "id", tid)),
                "kp_count": lambda k: kp_count.get(concept_key(k), 0), "n_papers": len(atlas.papers),
                "statuses": STATUSES, "favicon": Markup(FAVICON)}

    def current_filters() -> Filters:
        try:
            years = parse_years(request.args.get("year", ""))
        except ValueError:
            years = (None, None)
        return Filters(status=request.args.getlist("status"), venue=request.args.get("venue", ""), year=years,
                       author=request.args.get("author", ""), topic=request.args.get("topic", ""),
                       keyphrase=request.args.get("keyphrase", ""))

    def int_arg(name: str, default: int, lo: int = 1, hi: int = MAX_K) -> int:
        """An integer query parameter clamped to ``[lo, hi]``; 400 when it is not an integer."""
        raw = request.args.get(name, "").strip()
        if not raw:
            return default
        if not re.fullmatch(r"[+-]?\d{1,12}", raw):
            abort(400, f"{name} must be an integer")
        return min(max(int(raw), lo), hi)

    def run_search(k: int = 50):
        q = request.args.get("q", "")
        flt = current_filters()
        mode = "hybrid" if state["embedder"] is not None else "bm25"
        any_filter = bool(q.strip() or flt.status or flt.venue or flt.author or flt.topic or flt.keyphrase
                          or flt.year != (None, None))
        hits = search(atlas, q, k=k, filters=flt, mode=mode,
                      embed_query=embed_query if mode == "hybrid" else None) if any_filter else []
        return q, hits, mode, any_filter

    @app.get("/")
    def index():
        q, hits, mode, searched = run_search()
        return render_template("index.html", q=q, hits=hits, mode=mode, searched=searched, args=request.args,
                               **map_args(compact=True))

    @app.get("/api/search")
    def api_search():
        q, hits, mode, _ = run_search(k=int_arg("k", 20))
        return jsonify({"query": q, "mode": mode, "results": [
            {"id": h.paper.id, "title": h.paper.title, "status": h.paper.status, "score": h.score,
             "topic": atlas.topic_label(h.paper.topic_id), "tldr": h.paper.tldr} for h in hits]})

    @app.get("/paper/<pid>")
    def paper(pid: str):
        try:
            p = find_paper(atlas, pid)
        except LookupError:
            abort(404)
        _, mine = reader_state(p.id)
        return render_template("paper.html", p=p, related=related(atlas, p, k=10),
                               topic=atlas.topics.get(p.topic_id), mine=mine)

    @app.post("/paper/<pid>/edit")
    def edit(pid: str):
        from ..overrides import override_paper, parse_keyphrases

        p = atlas.by_id.get(pid)
        if p is None:
            abort(404)
        tldr = request.form.get("tldr", "").strip()
        if len(tldr) > MAX_TLDR_CHARS:
            abort(400, f"the TL;DR is longer than {MAX_TLDR_CHARS} characters")
        try:
            kps = parse_keyphrases(request.form.get("keyphrases", ""))
            edited = override_paper(atlas.path, pid, tldr=tldr if tldr and tldr != p.tldr else None,
                                keyphrases=kps if kps and kps != p.keyphrases else None)
        except ValueError as e:
            abort(400, str(e))
        p.tldr, p.tldr_method = edited.tldr, edited.tldr_method
        p.keyphrases, p.keyphrases_method = edited.keyphrases, edited.keyphrases_method
        return redirect(url_for("paper", pid=pid))

    def reader_state(pid: str | None = None):
        """The reader's entries from the live atlas file (fresh on every request) and, for ``pid``, its own."""
        from .. import readinglist as rl

        es = rl.entries(atlas.path)
        mine = next((e for e in es if e.paper_id == pid), None) if pid else None
        return es, mine

    @app.post("/paper/<pid>/mark")
    def mark(pid: str):
        from .. import readinglist as rl

        if pid not in atlas.by_id:
            abort(404)
        action = request.form.get("action", "")
        list_name = request.form.get("list", "").strip() or rl.DEFAULT_LIST
        if len(list_name) > 200:
            abort(400, "the list name is longer than 200 characters")
        try:
            if action in ("like", "dislike", "unrate"):
                rl.rate(atlas.path, pid, {"like": 1, "dislike": -1, "unrate": 0}[action])
            elif action in ("read", "unread"):
                rl.mark_read(atlas.path, pid, action == "read")
            elif action == "add":
                rl.add(atlas.path, pid, list_name)
            elif action == "remove":
                rl.remove(atlas.path, pid, list_name)
            elif action == "note":
                rl.set_note(atlas.path, pid, request.form.get("note", ""))
            else:
                abort(400, f"unknown action {action!r}")
        except ValueError as e:
            abort(400, str(e))
        return redirect(safe_next(request.form.get("next")) or url_for("paper", pid=pid))

    @app.get("/list")
    def reading_list():
        from .. import readinglist as rl

        es, _ = reader_state()
        name = request.args.get("list") or None
        shown = [e for e in es if name is None or name in e.lists]
        return render_template("list.html", entries=shown, names=rl.list_names(atlas.path), current=name,
                               n_liked=sum(e.rating > 0 for e in es))

    @app.get("/foryou")
    def for_you():
        from ..recommend import recommend

        es, _ = reader_state()  # one read of the reading list serves likes, dislikes and read marks
        liked = [e.paper_id for e in es if e.rating > 0 and e.paper_id in atlas.by_id]
        disliked = [e.paper_id for e in es if e.rating < 0 and e.paper_id in atlas.by_id]
        no_topic = [x for x in request.args.getlist("no_topic") if x.strip()]
        no_kp = [x for x in request.args.getlist("no_keyphrase") if x.strip()]
        already = [e.paper_id for e in es if e.read_at]
        k = int_arg("k", 20)
        recs = recommend(atlas, liked, disliked, k=k, exclude_topics=no_topic,
                         exclude_keyphrases=no_kp, exclude=already) if liked else []
        return render_template("foryou.html", recs=recs, liked=[atlas.by_id[i] for i in liked],
                               disliked=[atlas.by_id[i] for i in disliked], no_topic=no_topic, no_kp=no_kp)

    @app.get("/topics")
    def topics():
        return render_template("topics.html")

    @app.get("/topic/<int:tid>")
    def topic(tid: int):
        from ..topics import nearest_topics, topic_members

        t = atlas.topics.get(tid)
        if t is None:
            abort(404)
        members, also = topic_members(atlas, tid)
        return render_template("topic.html", t=t, members=members, also=also,
                               area=atlas.topics.get(t.parent_id) if t.parent_id is not None else None,
                               subtopics=atlas.subtopics(tid), nearest=nearest_topics(atlas, tid, k=5),
                               n_status={s: sum(p.status == s for p in members) for s in STATUSES})

    @app.get("/map")
    def map_page():
        return render_template("map.html", **map_args(compact=False))

    map_cache: dict = {}

    @app.get("/api/map")
    def map_data():
        """The map's data (:func:`paperatlas.mapview.map_payload`) as compact JSON with an ETag.

        It is rebuilt only when a paper's TL;DR or keyphrases changed (the fields an edit can change while the app
        runs).
        """
        key = hash(tuple((p.tldr, tuple(p.keyphrases)) for p in atlas.papers))
        if map_cache.get("key") != key:
            body = json.dumps(map_payload(atlas.papers, atlas.topics), ensure_ascii=False,
                              separators=(",", ":"), allow_nan=False).encode("utf-8")
            map_cache.update(key=key, body=body, etag=hashlib.sha1(body).hexdigest()[:20])
        resp = Response(map_cache["body"], mimetype="application/json")
        resp.set_etag(map_cache["etag"])
        resp.headers["Cache-Control"] = "no-cache"  # revalidate: an edit changes the ETag
        return resp.make_conditional(request)

    @app.get("/vendor/plotly.min.js")
    def plotly_js():
        """Plotly.js as bundled in the installed ``plotly`` package (never a CDN)."""
        try:
            path = plotly_js_path()
        except FileNotFoundError as e:
            abort(500, str(e))
        return send_file(path, mimetype="text/javascript", max_age=7 * 24 * 3600)

    @app.errorhandler(404)
    def not_found(_e):
        return render_template("404.html"), 404

    return app
