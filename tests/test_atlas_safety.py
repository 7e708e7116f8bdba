"""An atlas from someone else runs no code, and a malformed atlas gives one clear line, never a traceback.

The crafted payload below is a pickle whose ``__reduce__`` creates a marker file when unpickled; it is only ever
*data* here: the test puts it in every stored blob of an atlas (the topic model, the embeddings, the JSON columns)
and runs every command on the result.
"""

from __future__ import annotations

import pickle
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import SAMPLE
from paperatlas.cli import main
from paperatlas.enrich.topics import TopicModel
from paperatlas.publish import REGISTRY
from paperatlas.store import Atlas, MalformedAtlas

REBUILD_HINT = "rebuild it with `paperatlas build LISTING --db"
ELSEWHERE_HINT = "build the atlas at another path, e.g. `paperatlas build LISTING --db"  # a file that is no atlas


def _hinted(msg: str) -> bool:
    """Whether the message says what to do: rebuild a damaged atlas, or build elsewhere beside a foreign file."""
    return REBUILD_HINT in msg or ELSEWHERE_HINT in msg


class _Payload:
    """Unpickling this opens (creates) ``marker`` for writing: proof that code ran."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _payload(marker: Path) -> bytes:
    blob = pickle.dumps(_Payload(marker), protocol=pickle.HIGHEST_PROTOCOL)
    # the payload is live: unpickling it does create the marker (then it is removed again)
    pickle.loads(blob).close()  # noqa: S301 - the test's own payload, to show it would run
    assert marker.exists()
    marker.unlink()
    return blob


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _works_or_one_line(res, what: str) -> None:
    """The command either worked or failed with exit 1 and one ``Error:`` line (never a traceback)."""
    assert "Traceback" not in res.output, what
    assert res.exception is None or isinstance(res.exception, SystemExit), (what, repr(res.exception))
    if res.exit_code != 0:
        assert res.exit_code == 1, (what, res.output)
        errors = [line for line in res.output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1, (what, res.output)


def _poison(db: Path, payload: bytes, parts: set[str]) -> None:
    con = sqlite3.connect(db)
    if "models" in parts:
        con.execute("INSERT OR REPLACE INTO models VALUES ('topics', ?)", (payload,))
        con.execute("INSERT OR REPLACE INTO models VALUES ('other', ?)", (payload,))
    if "embeddings" in parts:  # as stored, and padded to a valid vector length (garbage floats)
        rows = con.execute("SELECT paper_id, length(vector) FROM embeddings").fetchall()
        for k, (pid, n) in enumerate(rows):
            blob = payload if k % 2 else (payload + b"\0" * n)[:n]
            con.execute("UPDATE embeddings SET vector = ? WHERE paper_id = ?", (blob, pid))
    if "json" in parts:
        cols = ("authors", "links", "sources", "given_keyphrases", "sections", "affiliations", "extra", "keyphrases",
                "secondary_topic_ids")
        con.execute(f"UPDATE papers SET {', '.join(f'{c} = ?' for c in cols)}", (payload,) * len(cols))
        con.execute("UPDATE topics SET keyphrases = ?", (payload,))
        # the schema version stays readable: migrations.schema_version (not this test's subject) reads it as int
        con.execute("UPDATE meta SET value = ? WHERE key != 'schema_version'", (payload,))
    con.commit()
    con.close()


def _every_command(db: Path, pid: str, out: Path):
    """``(name, args)`` of every command that reads or writes an atlas (build last: it rewrites the atlas)."""
    cmds = [("search", ["search", "learning", "--mode", "bm25", "--db", db]),
            ("show", ["show", pid, "--db", db]),
            ("related", ["related", pid, "--db", db]),
            ("recommend", ["recommend", "--like", pid, "--db", db]),
            ("topics", ["topics", "--db", db]),
            ("list add", ["list", "add", pid, "--list", "safety", "--db", db]),
            ("list like", ["list", "like", pid, "--db", db]),
            ("list show", ["list", "show", "--db", db]),
            ("edit", ["edit", pid, "--tldr", "A short summary of this paper.", "--db", db])]
    cmds += [(f"publish {name}", ["publish", "--format", name, "-o", out / f"{name}.out", "--db", db])
             for name in REGISTRY]
    cmds.append(("build", ["build", SAMPLE, "--db", db, "--venue", "ICLR 2021", "--year", "2021"]))
    return cmds


def _web(db: Path, pid: str) -> None:
    from paperatlas.web import create_app

    try:
        app = create_app(db, preload_model=False)
    except MalformedAtlas as e:
        assert "\n" not in str(e) and _hinted(str(e))
        return
    client = app.test_client()
    tid = next(iter(app.config["ATLAS"].topics), 0)
    for url in ("/", "/?q=learning", f"/paper/{pid}", "/list", "/foryou", "/topics", f"/topic/{tid}", "/map",
                "/api/map", "/api/search?q=learning"):
        assert client.get(url).status_code < 500, url


@pytest.mark.slow
@pytest.mark.parametrize("parts", [{"models"}, {"embeddings"}, {"json"}, {"models", "embeddings", "json"}],
                         ids=lambda p: "+".join(sorted(p)))
def test_a_crafted_atlas_runs_no_code_in_any_command(sample_atlas, tmp_path, parts):
    marker = tmp_path / "pwned"
    pid = Atlas(sample_atlas).papers[0].id
    db = tmp_path / "crafted.db"
    shutil.copy(sample_atlas, db)
    _poison(db, _payload(marker), parts)
    out = tmp_path / "out"
    out.mkdir()
    outcomes = {}
    _web(db, pid)
    for name, args in _every_command(db, pid, out):
        res = _run(*args)
        _works_or_one_line(res, name)
        outcomes[name] = res.exit_code
        assert not marker.exists(), name
    assert outcomes["build"] == 0  # a rebuild ignores what it cannot read and rewrites it
    if parts == {"models"}:  # nothing else is wrong: every command works
        assert set(outcomes.values()) == {0}, outcomes
    _web(db, pid)  # the rebuilt atlas
    assert not marker.exists()


def test_a_release_0_1_0_topic_model_is_not_unpickled(tmp_path):
    marker = tmp_path / "pwned"
    blob = _payload(marker)
    assert TopicModel.loads(blob, "") is None
    assert TopicModel.loads(blob, "sentence-transformers/all-MiniLM-L6-v2") is None
    assert not marker.exists()
    old = Path(__file__).parent / "fixtures" / "atlas_release_0.1.0.db"
    con = sqlite3.connect(f"file:{old}?mode=ro", uri=True)
    (stored,) = con.execute("SELECT blob FROM models WHERE name = 'topics'").fetchone()
    con.close()
    assert TopicModel.loads(stored, "sentence-transformers/all-MiniLM-L6-v2") is None  # ignored: topics refit


def test_no_pickle_in_the_package():
    src = Path(__file__).resolve().parents[1] / "src"
    for path in src.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for word in ("pickle", "joblib", "allow_pickle"):
            assert word not in text, f"{path}: {word}"


# --------------------------------------------------------------------------------------------------- malformed
def _not_sqlite(db: Path) -> str:
    db.write_bytes(b"hello, this is not a database\n" * 200)
    return "not an SQLite database"


def _empty(db: Path) -> str:
    db.write_bytes(b"")
    return "an empty file"


def _missing_tables(db: Path) -> str:
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE x (a)")
    con.commit()
    con.close()
    return "missing tables meta, papers, topics, embeddings"


def _edit(sql: str, *params):
    def make(db: Path) -> None:
        con = sqlite3.connect(db)
        con.execute(sql, params)
        con.commit()
        con.close()
    return make


MALFORMED = {
    "not SQLite": (_not_sqlite, None),
    "empty": (_empty, None),
    "missing tables": (_missing_tables, None),
    "short vector": (_edit("UPDATE embeddings SET vector = ? WHERE rowid = 1", b"\0" * 8),
                     "embeddings.vector of paper"),
    "odd-length vector": (_edit("UPDATE embeddings SET vector = ? WHERE rowid = 1", b"\0" * 7),
                          "not a vector of finite float32 values (7 bytes)"),
    "bad JSON": (_edit("UPDATE papers SET authors = ? WHERE rowid = 1", "[\"Ada Lovelace\","),
                 "papers.authors of paper"),
}


@pytest.fixture
def malformed(sample_atlas, tmp_path):
    def make(case: str) -> tuple[Path, str]:
        db = tmp_path / f"{case.replace(' ', '-')}.db"
        fn, expected = MALFORMED[case]
        if expected is not None:
            shutil.copy(sample_atlas, db)
            fn(db)
        else:
            expected = fn(db)
        return db, expected
    return make


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_atlas_gives_one_clear_line_in_every_command(malformed, sample_atlas, tmp_path, case):
    db, expected = malformed(case)
    pid = Atlas(sample_atlas).papers[0].id
    cmds = [c for c in _every_command(db, pid, tmp_path) if c[0] != "build"]
    cmds.append(("serve", ["serve", "--db", db]))
    for name, args in cmds:
        res = _run(*args)
        assert res.exit_code == 1, (name, res.output)
        assert isinstance(res.exception, SystemExit) and "Traceback" not in res.output, (name, res.output)
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), (name, res.output)
        assert str(db) in lines[0] and expected in lines[0] and _hinted(lines[0]), (name, lines[0])


@pytest.mark.parametrize("case", list(MALFORMED))
def test_create_app_on_a_malformed_atlas_raises_one_line(malformed, case):
    from paperatlas.web import create_app

    db, expected = malformed(case)
    with pytest.raises(MalformedAtlas) as err:
        create_app(db, preload_model=False)
    assert "\n" not in str(err.value) and str(db) in str(err.value) and expected in str(err.value)


def test_a_malformed_meta_value_is_named(copy_atlas):
    db = copy_atlas()
    _edit("UPDATE meta SET value = ? WHERE key = 'sources'", "{not json")(db)
    with pytest.raises(MalformedAtlas, match=r"meta\.value of key 'sources' is damaged: bad JSON"):
        Atlas(db)


def test_build_over_a_file_that_is_not_an_atlas_says_so_and_keeps_it(tmp_path):
    db = tmp_path / "notes.db"
    db.write_bytes(b"my notes, not a database " * 200)
    before = db.read_bytes()
    res = _run("build", str(SAMPLE), "--db", str(db), "--venue", "ICLR 2021")
    assert res.exit_code == 1 and "not an SQLite database" in res.output and ELSEWHERE_HINT in res.output
    assert f"--db {db}`" not in res.output and f"--db {db.with_name('notes-atlas.db')}`" in res.output, res.output
    assert "Traceback" not in res.output and db.read_bytes() == before


def test_a_schema_version_that_is_not_a_number_is_one_line(copy_atlas):
    db = copy_atlas()
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = 'eleven' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    for args in (["build", str(SAMPLE), "--db", str(db), "--venue", "ICLR 2021"],
                 ["list", "like", "Net-DNF: Effective Deep Modeling of Tabular Data", "--db", str(db)]):
        res = _run(*args)
        assert res.exit_code == 1 and "schema_version" in res.output and REBUILD_HINT in res.output, res.output
        assert "Traceback" not in res.output


def test_a_warning_during_build_is_shown_once(monkeypatch, tmp_path):
    """A warning other than the readers' own is shown once after the build (it used to be re-recorded and
    re-shown forever, growing the process until the OOM killer ended it)."""
    import warnings

    from paperatlas import build as build_mod

    shown = []

    def fake_build(*args, **kwargs):
        warnings.warn("overflow in a stage", RuntimeWarning, stacklevel=1)
        raise build_mod.BuildRefused("stop here")

    monkeypatch.setattr(build_mod, "build", fake_build)
    monkeypatch.setattr(warnings, "showwarning", lambda *a, **k: shown.append(str(a[0])))
    res = _run("build", str(SAMPLE), "--db", str(tmp_path / "a.db"))
    assert res.exit_code == 1 and "stop here" in res.output
    assert shown == ["overflow in a stage"]
