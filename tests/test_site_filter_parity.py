"""The static site's in-browser filters list the CLI's papers for the same filters and no query (issue 27 part 5).

``publish --format site`` filters in the browser (``site.js``), the CLI and the web app through
:class:`paperatlas.search.Filters`; the filters both offer (status, topic, year, institution, decision, code, mean
rating, citations, reviewer confidence, rating spread) must pass the same papers. The atlas is
tests/test_one_filter.py's: real-format Paper Copilot records of COLM 2024 (ratings, confidences, citations) and ACL
2022 (code links), records with affiliations (MIT, Mitsubishi Electric Research Labs) and two OpenReview notes (a
decision), opened from ``file://`` in headless Debian Chromium.
"""

from __future__ import annotations

from collections import Counter
from urllib.parse import parse_qs, urlencode

import pytest
from click.testing import CliRunner

from paperatlas.cli import main
from paperatlas.facets import facets_of
from paperatlas.search import Filters, parse_years, search_results
from paperatlas.store import Atlas
from test_one_filter import atlas_db, cli_ids  # noqa: F401 - atlas_db is a fixture

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(atlas_db, tmp_path_factory):  # noqa: F811 - the imported fixture
    out = tmp_path_factory.mktemp("paritysite") / "site"
    res = CliRunner().invoke(main, ["publish", "--db", str(atlas_db), "--format", "site", "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def site_ids(page) -> list[str]:
    """The ids of the papers the site lists now, in its order (every page: ``show=all`` is asked for)."""
    page.wait_for_function("document.getElementById('count').textContent !== ''")
    ids = page.eval_on_selector_all("#results li button.star", "bs => bs.map(b => b.getAttribute('data-id'))")
    n = int(page.inner_text("#count").split()[0].replace(",", ""))
    assert len(ids) == n, (n, ids)
    return ids


def open_site(page, site, args: dict) -> list[str]:
    """The site's search page with ``args`` in its URL (the filters as the site names them), its listed ids."""
    qs = {k: ("1" if v is True else str(v)) for k, v in args.items()}
    page.goto((site / "index.html").as_uri() + "?" + urlencode({**qs, "show": "all"}))
    return site_ids(page)


def asks(atlas: Atlas) -> list[dict]:
    """Filter combinations over the atlas's own values: each filter alone, then several together."""
    papers = atlas.papers
    facets = [facets_of(p) for p in papers]
    statuses = Counter(p.status for p in papers if p.status)
    years = sorted({p.year for p in papers if p.year is not None})
    insts = Counter(i for f in facets for i in f.institutions)
    areas = sorted({t.id for t in atlas.topics.values() if t.parent_id is None})
    subs = sorted({p.topic_id for p in papers if p.topic_id is not None
                   and atlas.topics[p.topic_id].parent_id is not None})
    decision = next(f.decision for f in facets if f.decision)
    assert len(statuses) >= 3 and len(years) >= 2 and areas and decision, (statuses, years, areas)
    out: list[dict] = [{"status": s} for s in statuses]
    out += [{"status": statuses.most_common(1)[0][0].lower()}]  # statuses are case-insensitive
    out += [{"year": y} for y in years]
    out += [{"year": f"{years[0]}-{years[-1]}"}, {"year": f"{years[1]}-"}, {"year": f"-{years[-2]}"},
            {"year": "1999"}]  # ranges, and a year no paper has, typed into the URL as the CLI takes them
    out += [{"topic": t} for t in areas[:3] + subs[:3]]
    out += [{"institution": name} for name, _ in insts.most_common(4)] + [{"institution": "mit"}]
    out += [{"decision": decision}, {"decision": decision.upper()}, {"decision": "Accept (Oral)"}]
    out += [{"has_code": True}, {"min_rating": 6}, {"min_rating": 5.5}, {"min_citations": 10},
            {"min_citations": 100}, {"min_confidence": 3.5}, {"min_confidence": 4}, {"max_spread": 0.5},
            {"max_spread": 1}]
    out += [{"status": statuses.most_common(1)[0][0], "min_rating": 6, "max_spread": 1},
            {"year": years[-1], "institution": insts.most_common(1)[0][0], "min_citations": 5},
            {"topic": areas[0], "has_code": True}, {"year": years[0], "decision": decision.lower()}]
    return out


def engine_ids(atlas: Atlas, args: dict) -> set[str]:
    """The papers :func:`paperatlas.search.search_results` lists for no query and ``args`` as a :class:`Filters`."""
    kw = dict(args)
    if "status" in kw:
        kw["status"] = [kw["status"]]
    if "year" in kw:
        kw["year"] = parse_years(str(kw["year"]))
    if "topic" in kw:
        kw["topic"] = str(kw["topic"])
    return {h.paper.id for h in search_results(atlas, "", filters=Filters(**kw)).hits}


def test_site_filters_list_the_papers_the_cli_lists(atlas_db, site, page):  # noqa: F811
    atlas = Atlas(atlas_db)
    try:
        n_total = len(atlas.papers)
        checked = 0
        for args in asks(atlas):
            cli = cli_ids(atlas_db, "", args)
            got = open_site(page, site, args)
            assert len(got) == len(set(got))
            assert set(got) == set(cli), (args, sorted(set(got) - set(cli)), sorted(set(cli) - set(got)))
            assert set(cli) == engine_ids(atlas, args), args
            checked += bool(cli) and len(cli) < n_total  # a filter that actually narrows the list
        assert checked >= 28
    finally:
        atlas.close()


def test_site_sorts_like_the_cli(atlas_db, site, page):  # noqa: F811
    """Sorted by rating, citations or year: the same values in the same order, papers without the value last."""
    atlas = Atlas(atlas_db)
    try:
        key = {"rating": lambda f, p: f.rating_mean, "citations": lambda f, p: f.citations,
               "year": lambda f, p: p.year}
        by_id = {p.id: p for p in atlas.papers}
        for sort in key:
            for args in ({}, {"has_code": True}, {"min_confidence": 3.5}):
                cli = cli_ids(atlas_db, "", {**args, "sort": sort})
                got = open_site(page, site, {**args, "sort": sort})
                assert set(got) == set(cli), (sort, args)
                values = [[key[sort](facets_of(by_id[i]), by_id[i]) for i in ids] for ids in (got, cli)]
                assert values[0] == values[1], (sort, args)  # ties may be listed in another order
    finally:
        atlas.close()


def test_the_sites_controls_filter_as_its_urls_do(atlas_db, site, page):  # noqa: F811
    """Choosing a status, a year and a facet value on the page lists what the CLI lists for them."""
    atlas = Atlas(atlas_db)
    try:
        status = Counter(p.status for p in atlas.papers if p.status).most_common(1)[0][0]
        year = max(p.year for p in atlas.papers if p.year is not None and p.status == status)
    finally:
        atlas.close()
    page.goto((site / "index.html").as_uri() + "?show=all")
    site_ids(page)
    page.select_option("#f-status", status)
    page.select_option("#f-year", str(year))
    assert set(site_ids(page)) == set(cli_ids(atlas_db, "", {"status": status, "year": year}))
    inst = page.locator("section.facet[data-facet=institution] a.fval").first
    name = inst.locator(".flabel").inner_text()
    inst.click()
    page.wait_for_function("location.search.includes('institution=')")
    assert set(site_ids(page)) == set(cli_ids(atlas_db, "", {"status": status, "year": year, "institution": name}))
    kept = {k: v[0] for k, v in parse_qs(page.evaluate("location.search").lstrip("?")).items()}
    assert kept == {"status": status, "year": str(year), "institution": name}  # the URL keeps the filters


def test_a_year_range_in_the_url_filters_and_its_chip_removes_it(atlas_db, site, page):  # noqa: F811
    """``?year=2019-2021`` (the CLI's --year) is no menu entry: a chip shows it and removes it."""
    atlas = Atlas(atlas_db)
    try:
        years = sorted({p.year for p in atlas.papers if p.year is not None})
        n = len(atlas.papers)
    finally:
        atlas.close()
    span = f"{years[1]}-"
    got = open_site(page, site, {"year": span})
    assert set(got) == set(cli_ids(atlas_db, "", {"year": span})) and 0 < len(got) < n
    chip = page.locator("#chips a.chip[data-param=years]")
    assert chip.inner_text().replace("×", "").strip() == f"year: {span}"
    chip.click()
    page.wait_for_function("!location.search.includes('year=')")
    assert len(site_ids(page)) == n
