"""The reader's last word: TL;DR and keyphrase overrides survive rebuilds and reach search and publish."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from conftest import SAMPLE
from paperatlas import build as build_mod
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.overrides import override_paper, parse_keyphrases
from paperatlas.search import Filters, search
from paperatlas.store import Atlas
from paperatlas.web import create_app

NET_DNF = "Net-DNF: Effective Deep Modeling of Tabular Data"
MY_TLDR = "Net-DNF builds neural networks shaped like DNF formulas and beats fully connected nets on tabular data."


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_edit_shows_at_once_survives_rebuild_and_is_published(copy_atlas, tmp_path):
    db = copy_atlas()
    res = cli("edit", NET_DNF, "--db", db, "--tldr", MY_TLDR, "--keyphrases", "tabular deep learning; DNF; DNF")
    assert res.exit_code == 0, res.output
    assert "TL;DR (edited by reader): " + MY_TLDR in res.output
    p = next(p for p in Atlas(db).papers if p.title == NET_DNF)
    assert p.tldr == MY_TLDR and p.keyphrases == ["tabular deep learning", "DNF"]
    # searchable by the new keyphrase right away
    hits = search(Atlas(db), "", filters=Filters(keyphrase="tabular deep learning"))
    assert [h.paper.title for h in hits] == [NET_DNF]

    build([SAMPLE], db, venue="ICLR 2021", year=2021)
    p = next(p for p in Atlas(db).papers if p.title == NET_DNF)
    assert (p.tldr, p.tldr_method) == (MY_TLDR, "edited by reader")
    assert p.keyphrases == ["tabular deep learning", "DNF"]
    others = [q for q in Atlas(db).papers if q.title != NET_DNF]
    assert all(q.tldr_method != "edited by reader" for q in others)

    out = tmp_path / "list.md"
    assert cli("publish", "--db", db, "--format", "awesome-md", "-o", out).exit_code == 0
    md = out.read_text()
    assert MY_TLDR in md and "Key Word: tabular deep learning; DNF." in md
    data = tmp_path / "atlas.json"
    cli("publish", "--db", db, "--format", "json", "-o", data)
    rec = next(r for r in json.loads(data.read_text()) if r["title"] == NET_DNF)
    assert rec["tldr"] == MY_TLDR and rec["tldr_method"] == "edited by reader"


def test_edit_made_while_a_build_runs_is_not_lost(copy_atlas, monkeypatch):
    db = copy_atlas()
    pid = next(p.id for p in Atlas(db).papers if p.title == NET_DNF)
    real = build_mod.update_topics

    def topics_with_a_concurrent_edit(*a, **k):
        override_paper(db, pid, tldr=MY_TLDR)  # the reader edits the live atlas mid-build
        return real(*a, **k)

    monkeypatch.setattr(build_mod, "update_topics", topics_with_a_concurrent_edit)
    build([SAMPLE], db, venue="ICLR 2021", year=2021)
    con = Atlas(db).con
    assert con.execute("SELECT count(*) FROM overrides WHERE paper_id = ?", (pid,)).fetchone()[0] == 1


def test_clear_and_errors(copy_atlas):
    db = copy_atlas()
    assert cli("edit", NET_DNF, "--db", db, "--tldr", MY_TLDR).exit_code == 0
    assert cli("edit", NET_DNF, "--db", db, "--clear").exit_code == 0
    build([SAMPLE], db, venue="ICLR 2021", year=2021)
    p = next(p for p in Atlas(db).papers if p.title == NET_DNF)
    assert p.tldr != MY_TLDR and p.tldr_method != "edited by reader"
    res = cli("edit", NET_DNF, "--db", db, "--tldr", "   ")
    assert res.exit_code == 1 and "the TL;DR is empty" in res.output
    res = cli("edit", NET_DNF, "--db", db)
    assert res.exit_code == 2 and "give --tldr, --keyphrases or --clear" in res.output
    with pytest.raises(LookupError):
        override_paper(db, "0000000000", tldr="x")


def test_parse_keyphrases():
    assert parse_keyphrases(" a ;b;; A ; c  d ") == ["a", "b", "c d"]


def test_web_edit_form_saves_and_shows_provenance(copy_atlas):
    db = copy_atlas()
    client = create_app(db, preload_model=False).test_client()
    pid = next(p.id for p in Atlas(db).papers if p.title == NET_DNF)
    before = client.get(f"/paper/{pid}").get_data(as_text=True)
    assert "extractive v2" in before and "phrase-logreg v2" in before  # provenance of the generated fields
    token = re.search(r'name="csrf_token" value="([^"]+)"', before)[1]  # what the browser's form carries
    res = client.post(f"/paper/{pid}/edit", data={"tldr": MY_TLDR, "keyphrases": "tabular data; DNF",
                                                  "csrf_token": token}, headers={"Origin": "http://localhost"})
    assert res.status_code == 302
    html = client.get(f"/paper/{pid}").get_data(as_text=True)
    assert MY_TLDR in html and "edited by reader" in html
    assert Atlas(db).by_id[pid].keyphrases == ["tabular data", "DNF"]
