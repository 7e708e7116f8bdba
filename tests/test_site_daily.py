"""The static site for daily use (issue 15), opened from file:// in Chromium: honest search, true counts and
pages, shareable URLs, sorting, navigation from every page (map included), links out, Copy BibTeX, author pages."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect

from paperatlas.cli import main
from paperatlas.store import Atlas

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(sample_atlas, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dailysite") / "site"
    res = CliRunner().invoke(main, ["publish", "--db", str(sample_atlas), "--format", "site", "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    yield pg
    ctx.close()


def _titles(page) -> list[str]:
    return page.eval_on_selector_all("#results > li a.result-link", "els => els.map(e => e.textContent)")


def test_a_query_nothing_matches_says_so_and_a_filter_that_empties_the_list_too(site, page):
    page.goto((site / "index.html").as_uri() + "?q=grokking")
    page.wait_for_selector("#honest:not([hidden])")
    assert page.inner_text("#honest") == "No paper mentions “grokking”."
    assert _titles(page) == []
    assert page.locator("#honest").bounding_box()["width"] > 800  # with no facets the message takes the width
    page.goto((site / "index.html").as_uri() + "?q=Hopfield&status=Spotlight")
    page.wait_for_selector("#honest:not([hidden])")
    assert page.inner_text("#honest") == \
        "No paper matching the filters mentions “Hopfield” (2 papers without the filters)."


def test_true_count_pages_show_all_and_the_url_reopens_the_same_view(site, sample_atlas, page):
    n = len(Atlas(sample_atlas).papers)  # 60: one page of 100; use a query-free list sorted by title
    page.goto((site / "index.html").as_uri() + "?sort=title")
    titles = _titles(page)
    assert page.inner_text("#count").startswith(f"{n} papers") and len(titles) == n
    assert titles == sorted(titles, key=lambda t: t.casefold())
    # sort keys this listing has no values for (the ICLR listing has no review scores) are not offered
    assert page.is_visible("#sortbar button[data-sort=topic]") and page.is_hidden("#sortbar button[data-sort=rating]")
    # typing a query writes it into the URL, and the URL restores it
    page.fill("#q", "reinforcement")
    page.wait_for_url(lambda url: "q=reinforcement" in url)
    shown = _titles(page)
    url = page.url
    assert parse_qs(urlparse(url).query)["q"] == ["reinforcement"]
    page.goto("about:blank")
    page.goto(url)
    assert page.input_value("#q") == "reinforcement" and _titles(page) == shown


def test_pages_of_a_long_list(tmp_path, page):
    """A listing longer than a page: numbered pages and "Show all" reach every paper (the ICLR excerpt, 150+)."""
    from conftest import FIXTURES
    from paperatlas.model import Paper, Topic
    from paperatlas.publish.site import write_site
    from paperatlas.sources import read

    papers: list[Paper] = read(FIXTURES / "iclr2021_excerpt.md")
    papers = (papers * (1 + 230 // max(len(papers), 1)))[:230]
    papers = [Paper.from_dict({**p.to_dict(), "id": f"p{i:03d}", "title": f"{p.title} ({i:03d})"})
              for i, p in enumerate(papers)]
    out = write_site(papers, [Topic(id=0, label="All", size=len(papers), level=0)], {}, tmp_path / "s", title="T")
    page.goto((out / "index.html").as_uri() + "?sort=title")
    assert page.inner_text("#count").startswith("230 papers (showing 1–100)")
    first = _titles(page)
    page.click("#pager a.page:text-is('3')")
    assert parse_qs(urlparse(page.url).query)["page"] == ["3"] and len(_titles(page)) == 30
    page.click("#pager a.showall")
    every = _titles(page)
    assert len(every) == 230 and every[:100] == first and len(set(every)) == 230


def test_every_page_links_search_all_papers_topics_and_map_and_the_map_links_back(site, sample_atlas, page):
    atlas = Atlas(sample_atlas)
    p = atlas.papers[0]
    area = atlas.areas()[0]
    for rel in ("index.html", "topics.html", f"paper/{p.id}.html", f"topic/{area.id}.html", "map.html"):
        page.goto((site / rel).as_uri())
        nav = page.eval_on_selector_all("nav.top a", "els => els.map(e => e.textContent.trim())")
        assert {"Search", "All papers", "Topics", "Map"} <= set(nav), rel
    page.goto((site / "topics.html").as_uri())
    assert page.locator("#toc a").count() == len(atlas.topics)
    page.goto((site / "map.html").as_uri())
    page.click("nav.top a:text-is('Topics')")
    assert page.url.endswith("/topics.html")


def test_paper_page_links_out_copies_bibtex_and_author_pages_list_papers_and_coauthors(site, sample_atlas, page):
    atlas = Atlas(sample_atlas)
    p = next(x for x in atlas.papers if x.title == "Hopfield Networks is All You Need")
    page.goto((site / "paper" / f"{p.id}.html").as_uri())
    labels = page.eval_on_selector_all("#outlinks a.out", "els => els.map(e => e.textContent)")
    assert "Search arXiv" in labels and "Search Semantic Scholar" in labels
    page.click("#copybib")
    expect(page.locator("#copybib")).to_have_text("Copied", timeout=10_000)  # no eval: works under a CSP
    bib = page.text_content("#bibtex")
    assert bib.startswith("@") and "title = {Hopfield Networks is All You Need}" in bib
    page.click(f"p.authors a.author:text-is('{p.authors[0]}')")
    assert page.inner_text("h1") == p.authors[0]
    titles = page.eval_on_selector_all("#authorpapers a", "els => els.map(e => e.textContent)")
    assert p.title in titles
    coauthors = page.eval_on_selector_all("#coauthors a.author", "els => els.map(e => e.textContent)")
    assert set(p.authors[1:3]) <= set(coauthors)
    # the search rows link out too
    page.goto((site / "index.html").as_uri() + "?q=Hopfield")
    row_links = page.eval_on_selector_all("#results > li .outlinks a", "els => els.map(e => e.href)")
    assert any(h.startswith("https://arxiv.org/search/?query=") for h in row_links)


def test_a_topic_in_the_url_filters_and_a_topic_page_searches_within_itself(site, sample_atlas, page):
    atlas = Atlas(sample_atlas)
    area = atlas.areas()[0]
    page.goto((site / "topic" / f"{area.id}.html").as_uri())
    n_here = int(page.inner_text("p.meta").split()[0])
    page.click("#topicnav a:text-is('Search within this area')")
    assert parse_qs(urlparse(page.url).query)["topic"] == [str(area.id)]
    # the new page's script fills the filter and the count after the URL has changed: wait for them
    expect(page.locator("#f-area")).to_have_value(f"a{area.id}")
    expect(page.locator("#count")).to_have_text(re.compile(rf"^{n_here} paper"))
    page.select_option("#f-status", "Poster")  # a filter is written back with the topic kept
    page.wait_for_url(lambda url: "status=Poster" in url)
    assert parse_qs(urlparse(page.url).query)["topic"] == [str(area.id)]


def test_the_map_opens_the_sites_paper_pages(site, page):
    page.goto((site / "map.html").as_uri())
    page.wait_for_selector("#atlasmap[data-ready='1']", timeout=60_000)
    page.evaluate("document.getElementById('atlasmap').atlasMap.select([0, 1, 2])")
    link = page.locator(".atlasmap-panel a.atlasmap-title").first
    title = link.text_content()
    link.click()
    page.wait_for_selector("article.paper h1")
    assert "/paper/" in page.url and page.inner_text("article.paper h1").startswith(title)
