"""``paperatlas eval recommend``: our recommendations vs arxiv-sanity-lite's SVM against gold classes.

Protocol: for each gold set (``awesome`` = seed 004's 8 named sections, ``aaai`` = AAAI 2022's 20 primary areas,
:func:`paperatlas.eval.topic_eval.load_gold`) and each class with at least :data:`MIN_CLASS` papers (smaller
classes cannot fill a top 10 after 5 liked papers are drawn), ``--draws`` seeded draws of ``--liked`` papers of
that class play the user's liked papers; every other paper of the set is ranked; a recommendation is relevant
when it is in the same class. Scores: precision@10 and nDCG@10 (binary relevance, log2 discount, ideal DCG over
``min(10, #relevant papers left)``), averaged over the draws of a class, then over classes (macro).

Rows (:func:`method_rows`): ``paperatlas`` (:class:`paperatlas.recommend.Recommender`: MiniLM + TF-IDF, max/mean
affinity, pseudo-relevance feedback), ``arxiv-sanity-lite (SVM)`` (:class:`paperatlas.recommend.SvmBaseline`) and
two ablations of ours with one signal and no feedback round, ``MiniLM cosine`` and ``TF-IDF cosine``. Every row
gets the same papers and the same MiniLM embeddings (computed once per set, as in ``eval topics``); each method's
corpus-level model (TF-IDF matrices) is built once, as a server would; ``ms/request`` times the ranking only
(the SVM's training included), mean and 95th percentile over all requests of the set.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

import click
import numpy as np

#: k of P@k and nDCG@k
K = 10
#: smallest gold class that is drawn from
MIN_CLASS = 10


def precision_at_k(ranked: Sequence[int], relevant: set[int], k: int = K) -> float:
    """Share of the first ``k`` of ``ranked`` that are in ``relevant`` (divided by ``k`` even when fewer)."""
    return sum(1 for r in list(ranked)[:k] if r in relevant) / k


def ndcg_at_k(ranked: Sequence[int], relevant: set[int], k: int = K) -> float:
    """Binary-relevance nDCG@k: ``Σ_{i ≤ k, ranked[i] relevant} 1 / log2(i + 1)`` (i 1-based) over the ideal DCG
    of ``min(k, |relevant|)`` relevant papers on top; 0 when nothing is relevant."""
    dcg = sum(1.0 / np.log2(i + 2) for i, r in enumerate(list(ranked)[:k]) if r in relevant)
    ideal = sum(1.0 / np.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def draws(gold: Sequence[str], n_draws: int, n_liked: int, seed: int) -> list[tuple[str, list[int]]]:
    """``(class, liked rows)`` for ``n_draws`` seeded draws of ``n_liked`` papers from every class with at least
    ``max(MIN_CLASS, n_liked + 1)`` papers (classes in sorted order)."""
    rows: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(gold):
        rows[g].append(i)
    rng = np.random.default_rng(seed)
    out = []
    for c in sorted(rows):
        if len(rows[c]) < max(MIN_CLASS, n_liked + 1):
            continue
        for _ in range(n_draws):
            out.append((c, sorted(rng.choice(rows[c], size=n_liked, replace=False).tolist())))
    return out


def method_rows(texts: Sequence[str], gold: Sequence[str], emb: np.ndarray,
                requests: list[tuple[str, list[int]]]) -> list[dict]:
    """Score every method on ``requests``: one dict per method with ``method``, ``p10``, ``ndcg10`` (macro over
    classes), ``ms_mean``, ``ms_p95`` (milliseconds per request), ``build_s`` (seconds to build its corpus-level
    model) and ``ms`` (every request's milliseconds)."""
    from ..recommend import Recommender, SvmBaseline

    def timed(make):
        t0 = time.perf_counter()
        obj = make()
        return obj, time.perf_counter() - t0

    ours, ours_s = timed(lambda: Recommender(texts, emb))
    svm, svm_s = timed(lambda: SvmBaseline(texts))
    methods: list[tuple[str, Callable[[list[int]], Sequence[int]], float]] = [
        ("paperatlas", lambda liked: ours.rank(liked, k=K)[0], ours_s),
        ("arxiv-sanity-lite (SVM)", lambda liked: svm.rank(liked, k=K)[0], svm_s),
        ("MiniLM cosine", lambda liked: ours.rank(liked, k=K, signals="dense")[0], ours_s),
        ("TF-IDF cosine", lambda liked: ours.rank(liked, k=K, signals="lexical")[0], ours_s),
    ]
    members: dict[str, set[int]] = defaultdict(set)
    for i, g in enumerate(gold):
        members[g].add(i)
    out = []
    for name, run, build_s in methods:
        per_class: dict[str, list[tuple[float, float]]] = defaultdict(list)
        ms = []
        for c, liked in requests:
            t0 = time.perf_counter()
            ranked = list(run(liked))
            ms.append(1000 * (time.perf_counter() - t0))
            rel = members[c] - set(liked)
            per_class[c].append((precision_at_k(ranked, rel), ndcg_at_k(ranked, rel)))
        p10 = float(np.mean([np.mean([s[0] for s in v]) for v in per_class.values()]))
        nd = float(np.mean([np.mean([s[1] for s in v]) for v in per_class.values()]))
        out.append({"method": name, "p10": p10, "ndcg10": nd, "ms_mean": float(np.mean(ms)),
                    "ms_p95": float(np.percentile(ms, 95)), "build_s": build_s, "ms": ms})
    return out


_COLUMNS = [("method", "method", "{}"), ("p10", "P@10", "{:.3f}"), ("ndcg10", "nDCG@10", "{:.3f}"),
            ("ms_mean", "ms/request", "{:.1f}"), ("ms_p95", "p95 ms", "{:.1f}"), ("build_s", "build s", "{:.2f}")]


@click.command(name="recommend")
@click.option("--gold", "golds", multiple=True, default=("awesome", "aaai"), show_default=True,
              help="Gold set: awesome (seed 004 sections without Others), aaai (AAAI 2022 primary areas), or a "
                   "listing FILE (repeatable).")
@click.option("--draws", "n_draws", type=click.IntRange(min=1), default=5, show_default=True,
              help="Draws of liked papers per class.")
@click.option("--liked", "n_liked", type=click.IntRange(min=1), default=5, show_default=True,
              help="Liked papers per draw (all from one class).")
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of the first set of draws.")
@click.option("--seeds", "n_seeds", type=click.IntRange(min=1), default=3, show_default=True,
              help="Sets of draws (seeds seed, seed+1, ...): P@10 and nDCG@10 as mean ± standard deviation over "
                   "them, latency over all their requests.")
def recommend_command(golds: tuple[str, ...], n_draws: int, n_liked: int, seed: int, n_seeds: int) -> None:
    """P@10 and nDCG@10 of recommendations from liked papers of one gold class, ours vs arxiv-sanity-lite's SVM
    (and MiniLM-only, TF-IDF-only ablations), with ms per request.

    \b
    paperatlas eval recommend                  # both gold sets (~2 min on 2 cores, mostly embedding)
    paperatlas eval recommend --gold awesome --draws 2 --seeds 1
    """
    from .topic_eval import format_table, load_gold

    sets = [load_gold(g) for g in golds]
    goals = []
    for i, (label, texts, gold) in enumerate(sets):
        if i:
            click.echo()
        runs = [draws(gold, n_draws, n_liked, seed + j) for j in range(n_seeds)]
        requests = runs[0]
        used = sorted({c for c, _ in requests})
        sizes = Counter(gold)
        seeds = f" x {n_seeds} seeds ({seed}-{seed + n_seeds - 1})" if n_seeds > 1 else ""
        click.echo(f"== {label}: {len(texts)} papers, {len(sizes)} classes; {len(used)} classes with >= "
                   f"{max(MIN_CLASS, n_liked + 1)} papers drawn from, {n_draws} draws x {n_liked} liked papers "
                   f"each = {len(requests)} requests{seeds} ==")
        if not requests:
            click.echo("(no class is large enough)")
            continue
        from .topic_eval import aggregate, embed_texts

        emb = embed_texts(texts)
        per_seed = [method_rows(texts, gold, emb, reqs) for reqs in runs]
        rows = aggregate(per_seed, sd_keys=("p10", "ndcg10"))
        for row, *same in zip(rows, *per_seed, strict=True):  # latency over every request of every seed
            ms = [m for r in same for m in r["ms"]]
            row["ms_mean"], row["ms_p95"] = float(np.mean(ms)), float(np.percentile(ms, 95))
        over = f"; mean ± sd over {n_seeds} seeds" if n_seeds > 1 else ""
        click.echo(f"Same-class papers in the top {K} of all other papers (macro over classes{over}); "
                   "ms = ranking only")
        click.echo(format_table(rows, _COLUMNS))
        by = {r["method"]: r for r in rows}
        ours, base = by["paperatlas"], by["arxiv-sanity-lite (SVM)"]
        wins = sum(a["p10"] > b["p10"] for a, b in
                   ((next(r for r in run if r["method"] == "paperatlas"),
                     next(r for r in run if r["method"] == "arxiv-sanity-lite (SVM)")) for run in per_seed))
        goals.append(f"{label}: P@10 above arxiv-sanity-lite: {'yes' if ours['p10'] > base['p10'] else 'no'} "
                     f"({ours['p10']:.3f} vs {base['p10']:.3f}{', mean' if n_seeds > 1 else ''}; "
                     f"above in {wins} of {n_seeds} seeds)")
    if goals:
        click.echo()
        click.echo("Goal check")
        for line in goals:
            click.echo(f"  {line}")
