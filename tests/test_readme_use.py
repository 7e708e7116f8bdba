"""The README's "## Use" section run as a test: each command of its ```bash block, on the bundled sample atlas.

The block is parsed from README.md as it is (a command added there is run here too). Each ``paperatlas`` command
runs on a private copy of the 60-paper ICLR 2021 sample atlas (``--db`` added or replaced; ``build`` reads the
bundled sample listing instead of the full seed) in a scratch directory, in the README's order, and either
succeeds (exit 0, no traceback) or is in :data:`NEEDS`, which names what it needs that the sample lacks; such a
command is still run and must fail with exactly that reason (exit 1, one ``Error:`` line), so the list cannot go
stale silently. ``serve`` is started as a process, answered on its port, and stopped. Commands that do not read
the atlas and take minutes on public gold data are in :data:`NOT_RUN` with the test that covers them.
"""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from click.testing import CliRunner

from conftest import ROOT, SAMPLE
from paperatlas.cli import main
from paperatlas.store import Atlas

README = ROOT / "README.md"
NET_DNF = "Net-DNF: Effective Deep Modeling of Tabular Data"

#: The README's example paper is not among the sample's 60: its titles are replaced by a sample paper's.
TITLES = {"Sharpness-Aware Minimization for Efficiently Improving Generalization": NET_DNF,
          "Sharpness-Aware Minimization": "Net-DNF"}

#: Commands (by their first words) that need something the sample atlas lacks: ``(reason, text of the error)``.
NEEDS = {
    ("trends",): ("listings of at least 3 years (e.g. paperlists' nips*.json.gz); the sample is ICLR 2021 only",
                  "trends need at least 3 years with 30 or more papers each"),
    ("schedule",): ("a listing with session times (a virtual-site export or a CSV with Start/End columns) for "
                    "--ics; the plan itself is printed", "no paper of this schedule has a start time"),
}

#: Commands not run here: they score public gold data, not the atlas, and take minutes on 2 cores.
NOT_RUN = {
    ("eval", "tldr"): "scores SciTLDR (../shared/data/scitldr), not the atlas: ~minutes; tests/test_tldr*.py",
    ("eval", "topics"): "scores the gold topic sets with BERTopic, ~15 min on 2 cores; tests/test_topic_eval.py",
}


def use_block() -> list[str]:
    """The command lines of the first ```bash block under README's "## Use" heading (comments kept)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Use\n"):]
    section = section[:section.index("\n## ", 1)]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL).group(1)
    return [line for line in block.splitlines() if line.strip()]


def _argv(line: str, db: Path, ids: list[str]) -> list[str] | None:
    """The command as run here: ``paperatlas`` dropped, the sample's titles, ``--db`` on the copy; None for shell."""
    argv = shlex.split(line, comments=True)
    if not argv or argv[0] != "paperatlas":
        return None  # ". .venv/bin/activate": the test already runs in the venv
    argv = [TITLES.get(a, a) for a in argv[1:]]
    argv = [ids[1] if a == "ID2" else a for a in argv]  # the README's placeholder for a second paper's id
    if argv[0] == "build":
        argv[1] = str(SAMPLE)
    if "--db" in argv:
        argv[argv.index("--db") + 1] = str(db)
    else:
        argv += ["--db", str(db)]
    return argv


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(argv: list[str], cwd: Path) -> None:
    """Start ``paperatlas serve`` on a free port, fetch its home page, stop it."""
    port = _free_port()
    cli = Path(sys.executable).parent / "paperatlas"
    proc = subprocess.Popen([str(cli), *argv, "--port", str(port)], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120  # a bound on a hang, not a speed goal
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
                    assert r.status == 200 and "iclr2021_sample.md" in r.read().decode("utf-8", "replace")  # footer
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.stdout else ""
                time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_use_block_is_found_and_every_command_is_accounted_for():
    lines = use_block()
    assert lines[0].startswith(". .venv/bin/activate") and len(lines) >= 20
    firsts = [tuple(shlex.split(x, comments=True)[1:3]) for x in lines[1:]]
    assert all(shlex.split(x)[0] == "paperatlas" for x in lines[1:])
    for key in (*NEEDS, *NOT_RUN):  # no entry here names a command the README no longer has
        assert any(f[:len(key)] == key for f in firsts), key


def test_every_command_of_the_readme_use_section_runs_on_the_sample_atlas(copy_atlas, tmp_path, monkeypatch):
    db = copy_atlas("iclr2021.db")
    ids = [p.id for p in Atlas(db).papers]
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PAPERATLAS_DB", raising=False)
    ran, needed = [], []
    for line in use_block():
        argv = _argv(line, db, ids)
        if argv is None:
            continue
        if any(tuple(argv[:len(k)]) == k for k in NOT_RUN):
            continue
        if argv[0] == "serve":
            _serve(argv, tmp_path)
            ran.append("serve")
            continue
        res = CliRunner().invoke(main, argv)
        assert "Traceback" not in res.output and (res.exception is None or isinstance(res.exception, SystemExit)), (
            line, res.output, repr(res.exception))
        need = next((v for k, v in NEEDS.items() if tuple(argv[:len(k)]) == k), None)
        if need is None:
            assert res.exit_code == 0, (line, res.output)
            ran.append(argv[0])
        else:
            assert res.exit_code == 1 and need[1] in res.output.partition("Error: ")[2], (line, res.output)
            needed.append(argv[0])
    assert sorted(needed) == ["schedule", "trends"]
    assert {"build", "search", "show", "related", "recommend", "ask", "topics", "edit", "publish", "list",
            "serve", "check"} <= set(ran)
    # what the commands wrote: the publish outputs beside the atlas, and the edit in the atlas
    assert (tmp_path / "iclr2021.md").is_file() and (tmp_path / "iclr2021-map.html").is_file()
    highlights = (tmp_path / "highlights.md").read_text(encoding="utf-8")
    assert NET_DNF.split(":")[0] in highlights
    atlas = Atlas(db)
    assert next(p for p in atlas.papers if p.title == NET_DNF).tldr == (
        "SAM minimizes loss value and sharpness together.")

