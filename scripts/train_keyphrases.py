#!/usr/bin/env python
"""Refit the keyphrase scorer's logistic-regression weights (``paperatlas.enrich.keyphrases.WEIGHT_BY_FEATURE``).

Data: COLM 2024 author keywords (``../shared/data/paperlists/colm/colm2024.json.gz``, 299 papers). COLM 2025 and
seed 004 are never read here: they are the held-out gold sets of ``paperatlas eval keyphrases``.

For every paper, :meth:`paperatlas.enrich.keyphrases.KeyphraseExtractor.features` gives one row per candidate concept
(the extractor is fitted on the COLM 2024 titles + abstracts, as a build fits it on its own corpus). A candidate is
positive when its key (lower-cased, hyphens to spaces, punctuation stripped, Porter-stemmed: the matching of the
eval) equals an author keyword's key. scikit-learn's ``LogisticRegression`` (lbfgs, L2, ``C``, the bias column
carries the intercept) is fitted on all rows; lbfgs on a convex loss is deterministic, so the same data gives the
same weights. The script prints the weights as a Python dict to paste into ``keyphrases.py`` and the F1@5 of the
refitted weights on COLM 2025 next to the shipped ones.

    python scripts/train_keyphrases.py [--C 1.0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from paperatlas.enrich.keyphrases import FEATURES, WEIGHTS, KeyphraseExtractor  # noqa: E402
from paperatlas.eval.keyphrase_eval import match_key, paper_text, prf  # noqa: E402
from paperatlas.sources import read  # noqa: E402

COLM = ROOT.parent / "shared" / "data" / "paperlists" / "colm"


def training_rows(papers) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)``: one row of :data:`FEATURES` per candidate concept of every paper, ``y`` = matches gold."""
    kx = KeyphraseExtractor().fit((p.title, paper_text(p)) for p in papers)
    xs, ys = [], []
    for p in papers:
        gold = {match_key(g) for g in p.given_keyphrases}
        _, phrases, x = kx.features(p.title, paper_text(p))
        xs.append(x)
        ys.extend(int(match_key(ph) in gold or match_key(kx.canonical(ph)) in gold) for ph in phrases)
    return np.vstack(xs), np.array(ys)


def f1_at_5(papers, weights: np.ndarray) -> float:
    """Macro F1@5 of the extractor with ``weights`` on ``papers`` (fitted on their own texts)."""
    kx = KeyphraseExtractor(weights=weights).fit((p.title, paper_text(p)) for p in papers)
    return float(np.mean([prf(kx.extract(p.title, paper_text(p)), p.given_keyphrases, 5)[2] for p in papers]))


def main(argv: list[str] | None = None) -> int:
    from sklearn.linear_model import LogisticRegression

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--C", type=float, default=1.0, help="inverse L2 strength of the logistic regression")
    args = ap.parse_args(argv)
    train = [p for p in read(COLM / "colm2024.json.gz") if p.given_keyphrases]
    held_out = [p for p in read(COLM / "colm2025.json.gz") if p.given_keyphrases]
    x, y = training_rows(train)
    lr = LogisticRegression(C=args.C, fit_intercept=False, max_iter=5000).fit(x, y)
    w = lr.coef_[0]
    print(f"training rows: {len(y)} candidates of {len(train)} papers, {y.sum()} positive")
    print("WEIGHT_BY_FEATURE = {")
    for name, v in zip(FEATURES, w, strict=True):
        print(f'    "{name}": {v:+.3f},')
    print("}")
    print(f"COLM 2025 (held out) F1@5: refitted {f1_at_5(held_out, w):.3f}, shipped {f1_at_5(held_out, WEIGHTS):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
