"""Topic trends (issue 17, part 2) on a real NeurIPS atlas: the CLI, the statistics, the web pages, the exports.

The fixture ``fixtures/nips_trends/nips{1988,1992,...,2016}.json.gz`` is cut from the Paper Copilot paperlists
dumps in ``../shared/data/paperlists/nips``: of each of those 8 years, 40 records with an abstract, evenly spaced
through the file (``records[int(i * len / 40)]``, ``i`` = 0..39), kept as they are and gzipped like the dumps (320
papers; the file name gives the venue and year, as for the dumps). The atlas is built once for the module with the
real embedding model.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy import stats

from conftest import FIXTURES
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.publish import FORMATS
from paperatlas.publish.site import write_site
from paperatlas.store import Atlas
from paperatlas.trends import MIN_PAPERS, venue_shares, year_trends

LISTINGS = sorted((FIXTURES / "nips_trends").glob("nips*.json.gz"))


@pytest.fixture(scope="module")
def nips_db(tmp_path_factory) -> Path:
    """The 320-paper NeurIPS 1988-2016 atlas (read-only)."""
    db = tmp_path_factory.mktemp("nips") / "nips.db"
    build(LISTINGS, db)
    return db


@pytest.fixture(scope="module")
def nips(nips_db):
    atlas = Atlas(nips_db)
    yield atlas
    atlas.close()


def _trends_cli(*args: str):
    return CliRunner().invoke(main, ["trends", *args])


def _rows(output: str, heading: str) -> list[tuple[str, float, float, float]]:
    """``(label, slope, low, high)`` of the table under ``heading`` (``"Rising"`` / ``"Falling"``) as printed."""
    block = output.split(f"\n{heading}:", 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in block.splitlines():
        m = re.match(r"\s+\d+\s+(.+?)\s+([+-]\d+\.\d\d)\s+\[([+-]\d+\.\d\d), ([+-]\d+\.\d\d)\]", line)
        if m:
            rows.append((m[1], float(m[2]), float(m[3]), float(m[4])))
    return rows


@pytest.mark.parametrize("level", ["topic", "area"])
def test_cli_names_rising_and_falling_topics_with_slopes_and_intervals(nips, nips_db, level):
    res = _trends_cli("--db", str(nips_db), "--level", level, "--top", "3")
    assert res.exit_code == 0, res.output
    assert "percentage points per year" in res.output and "95% interval" in res.output
    rising, falling = _rows(res.output, "Rising"), _rows(res.output, "Falling")
    assert rising or falling  # NeurIPS moved between 1988 and 2016: something rose or fell
    assert len(rising) <= 3 and len(falling) <= 3
    for _, slope, lo, hi in rising:  # named rising only when the whole interval is above 0
        assert 0 < lo <= slope <= hi
    for _, slope, lo, hi in falling:
        assert lo <= slope <= hi < 0
    assert [r[1] for r in rising] == sorted((r[1] for r in rising), reverse=True)  # fastest first
    assert [r[1] for r in falling] == sorted(r[1] for r in falling)
    yt = year_trends(nips.papers, nips.topics, level)
    shown = [t.topic.label if len(t.topic.label) <= 40 else t.topic.label[:39] + "…" for t in yt.rising[:3]]
    assert [r[0] for r in rising] == shown  # a long label is cut with an ellipsis
    assert f"{len(yt.trends)} {level}s" in res.output.splitlines()[0]
    assert re.search(r"Flat: \d+", res.output)


def test_since_fits_the_recent_years_only(nips, nips_db):
    res = _trends_cli("--db", str(nips_db), "--since", "2000")
    assert res.exit_code == 0, res.output
    assert "in 5 years 2000-2016" in res.output.splitlines()[0]
    recent = year_trends([p for p in nips.papers if p.year >= 2000], nips.topics, "topic")
    assert [r[1] for r in _rows(res.output, "Rising")] == [round(t.slope * 100, 2) for t in recent.rising[:5]]


def test_slope_and_interval_are_scipys_ols_of_the_yearly_share(nips):
    yt = year_trends(nips.papers, nips.topics, "topic")
    per_year: dict[int, int] = {}
    for p in nips.papers:
        per_year[p.year] = per_year.get(p.year, 0) + 1
    years = sorted(y for y, n in per_year.items() if n >= MIN_PAPERS)
    assert list(yt.years) == years
    assert len(yt.trends) == len({p.topic_id for p in nips.papers})
    t_crit = stats.t.ppf(0.975, len(years) - 2)
    for tr in yt.trends:
        shares = [sum(p.year == y and p.topic_id == tr.topic.id for p in nips.papers) / per_year[y] for y in years]
        fit = stats.linregress(years, shares)
        assert tr.slope == pytest.approx(fit.slope, abs=1e-12)
        assert tr.stderr == pytest.approx(fit.stderr, abs=1e-12)
        assert (tr.ci_low, tr.ci_high) == pytest.approx((fit.slope - t_crit * fit.stderr,
                                                         fit.slope + t_crit * fit.stderr))
        expected = "rising" if tr.ci_low > 0 else "falling" if tr.ci_high < 0 else "flat"
        assert tr.direction == expected


def test_years_with_few_papers_are_left_out_and_said(nips):
    sparse_year = nips.papers[-1].year
    kept = [p for p in nips.papers if p.year != sparse_year] + [p for p in nips.papers if p.year == sparse_year][:10]
    yt = year_trends(kept, nips.topics, "topic")
    assert sparse_year not in yt.years and yt.sparse_years == {sparse_year: 10}
    assert all(sparse_year not in t.years for t in yt.trends)


def test_a_single_year_atlas_gets_a_clear_error(sample_atlas):
    res = _trends_cli("--db", str(sample_atlas))
    assert res.exit_code == 1
    assert "trends need at least 3 years" in res.output and "2021: 60" in res.output
    assert "Traceback" not in res.output


def test_trends_page_offers_the_last_ten_years_only_to_an_atlas_that_spans_more(nips_db, sample_atlas):
    from paperatlas.web import create_app

    client = create_app(nips_db, preload_model=False).test_client()
    page = client.get("/trends").get_data(as_text=True)
    assert "The last ten years (since 2007)" in page  # 1988-2016
    page = client.get("/trends?since=2007").get_data(as_text=True)
    assert "since 2007</strong>" in page and "All years</a>" in page
    one_year = create_app(sample_atlas, preload_model=False).test_client().get("/trends").get_data(as_text=True)
    assert "trends need at least 3 years" in one_year and "last ten years" not in one_year


def test_too_high_min_papers_and_one_venue_say_what_is_wrong(nips_db):
    res = _trends_cli("--db", str(nips_db), "--min-papers", "41")  # every year has 40 papers
    assert res.exit_code == 1 and "this atlas has 0 (1988: 40" in res.output
    res = _trends_cli("--db", str(nips_db), "--by", "venue")
    assert res.exit_code == 1 and "one (NeurIPS)" in res.output


def test_shares_by_venue_cover_each_venue_with_wilson_intervals(nips):
    import dataclasses

    # the conference was called NIPS until 2018: the 1990s papers under that name make a second venue
    papers = [dataclasses.replace(p, venue=f"NIPS {p.year}") if p.year < 2000 else p for p in nips.papers]
    vs = venue_shares(papers, nips.topics, "area")
    assert vs.venues == ("NeurIPS", "NIPS") and vs.totals == (200, 120)
    for j, n in enumerate(vs.totals):
        assert sum(counts[j] for _, counts, _, _ in vs.rows) == n  # every paper of the venue is in one area
        assert sum(shares[j] for _, _, shares, _ in vs.rows) == pytest.approx(1.0)
    for _, counts, shares, cis in vs.rows:
        for c, n, s, (lo, hi) in zip(counts, vs.totals, shares, cis, strict=True):
            ci = stats.binomtest(c, n).proportion_ci(method="wilson")
            assert lo <= s <= hi and (lo, hi) == pytest.approx((ci.low, ci.high))


def test_topics_markdown_carries_the_trends(nips):
    yt = year_trends(nips.papers, nips.topics, "topic")
    md = FORMATS["topics-md"](nips.papers, list(nips.topics.values()), None, "")
    section = md.split("## Trends", 1)[1].split("\n## ", 1)[0]
    assert "OLS slope" in section and "95% interval" in section
    for t in (yt.rising + yt.falling)[:5]:
        assert f"{t.slope * 100:+.2f} | [{t.ci_low * 100:+.2f}, {t.ci_high * 100:+.2f}]" in section
    moving = (yt.rising + yt.falling)[0]
    page = md.split(f"### {moving.topic.label}\n", 1)[1].split("\n### ", 1)[0]
    assert f"Trend: {moving.direction} {moving.slope * 100:+.2f} pp/yr (95% CI" in page


def test_static_site_has_a_trends_page_and_topic_charts(nips, tmp_path):
    yt = year_trends(nips.papers, nips.topics, "topic")
    site = write_site(nips.papers, nips.topics, {}, tmp_path / "site")
    page = (site / "trends.html").read_text(encoding="utf-8")
    assert page.count("data-trendchart") == 2 and 'assets/plotly.min.js' in page
    assert 'href="trends.html">Trends</a>' in (site / "index.html").read_text(encoding="utf-8")
    for t in yt.rising[:5] + yt.falling[:5]:
        assert f'<a href="topic/{t.topic.id}.html">' in page and f"{t.slope * 100:+.2f}" in page
    moving = (yt.rising + yt.falling)[0]
    topic_page = (site / "topic" / f"{moving.topic.id}.html").read_text(encoding="utf-8")
    assert "data-trendchart" in topic_page and f"{moving.direction} {moving.slope * 100:+.2f} pp/yr" in topic_page
    assert (site / "assets" / "plotly.min.js").stat().st_size > 1_000_000  # bundled, no CDN


@pytest.fixture
def nips_served(nips_db, tmp_path):
    """The web app over a copy of the NeurIPS atlas on a free loopback port."""
    import shutil

    from waitress.server import create_server

    from paperatlas.web import create_app

    db = tmp_path / "nips.db"
    shutil.copy(nips_db, db)
    srv = create_server(create_app(db, preload_model=False), host="127.0.0.1", port=0, threads=2)
    threading.Thread(target=srv.run, daemon=True).start()
    time.sleep(0.3)
    yield f"http://127.0.0.1:{srv.effective_port}"
    srv.close()


def _drawn(page, n: int) -> list[str]:
    """Wait until ``n`` trend charts are drawn; their legend texts (one per line drawn)."""
    page.wait_for_function(f"document.querySelectorAll('[data-trendchart][data-ready]').length == {n}",
                           timeout=60_000)
    return page.eval_on_selector_all("[data-trendchart] .legendtext", "els => els.map(e => e.textContent)")


@pytest.mark.browser
def test_trends_page_and_topic_page_draw_the_chart(nips, nips_served, browser, tmp_path):
    yt = year_trends(nips.papers, nips.topics, "topic")
    errors: list[str] = []
    page = browser.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(nips_served + "/")
    page.click("header nav >> text=Trends")
    legends = _drawn(page, 2)
    for t in yt.rising[:5] + yt.falling[:5]:  # the fastest rising and falling topics, each named with its slope
        assert f"{t.topic.label} ({t.slope * 100:+.2f} pp/yr)" in legends, legends
    lines = page.locator("[data-trendchart] .scatterlayer .trace").count()
    assert lines >= 2 * len(yt.rising[:5] + yt.falling[:5])  # each topic's yearly shares and its fitted slope
    assert page.locator("#rising tbody tr").count() == min(5, len(yt.rising))
    assert page.locator("#falling tbody tr").count() == min(5, len(yt.falling))
    moving = (yt.rising + yt.falling)[0]
    page.click(f"#{moving.direction} >> text={moving.topic.label}")
    _drawn(page, 1)
    assert f"{moving.direction} {moving.slope * 100:+.2f} pp/yr" in page.inner_text("#trend")
    assert page.locator("[data-trendchart] .scatterlayer .trace").count() == 2
    site = write_site(nips.papers, nips.topics, {}, tmp_path / "site")
    page.goto((site / "trends.html").as_uri())  # the static site from disk: Plotly from assets/, no network
    assert f"{moving.topic.label} ({moving.slope * 100:+.2f} pp/yr)" in _drawn(page, 2)
    assert not errors, errors
    page.close()
