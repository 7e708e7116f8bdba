"""What's new for me, measured: NeurIPS 2017 built, five papers of one topic liked, NeurIPS 2018 added.

Builds the shared paperlists' NeurIPS 2017 (678 papers with abstracts), then rebuilds with NeurIPS 2018 added
(1,008), and for each of the ``--draws`` biggest 2017 sub-topics likes its five most central papers and ranks the
2018 papers with :func:`paperatlas.whatsnew.whats_new`. P@10: the share of the digest's top 10 that sit in a
topic of the liked papers (after the rebuild); the baseline is that share among all new papers (a random order).

    python benchmarks/whats_new.py [--workdir /tmp/whatsnew] [--draws 10]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NIPS = ROOT.parent / "shared" / "data" / "paperlists" / "nips"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", default="/tmp/whatsnew")
    ap.add_argument("--draws", type=int, default=10, help="liked sets (one per biggest 2017 sub-topic)")
    args = ap.parse_args()
    from paperatlas.build import build
    from paperatlas.store import Atlas
    from paperatlas.whatsnew import whats_new

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    db = work / "nips2017_2018.db"
    db.unlink(missing_ok=True)
    y17, y18 = NIPS / "nips2017.json.gz", NIPS / "nips2018.json.gz"
    if not y17.exists():
        sys.exit(f"{y17} is absent (../shared data)")
    t = time.perf_counter()
    build([y17], db)
    first = Atlas(db)
    subs = sorted((t for t in first.topics.values() if t.level == 1), key=lambda t: (-t.size, t.id))[:args.draws]
    draws = [[p.id for p in sorted((p for p in first.papers if p.topic_id == s.id),
                                   key=lambda p: -(p.topic_confidence or 0))[:5]] for s in subs]
    first.close()
    t1 = time.perf_counter()
    rep = build([y17, y18], db)
    t2 = time.perf_counter()
    atlas = Atlas(db)
    print(f"NeurIPS 2017: {t1 - t:.0f} s; adding 2018: {t2 - t1:.0f} s, {rep.n_new} new papers "
          f"(topics {rep.topic_mode}); peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print("| liked papers' 2017 topic | their topic(s) now | P@10 | random order |")
    print("|---|---|---|---|")
    p10s, bases = [], []
    for s, liked in zip(subs, draws, strict=True):
        topics = {atlas.by_id[pid].topic_id for pid in liked}
        digest = whats_new(atlas, limit=None, liked=liked, disliked=[])
        top = digest.papers[:10]
        p10 = sum(n.paper.topic_id in topics for n in top) / len(top)
        base = sum(n.paper.topic_id in topics for n in digest.papers) / len(digest.papers)
        p10s.append(p10)
        bases.append(base)
        now = "; ".join(atlas.topic_label(t) for t in sorted(topics))
        print(f"| {s.label} ({s.size}) | {now} | {p10:.1f} | {base:.3f} |")
    print(f"mean P@10 {statistics.mean(p10s):.2f} (random order {statistics.mean(bases):.3f}) over {len(p10s)} draws")


if __name__ == "__main__":
    main()
