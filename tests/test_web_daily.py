"""The web app as a researcher keeps it open (issue 15), driven in Chromium: honest search, every paper reachable,
links out, author pages, ambiguity, actions in place."""

from __future__ import annotations

import shutil
import threading
import time
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from paperatlas import readinglist as rl
from paperatlas.latex import title_text
from paperatlas.store import Atlas
from paperatlas.web import create_app

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def live(sample_atlas, tmp_path_factory):
    """``(atlas copy, base URL)``: the app over a private copy, with the query model loaded (hybrid search)."""
    from waitress.server import create_server

    db = tmp_path_factory.mktemp("daily") / "atlas.db"
    shutil.copy(sample_atlas, db)
    app = create_app(db, preload_model=True)
    client = app.test_client()
    deadline = time.time() + 120
    while client.get("/api/search?q=x").get_json()["mode"] != "hybrid" and time.time() < deadline:
        time.sleep(0.2)
    srv = create_server(app, host="127.0.0.1", port=0, threads=2)
    threading.Thread(target=srv.run, daemon=True).start()
    time.sleep(0.3)
    yield db, f"http://127.0.0.1:{srv.effective_port}"
    srv.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900},
                              permissions=["clipboard-read", "clipboard-write"])
    pg = ctx.new_page()
    yield pg
    ctx.close()


def _titles(page, selector: str = "ol.results > li.paper") -> list[str]:
    return page.eval_on_selector_all(f"{selector} a.ptitle", "els => els.map(e => e.textContent.trim())")


def test_a_query_nothing_is_about_says_so_and_fills_nothing(live, page):
    _, base = live
    page.goto(base + "/?q=grokking")
    assert page.inner_text("#honest") == "No paper mentions “grokking”, and none is close in meaning."
    assert _titles(page) == []
    # a misspelling is searched as the word it meant, and says so
    page.goto(base + "/?q=hopfeld")
    assert "Showing results for “hopfield”" in page.inner_text("#corrected")
    assert all("Hopfield" in t for t in _titles(page)[:2])


def test_words_first_then_meaning_only_results_marked(live, page):
    _, base = live
    page.goto(base + "/?q=adversarial+robustness")
    matches = page.eval_on_selector_all("ol.results > li.paper", "els => els.map(e => e.dataset.match)")
    n_kw = matches.index("meaning")
    assert n_kw >= 2 and set(matches[:n_kw]) <= {"keyword", "partial"} and set(matches[n_kw:]) == {"meaning"}
    assert page.locator("li.tierhead").count() == 1
    # the divider is not a result: the first meaning match is numbered right after the last keyword match
    assert page.get_attribute("ol.results > li.paper.meaning >> nth=0", "value") == str(n_kw + 1)
    assert page.locator("ol.results > li.paper[value]").count() == 1
    assert page.locator("li.paper.meaning .matchnote").first.inner_text() == "related in meaning"
    # a filter that removes every paper with the words says so instead of listing unrelated ones
    page.goto(base + "/?q=Hopfield&status=Spotlight")
    assert "No paper matching the filters mentions “Hopfield” (2 papers without the filters)" \
        in page.inner_text("#honest")


def test_true_counts_pages_and_show_all_reach_every_paper(live, page):
    db, base = live
    posters = [title_text(p.title) for p in Atlas(db).papers if p.status == "Poster"]  # titles shown as text
    assert len(posters) > 50
    page.goto(base + "/?status=Poster")
    assert page.inner_text("#summary").startswith(f"{len(posters)} papers")
    first = _titles(page)
    assert len(first) == 50
    page.click("nav.pager a.page:text-is('2')")
    assert parse_qs(urlparse(page.url).query) == {"status": ["Poster"], "page": ["2"]}
    assert first + _titles(page) == posters
    page.click("nav.pager a.showall")
    assert _titles(page) == posters and page.locator("nav.pager a.page").count() == 0
    # the URL is the state: opening it anew shows the same page
    page.goto(base + "/?status=Poster&page=2")
    assert _titles(page) == posters[50:]


def test_all_papers_sortable_and_every_page_links_to_topics_map_and_papers(live, page):
    db, base = live
    atlas = Atlas(db)
    page.goto(base + "/papers")
    assert page.inner_text("#summary").startswith(f"{len(atlas.papers)} papers")
    with page.expect_navigation():
        page.click("nav.pager a.showall")
    page.wait_for_selector("ol.results > li.paper")
    titles = _titles(page)
    assert titles == sorted(titles, key=lambda t: " ".join(t.split()).casefold()) and len(titles) == len(atlas.papers)
    page.click("a.sort[data-sort='status']")
    statuses = page.eval_on_selector_all("ol.results > li.paper", "els => els.map(e => e.querySelector('.badge')"
                                         " ? e.querySelector('.badge').textContent : '')")
    order = {"Oral": 0, "Spotlight": 1, "Poster": 2}
    assert [order[s] for s in statuses] == sorted(order[s] for s in statuses)
    topic = atlas.areas()[0]
    for path in ("/", "/papers", "/topics", f"/topic/{topic.id}", "/map", "/list", "/foryou",
                 f"/paper/{atlas.papers[0].id}"):
        page.goto(base + path)
        nav = page.eval_on_selector_all("header.top nav a", "els => els.map(e => e.textContent)")
        assert {"Search", "All papers", "Topics", "Map", "Reading list", "For you"} <= set(nav), path
    page.goto(base + f"/topic/{topic.id}")
    hrefs = page.eval_on_selector_all("#topicnav a", "els => els.map(e => e.getAttribute('href'))")
    assert f"/?topic={topic.id}" in hrefs and f"/map?topic={topic.id}" in hrefs


def test_paper_page_links_out_copies_bibtex_and_links_authors(live, page):
    db, base = live
    p = Atlas(db).by_id[next(x.id for x in Atlas(db).papers if x.title == "Hopfield Networks is All You Need")]
    page.goto(base + f"/paper/{p.id}")
    links = page.eval_on_selector_all("#outlinks a.out", "els => els.map(e => [e.textContent, e.href])")
    labels = [x[0] for x in links]
    # the ICLR 2021 listing has only code links: title searches on arXiv and Semantic Scholar take their place
    assert "Search arXiv" in labels and "Search Semantic Scholar" in labels
    arxiv = dict(links)["Search arXiv"]
    assert arxiv.startswith("https://arxiv.org/search/?query=Hopfield+Networks+is+All+You+Need")
    page.bring_to_front()  # the clipboard API needs a focused document
    page.click("#copybib")
    expect(page.locator("#copybib")).to_have_text("Copied", timeout=10_000)  # no eval: works under the CSP
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("@inproceedings{") and "title = {Hopfield Networks is All You Need}" in copied
    assert "url = {" in copied
    # an author's name opens their page: their papers and co-authors
    first_author = p.authors[0]
    page.click(f"p.authors a.author:text-is('{first_author}')")
    assert page.inner_text("h1") == first_author
    assert p.title in _titles(page, "#authorpapers > li.paper")
    coauthors = page.eval_on_selector_all("#coauthors a.author", "els => els.map(e => e.textContent)")
    assert set(p.authors[1:4]) <= set(coauthors)


def test_an_ambiguous_title_fragment_asks_which_paper(live, page):
    _, base = live
    resp = page.goto(base + "/paper/Hopfield")
    assert resp.status == 300
    assert "“Hopfield” matches 2 papers" in page.inner_text("#choose")
    assert len(_titles(page, "#candidates > li.paper")) == 2


def test_like_add_and_more_like_this_in_place_on_results_and_for_you(live, page):
    db, base = live
    page.goto(base + "/?q=adversarial+robustness")
    page.evaluate("window.__stayed = true")
    row = page.locator("ol.results > li.paper").first
    pid = row.get_attribute("data-id")
    row.locator("button.like").click()
    row.locator("button.like.on").wait_for()
    row.locator("button.add").click()
    row.locator("button.add.on").wait_for()
    assert row.locator("button.like span").inner_text() == "Liked"
    assert page.evaluate("window.__stayed === true")  # no reload, no navigation
    mine = {e.paper_id: e for e in rl.entries(db)}[pid]
    assert mine.rating == 1 and "reading" in mine.lists
    row.locator("a.more").click()
    row.locator(".morelike li").first.wait_for()
    assert row.locator(".morelike li").count() == 5
    # For you rows carry the same actions; a disliked recommendation leaves the list at the next visit
    page.goto(base + "/foryou")
    first = page.locator("#recs > li.paper").first
    rec = first.get_attribute("data-id")
    first.locator("button.dislike").click()
    first.locator("button.dislike.on").wait_for()
    page.goto(base + "/foryou")
    assert rec not in page.eval_on_selector_all("#recs > li.paper", "els => els.map(e => e.dataset.id)")
    rl.rate(db, pid, 0)
    rl.remove(db, pid, "reading")
    rl.rate(db, rec, 0)


def test_api_search_gives_true_total_offsets_match_kinds_and_messages(live):
    db, base = live
    import json
    import urllib.request

    def get(q: str) -> dict:
        with urllib.request.urlopen(base + "/api/search?" + q) as r:
            return json.loads(r.read())

    n_posters = sum(p.status == "Poster" for p in Atlas(db).papers)
    a, b = get("status=Poster&k=20"), get("status=Poster&k=20&offset=20")
    assert a["total"] == b["total"] == n_posters and b["offset"] == 20
    assert {r["id"] for r in a["results"]}.isdisjoint(r["id"] for r in b["results"])
    miss = get("q=grokking")
    assert miss["total"] == 0 and miss["message"].startswith("No paper mentions “grokking”")
    hyb = get("q=adversarial+robustness")
    assert hyb["results"][0]["match"] == "keyword" and hyb["results"][-1]["match"] == "meaning"
    assert all(r["links"] for r in hyb["results"])
