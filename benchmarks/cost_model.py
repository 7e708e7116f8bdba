"""A cost model of the cold build, fitted to measured stage costs and checked against a held-out size.

Usage:
    python benchmarks/cost_model.py FIGURES.jsonl [--fit 1000,10000] [--check 42000] [--workers 1,8,64]

``FIGURES.jsonl`` is what ``benchmarks/scale.py --json FILE`` writes: one line per built size with its stage times
(``stages``, s), the per-paper work's split (``worker``: embed, keyphrases, tldr seconds) and the build process's
peak RSS (``rss``, MiB; ``sampled_rss.sum`` with its children).

The model (chosen before the held-out size was measured):

* **time**: every stage row as ``t(n) = a + b · n`` through the two fitted sizes (a fixed cost, e.g. the model's load
  or UMAP's compilation, plus a cost per paper). The per-paper work of the local build (the rows ``embed``,
  ``tldr``, the per-paper share of ``keyphrases`` and ``prepare (while embedding)``) is one row, ``per-paper``.
  A power law ``c · n^k`` through the same two points is printed beside it for comparison only.
* **where it runs**: on ``N`` Ray workers of this machine's size the per-paper work is the embedding alone
  (``scale.py``'s bare encode time, the machine's cores as torch threads) plus each paper's keyphrases and TL;DR
  spread over its cores, divided by ``N``; every other stage (reading, merging, the keyphrase statistics, topics,
  the map, writing, the indexes) stays on the driver, as :data:`paperatlas.build.PIPELINE` does with ``--engine
  ray``.
* **memory**: the build process's peak RSS (with ``--with-children``, with its embedding children) as ``a + b · n``.

It prints the fit and the held-out check (each row's predicted and measured seconds, the error of the total and of
the peak RSS), then predictions for 1M and 10M papers on N workers and the stage that bounds each.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

#: the rows the local build's per-paper stage writes (besides its share of ``keyphrases``)
PER_PAPER = ("embed", "tldr", "prepare (while embedding)")


def load(path: Path) -> dict[int, dict]:
    """``n -> figures`` of each line of a ``scale.py --json`` file (the last line of a size wins)."""
    rows: dict[int, dict] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            rows[int(r["n"])] = r
    return rows


def split(r: dict) -> dict[str, float]:
    """A local build's seconds by row: the per-paper stage as one ``per-paper`` row, the driver's rows apart."""
    worker = r.get("worker") or {}
    out: dict[str, float] = {"per-paper": worker.get("keyphrases", 0.0)}
    for k, v in r["stages"].items():
        if k in PER_PAPER or k.startswith("per-paper"):
            out["per-paper"] += v
        elif k == "keyphrases":
            out["keyphrase statistics"] = v - worker.get("keyphrases", 0.0)
        else:
            out[k] = v
    return out


def worker_seconds(r: dict) -> float:
    """Per-paper work on one worker of this machine's size: the bare embedding plus the annotation over its cores."""
    bare = [b["encode"] for b in r.get("bare") or [] if "encode" in b]
    worker = r.get("worker") or {}
    annotate = worker.get("keyphrases", 0.0) + worker.get("tldr", 0.0)
    embed = sum(bare) / len(bare) if bare else worker.get("embed", 0.0)
    return embed + annotate / max(int(r.get("cores") or 1), 1)


def fit_affine(n1: int, t1: float, n2: int, t2: float) -> tuple[float, float]:
    """``(a, b)`` of ``t = a + b · n`` through ``(n1, t1)`` and ``(n2, t2)`` (``a`` floored at 0)."""
    b = (t2 - t1) / (n2 - n1)
    a = t1 - b * n1
    return (a, b) if a >= 0 else (0.0, t2 / n2)


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
    s1, s2, sc = split(rows[n1]), split(rows[n2]), split(rows[check])
    stages = [k for k in s2 if max(s1.get(k, 0), s2[k]) >= 0.05]
    for s_ in (s1, s2, sc):
        s_["other"] = sum(v for k, v in s_.items() if k not in stages)
    stages.append("other")
    affine = {k: fit_affine(n1, s1.get(k, 0.0), n2, s2.get(k, 0.0)) for k in stages}
    power = {k: fit_power(n1, s1.get(k, 0.0), n2, s2.get(k, 0.0)) for k in stages}

    def rss(r):
        return r["sampled_rss"]["sum"] if args.with_children and r.get("sampled_rss") else r["rss"]

    ma, mb = fit_affine(n1, rss(rows[n1]), n2, rss(rows[n2]))
    print(f"fitted on {n1:,} and {n2:,} papers ({rows[n2].get('cpu', '?')}, {rows[n2].get('cores', '?')} cores); "
          f"held out: {check:,}\n")
    print(f"| row | t({n1:,}) s | t({n2:,}) s | a s | b ms/paper | predicted t({check:,}) s | measured s | error "
          "| power law: k, predicted s |")
    print("|---|---|---|---|---|---|---|---|---|")
    tp = tm = tpow = 0.0
    for k in stages:
        a, b = affine[k]
        c, e = power[k]
        pred, meas, pw = a + b * check, sc.get(k, 0.0), c * check ** e
        tp, tm, tpow = tp + pred, tm + meas, tpow + pw
        err = f"{(pred - meas) / meas:+.0%}" if meas >= 0.5 else "-"
        print(f"| {k} | {s1.get(k, 0):.1f} | {s2.get(k, 0):.1f} | {a:.1f} | {1000 * b:.2f} | {pred:.0f} | {meas:.0f} | "
              f"{err} | {e:.2f}, {pw:.0f} |")
    print(f"| **total** | | | | | **{tp:.0f}** | **{tm:.0f}** | **{(tp - tm) / tm:+.0%}** | {tpow:.0f} "
          f"({(tpow - tm) / tm:+.0%}) |")
    mp = ma + mb * check
    print(f"\npeak RSS{' (with children)' if args.with_children else ''}: {ma:.0f} MiB + {mb * 1000:.1f} MiB per "
          f"1,000 papers; predicted at {check:,}: {mp:,.0f} MiB, measured {rss(rows[check]):,.0f} MiB "
          f"({(mp - rss(rows[check])) / rss(rows[check]):+.0%})\n")
    wa, wb = fit_affine(n1, worker_seconds(rows[n1]), n2, worker_seconds(rows[n2]))
    print(f"per-paper work on one worker of this size: {wa:.1f} s + {1000 * wb:.2f} ms per paper "
          f"(embedding alone + keyphrases and TL;DR over {rows[n2].get('cores', 1)} cores)\n")
    workers = [int(x) for x in args.workers.split(",")]
    print("| papers | workers | per-paper work s | driver s | total | driver peak RSS GiB | bound by |")
    print("|---|---|---|---|---|---|---|")
    for n in (1_000_000, 10_000_000):
        driver = {k: affine[k][0] + affine[k][1] * n for k in stages if k != "per-paper"}
        for w in workers:
            per_paper = (wa + wb * n) / w
            total = sum(driver.values()) + per_paper
            parts = {**driver, "per-paper work (workers)": per_paper}
            bound = max(parts, key=parts.get)
            print(f"| {n:,} | {w} | {per_paper:,.0f} | {sum(driver.values()):,.0f} | {total / 3600:.1f} h | "
                  f"{(ma + mb * n) / 1024:.1f} | {bound} ({parts[bound] / total:.0%}) |")


if __name__ == "__main__":
    main()
