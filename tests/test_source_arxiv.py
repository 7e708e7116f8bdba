"""The arXiv reader, on a recorded arXiv API response replayed through the real ``arxiv`` client (``responses``).

The machines that run these tests cannot reach arXiv: ``query.atom`` is the response body the arxiv package's own
test suite recorded (origin in tests/fixtures/sources/arxiv/ORIGIN.md). Every request the client makes is served
from it by ``responses`` at the HTTP layer, so the client's URL building, paging and feed parsing are the real ones.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import arxiv
import pytest
import requests
import responses
from click.testing import CliRunner

from conftest import FIXTURES
from paperatlas import sources
from paperatlas.cli import main
from paperatlas.model import SourceError
from paperatlas.sources import arxiv_api
from test_build_safety import HashEmbedder

FEED = (FIXTURES / "sources" / "arxiv" / "query.atom").read_text()
PAGE = (FIXTURES / "sources" / "arxiv" / "page.atom").read_text()  # 4 entries of a page; totalResults 31
API = re.compile(r"https://export\.arxiv\.org/api/query.*")
TITLE = "From stripe to checkerboard order on the square lattice in the presence of quenched disorder"


@pytest.fixture
def online(monkeypatch):
    """The network reader may fetch (the suite runs offline by default); a client that does not sleep 3 s."""
    monkeypatch.delenv("PAPERATLAS_OFFLINE")
    monkeypatch.setattr(arxiv_api, "DEFAULT_MAX", 5)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rs:
        yield rs


def fast_client():
    return arxiv.Client(page_size=100, delay_seconds=0.0, num_retries=0)


def test_category_query_with_dates_and_max_goes_through_the_real_client(online):
    online.add(responses.GET, API, body=FEED)
    papers = sources.read("arxiv:cond-mat.str-el", date_from="2006-01-01", date_to="2006-12-31", max_results=7,
                          client=fast_client())
    (p,) = papers
    assert p.title == TITLE and p.authors == ["Adrian Del Maestro", "Bernd Rosenow", "Subir Sachdev"]
    assert (p.venue, p.year, p.track) == ("Phys. Rev. B", 2006, "cond-mat.str-el")
    assert p.extra["arxiv_id"] == "cond-mat/0603029" and p.extra["doi"] == "10.1103/PhysRevB.74.024520"
    assert p.extra["journal_ref"] == "Phys. Rev. B 74, 024520 (2006)"
    assert p.abstract.startswith("We discuss the effects of quenched disorder") and "\n" not in p.abstract
    assert [x.url for x in p.links] == ["https://arxiv.org/abs/cond-mat/0603029",
                                        "http://arxiv.org/pdf/cond-mat/0603029v1"]
    (call,) = online.calls
    q = parse_qs(urlparse(call.request.url).query)
    assert q["search_query"] == ["cat:cond-mat.str-el AND submittedDate:[200601010000 TO 200612312359]"]


def test_quoted_words_search_all_fields_and_the_default_client_keeps_arxivs_3_second_delay():
    assert arxiv_api.search_query('"quenched disorder"') == "all:quenched AND all:disorder"
    assert arxiv_api.search_query("ti:checkerboard AND au:del_maestro") == "ti:checkerboard AND au:del_maestro"
    with pytest.raises(SourceError, match="YYYY-MM-DD"):
        arxiv_api.search_query("cs.LG", date_from="last week")
    assert arxiv.Client().delay_seconds >= 3.0  # what fetch() uses unless a test injects a client


def test_paging_stops_at_max_and_the_default_client_waits_between_pages(online, monkeypatch):
    online.add(responses.GET, API, body=PAGE)  # every page request is served the same recorded page
    slept = []
    monkeypatch.setattr(arxiv.time, "sleep", slept.append)  # the real client's rate limit, without waiting
    papers = sources.read("arxiv:au:del_maestro", max_results=6)
    starts = [parse_qs(urlparse(c.request.url).query)["start"] for c in online.calls]
    assert starts == [["0"], ["4"]]  # 31 results on arXiv, but 6 asked for: a second page, not eight
    assert parse_qs(urlparse(online.calls[0].request.url).query)["max_results"] == ["6"]
    assert len(slept) == 1 and 0 < slept[0] <= 3.0  # it waited before the second request (3 s since the first)
    # the replayed page repeats its 4 papers; each is kept once
    assert [p.extra["arxiv_id"] for p in papers] == ["1201.4869", "cond-mat/0412498", "cond-mat/0603029",
                                                     "0807.2873"]


def test_venue_is_the_journal_the_reference_names_else_arxiv(tmp_path):
    papers = sources.read(FIXTURES / "sources" / "arxiv" / "page.atom")
    assert [p.venue for p in papers] == ["Int. J. Mod. Phys. B", "Physical Review B", "Phys. Rev. B",
                                         "Annals of Physics"]
    assert papers[3].extra["journal_ref"] == "Annals of Physics 324, 523 (2009)."
    assert papers[3].extra["comment"] == "91 pages, 18 figures, single column format"
    assert papers[0].extra["doi"] == "10.1142/S021797921244002X" and papers[0].year == 2012
    unpublished = tmp_path / "preprint.atom"
    unpublished.write_text(re.sub(r"\s*<arxiv:journal_ref[^>]*>[^<]*</arxiv:journal_ref>", "", FEED))
    (p,) = sources.read(unpublished)
    assert p.venue == "arXiv" and "journal_ref" not in p.extra
    assert arxiv_api.journal_venue("NeurIPS 2023") == "NeurIPS 2023"
    assert arxiv_api.journal_venue("Accepted at ICLR 2021") == "ICLR 2021"
    assert arxiv_api.journal_venue("JHEP0712:012,2007") == "JHEP"
    assert arxiv_api.journal_venue("Proceedings of the 40th International Conference on Machine Learning, "
                                   "PMLR 202:1-20, 2023") == ("Proceedings of the 40th International Conference "
                                                              "on Machine Learning, PMLR")
    assert arxiv_api.journal_venue("(2006) 1-12") == ""


def test_a_rebuild_reads_the_cache_when_arxiv_is_gone(online):
    online.add(responses.GET, API, body=FEED)
    first = sources.read("arxiv:cond-mat.str-el", client=fast_client())
    online.replace(responses.GET, API, body=requests.ConnectionError("network unreachable"))
    again = sources.read("arxiv:cond-mat.str-el", client=fast_client())
    assert [p.title for p in again] == [p.title for p in first] == [TITLE] and len(online.calls) == 1
    with pytest.raises(SourceError) as err:  # --refresh needs the network; the message says how to do without
        sources.read("arxiv:cond-mat.str-el", client=fast_client(), refresh=True)
    assert len(online.calls) == 2
    assert str(err.value).startswith("arxiv:cond-mat.str-el: cannot reach arXiv (export.arxiv.org)")
    assert "drop --refresh to build from the copy fetched" in str(err.value)


def test_unreachable_and_nothing_cached_names_the_source(online):
    online.add(responses.GET, API, body=requests.ConnectionError("network unreachable"))
    with pytest.raises(SourceError) as err:
        sources.read('arxiv:"grokking"', client=fast_client())
    msg = str(err.value)
    assert msg.startswith('arxiv:"grokking": cannot reach arXiv') and "nothing is cached" in msg


def test_a_file_of_ids_and_links_is_fetched_by_id_list(online, tmp_path):
    online.add(responses.GET, API, body=FEED)
    ids = tmp_path / "reading.txt"
    ids.write_text("# papers from the group meeting\nhttps://arxiv.org/abs/cond-mat/0603029v1\n"
                   "arXiv:cond-mat/0603029\nnot an id\n")
    assert sources.detect_format(ids) == "arxiv"
    with pytest.warns(sources.RecordSkipped, match=r"reading\.txt:4: not an arXiv id"):
        (p,) = sources.read(ids, client=fast_client())
    assert p.title == TITLE
    assert parse_qs(urlparse(online.calls[0].request.url).query)["id_list"] == ["cond-mat/0603029"]
    ids.write_text("2106.09685\n")  # not fetched before: with arXiv unreachable, the error names the file
    online.replace(responses.GET, API, body=requests.ConnectionError("network unreachable"))
    with pytest.raises(SourceError) as err:
        sources.read(ids, client=fast_client())
    assert str(err.value).startswith(f"{ids}: cannot reach arXiv (export.arxiv.org)")
    assert "nothing is cached" in str(err.value)


def test_saved_feed_file_and_a_bad_entry(tmp_path):
    (p,) = sources.read(FIXTURES / "sources" / "arxiv" / "query.atom")
    assert p.title == TITLE and p.extra["categories"] == ["cond-mat.str-el", "cond-mat.supr-con"]
    broken = tmp_path / "feed.atom"
    broken.write_text(FEED.replace(TITLE.replace(" in the presence", " in the presence\n "), "")
                      .replace("<title>From stripe to checkerboard order on the square lattice in the presence\n"
                               "  of quenched disorder</title>", "<title></title>"))
    with pytest.warns(sources.RecordSkipped, match=r"feed\.atom:record 0: arXiv entry without a title"):
        assert sources.read(broken) == []
    with pytest.raises(SourceError, match="record 0"):
        sources.read(broken, strict=True)


def test_build_from_arxiv_on_the_command_line(online, tmp_path, monkeypatch):
    online.add(responses.GET, API, body=FEED)
    monkeypatch.setattr("paperatlas.engines.local.get_embedder", lambda **_: HashEmbedder())
    real = arxiv.Client
    made = []
    monkeypatch.setattr(arxiv, "Client", lambda **k: made.append(k) or real(**{**k, "delay_seconds": 0.0}))
    db = tmp_path / "arxiv.db"
    res = CliRunner().invoke(main, ["build", "arxiv:cond-mat.str-el", "--max", "3", "--db", str(db), "--replace"])
    assert res.exit_code == 0, res.output
    assert "1 papers" in res.output
    assert made == [{"page_size": 3, "delay_seconds": 3.0, "num_retries": 3}]  # arXiv's 3 s between requests
    assert parse_qs(urlparse(online.calls[0].request.url).query)["max_results"] == ["3"]
