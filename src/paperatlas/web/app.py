"""Flask application factory for ``paperatlas serve``."""

from __future__ import annotations

import colorsys
import threading
from pathlib import Path

from flask import Flask, abort, jsonify, redirect, render_template, request, url_for

from ..keyphrases import concept_key
from ..search import Filters, find_paper, parse_years, related, search
from ..store import Atlas

STATUSES = ("Oral", "Spotlight", "Poster")


def topic_color(topic_id: int | None) -> str:
    """A distinct, readable colour per topic (golden-angle hue steps), as ``#rrggbb``; grey for no topic."""
    if topic_id is None:
        return "#999999"
    h = (topic_id * 0.618033988749895) % 1.0
    r, g, b = colorsys.hls_to_rgb(h, 0.45, 0.65)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


class MapView:
    """Paper coordinates scaled into an SVG viewport of ``width`` × ``height`` pixels (with a margin)."""

    def __init__(self, atlas: Atlas, width: int = 960, height: int = 640, margin: int = 20):
        pts = [(p.x, p.y) for p in atlas.papers if p.x is not None]
        self.width, self.height = width, height
        if pts:
            xs, ys = zip(*pts, strict=True)
            self.x0, self.x1, self.y0, self.y1 = min(xs), max(xs), min(ys), max(ys)
        else:
            self.x0 = self.y0 = 0.0
            self.x1 = self.y1 = 1.0
        self.margin = margin

    def label_xy(self, x: float, y: float, label: str, char_px: float = 6.2) -> tuple[float, float]:
        """Like calling the view, but keeps a centred label of ~``char_px`` pixels per character inside it."""
        px, py = self(x, y)
        half = len(label) * char_px / 2
        return (round(min(max(px, half + 2), self.width - half - 2), 1), py)

    def place_labels(self, topics: list, char_px: float = 6.2, line_px: float = 14.0) -> list[dict]:
        """Topic label marks (``id``, ``label``, ``xy``, ``color``), placed greedily in the given order (largest
        topics first): a label that would overlap one already placed is moved up or down by whole lines."""
        placed: list[tuple[float, float, float]] = []  # (x centre, y baseline, half width)
        marks = []
        for t in topics:
            x, y0 = self.label_xy(t.x, t.y, t.label, char_px)
            half = len(t.label) * char_px / 2
            y = y0
            for step in (0, 1, -1, 2, -2, 3, -3, 4, -4):
                y = min(max(y0 + step * line_px, line_px), self.height - 4)
                if all(abs(x - px) >= half + ph + 4 or abs(y - py) >= line_px for px, py, ph in placed):
                    break
            placed.append((x, y, half))
            marks.append({"id": t.id, "label": t.label, "xy": (x, round(y, 1)), "color": topic_color(t.id)})
        return marks

    def __call__(self, x: float, y: float) -> tuple[float, float]:
        sx = (x - self.x0) / ((self.x1 - self.x0) or 1.0)
        sy = (y - self.y0) / ((self.y1 - self.y0) or 1.0)
        return (round(self.margin + sx * (self.width - 2 * self.margin), 1),
                round(self.height - self.margin - sy * (self.height - 2 * self.margin), 1))


def create_app(db_path: str | Path, preload_model: bool = True) -> Flask:
    """The web app over the atlas at ``db_path`` (opened read-only and loaded into memory once).

    ``preload_model`` starts loading the query embedding model in a background thread so the first semantic
    search is fast; searches before it is ready (or without the model package) use BM25 alone.
    Raises :class:`paperatlas.store.AtlasNotFound` when the file is missing.
    """
    atlas = Atlas(db_path)
    app = Flask(__name__)
    app.config["ATLAS"] = atlas
    state: dict = {"embedder": None}

    def load_model() -> None:
        try:
            from ..embed import get_embedder

            state["embedder"] = get_embedder()
        except Exception as e:  # noqa: BLE001 - the app still works with BM25 only
            state["error"] = str(e)

    if preload_model:
        threading.Thread(target=load_model, daemon=True).start()

    def embed_query(q: str):
        return state["embedder"].encode([q])[0]

    mapview = MapView(atlas)
    points = [{"id": p.id, "title": p.title, "topic": atlas.topic_label(p.topic_id), "color": topic_color(p.topic_id),
               "xy": mapview(p.x, p.y)} for p in atlas.papers if p.x is not None]
    topic_marks = mapview.place_labels(sorted(atlas.topics.values(), key=lambda t: (-t.size, t.id)))
    kp_count: dict[str, int] = {}
    for p in atlas.papers:
        for k in {concept_key(k) for k in p.keyphrases + p.given_keyphrases}:
            kp_count[k] = kp_count.get(k, 0) + 1
    topics_sorted = sorted(atlas.topics.values(), key=lambda t: (-t.size, t.id))

    @app.context_processor
    def globals_():
        return {"atlas": atlas, "topic_color": topic_color, "topics_sorted": topics_sorted,
                "kp_count": lambda k: kp_count.get(concept_key(k), 0), "n_papers": len(atlas.papers),
                "statuses": STATUSES}

    def current_filters() -> Filters:
        try:
            years = parse_years(request.args.get("year", ""))
        except ValueError:
            years = (None, None)
        return Filters(status=request.args.getlist("status"), venue=request.args.get("venue", ""), year=years,
                       author=request.args.get("author", ""), topic=request.args.get("topic", ""),
                       keyphrase=request.args.get("keyphrase", ""))

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
                               points=points, topic_marks=topic_marks, map=mapview)

    @app.get("/api/search")
    def api_search():
        q, hits, mode, _ = run_search(k=int(request.args.get("k", 20)))
        return jsonify({"query": q, "mode": mode, "results": [
            {"id": h.paper.id, "title": h.paper.title, "status": h.paper.status, "score": h.score,
             "topic": atlas.topic_label(h.paper.topic_id), "tldr": h.paper.tldr} for h in hits]})

    @app.get("/paper/<pid>")
    def paper(pid: str):
        try:
            p = find_paper(atlas, pid)
        except LookupError:
            abort(404)
        return render_template("paper.html", p=p, related=related(atlas, p, k=10),
                               topic=atlas.topics.get(p.topic_id))

    @app.post("/paper/<pid>/edit")
    def edit(pid: str):
        from ..edits import edit_paper, parse_keyphrases

        p = atlas.by_id.get(pid)
        if p is None:
            abort(404)
        tldr = request.form.get("tldr", "").strip()
        kps = parse_keyphrases(request.form.get("keyphrases", ""))
        try:
            edited = edit_paper(atlas.path, pid, tldr=tldr if tldr and tldr != p.tldr else None,
                                keyphrases=kps if kps and kps != p.keyphrases else None)
        except ValueError as e:
            abort(400, str(e))
        p.tldr, p.tldr_method = edited.tldr, edited.tldr_method
        p.keyphrases, p.keyphrases_method = edited.keyphrases, edited.keyphrases_method
        return redirect(url_for("paper", pid=pid))

    @app.get("/topics")
    def topics():
        return render_template("topics.html")

    @app.get("/topic/<int:tid>")
    def topic(tid: int):
        t = atlas.topics.get(tid)
        if t is None:
            abort(404)
        order = {s: i for i, s in enumerate(STATUSES)}
        members = sorted((p for p in atlas.papers if p.topic_id == tid),
                         key=lambda p: (order.get(p.status, len(order)), p.title.lower()))
        return render_template("topic.html", t=t, members=members)

    @app.get("/map")
    def map_page():
        return render_template("map.html", points=points, topic_marks=topic_marks, map=mapview)

    @app.errorhandler(404)
    def not_found(_e):
        return render_template("404.html"), 404

    return app
