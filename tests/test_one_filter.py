"""One filter and one sort for the CLI and the web app (issue 27 part 5).

``paperatlas search --json`` and ``/api/search`` build the same :class:`paperatlas.search.Filters` and call the same
code, so the same query and filters give the same papers in the same order. The atlas is built from real-format
Paper Copilot records with affiliations (``fixtures/paperlists_affiliations``: MIT and Mitsubishi Electric Research
Labs among them) plus COLM 2024 and ACL 2022 records (ratings, citations, years) and two OpenReview notes (a
decision), with the hashed bag-of-words embedder. Every filter the web offers is a ``search`` option of the same name.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import need
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.facets import facets_of, institutions
from paperatlas.search import Filters, search_results
from paperatlas.store import Atlas
from paperatlas.vocab import concept_key
from paperatlas.web import create_app
from test_build_safety import HashEmbedder

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
COLM = ROOT.parent / "shared" / "data" / "paperlists" / "colm" / "colm2024.json.gz"
ACL = ROOT.parent / "shared" / "data" / "paperlists" / "acl" / "acl2022.json.gz"
AFF = FIXTURES / "paperlists_affiliations" / "records.json"
#: two NeurIPS 2018 workshop papers as OpenReview's API v2 returns them: a decision ("accept"), ratings, confidences
NOTES = FIXTURES / "sources" / "openreview" / "notes_v2.json"


@pytest.fixture(scope="module")
def atlas_db(tmp_path_factory):
    d = tmp_path_factory.mktemp("onefilter")
    (d / "colm2024.json").write_text(json.dumps(json.loads(gzip.decompress(need(COLM).read_bytes()))[:40]))
    (d / "acl2022.json").write_text(json.dumps(json.loads(gzip.decompress(need(ACL).read_bytes()))[:20]))
    (d / "mixed.json").write_text(AFF.read_text())
    (d / "notes.json").write_text(NOTES.read_text())
    db = d / "one.db"
    build([d / "colm2024.json", d / "acl2022.json", d / "mixed.json", d / "notes.json"], db, embedder=HashEmbedder())
    return db


def cli_ids(db: Path, query: str, args: dict) -> list[str]:
    """The ids ``paperatlas search --json`` prints, every result."""
    flags: list[str] = []
    for k, v in args.items():
        flags += [f"--{k.replace('_', '-')}"] if v is True else [f"--{k.replace('_', '-')}", str(v)]
    res = CliRunner().invoke(main, ["search", query, "--db", str(db), "--json", "--mode", "bm25", "-k", "1000",
                                    *flags])
    assert res.exit_code == 0, res.output
    return [json.loads(line)["id"] for line in res.stdout.splitlines() if line.startswith("{")]


def web_ids(client, query: str, args: dict) -> list[str]:
    """The ids ``/api/search`` answers, every result."""
    qs = {"q": query, "k": 1000, **{k: ("1" if v is True else v) for k, v in args.items()}}
    out = client.get("/api/search", query_string=qs)
    assert out.status_code == 200, out.get_data(as_text=True)
    return [r["id"] for r in out.get_json()["results"]]


def test_cli_and_web_give_the_same_papers_for_the_same_filters(atlas_db):
    atlas = Atlas(atlas_db)
    papers = atlas.papers
    topic = Counter(p.topic_id for p in papers).most_common(1)[0][0]
    kp = Counter(concept_key(k) for p in papers for k in p.keyphrases).most_common(1)[0][0]
    status = Counter(p.status for p in papers).most_common(1)[0][0]
    code_status = Counter(p.status for p in papers if any(k.kind == "code" for k in p.links)).most_common(1)[0][0]
    years = sorted({p.year for p in papers if p.year is not None})
    assert len(years) >= 2, years
    mit = [p.id for p in papers if "MIT" in institutions(p)]
    merl = [p.id for p in papers if any("Mitsubishi" in a for a in p.affiliations)]
    assert mit and merl and set(merl) - set(mit), "the fixture has Mitsubishi papers that are not MIT's"
    asks = [
        {"affiliation": "mit"},
        {"affiliation": "Google"},
        {"affiliation": "mit", "has_code": True},
        {"status": status},
        {"status": code_status, "has_code": True},
        {"year": f"{years[0]}-{years[0]}"},
        {"year": f"{years[-1]}-"},
        {"topic": str(topic)},
        {"keyphrase": kp},
        {"has_code": True},
        {"topic": str(topic), "year": f"-{years[-1]}", "status": status},
        {"min_rating": 6},
        {"affiliation": "university", "year": f"{years[0]}-{years[-1]}"},
        {"institution": "MIT"},
        {"institution": "google"},
        {"institution": "Google", "min_citations": 10},
        {"decision": "accept"},
        {"decision": "ACCEPT", "year": "2018"},
        {"min_citations": 20},
        {"min_citations": 0},
        {"min_confidence": 3.5},
        {"max_spread": 0.5},
        {"min_confidence": 4, "max_spread": 1, "min_rating": 5},
    ]
    client = create_app(atlas_db, preload_model=False).test_client()
    for query in ("", "language models"):
        for args in asks:
            cli, web = cli_ids(atlas_db, query, args), web_ids(client, query, args)
            assert cli == web, (query, args)
            if not query:  # an empty query lists exactly the papers the filters pass
                assert cli, args
    for query in ("", "language models"):  # and sorted: the same order too
        for sort in ("rating", "citations", "year"):
            args = {"sort": sort, "has_code": True} if query else {"sort": sort}
            assert cli_ids(atlas_db, query, args) == web_ids(client, query, args), (query, sort)
    # the options the CLI gained filter as the facets say
    facets = {p.id: facets_of(p) for p in papers}
    assert set(cli_ids(atlas_db, "", {"institution": "mit"})) == set(mit)
    decided = {i for i, f in facets.items() if f.decision}
    assert decided and set(cli_ids(atlas_db, "", {"decision": "Accept"})) == decided  # the venue's "accept"
    assert cli_ids(atlas_db, "", {"decision": "Accept (Oral)"}) == web_ids(client, "", {"decision": "Accept (Oral)"})
    assert set(cli_ids(atlas_db, "", {"min_citations": 20})) == {
        i for i, f in facets.items() if f.citations is not None and f.citations >= 20}
    assert set(cli_ids(atlas_db, "", {"max_spread": 0.5})) == {
        i for i, f in facets.items() if f.rating_spread is not None and f.rating_spread <= 0.5}
    # affiliation=mit is MIT's papers, whole words: never Mitsubishi Electric Research Labs alone
    got = web_ids(client, "", {"affiliation": "mit"})
    assert set(got) == set(mit) and not set(got) & (set(merl) - set(mit))


def test_the_web_passes_one_filters_object_to_the_engine(atlas_db):
    """The web's filters are :class:`paperatlas.search.Filters`: the same call answers as the API does."""
    from paperatlas.web.search_views import FacetFilters

    assert FacetFilters is Filters
    atlas = Atlas(atlas_db)
    client = create_app(atlas_db, preload_model=False).test_client()
    flt = Filters(affiliation="mit", institution="", has_code=False)
    assert [h.paper.id for h in search_results(atlas, "", filters=flt).hits] == web_ids(client, "", {
        "affiliation": "mit"})
    web = client.get("/api/search", query_string={"institution": "mit", "k": 1000}).get_json()
    assert [r["id"] for r in web["results"]] == [
        h.paper.id for h in search_results(atlas, "", filters=Filters(institution="mit")).hits]


def test_one_reciprocal_rank_fusion():
    """``rrf`` (lists of ids) is :func:`rrf_scores` (rank arrays, the engine's form): one formula, Σ 1 / (60 + rank)."""
    import numpy as np

    from paperatlas.search.ranking import rrf, rrf_scores

    fused = rrf([["a", "b", "c"], ["b", "a", "d"]])
    assert fused == {"a": 1 / 61 + 1 / 62, "b": 1 / 62 + 1 / 61, "c": 1 / 63, "d": 1 / 63}
    scores = rrf_scores([np.array([1, 2, 3, 0]), np.array([2, 1, 0, 3])])
    assert scores.tolist() == [fused["a"], fused["b"], fused["c"], fused["d"]]
    assert rrf_scores([np.array([0, 0])]).tolist() == [0.0, 0.0] and rrf([]) == {}
