"""The Paper Copilot paperlists JSON reader on real records."""

import gzip
import json

import pytest

from conftest import FIXTURES, PAPERLISTS, need
from paperatlas import sources
from paperatlas.model import SourceError


def test_colm_records_map_every_field(tmp_path):
    path = tmp_path / "colm2024.json"
    path.write_text((FIXTURES / "colm2024_head.json").read_text())
    papers = sources.read(path)
    assert sources.detect_format(path) == "paperlists-json"
    assert len(papers) == 6
    p = papers[0]
    assert p.title == "InstructAV: Instruction Fine-tuning Large Language Models for Authorship Verification"
    assert p.authors == ["Yujia Hu", "Zhiqiang Hu", "Chun Wei Seah", "Roy Ka-Wei Lee"]
    assert p.affiliations[2] == "DSO"
    assert p.venue == "COLM 2024" and p.year == 2024
    assert p.status == "Poster" and p.track == "main"
    assert p.given_keyphrases == ["Authorship Verification", "Parameter-Efficient Fine-Tuning (PEFT)", "InstructAV"]
    assert p.links[0].url == "https://openreview.net/forum?id=0UK8c2kg7c" and p.links[0].kind == "openreview"
    assert p.sources[0].record == 0 and p.sources[0].native_id == "0UK8c2kg7c"


def test_aaai_2022_gzip_with_code_links_and_citations():
    path = need(PAPERLISTS / "aaai" / "aaai2022.json.gz")
    papers = sources.read(path)
    assert len(papers) == 1319
    assert all(p.venue == "AAAI 2022" and p.year == 2022 for p in papers)
    with_code = [p for p in papers if p.code_url]
    assert len(with_code) == 232
    assert with_code[0].code_url.startswith("https://github.com/")
    assert len({p.extra.get("primary_area") for p in papers} - {None}) == 20  # the 20 AAAI tracks


def test_bad_records_are_reported_with_file_and_record_index(tmp_path):
    recs = json.loads((FIXTURES / "colm2024_head.json").read_text())
    recs[3]["title"] = "   "
    path = tmp_path / "colm2024.json"
    path.write_text(json.dumps(recs))
    with pytest.raises(SourceError, match=r"colm2024\.json:record 3: missing or empty 'title'"):
        sources.read(path, strict=True)
    with pytest.warns(sources.RecordSkipped, match=r"colm2024\.json:record 3: missing or empty 'title'"):
        papers = sources.read(path)
    assert len(papers) == len(recs) - 1 and all(p.sources[0].record != 3 for p in papers)


def test_review_scores_citations_and_affiliations_become_facets():
    """COLM 2024 as paperlists gives it: four ratings and confidences per paper, Scholar citations, affiliations."""
    from paperatlas.facets import facets_of

    p = sources.read(FIXTURES / "colm2024_head.json")[0]
    assert p.title.startswith("InstructAV")
    assert p.extra["ratings"] == [5.0, 7.0, 7.0, 7.0] and p.extra["confidences"] == [4.0, 3.0, 3.0, 5.0]
    f = facets_of(p)
    assert (f.rating_mean, f.rating_spread, f.n_reviews, f.confidence_mean) == (6.5, 0.87, 4, 3.75)
    assert f.citations == int(json.loads((FIXTURES / "colm2024_head.json").read_text())[0]["gs_citation"])
    assert f.institutions == ("Singapore University of Technology and Design", "DSO")


def test_broken_json_names_the_line(tmp_path):
    path = tmp_path / "broken.json.gz"
    path.write_bytes(gzip.compress(b'[\n {"title": "A"},\n {"title": "B",,}\n]'))
    with pytest.raises(SourceError, match=r"broken\.json\.gz:3: invalid JSON"):
        sources.read(path, format="paperlists-json")


def test_identifiers_citations_and_a_mean_rating_without_the_reviews(tmp_path):
    """DOI (AAAI 2022), arXiv id with a version (CVPR 2017), Scholar citations; COLM 2024 rating_avg alone."""
    recs = json.loads((FIXTURES / "paperlists_affiliations" / "records.json").read_text())
    papers = sources.read(FIXTURES / "paperlists_affiliations" / "records.json", format="paperlists-json")
    cvpr, colm, aaai = papers[0], papers[2], papers[3]
    assert cvpr.extra["arxiv_id"] == "1612.05424" and recs[0]["arxiv"] == "1612.05424v2"
    assert aaai.extra["doi"] == recs[3]["doi"] == "10.1609/aaai.v36i8.20796"
    assert cvpr.extra["citations"] == int(recs[0]["gs_citation"]) == cvpr.extra["gs_citation"]  # old key kept too
    assert colm.extra["ratings"] == [7.0, 7.0, 8.0] and "rating_mean" not in colm.extra
    del recs[2]["rating"]  # only the mean: it is kept as the mean rating, with no per-review scores
    path = tmp_path / "colm2024.json"
    path.write_text(json.dumps(recs[2:3]))
    (p,) = sources.read(path)
    assert p.extra["rating_mean"] == pytest.approx(7.333, abs=0.001) and "ratings" not in p.extra
    assert p.extra["confidences"] == [3.0, 3.0, 4.0]


def test_unknown_citation_count_is_missing_not_zero():
    """AISTATS 2025 as paperlists gives it: gs_citation -1 on every paper (Scholar not yet crawled)."""
    from paperatlas.facets import facets_of

    papers = sources.read(need(PAPERLISTS / "aistats" / "aistats2025.json.gz"))
    assert len(papers) == 583
    assert all("citations" not in p.extra and "gs_citation" not in p.extra for p in papers)
    assert all(facets_of(p).citations is None for p in papers)


def test_a_placeholder_abstract_is_read_as_no_abstract():
    # two real NeurIPS 1990 records: one with the placeholder 55 early NeurIPS records carry, one with an abstract
    placeholder, real = sources.read(FIXTURES / "nips1990_placeholder.json")
    assert placeholder.abstract == "" and placeholder.title
    assert len(real.abstract) > 200 and "unavailable" not in real.abstract.lower()
