"""``publish --format site``: a static website folder that works from ``file://`` (search, pages, bookmarks)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from click.testing import CliRunner

from paperatlas.cli import main
from paperatlas.model import Link, Paper, Topic
from paperatlas.publish import publish
from paperatlas.publish.site import first_load_bytes, write_site
from paperatlas.store import Atlas

LIMIT = 3 * 1024 * 1024


@pytest.fixture(scope="module")
def site(sample_atlas, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "out"
    result = CliRunner().invoke(main, ["publish", "--db", str(sample_atlas), "--format", "site", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert str(out) in result.output
    return out


def _tiny(title: str = "Plain title") -> tuple[list[Paper], list[Topic]]:
    topics = [Topic(id=0, label="Area <A>", size=2, level=0), Topic(id=1, label="Sub & topic", size=2, parent_id=0)]
    papers = [Paper(title=title, authors=["Ann <b>"], id="p1", status="Oral", venue="ICLR 2021", year=2021,
                    tldr="Uses <script>alert(1)</script>.", keyphrases=["k<1>"], topic_id=1, x=0.0, y=0.0,
                    links=[Link("https://example.org/a", "paper"), Link("javascript:alert(1)", "code")]),
              Paper(title="Second", id="p2", status="Poster", topic_id=1, x=1.0, y=1.0)]
    return papers, topics


def test_site_layout_and_first_load_size(site, sample_atlas):
    atlas = Atlas(sample_atlas)
    try:
        ids = [p.id for p in atlas.papers]
        topic_ids = list(atlas.topics)
    finally:
        atlas.close()
    assert (site / "index.html").is_file() and (site / "map.html").is_file()
    assert (site / "data" / "papers.js").read_text(encoding="utf-8").startswith("window.ATLAS = ")
    assert sorted(p.stem for p in (site / "paper").glob("*.html")) == sorted(ids)
    assert sorted(int(p.stem) for p in (site / "topic").glob("*.html")) == sorted(topic_ids)
    assert (site / "assets" / "minisearch.LICENSE.txt").is_file()
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "map.html" in index and "plotly" not in index.lower()
    assert not re.search(r"""(?:src|href)=["'](?:https?:)?//""", index)  # no CDN
    assert 0 < first_load_bytes(site) < LIMIT
    # Plotly.js ships once, for the map and the trend charts: the map loads the site's copy
    plotly = (site / "assets" / "plotly.min.js").read_text(encoding="utf-8")
    the_map = (site / "map.html").read_text(encoding="utf-8")
    assert len(plotly) > 1_000_000 and '<script src="assets/plotly.min.js"></script>' in the_map
    assert len(the_map) < 200_000 and plotly[:2000] not in the_map


def test_site_escapes_text_and_drops_unsafe_links(tmp_path):
    papers, topics = _tiny("Attention <is> all & you need")
    out = write_site(papers, topics, {"p1": ["p2"]}, tmp_path / "s", title="T <x>")
    page = (out / "paper" / "p1.html").read_text(encoding="utf-8")
    assert "Attention &lt;is&gt; all &amp; you need" in page and "<is>" not in page
    assert "<script>alert" not in page and "Ann &lt;b&gt;" in page
    assert "javascript:" not in page and "https://example.org/a" in page
    assert 'href="p2.html"' in page and 'href="../topic/1.html"' in page and 'href="../topic/0.html"' in page
    topic = (out / "topic" / "0.html").read_text(encoding="utf-8")
    assert "Area &lt;A&gt;" in topic and topic.index("p1.html") < topic.index("p2.html")  # Oral before Poster
    data = (out / "data" / "papers.js").read_text(encoding="utf-8")
    assert "<" not in data and "\\u003cis\\u003e" in data


def test_site_replaces_an_older_site_atomically(tmp_path, monkeypatch):
    papers, topics = _tiny()
    out = tmp_path / "s"
    publish("site", papers, topics, {}, out)
    (out / "notes.txt").write_text("mine", encoding="utf-8")  # a file publish did not write: refused, kept
    with pytest.raises(FileExistsError, match="notes.txt"):
        publish("site", papers[:1], topics, {}, out, title="New")
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine" and (out / "paper" / "p2.html").is_file()
    (out / "notes.txt").unlink()
    publish("site", papers[:1], topics, {}, out, title="New")
    assert not (out / "paper" / "p2.html").exists()  # what the earlier site wrote and the new one does not
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s"]

    import paperatlas.publish.site as site_mod

    def boom(*_a, **_k):
        raise RuntimeError("map failed")

    monkeypatch.setattr(site_mod.map_html, "render", boom)
    with pytest.raises(RuntimeError, match="map failed"):
        publish("site", papers, topics, {}, out)
    assert (out / "index.html").is_file() and not (out / "paper" / "p2.html").exists()  # the older site is kept
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s"]
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(FileExistsError):
        publish("site", papers, topics, {}, tmp_path / "file")


@pytest.mark.browser
def test_site_search_pages_related_and_bookmarks_from_file_url(site, sample_atlas, browser):
    atlas = Atlas(sample_atlas)
    try:
        papers = atlas.papers
    finally:
        atlas.close()
    words = Counter(w for p in papers for w in set(re.findall(r"[a-z]{6,}", p.title.lower())))
    word = min((w for w, n in words.items() if 2 <= n <= 6), key=lambda w: (-words[w], w))
    expected = {p.title for p in papers if word in re.findall(r"[a-z]+", p.title.lower())}
    assert expected

    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    loaded: list[str] = []
    page.on("requestfinished", lambda r: loaded.append(r.url))

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            r.abort()

    page.route("**/*", route)
    try:
        page.goto((site / "index.html").as_uri())
        page.wait_for_selector("#results li")
        files = {unquote(urlparse(u).path) for u in loaded if u.startswith("file://")}
        assert files and all(Path(f).is_relative_to(site) for f in files)
        assert sum(Path(f).stat().st_size for f in files) < LIMIT

        before = page.inner_text("#count")
        page.fill("#q", word)
        page.wait_for_function("t => document.querySelector('#count').textContent !== t", arg=before)
        shown = page.locator("#results a.result-link").all_text_contents()
        assert expected <= set(shown), (word, expected, shown)

        first = sorted(expected)[0]
        page.locator("#results a.result-link", has_text=first).first.click()
        page.wait_for_url(re.compile(r"/paper/[^/]+\.html$"))
        assert page.locator("h1").inner_text().replace("☆", "").strip() == first

        link = page.locator("a.related-link").first
        rel_title, rel_href = link.inner_text(), link.get_attribute("href")
        link.click()
        page.wait_for_url(re.compile(re.escape(rel_href) + "$"))
        assert page.locator("h1").inner_text().replace("☆", "").strip() == rel_title

        star = page.locator("h1 button.star")
        star.click()
        assert star.get_attribute("aria-pressed") == "true"
        page.reload()
        assert page.locator("h1 button.star").get_attribute("aria-pressed") == "true"
        page.goto((site / "index.html").as_uri() + "#bookmarks")
        page.wait_for_selector("#results li")
        assert page.locator("#results a.result-link").all_text_contents() == [rel_title]
        assert page.locator("#n-bookmarks").inner_text() == "1"
    finally:
        context.close()
    assert errors == []


@pytest.mark.browser
def test_site_filters_by_status_topic_and_year_from_file_url(sample_atlas, tmp_path, browser):
    atlas = Atlas(sample_atlas)
    try:
        papers, topics = atlas.papers, atlas.topics
        area_of = {p.id: atlas.area_of(p.topic_id) for p in papers}
    finally:
        atlas.close()
    for i, p in enumerate(papers):  # a second year, as in a list that spans years (seed 004)
        if i % 3 == 0:
            p.year = 2020
    out = write_site(papers, topics, {}, tmp_path / "site", title="Filters")
    subs_of: dict[int, Counter] = {}
    for p in papers:
        subs_of.setdefault(area_of[p.id].id, Counter())[p.topic_id] += 1
    area = max(subs_of, key=lambda a: (sum(subs_of[a].values()), -a))
    sub = subs_of[area].most_common(1)[0][0]

    def expect(status="", area_id=None, topic_id=None, year=None) -> set[str]:
        return {p.title for p in papers
                if (not status or p.status == status) and (area_id is None or area_of[p.id].id == area_id)
                and (topic_id is None or p.topic_id == topic_id) and (year is None or p.year == year)}

    page = browser.new_page()
    try:
        page.goto((out / "index.html").as_uri())
        page.wait_for_selector("#results li")
        assert page.inner_text("#count") == f"{len(papers)} papers"
        shown = lambda: set(page.locator("#results a.result-link").all_text_contents())  # noqa: E731

        page.select_option("#f-status", "Oral")
        assert shown() == expect("Oral") and page.inner_text("#count") == f"{len(expect('Oral'))} papers"
        page.select_option("#f-status", "")
        page.select_option("#f-area", f"a{area}")
        assert shown() == expect(area_id=area)
        # the sub-topic is listed (indented) under its area and narrows the list further
        label = page.locator(f"#f-area option[value='t{sub}']").inner_text().strip()
        assert label == topics[sub].label
        page.select_option("#f-area", f"t{sub}")
        assert shown() == expect(topic_id=sub)
        page.select_option("#f-area", "")
        page.select_option("#f-year", "2020")
        assert shown() == expect(year=2020) and len(expect(year=2020)) == (len(papers) + 2) // 3
        page.select_option("#f-status", "Poster")  # filters combine
        assert shown() == expect("Poster", year=2020)
        page.fill("#q", "zzzzqqq")  # and apply to a search too: nothing matches
        page.wait_for_function("() => document.querySelector('#count').textContent === '0 papers'")
    finally:
        page.close()
