"""Behaviour snapshot of paperatlas, for checking that a refactor changed nothing a user sees.

Usage:
    python scripts/equivalence.py snapshot OUT_DIR [--seeds ../shared/seeds]
    python scripts/equivalence.py compare BEFORE_DIR AFTER_DIR

``snapshot`` drives the command line in-process (``paperatlas.cli:main`` through click's ``CliRunner``, so the
same calls work on any release) to build two atlases from the real seeds: the ICLR 2021 listing (seed 001) and
seed 001 + the Awesome Deep Phenomena list (seed 004, merged). On each it likes three papers, writes a note and
overrides a TL;DR and keyphrases, then writes to ``OUT_DIR/<atlas>/``: every stored paper (all fields, generated
ones included) and topic as canonical JSON, the output of ``search`` (BM25 and hybrid, with and without filters),
``show``, ``related``, ``recommend``, ``topics``, ``list show`` and every ``publish`` format (the static site as
one file per page). Run-dependent values (build time, temporary paths) are left out.

``compare`` lists every file that differs between two snapshots and exits 1 when one does (0 when all are
identical). Typical use: snapshot on the previous commit (``git worktree add``), snapshot on this one, compare.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import re
import sqlite3
import sys
import time
from pathlib import Path

QUERIES = ["lottery ticket pruning at initialization", "graph neural networks", "adversarial robustness",
           "sharpness aware minimization", "neural tangent kernel", "grokking", "contrastive learning images",
           "double descent", "transformer attention efficient", "meta-learning few-shot"]
FILTERED = [("reinforcement learning", ["--status", "Oral,Spotlight"]), ("", ["--status", "Oral"]),
            ("generalization", ["--year", "2019-2020"]), ("", ["--keyphrase", "pruning"]),
            ("", ["--topic", "1"])]
LIKES = ["Sharpness-Aware Minimization for Efficiently Improving Generalization",
         "Pruning Neural Networks at Initialization: Why Are We Missing the Mark?",
         "How Neural Networks Extrapolate: From Feedforward to Graph Neural Networks"]
#: a tqdm progress bar line ("embedding  :  4%|▎   | 32/860 [00:17<07:35, 1.82paper/s]")
_PROGRESS = re.compile(r"\d+/\d+ \[")
FORMATS = ["awesome-md", "highlights-md", "highlights-html", "topics-md", "json", "csv", "bibtex", "csl-json",
           "map", "site"]


def _run(args: list[str], out: Path | None = None) -> str:
    from click.testing import CliRunner

    from paperatlas.cli import main

    res = CliRunner().invoke(main, args, catch_exceptions=False)
    text = f"exit {res.exit_code}\n{res.output}"
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    return text


def _dump_atlas(db: Path, out: Path) -> None:
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    skip = {"content_hash"}
    papers = [{k: r[k] for k in r.keys() if k not in skip} for r in con.execute("SELECT * FROM papers ORDER BY id")]
    topics = [dict(r) for r in con.execute("SELECT * FROM topics ORDER BY id")]
    marks = [{k: r[k] for k in r.keys() if not k.endswith("_at")}
             for r in con.execute("SELECT * FROM marks ORDER BY paper_id")]
    overrides = [{k: r[k] for k in r.keys() if not k.endswith("_at")}
                 for r in con.execute("SELECT * FROM overrides ORDER BY paper_id, field")]
    n_vec = con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    con.close()
    for name, rows in (("papers", papers), ("topics", topics), ("marks", marks), ("overrides", overrides)):
        (out / f"{name}.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False, sort_keys=True),
                                          encoding="utf-8")
    (out / "embeddings.txt").write_text(f"{n_vec} vectors\n")


def _snapshot_atlas(name: str, listings: list[str], extra: list[str], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    db = out.parent / f"{name}.db"
    db.unlink(missing_ok=True)
    d = ["--db", str(db)]
    built = _run(["build", *listings, *d, *extra])
    if not built.startswith("exit 0"):
        raise SystemExit(f"build failed:\n{built}")
    (out / "build.txt").write_text("\n".join(line for line in built.splitlines()  # no timings, no progress bars
                                             if not line.startswith("time:") and not _PROGRESS.search(line)),
                                   encoding="utf-8")
    # the reading list is ordered by last change (1 s resolution): one change per second keeps that order fixed
    for title in LIKES:
        _run(["list", "like", title, *d])
        time.sleep(1.1)
    _run(["list", "note", LIKES[0], "A *sharp* idea: see [the paper](https://openreview.net).", *d])
    time.sleep(1.1)
    _run(["list", "add", LIKES[1], "--list", "pruning", *d])
    time.sleep(1.1)
    _run(["edit", LIKES[2], "--tldr", "MLPs extrapolate linearly; GNNs need the right features.",
          "--keyphrases", "extrapolation; graph neural networks; algorithmic alignment", *d])
    _dump_atlas(db, out)
    for i, q in enumerate(QUERIES):
        for mode in ("bm25", "hybrid"):
            _run(["search", q, "--mode", mode, "--json", "-k", "15", *d], out / "search" / f"{i:02d}-{mode}.txt")
        _run(["search", q, "-k", "5", *d], out / "search" / f"{i:02d}-text.txt")
    for i, (q, flt) in enumerate(FILTERED):
        _run(["search", q, *flt, "--json", "-k", "20", *d], out / "search" / f"filtered-{i}.txt")
    for i, title in enumerate(LIKES):
        _run(["show", title, *d], out / "show" / f"{i}.txt")
        _run(["related", title, *d], out / "related" / f"{i}.txt")
    _run(["recommend", *d], out / "recommend" / "likes.txt")
    _run(["recommend", "--like", LIKES[0], "--exclude-keyphrase", "reinforcement learning", "--json", *d],
         out / "recommend" / "like-exclude.txt")
    _run(["topics", *d], out / "topics.txt")
    _run(["list", "show", *d], out / "list-show.txt")
    pub = out / "publish"
    for fmt in FORMATS:
        target = pub / (fmt if fmt == "site" else f"{fmt}.out")
        msg = _run(["publish", "--format", fmt, "-o", str(target), "--title", "Snapshot", *d])
        (pub / f"{fmt}.msg").write_text(msg.replace(str(target), "OUT"), encoding="utf-8")
    db.unlink()


def snapshot(out: Path, seeds: Path) -> None:
    """Write the behaviour snapshot of the installed paperatlas to ``out`` (see the module docstring)."""
    iclr, awesome = str(seeds / "001_2614e1796f49d7fd.txt"), str(seeds / "004_67aa5497667b379c.txt")
    _snapshot_atlas("iclr2021", [iclr], ["--venue", "ICLR 2021", "--year", "2021"], out / "iclr2021")
    _snapshot_atlas("iclr2021+awesome", [iclr, awesome], ["--venue", "ICLR 2021", "--year", "2021"],
                    out / "iclr2021+awesome")


def compare(before: Path, after: Path) -> int:
    """Print the files that differ between two snapshots; returns the number of differences."""
    diffs: list[str] = []

    def walk(cmp: filecmp.dircmp, rel: Path) -> None:
        diffs.extend(f"only in {before.name}: {rel / f}" for f in cmp.left_only)
        diffs.extend(f"only in {after.name}: {rel / f}" for f in cmp.right_only)
        # shallow=False: compare contents, not os.stat signatures
        _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
        diffs.extend(f"differs: {rel / f}" for f in mismatch + errors)
        for name, sub in cmp.subdirs.items():
            walk(sub, rel / name)

    walk(filecmp.dircmp(before, after), Path("."))
    n_files = sum(1 for p in before.rglob("*") if p.is_file())
    for d in diffs:
        print(d)
    print(f"{n_files} files compared, {len(diffs)} differences")
    return len(diffs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot")
    s.add_argument("out", type=Path)
    s.add_argument("--seeds", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "seeds")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    a = ap.parse_args()
    if a.cmd == "snapshot":
        snapshot(a.out, a.seeds)
    else:
        sys.exit(1 if compare(a.before, a.after) else 0)


if __name__ == "__main__":
    main()
