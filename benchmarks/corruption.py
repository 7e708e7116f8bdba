"""Damage random cells of a real small atlas many times and run every command and web route on each.

The long run of ``tests/test_damaged.py``'s property test (which runs 20 examples in CI): the same atlas (the 12
papers of ``tests/fixtures/iclr2021_excerpt.md``, HashEmbedder vectors, a like, a list entry, a note and an
override), the same damage (a bad value in a random cell of a random table, or a dropped column or table) and the
same judgement: each command and route either works or gives the one-line damage message, and ``paperatlas check``
names the damaged cell whenever anything reported damage.

    python benchmarks/corruption.py --examples 300 --seed 1

prints, per kind of outcome, how many (damaged atlas x command or route) runs there were, then the failures.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_damaged import BAD_VALUES, TABLES, Base, Corruption, check_names, commands, routes  # noqa: E402


def random_corruption(rng: random.Random, base: Base) -> Corruption:
    """As the property test draws one (:func:`test_damaged.draw_corruption`), from ``rng``."""
    table = rng.choice(TABLES)
    cols, rows = base.layout[table]
    kind = rng.choice(["cell"] * 9 + ["column", "table"])
    if kind == "table":
        return Corruption(table)
    col = rng.choice(cols)
    if kind == "column" or not rows:
        return Corruption(table, col)
    values = [v for v in BAD_VALUES if not v.startswith("vector-") or (table, col) == ("embeddings", "vector")]
    return Corruption(table, col, rng.choice(rows), rng.choice(values))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=300, help="damaged atlases to try (default 300)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-web", action="store_true", help="commands only")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        base = Base(Path(tmp) / "base.db")
        n_cmds = len(commands(base.path, base.pid, Path(tmp))) + 1  # + check
        n_routes = 0 if args.no_web else len(routes(base.pid, base.tid, base.author)) + 1  # + loading the app
        kinds: Counter[str] = Counter()
        failures: list[str] = []
        applied = refused = 0
        checked_damaged = 0
        for i in range(args.examples):
            c = random_corruption(rng, base)
            where = Path(tmp) / f"ex{i}"
            where.mkdir()
            rep = base.damaged(c, where, web=not args.no_web)
            if not rep.applied:
                refused += 1
                continue
            applied += 1
            checked_damaged += rep.check_code == 1
            for o in rep.outcomes:
                kinds[o.kind] += 1
                if o.kind == "crash":
                    failures.append(f"{c}: {o.name}: {o.detail[:160]}")
            kinds["check ok" if not check_names(rep) else "check wrong"] += 1
            failures += [f"{c}: {p}" for p in check_names(rep)]
    runs = sum(v for k, v in kinds.items() if not k.startswith("check "))
    print(f"damaged atlases: {applied} ({refused} corruptions SQLite refused, e.g. NULL in a NOT NULL column)")
    print(f"runs: {applied} atlases x ({n_cmds} commands incl. check + {n_routes} routes incl. app load) = "
          f"{runs} (web routes not requested after a refused load)")
    print(f"outcomes: ok {kinds['ok']}, one-line damage {kinds['damage']}, other one-line error {kinds['error']}, "
          f"crash {kinds['crash']}")
    print(f"check: named the damage in {checked_damaged} atlases, clean in {applied - checked_damaged}; verdict right "
          f"{kinds['check ok']}, wrong {kinds['check wrong']}")
    print(f"passes {kinds['check ok'] - len({f.split(': ')[0] for f in failures})} of {applied} atlases; "
          f"failures {len(failures)}; {time.perf_counter() - t0:.0f} s")
    for f in failures[:40]:
        print("  FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
