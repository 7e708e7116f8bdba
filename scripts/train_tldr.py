#!/usr/bin/env python
"""Train the TL;DR candidate selector shipped as ``src/paperatlas/data/tldr_selector.json``.

Data: SciTLDR-A train (``../shared/data/scitldr/train.jsonl.gz``; dev is never read here). For every paper the
abstract (``" ".join(source)``) goes through the same code path as :func:`paperatlas.enrich.tldr.extract_tldr`:
``split_sentences`` → :func:`paperatlas.enrich.tldr.paper_candidates` (cleaned sentences and their clause-boundary cuts,
with hand features). Each candidate is labelled with its ROUGE F1 against the gold TL;DR(s) (max over targets;
``--label`` picks ROUGE-1 or the mean of ROUGE-1/2/L), centred per paper, and a ridge regression (closed form,
standardised features) learns to rank the candidates of a paper. Deterministic: the only randomness is the
seeded fold split used for the cross-validated score that is stored with the model.

    python scripts/train_tldr.py [--train FILE] [--out FILE] [--seed 13] [--alpha 30] [--vocab 300]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from paperatlas.enrich import tldr  # noqa: E402
from paperatlas.text import split_sentences, word_tokens  # noqa: E402
from paperatlas.vocab import norm_word  # noqa: E402

DEFAULT_TRAIN = ROOT.parent / "shared" / "data" / "scitldr" / "train.jsonl.gz"
DEFAULT_OUT = ROOT / "src" / "paperatlas" / "data" / "tldr_selector.json"


def load_records(path: Path) -> list[dict]:
    from paperatlas.eval.tldr_eval import load_records as _load

    return _load(path)


class Rouge:
    """ROUGE-1/2/L F1 exactly as ``rouge-score`` computes them (same tokenizer and stemmer), with targets
    tokenised once per paper for speed."""

    def __init__(self):
        from rouge_score import rouge_scorer

        self._rs = rouge_scorer
        self._tok = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)._tokenizer

    def tokens(self, text: str) -> list[str]:
        return self._tok.tokenize(text)

    def scores(self, target: list[str], pred: list[str]) -> tuple[float, float, float]:
        rs = self._rs
        r1 = rs._score_ngrams(rs._create_ngrams(target, 1), rs._create_ngrams(pred, 1)).fmeasure
        r2 = rs._score_ngrams(rs._create_ngrams(target, 2), rs._create_ngrams(pred, 2)).fmeasure
        rl = rs._score_lcs(target, pred).fmeasure
        return r1, r2, rl


def build_vocab(records: list[dict], size: int) -> list[str]:
    """The ``size`` most frequent (normalised) words of the training abstracts, by document frequency."""
    df: Counter[str] = Counter()
    for rec in records:
        df.update({norm_word(w) for w in word_tokens(" ".join(rec["source"]))})
    return [w for w, _ in sorted(df.items(), key=lambda kv: (-kv[1], kv[0]))[:size]]


def _sentences(rec: dict) -> list[str]:
    return [s for s in split_sentences(" ".join(rec["source"])) if len(word_tokens(s)) >= 4]


def fit_word_model(records: list[dict], vocab: list[str], C: float = 1.0) -> dict:
    """Logistic regression: does an abstract word occur in the (first) gold TL;DR? Features from
    :func:`paperatlas.enrich.tldr.word_features`; deterministic (lbfgs)."""
    from sklearn.linear_model import LogisticRegression

    base = {"_vocab": {w: k for k, w in enumerate(vocab)}}
    rows, ys = [], []
    for rec in records:
        sents = _sentences(rec)
        ctx = tldr.Context(rec.get("title") or "", sents, [tldr.clean_sentence(s) for s in sents], base)
        gold = set(tldr._toks(rec["target"][0]))
        for t in sorted(ctx.count):
            rows.append(tldr.word_features(ctx, t))
            ys.append(int(t in gold))
    names = sorted({k for r in rows for k in r})
    idx = {k: j for j, k in enumerate(names)}
    X = np.zeros((len(rows), len(names)))
    for i, r in enumerate(rows):
        for k, v in r.items():
            X[i, idx[k]] = v
    lr = LogisticRegression(C=C, max_iter=2000).fit(X, np.array(ys))
    return {"features": names, "weights": [round(float(v), 5) for v in lr.coef_[0]],
            "intercept": round(float(lr.intercept_[0]), 5)}


def _runtime_model(vocab: list[str], word_model: dict | None) -> dict:
    m = {"_vocab": {w: k for k, w in enumerate(vocab)}}
    if word_model:
        m["_wm"] = {"w": dict(zip(word_model["features"], word_model["weights"], strict=True)),
                    "intercept": word_model["intercept"]}
    return m


def featurize(records: list[dict], vocab: list[str], label: str = "r1", word_model: dict | None = None):
    """Per paper: (feature dicts, labels [r1, r2, rl] per candidate, candidate texts)."""
    rouge = Rouge()
    vmap = _runtime_model(vocab, word_model)
    papers = []
    for rec in records:
        sentences = _sentences(rec)
        cands = tldr.paper_candidates(rec.get("title") or "", sentences, vmap)
        if not cands:
            continue
        targets = [rouge.tokens(t) for t in rec["target"]]
        labels = []
        for text, _, _ in cands:
            pred = rouge.tokens(text)
            per = [rouge.scores(t, pred) for t in targets]
            labels.append([max(p[k] for p in per) for k in range(3)])
        papers.append(([c[1] for c in cands], np.array(labels), [c[0] for c in cands]))
    return papers


def _label(y: np.ndarray, label: str) -> np.ndarray:
    return y[:, 0] if label == "r1" else y.mean(axis=1)


def fit(papers, feature_names: list[str], alpha: float, label: str = "r1") -> dict:
    """Ridge regression on per-paper centred labels; returns features, weights, mean, scale."""
    idx = {f: k for k, f in enumerate(feature_names)}
    rows, ys = [], []
    for feats, y, _ in papers:
        X = np.zeros((len(feats), len(feature_names)))
        for r, f in enumerate(feats):
            for name, v in f.items():
                if name in idx:
                    X[r, idx[name]] = v
        lab = _label(y, label)
        rows.append(X)
        ys.append(lab - lab.mean())
    X = np.vstack(rows)
    y = np.concatenate(ys)
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-9] = 1.0
    Z = (X - mean) / scale
    A = Z.T @ Z + alpha * np.eye(Z.shape[1])
    w = np.linalg.solve(A, Z.T @ y)
    return {"features": feature_names, "weights": [round(float(v), 6) for v in w],
            "mean": [round(float(v), 6) for v in mean], "scale": [round(float(v), 6) for v in scale]}


def select_scores(papers, model: dict) -> dict[str, float]:
    """Mean ROUGE-1/2/L (×100, max over targets) of the candidate the model ranks first (ties: earliest)."""
    m = dict(model)
    m["_w"] = dict(zip(model["features"], model["weights"], strict=True))
    m["_mean"] = dict(zip(model["features"], model["mean"], strict=True))
    m["_scale"] = dict(zip(model["features"], model["scale"], strict=True))
    tot = np.zeros(3)
    for feats, y, texts in papers:
        order = sorted(range(len(feats)), key=lambda k: -tldr.score(feats[k], m))
        best = next((k for k in order if not tldr._DANGLING.match(texts[k])), order[0])
        tot += y[best]
    tot = 100 * tot / max(len(papers), 1)
    return {"rouge1": round(float(tot[0]), 2), "rouge2": round(float(tot[1]), 2), "rougeL": round(float(tot[2]), 2)}


def train(records: list[dict], seed: int = 13, alpha: float = 30.0, vocab_size: int = 300, folds: int = 5,
          label: str = "r1", word_C: float = 1.0) -> dict:
    """Train the selector on ``records``; deterministic for a given ``seed``. Returns the model dict."""
    random.seed(seed)
    np.random.seed(seed)
    vocab = build_vocab(records, vocab_size) if vocab_size else []
    word_model = fit_word_model(records, vocab) if word_C else None
    papers = featurize(records, vocab, label, word_model)
    names = sorted({k for feats, _, _ in papers for f in feats for k in f})
    model = fit(papers, names, alpha, label)
    metrics = {"papers": len(papers), "candidates": sum(len(p[0]) for p in papers),
               "train_selected": select_scores(papers, model)}
    if folds > 1 and len(papers) >= folds * 2:
        order = list(range(len(papers)))
        random.Random(seed).shuffle(order)
        cv = np.zeros(3)
        for k in range(folds):
            test = set(order[k::folds])
            m = fit([p for j, p in enumerate(papers) if j not in test], names, alpha, label)
            s = select_scores([papers[j] for j in sorted(test)], m)
            cv += np.array([s["rouge1"], s["rouge2"], s["rougeL"]]) * len(test)
        cv /= len(papers)
        metrics[f"cv{folds}_selected"] = {"rouge1": round(float(cv[0]), 2), "rouge2": round(float(cv[1]), 2),
                                          "rougeL": round(float(cv[2]), 2)}
    oracle = np.mean([_label(y, label).max() for _, y, _ in papers]) * 100
    metrics["candidate_oracle_" + label] = round(float(oracle), 2)
    # drop features that never fire (zero weight and zero variance) to keep the file small
    keep = [k for k, s in enumerate(model["scale"]) if not (s == 1.0 and model["weights"][k] == 0)]
    for key in ("features", "weights", "mean", "scale"):
        model[key] = [model[key][k] for k in keep]
    return {"method": tldr.METHOD, "trainer": "scripts/train_tldr.py", "seed": seed, "alpha": alpha,
            "label": f"per-paper centred {label} F1 vs the gold TL;DR (max over targets)",
            "max_words": tldr.MAX_WORDS, "vocab": vocab, "word_model": word_model, "metrics": metrics, **model}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", type=Path, default=DEFAULT_TRAIN)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--alpha", type=float, default=30.0)
    ap.add_argument("--vocab", type=int, default=300)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--label", choices=["r1", "mean"], default="r1")
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args(argv)
    records = load_records(args.train)[: args.limit]
    model = train(records, seed=args.seed, alpha=args.alpha, vocab_size=args.vocab, folds=args.folds,
                  label=args.label)
    args.out.write_text(json.dumps(model, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(json.dumps(model["metrics"], indent=1))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.1f} KB, {len(model['features'])} features)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
