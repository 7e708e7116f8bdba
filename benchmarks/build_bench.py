"""Benchmark: wall time per stage and peak memory of `paperatlas build`.

Usage:
    python benchmarks/build_bench.py                       # the ICLR 2021 seed (860 papers), cold + warm rebuild
    python benchmarks/build_bench.py LISTING [LISTING ...]  # any listings, e.g. ../shared/data/paperlists/nips/*.gz

Prints one line per stage (seconds) and the peak resident memory (MiB) of the process. Not a test: run on demand.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from paperatlas.build import build

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "seeds" / "001_2614e1796f49d7fd.txt"


def main(argv: list[str]) -> None:
    listings = argv or [str(SEED)]
    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "bench.db"
        for run in ("cold build", "warm rebuild"):
            rep = build(listings, db, venue="ICLR 2021" if not argv else None)
            print(f"== {run}: {rep.n_papers} papers ({rep.n_read} records), {rep.n_topics} topics, "
                  f"embedded {rep.n_embedded}, reused {rep.n_reused}")
            for stage, sec in rep.stage_seconds.items():
                print(f"   {stage:<12} {sec:8.1f} s")
            print(f"   {'total':<12} {rep.total_seconds:8.1f} s   peak RSS {rep.peak_rss_mib:.0f} MiB")


if __name__ == "__main__":
    main(sys.argv[1:])
