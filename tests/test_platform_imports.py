"""Nothing a platform lacks is imported at module load: every module imports with ``fcntl`` and ``resource`` hidden
(as on Windows), and the locks, the peak-RSS figure and the server's connection limit still work there."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time

from paperatlas.memory import _maxrss_mib
from paperatlas.store.lock import build_lock, lock_path, swap_lock, swap_lock_path
from test_build_safety import HashEmbedder

HIDE = "import sys\nsys.modules['fcntl'] = None\nsys.modules['resource'] = None\n"


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", HIDE + textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_module_imports_without_fcntl_and_resource():
    res = _run("""
        import importlib, json, pkgutil, paperatlas
        names, failed = [], {}
        for m in pkgutil.walk_packages(paperatlas.__path__, "paperatlas."):
            if m.name.endswith(".__main__"):  # runs the CLI
                continue
            names.append(m.name)
            try:
                importlib.import_module(m.name)
            except Exception as e:  # noqa: BLE001
                failed[m.name] = f"{type(e).__name__}: {e}"
        print(json.dumps({"names": names, "failed": failed}))
    """)
    assert "paperatlas.store.lock" in res["names"] and "paperatlas.web.security" in res["names"]
    assert len(res["names"]) > 50
    assert res["failed"] == {}


def test_locks_rss_and_connection_limit_work_without_fcntl_and_resource(tmp_path):
    atlas = tmp_path / "atlas.db"
    res = _run(f"""
        import json
        from pathlib import Path
        from paperatlas.store.lock import AtlasBusy, build_lock, swap_lock
        from paperatlas.memory import peak_rss_mib
        from paperatlas.web.security import _connection_limit
        atlas = Path({str(atlas)!r})
        with build_lock(atlas, timeout=1):
            held = sorted(p.name for p in atlas.parent.iterdir())
            try:
                with build_lock(atlas, timeout=0.2):
                    busy = False
            except AtlasBusy:
                busy = True
        with swap_lock(atlas, exclusive=False, timeout=1):
            pass
        left = sorted(p.name for p in atlas.parent.iterdir())
        print(json.dumps({{"held": held, "busy": busy, "left": left, "rss": peak_rss_mib(),
                          "conns": _connection_limit(64)}}))
    """)
    assert res["held"] == ["atlas.db.lock"] and res["busy"] is True
    assert res["left"] == []  # no lock file left beside the atlas
    assert res["rss"] >= 0.0 and res["conns"] == 64


def test_locks_leave_no_file_beside_the_atlas(tmp_path):
    atlas = tmp_path / "iclr2021.db"
    atlas.write_bytes(b"")
    with build_lock(atlas):
        assert lock_path(atlas).exists()
    with swap_lock(atlas, exclusive=True, timeout=1):
        assert swap_lock_path(atlas).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["iclr2021.db"]


def test_a_waiting_build_gets_the_lock_after_the_file_is_removed_and_excludes_the_next(tmp_path):
    atlas = tmp_path / "atlas.db"
    events: list[str] = []

    def second() -> None:
        with build_lock(atlas, timeout=10):
            events.append("second in")
            time.sleep(0.3)
            events.append("second out")

    with build_lock(atlas):
        t = threading.Thread(target=second)
        t.start()
        time.sleep(0.3)  # the second build is waiting on the first's file
        assert events == []
        events.append("first out")
    time.sleep(0.1)
    with build_lock(atlas, timeout=10):  # a third build must wait for the second (on the second's new file)
        events.append("third in")
    t.join()
    assert events == ["first out", "second in", "second out", "third in"]
    assert not lock_path(atlas).exists()


def test_the_last_shared_holder_removes_the_swap_lock_file(tmp_path):
    atlas = tmp_path / "atlas.db"
    with swap_lock(atlas, exclusive=False, timeout=1):
        with swap_lock(atlas, exclusive=False, timeout=1):  # two reader's writes at once
            pass
        assert swap_lock_path(atlas).exists()  # the other writer still holds it
    assert not swap_lock_path(atlas).exists()


def test_peak_rss_is_mib_on_linux_and_macos():
    assert _maxrss_mib(1_048_576, "linux") == 1024.0  # KiB on Linux
    assert _maxrss_mib(1_073_741_824, "darwin") == 1024.0  # bytes on macOS


def test_a_build_and_a_readers_write_leave_only_the_atlas(tmp_path):
    from pathlib import Path

    from paperatlas import readinglist as rl
    from paperatlas.build import build
    from paperatlas.store import Atlas

    excerpt = Path(__file__).resolve().parent / "fixtures" / "iclr2021_excerpt.md"
    atlas = tmp_path / "iclr2021.db"
    build([excerpt], atlas, venue="ICLR 2021", year=2021, embedder=HashEmbedder(), n_topics=4)
    assert rl.add(atlas, Atlas(atlas).papers[0].id, "reading")  # takes the swap lock, shared
    build([excerpt], atlas, venue="ICLR 2021", year=2021, embedder=HashEmbedder(), n_topics=4)  # a rebuild
    assert sorted(p.name for p in tmp_path.iterdir()) == ["iclr2021.db"]  # no iclr2021.db.lock, no .swap-lock
