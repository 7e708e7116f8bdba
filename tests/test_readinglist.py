"""The reading list: likes, lists, notes and read marks that survive rebuilds, corrected titles and atlas moves."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from conftest import SAMPLE
from paperatlas import readinglist as rl
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.overrides import override_paper
from paperatlas.sources.merge import paper_id
from paperatlas.store import Atlas

NET_DNF = "Net-DNF: Effective Deep Modeling of Tabular Data"
SCORE = "SCoRe: Pre-Training for Context Representation in Conversational Semantic Parsing"
NOTE = "have to check on this in the paper\n\n* **Boolean** formulas as a bias"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_marks_a_paper_and_shows_it(copy_atlas):
    db = copy_atlas()
    assert cli("list", "add", NET_DNF, "--db", db).exit_code == 0
    assert "already on 'reading'" in cli("list", "add", NET_DNF, "--db", db).output
    assert cli("list", "add", SCORE, "--list", "to discuss", "--db", db).exit_code == 0
    assert cli("list", "like", NET_DNF, "--db", db).exit_code == 0
    assert cli("list", "dislike", SCORE, "--db", db).exit_code == 0
    assert cli("list", "note", NET_DNF, NOTE, "--db", db).exit_code == 0
    assert cli("list", "mark-read", NET_DNF, "--db", db).exit_code == 0
    out = cli("list", "show", "--db", db).output
    assert out.startswith("2 papers · lists: reading (1), to discuss (1)")
    assert f"♥ ✓ {NET_DNF}  [reading]" in out and f"✗ {SCORE}  [to discuss]" in out
    assert "    > have to check on this in the paper" in out
    only = json.loads(cli("list", "show", "--list", "to discuss", "--json", "--db", db).output)
    assert [e["title"] for e in only] == [SCORE] and only[0]["rating"] == -1
    assert rl.ratings(db) == ([paper_id(NET_DNF)], [paper_id(SCORE)])
    # removing from a list keeps the note and the like
    assert cli("list", "remove", NET_DNF, "--db", db).exit_code == 0
    e = next(e for e in rl.entries(db) if e.paper_id == paper_id(NET_DNF))
    assert e.lists == [] and e.rating == 1 and e.note == NOTE and e.read_at


def test_errors_are_clear(copy_atlas, tmp_path):
    db = copy_atlas()
    res = cli("list", "like", "No Such Paper At All Anywhere", "--db", db)
    assert res.exit_code == 1 and "No Such Paper" in res.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"entries": []}')
    res = cli("list", "import", bad, "--db", db)
    assert res.exit_code == 1 and f"{bad}: not a paperatlas reading-list export" in res.output
    bad.write_text('{"paperatlas_reading_list": 1, "entries": [{"rating": 1}]}')
    res = cli("list", "import", bad, "--db", db)
    assert res.exit_code == 1 and "entries[0]" in res.output
    assert rl.entries(db) == []  # a failed import writes nothing


def test_notes_survive_a_rebuild_and_a_corrected_title(copy_atlas, tmp_path):
    db = copy_atlas()
    rl.add(db, paper_id(NET_DNF))
    rl.rate(db, paper_id(NET_DNF), 1)
    rl.set_note(db, paper_id(NET_DNF), NOTE)
    override_paper(db, paper_id(NET_DNF), tldr="Net-DNF: disjunctive normal form networks for tabular data.")
    build([SAMPLE], db, venue="ICLR 2021", year=2021)
    assert [e.note for e in rl.entries(db)] == [NOTE]
    # the organisers fix a spelling in the title: the paper's id changes, the reader's data follows it
    fixed = NET_DNF.replace("Modeling", "Modelling")
    listing = tmp_path / "iclr2021_fixed.md"
    listing.write_text(SAMPLE.read_text().replace(NET_DNF, fixed))
    build([listing], db, venue="ICLR 2021", year=2021)
    atlas = Atlas(db)
    new_id = paper_id(fixed)
    assert new_id != paper_id(NET_DNF) and new_id in atlas.by_id and paper_id(NET_DNF) not in atlas.by_id
    (e,) = rl.entries(db)
    assert (e.paper_id, e.rating, e.note, e.lists) == (new_id, 1, NOTE, ["reading"])
    assert atlas.by_id[new_id].tldr.startswith("Net-DNF: disjunctive")  # the TL;DR override followed too


def test_export_then_import_into_another_atlas(copy_atlas, tmp_path):
    src, dst = copy_atlas("a.db"), copy_atlas("b.db")
    rl.add(src, paper_id(SCORE), "to discuss")
    rl.set_note(src, paper_id(SCORE), "compare with RAT-SQL")
    rl.mark_read(src, paper_id(NET_DNF))
    override_paper(src, paper_id(SCORE), keyphrases=["conversational semantic parsing", "SQL"])
    out = tmp_path / "mine.json"
    assert cli("list", "export", "-o", out, "--db", src).exit_code == 0
    res = cli("list", "import", out, "--db", dst)
    assert res.exit_code == 0 and "imported 2 papers and 1 overrides" in res.output
    got = {e.paper_id: e for e in rl.entries(dst)}
    assert got[paper_id(SCORE)].note == "compare with RAT-SQL" and got[paper_id(SCORE)].lists == ["to discuss"]
    assert got[paper_id(NET_DNF)].read_at
    assert Atlas(dst).by_id[paper_id(SCORE)].keyphrases == ["conversational semantic parsing", "SQL"]
    # importing the same file again changes nothing
    cli("list", "import", out, "--db", dst)
    assert len(rl.entries(dst)) == 2


def test_web_app_marks_papers_and_lists_them(copy_atlas):
    import re

    from paperatlas.web import create_app

    db = copy_atlas()
    client = create_app(db, preload_model=False).test_client()
    pid = paper_id(NET_DNF)
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get(f"/paper/{pid}").get_data(as_text=True))[1]

    def post(url, data):  # as a browser sends the page's forms: the hidden token and the page's Origin
        return client.post(url, data={**data, "csrf_token": token}, headers={"Origin": "http://localhost"})

    for form in ({"action": "like"}, {"action": "read"}, {"action": "add", "list": "tabular"},
                 {"action": "note", "note": NOTE}):
        res = post(f"/paper/{pid}/mark", data=form)
        assert res.status_code == 302 and res.headers["Location"].endswith(f"/paper/{pid}")
    page = client.get(f"/paper/{pid}").get_data(as_text=True)
    assert 'id="like" title="Like: recommendations start from papers you like">♥ Liked' in page
    assert "have to check on this in the paper" in page and 'value="tabular"' in page
    listing = client.get("/list").get_data(as_text=True)
    assert re.search(r'class="mark liked".*?class="mark read".*?' + re.escape(NET_DNF), listing, re.S)
    assert '<span class="listtag">tabular</span>' in listing
    # the note is Markdown, shown rendered (a list item in bold), on the list and on the paper page
    assert "<li><strong>Boolean</strong> formulas as a bias</li>" in listing
    assert "<li><strong>Boolean</strong> formulas as a bias</li>" in page
    post(f"/paper/{pid}/mark", data={"action": "note", "note": "<script>x()</script> [a](javascript:x())"})
    shown = client.get("/list").get_data(as_text=True)
    assert "<script>x()" not in shown and "&lt;script&gt;" in shown and 'href="javascript' not in shown
    post(f"/paper/{pid}/mark", data={"action": "note", "note": NOTE})
    (e,) = rl.entries(db)  # written to the atlas file, not just the page
    assert (e.rating, e.lists, e.note) == (1, ["tabular"], NOTE)
    assert post(f"/paper/{pid}/mark", data={"action": "remove", "list": "tabular"}).status_code == 302
    assert rl.entries(db)[0].lists == []
    assert post("/paper/0000000000/mark", data={"action": "like"}).status_code == 404
    assert post(f"/paper/{pid}/mark", data={"action": "explode"}).status_code == 400


def test_publish_highlights_and_awesome_list_from_a_reading_list(copy_atlas, tmp_path):
    db = copy_atlas()
    atlas = Atlas(db)
    picks = [p for p in atlas.papers if p.status == "Poster"][:2] + [p for p in atlas.papers if p.status == "Oral"][:1]
    for p in picks:
        rl.rate(db, p.id, 1)
    rl.set_note(db, picks[0].id, NOTE)
    rl.add(db, picks[1].id, "to discuss")
    out = tmp_path / "highlights.md"
    res = cli("publish", "--format", "highlights-md", "-o", out, "--db", db)
    assert res.exit_code == 0 and "(3 papers, highlights-md)" in res.output
    md = out.read_text()
    # the reading time counts the areas' overviews too (3 papers alone: 1 min)
    assert re.match(r"# My ICLR 2021 highlights\n\n\*3 papers · about [12] min read", md)
    for p in picks:  # every liked paper, under its area in the table of contents, with its TL;DR
        area = atlas.area_of(p.topic_id)
        assert f"- [{area.label}](#" in md and f"### {p.title}" in md and p.tldr[:40] in md
    assert "have to check on this in the paper\n\n* **Boolean** formulas as a bias" in md  # the note, as Markdown
    same_area = [p for p in picks if atlas.area_of(p.topic_id).id == atlas.area_of(picks[2].topic_id).id]
    if len(same_area) > 1:  # the Oral comes first in its section
        assert md.index(f"### {picks[2].title}") < min(md.index(f"### {p.title}") for p in same_area if p != picks[2])
    # an awesome list of one named list: only its papers
    aw = tmp_path / "awesome.md"
    assert cli("publish", "--format", "awesome-md", "--list", "to discuss", "-o", aw, "--db", db).exit_code == 0
    text = aw.read_text()
    assert picks[1].title in text and picks[0].title not in text
    # a short list gets broad sections (its papers' areas), not one sub-topic each
    assert f"\n## {atlas.area_of(picks[1].topic_id).label}\n" in text
    res = cli("publish", "--format", "highlights-md", "--list", "nope", "-o", aw, "--db", db)
    assert res.exit_code == 1 and "list 'nope' has no papers" in res.output


def test_csl_json_of_a_reading_list(copy_atlas, tmp_path):
    db = copy_atlas()
    rl.add(db, paper_id(NET_DNF), "cite")
    rl.set_note(db, paper_id(NET_DNF), "compare with XGBoost")
    out = tmp_path / "cite.json"
    assert cli("publish", "--format", "csl-json", "--list", "cite", "-o", out, "--db", db).exit_code == 0
    (item,) = json.loads(out.read_text())
    p = Atlas(db).by_id[paper_id(NET_DNF)]
    assert item["type"] == "paper-conference" and item["title"] == NET_DNF
    assert item["container-title"] == "ICLR 2021" and item["issued"] == {"date-parts": [[2021]]}
    first = p.authors[0].split()
    assert item["author"][0] == {"family": first[-1], "given": " ".join(first[:-1])}
    assert len(item["author"]) == len(p.authors) and item["id"].endswith("2021net")
    assert "TL;DR: " in item["note"] and "compare with XGBoost" in item["note"]


def test_recommend_starts_from_the_reading_list_likes(copy_atlas):
    db = copy_atlas()
    res = cli("recommend", "--db", db)
    assert res.exit_code == 2 and "paperatlas list like PAPER" in res.output
    atlas = Atlas(db)
    liked = [p for p in atlas.papers if "reinforcement learning" in " ".join(p.keyphrases).lower()][:3]
    for p in liked:
        rl.rate(db, p.id, 1)
    res = cli("recommend", "--db", db, "-k", "5")
    assert res.exit_code == 0 and res.output.startswith("Because you liked: ")
    assert all(p.title in res.output.splitlines()[0] for p in liked)
    assert res.output.count(" · close to \"") == 5 and not any(f"({p.id})" in res.output for p in liked)


def test_highlights_html_is_standalone_and_its_links_resolve(copy_atlas, tmp_path):
    import re

    db = copy_atlas()
    for p in Atlas(db).papers[:4]:
        rl.rate(db, p.id, 1)
    rl.set_note(db, Atlas(db).papers[0].id, NOTE + "\n\n<script>alert(1)</script>")
    out = tmp_path / "highlights.html"
    assert cli("publish", "--format", "highlights-html", "-o", out, "--db", db).exit_code == 0
    page = out.read_text()
    assert page.startswith("<!doctype html>") and "<title>My ICLR 2021 highlights</title>" in page
    assert "<strong>Boolean</strong>" in page and "<script>" not in page  # Markdown rendered, raw HTML escaped
    assert not re.search(r'(src|href)="(https?:)?//', page.split("<body>")[0])  # nothing loaded from outside
    ids = set(re.findall(r' id="([^"]+)"', page))
    targets = re.findall(r'href="#([^"]+)"', page)
    assert len(targets) >= 5 and all(t in ids for t in targets)  # every table-of-contents link lands


def test_search_results_export_to_bibtex_and_csl_json(sample_atlas, tmp_path):
    bib, csl = tmp_path / "hits.bib", tmp_path / "hits.json"
    res = cli("search", "", "--status", "Poster", "-k", "3", "--export", "bibtex", "-o", bib,
              "--db", sample_atlas)
    assert res.exit_code == 0 and "(3 results, bibtex)" in res.output
    assert bib.read_text().count("@inproceedings{") == 3 and NET_DNF in bib.read_text()
    res = cli("search", "", "--status", "Poster", "-k", "3", "--export", "csl-json", "-o", csl,
              "--db", sample_atlas)
    items = json.loads(csl.read_text())
    assert len(items) == 3 and items[0]["title"] == NET_DNF
    assert cli("search", "x", "--export", "bibtex", "--db", sample_atlas).exit_code == 2


def test_csl_json_and_bibtex_read_back_by_pandoc_citeproc(copy_atlas, tmp_path):
    """A real importer reads what Zotero would: pandoc's CSL-JSON and BibTeX readers (citeproc, the CSL engine)
    get back every title, first author's family name and year, and render a bibliography."""
    pandoc = shutil.which("pandoc")
    if pandoc is None:
        pytest.skip("pandoc is not installed (apt-get install pandoc)")
    db = copy_atlas()
    atlas = Atlas(db)
    picks = atlas.papers[:4]
    atlas.close()
    for p in picks:
        rl.add(db, p.id, "cite")
    for fmt, ext, reader in (("csl-json", "json", "csljson"), ("bibtex", "bib", "bibtex")):
        out = tmp_path / f"cite.{ext}"
        assert cli("publish", "--format", fmt, "--list", "cite", "-o", out, "--db", db).exit_code == 0
        back = json.loads(subprocess.run([pandoc, "-f", reader, "-t", "csljson", str(out)], capture_output=True,
                                         text=True, check=True).stdout)
        # pandoc sets BibTeX titles in sentence case and typographic quotes: compare without case and quotes
        def same(t: str) -> str:
            return " ".join(t.replace("’", "'").casefold().split())

        by_title = {same(i["title"]): i for i in back}
        for p in picks:
            item = by_title[same(p.title)]
            assert item["author"][0]["family"] == p.authors[0].split()[-1]
            assert len(item["author"]) == len(p.authors) and item["issued"]["date-parts"][0][0] == 2021
        doc = tmp_path / f"refs-{ext}.md"
        doc.write_text(f'---\nnocite: "@*"\nbibliography: {out.name}\n---\n', encoding="utf-8")
        text = subprocess.run([pandoc, "--citeproc", "-t", "plain", doc.name], cwd=tmp_path, capture_output=True,
                              text=True, check=True).stdout
        assert all(p.authors[0].split()[-1] in text for p in picks) and text.count("2021") >= len(picks)
