"""Every column read is checked: a damaged cell of an atlas gives one line naming it, never a traceback or a 500.

The harness here (also run at length by ``benchmarks/corruption.py``) builds a real small atlas (the 12 papers of
``tests/fixtures/iclr2021_excerpt.md``, embedded by :class:`test_build_safety.HashEmbedder`, with a like, a list
entry, a note and a TL;DR override), damages one cell of it (or drops a table or a column), then runs the commands
and the web routes on it. Each must either work or fail with the one-line damage message; ``paperatlas check``
must name the damaged cell whenever anything reports damage, and say "clean" only when every command works.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import sqlite3
import struct
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paperatlas.cli import main  # noqa: E402
from paperatlas.publish import REGISTRY  # noqa: E402
from test_build_safety import HashEmbedder  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "iclr2021_excerpt.md"
#: What every one-line damage message says (:class:`paperatlas.store.check.DamagedAtlas` and MalformedAtlas).
DAMAGE_MARKS = ("is damaged:", "not a usable paperatlas atlas")
#: The tables a corruption may hit (FTS5 shadow tables are SQLite's own).
TABLES = ("meta", "papers", "embeddings", "topics", "models", "overrides", "marks", "list_items", "paper_terms",
          "builds", "paper_history", "papers_fts")
#: The bad values a cell may get; ``vector-*`` only for embeddings.vector.
NESTED = "[" * 100_000
BAD_VALUES = {
    "text": "not a number",
    "int": 7,
    "negative": -5,
    "real": 2.5,
    "inf": math.inf,
    "null": None,
    "empty": "",
    "blob": b"\x00\xffbinary",
    "nested": NESTED,
    "nested-object": '{"a": ' * 5000 + "1" + "}" * 5000,
    "json-nan": "[NaN]",
    "json-object-nan": '{"rating_mean": NaN, "ratings": [1e999]}',
    "json-wrong-type": '{"a": [1, 2]}',
    "json-list-of-numbers": "[1, 2, 3]",
    "json-list-of-lists": '[["a"], {"url": 5}]',
    "json-string": '"a string"',
    "json-extra-types": '{"ratings": "high", "citations": "many", "doi": 10}',
    "vector-3": struct.pack("3f", 0.5, 0.5, 0.5),
    "vector-odd": b"\x00" * 7,
    "vector-nan": struct.pack("384f", *([math.nan] * 384)),
    "vector-long": struct.pack("385f", *([0.05] * 385)),
}


def build_atlas(path: Path) -> Path:
    """A real small atlas at ``path``: the excerpt's 12 papers, HashEmbedder vectors, and some reader data."""
    from paperatlas import readinglist as rl
    from paperatlas.build import build
    from paperatlas.store import Atlas, set_overrides

    build([FIXTURE], path, venue="ICLR 2021", year=2021, embedder=HashEmbedder())
    atlas = Atlas(path)
    ids = [p.id for p in atlas.papers]
    atlas.close()
    rl.rate(path, ids[0], 1)
    rl.rate(path, ids[1], -1)
    rl.add(path, ids[2], "to read")
    rl.set_note(path, ids[0], "A *note*.")
    rl.mark_read(path, ids[3])
    set_overrides(path, ids[4], {"tldr": "A reader's TL;DR.", "keyphrases": ["own phrase"]})
    return path


@dataclass(frozen=True)
class Corruption:
    """One damage: a bad value in one cell, or a dropped table or column.

    Attributes:
        table: The table.
        column: The column (None: the whole table is dropped).
        rowid: The row (None with a column: the column is dropped).
        value: The name of the bad value (a key of :data:`BAD_VALUES`).
    """

    table: str
    column: str | None = None
    rowid: int | None = None
    value: str = ""

    def __str__(self) -> str:
        if self.column is None:
            return f"drop table {self.table}"
        if self.rowid is None:
            return f"drop column {self.table}.{self.column}"
        return f"{self.table}.{self.column} rowid {self.rowid} = {self.value}"


def layout(db: Path) -> dict[str, tuple[list[str], list[int]]]:
    """``table -> (columns, rowids)`` of the atlas's :data:`TABLES`."""
    con = sqlite3.connect(db)
    try:
        out = {}
        for t in TABLES:
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({t})")]
            rows = [r[0] for r in con.execute(f"SELECT rowid FROM {t} ORDER BY rowid")]
            out[t] = (cols, rows)
        return out
    finally:
        con.close()


def apply(db: Path, c: Corruption) -> bool:
    """Damage ``db`` as ``c`` says.

    Returns:
        False when SQLite refuses it (a NOT NULL or primary-key constraint, a column of an FTS5 table): no damage.
    """
    con = sqlite3.connect(db)
    try:
        if c.column is None:
            con.execute(f"DROP TABLE {c.table}")
        elif c.rowid is None:
            if c.table == "papers_fts":
                return False
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({c.table})") if r[1] != c.column]
            con.execute(f"CREATE TABLE _kept AS SELECT {', '.join(cols)} FROM {c.table}")
            con.execute(f"DROP TABLE {c.table}")
            con.execute(f"ALTER TABLE _kept RENAME TO {c.table}")
        else:
            con.execute(f"UPDATE {c.table} SET {c.column} = ? WHERE rowid = ?", (BAD_VALUES[c.value], c.rowid))
        con.commit()
        return True
    except sqlite3.DatabaseError:
        return False
    finally:
        con.close()


@dataclass
class Outcome:
    """What one command or route did: ``ok``, ``damage`` (the one-line message), ``error`` (another one-line
    error, e.g. the damaged paper is not found) or ``crash`` (a traceback, a 500 without the line, a hang)."""

    name: str
    kind: str
    detail: str = ""


@dataclass
class Report:
    """Outcomes of one damaged atlas."""

    corruption: Corruption
    applied: bool
    outcomes: list[Outcome] = field(default_factory=list)
    check_output: str = ""
    check_code: int = 0

    @property
    def crashes(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.kind == "crash"]


def commands(db: Path, pid: str, out: Path) -> list[tuple[str, list[str]]]:
    """``(name, argv)`` of the commands run on a damaged atlas (none writes to it)."""
    cmds = [("search", ["search", "learning", "--db", db]),
            ("search bm25", ["search", "learning", "--mode", "bm25", "--db", db]),
            ("show", ["show", pid, "--db", db]),
            ("related", ["related", pid, "--db", db]),
            ("recommend", ["recommend", "--db", db]),
            ("topics", ["topics", "--db", db]),
            ("trends", ["trends", "--db", db]),
            ("list show", ["list", "show", "--db", db]),
            ("list export", ["list", "export", "-o", out / "list.json", "--db", db]),
            ("new", ["new", "--db", db])]
    cmds += [(f"publish {name}", ["publish", "--format", name, "-o", out / f"{name}.out", "--db", db])
             for name in REGISTRY]
    return [(n, [str(a) for a in args]) for n, args in cmds]


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith("Error:")]
    return lines[0] if len(lines) == 1 else ""


def run_command(name: str, argv: list[str]) -> Outcome:
    """Run one command in this process and classify it."""
    res = CliRunner().invoke(main, argv)
    out = res.output
    if "Traceback" in out or (res.exception is not None and not isinstance(res.exception, SystemExit)):
        return Outcome(name, "crash", f"{type(res.exception).__name__}: {str(res.exception)[:200]}")
    if res.exit_code == 0:
        return Outcome(name, "ok")
    line = _one_line(out)
    if res.exit_code == 2 and line:  # a usage error (e.g. no likes to recommend from): clean, not damage
        return Outcome(name, "error", line)
    if res.exit_code != 1 or not line:
        return Outcome(name, "crash", f"exit {res.exit_code}: {out[-300:]}")
    return Outcome(name, "damage" if any(m in line for m in DAMAGE_MARKS) else "error", line)


def routes(pid: str, tid: int, author: str) -> list[str]:
    """The web routes requested on a damaged atlas."""
    return ["/", "/?q=learning", "/papers", f"/paper/{pid}", f"/topic/{tid}", "/topics", "/map", "/api/map",
            "/api/search?q=learning", f"/api/related/{pid}", "/list", "/foryou", "/new", "/schedule", "/trends",
            f"/author/{author}"]


def run_web(db: Path, urls: list[str]) -> list[Outcome]:
    """Load the app on ``db`` and request every URL; classify each answer."""
    from paperatlas.store import MalformedAtlas
    from paperatlas.web import create_app

    try:
        app = create_app(db, preload_model=False)
    except MalformedAtlas as e:
        kind = "damage" if "\n" not in str(e) and any(m in str(e) for m in DAMAGE_MARKS) else "crash"
        return [Outcome("web load", kind, str(e)[:300])]
    except Exception as e:  # noqa: BLE001 - classified, never hidden
        return [Outcome("web load", "crash", f"{type(e).__name__}: {str(e)[:200]}")]
    app.logger.disabled = True  # a 500's traceback is classified here, not printed
    client = app.test_client()
    out = [Outcome("web load", "ok")]
    try:
        for url in urls:
            try:
                r = client.get(url)
            except Exception as e:  # noqa: BLE001
                out.append(Outcome(url, "crash", f"{type(e).__name__}: {str(e)[:200]}"))
                continue
            body = r.get_data(as_text=True)
            if r.status_code < 500:
                out.append(Outcome(url, "ok"))
            elif "Traceback" not in body and any(m in body for m in DAMAGE_MARKS):
                out.append(Outcome(url, "damage", _damage_line(body)))
            else:
                out.append(Outcome(url, "crash", f"{r.status_code}: {body[:200]}"))
    finally:
        for t in threading.enumerate():  # the app's warm-up reads the atlas: let it finish before closing it
            if t.name == "paperatlas-warm-up":
                t.join(timeout=30)
        app.config["ATLAS"].close()
    return out


def _damage_line(body: str) -> str:
    m = re.search(r"[^<>\n]*(?:is damaged:|not a usable paperatlas atlas)[^<>\n]*", body)
    return m.group(0) if m else ""


class Base:
    """The small atlas, built once, with what the commands and routes need to name in it."""

    def __init__(self, path: Path):
        from paperatlas.authors import atlas_authors
        from paperatlas.store import Atlas

        self.path = build_atlas(path)
        atlas = Atlas(path)
        self.pid = atlas.papers[0].id
        self.tid = next(iter(atlas.topics))
        self.author = next(k for _, k in atlas_authors(atlas).keys_of(atlas.papers[0]) if k)
        atlas.close()
        self.layout = layout(path)

    def damaged(self, c: Corruption, where: Path, web: bool = True) -> Report:
        """Copy the atlas to ``where``, damage it, run every command (and route) on it."""
        db = where / "damaged.db"
        shutil.copy(self.path, db)
        rep = Report(c, apply(db, c))
        if not rep.applied:
            return rep
        out = where / "out"
        out.mkdir(exist_ok=True)
        for name, argv in commands(db, self.pid, out):
            rep.outcomes.append(run_command(name, argv))
        res = CliRunner().invoke(main, ["check", "--db", str(db)])
        rep.check_output, rep.check_code = res.output, res.exit_code
        if "Traceback" in res.output or (res.exception and not isinstance(res.exception, SystemExit)):
            rep.outcomes.append(Outcome("check", "crash", f"{type(res.exception).__name__}: {res.exception}"))
        elif res.exit_code not in (0, 1):
            rep.outcomes.append(Outcome("check", "crash", f"exit {res.exit_code}: {res.output[-300:]}"))
        if web:
            rep.outcomes += run_web(db, routes(self.pid, self.tid, self.author))
        return rep


def check_names(rep: Report) -> list[str]:
    """What is wrong with ``check``'s verdict on a damaged atlas (empty: it is right).

    ``check`` exits 1 and names the damaged table (and column) whenever any command or route reported damage;
    when it says the atlas is clean, no command or route reported damage.
    """
    c = rep.corruption
    damage = [o for o in rep.outcomes if o.kind == "damage"]
    problems = []
    if rep.check_code == 0 and damage:
        problems.append(f"check says clean but {damage[0].name} said {damage[0].detail!r}")
    if rep.check_code == 1:
        want = c.table if c.column is None else f"{c.table}.{c.column}" if c.table != "papers_fts" else c.table
        if want not in rep.check_output and not (c.column is None and c.table in rep.check_output):
            problems.append(f"check does not name {want}: {rep.check_output[:300]!r}")
    return problems


# --------------------------------------------------------------------------------------------------- the tests
@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Base:
    return Base(tmp_path_factory.mktemp("damaged") / "base.db")


def assert_sound(rep: Report) -> None:
    """No crash, and ``check``'s verdict agrees with what the commands and routes said."""
    assert rep.applied, rep.corruption
    assert not rep.crashes, (str(rep.corruption), [(o.name, o.detail) for o in rep.crashes])
    assert not check_names(rep), (str(rep.corruption), check_names(rep))


#: The damage issue 26 found, each of which used to give a traceback or a 500: ``name -> corruption``. Row 1 of
#: each table is a paper row (or the first meta key, model, mark).
FINDINGS = {
    "[ x 100000 in papers.authors": Corruption("papers", "authors", 1, "nested"),
    "[ x 100000 in meta.value": Corruption("meta", "value", 2, "nested"),
    "[ x 100000 in topics.keyphrases": Corruption("topics", "keyphrases", 1, "nested"),
    "3-float vector": Corruption("embeddings", "vector", 1, "vector-3"),
    "text in year": Corruption("papers", "year", 1, "text"),
    "text in x": Corruption("papers", "x", 1, "text"),
    "BLOB title": Corruption("papers", "title", 1, "blob"),
    "text in the models blob": Corruption("models", "blob", 3, "text"),
    "bad marks rating": Corruption("marks", "rating", 1, "text"),
    "BLOB marks title": Corruption("marks", "title", 1, "blob"),
    "NaN in papers.extra": Corruption("papers", "extra", 1, "json-object-nan"),
    "NaN in papers.authors": Corruption("papers", "authors", 1, "json-nan"),
    "dropped papers.x": Corruption("papers", "x"),
    "dropped marks.note": Corruption("marks", "note"),
    "dropped meta.key": Corruption("meta", "key"),
    "dropped embeddings.paper_id": Corruption("embeddings", "paper_id"),
    "missing paper_history": Corruption("paper_history"),
    "missing papers_fts": Corruption("papers_fts"),
}


@pytest.mark.parametrize("name", list(FINDINGS))
def test_each_finding_is_one_line_and_named_by_check(base, tmp_path, name):
    rep = base.damaged(FINDINGS[name], tmp_path)
    assert_sound(rep)
    damage = [o for o in rep.outcomes if o.kind == "damage"]
    assert damage, (name, [(o.name, o.kind) for o in rep.outcomes])
    for o in damage:
        assert "\n" not in o.detail and str(tmp_path / "damaged.db") in o.detail, o
    assert rep.check_code == 1


def test_models_blob_row_3_is_the_recommender(base):
    con = sqlite3.connect(base.path)
    assert con.execute("SELECT name FROM models WHERE rowid = 3").fetchone()[0] == "recommender.tfidf"
    con.close()


def test_check_on_a_sound_atlas_says_so(base):
    res = CliRunner().invoke(main, ["check", "--db", str(base.path)])
    assert res.exit_code == 0 and "sound" in res.output, res.output


def test_check_lists_every_damaged_cell(base, tmp_path):
    db = tmp_path / "many.db"
    shutil.copy(base.path, db)
    for c in (Corruption("papers", "year", 2, "text"), Corruption("papers", "title", 3, "blob"),
              Corruption("embeddings", "vector", 4, "vector-3"), Corruption("marks", "rating", 1, "negative"),
              Corruption("meta", "value", 3, "json-nan"), Corruption("paper_history")):
        assert apply(db, c), c
    res = CliRunner().invoke(main, ["check", "--db", str(db)])
    assert res.exit_code == 1 and "Traceback" not in res.output
    for cell in ("papers.year of paper", "papers.title of paper", "embeddings.vector of paper",
                 "marks.rating of paper", "meta.value of key", "table paper_history: missing"):
        assert cell in res.output, (cell, res.output)
    assert "6 damaged cells" in res.output and "DELETE FROM marks WHERE rowid = 1" in res.output


def test_a_damaged_atlas_at_load_is_refused_by_serve_in_one_line(base, tmp_path):
    rep_db = tmp_path / "d.db"
    shutil.copy(base.path, rep_db)
    apply(rep_db, Corruption("papers", "authors", 1, "nested"))
    res = CliRunner().invoke(main, ["serve", "--db", str(rep_db)])
    assert res.exit_code == 1 and "Traceback" not in res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "papers.authors of paper" in lines[0] and "nested deeper than 20" in lines[0]


def test_a_damaged_reader_row_is_a_500_page_with_the_line_and_other_pages_work(base, tmp_path):
    from paperatlas.web import create_app

    db = tmp_path / "d.db"
    shutil.copy(base.path, db)
    app = create_app(db, preload_model=False)
    app.logger.disabled = True
    client = app.test_client()
    assert client.get("/list").status_code == 200
    apply(db, Corruption("marks", "rating", 1, "text"))  # damaged while the app runs
    r = client.get("/list")
    body = r.get_data(as_text=True)
    assert r.status_code == 500 and "Traceback" not in body
    assert "marks.rating of paper" in body and "DELETE FROM marks WHERE rowid = 1" in body
    assert client.get("/topics").status_code == 200  # a page that reads no reader row


@pytest.mark.parametrize("args", [["build", str(FIXTURE)], ["search", "x"], ["check"], ["list", "show"]])
def test_db_naming_a_directory_fails_at_once_in_one_line(tmp_path, args):
    res = CliRunner().invoke(main, [*args, "--db", str(tmp_path)])
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "is a directory, not an atlas file" in lines[0], res.output


def test_json_is_decoded_without_deep_recursion():
    from paperatlas.store.check import MAX_JSON_DEPTH, Bad, decode_json, json_depth

    assert json_depth(NESTED) == MAX_JSON_DEPTH + 1
    assert json_depth('["[[[[", {"a": "]]]{"}]') == 2  # brackets inside strings do not count
    for bad in (NESTED, "[NaN]", "[1e999]", '{"a": Infinity}', '["\\ud800"]', b"[]", 5):
        with pytest.raises(Bad):
            decode_json(bad)
    deep = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert decode_json(deep) is not None


# --------------------------------------------------------------------------------------- the property test
try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is in the test extras
    given = None

#: Examples per run in CI (about 1 s each here; $PAPERATLAS_DAMAGE_EXAMPLES overrides); benchmarks/corruption.py
#: runs many more.
CI_EXAMPLES = int(os.environ.get("PAPERATLAS_DAMAGE_EXAMPLES", "20"))


def draw_corruption(draw, base: Base) -> Corruption:
    """A random damage of ``base``: a cell (9 in 11), a dropped column (1 in 11) or a dropped table (1 in 11)."""
    table = draw(st.sampled_from(TABLES))
    cols, rows = base.layout[table]
    kind = draw(st.sampled_from(["cell"] * 9 + ["column", "table"]))
    if kind == "table":
        return Corruption(table)
    col = draw(st.sampled_from(cols))
    if kind == "column" or not rows:
        return Corruption(table, col)
    values = [v for v in BAD_VALUES if not v.startswith("vector-") or (table, col) == ("embeddings", "vector")]
    return Corruption(table, col, draw(st.sampled_from(rows)), draw(st.sampled_from(values)))


if given is not None:
    @settings(max_examples=CI_EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(data=st.data())
    def test_a_randomly_damaged_atlas_never_crashes(base, data):
        c = draw_corruption(data.draw, base)
        with tempfile.TemporaryDirectory() as tmp:
            rep = base.damaged(c, Path(tmp))
        if rep.applied:
            assert_sound(rep)


def test_every_vector_of_another_length_than_the_model_is_damage(base, tmp_path):
    """All 3-float vectors agree with each other, but not with the MiniLM model that made them (search crashed)."""
    db = tmp_path / "all3.db"
    shutil.copy(base.path, db)
    con = sqlite3.connect(db)
    con.execute("UPDATE embeddings SET vector = ?, model = 'sentence-transformers/all-MiniLM-L6-v2'",
                (BAD_VALUES["vector-3"],))
    con.commit()
    con.close()
    out = run_command("search", ["search", "learning", "--db", str(db)])
    assert out.kind == "damage" and "3 float32 values, not the atlas's 384" in out.detail, out
    res = CliRunner().invoke(main, ["check", "--db", str(db)])
    assert res.exit_code == 1 and "12 damaged cells" in res.output, res.output
