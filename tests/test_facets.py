"""Facets from the listing's metadata (review ratings, citations, code, institutions): CLI filters, sort, exports.

The atlas is built (fast stand-in embedder) from the first 40 COLM 2024 papers of the shared paperlists data, as
Paper Copilot publishes them (per-review ratings and confidences, Google Scholar citations, affiliations), the
first 20 ACL 2022 papers (affiliations, GitHub links, no review scores) and the 11 records of
``fixtures/paperlists_affiliations`` (spellings of Google, MIT, UC Berkeley; Mitsubishi Electric Research Labs;
University of Washington and Washington University in St. Louis; see its ORIGIN.md).
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import io
import json
import re

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, ROOT, need
from paperatlas import sources
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.facets import (
    affiliation_matcher,
    facet_counts,
    facets_of,
    institution_key,
    institutions,
    normalise_institution,
    sort_papers,
)
from paperatlas.model import Paper
from paperatlas.store import Atlas
from test_build_safety import HashEmbedder

COLM = ROOT.parent / "shared" / "data" / "paperlists" / "colm" / "colm2024.json.gz"
ACL = ROOT.parent / "shared" / "data" / "paperlists" / "acl" / "acl2022.json.gz"
AFF = FIXTURES / "paperlists_affiliations" / "records.json"


@pytest.fixture(scope="module")
def colm(tmp_path_factory):
    recs = json.loads(gzip.decompress(need(COLM).read_bytes()))[:40]
    acl = json.loads(gzip.decompress(need(ACL).read_bytes()))[:20]
    d = tmp_path_factory.mktemp("colm")
    (d / "colm2024.json").write_text(json.dumps(recs))
    (d / "acl2022.json").write_text(json.dumps(acl))
    (d / "mixed.json").write_text(AFF.read_text())
    db = d / "colm.db"
    build([d / "colm2024.json", d / "acl2022.json", d / "mixed.json"], db, embedder=HashEmbedder())
    return db, recs + acl + json.loads(AFF.read_text())


def run(*args):
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


# Spellings from the 42k-paper paperlists corpus (each occurs there as written).
@pytest.mark.parametrize(("raw", "institution"), [
    ("Google Research", "Google"), ("Google Brain", "Google"), ("Google", "Google"), ("Google Inc.", "Google"),
    ("Google Research‡", "Google"), ("Google Brain, London, UK", "Google"), ("Robotics at Google", "Google"),
    ("Massachusetts Institute of Technology", "MIT"), ("MIT CSAIL", "MIT"), ("Dept. of Brain & Cog. Sci., MIT", "MIT"),
    ("Massachussetts Institute of Technology", "MIT"),  # misspelt: the fuzzy match
    ("University of California, Berkeley", "UC Berkeley"), ("UC Berkeley", "UC Berkeley"),
    ("Department of EECS, University of California, Berkeley CA 94720, USA", "UC Berkeley"),
    ("School of Computer Science, Carnegie Mellon University", "Carnegie Mellon University"),
    ("Robotics Institute, Carnegie Mellon University, Pittsburgh, PA 15213", "Carnegie Mellon University"),
    ("Carnegie Melon University", "Carnegie Mellon University"),
    ("Department of Computer Science, University of California, Irvine", "University of California, Irvine"),
    ("UC Irvine", "University of California, Irvine"),
    ("University of Washington", "University of Washington"),
    ("University of Washington, Seattle", "University of Washington"),
    ("Washington University in St. Louis", "Washington University in St. Louis"),
    ("University of Maryland, College Park", "University of Maryland"),
    ("University of Maryland, Baltimore County", "University of Maryland, Baltimore County"),
    ("Indian Institute of Technology, Kanpur, India", "Indian Institute of Technology Kanpur"),
    ("IIT Kanpur", "Indian Institute of Technology Kanpur"),
    ("IIT Bombay", "Indian Institute of Technology Bombay"),
    ("Queen Mary, University of London", "Queen Mary, University of London"),
    ("Google DeepMind", "DeepMind"), ("Facebook AI Research", "Meta"), ("Meta AI", "Meta"),
    ("MIT-IBM Watson AI Lab", "MIT-IBM Watson AI Lab"), ("Mitsubishi Electric Research Labs", "Mitsubishi Electric "
                                                                                             "Research Labs"),
    ("Universit ´e de Montr ´eal", "Université de Montréal"), ("ETH Z ¨urich, Switzerland", "ETH Zurich"),
    ("KAIST1", "KAIST"), ("Korea Advanced Institute of Science and Technology (KAIST), Daejeon", "KAIST"),
    ("Preferred Networks, Inc.", "Preferred Networks"), ("Megvii Inc. (Face", "Megvii"),
    ("Computational Neuroscience Laboratory, The Salk Institute, P.O. Box 5800, San Diego, CA 92186-5800",
     "Salk Institute"),
    ("Department of Computer Science", ""), ("Computer Vision Lab", ""), ("Unknown Institution", ""), ("---", ""),
])
def test_institution_spellings_merge_and_different_ones_do_not(raw, institution):
    assert normalise_institution(raw) == institution
    if institution:  # a normalised name is its own normal form (exports are read back)
        assert normalise_institution(institution) == institution


def test_missing_is_missing_never_zero():
    p = Paper(title="No reviews", extra={"gs_citation": -1})
    f = facets_of(p)
    assert (f.rating_mean, f.rating_spread, f.citations, f.n_reviews, f.institutions) == (None, None, None, None, ())
    rated = Paper(title="Rated", extra={"ratings": [6.0, 8.0], "citations": 0})
    assert facets_of(rated).citations == 0 and facets_of(rated).rating_spread == 1.0
    assert [p.title for p in sort_papers([p, rated], "rating")] == ["Rated", "No reviews"]
    assert [p.title for p in sort_papers([p, rated], "citations")] == ["Rated", "No reviews"]
    counts = facet_counts([p, rated])
    assert counts["rating"] == [("6-8", 1)] and counts["citations"] == [("0", 1)]
    assert "institution" not in counts and "has_code" not in counts and "decision" not in counts


def test_institutions_from_the_listing_merge_spellings_and_keep_different_universities_apart():
    papers = sources.read(AFF, format="paperlists-json")
    by_title = {p.title: p for p in papers}
    recs = json.loads(AFF.read_text())
    assert papers[0].extra["institutions"] == ["Google"]  # Paper Copilot's aff_unique_norm, kept by the reader
    # Without Paper Copilot's normalised names, the raw affiliations give the same institutions.
    for p in papers:
        raw = dataclasses.replace(p, extra={k: v for k, v in p.extra.items() if k != "institutions"})
        assert [institution_key(x) for x in institutions(raw)] == [institution_key(x) for x in institutions(p)]
    assert institutions(by_title[recs[0]["title"]]) == ("Google",)  # "Google Brain, London, UK", "Google Research, ..."
    assert institutions(by_title[recs[2]["title"]])[0] == "MIT"  # "Massachusetts Institute of Technology" and "MIT"
    assert institutions(by_title[recs[7]["title"]]) == ("UC Berkeley", "Meta", "UCLA", "Google")
    assert institutions(by_title[recs[9]["title"]]) == ()  # departments only; Paper Copilot: "Unknown Institution"
    assert institutions(by_title[recs[10]["title"]]) == ()  # no affiliations
    counts = dict(facet_counts(papers)["institution"])
    google = [r for r in recs if re.search(r"\bGoogle\b", r["aff"])]
    assert counts["Google"] == len(google) == 3 and counts["MIT"] == 2 and counts["UC Berkeley"] == 2
    assert counts["University of Washington"] == 1 and counts["Washington University in St. Louis"] == 1
    assert not any("Department" in name or "Unknown" in name for name in counts)
    mit = affiliation_matcher("MIT")
    assert [p.title for p in papers if mit(p)] == [recs[2]["title"], recs[3]["title"]]  # not MERL alone (record 4)


def test_search_sorts_and_filters_by_rating_citations_code_and_affiliation(colm):
    db, recs = colm
    n = len(recs)
    atlas = Atlas(db)
    assert len(atlas.papers) == n
    mean = {p.title: facets_of(p).rating_mean for p in atlas.papers}
    rated = [r for r in recs if r.get("rating")]
    out = run("search", "", "--sort", "rating", "-k", n, "--json", "--db", db)
    rows = [json.loads(line) for line in out.splitlines()]
    ratings = [r["rating_mean"] for r in rows]
    assert len(rows) == n and ratings[len(rated):] == [None] * (n - len(rated))  # no review scores: last
    assert ratings[:len(rated)] == sorted(ratings[:len(rated)], reverse=True)
    best = max(rated, key=lambda r: sum(map(float, r["rating"].split(";"))) / len(r["rating"].split(";")))
    assert rows[0]["title"] == best["title"] and ratings[0] == max(m for m in mean.values() if m)
    out = run("search", "", "--min-rating", "7", "-k", n, "--json", "--db", db)
    titles = {json.loads(line)["title"] for line in out.splitlines()}
    assert titles == {t for t, m in mean.items() if m is not None and m >= 7} and titles
    out = run("search", "", "--sort", "citations", "-k", "3", "--db", db)
    top = max(recs, key=lambda r: int(r["gs_citation"]))
    first = next(line for line in out.splitlines() if line.lstrip().startswith("1."))
    assert top["title"] in first and f"{int(top['gs_citation']):,} citations" in first
    assert out.splitlines()[0] == f"{n} papers match (showing 3; -k for more)"  # the true count
    with_code = {r["title"] for r in recs if r.get("github", "").startswith("http")}
    out = run("search", "", "--has-code", "--sort", "citations", "-k", n, "--json", "--db", db)
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["title"] for r in rows} == with_code and len(with_code) >= 5 and all(r["has_code"] for r in rows)
    assert [r["citations"] for r in rows] == sorted((r["citations"] for r in rows), reverse=True)


@pytest.mark.parametrize(("query", "pattern", "never"), [
    ("google", r"\bGoogle\b", None),
    ("Google Brain", r"\bGoogle\b", None),  # normalised: all of Google
    ("mit", r"\bMIT\b|Massachusetts Institute of Technology", "Mitsubishi"),
    ("University of Washington", r"University of Washington", "Washington University in St. Louis"),
    ("berkeley", r"Berkeley", None),
    ("stanford", r"Stanford", None),
])
def test_affiliation_filter_matches_an_institution_in_any_spelling(colm, query, pattern, never):
    db, recs = colm
    expected = {r["title"] for r in recs if re.search(pattern, r.get("aff") or "")}
    out = run("search", "", "--affiliation", query, "-k", len(recs), "--json", "--db", db)
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["title"] for r in rows} == expected and expected
    if never:  # a paper of the near miss alone (MERL, WashU) is in the atlas and not matched
        near = {r["title"] for r in recs if never in (r.get("aff") or "") and not re.search(pattern, r["aff"])}
        assert near and not near & {r["title"] for r in rows}


def test_show_prints_the_facets_of_a_rated_paper(colm):
    db, recs = colm
    first = recs[0]
    out = run("show", first["title"], "--db", db)
    line = next(x for x in out.splitlines() if x.startswith("Facets: "))
    assert line.startswith("Facets: rating 6.5±0.9 (4)") and "confidence 3.8" in line
    assert "Institutions: Singapore University of Technology and Design; DSO" in out


def test_csv_and_json_exports_carry_the_facets_with_empty_cells_for_missing(colm, tmp_path):
    db, recs = colm
    run("publish", "--format", "csv", "-o", tmp_path / "a.csv", "--db", db)
    text = (tmp_path / "a.csv").read_text()
    header = text.splitlines()[0].split(",")
    assert header[:16] == ["id", "title", "authors", "venue", "year", "status", "track", "topic_id", "topic_label",
                           "tldr", "keyphrases", "paper_url", "code_url", "x", "y", "abstract"]  # kept, in order
    assert header[16:25] == ["rating_mean", "rating_spread", "n_reviews", "confidence_mean", "decision", "citations",
                             "has_code", "institutions", "pdf_url"]  # appended
    assert header[25:] == ["session", "starts_at", "ends_at", "timezone", "location", "poster"]  # appended after
    rows = list(csv.DictReader(io.StringIO(text)))
    by = {r["title"]: r for r in rows}
    first = recs[0]
    row = by[first["title"]]
    assert float(row["rating_mean"]) == pytest.approx(float(first["rating_avg"]), abs=0.01)
    assert (row["rating_spread"], row["confidence_mean"]) == ("0.87", "3.75")
    assert row["n_reviews"] == str(len(first["rating"].split(";"))) and row["citations"] == str(first["gs_citation"])
    assert row["institutions"] == "Singapore University of Technology and Design; DSO" and row["has_code"] == "no"
    unrated = [by[r["title"]] for r in recs if not r.get("rating")]
    assert len(unrated) == 30 and all(r["rating_mean"] == r["rating_spread"] == r["n_reviews"] == r["confidence_mean"]
                                      == r["decision"] == "" for r in unrated)  # no review scores: empty, not 0
    assert by[recs[-1]["title"]]["institutions"] == ""  # no affiliations
    run("publish", "--format", "json", "-o", tmp_path / "a.json", "--db", db)
    facets = {r["title"]: r["facets"] for r in json.loads((tmp_path / "a.json").read_text())}
    assert facets[first["title"]]["rating_mean"] == row_float(row["rating_mean"])
    assert facets[first["title"]]["institutions"] == ["Singapore University of Technology and Design", "DSO"]
    assert all(facets[r["title"]]["rating_mean"] is None and facets[r["title"]]["citations"] is not None
               for r in recs if not r.get("rating"))
    # The CSV reader reads the facet columns back: same rating, citations and institutions.
    back = {p.title: facets_of(p) for p in sources.read(tmp_path / "a.csv", format="csv")}
    for title, f in back.items():
        assert (f.rating_mean, f.citations, f.institutions) == (row_float(by[title]["rating_mean"]),
                                                                int(by[title]["citations"]),
                                                                tuple(x for x in by[title]["institutions"].split("; ")
                                                                      if x))


def row_float(cell: str) -> float | None:
    return float(cell) if cell else None


def test_sample_atlas_without_review_data_has_empty_facet_cells(sample_atlas, tmp_path):
    run("publish", "--format", "csv", "-o", tmp_path / "s.csv", "--db", sample_atlas)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "s.csv").read_text())))
    assert rows and all(r["rating_mean"] == r["citations"] == r["n_reviews"] == "" for r in rows)
