"""Links out to a paper and its BibTeX entry (paperatlas.cite), on real listings."""

from __future__ import annotations

import json

import bibtexparser

from conftest import FIXTURES
from paperatlas.cite import bibtex_entry, out_links
from paperatlas.model import Paper
from paperatlas.publish import csl_json
from paperatlas.sources import read


def _iclr() -> list[Paper]:
    return read(FIXTURES / "iclr2021_excerpt.md")


def test_a_paper_with_only_code_links_gets_title_searches_on_arxiv_and_semantic_scholar():
    p = next(p for p in _iclr() if p.code_url)
    links = out_links(p)
    kinds = [o.kind for o in links]
    assert "code" in kinds and kinds[-2:] == ["search", "search"]
    search = {o.label: o.url for o in links if o.kind == "search"}
    words = p.title.split()[0]
    assert search["Search arXiv"].startswith("https://arxiv.org/search/?query=") and words in search["Search arXiv"]
    assert search["Search arXiv"].endswith("&searchtype=title")
    assert search["Search Semantic Scholar"].startswith("https://www.semanticscholar.org/search?q=")


def test_openreview_and_arxiv_listings_link_to_forum_pdf_arxiv_and_doi_without_searches():
    colm = read(FIXTURES / "colm2024_head.json")[0]
    assert [(o.label, o.kind) for o in out_links(colm)] == [("OpenReview", "forum")]
    arxiv = read(FIXTURES / "sources" / "arxiv" / "query.atom")[0]
    got = {o.kind: o.url for o in out_links(arxiv)}
    assert got["arxiv"] == "https://arxiv.org/abs/cond-mat/0603029"
    assert got["pdf"] == "http://arxiv.org/pdf/cond-mat/0603029v1"
    assert got["doi"] == "https://doi.org/10.1103/PhysRevB.74.024520"
    assert "search" not in got


def test_bibtex_entry_carries_url_and_doi_and_parses_back():
    arxiv = read(FIXTURES / "sources" / "arxiv" / "query.atom")[0]
    lib = bibtexparser.parse_string(bibtex_entry(arxiv))
    assert len(lib.entries) == 1 and not lib.failed_blocks
    e = lib.entries[0]
    assert e["doi"] == "10.1103/PhysRevB.74.024520"
    assert e["url"] == "https://arxiv.org/abs/cond-mat/0603029"
    assert e["title"].startswith("From stripe to checkerboard order")
    colm = read(FIXTURES / "colm2024_head.json")[0]
    assert bibtexparser.parse_string(bibtex_entry(colm)).entries[0]["url"].startswith("https://openreview.net/forum")


def test_csl_json_carries_url_and_doi():
    arxiv = read(FIXTURES / "sources" / "arxiv" / "query.atom")[0]
    item = json.loads(csl_json.render([arxiv]))[0]
    assert item["DOI"] == "10.1103/PhysRevB.74.024520" and item["URL"].startswith("https://arxiv.org/abs/")
