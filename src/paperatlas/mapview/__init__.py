"""The interactive paper map: its data payload and its browser assets.

They are shared by the web app (``/map`` and the overview on ``/``) and by ``publish --format map`` (one
self-contained HTML file).

The map is drawn in the browser by ``mapview/static/atlasmap.js`` with Plotly.js (``scattergl``, WebGL). That script
reads the compact payload made by :func:`map_payload`: one array per field, index ``i`` of every array being the
same paper, so 40k papers stay a few MB of JSON. Areas (level-0 topics) colour the points
(:func:`topic_color` of the area id) and label the map when zoomed out; sub-topics (level-1 topics with a parent)
label it when zoomed in. An atlas without a hierarchy has only areas: every topic is its own area.

Plotly.js itself is vendored: ``mapview/vendor/plotly.min.js`` (plotly.js 3.3.1, MIT, its licence beside it;
:func:`plotly_js_path`); nothing is fetched from the network at run time and the ``plotly`` package is not needed.
"""

from __future__ import annotations

import colorsys
import json
import math
import numbers
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..facets import facets_of
from ..model import Paper, Topic

#: Package folder holding ``atlasmap.js`` and ``atlasmap.css``.
STATIC_DIR = Path(__file__).resolve().parent / "static"

#: Package folder holding the vendored ``plotly.min.js`` and its licence (``plotly.LICENSE.txt``).
VENDOR_DIR = Path(__file__).resolve().parent / "vendor"

#: Sub-topic labels replace area labels once the visible part of the map is smaller than this fraction of the
#: whole (geometric mean of the x and y range fractions); mirrored by ``ZOOM_SUBTOPICS`` in atlasmap.js.
ZOOM_SUBTOPICS = 0.45

#: Paper URLs the standalone map may open; anything else (``javascript:``, ``data:``, relative) is dropped.
_SAFE_URL_PREFIXES = ("http://", "https://")


def topic_color(topic_id: int | None) -> str:
    """A distinct, readable colour per topic id, as ``#rrggbb``; grey (``#999999``) for None.

    Hues step by the golden angle; the lightness cycles through three levels so ids whose hues come close again
    (e.g. 0 and 8) still differ. The map colours each paper with the colour of its *area*, so pass an area id to
    match the map.

    Args:
        topic_id: A topic id (an area's, to match the map), or None.

    Returns:
        The colour as ``#rrggbb``.
    """
    if topic_id is None:
        return "#999999"
    h = (topic_id * 0.618033988749895) % 1.0
    r, g, b = colorsys.hls_to_rgb(h, (0.45, 0.33, 0.56)[topic_id % 3], 0.65)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


def _area_of(by_id: dict[int, Topic], topic_id: int | None) -> Topic | None:
    """Like :meth:`paperatlas.store.Atlas.area_of`: the topic's parent, else the topic itself; None for none."""
    t = by_id.get(topic_id) if topic_id is not None else None
    if t is None:
        return None
    return by_id.get(t.parent_id, t) if t.parent_id is not None else t


def _finite(v: Any) -> bool:
    return isinstance(v, numbers.Real) and math.isfinite(v)


def map_payload(papers: Iterable[Paper], topics: Iterable[Topic] | dict[int, Topic]) -> dict[str, Any]:
    """The map's data as a JSON-serialisable dict of parallel arrays (index ``i`` = the ``i``-th mapped paper).

    Per paper: ``ids`` (str), ``x``/``y`` (map coordinates, unitless, rounded to 4 decimals), ``area`` (index into
    ``areas``, -1 for no topic), ``topic`` (index into ``topics``, -1 when the paper's topic is not a sub-topic),
    ``title``, ``tldr``, ``keyphrases`` (joined with ``"; "``), ``authors`` (joined with ``", "``), ``status``,
    ``url`` (the paper's http(s) ``paper_url`` or ``""``), ``low`` (1 when ``low_confidence``, else 0), ``year``
    (int or None), ``rating`` (mean review rating, :func:`paperatlas.facets.facets_of`, or None).

    ``regions``: each area's outline (:func:`area_regions`), drawn under the points so areas read as regions.

    ``areas``: one ``{"id", "label", "size", "x", "y", "color"}`` per area (level-0 topics, or every topic when the
    atlas has no hierarchy), largest first; ``topics``: one ``{"id", "label", "size", "x", "y", "area"}`` per
    sub-topic (a topic whose parent is an area; ``area`` indexes ``areas``), largest first — empty for a flat atlas.
    ``n_unmapped`` counts papers left off for lack of finite coordinates.

    ``zoom_subtopics`` is :data:`ZOOM_SUBTOPICS`.

    Args:
        papers: The papers to map; those without finite ``x``/``y`` are left off (None and NaN are fine).
        topics: The atlas's areas and sub-topics: a list or an atlas's ``{id: Topic}`` dict.

    Returns:
        The payload dict described above.

    Raises:
        TypeError: A paper coordinate is not a number (None and NaN are fine: the paper is left off the map).
    """
    tlist = list(topics.values()) if isinstance(topics, dict) else list(topics)
    by_id = {t.id: t for t in tlist}
    order = lambda t: (-t.size, t.id)  # noqa: E731
    areas = sorted({a.id: a for t in tlist if (a := _area_of(by_id, t.id)) is not None}.values(), key=order)
    area_idx = {a.id: i for i, a in enumerate(areas)}
    subs = sorted((t for t in tlist if t.id not in area_idx), key=order)
    sub_idx = {t.id: i for i, t in enumerate(subs)}

    cols: dict[str, list] = {k: [] for k in ("ids", "x", "y", "area", "topic", "title", "tldr", "keyphrases",
                                              "authors", "status", "url", "low", "year", "rating")}
    n_unmapped = 0
    for p in papers:
        for v in (p.x, p.y):
            if v is not None and not isinstance(v, numbers.Real):
                raise TypeError(f"paper {p.id!r}: map coordinate {v!r} is not a number")
        if not (_finite(p.x) and _finite(p.y)):
            n_unmapped += 1
            continue
        area = _area_of(by_id, p.topic_id)
        url = p.paper_url
        cols["ids"].append(p.id)
        cols["x"].append(round(float(p.x), 4))
        cols["y"].append(round(float(p.y), 4))
        cols["area"].append(area_idx[area.id] if area is not None else -1)
        cols["topic"].append(sub_idx.get(p.topic_id, -1) if p.topic_id is not None else -1)
        cols["title"].append(p.title)
        cols["tldr"].append(p.tldr)
        cols["keyphrases"].append("; ".join(p.keyphrases))
        cols["authors"].append(", ".join(p.authors))
        cols["status"].append(p.status)
        cols["url"].append(url if url.startswith(_SAFE_URL_PREFIXES) else "")
        cols["low"].append(1 if p.low_confidence else 0)
        cols["year"].append(int(p.year) if p.year else None)
        rating = facets_of(p).rating_mean
        cols["rating"].append(round(rating, 2) if rating is not None else None)

    def anchor(t: Topic) -> dict[str, Any]:
        return {"id": t.id, "label": t.label, "size": t.size,
                "x": round(float(t.x), 4) if _finite(t.x) else None,
                "y": round(float(t.y), 4) if _finite(t.y) else None}

    return {
        **cols,
        "areas": [{**anchor(a), "color": topic_color(a.id)} for a in areas],
        "topics": [{**anchor(t), "area": area_idx.get(_area_of(by_id, t.id).id, -1)} for t in subs],
        "regions": area_regions(cols["x"], cols["y"], cols["area"], len(areas)),
        "n_unmapped": n_unmapped,
        "zoom_subtopics": ZOOM_SUBTOPICS,
    }


#: an area's region is the convex hull of this share of its papers, those nearest its median point (the outliers an
#: area always has would otherwise stretch its region over its neighbours)
REGION_CORE = 0.6


def area_regions(xs: list[float], ys: list[float], area: list[int], n_areas: int) -> list[dict[str, Any]]:
    """One outline per area: the convex hull (scipy.spatial.ConvexHull, Qhull) of its core papers.

    Args:
        xs: the papers' map x coordinates.
        ys: their y coordinates.
        area: their area index (-1: none).
        n_areas: the number of areas.

    Returns:
        ``[{"area": index, "x": [...], "y": [...]}]``: closed polygons (first point repeated last), coordinates
        rounded to 4 decimals; areas with fewer than 4 papers have none.
    """
    import numpy as np
    from scipy.spatial import ConvexHull, QhullError

    pts = np.column_stack([np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)]) if xs else np.zeros((0, 2))
    labels = np.asarray(area, dtype=int)
    out: list[dict[str, Any]] = []
    for a in range(n_areas):
        p = pts[labels == a]
        if len(p) < 4:
            continue
        dist = np.linalg.norm(p - np.median(p, axis=0), axis=1)
        core = p[np.argsort(dist)[:max(4, math.ceil(REGION_CORE * len(p)))]]
        try:
            hull = ConvexHull(core)
        except QhullError:  # all on a line
            continue
        ring = core[list(hull.vertices) + [hull.vertices[0]]]
        out.append({"area": a, "x": [round(float(v), 4) for v in ring[:, 0]],
                    "y": [round(float(v), 4) for v in ring[:, 1]]})
    return out


def htmlsafe_json(obj: Any) -> str:
    """Compact JSON for inlining in an HTML ``<script>`` element.

    ``<``, ``>``, ``&`` and U+2028/2029 are escaped, so no string in it can close the element.

    Args:
        obj: A JSON-serialisable value (e.g. :func:`map_payload`'s).

    Returns:
        The JSON text (non-ASCII characters kept as they are).

    Raises:
        ValueError: ``obj`` holds a NaN or infinite float.
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def plotly_js_path() -> Path:
    """Path of the vendored ``plotly.min.js`` (plotly.js 3.3.1, ~4.8 MB; :data:`VENDOR_DIR`).

    Returns:
        The file's path (package data: ``mapview/vendor/plotly.min.js``, its licence in ``plotly.LICENSE.txt``).

    Raises:
        FileNotFoundError: The file is missing from the installed package (a broken install; reinstall paperatlas).
    """
    path = VENDOR_DIR / "plotly.min.js"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing from the installed paperatlas package; reinstall it")
    return path


def static_text(name: str) -> str:
    """The text of a package static file.

    Args:
        name: A file name in :data:`STATIC_DIR`: ``atlasmap.js``, ``atlasmap.css``.

    Returns:
        The file's text (UTF-8).

    Raises:
        FileNotFoundError: The file is missing.
    """
    return (STATIC_DIR / name).read_text(encoding="utf-8")
