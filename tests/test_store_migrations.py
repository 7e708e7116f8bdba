"""Numbered schema migrations: an atlas written by an earlier release is upgraded in place (by a rebuild or by a
reader's write) and keeps everything the reader wrote; an atlas from a newer release is refused, not written."""

from __future__ import annotations

import hashlib
import inspect
import shutil
import sqlite3

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from paperatlas import readinglist as rl
from paperatlas.build import build
from paperatlas.cli import main
from paperatlas.overrides import override_paper
from paperatlas.sources.merge import paper_id
from paperatlas.store import Atlas, AtlasTooNew, schema_version
from paperatlas.store.migrations import LATEST, MIGRATIONS, expected_schema

RELEASE_0_1_0 = FIXTURES / "atlas_release_0.1.0.db"
EXCERPT = FIXTURES / "iclr2021_excerpt.md"
ROBUST_RL = "Robust Reinforcement Learning on State Observations with Learned Optimal Adversary"
MINIFLOAT = "A Block Minifloat Representation for Training Deep Neural Networks"
DISENTANGLED = "On the Transfer of Disentangled Representations in Realistic Settings"
HOPFIELD = "On the mapping between Hopfield networks and Restricted Boltzmann Machines"
SALD = "SALD: Sign Agnostic Learning with Derivatives"
NOTE = "Check the *1M images* dataset."
MY_TLDR = "Train RL agents against a learned optimal adversary."
MY_KEYPHRASES = ["robust RL", "state adversary", "ATLA"]


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def old_atlas(tmp_path):
    """A private copy of the atlas written by release 0.1.0 (schema version 2); the fixture itself is never
    modified."""
    before = _digest(RELEASE_0_1_0)
    dst = tmp_path / "atlas.db"
    shutil.copy(RELEASE_0_1_0, dst)
    yield dst
    assert _digest(RELEASE_0_1_0) == before


@pytest.fixture
def v1_atlas(old_atlas, tmp_path):
    """The 0.1.0 atlas as a schema-version-1 file had it: migration 1's tables only (no topic confidence,
    secondary topics or topic levels, no models, marks or list tables), plus the overrides table some version-1
    atlases had, holding the TL;DR override."""
    db = tmp_path / "v1.db"
    con = sqlite3.connect(db)
    MIGRATIONS[0][1](con)
    con.execute("CREATE TABLE overrides (paper_id TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL, "
                "title TEXT, edited_at TEXT NOT NULL, PRIMARY KEY (paper_id, field))")
    con.execute("ATTACH DATABASE ? AS old", (str(old_atlas),))
    for table in ("papers", "topics", "embeddings", "meta", "papers_fts"):
        cols = ", ".join(r[1] for r in con.execute(f"PRAGMA main.table_info({table})"))
        con.execute(f"INSERT INTO main.{table} ({cols}) SELECT {cols} FROM old.{table}")
    con.execute("INSERT INTO main.overrides SELECT * FROM old.overrides WHERE field = 'tldr'")
    con.execute("UPDATE main.meta SET value = '1' WHERE key = 'schema_version'")
    con.commit()
    con.execute("DETACH DATABASE old")
    con.close()
    return db


def _ro(db) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)


def _columns(db) -> dict[str, set[str]]:
    con = _ro(db)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: {r[1] for r in con.execute(f"PRAGMA table_info({n})")} for n in names}
    finally:
        con.close()


def _version(db) -> int:
    con = _ro(db)
    try:
        return schema_version(con)
    finally:
        con.close()


def _assert_reader_data_kept(db, tldr_override: bool = True, keyphrase_override: bool = True) -> None:
    by_id = {e.paper_id: e for e in rl.entries(db)}
    assert by_id[paper_id(ROBUST_RL)].rating == 1
    assert by_id[paper_id(MINIFLOAT)].rating == -1
    assert by_id[paper_id(DISENTANGLED)].note == NOTE
    hop = by_id[paper_id(HOPFIELD)]
    assert hop.lists == ["physics"] and hop.read_at
    assert rl.ratings(db) == ([paper_id(ROBUST_RL)], [paper_id(MINIFLOAT)])
    data = rl.export_json(db)
    assert {ROBUST_RL, MINIFLOAT, DISENTANGLED, HOPFIELD} <= {e["title"] for e in data["entries"]}
    ovs = {o["field"]: o["value"] for o in data["overrides"] if o["paper_id"] == paper_id(ROBUST_RL)}
    assert ovs == ({"tldr": MY_TLDR} if tldr_override else {}) | (
        {"keyphrases": MY_KEYPHRASES} if keyphrase_override else {})
    p = Atlas(db).by_id[paper_id(ROBUST_RL)]
    if tldr_override:
        assert (p.tldr, p.tldr_method) == (MY_TLDR, "edited by reader")
    if keyphrase_override:
        assert (p.keyphrases, p.keyphrases_method) == (MY_KEYPHRASES, "edited by reader")


def test_migrations_are_numbered_in_order_and_never_drop_a_table():
    assert [n for n, _ in MIGRATIONS] == list(range(1, LATEST + 1))
    # release 0.1.0 wrote version 2; 3 adds the papers' label terms, 4 the build history, 5 the topic overviews
    assert LATEST == 5
    for _, fn in MIGRATIONS:
        assert "DROP" not in inspect.getsource(fn).upper(), fn.__name__


def test_all_migrations_on_an_empty_file_give_the_schema_release_0_1_0_wrote_plus_terms_history_and_overviews():
    released = _columns(RELEASE_0_1_0)
    assert {t: set(c) for t, c in expected_schema().items()} == released | {
        "paper_terms": {"paper_id", "text_hash", "method", "terms"},
        "builds": {"id", "finished_at", "listings", "n_papers", "n_new"},
        "paper_history": {"paper_id", "title", "first_build"},
        "topics": released["topics"] | {"overview", "overview_papers", "overview_method", "overview_key"}}


@pytest.mark.slow
def test_rebuild_of_a_release_0_1_0_atlas_keeps_every_reader_row(old_atlas):
    _assert_reader_data_kept(old_atlas)  # readable as it is
    build([EXCERPT], old_atlas, venue="ICLR 2021", year=2021)
    assert len(Atlas(old_atlas).papers) == 12
    _assert_reader_data_kept(old_atlas)
    assert _version(old_atlas) == LATEST


def test_reader_write_on_a_release_0_1_0_atlas_keeps_the_rest(old_atlas):
    assert rl.add(old_atlas, paper_id(SALD), "geometry")
    override_paper(old_atlas, paper_id(SALD), tldr="Sign agnostic learning with derivatives for 3D shapes.")
    _assert_reader_data_kept(old_atlas)
    assert next(e for e in rl.entries(old_atlas) if e.paper_id == paper_id(SALD)).lists == ["geometry"]
    assert _version(old_atlas) == LATEST
    assert len(Atlas(old_atlas).papers) == 12


def test_reader_write_upgrades_a_version_1_atlas_without_a_rebuild(v1_atlas):
    assert _version(v1_atlas) == 1
    assert "level" not in _columns(v1_atlas)["topics"] and "marks" not in _columns(v1_atlas)
    assert rl.entries(v1_atlas) == []  # read-only use of the old file works and writes nothing
    assert rl.add(v1_atlas, paper_id(HOPFIELD), "physics")
    assert _version(v1_atlas) == LATEST
    cols = _columns(v1_atlas)
    assert {"topic_confidence", "low_confidence", "secondary_topic_ids"} <= cols["papers"]
    assert "level" in cols["topics"] and {"models", "marks", "list_items"} <= set(cols)
    atlas = Atlas(v1_atlas)
    assert len(atlas.papers) == 12 and atlas.vectors.shape == (12, 384)
    assert atlas.by_id[paper_id(ROBUST_RL)].tldr == MY_TLDR  # the version-1 override is still there
    rl.rate(v1_atlas, paper_id(ROBUST_RL), 1)
    override_paper(v1_atlas, paper_id(ROBUST_RL), keyphrases=MY_KEYPHRASES)
    assert Atlas(v1_atlas).by_id[paper_id(ROBUST_RL)].keyphrases == MY_KEYPHRASES
    (e,) = [e for e in rl.entries(v1_atlas) if e.lists]
    assert (e.paper_id, e.lists) == (paper_id(HOPFIELD), ["physics"])


@pytest.mark.slow
def test_rebuild_of_a_version_1_atlas_alters_instead_of_dropping(v1_atlas):
    build([EXCERPT], v1_atlas, venue="ICLR 2021", year=2021)
    assert _version(v1_atlas) == LATEST
    atlas = Atlas(v1_atlas)
    assert len(atlas.papers) == 12 and all(t.level in (0, 1) for t in atlas.topics.values())
    p = atlas.by_id[paper_id(ROBUST_RL)]
    assert (p.tldr, p.tldr_method) == (MY_TLDR, "edited by reader")


def test_a_version_2_atlas_missing_reader_tables_gets_them(old_atlas):
    con = sqlite3.connect(old_atlas)  # made between two schema changes of one version: no reading-list tables
    con.execute("DROP TABLE marks")
    con.execute("DROP TABLE list_items")
    con.commit()
    con.close()
    assert rl.entries(old_atlas) == []
    rl.mark_read(old_atlas, paper_id(SALD))
    (e,) = rl.entries(old_atlas)
    assert e.paper_id == paper_id(SALD) and e.read_at
    assert Atlas(old_atlas).by_id[paper_id(ROBUST_RL)].tldr == MY_TLDR


def test_an_atlas_from_a_newer_release_is_refused_and_left_unchanged(old_atlas):
    con = sqlite3.connect(old_atlas)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(LATEST + 1),))
    con.commit()
    con.close()
    before = _digest(old_atlas)
    expected = rf"{old_atlas.name}: this atlas has schema version {LATEST + 1}, newer than the version {LATEST}"
    with pytest.raises(AtlasTooNew, match=expected):
        rl.add(old_atlas, paper_id(SALD))
    with pytest.raises(AtlasTooNew, match=expected):
        override_paper(old_atlas, paper_id(SALD), tldr="x")
    with pytest.raises(AtlasTooNew, match=expected):
        build([EXCERPT], old_atlas, venue="ICLR 2021", year=2021)
    res = CliRunner().invoke(main, ["build", str(EXCERPT), "--db", str(old_atlas)])
    assert res.exit_code == 1 and f"newer than the version {LATEST}" in res.output and "Traceback" not in res.output
    assert _digest(old_atlas) == before
    assert not list(old_atlas.parent.glob(".*.building"))
