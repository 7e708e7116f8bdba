"""Nothing a reader did is ever lost, and outputs cannot act on the reader's machine (issue 26).

``publish`` never deletes or overwrites what it did not write: a project folder, the atlas, another database. Its
BibTeX and CSL-JSON cannot make the reader's LaTeX read, write or run anything, and no export names where files are
on the publisher's machine. On a small real atlas (tests/fixtures/iclr2021_excerpt.md, embedded by
:class:`test_build_safety.HashEmbedder`) through the command line, and on a Zotero CSL-JSON listing.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import bibtexparser
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import FIXTURES  # noqa: E402
from paperatlas import readinglist as rl  # noqa: E402
from paperatlas.cli import main  # noqa: E402
from paperatlas.publish import DIRECTORY_FORMATS, REGISTRY, publish, render  # noqa: E402
from paperatlas.sources import read  # noqa: E402
from test_build_safety import HashEmbedder  # noqa: E402

EXCERPT = FIXTURES / "iclr2021_excerpt.md"
FILE_FORMATS = [f for f in REGISTRY if f not in DIRECTORY_FORMATS]
#: What TeX reads as a control word: a backslash and letters ("@" too, as in packages), or one other character.
CONTROL = re.compile(r"\\((?:[^\W\d_]|@)+)|\\.", re.DOTALL)
#: Primitives and macros that read, write, run or (re)define.
DANGEROUS = {"input", "include", "write", "immediate", "openin", "openout", "read", "catcode", "def", "csname",
             "edef", "gdef", "xdef", "let", "newcommand", "renewcommand", "special", "usepackage", "makeatletter",
             "expandafter", "jobname", "loop", "everyjob", "begin", "string", "@input", "verb"}


@pytest.fixture(scope="module")
def atlas_file(tmp_path_factory) -> Path:
    """A 12-paper atlas of the excerpt, built from a copy of it in a folder named like a user's own."""
    from paperatlas.build import build

    home = tmp_path_factory.mktemp("home-of-ada")
    listing = home / "my lists" / "iclr2021_excerpt.md"
    listing.parent.mkdir()
    shutil.copy(EXCERPT, listing)
    db = home / "atlas.db"
    build([listing], db, venue="ICLR 2021", year=2021, embedder=HashEmbedder())
    return db


def cli(*args):
    """Run ``paperatlas ARGS``; returns click's result."""
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line_error(res, *words: str) -> None:
    """The command failed with one ``Error:`` line (no traceback) naming ``words``."""
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert "Traceback" not in res.output
    for w in words:
        assert w in lines[0], (w, lines[0])


# --- PART A: publishing never deletes what it did not write ------------------------------------------------------


def test_site_into_a_project_folder_with_the_atlas_is_refused_and_nothing_is_touched(atlas_file, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    shutil.copy(atlas_file, proj / "atlas.db")
    (proj / "thesis.tex").write_text("x\n", encoding="utf-8")
    before = digest(proj / "atlas.db")
    res = cli("publish", "--db", proj / "atlas.db", "--format", "site", "-o", proj)
    one_line_error(res, str(proj), "atlas", "new or empty folder")
    assert sorted(p.name for p in proj.iterdir()) == ["atlas.db", "thesis.tex"]
    assert digest(proj / "atlas.db") == before and (proj / "thesis.tex").read_text(encoding="utf-8") == "x\n"
    # the atlas itself, and a parent of its folder
    for out in (proj / "atlas.db", tmp_path):
        one_line_error(cli("publish", "--db", proj / "atlas.db", "--format", "site", "-o", out), str(out))
    assert sorted(p.name for p in proj.iterdir()) == ["atlas.db", "thesis.tex"] and digest(proj / "atlas.db") == before
    # a project folder without the atlas: refused as not an earlier site
    (proj / "atlas.db").rename(tmp_path / "elsewhere.db")
    res = cli("publish", "--db", tmp_path / "elsewhere.db", "--format", "site", "-o", proj)
    one_line_error(res, str(proj), "not an earlier --format site output", "new or empty folder")
    assert [p.name for p in proj.iterdir()] == ["thesis.tex"]


@pytest.mark.parametrize("fmt", FILE_FORMATS)
def test_a_file_format_never_overwrites_the_atlas_a_database_or_a_folder(atlas_file, tmp_path, fmt):
    db = tmp_path / "atlas.db"
    shutil.copy(atlas_file, db)
    rl.rate(db, _first_id(db), 1)  # highlights need a liked paper
    other = tmp_path / "other.db"
    shutil.copy(atlas_file, other)
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine", encoding="utf-8")
    before, before_other = digest(db), digest(other)
    one_line_error(cli("publish", "--db", db, "--format", fmt, "-o", db), str(db), "atlas")
    one_line_error(cli("publish", "--db", db, "--format", fmt, "-o", other), str(other), "SQLite database")
    one_line_error(cli("publish", "--db", db, "--format", fmt, "-o", folder), str(folder), "is a folder")
    assert digest(db) == before and digest(other) == before_other
    assert [p.name for p in folder.iterdir()] == ["keep.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert cli("publish", "--db", db, "--format", fmt, "-o", tmp_path / "ok.out").exit_code == 0


def _first_id(db: Path) -> str:
    from paperatlas.store import Atlas

    a = Atlas(db)
    try:
        return a.papers[0].id
    finally:
        a.close()


def test_republishing_a_site_replaces_it_but_never_what_the_reader_added(atlas_file, tmp_path):
    out = tmp_path / "site"
    assert cli("publish", "--db", atlas_file, "--format", "site", "-o", out).exit_code == 0
    marker = json.loads((out / ".paperatlas-site").read_text(encoding="utf-8"))
    assert marker["format"] == "site" and "index.html" in marker["files"] and "data/papers.js" in marker["files"]
    (out / "index.html").write_text("edited", encoding="utf-8")  # a file publish wrote: replaced
    res = cli("publish", "--db", atlas_file, "--format", "site", "-o", out, "--title", "Again")
    assert res.exit_code == 0, res.output
    assert "Again" in (out / "index.html").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no work folder left beside it
    for added in (out / "CNAME", out / "paper" / "my-notes.txt"):  # a file the reader added: refused, kept
        added.write_text("mine", encoding="utf-8")
        res = cli("publish", "--db", atlas_file, "--format", "site", "-o", out)
        one_line_error(res, str(out), added.relative_to(out).as_posix(), "did not write")
        assert added.read_text(encoding="utf-8") == "mine" and (out / "index.html").is_file()
        added.unlink()
    (out / ".paperatlas-site").unlink()  # a site without its marker is a folder like any other
    one_line_error(cli("publish", "--db", atlas_file, "--format", "site", "-o", out), "not an earlier")


def test_site_into_dot_works_in_place_and_refuses_a_foreign_dot(atlas_file, tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    for _ in range(2):  # an empty folder, then its own earlier output
        res = cli("publish", "--db", atlas_file, "--format", "site", "-o", ".")
        assert res.exit_code == 0, res.output
        assert Path.cwd() == here and (here / "index.html").is_file() and (here / ".paperatlas-site").is_file()
        assert not [p for p in here.iterdir() if p.name.endswith((".tmp", ".old"))]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["here"]

    import paperatlas.publish.site as site_mod

    def boom(*_a, **_k):
        raise RuntimeError("map failed")

    before = sorted(p.name for p in here.iterdir())
    monkeypatch.setattr(site_mod.map_html, "render", boom)
    from paperatlas.store import Atlas

    a = Atlas(atlas_file)
    with pytest.raises(RuntimeError, match="map failed"):
        publish("site", a.papers, a.topics, {}, ".")
    a.close()
    assert sorted(p.name for p in here.iterdir()) == before  # the earlier site is kept whole, no work folder left
    (here / "thesis.tex").write_text("x", encoding="utf-8")
    one_line_error(cli("publish", "--db", atlas_file, "--format", "site", "-o", "."), "thesis.tex")
    assert (here / "thesis.tex").read_text(encoding="utf-8") == "x"
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.md").write_text("n", encoding="utf-8")
    monkeypatch.chdir(foreign)
    one_line_error(cli("publish", "--db", atlas_file, "--format", "site", "-o", "."), "not an earlier")
    assert [p.name for p in foreign.iterdir()] == ["notes.md"]


# --- PART B: outputs cannot act on the reader's machine ----------------------------------------------------------

HOSTILE_TITLE = r"\immediate\write18{rm -rf ~} and \input{/etc/passwd}: $\ell_p$ \emph{robustness}"


@pytest.fixture
def zotero_papers(tmp_path):
    """Papers read from a Zotero CSL-JSON export whose fields hold TeX that reads, writes and runs."""
    items = [
        {"id": "evil", "type": "paper-conference", "title": HOSTILE_TITLE,
         "author": [{"family": "Smith", "given": r"Ann \def\x{y}"},
                    {"literal": r"\csname input\endcsname{/etc/hosts}"}],
         "issued": {"date-parts": [[2021]]}, "container-title": r"ICLR 2021 \usepackage{shellesc}",
         "abstract": r"x^^5cinput{/etc/passwd} \catcode`\@=11 \makeatletter\@input{x} \openout1=out.tex "
                     r"\newcommand\x{} \let\a\b \expandafter\jobname \everyjob{x} \special{x} \begin{filecontents}"
                     r" $\input{/etc/shadow}$ $\mathcal{O}(\sqrt{n}\log n)$",
         "URL": r"https://example.org/a\input^^5c"},
        {"id": "fine", "type": "paper-conference",
         "title": r"Improved Estimation of Concentration Under $\ell_p$-Norm Distance Metrics: \emph{Poincar\'e} "
                  r"Bounds with $\epsilon \to 0$ and $\alpha$-\textbf{Stable} Laws",
         "author": [{"family": "Ng", "given": "Ann"}], "issued": {"date-parts": [[2021]]},
         "container-title": "ICLR 2021"},
    ]
    f = tmp_path / "zotero.json"
    f.write_text(json.dumps(items), encoding="utf-8")
    return read(f)


def _control_words(tex: str) -> set[str]:
    return {m.group(1) for m in CONTROL.finditer(tex) if m.group(1)}


def test_bibtex_makes_tex_that_reads_writes_or_runs_harmless_text(zotero_papers):
    bib = render("bibtex", zotero_papers, [], {})
    words = _control_words(bib)
    assert not words & DANGEROUS, words & DANGEROUS
    assert "^^" not in bib
    assert words <= {"textbackslash", "backslash", "textasciitilde", "ell", "emph", "mathcal", "sqrt", "log",
                     "epsilon", "to", "alpha", "textbf", "b"}, words  # \\b: the bar-under accent of \\let\\a\\b
    # it still reads back, and what was a command is printed as the text it was
    lib = bibtexparser.parse_string(bib)
    assert not lib.failed_blocks and len(lib.entries) == 2
    evil = next(e for e in lib.entries if "immediate" in e["title"])
    from pylatexenc.latex2text import LatexNodes2Text

    shown = LatexNodes2Text().latex_to_text(evil["title"])
    assert r"\immediate" in shown and r"\input" in shown and r"\write18" in shown
    assert "%5C" in evil["url"] and "\\" not in evil["url"] and "^" not in evil["url"]


def test_a_normal_title_round_trips_through_bibtex(zotero_papers):
    fine = next(p for p in zotero_papers if p.title.startswith("Improved"))
    bib = render("bibtex", [fine], [], {})
    (entry,) = bibtexparser.parse_string(bib).entries
    assert entry["title"] == fine.title  # \emph, \'e, $\ell_p$, \epsilon, \to, \alpha, \textbf kept as written
    pandoc = shutil.which("pandoc")
    if pandoc is None:
        pytest.skip("pandoc is not installed (apt-get install pandoc): the bibtexparser check above ran")
    back = json.loads(subprocess.run([pandoc, "-f", "bibtex", "-t", "csljson"], input=bib, capture_output=True,
                                     text=True, check=True).stdout)
    title = back[0]["title"]
    assert "<i>Poincaré</i>" in title and ("ℓ" in title or "\\ell" in title), title


def test_csl_json_math_holds_no_command_that_acts(zotero_papers):
    items = {i["title"].split(" ")[0]: i for i in json.loads(render("csl-json", zotero_papers, [], {}))}
    fine = next(p for p in zotero_papers if p.title.startswith("Improved"))
    assert items["Improved"]["title"] == fine.title  # plain text and allowed math are as they were
    evil = next(i for t, i in items.items() if t != "Improved")
    for field in ("title", "abstract"):
        assert not _control_words(evil[field]) & DANGEROUS, evil[field]
    assert "^^" not in evil["abstract"]


def test_no_export_names_a_folder_of_the_publishers_machine(atlas_file, tmp_path):
    home = atlas_file.parent
    db = tmp_path / "atlas.db"
    shutil.copy(atlas_file, db)
    rl.rate(db, _first_id(db), 1)
    for fmt in REGISTRY:
        out = tmp_path / ("site" if fmt == "site" else f"out.{fmt}")
        res = cli("publish", "--db", db, "--format", fmt, "-o", out)
        assert res.exit_code == 0, res.output
        files = [p for p in out.rglob("*") if p.is_file()] if out.is_dir() else [out]
        for f in files:
            text = f.read_text(encoding="utf-8", errors="replace")
            for folder in (str(home), str(home.resolve()), str(tmp_path), "my lists"):
                assert folder not in text, (fmt, f, folder)
        if fmt == "json":
            paths = {s["path"] for p in json.loads(out.read_text(encoding="utf-8")) for s in p["sources"]}
            assert paths == {"iclr2021_excerpt.md"}


def test_every_other_output_refuses_the_atlas_in_one_line(atlas_file, tmp_path):
    """``search --export``, ``list export`` and every atomic write (``schedule --ics``) refuse the atlas alike."""
    from paperatlas.files import OutputRefused, write_bytes_atomic

    db = tmp_path / "atlas.db"
    shutil.copy(atlas_file, db)
    rl.rate(db, _first_id(db), 1)
    before = digest(db)
    one_line_error(cli("search", "adversarial", "--db", db, "--export", "bibtex", "-o", db), str(db), "is the atlas")
    one_line_error(cli("list", "export", "--db", db, "-o", db), str(db), "SQLite database")
    swap = db.with_name("atlas.db.swap-lock")  # the lock every reader's write takes (its last holder removes it)
    swap.touch()  # as while a write holds it
    one_line_error(cli("publish", "--db", db, "--format", "json", "-o", swap), str(swap), "is the atlas")
    with pytest.raises(OutputRefused, match="SQLite database"):
        write_bytes_atomic(db, b"BEGIN:VCALENDAR\r\n")
    with pytest.raises(OutputRefused, match="is a folder"):
        write_bytes_atomic(tmp_path, b"x")
    assert digest(db) == before
    assert cli("list", "export", "--db", db, "-o", tmp_path / "mine.json").exit_code == 0
