"""Facets with counts in the web app, driven in Chromium: counts equal the data, a click filters (and the URL it
leaves is shareable), sort by rating orders the list, and a paper without review scores shows no rating.

The atlas is built (hash stand-in embedder) from tests/fixtures/facets/ (see its ORIGIN.md): the first 30 COLM 2024
papers of the paperlists data (per-review ratings and confidences, citations, affiliations) and the first 30 ACL
2022 papers (affiliations, citations, GitHub links on 10, no review scores).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from urllib.parse import parse_qs, urlparse

import pytest

from conftest import FIXTURES
from paperatlas.build import build
from paperatlas.facets import institutions
from paperatlas.store import Atlas
from paperatlas.web import create_app
from paperatlas.web.security import CSP_MAP
from test_build_safety import HashEmbedder

FACETS = FIXTURES / "facets"

# the sidebar as the reader sees it: {facet: {value label: count}}
SIDEBAR_JS = """() => Object.fromEntries([...document.querySelectorAll('#facets section.facet')].map(s =>
    [s.dataset.facet, Object.fromEntries([...s.querySelectorAll('a.fval')].map(a =>
        [a.querySelector('.flabel').textContent.trim(),
         Number(a.querySelector('.fcount').textContent.replace(/,/g, ''))]))]))"""


def records() -> list[dict]:
    return [*json.loads((FACETS / "colm2024.json").read_text()), *json.loads((FACETS / "acl2022.json").read_text())]


def mean_rating(rec: dict) -> float | None:
    scores = [float(x) for x in rec.get("rating", "").split(";") if x.strip()]
    return sum(scores) / len(scores) if scores else None


@pytest.fixture(scope="module")
def facet_atlas(tmp_path_factory):
    db = tmp_path_factory.mktemp("facets") / "facets.db"
    build([FACETS / "colm2024.json", FACETS / "acl2022.json"], db, embedder=HashEmbedder())
    return db


@pytest.fixture(scope="module")
def app_url(facet_atlas):
    from waitress.server import create_server

    srv = create_server(create_app(facet_atlas, preload_model=False), host="127.0.0.1", port=0, threads=2)
    threading.Thread(target=srv.run, daemon=True).start()
    time.sleep(0.3)
    yield f"http://127.0.0.1:{srv.effective_port}"
    srv.close()


@pytest.fixture
def page(browser):
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    pg.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: problems.append(str(e)))
    pg.add_init_script("""document.addEventListener('securitypolicyviolation',
        e => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));""")
    yield pg
    pg.close()
    assert problems == [], problems


def shown_titles(page) -> list[str]:
    return page.locator("ol.results li.paper .ptitle").all_inner_texts()


def total(page) -> int:
    return int(page.locator("#summary strong").inner_text().replace(",", ""))


@pytest.mark.browser
def test_facet_counts_equal_the_data_and_a_click_filters(facet_atlas, app_url, page):
    recs = records()
    atlas = Atlas(facet_atlas)
    inst_of = {p.title: set(institutions(p)) for p in atlas.papers}
    res = page.goto(app_url + "/?sort=citations")
    assert res.headers["content-security-policy"] == CSP_MAP  # the search page (also the map's): no inline script
    side = page.evaluate(SIDEBAR_JS)
    assert total(page) == len(recs) == 60

    assert side["status"] == dict(Counter(r["status"] for r in recs))  # Poster 30, Long 13, Findings 11, Short 6
    means = [m for r in recs if (m := mean_rating(r)) is not None]
    assert len(means) == 30  # the ACL papers have no review scores: counted nowhere
    assert side["rating"] == {f"≥ {t}": sum(m >= t for m in means) for t in (8, 6, 4) if any(m >= t for m in means)}
    assert "30 of 60 have review scores" in page.inner_text("section.facet[data-facet=rating]")
    with_code = {r["title"] for r in recs if r.get("github", "").startswith("http")}
    assert side["has_code"] == {"code available": len(with_code)} and len(with_code) == 10
    cites = [int(r["gs_citation"]) for r in recs if int(r["gs_citation"]) >= 0]
    assert side["citations"] == {f"≥ {t:,}": sum(c >= t for c in cites) for t in (1000, 100, 10, 1)
                                 if any(c >= t for c in cites)}
    inst_counts = Counter(i for s in inst_of.values() for i in s)
    assert side["institution"] and all(inst_counts[name] == n for name, n in side["institution"].items())
    assert side["institution"]["Google"] == max(inst_counts.values()) == 7  # 5 COLM + 2 ACL, spellings merged
    # sorted by citations: the most cited first
    assert shown_titles(page)[0] == max(recs, key=lambda r: int(r["gs_citation"]))["title"]

    # click an institution: the list is its papers, the URL says so, the counts are over these results now
    page.click("section.facet[data-facet=institution] a.fval:has(.flabel:text-is('Google'))")
    page.wait_for_url(re.compile(r"institution=Google"))
    google = {t for t, s in inst_of.items() if "Google" in s}
    assert set(shown_titles(page)) == google and total(page) == 7
    side = page.evaluate(SIDEBAR_JS)
    assert side["institution"]["Google"] == 7 and sum(side["status"].values()) == 7
    assert page.locator("section.facet[data-facet=institution] a.fval.on").inner_text().startswith("Google")

    # and a rating threshold on top: both filters in the URL, the list is their intersection
    n6 = side["rating"]["≥ 6"]
    page.click("section.facet[data-facet=rating] a.fval:has(.flabel:text-is('≥ 6'))")
    page.wait_for_url(re.compile(r"min_rating=6"))
    mean_of = {r["title"]: mean_rating(r) for r in recs}
    expect = {t for t in google if (mean_of[t] or 0) >= 6 and mean_of[t] is not None}
    assert set(shown_titles(page)) == expect and total(page) == n6 == len(expect) >= 2
    params = parse_qs(urlparse(page.url).query)
    assert params["institution"] == ["Google"] and params["min_rating"] == ["6"] and params["sort"] == ["citations"]
    assert {c.replace("×", "").strip() for c in page.locator("#chips a.chip").all_inner_texts()} == {
        "institution: Google", "rating ≥ 6"}

    # the URL is shareable: opened afresh it lists the same papers
    shared = page.url
    page.goto(app_url + "/")
    page.goto(shared)
    assert set(shown_titles(page)) == expect
    # a chip removes its filter
    page.click("#chips a.chip:has-text('institution: Google')")
    assert "institution=" not in page.url and total(page) == sum(m >= 6 for m in means)

    # has-code: the 10 ACL papers with a GitHub link, each showing it
    page.goto(app_url + "/?has_code=1")
    assert set(shown_titles(page)) == with_code
    assert page.locator("ol.results li.paper .facetline .code").count() == 10


@pytest.mark.browser
def test_sort_by_rating_and_a_paper_without_ratings_shows_none(facet_atlas, app_url, page):
    recs = records()
    page.goto(app_url + "/?q=language")
    n = total(page)
    assert n >= 10 and sum(page.evaluate(SIDEBAR_JS)["status"].values()) == n  # counts over the current results
    page.click("nav.sortbar a.sort[data-sort=rating]")
    page.wait_for_url(re.compile(r"sort=rating"))
    assert "q=language" in page.url and total(page) == n  # same results, another order
    items = page.locator("ol.results li.paper")
    ratings = [items.nth(i).get_attribute("data-rating") for i in range(items.count())]
    rated = [float(r) for r in ratings if r is not None]
    assert rated and rated == sorted(rated, reverse=True)
    first_unrated = ratings.index(None) if None in ratings else len(ratings)
    assert all(r is None for r in ratings[first_unrated:])  # papers without review scores last
    # the shown value is the mean of the listing's per-review scores
    top = items.nth(0)
    title = top.locator(".ptitle").inner_text()
    rec = next(r for r in recs if r["title"] == title)
    assert top.locator(".facetline .rating").inner_text().startswith(f"★ {mean_rating(rec):.1f}")
    # an unrated result shows no rating at all (not 0)
    if first_unrated < len(ratings):
        assert items.nth(first_unrated).locator(".rating").count() == 0

    # the paper page: rating (mean ± spread, n reviews), confidence, citations, institutions
    colm = recs[0]  # ratings 5;7;7;7, confidences 4;3;3;5
    atlas = Atlas(facet_atlas)
    pid = next(p.id for p in atlas.papers if p.title == colm["title"])
    page.goto(f"{app_url}/paper/{pid}")
    facts = page.locator("#facts")
    assert facts.locator(".rating strong").inner_text() == "6.50"
    assert facts.locator(".rating .spread").inner_text() == "± 0.87"
    assert facts.locator(".rating .sub").inner_text() == "4 reviews: 5, 7, 7, 7"
    assert facts.locator(".confidence strong").inner_text() == "3.75"
    assert facts.locator(".citations").inner_text() == str(colm["gs_citation"])
    assert facts.locator("a.inst").all_inner_texts() == ["Singapore University of Technology and Design", "DSO"]
    assert facts.locator(".code").count() == 0  # no code link in the listing: nothing shown
    # an ACL paper: no review scores, so no rating or confidence; its code link and citations are shown
    acl = next(r for r in recs[30:] if r.get("github", "").startswith("http"))
    pid = next(p.id for p in atlas.papers if p.title == acl["title"])
    page.goto(f"{app_url}/paper/{pid}")
    facts = page.locator("#facts")
    assert facts.locator(".rating").count() == 0 and facts.locator(".confidence").count() == 0
    assert "Rating" not in facts.inner_text() and "★" not in page.inner_text("main")
    assert facts.locator(".code a").get_attribute("href") == acl["github"].split(";")[0].strip()
    assert facts.locator(".citations").inner_text() == f"{int(acl['gs_citation']):,}"
    # an institution on the page links to the results filtered by it
    inst = facts.locator("a.inst").first
    name = inst.inner_text()
    inst.click()
    page.wait_for_url(re.compile(r"institution="))
    assert parse_qs(urlparse(page.url).query)["institution"] == [name]
    assert acl["title"] in shown_titles(page)


def test_api_search_gives_facets_and_counts_and_bad_values_are_400(facet_atlas):
    client = create_app(facet_atlas, preload_model=False).test_client()
    res = client.get("/api/search", query_string={"sort": "rating", "k": 60}).get_json()
    assert res["total"] == 60 and len(res["results"]) == 60
    assert [r["rating_mean"] for r in res["results"][30:]] == [None] * 30  # missing, not 0, and last
    assert dict(map(tuple, res["facets"]["status"])) == dict(Counter(r["status"] for r in records()))
    atlas = Atlas(facet_atlas)
    expect = {p.title for p in atlas.papers if "Microsoft" in institutions(p) and any(
        link.kind == "code" for link in p.links)}
    res = client.get("/api/search", query_string={"institution": "microsoft", "has_code": "1", "k": 60}).get_json()
    assert {r["title"] for r in res["results"]} == expect and res["total"] == len(expect) >= 1
    assert all(r["has_code"] and "Microsoft" in r["institutions"] for r in res["results"])
    for bad in ({"min_rating": "abc"}, {"min_rating": "nan"}, {"sort": "stars"}, {"min_citations": "1e3"}):
        assert client.get("/", query_string=bad).status_code == 400, bad


def test_the_served_apps_facet_table_gives_the_same_counts_and_orders(facet_atlas):
    """The served app counts facets and sorts from columns made by its warm-up; the answers must not change."""
    app = create_app(facet_atlas, preload_model=False)
    client = app.test_client()
    asks = [{"q": "language models", "k": 60}, {"q": "language models", "sort": "rating", "k": 60},
            {"sort": "citations", "k": 60}, {"sort": "year", "k": 60}, {"q": "translation", "status": "Poster"},
            {"q": "reasoning", "institution": "microsoft", "sort": "rating"}, {"q": "grokking"}]
    before = [client.get("/api/search", query_string=a).get_json() for a in asks]
    pages = [client.get("/", query_string=a).get_data(as_text=True) for a in asks[:3]]
    assert "facet_table" not in app.extensions["paperatlas"].state
    table = app.extensions["paperatlas"].make_facet_table()
    assert len(table) == 60
    assert [client.get("/api/search", query_string=a).get_json() for a in asks] == before
    assert [client.get("/", query_string=a).get_data(as_text=True) for a in asks[:3]] == pages
    # and the counts are real: more than one status, ratings for the COLM half, citations, institutions
    facets = before[2]["facets"]
    assert len(facets["status"]) >= 2 and facets["institution"]
    assert before[1]["results"][0]["rating_mean"] == max(r["rating_mean"] for r in before[1]["results"]
                                                         if r["rating_mean"] is not None)
