"""Shared by the benchmarks: real papers from the Paper Copilot paperlists dumps in ``../shared/data``."""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterator
from pathlib import Path

from paperatlas.model import Paper
from paperatlas.sources import read

ROOT = Path(__file__).resolve().parents[1]
PAPERLISTS = ROOT.parent / "shared" / "data" / "paperlists"


def paperlist_papers(n: int, keep: Callable[[Paper], bool] = lambda p: bool(p.title)) -> Iterator[Paper]:
    """Papers passing ``keep`` from the paperlists dumps, largest files first, until at least ``n`` are read (all of
    the files when there are fewer). Raises ``SystemExit`` naming the folder when it holds no dumps."""
    files = sorted(glob.glob(str(PAPERLISTS / "*" / "*.json.gz")), key=lambda f: -Path(f).stat().st_size)
    if not files:
        raise SystemExit(f"{PAPERLISTS}: no *.json.gz listings (../shared data is needed)")
    count = 0
    for f in files:
        for p in read(f):
            if keep(p):
                count += 1
                yield p
        if count >= n:
            return
