"""Progress on long work outside the build's stages (issue 30 part 4): network fetches (arXiv, ACL Anthology),
``publish --format site`` and the ``eval`` commands report real counts to a progress factory, and their default tqdm
bars stay off stderr when it is not a terminal (a pipe, a CI log)."""

from __future__ import annotations

import re

import arxiv
import pytest
import responses
from click.testing import CliRunner

from conftest import FIXTURES
from paperatlas import sources
from paperatlas.cli import main
from paperatlas.sources import arxiv_api
from paperatlas.sources.progress import progress_of, stderr_progress
from paperatlas.store import Atlas
from test_source_acl import datadir  # noqa: F401 - the two-collection Anthology data directory fixture

API = re.compile(r"https://export\.arxiv\.org/api/query.*")
PAGE = (FIXTURES / "sources" / "arxiv" / "page.atom").read_text()  # 4 entries of a page; totalResults 31


class Recorder:
    """A progress factory that keeps every bar's description, total and increments."""

    def __init__(self):
        self.bars: list[tuple[str, int | None, list[int]]] = []

    def __call__(self, desc: str, total: int | None):
        steps: list[int] = []
        self.bars.append((desc, total, steps))
        return steps.append

    def done(self) -> dict[str, tuple[int | None, int]]:
        """``desc -> (total, units reported)``."""
        return {desc: (total, sum(steps)) for desc, total, steps in self.bars}


@pytest.fixture
def online(monkeypatch):
    monkeypatch.delenv("PAPERATLAS_OFFLINE")
    monkeypatch.setattr(arxiv.time, "sleep", lambda _s: None)  # the client's 3 s between pages, without waiting
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rs:
        yield rs


def test_an_arxiv_fetch_counts_every_entry_received_and_a_cached_read_fetches_nothing(online):
    online.add(responses.GET, API, body=PAGE)  # every page request is served the same 4-entry page
    rec = Recorder()
    papers = sources.read("arxiv:au:del_maestro", max_results=6, fetch_progress=rec)
    assert rec.done() == {"arXiv": (6, 6)}  # two pages: 4 + 2 entries, at most 6 asked for
    assert len(papers) == 4  # the replayed page repeats its papers; each is kept once
    again = Recorder()
    assert len(sources.read("arxiv:au:del_maestro", max_results=6, fetch_progress=again)) == 4
    assert again.bars == []  # read from the cache: no fetch, no bar


def test_an_arxiv_id_list_counts_the_ids_fetched(online, tmp_path):
    online.add(responses.GET, API, body=(FIXTURES / "sources" / "arxiv" / "query.atom").read_text())
    ids = tmp_path / "reading.txt"
    ids.write_text("https://arxiv.org/abs/cond-mat/0603029v1\n")
    rec = Recorder()
    (p,) = sources.read(ids, client=arxiv.Client(delay_seconds=0.0, num_retries=0), fetch_progress=rec)
    assert rec.done() == {"arXiv": (1, 1)} and p.extra["arxiv_id"] == "cond-mat/0603029"
    assert arxiv_api.DEFAULT_MAX > 1  # the bar's total is the ids asked for, not the search default


def test_an_acl_anthology_read_counts_its_volumes(datadir):  # noqa: F811 - the fixture imported above
    rec = Recorder()
    papers = sources.read("acl:2022.acl", acl_data=str(datadir), fetch_progress=rec)
    (total, done) = rec.done()["ACL Anthology"]
    assert total == done >= 2 and len(papers) == 6  # the collection's long and short volumes


def test_publish_site_counts_every_page_it_writes(sample_atlas, tmp_path):
    from paperatlas.authors import author_index
    from paperatlas.publish.site import write_site

    atlas = Atlas(sample_atlas)
    try:
        papers, topics = atlas.papers, list(atlas.topics.values())
    finally:
        atlas.close()
    rec = Recorder()
    out = write_site(papers, topics, {}, tmp_path / "site", title="ICLR 2021", progress=rec)
    ((desc, total, steps),) = rec.bars
    pages = [f for f in out.rglob("*") if f.suffix in (".html", ".js") and f.parent.name != "assets"]
    assert desc == "site pages" and total == sum(steps) == len(pages)
    assert total == len(papers) + len(topics) + len(author_index(papers).entries) + 5 > 60


def test_eval_tldr_and_keyphrases_count_each_paper_of_each_method():
    from paperatlas.eval.keyphrase_eval import evaluate_keyphrases
    from paperatlas.eval.tldr_eval import evaluate_tldr, load_records

    rec = Recorder()
    rows = evaluate_tldr(load_records(FIXTURES / "scitldr_dev20.jsonl"), ["title", "first-sentence"], progress=rec)
    n = rows[0]["n"]
    assert n == 20 and rec.done() == {"TL;DR title": (n, n), "TL;DR first-sentence": (n, n)}

    rec = Recorder()
    awesome = sources.read(FIXTURES / "kp_awesome_ntk.txt")
    rows = evaluate_keyphrases(awesome, ["ours", "yake"], progress=rec)
    n = rows[0]["n"]
    assert n > 5 and rec.done() == {"keyphrases ours": (n, n), "keyphrases yake": (n, n)}
    assert all(steps == [1] * n for _, _, steps in rec.bars)  # paper by paper, not one jump at the end


def test_eval_search_counts_every_query_of_every_method(sample_atlas):
    from paperatlas.eval import search_eval

    queries = {"lottery tickets": {"x"}, "graph neural networks": {"y"}, "contrastive learning": {"z"}}
    rec = Recorder()
    atlas = Atlas(sample_atlas)
    try:
        rows = search_eval.search_rows(atlas, queries, progress=rec)
    finally:
        atlas.close()
    assert rec.done() == {"search eval": (len(rows) * 3, len(rows) * 3)} and len(rows) == 4


def test_the_default_bars_stay_off_a_stderr_that_is_not_a_terminal(capsys, sample_atlas, tmp_path):
    with progress_of("site pages", 3, "page") as update:
        for _ in range(3):
            update(1)
    stderr_progress("embed", 2)(2)
    assert capsys.readouterr().err == ""
    res = CliRunner().invoke(main, ["publish", "--db", str(sample_atlas), "--format", "site", "-o",
                                    str(tmp_path / "site")])
    assert res.exit_code == 0, res.output
    assert "site pages" not in res.output and "page/s" not in res.output


def test_the_default_bar_draws_on_a_terminal(monkeypatch, capsys):
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with progress_of("arXiv", 4, "paper") as update:
        update(4)
    assert "arXiv" in capsys.readouterr().err


@pytest.fixture(scope="module")
def awesome_gold():
    """The 64 papers of three awesome-list sections (a gold set), with hashed bag-of-words vectors for MiniLM's."""
    from paperatlas.eval.topic_eval import load_gold
    from test_build_safety import HashEmbedder

    _, texts, gold = load_gold(str(FIXTURES / "awesome_topics.txt"))
    return texts, gold, HashEmbedder().encode(texts)


def test_eval_related_neighbours_and_recommend_count_papers_seeds_and_requests(awesome_gold):
    from paperatlas.eval import recommend_eval, related_eval, topic_eval

    texts, gold, emb = awesome_gold
    rec = Recorder()
    rows = related_eval.related_rows(texts, gold, emb, progress=rec)
    ((desc, total, steps),) = rec.bars
    assert desc == "related eval" and total == sum(steps) == len(rows) * rows[0]["n"] == len(rows) * 64

    rec = Recorder()
    topic_eval.evaluate_knn(texts, gold, emb, [1, 2], progress=rec)
    assert rec.done() == {"k-NN eval": (2, 2)}

    runs = [recommend_eval.draws(gold, 2, 3, seed) for seed in (1, 2)]
    n_requests = sum(len(r) for r in runs)
    rec = Recorder()
    rows, _ = recommend_eval.evaluate_set(texts, gold, emb, runs, progress=rec)
    assert len(rows) == recommend_eval.N_METHODS  # the bar's total counts every method's requests
    assert rec.done() == {"recommend eval": (recommend_eval.N_METHODS * n_requests,) * 2} and n_requests == 12


def test_eval_topics_counts_its_seeds(awesome_gold):
    from paperatlas.eval import topic_filing
    from paperatlas.eval.gold_sets import load_gold_papers

    _, papers = load_gold_papers(str(FIXTURES / "awesome_topics.txt"))
    rec = Recorder()
    res = topic_filing.evaluate_set(papers, awesome_gold[2], [1, 2], with_bertopic=False, with_labels=False,
                                    progress=rec)
    assert rec.done() == {"topic eval": (2, 2)} and res.rows


def test_the_keyphrase_statistics_fit_counts_every_paper():
    """A cold build's keyphrase statistics (a minute at 42k papers) report the papers they have counted."""
    from conftest import SAMPLE
    from paperatlas.enrich import keyphrase_stats
    from paperatlas.sources.paperlists_md import read_text

    papers = read_text(SAMPLE.read_text(encoding="utf-8"), str(SAMPLE))
    counted: list[int] = []
    kx = keyphrase_stats.fit(((p.title, p.abstract) for p in papers), progress=counted.append)
    assert sum(counted) == len(papers) == kx.n_docs and all(n > 0 for n in counted)
