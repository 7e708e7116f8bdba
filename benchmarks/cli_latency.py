"""Benchmark: how long a command-line query takes, start to finish, and its peak memory.

Usage:
    python benchmarks/cli_latency.py --db iclr2021.db                 # this checkout
    python benchmarks/cli_latency.py --db iclr2021.db --src ../old/src  # another checkout's code (before/after)
    python benchmarks/cli_latency.py --db iclr2021.db --runs 7 --no-cold

Each command runs as a fresh ``python -m paperatlas.cli ...`` process (what a user typing ``paperatlas search``
pays: interpreter start, imports, opening the atlas, loading the query model, the query, printing):

* **warm**: the median of ``--runs`` runs after one unmeasured run (the OS page cache holds the model and the atlas);
* **cold**: one run right after dropping the OS page cache (``echo 3 > /proc/sys/vm/drop_caches``, needs root;
  skipped otherwise), so the model weights, libraries and atlas are read from disk again.

Peak RSS is the child's ``ru_maxrss``. Commands: ``search "lottery ticket"``, ``search grokking``, ``show``,
``related``. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = [
    ("search \"lottery ticket\"", ["search", "lottery ticket"]),
    ("search grokking", ["search", "grokking"]),
    ("show (by title)", ["show", "Sharpness-aware Minimization for Efficiently Improving Generalization"]),
    ("related (by title)", ["related", "Sharpness-aware Minimization for Efficiently Improving Generalization"]),
]


def run_once(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run one command; ``(wall seconds, peak RSS in MiB)``. Raises SystemExit with its stderr when it fails."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "paperatlas.cli", *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}):\n{err}")
    return wall, usage.ru_maxrss / 1024


def drop_caches() -> bool:
    """Drop the OS page cache; False when not permitted."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="the atlas (e.g. the ICLR 2021 demo atlas)")
    ap.add_argument("--src", help="run the code of another checkout's src/ (PYTHONPATH)")
    ap.add_argument("--runs", type=int, default=5, help="warm runs per command (median reported)")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold runs")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.src:
        env["PYTHONPATH"] = str(Path(args.src).resolve())
    code = subprocess.run([sys.executable, "-c", "import paperatlas; print(paperatlas.__file__)"], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()
    print(f"code: {code}\natlas: {args.db}\n")
    print(f"{'command':<24}{'warm median s':>15}{'warm min s':>12}{'cold s':>9}{'peak RSS MiB':>14}")
    for label, cmd in COMMANDS:
        full = [*cmd, "--db", args.db]
        run_once(full, env)  # unmeasured: fills caches (and exports the fast query model if it must)
        warm = [run_once(full, env) for _ in range(args.runs)]
        cold = "-"
        if not args.no_cold and drop_caches():
            cold = f"{run_once(full, env)[0]:.2f}"
        walls = [w for w, _ in warm]
        print(f"{label:<24}{statistics.median(walls):>15.2f}{min(walls):>12.2f}{cold:>9}"
              f"{max(r for _, r in warm):>14.0f}")


if __name__ == "__main__":
    main()
