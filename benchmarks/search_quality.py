"""Benchmark: is search honest? Precision@10, recall of the expected papers, and "empty when nothing matches".

Usage:
    python benchmarks/search_quality.py                       # builds the two atlases once into ~/.cache
    python benchmarks/search_quality.py --iclr A.db --phenomena B.db [--mode hybrid|bm25] [-v]
    PYTHONPATH=/path/to/older/src python benchmarks/search_quality.py ...   # the same queries on older code

The 100 queries of ``benchmarks/data/search_queries.json`` (written by hand with their judgments, see its ``about``)
run through :func:`paperatlas.search.search` (``k=10``, the query embedder of the CLI) on the ICLR 2021 atlas
(seed 001) and the Awesome Deep Phenomena atlas (seed 004). Per kind of query it prints:

* **P@10**: of the results shown (at most 10), the share a researcher accepts (title matches the query's
  ``relevant`` pattern); a non-miss query that returns nothing scores 0. Averaged over queries (macro).
* **R@10**: the share of the query's ``expect`` papers among the first 10 results (queries with expectations).
* ``filtered`` queries also set a status filter: precision counts only the papers left, so a filter that leaves
  only unrelated papers scores 0 (the right answer may be an empty page).
* **empty**: for the ``miss`` queries (nothing in the atlas is about them), the share that return no result.
* **filled**: for the others, the share that return at least one result.

The first 70 queries (issue 15: lookup, miss, typo, researcher, filtered) and the 30 query-shape queries of issue 27
(kind ``shape``: ``16x16``, ``GPT-3``, ``t-SNE visualization``, ``ε-greedy``, ``k-means``, ...) are reported apart,
each with its own ``all`` row, so that figures before and after the shapes were added stay comparable.

Figures, not assertions: run it before and after a change to search.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"
QUERIES = Path(__file__).with_name("data") / "search_queries.json"
CACHE = Path.home() / ".cache" / "paperatlas-bench"


def ensure_atlas(path: str | None, seed_glob: str, name: str) -> str:
    """The atlas at ``path``, or one built from the seed matching ``seed_glob`` into the cache (once)."""
    if path:
        return path
    out = CACHE / f"{name}.db"
    if not out.exists():
        seed = sorted(SEEDS.glob(seed_glob))
        if not seed:
            raise SystemExit(f"{SEEDS}: no {seed_glob} (../shared/seeds is needed)")
        out.parent.mkdir(parents=True, exist_ok=True)
        print(f"building {out} from {seed[0].name} ...", flush=True)
        subprocess.run([sys.executable, "-m", "paperatlas.cli", "build", str(seed[0]), "--db", str(out)],
                       check=True, stdout=subprocess.DEVNULL, env={**os.environ, "TQDM_DISABLE": "1"})
    return str(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iclr", help="ICLR 2021 atlas (default: built from seed 001 into ~/.cache)")
    ap.add_argument("--phenomena", help="Awesome Deep Phenomena atlas (default: built from seed 004)")
    ap.add_argument("--mode", default="hybrid", choices=["hybrid", "bm25", "semantic"])
    ap.add_argument("-v", "--verbose", action="store_true", help="print every query's results")
    args = ap.parse_args()

    from paperatlas.enrich.embed import get_embedder
    from paperatlas.search import Filters, search
    from paperatlas.store import Atlas

    atlases = {"iclr2021": Atlas(ensure_atlas(args.iclr, "001_*.txt", "iclr2021")),
               "phenomena": Atlas(ensure_atlas(args.phenomena, "004_*.txt", "phenomena"))}
    model = get_embedder()

    def embed(q: str):
        return model.encode([q])[0]

    queries = json.loads(QUERIES.read_text(encoding="utf-8"))["queries"]
    rows: dict[str, list[dict]] = {}
    t0 = time.perf_counter()
    for q in queries:
        flt = Filters(status=q["status"]) if q.get("status") else None
        hits = search(atlases[q["atlas"]], q["query"], k=10, filters=flt, mode=args.mode, embed_query=embed)
        titles = [h.paper.title for h in hits]
        r: dict = {"n": len(titles)}
        if q["kind"] == "filtered" and not titles:
            r["empty"] = True  # an empty page is a right answer for a filter nothing passes; no P@10 to count
        elif q["kind"] == "miss":
            r["empty"] = not titles
        else:
            rel = re.compile(q["relevant"], re.IGNORECASE)
            r["p10"] = sum(bool(rel.search(t)) for t in titles) / len(titles) if titles else 0.0
            r["filled"] = bool(titles)
            if q["expect"]:
                r["r10"] = sum(any(e.lower() in t.lower() for t in titles) for e in q["expect"]) / len(q["expect"])
        rows.setdefault(q["kind"], []).append(r)
        if args.verbose:
            print(f"\n[{q['kind']}] {q['atlas']}: {q['query']!r} -> {len(titles)} results "
                  + " ".join(f"{k}={v:.2f}" for k, v in r.items() if isinstance(v, float)))
            for h in hits:
                print(f"   {getattr(h, 'match', '') or '-':8} {h.paper.title[:100]}")
    elapsed = time.perf_counter() - t0

    def mean(rs: list[dict], key: str) -> str:
        xs = [float(r[key]) for r in rs if key in r]
        return f"{sum(xs) / len(xs):.3f}" if xs else "  -  "

    print(f"\nsearch quality, mode={args.mode}, {len(queries)} queries in {elapsed:.1f} s "
          f"(code: {sys.modules['paperatlas'].__file__})")
    print(f"{'kind':<11}{'queries':>8}{'P@10':>8}{'R@10':>8}{'empty':>8}{'filled':>8}{'mean n':>8}")
    old = {k: rs for k, rs in rows.items() if k != "shape"}
    tables = [("first 70 (issue 15)", [*old.items(), ("all", [r for rs in old.values() for r in rs])])]
    if "shape" in rows:
        tables.append(("query shapes (issue 27)", [("shape", rows["shape"])]))
    for title, table in tables:
        print(f"-- {title}")
        for kind, rs in table:
            n_mean = sum(r["n"] for r in rs) / len(rs)
            print(f"{kind:<11}{len(rs):>8}{mean(rs, 'p10'):>8}{mean(rs, 'r10'):>8}{mean(rs, 'empty'):>8}"
                  f"{mean(rs, 'filled'):>8}{n_mean:>8.1f}")


if __name__ == "__main__":
    main()
