"""The rough edges a new user hits on the README's own commands (issue 30, part 5), each as the user sees it.

Every test runs on real-format input: the bundled 60-paper ICLR 2021 sample atlas (``sample_atlas``), its
Markdown listing, or BibTeX entries as DBLP, ACL Anthology and Google Scholar write them.
"""

from __future__ import annotations

import re
import sqlite3

from click.testing import CliRunner

from conftest import SAMPLE
from paperatlas.cli import main
from paperatlas.latex import title_text
from paperatlas.sources.bibtex import read_text, venue_label
from paperatlas.store import Atlas

NET_DNF = "Net-DNF: Effective Deep Modeling of Tabular Data"
TOKEN_RE = re.compile(r'<input type="hidden" name="csrf_token" value="([^"]+)">')


def _run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


# --- 1. schedule --ics on a listing without times ----------------------------------------------------------------


def test_schedule_ics_without_times_prints_the_plan_and_says_which_listings_have_times(copy_atlas, tmp_path):
    db = copy_atlas()
    assert _run("list", "like", NET_DNF, "--db", db).exit_code == 0
    ics = tmp_path / "plan.ics"
    res = _run("schedule", "--ics", ics, "--db", db)
    # the plan is printed (in walking order), then one line on why no calendar was written: exit 1, no file
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert "No time in the listing: in walking order" in res.output and NET_DNF in res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("Error: no paper of this schedule has a start time") and "no .ics was written" in last
    assert "virtual-site export" in last and "Start/End columns" in last
    assert not ics.exists()


# --- 2. a file that is not an atlas ----------------------------------------------------------------------------


def test_a_file_that_is_not_an_atlas_is_never_suggested_as_the_build_target(tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("# My notes\n\nRead the SAM paper.\n", encoding="utf-8")
    before = notes.read_bytes()
    res = _run("search", "lottery", "--db", notes)
    assert res.exit_code == 1 and "not an SQLite database" in res.output, res.output
    assert f"--db {notes}`" not in res.output  # the old advice: rebuild over notes.md, which build then refused
    suggested = re.search(r"`paperatlas build LISTING --db ([^`]+)`", res.output).group(1)
    assert suggested == str(tmp_path / "notes.db")
    # running the advice works: a build at the suggested path (the bundled listing), notes.md untouched
    from paperatlas.build import build
    from test_build_safety import HashEmbedder

    build([SAMPLE], suggested, venue="ICLR 2021", year=2021, embedder=HashEmbedder())
    assert len(Atlas(suggested).papers) == 60 and notes.read_bytes() == before
    # another program's SQLite database is not suggested either; an empty file may be built over
    other = tmp_path / "zotero.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE items (id INTEGER)")
    con.commit()
    con.close()
    res = _run("topics", "--db", other)
    assert res.exit_code == 1 and f"--db {tmp_path / 'zotero.db'}`" in res.output, res.output
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert f"rebuild it with `paperatlas build LISTING --db {empty}`" in _run("topics", "--db", empty).output


# --- 3. the replace guard names the CLI flag --------------------------------------------------------------------


def test_the_replace_guard_names_the_command_line_flag(copy_atlas, tmp_path):
    db = copy_atlas()
    blank = tmp_path / "blank.md"
    blank.write_text("# Accepted papers\n\nNone yet.\n", encoding="utf-8")
    res = _run("build", blank, "--db", db, "--format", "paperlists-md")
    assert res.exit_code == 1, res.output
    assert "refusing to replace its 60 papers with none; pass --replace to do it anyway" in res.output
    assert "replace=True" not in res.output


# --- 4. the web Trends page on an atlas of one year ------------------------------------------------------------


def test_the_trends_page_says_what_the_reader_can_do_not_a_command_line_flag(sample_atlas):
    from paperatlas.web import create_app

    client = create_app(sample_atlas, preload_model=False).test_client()
    page = client.get("/trends").get_data(as_text=True)
    why = re.search(r'id="trends-unavailable">([^<]+)<', page).group(1)
    assert "2021: 60" in why and "Build it from listings of more years" in why and "--min-papers" not in why
    since = client.get("/trends", query_string={"since": 2021}).get_data(as_text=True)
    assert "open /trends for every year" in since and "--min-papers" not in since
    res = _run("trends", "--db", sample_atlas)  # the command line still names its flag
    assert res.exit_code == 1 and "or lower --min-papers." in res.output, res.output


# --- 5. remove and unlike on the reading-list page --------------------------------------------------------------


def test_the_reading_list_page_removes_and_unlikes_with_the_session_token(copy_atlas):
    from paperatlas import readinglist as rl
    from paperatlas.web import create_app

    db = copy_atlas()
    ids = {p.title: p.id for p in Atlas(db).papers}
    liked, listed = ids[NET_DNF], ids["Predicting Inductive Biases of Pre-Trained Models"]
    rl.rate(db, liked, 1)
    rl.add(db, liked, "reading")
    rl.add(db, listed, "reading")
    rl.add(db, listed, "day 2")
    client = create_app(db, preload_model=False).test_client()
    page = client.get("/list").get_data(as_text=True)
    assert page.count('<form class="listacts"') == 2 and page.count(">Unlike</span>") == 1
    assert "Remove from all 2 lists" in page and "Remove from list" in page
    tok = TOKEN_RE.search(page).group(1)
    same = {"Origin": "http://localhost"}  # a browser posting from the page (the test client's origin)
    # without the token: refused, nothing changes
    assert client.post(f"/paper/{liked}/mark", data={"action": "unrate"}, headers=same).status_code == 403
    assert [e.rating for e in rl.entries(db) if e.paper_id == liked] == [1]
    res = client.post(f"/paper/{liked}/mark", data={"action": "unrate", "csrf_token": tok, "next": "/list"},
                      headers=same)
    assert res.status_code == 302 and res.headers["Location"].endswith("/list")
    res = client.post(f"/paper/{listed}/mark", data={"action": "remove-all", "csrf_token": tok, "next": "/list"},
                      headers=same)
    assert res.status_code == 302
    left = {e.paper_id: (e.rating, e.lists) for e in rl.entries(db)}
    assert left == {liked: (0, ["reading"])}  # unliked, still listed; the other is off both lists
    page = client.get("/list", query_string={"list": "reading"}).get_data(as_text=True)
    assert ">Unlike</span>" not in page and "Remove from “reading”" in page
    client.post(f"/paper/{liked}/mark", data={"action": "remove", "list": "reading", "csrf_token": tok},
                headers=same)
    assert [(e.rating, e.lists) for e in rl.entries(db)] == [(0, [])]  # a bare mark row stays in the atlas ...
    page = client.get("/list").get_data(as_text=True)
    assert "Nothing yet" in page and NET_DNF not in page  # ... but the page no longer lists the paper


# --- 6. inline math in titles ---------------------------------------------------------------------------------


def test_inline_math_in_a_title_is_shown_as_text():
    assert title_text("$i$-Mix: A Domain-Agnostic Strategy for Contrastive Representation Learning") == (
        "i-Mix: A Domain-Agnostic Strategy for Contrastive Representation Learning")
    assert title_text(r"Improved Estimation of Concentration Under $\ell_p$-Norm Distance Metrics") == (
        "Improved Estimation of Concentration Under ℓp-Norm Distance Metrics")
    assert title_text(r"Temporally-Extended $\epsilon$-Greedy Exploration") == (
        "Temporally-Extended ε-Greedy Exploration")
    assert title_text("A $5 budget") == "A $5 budget"  # a lone dollar is not math


def test_the_reading_list_page_shows_a_title_without_its_dollars(copy_atlas):
    from paperatlas import readinglist as rl
    from paperatlas.web import create_app

    db = copy_atlas()
    pid = next(p.id for p in Atlas(db).papers if p.title == r"Temporally-Extended $\epsilon$-Greedy Exploration")
    rl.add(db, pid, "reading")
    page = create_app(db, preload_model=False).test_client().get("/list").get_data(as_text=True)
    assert "Temporally-Extended ε-Greedy Exploration" in page and "$\\epsilon$" not in page


# --- 7. search "" with a filter prints its count -----------------------------------------------------------------


def test_an_empty_query_with_a_filter_prints_the_count(sample_atlas):
    atlas = Atlas(sample_atlas)
    kp = next(k for p in atlas.papers for k in p.keyphrases)
    n = sum(kp in p.keyphrases for p in atlas.papers)
    res = _run("search", "", "--keyphrase", kp, "--db", sample_atlas)
    assert res.exit_code == 0, res.output
    first = res.output.splitlines()[0]
    assert re.fullmatch(rf"{n} papers? match(es)?", first) or first.startswith(f"{n} papers match (showing"), first


# --- 8. new-md does not number its items by a rank that skips ------------------------------------------------


def test_new_md_lists_papers_with_their_rank_not_a_skipping_number(copy_atlas, tmp_path):
    from paperatlas import readinglist as rl

    db = copy_atlas()
    rl.rate(db, next(p.id for p in Atlas(db).papers if p.title == NET_DNF), 1)
    md = tmp_path / "new.md"
    res = _run("publish", "--format", "new-md", "-o", md, "--db", db)
    assert res.exit_code == 0, res.output
    text = md.read_text(encoding="utf-8")
    assert not re.search(r"^\d+\. ", text, re.MULTILINE)  # no ordered list whose numbers skip
    ranks = [int(r) for r in re.findall(r"^- \*\*#(\d+)\*\* ", text, re.MULTILINE)]
    assert len(ranks) >= 10 and sorted(ranks) == list(range(1, len(ranks) + 1))
    assert "#n is a paper's rank among all the new papers." in text


# --- 9, 10. BibTeX: "and others", long booktitles ---------------------------------------------------------------


BIB = r"""@inproceedings{foret2021sharpness,
  title     = {Sharpness-aware Minimization for Efficiently Improving Generalization},
  author    = {Foret, Pierre and Kleiner, Ariel and Mobahi, Hossein and others},
  booktitle = {International Conference on Learning Representations},
  year      = {2021}
}

@inproceedings{pmlr-v139-radford21a,
  title     = {Learning Transferable Visual Models From Natural Language Supervision},
  author    = {Radford, Alec and Kim, Jong Wook and Hallacy, Chris},
  booktitle = {Proceedings of the 38th International Conference on Machine Learning},
  pages     = {8748--8763},
  publisher = {PMLR}
}

@inproceedings{NEURIPS2020_1457c0d6,
  author    = {Brown, Tom and Mann, Benjamin},
  booktitle = {Advances in Neural Information Processing Systems},
  title     = {Language Models are Few-Shot Learners},
  volume    = {33},
  year      = {2020}
}
"""


def test_bibtex_and_others_is_et_al_not_an_author(tmp_path):
    papers = read_text(BIB, str(tmp_path / "refs.bib"))
    assert papers[0].authors == ["Pierre Foret", "Ariel Kleiner", "Hossein Mobahi"]
    assert papers[0].extra.get("authors_truncated") is True and "authors_truncated" not in papers[1].extra


def test_bibtex_long_booktitles_become_a_venue_and_year(tmp_path):
    papers = read_text(BIB, str(tmp_path / "refs.bib"))
    assert [(p.venue, p.year) for p in papers] == [("ICLR 2021", 2021), ("ICML 2021", 2021), ("NeurIPS 2020", 2020)]
    cases = {
        ("Proceedings of the IEEE Conference on Computer Vision and Pattern Recognition", 2016): "CVPR 2016",
        ("Proceedings of the IEEE/CVF International Conference on Computer Vision", 2021): "ICCV 2021",
        ("European Conference on Computer Vision", 2020): "ECCV 2020",
        ("Advances in Neural Information Processing Systems 33", None): "NeurIPS 2020",
        ("Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics and the 11th "
         "International Joint Conference on Natural Language Processing (Volume 1: Long Papers)", None): "ACL 2021",
        ("Proceedings of the 2019 Conference of the North American Chapter of the Association for Computational "
         "Linguistics: Human Language Technologies, Volume 1 (Long and Short Papers)", None): "NAACL 2019",
        ("Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)", None):
            "EMNLP 2020",
        ("Proceedings of the Thirty-Fifth AAAI Conference on Artificial Intelligence", 2021): "AAAI 2021",
        ("Proceedings of the Thirtieth International Joint Conference on Artificial Intelligence", 2021): "IJCAI 2021",
        ("9th International Conference on Learning Representations", None): "ICLR 2021",
        # not the main proceedings, or another conference whose name starts the same: kept as written
        ("International Conference on Machine Learning and Applications", 2020):
            "International Conference on Machine Learning and Applications",
        ("International Conference on Computer Vision Theory and Applications", 2020):
            "International Conference on Computer Vision Theory and Applications",
        ("Workshop on Uncertainty at the International Conference on Machine Learning", 2020):
            "Workshop on Uncertainty at the International Conference on Machine Learning",
        # IJCAI was biennial until 2015: its ordinal gives no year
        ("Proceedings of the 24th International Joint Conference on Artificial Intelligence", None):
            "Proceedings of the 24th International Joint Conference on Artificial Intelligence",
    }
    assert {k: venue_label(*k) for k in cases} == cases



def test_the_paper_page_and_search_results_show_a_title_without_its_dollars(sample_atlas):
    """The page's heading and a result's title read as text; the BibTeX block keeps the LaTeX (BibTeX reads it)."""
    from paperatlas.web import create_app

    pid = next(p.id for p in Atlas(sample_atlas).papers
               if p.title == r"Temporally-Extended $\epsilon$-Greedy Exploration")
    client = create_app(sample_atlas, preload_model=False).test_client()
    paper = client.get(f"/paper/{pid}").get_data(as_text=True)
    assert "<h1>Temporally-Extended ε-Greedy Exploration</h1>" in paper
    assert "title = {Temporally-Extended $\\epsilon$-Greedy Exploration}" in paper
    found = client.get("/?q=greedy+exploration").get_data(as_text=True)
    assert ">Temporally-Extended ε-Greedy Exploration</a>" in found and "$\\epsilon$-Greedy" not in found


def test_serve_on_a_taken_port_says_so_in_one_line_and_exits_cleanly(sample_atlas):
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = subprocess.run([sys.executable, "-m", "paperatlas.cli", "serve", "--db", str(sample_atlas),
                              "--port", str(port)], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "TQDM_DISABLE": "1"})
    assert res.returncode == 1, res.stderr  # not 134: the warm-up thread had not been started
    assert f"Error: cannot listen on 127.0.0.1 port {port}" in res.stderr
    assert "terminate called" not in res.stderr
