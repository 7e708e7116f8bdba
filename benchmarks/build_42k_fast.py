"""Build a full-size atlas of the whole shared corpus (~42.6k papers) quickly, with a STAND-IN embedder.

Usage:
    python benchmarks/build_42k_fast.py [--db /tmp/atlas42k.db] [--replace]

Reads every ``../shared/data/paperlists/*/*.json.gz`` listing (42,647 papers) and builds the atlas with
:func:`paperatlas.build.build`, but embeds with :class:`FastEmbedder` instead of all-MiniLM-L6-v2 (which takes ~44
min on 2 cores at this size). FastEmbedder is a deterministic hashing stand-in: a ``HashingVectorizer`` (word
uni+bigrams, English stop words dropped, 2**18 features) followed by a fixed Gaussian random projection (seed 0) to
384 dimensions, L2-normalised. Papers sharing words land near each other, so topics and the map are still made, but
they are NOT semantic: query semantics (related papers, "For you", topic labels) differ from a real build. The
sizes are the real ones (papers, topics, vectors, FTS index), which is what a web-load benchmark needs
(``benchmarks/web_load.py``). Keyphrases, TL;DRs, topics and the UMAP map are the real pipeline stages.

Prints the stage times and the peak resident memory; progress goes to stdout (flushed), so run it with a log::

    nohup .venv/bin/python benchmarks/build_42k_fast.py > /tmp/atlas42k.log 2>&1 &

Not a test: run on demand.
"""

from __future__ import annotations

import argparse
import glob
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PAPERLISTS = ROOT.parent / "shared" / "data" / "paperlists"


class FastEmbedder:
    """Deterministic stand-in for the embedding model: hashed word n-grams -> fixed random projection -> 384-d.

    Satisfies :class:`paperatlas.enrich.embed.Embedder`. The name is distinct from the real model's, so an atlas
    built with it never reuses (or is reused by) real embeddings.
    """

    name = "fast-hashing-stand-in@384-v1"
    dim = 384

    def __init__(self, n_features: int = 2**18, seed: int = 0, batch_size: int = 2000):
        from sklearn.feature_extraction.text import HashingVectorizer

        self._vec = HashingVectorizer(n_features=n_features, ngram_range=(1, 2), stop_words="english",
                                      alternate_sign=False, norm="l2")
        self._n_features = n_features
        self._seed = seed
        self._proj: np.ndarray | None = None
        self._batch = batch_size

    def _projection(self) -> np.ndarray:
        if self._proj is None:  # 2**18 x 384 float32 = 384 MiB; made once, deterministically
            rng = np.random.default_rng(self._seed)
            self._proj = (rng.standard_normal((self._n_features, self.dim), dtype=np.float32)
                          / np.float32(np.sqrt(self.dim)))
        return self._proj

    def encode(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        proj = self._projection()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self._batch):
            chunk = texts[start:start + self._batch]
            x = self._vec.transform(chunk)
            v = np.asarray(x @ proj, dtype=np.float32)
            norms = np.linalg.norm(v, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            out[start:start + len(chunk)] = v / norms
            if progress:
                progress(len(chunk))
        return out


def listings() -> list[str]:
    files = sorted(glob.glob(str(PAPERLISTS / "*" / "*.json.gz")))
    if not files:
        raise SystemExit(f"{PAPERLISTS}: no *.json.gz listings (../shared data is needed)")
    return files


def _progress(desc: str, total: int) -> Callable[[int], None]:
    t0 = time.perf_counter()
    done = [0]
    step = max(1, total // 10)
    print(f"[{time.strftime('%H:%M:%S')}] {desc}: start ({total})", flush=True)

    def tick(n: int) -> None:
        before = done[0]
        done[0] += n
        if done[0] // step != before // step or done[0] >= total:
            print(f"[{time.strftime('%H:%M:%S')}] {desc}: {done[0]}/{total} ({time.perf_counter() - t0:.0f} s)",
                  flush=True)

    return tick


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", default="/tmp/atlas42k.db")
    ap.add_argument("--replace", action="store_true", help="passed to build() (rebuild over a different atlas)")
    args = ap.parse_args(argv)
    from paperatlas.build import build

    paths = listings()
    print(f"building {args.db} from {len(paths)} listings in {PAPERLISTS} with the STAND-IN embedder "
          f"{FastEmbedder.name} (not semantic; sizes are real)", flush=True)
    t0 = time.perf_counter()
    rep = build(paths, args.db, embedder=FastEmbedder(), progress=_progress, replace=args.replace)
    wall = time.perf_counter() - t0
    print(f"== {rep.n_papers} papers ({rep.n_read} records), {rep.n_topics} topics, {rep.n_areas} areas, "
          f"embedded {rep.n_embedded}, reused {rep.n_reused}")
    for stage, sec in rep.stage_seconds.items():
        print(f"   {stage:<12} {sec:8.1f} s")
    print(f"   {'total':<12} {wall:8.1f} s   peak RSS {rep.peak_rss_mib:.0f} MiB")
    print(f"atlas: {args.db} ({Path(args.db).stat().st_size / 2**20:.0f} MiB), embedder: stand-in {FastEmbedder.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
