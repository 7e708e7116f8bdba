"""Publish an atlas as one self-contained interactive map.

The map is a single HTML file that works opened from disk (``file://``) with no network.

The file inlines everything it needs: Plotly.js (the vendored ``mapview/vendor/plotly.min.js``, ~4.8 MB),
the map script and stylesheet shared with the web app (``mapview/static/atlasmap.js``/``atlasmap.css``) and the data
of :func:`paperatlas.mapview.map_payload` as JSON: per paper its map coordinates (unitless), area and sub-topic,
title, TL;DR, keyphrases, authors, status and http(s) paper URL. Expect roughly 5 MB plus ~0.5 kB per paper
(about 25 MB for 40k papers).

In the browser every paper is a point coloured by its area (WebGL ``scattergl``); area labels show when zoomed
out and sub-topic labels when zoomed in; hovering shows the title and TL;DR; clicking opens the paper's URL in a
new tab; a search box highlights papers matching all its words; box/lasso selection lists the selected papers.
Papers without finite ``x``/``y`` are left off (the page says how many). The ``related`` argument is unused.
"""

from __future__ import annotations

from collections.abc import Iterable

from markupsafe import Markup

from ..mapview import htmlsafe_json, map_payload, plotly_js_path, static_text
from ..model import Paper, Topic
from ._common import ENV

FORMAT = "map"


def _inline(text: str, closing: str, what: str) -> Markup:
    """``text`` marked safe for inlining in an HTML element; ``ValueError`` if it would close that element."""
    if closing in text.lower():
        raise ValueError(f"{what} contains {closing!r} and cannot be inlined in the HTML file")
    return Markup(text)


def render(papers: Iterable[Paper], topics: Iterable[Topic], related: dict[str, list[str]] | None = None,
           title: str = "", nav: list[tuple[str, str]] | None = None, paper_href: str = "",
           topic_href: str = "", plotly_src: str = "") -> str:
    """Render the papers as one self-contained interactive map page (see the module docstring).

    Args:
        papers: the papers (those with finite ``x``/``y`` are drawn).
        topics: the atlas's topics, areas and sub-topics (a list, or a dict ``{id: Topic}``).
        related: unused (uniform signature).
        title: the page title (default ``"Map of papers"``).
        nav: ``(label, href)`` links shown above the map (the static site's navigation), or None for none.
        paper_href: a paper page's URL with ``__ID__`` for its id (clicks open it there); ``""``: the paper's own
            link, in a new tab.
        topic_href: a topic page's URL with ``__ID__`` for its id (clicking a map label opens it); ``""``: none.
        plotly_src: a relative URL of ``plotly.min.js`` to load instead of inlining it (the static site's
            ``assets/plotly.min.js``, shared with its trend charts); ``""``: inlined, a page that stands alone.

    Returns:
        The HTML text (rendered with :data:`._common.ENV`, template ``map.html``).

    Raises:
        FileNotFoundError: the vendored ``plotly.min.js`` (or another package static file) is missing from the
            installed package.
        TypeError: a paper coordinate is not a number.
        ValueError: an inlined asset would end its ``<script>``/``<style>`` element early.
    """
    payload = map_payload(papers, topics)
    plotly_js = "" if plotly_src else plotly_js_path().read_text(encoding="utf-8")
    html = ENV.get_template("map.html").render(
        title=title or "Map of papers",
        n_papers=len(payload["ids"]), n_areas=len(payload["areas"]), n_subtopics=len(payload["topics"]),
        n_unmapped=payload["n_unmapped"],
        data_json=Markup(htmlsafe_json(payload)),
        plotly_js=_inline(plotly_js, "</script", "plotly.min.js"), plotly_src=plotly_src,
        map_js=_inline(static_text("atlasmap.js"), "</script", "atlasmap.js"),
        map_css=_inline(static_text("atlasmap.css"), "</style", "atlasmap.css"),
        nav=nav or [], mount_options=Markup(htmlsafe_json({"paperHref": paper_href, "topicHref": topic_href})),
    )
    return html
