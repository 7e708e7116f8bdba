"""Where the per-paper work runs: the local engine, its embedding children, and resuming an interrupted build (the Ray
engine: tests/test_engines_ray.py).

The fixture ``icml2019_200.json`` is the first 200 ICML 2019 papers with an abstract from the Paper Copilot
paperlists dump in ``../shared/data`` (fields cut to title, status, track, site, id, author, abstract, pdf, aff).
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from conftest import ICML200, by_id
from paperatlas.build import build
from paperatlas.engines.local import LocalEngine
from paperatlas.store.resume import ResumeCache, resume_path


class _Interrupt(Exception):
    pass


class _CountingEngine(LocalEngine):
    """The local engine, which counts the papers it embeds and can be made to fail after some batches."""

    def __init__(self, fail_after: int | None = None, embed_in_child: bool = False):
        super().__init__(precision="fp32", batch_size=64, embed_in_child=embed_in_child)
        self.fail_after = fail_after
        self.n_embedded = 0

    def run(self, items, kx, progress=None):
        for k, res in enumerate(super().run(items, kx, progress)):
            if self.fail_after is not None and k == self.fail_after:
                raise _Interrupt(f"interrupted after {k} batches")
            self.n_embedded += len(res.embedded)
            yield res


@pytest.mark.slow
def test_an_interrupted_build_resumes_from_the_vectors_it_had_written(local_build, tmp_path):
    db = tmp_path / "icml200.db"
    first = _CountingEngine(fail_after=2)  # 2 batches of 64 embedded and written, then the build dies
    with pytest.raises(_Interrupt):
        build([ICML200], db, engine=first)
    assert not db.exists()  # no half-written atlas
    assert resume_path(db).exists()
    with sqlite3.connect(resume_path(db)) as con:
        assert con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 128

    again = _CountingEngine()
    rep = build([ICML200], db, engine=again)
    assert again.n_embedded == 72 and rep.n_embedded == 72 and rep.n_resumed == 128
    assert not resume_path(db).exists()  # finished: the atlas holds every vector
    papers, vecs = by_id(db)
    ref_papers, ref_vecs = by_id(local_build)
    assert max(float(np.abs(vecs[pid] - ref_vecs[pid]).max()) for pid in ref_vecs) <= 1e-5
    assert {pid: p.tldr for pid, p in papers.items()} == {pid: p.tldr for pid, p in ref_papers.items()}


@pytest.fixture
def started(monkeypatch) -> list:
    """The processes of the embedding children the build starts (``ChildEmbedder`` spied on)."""
    from paperatlas.engines import local

    procs: list = []

    class Spy(local.ChildEmbedder):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            procs.append(self._proc)

    monkeypatch.setattr(local, "ChildEmbedder", Spy)
    return procs


@pytest.mark.slow
def test_a_large_build_embeds_in_a_child_process_with_the_same_vectors(local_build, tmp_path, monkeypatch,
                                                                       started):
    from paperatlas.engines.embed_child import ChildEmbedder

    monkeypatch.setattr("paperatlas.build.EMBED_IN_CHILD_MIN_PAPERS", 200)  # as a 42k build does
    spared = []
    spare_cores = ChildEmbedder.spare_cores
    monkeypatch.setattr(ChildEmbedder, "spare_cores", lambda self, n: (spared.append(n), spare_cores(self, n)))
    db = tmp_path / "icml200.db"
    rep = build([ICML200], db, precision="fp32")
    assert rep.n_embedded == 200 and len(started) == 1
    assert started[0].returncode == 0  # the child ended with the embedding
    # the lone child leaves a core to the keyphrases and TL;DRs, then embeds on every core (vectors unchanged below)
    assert spared == [1, 0]
    papers, vecs = by_id(db)
    ref_papers, ref_vecs = by_id(local_build)
    assert max(float(np.abs(vecs[pid] - ref_vecs[pid]).max()) for pid in ref_vecs) <= 1e-6
    assert {pid: (p.tldr, p.keyphrases, p.topic_id) for pid, p in papers.items()} == \
        {pid: (p.tldr, p.keyphrases, p.topic_id) for pid, p in ref_papers.items()}


@pytest.mark.slow
def test_an_interrupted_build_ends_its_embedding_child_and_resumes(local_build, tmp_path, started):
    db = tmp_path / "icml200.db"
    # 4 batches of 64: their 4 annotations, one "waiting" mark and 4 vector results; stopped at the 7th
    first = _CountingEngine(fail_after=6, embed_in_child=True)  # the child embeds while keyphrases are made
    with pytest.raises(_Interrupt):
        build([ICML200], db, engine=first)
    assert 64 <= first.n_embedded < 200
    assert started[0].returncode is not None  # the child did not outlive the build (killed while embedding)
    with sqlite3.connect(resume_path(db)) as con:  # every vector the build had received was written
        assert con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == first.n_embedded
    rep = build([ICML200], db, engine=_CountingEngine(embed_in_child=True))
    assert rep.n_embedded == 200 - first.n_embedded and rep.n_resumed == first.n_embedded
    assert started[1].returncode == 0  # a finished child exits by itself
    _, vecs = by_id(db)
    _, ref_vecs = by_id(local_build)
    assert max(float(np.abs(vecs[pid] - ref_vecs[pid]).max()) for pid in ref_vecs) <= 1e-6


def test_a_damaged_resume_file_is_started_afresh(tmp_path):
    db = tmp_path / "a.db"
    resume_path(db).write_bytes(b"this is not sqlite" * 100)
    cache = ResumeCache(db)
    assert len(cache) == 0
    cache.add("m", ["h1"], np.ones((1, 4), dtype=np.float32))
    assert list(cache.get("m")) == ["h1"]
    cache.discard()
    assert not resume_path(db).exists()


@pytest.mark.slow
def test_a_rebuild_that_adds_papers_keeps_the_tldrs_and_keyphrases_of_the_others(tmp_path):
    import json

    records = json.loads(ICML200.read_text())
    first = tmp_path / "icml180.json"
    first.write_text(json.dumps(records[:180]))
    db = tmp_path / "icml.db"
    build([first], db, engine=LocalEngine(precision="fp32"))
    before, _ = by_id(db)
    engine = _CountingEngine()
    rep = build([ICML200], db, engine=engine)
    assert rep.n_embedded == 20 and engine.n_embedded == 20
    assert rep.n_tldr_reused == 180 and rep.n_keyphrases_reused == 180
    assert rep.topic_mode == "update"
    after, _ = by_id(db)
    assert all(after[pid].tldr == p.tldr and after[pid].keyphrases == p.keyphrases for pid, p in before.items())
    assert all(after[pid].tldr and after[pid].keyphrases for pid in set(after) - set(before))
    # the keyphrase statistics were the first build's, updated with the 20 papers (no corpus refit)
    assert rep.keyphrase_stats == "update"
    from paperatlas.build import KEYPHRASE_STATS
    from paperatlas.enrich import keyphrase_stats
    from paperatlas.enrich.keyphrases import KeyphraseExtractor

    con = sqlite3.connect(db)
    stored = keyphrase_stats.loads(con.execute("SELECT blob FROM models WHERE name = ?",
                                                  (KEYPHRASE_STATS,)).fetchone()[0])
    con.close()
    fitted = KeyphraseExtractor().fit((r["title"], r["abstract"]) for r in records)
    assert stored.n_docs == fitted.n_docs == 200
    keys = set(stored.df) | set(fitted.df)  # all but the concepts of acronyms the first 180 papers defined otherwise
    assert sum(stored.doc_freq(k) == fitted.doc_freq(k) for k in keys) >= 0.99 * len(keys)
    # asked to refit: counted anew
    assert build([ICML200], db, engine=LocalEngine(precision="fp32"), refit_topics=True).keyphrase_stats == "fit"


@pytest.mark.slow
def test_adding_papers_to_a_large_atlas_embeds_them_in_an_early_child_with_the_same_result(tmp_path, monkeypatch,
                                                                                          started):
    """The child starts before the listings are read and embeds while the keyphrase statistics are updated."""
    import json

    monkeypatch.setattr("paperatlas.build.EMBED_IN_CHILD_MIN_PAPERS", 150)  # 180 papers: "a large atlas"
    records = json.loads(ICML200.read_text())
    first = tmp_path / "icml180.json"
    first.write_text(json.dumps(records[:180]))
    ref, db = tmp_path / "ref.db", tmp_path / "child.db"
    for atlas in (ref, db):
        build([first], atlas, engine=LocalEngine(precision="fp32"))
    assert not started
    build([ICML200], ref, engine=LocalEngine(precision="fp32"))  # in this process
    ahead = []
    real_ahead = LocalEngine.embed_ahead
    monkeypatch.setattr(LocalEngine, "embed_ahead", lambda self, items: (ahead.append(len(items)),
                                                                         real_ahead(self, items))[1])
    rep = build([ICML200], db, precision="fp32")
    assert len(started) == 1 and started[0].returncode == 0 and ahead == [20]
    assert rep.n_embedded == 20 and rep.topic_mode == "update"
    papers, vecs = by_id(db)
    ref_papers, ref_vecs = by_id(ref)
    assert max(float(np.abs(vecs[pid] - ref_vecs[pid]).max()) for pid in ref_vecs) <= 1e-6
    assert {pid: (p.tldr, p.keyphrases, p.topic_id, p.x, p.y) for pid, p in papers.items()} == \
        {pid: (p.tldr, p.keyphrases, p.topic_id, p.x, p.y) for pid, p in ref_papers.items()}
    # the same listings again: nothing to embed, the child started early is ended before it loads a model for nothing
    rep = build([ICML200], db, precision="fp32")
    assert rep.n_embedded == 0 and len(started) == 2 and started[1].returncode is not None
    assert by_id(db)[0].keys() == ref_papers.keys()


def test_embeddings_are_rewritten_only_for_papers_that_changed(tmp_path):
    from paperatlas.store import sqlite as store

    db = tmp_path / "a.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE IF NOT EXISTS embeddings (paper_id TEXT PRIMARY KEY, model TEXT NOT NULL, "
                "content_hash TEXT NOT NULL, vector BLOB NOT NULL)")
    v = np.eye(3, 4, dtype=np.float32)
    store.write_embeddings(con, "m", ["a", "b", "c"], ["ha", "hb", "hc"], v)
    rowid = dict(con.execute("SELECT paper_id, rowid FROM embeddings"))
    # b kept, c gone, a re-embedded (new text), d new
    store.write_embeddings(con, "m", ["a", "b", "d"], ["ha2", "hb", "hd"], v[[2, 1, 0]], unchanged={"b"})
    rows = {r[0]: (r[1], np.frombuffer(r[2], np.float32).tolist(), r[3])
            for r in con.execute("SELECT paper_id, content_hash, vector, rowid FROM embeddings")}
    assert sorted(rows) == ["a", "b", "d"]
    assert rows["b"] == ("hb", v[1].tolist(), rowid["b"])  # not written again
    assert rows["a"][:2] == ("ha2", v[2].tolist()) and rows["d"][:2] == ("hd", v[0].tolist())
    with pytest.raises(ValueError, match="one each per paper"):
        store.write_embeddings(con, "m", ["a"], ["h1", "h2"], v[:1])


@pytest.mark.slow
def test_a_child_per_core_embeds_what_one_process_embeds(local_build, tmp_path):
    """Where one-thread children beat torch's threads (issue 31), two of them give the same vectors and atlas."""
    db = tmp_path / "two.db"
    engine = LocalEngine(precision="fp32", batch_size=64, embed_in_child=True, processes=2)
    rep = build([ICML200], db, engine=engine)
    assert rep.n_embedded == 200 and "embedded in 2 child processes" in rep.precision
    assert not engine._children  # both ended with the last batch
    local_papers, local_vecs = by_id(local_build)
    papers, vecs = by_id(db)
    assert max(float(np.abs(vecs[pid] - local_vecs[pid]).max()) for pid in local_vecs) <= 1e-5
    assert [papers[pid].topic_id for pid in sorted(local_papers)] == \
        [local_papers[pid].topic_id for pid in sorted(local_papers)]
