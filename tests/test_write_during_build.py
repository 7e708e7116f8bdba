"""No acknowledged write is lost while builds of the same atlas run beside it.

A build copies the reader's tables from the live atlas into its rebuilt copy, then renames the copy over the live
file. A write made between the copy and the rename, or one still waiting for the file's lock when the rename
landed, used to go into the replaced file and vanish (7 of 968 web writes over 10 rebuilds). Here the web app, the
store's own functions and the ``paperatlas list add`` command write a stream of list entries while builds run one
after another and two at once; every write that was acknowledged must be in the atlas afterwards.

The builds use the test suite's fast stand-in for the embedding model (``tests/test_build_safety.py`` run as a
script), so each takes a few seconds.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from paperatlas import readinglist as rl
from paperatlas.build import build
from paperatlas.store import Atlas
from paperatlas.web import create_app

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_build_safety import EXCERPT, ME, HashEmbedder  # noqa: E402

TOKEN_RE = re.compile(r'name="csrf_token" value="([^"]+)"')
#: Lists each writer fills (4 writers x 24 lists stay under the limit of lists per paper).
LISTS_PER_WRITER = 24


def _write(i: int, pids: list[str], tag: str) -> tuple[str, str] | None:
    """The ``i``-th write of a writer: ``(list name, paper id)``, each pair new; None when all are made."""
    if i >= LISTS_PER_WRITER * len(pids):
        return None
    return f"{tag}-{i // len(pids)}", pids[i % len(pids)]


@pytest.fixture(scope="module")
def base_atlas(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("base") / "atlas.db"
    build([EXCERPT], db, venue="ICLR 2021", year=2021, embedder=HashEmbedder(), n_topics=4)
    return db


def _run_builds(db: Path, n: int, errors: list[str]) -> None:
    """``n`` rebuilds of ``db`` one after another, each in its own process (as ``paperatlas build`` runs)."""
    for _ in range(n):
        proc = subprocess.run([sys.executable, str(ME), str(EXCERPT), str(db)], capture_output=True, text=True,
                              timeout=300)
        if proc.returncode != 0:
            errors.append(proc.stderr[-2000:])


def _stored(db: Path) -> set[tuple[str, str]]:
    con = sqlite3.connect(db)
    try:
        return {(r[0], r[1]) for r in con.execute("SELECT list, paper_id FROM list_items")}
    finally:
        con.close()


def test_every_acknowledged_write_made_during_builds_is_kept(base_atlas, tmp_path):
    db = tmp_path / "atlas.db"
    shutil.copy(base_atlas, db)
    pids = [p.id for p in Atlas(db).papers]
    acked: list[tuple[str, str]] = []  # (list, paper id) of every write that was acknowledged
    lock = threading.Lock()
    done = threading.Event()
    build_errors: list[str] = []
    write_errors: list[str] = []

    def ack(list_name: str, pid: str) -> None:
        with lock:
            acked.append((list_name, pid))

    def store_writer(tag: str) -> None:  # the store's own function, as every CLI and web write calls it
        i = 0
        while not done.is_set() and (w := _write(i, pids, tag)):
            try:
                rl.add(db, w[1], w[0])
            except Exception as e:  # noqa: BLE001 - a refused write is reported below, not acknowledged
                write_errors.append(f"{tag}: {e}")
            else:
                ack(*w)
            i += 1
            done.wait(0.15)

    def web_writer() -> None:  # the web app's form action, as a browser posts it
        client = create_app(db, preload_model=False).test_client()
        token = TOKEN_RE.search(client.get(f"/paper/{pids[0]}").get_data(as_text=True))[1]
        i = 0
        while not done.is_set() and (w := _write(i, pids, "web")):
            resp = client.post(f"/paper/{w[1]}/mark", data={"action": "add", "list": w[0], "csrf_token": token},
                               headers={"Origin": "http://localhost", "Accept": "application/json"})
            if resp.status_code == 200:
                ack(*w)
            else:
                write_errors.append(f"web: HTTP {resp.status_code}")
            i += 1
            done.wait(0.1)

    def cli_writer() -> None:  # the command line, each write its own process
        i = 0
        env = {**os.environ, "PAPERATLAS_DB": str(db)}
        while not done.is_set() and (w := _write(i, pids, "cli")):
            proc = subprocess.run([sys.executable, "-m", "paperatlas.cli", "list", "add", w[1], "--list", w[0]],
                                  capture_output=True, text=True, env=env, timeout=120)
            if proc.returncode == 0:
                ack(*w)
            else:
                write_errors.append(f"cli: {proc.stderr.strip()[-300:]}")
            i += 1

    writers = [threading.Thread(target=store_writer, args=(f"store{t}",)) for t in range(2)]
    writers += [threading.Thread(target=web_writer), threading.Thread(target=cli_writer)]
    for w in writers:
        w.start()
    try:
        _run_builds(db, 3, build_errors)  # one build at a time
        two = [threading.Thread(target=_run_builds, args=(db, 2, build_errors)) for _ in range(2)]
        for t in two:  # two builds at once: the second waits for the first's lock, then starts from its result
            t.start()
        for t in two:
            t.join()
    finally:
        done.set()
        for w in writers:
            w.join(timeout=180)
    assert not build_errors, build_errors[0]
    assert not write_errors, write_errors[:3]
    kinds = {name.rsplit("-", 1)[0] for name, _ in acked}
    assert kinds == {"store0", "store1", "web", "cli"} and len(acked) > 200, (kinds, len(acked))
    missing = sorted(set(acked) - _stored(db))
    print(f"{len(acked)} acknowledged writes ({len(acked) - len(missing)} kept) during 7 builds")
    assert not missing, f"{len(missing)} of {len(acked)} acknowledged writes lost: {missing[:5]}"
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT count(*) FROM papers").fetchone()[0] == 12
    con.close()
    assert not list(tmp_path.glob("atlas.db-journal"))  # no journal left beside the atlas by a retired file
