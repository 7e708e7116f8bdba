"""Topic overviews (issue 29 part 3) in every published output: the static site's topic pages, ``topics-md``, and
each section of ``highlights-md`` and ``awesome-md``.

The atlas is the 60-paper ICLR 2021 sample (conftest ``sample_atlas``). Its topics get overviews written the way
the build writes them (sentences of the cited papers' TL;DRs and abstracts, each followed by ``[n]``, Oral and
Spotlight papers first), set by hand on the loaded ``atlas.topics``. Each output must show the overview, link every
``[n]`` to the cited paper (its site page, or its entry's anchor in the Markdown document), list the cited papers
with title and status, keep hostile text inert, render a cited paper no longer in the atlas as plain ``[n]``, and
show nothing for an empty overview.
"""

from __future__ import annotations

import copy
import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from paperatlas.model import Paper, Topic, status_rank
from paperatlas.publish import publish, render
from paperatlas.publish._common import github_anchor
from paperatlas.publish.highlights_md import render as highlights
from paperatlas.store import Atlas
from paperatlas.text import split_sentences
from test_publish_escaping import PAYLOADS, _assert_safe_html

SCREENSHOT = Path("/tmp/h2/site_topic.png")
MD_FORMATS = ("topics-md", "awesome-md")


def _members(atlas: Atlas, t: Topic) -> list[Paper]:
    """The papers of a sub-topic, or of an area's sub-topics."""
    subs = {t.id} | {s.id for s in atlas.topics.values() if s.parent_id == t.id}
    return [p for p in atlas.papers if p.topic_id in subs]


def _write_overviews(atlas: Atlas, k: int = 3) -> dict[int, Topic]:
    """Every topic of ``atlas`` with an overview in the build's form (``"Sentence. [1] Sentence. [2]"``): the first
    sentence of the TL;DR (else the abstract) of ``k`` of its papers, Oral and Spotlight first, each followed by
    ``[n]``; not the build's own choice, so the tests know which papers are cited."""
    topics = copy.deepcopy(atlas.topics)
    for t in topics.values():
        cited = sorted(_members(atlas, t), key=lambda p: (status_rank(p.status), p.id))[:k]
        sentences = [split_sentences(p.tldr or p.abstract)[0] for p in cited]
        t.overview = " ".join(f"{s} [{n}]" for n, s in enumerate(sentences, 1))
        t.overview_papers = [p.id for p in cited]
        t.overview_method = "extractive"
    return topics


@pytest.fixture(scope="module")
def atlas(sample_atlas) -> Atlas:
    return Atlas(sample_atlas)


@pytest.fixture
def topics(atlas) -> dict[int, Topic]:
    return _write_overviews(atlas)


class _Page(HTMLParser):
    """Links (href, text), element ids and visible text of an HTML page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str, str]] = []  # (href, class, text)
        self.ids: set[str] = set()
        self.text: list[str] = []
        self._a: list | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href") is not None:
            self._a = [a["href"], a.get("class") or "", ""]

    def handle_endtag(self, tag):
        if tag == "a" and self._a is not None:
            self.links.append(tuple(self._a))
            self._a = None

    def handle_data(self, data):
        self.text.append(data)
        if self._a is not None:
            self._a[2] += data

    def visible(self) -> str:
        return " ".join("".join(self.text).split())


def _h1(page: Path) -> str:
    """The text of a site page's ``<h1>`` before its bookmark button."""
    return html.unescape(re.search(r"<h1>([^<]*)", page.read_text(encoding="utf-8")).group(1)).strip()


def _section(md: str, heading: str) -> str:
    """The Markdown under the heading line ``heading`` up to the next heading of any level."""
    lines = md.splitlines()
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return "\n".join(lines[start:end])


def _plain(text: str) -> str:
    """An overview as a reader sees it (whitespace folded)."""
    return " ".join(text.split())


# --- Markdown: topics-md and awesome-md --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", MD_FORMATS)
def test_markdown_section_opens_with_the_overview_and_every_n_jumps_to_the_cited_entry(atlas, topics, fmt):
    md = render(fmt, atlas.papers, topics, {})
    html_text = MarkdownIt("commonmark", {"html": True}).render(md)
    page = _Page(html_text)
    shown = page.visible()
    by_id = atlas.by_id
    sections = [t for t in topics.values() if t.level == 1] if fmt == "awesome-md" else list(topics.values())
    for t in sections:
        level = "###" if fmt == "topics-md" and t.level == 1 else "##"
        body = _section(md, f"{level} {t.label}")
        first = body.strip().split("\n\n")[0]
        # the overview is the first paragraph under the heading, then the cited papers with their status
        assert _plain(re.sub(r"\[\\\[(\d)\\\]\]\([^)]*\)", r"[\1]", first)) == _plain(t.overview)
        assert _plain(t.overview) in shown
        cited_line = body.strip().split("\n\n")[1]
        for n, pid in enumerate(t.overview_papers, 1):
            p = by_id[pid]
            anchor = f"paper-{pid}"
            assert f"[\\[{n}\\]](#{anchor})" in first
            assert f"\\[{n}\\] [{p.title}](#{anchor}) ({p.status})" in cited_line
            assert anchor in page.ids  # the link lands on the paper's own entry: its bullet starts with the anchor
            entry = next(line for line in md.splitlines() if f'<a id="{anchor}"></a>' in line)
            assert entry.startswith(f'- <a id="{anchor}"></a>{p.title}')
    # anchors only for the papers the shown overviews cite, each once
    ids = re.findall(r'<a id="(paper-[^"]+)"></a>', md)
    assert sorted(ids) == sorted({f"paper-{pid}" for t in sections for pid in t.overview_papers})


def test_an_empty_overview_shows_nothing(atlas, topics):
    none = copy.deepcopy(topics)
    for t in none.values():
        t.overview, t.overview_papers, t.overview_method = "", [], ""
    for t in topics.values():
        t.overview = ""  # an empty overview shows nothing, even when cited ids were kept
    for fmt in MD_FORMATS:
        before = render(fmt, atlas.papers, none, {})
        assert "Cited:" not in before and "<a id=" not in before
        assert render(fmt, atlas.papers, topics, {}) == before
    t = next(t for t in none.values() if t.level == 1)
    assert re.match(r"\n\d+ papers · ", _section(render("topics-md", atlas.papers, none, {}), f"### {t.label}"))


def test_a_cited_paper_no_longer_in_the_atlas_stays_plain_text(atlas, topics):
    t = next(t for t in topics.values() if t.level == 1)
    gone = t.overview_papers[1]
    t.overview_papers[1] = "no-longer-here"
    t.overview += " A sentence citing past the end. [9]"
    md = render("topics-md", atlas.papers, topics, {})
    first = _section(md, f"### {t.label}").strip().split("\n\n")[0]
    assert "[\\[1\\]](#paper-" in first and "[\\[3\\]](#paper-" in first
    assert " \\[2\\] " in first and first.endswith(" \\[9\\]") and "(#paper-no-longer-here)" not in md
    cited_line = _section(md, f"### {t.label}").strip().split("\n\n")[1]
    assert "\\[1\\]" in cited_line and "\\[2\\]" not in cited_line and "\\[3\\]" in cited_line
    assert atlas.by_id[gone].title not in cited_line


def test_an_edited_overview_without_citations_shows_as_written_and_says_so(atlas, topics):
    t = next(t for t in topics.values() if t.level == 1)
    t.overview, t.overview_papers, t.overview_method = "My own words on these papers.", [], "edit"
    md = render("topics-md", atlas.papers, topics, {})
    body = _section(md, f"### {t.label}").strip().split("\n\n")
    assert body[0] == "My own words on these papers. *(edited by the reader)*"
    assert not body[1].startswith("Cited:")


@pytest.mark.parametrize("fmt", MD_FORMATS + ("highlights-md",))
def test_hostile_overview_text_stays_inert_in_markdown(atlas, topics, fmt):
    hostile = " ".join(PAYLOADS) + " ]]> <script>window.__xss=1</script> [[2]](javascript:x) **bold** `code` [1]."
    for t in topics.values():
        t.overview = hostile
    md = render(fmt, atlas.papers, topics, {})
    html_text = MarkdownIt("commonmark", {"html": True}).render(md)
    doc = _assert_safe_html(html_text)
    shown = " ".join(" ".join(doc.text).split())
    assert "]]> <script>window.__xss=1</script>" in shown and "**bold** `code`" in shown
    assert "<strong>bold" not in html_text


# --- highlights-md: a reading list ----------------------------------------------------------------------------


def test_highlights_area_overview_links_the_listed_papers_headings_and_names_the_others_from_the_atlas(atlas, topics):
    area = max((t for t in topics.values() if t.level == 0), key=lambda t: t.size)
    listed = atlas.by_id[area.overview_papers[0]]
    unlisted = [atlas.by_id[pid] for pid in area.overview_papers[1:]]
    md = highlights([listed], topics.values(), {})
    first, cited_line = _section(md, f"## {area.label}").strip().split("\n\n")[:2]
    anchor = "#" + github_anchor(listed.title)
    assert f"[\\[1\\]]({anchor})" in first and " \\[2\\]" in first and " \\[3\\]" in first
    assert cited_line == f"Cited: \\[1\\] [{listed.title}]({anchor}) ({listed.status})"
    page = _Page(render("highlights-html", [listed], topics.values(), {}))
    assert anchor[1:] in page.ids and (anchor, "", "[1]") in page.links
    # given the atlas's papers, the unlisted cited papers are named too (no URL in this listing: as text)
    md = highlights([listed], topics.values(), {}, cited=atlas.papers)
    cited_line = _section(md, f"## {area.label}").strip().split("\n\n")[1]
    for n, p in enumerate(unlisted, 2):
        assert f"\\[{n}\\] {p.title} ({p.status})" in cited_line


# --- the static site ----------------------------------------------------------------------------------------------


@pytest.fixture
def site(atlas, topics, tmp_path) -> Path:
    return publish("site", atlas.papers, topics, {}, tmp_path / "site")


def test_site_topic_page_shows_the_overview_and_links_each_n_to_the_cited_papers_page(atlas, topics, site):
    for t in topics.values():
        page_path = site / "topic" / f"{t.id}.html"
        page = _Page(page_path.read_text(encoding="utf-8"))
        assert _plain(t.overview) in page.visible()
        cites = [(href, text) for href, cls, text in page.links if cls == "cite"]
        assert [text for _, text in cites] == [f"[{n}]" for n in range(1, len(t.overview_papers) + 1)]
        for (href, _), pid in zip(cites, t.overview_papers, strict=True):
            target = (page_path.parent / href).resolve()
            assert target.exists()
            p = atlas.by_id[pid]
            assert _h1(target) == p.title
            assert (href, "", p.title) in page.links  # the cited list: its title linked, then its status
        for n, pid in enumerate(t.overview_papers, 1):
            assert f"[{n}] {atlas.by_id[pid].title} ({atlas.by_id[pid].status})" in page.visible()


def test_site_missing_cited_paper_and_empty_overview(atlas, topics, tmp_path):
    a, b = [t for t in topics.values() if t.level == 1][:2]
    a.overview_papers[0] = "no-longer-here"
    b.overview = ""
    out = publish("site", atlas.papers, topics, {}, tmp_path / "site")
    html_a = (out / "topic" / f"{a.id}.html").read_text(encoding="utf-8")
    page = _Page(html_a)
    assert [text for _, cls, text in page.links if cls == "cite"] == ["[2]", "[3]"]
    assert _plain(a.overview) in page.visible()  # [1] as plain text
    cited_list = html_a.split('<ul class="cited">')[1].split("</ul>")[0]
    assert "[1]" not in cited_list and "[2]" in cited_list and "[3]" in cited_list
    html_b = (out / "topic" / f"{b.id}.html").read_text(encoding="utf-8")
    assert 'class="overview"' not in html_b and 'class="cited"' not in html_b


def test_site_hostile_overview_is_escaped(atlas, topics, tmp_path):
    t = next(iter(topics.values()))
    t.overview = "<script>window.__xss=1</script> ]]> [x](javascript:alert(1)) <img src=x onerror=alert(2)> [1]."
    out = publish("site", atlas.papers, topics, {}, tmp_path / "site")
    html_text = (out / "topic" / f"{t.id}.html").read_text(encoding="utf-8")
    doc = _assert_safe_html(html_text, scripts_allowed=True)
    assert not [b for b in doc.script_bodies if b.strip()]
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt; ]]&gt;" in html_text
    assert _plain(t.overview) in _Page(html_text).visible()


@pytest.mark.browser
def test_clicking_1_on_a_site_topic_page_opens_the_cited_paper_in_chromium(atlas, tmp_path, browser):
    site = publish("site", atlas.papers, atlas.topics, {}, tmp_path / "site")  # the build's own overviews
    t = max((t for t in atlas.topics.values() if t.level == 1), key=lambda t: (t.size, -t.id))
    cited = atlas.by_id[t.overview_papers[0]]
    ctx = browser.new_context(viewport={"width": 1100, "height": 800})
    page = ctx.new_page()
    page.goto((site / "topic" / f"{t.id}.html").as_uri())
    overview = page.locator("section.overview")
    assert _plain(overview.locator("p").inner_text()) == _plain(t.overview)
    assert overview.locator("ul.cited li").count() == len(t.overview_papers)
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))
    overview.locator("a.cite", has_text="[1]").click()
    page.wait_for_load_state("load")
    assert page.url.endswith(f"/paper/{cited.id}.html")
    assert page.locator("h1").inner_text().startswith(cited.title)
    ctx.close()


# --- the build's own overviews, published through the CLI ----------------------------------------------------------


def test_the_builds_overviews_show_in_topics_md_awesome_md_and_the_site_published_by_the_cli(sample_atlas, atlas,
                                                                                             tmp_path):
    from click.testing import CliRunner

    from paperatlas.cli import main

    assert all(t.overview and t.overview_papers for t in atlas.topics.values())  # the build wrote one per topic
    outs = {fmt: tmp_path / f"{fmt}.md" for fmt in MD_FORMATS} | {"site": tmp_path / "site"}
    for fmt, out in outs.items():
        res = CliRunner().invoke(main, ["publish", "--db", str(sample_atlas), "--format", fmt, "-o", str(out)])
        assert res.exit_code == 0, res.output
    for fmt in MD_FORMATS:
        md = outs[fmt].read_text(encoding="utf-8")
        page = _Page(MarkdownIt("commonmark", {"html": True}).render(md))
        shown = page.visible()
        for t in atlas.topics.values():
            if fmt == "awesome-md" and t.level == 0:
                continue  # the full atlas's awesome list has one section per sub-topic
            assert _plain(t.overview) in shown, (fmt, t.label)
            for n, pid in enumerate(t.overview_papers, 1):
                assert (f"#paper-{pid}", "", f"[{n}]") in page.links and f"paper-{pid}" in page.ids
    for t in atlas.topics.values():
        page_path = outs["site"] / "topic" / f"{t.id}.html"
        page = _Page(page_path.read_text(encoding="utf-8"))
        assert _plain(t.overview) in page.visible()
        cites = [href for href, cls, _ in page.links if cls == "cite"]
        assert len(cites) == len(t.overview_papers)
        for href, pid in zip(cites, t.overview_papers, strict=True):
            assert _h1(page_path.parent / href) == atlas.by_id[pid].title

