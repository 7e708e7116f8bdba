"""The command line, run as a user would (click's runner, real atlas)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from paperatlas.cli import main


def run(*args):
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return res


def test_search_with_status_filter_prints_ranked_titles(sample_atlas):
    res = run("search", "reinforcement learning", "--db", sample_atlas, "--status", "Oral,Spotlight", "--json")
    assert res.exit_code == 0
    rows = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
    assert rows and all(r["status"] in ("Oral", "Spotlight") for r in rows)
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert rows[0]["match"] == "keyword"


def test_a_filter_that_leaves_no_match_says_so_instead_of_listing_unrelated_papers(sample_atlas):
    res = run("search", "Hopfield", "--db", sample_atlas, "--status", "Spotlight")
    assert res.exit_code == 0
    assert "No paper matching the filters mentions “Hopfield” (2 papers without the filters)" in res.output
    assert "Hopfield" not in res.output.replace("“Hopfield”", "")


def test_show_related_topics(sample_atlas):
    res = run("show", "Net-DNF: Effective Deep Modeling of Tabular Data", "--db", sample_atlas)
    assert res.exit_code == 0
    assert "TL;DR (extractive v2):" in res.output and "Keyphrases (phrase-logreg v2):" in res.output
    assert "Liran Katzir" in res.output
    res = run("related", "Net-DNF", "--db", sample_atlas, "-k", "3")
    assert res.exit_code == 0 and res.output.count("cosine") == 3
    res = run("topics", "--db", sample_atlas)
    assert res.exit_code == 0 and len([ln for ln in res.output.splitlines() if not ln.startswith(" " * 5)]) >= 2


def test_unknown_paper_and_missing_atlas_give_readable_errors(sample_atlas, tmp_path):
    res = CliRunner().invoke(main, ["show", "no such paper title anywhere", "--db", str(sample_atlas)])
    assert res.exit_code == 1 and "no paper with id or title" in res.output
    res = CliRunner().invoke(main, ["topics", "--db", str(tmp_path / "none.db")])
    assert res.exit_code == 1 and "no atlas here" in res.output and "paperatlas build" in res.output


def test_build_of_unrecognised_file_fails_clearly(tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("just some notes\nnothing like a paper listing\n")
    res = CliRunner().invoke(main, ["build", str(junk), "--db", str(tmp_path / "x.db")])
    assert res.exit_code == 1 and "notes.txt: unrecognised listing format" in res.output
    assert not (tmp_path / "x.db").exists()


def test_publish_json_has_generated_fields(sample_atlas, tmp_path):
    out = tmp_path / "atlas.json"
    res = run("publish", "--db", sample_atlas, "--format", "json", "-o", out)
    assert res.exit_code == 0
    data = json.loads(out.read_text())
    assert len(data) == 60
    d = data[0]
    for field in ("tldr", "keyphrases", "topic_id", "topic_label", "x", "y", "related_ids"):
        assert d[field] not in (None, "", []), field


def test_an_ambiguous_title_fragment_lists_the_papers_instead_of_picking_one(sample_atlas, copy_atlas, monkeypatch):
    res = CliRunner().invoke(main, ["show", "Hopfield", "--db", str(sample_atlas)])
    assert res.exit_code == 1
    assert "'Hopfield' matches 2 papers:" in res.output
    assert "1. " in res.output and "2. " in res.output and "Hopfield Networks is All You Need" in res.output
    db = copy_atlas()
    res = CliRunner().invoke(main, ["list", "add", "Hopfield", "--db", str(db)])
    assert res.exit_code == 1 and "matches 2 papers" in res.output
    # at a terminal the user picks one by number
    monkeypatch.setattr("click.testing._NamedTextIOWrapper.isatty", lambda self: True, raising=False)
    res = CliRunner().invoke(main, ["show", "Hopfield", "--db", str(sample_atlas)], input="2\n")
    assert res.exit_code == 0, res.output
    listed = [ln for ln in res.output.splitlines() if ln.startswith("  2. ")][0]
    picked = listed[5:].split(" [")[0]
    assert picked in res.output.split("which one?")[1]


def test_recommend_leaves_out_papers_already_read_as_the_web_does(copy_atlas):
    db = copy_atlas()
    liked = "Hopfield Networks is All You Need"
    first = json.loads(run("recommend", "--like", liked, "--db", db, "--json").output.splitlines()[0])
    assert run("list", "mark-read", first["id"], "--db", db).exit_code == 0
    after = [json.loads(x)["id"] for x in run("recommend", "--like", liked, "--db", db, "--json").output.splitlines()]
    assert after and first["id"] not in after
