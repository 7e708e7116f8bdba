"""Nothing a user types or feeds wipes their atlas: refused wipes, one build at a time, stale files, kills.

The builds here use :class:`HashEmbedder` (a fast bag-of-words stand-in for the embedding model), so the whole
module runs in well under a minute. Run as a script (``python tests/test_build_safety.py LISTING DB``), this
module is the build that the concurrency and kill tests start in subprocesses.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

EXCERPT = Path(__file__).resolve().parent / "fixtures" / "iclr2021_excerpt.md"
ME = Path(__file__).resolve()


class HashEmbedder:
    """A deterministic stand-in for the embedding model: hashed bag of words, L2-normalised, MiniLM's size."""

    name = "test-hash-embedder"
    dim = 384

    def encode(self, texts, progress=None):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in text.lower().split():
                out[i, int(hashlib.md5(w.encode()).hexdigest()[:8], 16) % self.dim] += 1.0
            out[i] /= max(float(np.linalg.norm(out[i])), 1e-9)
        if progress:
            progress(len(texts))
        return out


if __name__ == "__main__":  # the build of the subprocess tests: python tests/test_build_safety.py LISTING DB
    from paperatlas.build import build as _build

    _build([sys.argv[1]], sys.argv[2], venue="ICLR 2021", year=2021, embedder=HashEmbedder(),
           on_wait=lambda msg: print(msg, file=sys.stderr, flush=True))
    sys.exit(0)

import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from paperatlas import readinglist as rl  # noqa: E402
from paperatlas.build import BuildRefused, build  # noqa: E402
from paperatlas.cli import main  # noqa: E402
from paperatlas.store import Atlas  # noqa: E402
from paperatlas.store.lock import AtlasBusy, build_lock, lock_path  # noqa: E402

STALE = (".building", ".building-journal", ".building-wal", ".building-shm")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _papers(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM papers").fetchone()[0]
    finally:
        con.close()


def _leftovers(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.glob(f".{db.name}.*") if p.name.endswith(STALE))


def _first(n: int, tmp_path: Path, name: str = "iclr2021_part.md") -> Path:
    """A listing of the excerpt's first ``n`` papers."""
    parts = EXCERPT.read_text().split("\n## ")
    path = tmp_path / name
    path.write_text("\n## ".join(parts[: n + 1]))  # parts[0] is the blank lines before the first heading
    return path


@pytest.fixture(scope="module")
def base_atlas(tmp_path_factory) -> Path:
    """The 12-paper excerpt built with 4 sub-topics (read-only: tests copy it)."""
    db = tmp_path_factory.mktemp("base") / "atlas.db"
    rep = build([EXCERPT], db, venue="ICLR 2021", year=2021, embedder=HashEmbedder(), n_topics=4)
    assert rep.n_papers == 12 and rep.n_topics == 4
    return db


@pytest.fixture
def atlas(base_atlas, tmp_path) -> Path:
    db = tmp_path / "atlas.db"
    shutil.copy(base_atlas, db)
    return db


@pytest.fixture
def fast_model(monkeypatch):
    """Builds started from the command line embed with :class:`HashEmbedder` instead of loading the model."""
    monkeypatch.setattr("paperatlas.engines.local.get_embedder", lambda **_: HashEmbedder())


# ------------------------------------------------------------------------------------------- 1. no silent wipe
@pytest.mark.parametrize(("name", "text", "fmt"), [("empty.md", "", "paperlists-md"),
                                                  ("empty.json", "[]", "paperlists-json"),
                                                  ("blank.md", "\n\n# Accepted papers\n\nNone yet.\n",
                                                   "paperlists-md")])
def test_listing_without_papers_is_refused_and_the_atlas_is_byte_identical(atlas, tmp_path, name, text, fmt):
    listing = tmp_path / name
    listing.write_text(text)
    before = _digest(atlas)
    with pytest.raises(BuildRefused, match=r"yield 0 papers; refusing to replace its 12 papers with none; pass "
                                           r"--replace to do it anyway"):
        build([listing], atlas, formats=[fmt], embedder=HashEmbedder())
    res = CliRunner().invoke(main, ["build", str(listing), "--db", str(atlas), "--format", fmt])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert res.output.count("\n") == 1 and "0 papers" in res.output and "--replace" in res.output, res.output
    assert _digest(atlas) == before and _papers(atlas) == 12 and not _leftovers(atlas)


def test_empty_listing_does_not_create_an_atlas(tmp_path):
    listing = tmp_path / "empty.json"
    listing.write_text("[]")
    with pytest.raises(BuildRefused, match="refusing to build an empty atlas"):
        build([listing], tmp_path / "new.db", formats=["paperlists-json"], embedder=HashEmbedder())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.json"]


def test_a_10_mb_line_of_junk_is_refused_and_the_atlas_is_byte_identical(atlas, tmp_path):
    junk = tmp_path / "junk.md"
    junk.write_bytes(b"x" * 10_000_000)
    before = _digest(atlas)
    res = CliRunner().invoke(main, ["build", str(junk), "--db", str(atlas)])  # its time: hostile_inputs.py
    assert res.exit_code == 1 and "unrecognised listing format" in res.output and "Traceback" not in res.output
    assert _digest(atlas) == before


def test_build_keeping_fewer_than_half_is_refused_unless_replace(atlas, tmp_path, fast_model):
    before = _digest(atlas)
    five = _first(5, tmp_path)
    msg = r"this build would keep 5 of the atlas's 12 papers \(5 papers in the listings\); .* --replace"
    with pytest.raises(BuildRefused, match=msg):
        build([five], atlas, venue="ICLR 2021", embedder=HashEmbedder())
    res = CliRunner().invoke(main, ["build", str(five), "--db", str(atlas), "--venue", "ICLR 2021"])
    assert res.exit_code == 1 and res.output.count("\n") == 1 and "keep 5 of the atlas's 12 papers" in res.output
    assert _digest(atlas) == before and not _leftovers(atlas)
    # half is enough: 6 of 12 are kept
    rep = build([_first(6, tmp_path, "six.md")], atlas, venue="ICLR 2021", embedder=HashEmbedder())
    assert rep.n_papers == 6 and _papers(atlas) == 6
    # --replace replaces; the 2-paper rebuild of a 4-sub-topic atlas refits instead of crashing in k-means
    res = CliRunner().invoke(main, ["build", str(_first(2, tmp_path, "two.md")), "--db", str(atlas), "--venue",
                                    "ICLR 2021", "--replace"])
    assert res.exit_code == 0, res.output
    assert "reclustered" in res.output and _papers(atlas) == 2


def test_two_paper_rebuild_of_an_atlas_with_four_sub_topics_refits(atlas, tmp_path):
    assert sum(t.level == 1 for t in Atlas(atlas).topics.values()) == 4
    rep = build([_first(2, tmp_path)], atlas, venue="ICLR 2021", embedder=HashEmbedder(), replace=True)
    assert rep.topic_mode == "refit" and rep.n_papers == 2
    assert all(p.topic_id in Atlas(atlas).topics for p in Atlas(atlas).papers)
    # and three papers after that (more papers than sub-topics now): an ordinary update again
    rep = build([_first(3, tmp_path, "three.md")], atlas, venue="ICLR 2021", embedder=HashEmbedder())
    assert rep.n_papers == 3


def test_huge_abstract_is_cut_and_the_cli_says_so(tmp_path, fast_model):
    text = EXCERPT.read_text()
    listing = tmp_path / "iclr2021.md"
    first = text.index("- abstract@")
    end = text.index("\n", first)
    listing.write_text(text[:end] + " and so on" * 1_000_000 + text[end:])  # a 10 MB abstract
    db = tmp_path / "atlas.db"
    res = CliRunner().invoke(main, ["build", str(listing), "--db", str(db)])  # its time: hostile_inputs.py
    assert res.exit_code == 0, res.output
    assert f"warning: {listing}:3: abstract of 10,00" in res.stderr and "cut to 20,000" in res.stderr
    assert max(len(p.abstract) for p in Atlas(db).papers) <= 20_000


def test_malformed_records_are_skipped_counted_and_fatal_with_strict(tmp_path, fast_model):
    """A listing with two broken records: the CLI names each as FILE:LINE, counts them, builds the rest;
    --strict stops at the first one and writes nothing."""
    lines = EXCERPT.read_text().split("\n")
    heads = [i for i, line in enumerate(lines) if line.startswith("## ")]
    broken = list(lines)
    for i in heads[1], heads[3]:  # the second and fourth papers lose their author line
        broken[i + 2] = ""
    listing = tmp_path / "iclr2021.md"
    listing.write_text("\n".join(broken))
    db = tmp_path / "atlas.db"
    res = CliRunner().invoke(main, ["build", str(listing), "--db", str(db), "--strict"])
    assert res.exit_code == 1 and f"{listing}:" in res.output and "author line" in res.output
    assert not db.exists()
    res = CliRunner().invoke(main, ["build", str(listing), "--db", str(db)])
    assert res.exit_code == 0, res.output
    skipped = [line for line in res.stderr.splitlines() if line.startswith("skipped: ")]
    assert len(skipped) == 2 and all(f"{listing}:" in line for line in skipped), res.stderr
    assert "2 malformed records skipped (listed above); --strict makes them fatal" in res.stderr
    assert _papers(db) == len(heads) - 2


# ------------------------------------------------------------------------------------ 2. one build at a time
def test_a_build_waits_for_the_lock_or_says_the_atlas_is_busy(atlas):
    before = _digest(atlas)
    waits: list[str] = []
    with build_lock(atlas):
        t0 = time.perf_counter()
        with pytest.raises(AtlasBusy, match="another build of this atlas is still running"):
            build([EXCERPT], atlas, embedder=HashEmbedder(), lock_timeout=0.5, on_wait=waits.append)
        assert time.perf_counter() - t0 >= 0.5
        # the reader's writes do not take the build lock
        pid = Atlas(atlas).papers[0].id
        assert rl.add(atlas, pid, "reading")
        before = _digest(atlas)
    assert len(waits) == 1 and "waiting" in waits[0] and str(atlas) in waits[0]
    assert _digest(atlas) == before and lock_path(atlas).name == "atlas.db.lock"
    build([EXCERPT], atlas, venue="ICLR 2021", embedder=HashEmbedder(), lock_timeout=0)  # free again
    assert [e.paper_id for e in rl.entries(atlas)] == [pid]


def test_two_processes_building_one_atlas_both_finish(atlas, tmp_path):
    eleven = _first(11, tmp_path)
    errs = [tmp_path / "err0.txt", tmp_path / "err1.txt"]
    with build_lock(atlas):  # both start while a build holds the atlas: both must wait, then run one by one
        procs = []
        for listing, err in zip((EXCERPT, eleven), errs, strict=True):
            with open(err, "w") as f:
                procs.append(subprocess.Popen([sys.executable, str(ME), str(listing), str(atlas)],
                                              stdout=subprocess.DEVNULL, stderr=f))
        deadline = time.monotonic() + 60
        while not all("waiting" in e.read_text() for e in errs) and time.monotonic() < deadline:
            time.sleep(0.1)
    for p, err in zip(procs, errs, strict=True):
        assert p.wait(timeout=120) == 0, err.read_text()
        assert "another build of this atlas is running; waiting for it to finish" in err.read_text()
    assert _papers(atlas) in (11, 12) and not _leftovers(atlas)  # whichever ran last
    con = sqlite3.connect(atlas)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()


# ----------------------------------------------------------------------------------- 3. stale files, kills
def test_stale_files_are_removed_by_the_next_build_only_when_no_build_holds_the_lock(atlas):
    stale = [atlas.parent / f".atlas.db.k1l13d{suffix}" for suffix in STALE]
    for p in stale:
        p.write_bytes(b"left by a killed build")
    other = atlas.parent / ".other.db.x.building"  # another atlas's build: not ours to remove
    other.write_bytes(b"")
    with build_lock(atlas), pytest.raises(AtlasBusy):
        build([EXCERPT], atlas, embedder=HashEmbedder(), lock_timeout=0.2)
    assert all(p.exists() for p in stale)  # a build that does not hold the lock removes nothing
    build([EXCERPT], atlas, venue="ICLR 2021", embedder=HashEmbedder())
    assert not _leftovers(atlas) and other.exists()


def test_build_killed_at_random_points_leaves_the_old_or_the_new_atlas(atlas, tmp_path):
    listings = [_first(11, tmp_path), EXCERPT]  # no new paper: a build takes ~3 s with the fake model
    killed = 0
    for seed in range(8):
        listing = listings[seed % 2]
        prev = _digest(atlas)
        proc = subprocess.Popen([sys.executable, str(ME), str(listing), str(atlas)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(random.Random(seed).uniform(0.2, 3.0))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            killed += 1
        proc.wait()
        con = sqlite3.connect(atlas)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        con.close()
        if _digest(atlas) != prev:  # the build got to its swap: the new atlas, complete
            papers = Atlas(atlas).papers
            assert len(papers) == (11 if listing == listings[0] else 12)
            assert all(p.topic_id is not None and p.tldr for p in papers)
    assert killed >= 4, "the builds finished before the kills: the test needs a slower build"
    build([EXCERPT], atlas, venue="ICLR 2021", embedder=HashEmbedder())
    assert not _leftovers(atlas) and _papers(atlas) == 12
