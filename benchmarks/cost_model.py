"""A cost model of the cold build, fitted to measured stage costs and checked against a held-out size.

Usage:
    python benchmarks/cost_model.py FIGURES.jsonl [--fit 1000,10000] [--check 42000] [--workers 1,8,64]

``FIGURES.jsonl`` is what ``benchmarks/scale.py --json FILE`` writes: one line per built size with its stage times
(``stages``, s), the per-paper work's split (``worker``: embed, keyphrases, tldr seconds) and the build process's
peak RSS (``rss``, MiB; ``sampled_rss.sum`` with its children).

The model (one per stage row of the build's stage table):

* **time**: ``t(n) = c · n^k``, a power law through the two fitted sizes (a straight line in log-log: linear work
  gives k = 1, the k-NN graph and k-means more). Rows of less than 0.05 s at the larger fitted size are summed into
  ``other`` (noise, not a trend).
* **where it runs**: the per-paper work (the embedding, each paper's keyphrases and TL;DR: ``worker`` seconds) runs
  on the engine's workers and divides by their number; every other stage (reading, merging, the keyphrase
  statistics, topics, the map, writing, the indexes) runs on the driver, as :data:`paperatlas.build.PIPELINE` does
  today with ``--engine ray``. A Ray worker of "this size" is this machine: the measured per-paper seconds on its
  cores.
* **memory**: the driver's peak RSS (the build process, and with ``--with-children`` its embedding child) as
  ``a + b · n``, fitted through the two sizes.

It prints the fit, the held-out check (each stage's predicted and measured seconds, the error of the total and of
the peak RSS), and predictions for 1M and 10M papers on N workers with the stage that then bounds the build.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

#: the per-paper stage rows (their worker share runs on the engine's workers)
PER_PAPER = ("embed", "keyphrases", "tldr")


def load(path: Path) -> dict[int, dict]:
    """``n -> figures`` of each line of a ``scale.py --json`` file (the last line of a size wins)."""
    rows: dict[int, dict] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            rows[int(r["n"])] = r
    return rows


def split(r: dict) -> dict[str, float]:
    """A build's seconds by stage, the per-paper rows' worker share apart: ``worker:embed`` etc. vs the driver's."""
    out: dict[str, float] = {}
    worker = r.get("worker") or {}
    for k, v in r["stages"].items():
        if k in PER_PAPER and k in worker:
            out[f"worker:{k}"] = worker[k]
            if v - worker[k] > 0.05:
                out[k] = v - worker[k]  # what the driver did under that name (the keyphrase statistics)
        else:
            out[k] = out.get(k, 0.0) + v
    return out


def fit_power(n1: int, t1: float, n2: int, t2: float) -> tuple[float, float]:
    """``(c, k)`` of ``t = c · n^k`` through ``(n1, t1)`` and ``(n2, t2)``; k = 1 when a time is not positive."""
    if t1 <= 0 or t2 <= 0:
        return (max(t1, t2, 0.0) / n2, 1.0)
    k = math.log(t2 / t1) / math.log(n2 / n1)
    return t2 / n2 ** k, k


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("figures", type=Path)
    ap.add_argument("--fit", default="", help="the two sizes to fit on (default: the two smallest)")
    ap.add_argument("--check", type=int, default=0, help="the held-out size (default: the largest)")
    ap.add_argument("--workers", default="1,8,64", help="Ray workers of this machine's size to predict for")
    ap.add_argument("--with-children", action="store_true", help="memory: the build and its children together")
    args = ap.parse_args()
    rows = load(args.figures)
    sizes = sorted(rows)
    n1, n2 = ([int(x) for x in args.fit.split(",")] if args.fit else sizes[:2])
    n1, n2 = min(rows, key=lambda n: abs(n - n1)), min(rows, key=lambda n: abs(n - n2))
    check = min(rows, key=lambda n: abs(n - args.check)) if args.check else sizes[-1]
    s1, s2 = split(rows[n1]), split(rows[n2])
    stages = [k for k in s2 if s2[k] >= 0.05 and s1.get(k, 0) > 0]
    other1 = sum(v for k, v in s1.items() if k not in stages)
    other2 = sum(v for k, v in s2.items() if k not in stages)
    model = {k: fit_power(n1, s1[k], n2, s2[k]) for k in stages}
    model["other"] = fit_power(n1, other1, n2, other2)

    def rss(r):
        return r["sampled_rss"]["sum"] if args.with_children and r.get("sampled_rss") else r["rss"]

    b = (rss(rows[n2]) - rss(rows[n1])) / (n2 - n1)
    a = rss(rows[n1]) - b * n1
    print(f"fitted on {n1:,} and {n2:,} papers ({rows[n2].get('cpu', '?')}, {rows[n2].get('cores', '?')} cores)\n")
    print(f"| stage | runs on | t({n1:,}) s | t({n2:,}) s | k | predicted t({check:,}) s | measured s | error |")
    print("|---|---|---|---|---|---|---|---|")
    sc = split(rows[check])
    total_pred = total_meas = 0.0
    for k, (c, e) in model.items():
        pred = c * check ** e
        meas = sc.get(k, 0.0) if k != "other" else sum(v for kk, v in sc.items() if kk not in stages)
        total_pred, total_meas = total_pred + pred, total_meas + meas
        where = "workers" if k.startswith("worker:") else "driver"
        t1 = s1.get(k, other1) if k != "other" else other1
        t2 = s2.get(k, other2) if k != "other" else other2
        err = f"{(pred - meas) / meas:+.0%}" if meas > 0 else "-"
        print(f"| {k} | {where} | {t1:.1f} | {t2:.1f} | {e:.2f} | {pred:.0f} | {meas:.0f} | {err} |")
    print(f"| **total** | | | | | **{total_pred:.0f}** | **{total_meas:.0f}** | "
          f"**{(total_pred - total_meas) / total_meas:+.0%}** |")
    mem_pred = a + b * check
    print(f"\npeak RSS: {a:.0f} MiB + {b * 1000:.1f} MiB per 1,000 papers; predicted at {check:,}: {mem_pred:,.0f} "
          f"MiB, measured {rss(rows[check]):,.0f} MiB ({(mem_pred - rss(rows[check])) / rss(rows[check]):+.0%})\n")
    workers = [int(x) for x in args.workers.split(",")]
    print("| papers | workers | per-paper work s | driver s | total | driver peak RSS GiB | bound by |")
    print("|---|---|---|---|---|---|---|")
    for n in (1_000_000, 10_000_000):
        per_paper = sum(c * n ** e for k, (c, e) in model.items() if k.startswith("worker:"))
        driver = {k: c * n ** e for k, (c, e) in model.items() if not k.startswith("worker:")}
        for w in workers:
            total = sum(driver.values()) + per_paper / w
            parts = {**driver, "per-paper work (workers)": per_paper / w}
            bound = max(parts, key=parts.get)
            print(f"| {n:,} | {w} | {per_paper / w:,.0f} | {sum(driver.values()):,.0f} | {total / 3600:.1f} h | "
                  f"{(a + b * n) / 1024:.1f} | {bound} ({parts[bound] / total:.0%}) |")


if __name__ == "__main__":
    main()
