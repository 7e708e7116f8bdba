"""Facets with counts in the static site (``publish --format site``), opened from ``file://`` in Chromium: counts
equal the data, a click filters (the URL keeps it), sort by rating orders the list, a paper without review scores
shows no rating. Same atlas as tests/test_web_facets.py (tests/fixtures/facets/, see its ORIGIN.md)."""

from __future__ import annotations

import json
import re
from collections import Counter
from urllib.parse import parse_qs, urlparse

import pytest
from click.testing import CliRunner

from paperatlas.cli import main
from paperatlas.facets import institutions
from paperatlas.store import Atlas
from test_web_facets import SIDEBAR_JS, facet_atlas, mean_rating, records  # noqa: F401 - facet_atlas is a fixture


@pytest.fixture(scope="module")
def site(facet_atlas, tmp_path_factory):  # noqa: F811 - the imported fixture
    out = tmp_path_factory.mktemp("facetsite") / "site"
    res = CliRunner().invoke(main, ["publish", "--db", str(facet_atlas), "--format", "site", "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def site_data(site) -> dict:
    text = (site / "data" / "papers.js").read_text(encoding="utf-8")
    return json.loads(text.removeprefix("window.ATLAS = ").rstrip().removesuffix(";"))


def shown(page) -> list[str]:
    return page.locator("#results a.result-link").all_text_contents()


def test_the_site_data_carries_the_facets_and_leaves_missing_ones_out(site):
    rows = {r["title"]: r for r in site_data(site)["papers"]}
    for rec in records():
        row = rows[rec["title"]]
        if mean_rating(rec) is None:  # ACL: no review scores -> no rating key at all (never 0)
            assert not {"rating", "spread", "reviews", "confidence"} & set(row)
        else:
            assert row["rating"] == round(mean_rating(rec), 2) and row["reviews"] == len(rec["rating"].split(";"))
        assert row["citations"] == int(rec["gs_citation"])
        assert bool(row.get("code")) == rec.get("github", "").startswith("http")


@pytest.mark.browser
def test_site_facet_counts_filter_sort_and_url_from_file_url(site, facet_atlas, page):  # noqa: F811
    recs = records()
    atlas = Atlas(facet_atlas)
    try:
        inst_of = {p.title: set(institutions(p)) for p in atlas.papers}
    finally:
        atlas.close()
    index = (site / "index.html").as_uri()
    page.goto(index)
    page.wait_for_selector("#results li")
    assert page.inner_text("#count") == "60 papers"
    side = page.evaluate(SIDEBAR_JS)
    assert side["status"] == dict(Counter(r["status"] for r in recs))
    means = [m for r in recs if (m := mean_rating(r)) is not None]
    assert side["rating"] == {f"≥ {t}": sum(m >= t for m in means) for t in (8, 6, 4) if any(m >= t for m in means)}
    assert side["has_code"] == {"code available": sum(r.get("github", "").startswith("http") for r in recs)}
    inst_counts = Counter(i for s in inst_of.values() for i in s)
    assert all(inst_counts[name] == n for name, n in side["institution"].items()) and side["institution"]["Google"] == 7

    # click a facet value: the list is its papers, the counts are over them, the URL keeps the filter
    page.click("section.facet[data-facet=institution] a.fval:has(.flabel:text-is('Google'))")
    google = {t for t, s in inst_of.items() if "Google" in s}
    assert set(shown(page)) == google and page.inner_text("#count") == "7 papers"
    assert page.evaluate(SIDEBAR_JS)["institution"]["Google"] == 7
    assert parse_qs(urlparse(page.url).query)["institution"] == ["Google"]

    # sort by rating: rated papers highest first, the ones without review scores last and without a rating
    page.click("#sortbar button[data-sort=rating]")
    assert parse_qs(urlparse(page.url).query)["sort"] == ["rating"]
    items = page.locator("#results li")
    ratings = [items.nth(i).get_attribute("data-rating") for i in range(items.count())]
    rated = [float(r) for r in ratings if r is not None]
    assert len(rated) == 5 and rated == sorted(rated, reverse=True) and ratings[5:] == [None, None]
    assert items.nth(6).locator(".rating").count() == 0 and "★" not in items.nth(6).inner_text()
    # the two ACL papers of Google are last, in the default order
    assert set(shown(page)[5:]) == {r["title"] for r in recs[30:] if r["title"] in google}

    # a rating threshold on top; the URL, opened afresh, lists the same papers
    page.click("section.facet[data-facet=rating] a.fval:has(.flabel:text-is('≥ 6'))")
    expect = [t for t in shown(page)]
    mean_of = {r["title"]: mean_rating(r) for r in recs}
    assert set(expect) == {t for t in google if mean_of[t] is not None and mean_of[t] >= 6} and len(expect) >= 2
    url = page.url
    assert {k: v[0] for k, v in parse_qs(urlparse(url).query).items()} == {
        "institution": "Google", "min_rating": "6", "sort": "rating"}
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_selector("#results li")
    assert shown(page) == expect
    assert {c.replace("×", "").strip() for c in page.locator("#chips a.chip").all_inner_texts()} == {
        "institution: Google", "rating ≥ 6"}
    page.click("#chips a.chip:has-text('rating')")  # a chip removes its filter
    assert set(shown(page)) == google and "min_rating" not in page.url


@pytest.mark.browser
def test_site_paper_pages_show_facts_when_present(site, page):
    recs = records()
    rows = {r["title"]: r for r in site_data(site)["papers"]}
    colm = recs[0]  # ratings 5;7;7;7, confidences 4;3;3;5
    page.goto((site / "paper" / f"{rows[colm['title']]['file']}.html").as_uri())
    facts = page.locator("#facts")
    assert facts.locator(".rating strong").inner_text() == "6.50"
    assert facts.locator(".rating .spread").inner_text() == "± 0.87"
    assert facts.locator(".rating .sub").inner_text() == "4 reviews: 5, 7, 7, 7"
    assert facts.locator(".confidence strong").inner_text() == "3.75"
    assert facts.locator(".citations").inner_text() == str(colm["gs_citation"])
    acl = next(r for r in recs[30:] if r.get("github", "").startswith("http"))
    page.goto((site / "paper" / f"{rows[acl['title']]['file']}.html").as_uri())
    facts = page.locator("#facts")
    assert facts.locator(".rating").count() == 0 and "Rating" not in facts.inner_text()
    assert facts.locator(".code a").get_attribute("href") == acl["github"].split(";")[0].strip()
    # an institution links to the search page filtered by it
    inst = facts.locator("a.inst").first
    name = inst.inner_text()
    inst.click()
    page.wait_for_selector("#results li")
    assert parse_qs(urlparse(page.url).query)["institution"] == [name]
    assert acl["title"] in shown(page)
    assert re.fullmatch(r"\d+ papers?", page.inner_text("#count"))
