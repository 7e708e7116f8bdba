"""Shared fixtures: paths to ../shared data and a small real atlas built once per session."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from paperatlas.enrich.embed import bf16_native

# one embedding path for the whole suite, so every build, child process and server of the tests embeds alike: bf16
# where the CPU has it natively, else onnx-fp32 (fp32 by ONNX Runtime: torch fp32's vectors within 1e-6, 1.2-1.5x
# its papers/s on a CPU without native bf16, and a child that starts in ~1 s instead of ~9 without torch);
# --precision auto's measurement is tested on its own, with this variable removed (tests/test_precision.py)
os.environ.setdefault("PAPERATLAS_PRECISION", "bf16" if bf16_native() else "onnx-fp32")

if os.environ.get("PAPERATLAS_TEST_LAZY") == "1":  # run the suite with every atlas read as a large one is
    from paperatlas.store import lazy

    lazy.LAZY_MIN_PAPERS = 0

#: test files by their time on two pytest-xdist workers (a CPU without native bf16), longest first: scripts/test.sh
#: runs the files in this order (``--no-loadscope-reorder``) and the others after them, so the long ones start first
#: and the short ones fill the workers' tails (xdist's own order, by number of tests, left the 2-minute Ray file to run
#: alone at the end). The Ray file comes last of these: it runs two Ray clusters of several processes, and beside
#: tests/test_engines.py's embedding children it took 345 s instead of 123 s alone; beside the short files it keeps
#: both cores busy without crowding them
LONGEST_FIRST = ["test_engines.py", "test_reader_fuzz.py", "test_precision.py", "test_topic_determinism.py",
                 "test_whats_new.py", "test_feed.py", "test_list_import.py", "test_web_security.py", "test_map.py",
                 "test_trends.py", "test_onnx_path.py", "test_plugins.py", "test_write_during_build.py",
                 "test_round_trip.py", "test_engines_ray.py"]


def pytest_collection_modifyitems(config, items):
    """Run the files of :data:`LONGEST_FIRST` first, in that order (the others after them, in collection order)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: tests keep their order in a file


def pytest_report_header(config):
    """The CPU and the suite's embedding path, first in the report (the suite's time depends on both)."""
    from paperatlas.enrich.precision import cores, cpu_model

    return f"paperatlas: {cpu_model()}, {cores()} cores; embedding path {os.environ['PAPERATLAS_PRECISION']}"


ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = ROOT.parent / "shared"
SEEDS = SHARED / "seeds"
ICLR_SEED = SEEDS / "001_2614e1796f49d7fd.txt"
AWESOME_SEED = SEEDS / "004_67aa5497667b379c.txt"
PAPERLISTS = SHARED / "data" / "paperlists"
SAMPLE = ROOT / "src" / "paperatlas" / "data" / "iclr2021_sample.md"
#: the first 200 ICML 2019 papers with an abstract of the Paper Copilot paperlists dump in ../shared/data (fields cut
#: to title, status, track, site, id, author, abstract, pdf, aff)
ICML200 = FIXTURES / "icml2019_200.json"


def topic_inputs(db: Path) -> tuple:
    """``(ids, dense vectors, texts, label keyphrases)`` of an atlas's papers, as ``update_topics`` takes them."""
    from paperatlas.enrich.embed import paper_text
    from paperatlas.store import Atlas

    atlas = Atlas(db)
    ps = [atlas.by_id[i] for i in atlas.ids]
    return ([p.id for p in ps], atlas.vectors, [paper_text(p.title, p.abstract) for p in ps],
            [p.keyphrases for p in ps])


def by_id(db: Path) -> tuple[dict, dict]:
    """``({id: Paper}, {id: (384,) float32 vector})`` of an atlas."""
    from paperatlas.store import Atlas

    a = Atlas(db)
    try:
        return {p.id: p for p in a.papers}, {pid: a.vectors[a.row_of[pid]].copy() for pid in a.ids}
    finally:
        a.close()


def like_biggest_subtopic(db: Path, n: int = 5) -> list[str]:
    """Like the ``n`` most central papers of the atlas's biggest sub-topic (ties: lower id); their ids."""
    from paperatlas import readinglist
    from paperatlas.store import Atlas

    atlas = Atlas(db)
    biggest = max((t for t in atlas.topics.values() if t.level == 1), key=lambda t: (t.size, -t.id))
    liked = [p.id for p in sorted((p for p in atlas.papers if p.topic_id == biggest.id),
                                  key=lambda p: -(p.topic_confidence or 0))[:n]]
    atlas.close()
    for pid in liked:
        readinglist.rate(db, pid, 1)
    return liked


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory) -> Path:
    """One model cache for the session (the ONNX export of the query model is made at most once per run)."""
    return tmp_path_factory.mktemp("modelcache")


@pytest.fixture(autouse=True)
def no_network_cache(tmp_path_factory, monkeypatch, model_cache):
    """Every test: network readers run offline (PAPERATLAS_OFFLINE=1) with a fresh cache directory of their own.

    A test that replays recorded responses through a client library clears PAPERATLAS_OFFLINE itself
    (``monkeypatch.delenv("PAPERATLAS_OFFLINE")``); nothing ever reads or writes ``~/.cache/paperatlas`` (the query
    model's ONNX export goes to a session directory).
    """
    monkeypatch.setenv("PAPERATLAS_OFFLINE", "1")
    monkeypatch.setenv("PAPERATLAS_CACHE", str(tmp_path_factory.mktemp("netcache")))
    monkeypatch.setenv("PAPERATLAS_MODEL_CACHE", str(model_cache))


def need(path: Path) -> Path:
    """Skip the test (with the reason) when a ../shared file it reads is absent."""
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared data not available on this machine)")
    return path


@pytest.fixture(scope="session")
def local_build(tmp_path_factory) -> Path:
    """:data:`ICML200` built by the local engine at fp32, embedding in this process (read-only): what the other
    engines and embedding paths must give (tests/test_engines.py, tests/test_engines_ray.py)."""
    from paperatlas.build import build
    from paperatlas.engines.local import LocalEngine

    db = tmp_path_factory.mktemp("local") / "icml200.db"
    rep = build([ICML200], db, engine=LocalEngine(precision="fp32"))
    assert rep.n_papers == 200 and rep.n_embedded == 200
    return db


@pytest.fixture(scope="session")
def sample_atlas(tmp_path_factory) -> Path:
    """An atlas built from the bundled 60-paper ICLR 2021 sample with the real embedding model (read-only:
    tests that modify an atlas copy it with :func:`copy_atlas`)."""
    from paperatlas.build import build

    db = tmp_path_factory.mktemp("atlas") / "sample.db"
    build([SAMPLE], db, venue="ICLR 2021", year=2021)
    return db


@pytest.fixture
def copy_atlas(sample_atlas, tmp_path):
    """A private, writable copy of :func:`sample_atlas`."""

    def _copy(name: str = "copy.db") -> Path:
        dst = tmp_path / name
        shutil.copy(sample_atlas, dst)
        return dst

    return _copy


@pytest.fixture
def served(copy_atlas):
    """``(atlas path, base URL)`` of the web app over a private copy of :func:`sample_atlas`, served by waitress on
    a free loopback port in a background thread (for browser tests)."""
    import threading
    import time

    from waitress.server import create_server

    from paperatlas.web import create_app

    db = copy_atlas()
    srv = create_server(create_app(db, preload_model=False), host="127.0.0.1", port=0, threads=2)
    threading.Thread(target=srv.run, daemon=True).start()
    time.sleep(0.3)
    yield db, f"http://127.0.0.1:{srv.effective_port}"
    srv.close()


CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium through Playwright (one per test module); skips when it is not installed."""
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (/usr/bin/chromium): apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                               args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                     "--disable-component-update", "--no-first-run", "--disable-sync"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A page of :func:`browser` for a static site opened from ``file://``: every other URL is refused (the site
    must work offline), and a console error or page error fails the test. Modules with other needs define their
    own ``page``."""
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    pg.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: problems.append(str(e)))
    pg.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
    yield pg
    pg.close()
    assert problems == [], problems
