"""Benchmark: the NeurIPS 1987-2018 atlas (8,266 papers) built from the shared paperlists, and its topic trends.

Usage:
    python benchmarks/trends.py [--db /tmp/nips8k.db] [--top 5] [--skip-build]

1. **builds** the atlas from every ``../shared/data/paperlists/nips/nips*.json.gz`` (the paperlists reader reads
   ``.json.gz`` as it is; venue and year come from each file's name) with :func:`paperatlas.build.build` in this
   process and the real model: seconds per stage, total wall time, the process's peak RSS (MiB) and the machine's
   load average (the CPU is shared, so times are contended);
2. runs ``paperatlas trends --db DB --level topic --top N`` and ``--level area`` in a fresh process and prints
   their output unchanged: the fastest rising and falling topics exactly as the product prints them, with the
   wall time and peak RSS of that process (measured inside it).

``--skip-build`` only does step 2 on an atlas built before (kept at ``--db``, default ``/tmp/nips8k.db``, for
screenshots). Not a test: run on demand, under ``nice -n 19`` on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NIPS = ROOT.parent / "shared" / "data" / "paperlists" / "nips"


def _build(db: Path) -> None:
    from paperatlas.build import build

    listings = sorted(NIPS.glob("nips*.json.gz"))
    if not listings:
        sys.exit(f"no NeurIPS listings in {NIPS}")
    print(f"== build: {len(listings)} listings ({listings[0].name} .. {listings[-1].name}) -> {db}", flush=True)
    print(f"   load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    rep = build(listings, db, replace=True)
    print(f"   {rep.n_papers} papers ({rep.n_read} records), {rep.n_topics} topics, embedded {rep.n_embedded}")
    for stage, sec in rep.stage_seconds.items():
        print(f"   {stage:<12} {sec:8.1f} s")
    print(f"   {'total':<12} {rep.total_seconds:8.1f} s   peak RSS {rep.peak_rss_mib:.0f} MiB")
    print(f"   load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


#: Runs the ``paperatlas`` command line as its entry point does, then reports the process's own peak RSS on stderr
#: (a forked child's ``RUSAGE_CHILDREN`` would count the parent's pages it started with).
_CLI = """
import resource, sys
from paperatlas.cli import main
try:
    main(sys.argv[1:], prog_name="paperatlas")
finally:
    sys.stderr.write("PEAK_RSS_MIB %.0f\\n" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0))
"""


def _trends(db: Path, level: str, top: int) -> None:
    cmd = [sys.executable, "-c", _CLI, "trends", "--db", str(db), "--level", level, "--top", str(top)]
    print(f"\n== paperatlas trends --db {db} --level {level} --top {top}", flush=True)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    sys.stdout.write(out.stdout)
    rss = next((line.split()[1] for line in out.stderr.splitlines() if line.startswith("PEAK_RSS_MIB")), "?")
    if out.returncode:
        sys.stdout.write(out.stderr)
        sys.exit(out.returncode)
    print(f"   ({wall:.1f} s wall, peak RSS {rss} MiB: open the atlas, compute, print)")


def main(argv: list[str] | None = None) -> None:
    """Build the NeurIPS 1987-2018 atlas (unless ``--skip-build``) and print its trends as the CLI does."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, default=Path("/tmp/nips8k.db"))
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--skip-build", action="store_true")
    args = ap.parse_args(argv)
    if not args.skip_build:
        _build(args.db)
    for level in ("topic", "area"):
        _trends(args.db, level, args.top)


if __name__ == "__main__":
    main()
