"""Benchmark: a generative TL;DR backend on SciTLDR dev abstracts — seconds/paper, fallback rate, ROUGE.

Usage:
    python benchmarks/tldr_llm_bench.py                         # SmolLM2 (pip install 'paperatlas[llm]'), 30 papers
    python benchmarks/tldr_llm_bench.py -n 100
    python benchmarks/tldr_llm_bench.py --openai http://127.0.0.1:11434/v1 qwen2.5:0.5b

Prints, for the first N records of ../shared/data/scitldr/dev.jsonl.gz: model load time, seconds per paper, the
fallback rate of :func:`paperatlas.llm.backends.generate_tldr` with its reasons, and ROUGE-1/2/L F1 (rouge_score,
use_stemmer=True, max over the gold targets, averaged over papers) for (a) the final TL;DRs (generated or fallback),
(b) the raw cleaned model answers before the faithfulness check and (c) the extractive TL;DR alone. Not a test.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

from rouge_score import rouge_scorer

from paperatlas.enrich import tldr
from paperatlas.llm.backends import make_backend
from paperatlas.llm.tldr import backend_summarizer, clean_answer, supported

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT.parent / "shared" / "data" / "scitldr" / "dev.jsonl.gz"
KEYS = ("rouge1", "rouge2", "rougeL")


class Recording:
    """Wraps a backend and keeps its raw answers and per-call seconds."""

    def __init__(self, backend):
        self.backend = backend
        self.method = backend.method
        self.raw: list[str] = []
        self.seconds: list[float] = []

    def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        t0 = time.perf_counter()
        try:
            out = self.backend.complete(messages, max_tokens)
        except Exception:
            self.raw.append("")
            raise
        finally:
            self.seconds.append(time.perf_counter() - t0)
        self.raw.append(out)
        return out


def rouge(scorer, preds: list[str], targets: list[list[str]]) -> dict[str, float]:
    tot = dict.fromkeys(KEYS, 0.0)
    for p, ts in zip(preds, targets, strict=True):
        for k in KEYS:
            tot[k] += max(scorer.score(t, p)[k].fmeasure for t in ts) if p else 0.0
    return {k: 100 * v / len(preds) for k, v in tot.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=30, help="number of dev records (default 30)")
    ap.add_argument("--openai", nargs=2, metavar=("BASE_URL", "MODEL"), help="use an OpenAI-compatible server")
    ap.add_argument("--show", type=int, default=5, help="print this many examples")
    args = ap.parse_args()

    rows = []
    with gzip.open(DEV, "rt") as f:
        for line in f:
            rows.append(json.loads(line))
            if len(rows) >= args.n:
                break

    t0 = time.perf_counter()
    backend = make_backend("openai", *args.openai) if args.openai else make_backend("smollm2")
    load_s = time.perf_counter() - t0
    rec = Recording(backend)
    summarize = backend_summarizer(rec)

    finals, extractive, targets = [], [], []
    t0 = time.perf_counter()
    for r in rows:
        abstract = " ".join(r["source"])
        finals.append(summarize(r["title"], abstract))
        targets.append(r["target"])
    total_s = time.perf_counter() - t0
    for r in rows:
        extractive.append(tldr.extract_tldr(r["title"], " ".join(r["source"])))
    raw_clean = [clean_answer(a) if a else "" for a in rec.raw]

    scorer = rouge_scorer.RougeScorer(list(KEYS), use_stemmer=True)
    n = len(rows)
    print(f"backend: {backend.method}")
    print(f"papers: {n} (SciTLDR dev, first {n}); model load {load_s:.1f} s")
    print(f"generation: {sum(rec.seconds) / n:.2f} s/paper (min {min(rec.seconds):.2f}, max {max(rec.seconds):.2f}); "
          f"end-to-end incl. check + fallback {total_s / n:.2f} s/paper")
    print(f"fallbacks: {summarize.fallbacks}/{summarize.calls} = {summarize.fallback_rate:.0%}  "
          f"reasons: {dict(summarize.reasons.most_common())}")
    words = [len(a.split()) for a in raw_clean if a]
    if words:
        print(f"raw answer length: mean {sum(words) / len(words):.1f} words")
    print("ROUGE F1 x100 (max over targets)       R-1    R-2    R-L")
    for label, preds in ((f"final ({backend.method} + fallback)", finals), ("raw cleaned model answers", raw_clean),
                         (f"extractive only ({tldr.METHOD})", extractive)):
        s = rouge(scorer, preds, targets)
        print(f"  {label[:38]:<38} {s['rouge1']:5.1f}  {s['rouge2']:5.1f}  {s['rougeL']:5.1f}")
    for r, a in list(zip(rows, raw_clean, strict=True))[: args.show]:
        ok, why = supported(a, " ".join(r["source"]), r["title"])
        print(f"\n- {r['title']}\n  model: {a}\n  check: {why}\n  gold:  {r['target'][0]}")


if __name__ == "__main__":
    main()
