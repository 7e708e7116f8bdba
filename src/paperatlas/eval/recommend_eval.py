"""``paperatlas eval recommend``: our recommendations vs arxiv-sanity-lite's SVM against gold classes.

Protocol: for each gold set (``awesome`` = seed 004's 8 named sections, ``aaai`` = AAAI 2022's 20 primary areas,
:func:`paperatlas.eval.topic_eval.load_gold`) and each class with at least :data:`MIN_CLASS` papers (smaller
classes cannot fill a top 10 after 5 liked papers are drawn), ``--draws`` seeded draws of ``--liked`` papers of
that class play the user's liked papers; every other paper of the set is ranked; a recommendation is relevant
when it is in the same class. Scores: precision@10 and nDCG@10 (binary relevance, log2 discount, ideal DCG over
``min(10, #relevant papers left)``), averaged over the draws of a class, then over classes (macro).

Rows (:func:`method_rows`): ``paperatlas`` (:class:`paperatlas.recommend.Recommender` on the paper representation,
MiniLM ⊕ LSA as the atlas stores it, + TF-IDF, mean affinity, the topics the build would fit, pseudo-relevance
feedback; its ``build s`` includes the representation's LSA and the topics' k-means),
``arxiv-sanity-lite (SVM)`` (:class:`paperatlas.recommend.SvmBaseline`) and two ablations with one signal and no
feedback round, ``MiniLM cosine`` (MiniLM alone, not the representation) and ``TF-IDF cosine``. Every row
gets the same papers and the same MiniLM embeddings (computed once per set, as in ``eval topics``); each method's
corpus-level model (TF-IDF matrices) is built once, as a server would; ``ms/request`` times the ranking only
(the SVM's training included), mean and 95th percentile over all requests of the set.

The ``paperatlas eval recommend`` command (:mod:`paperatlas.cli.eval`) prints what these functions return.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from ..sources.progress import ProgressFactory, progress_of
from . import topic_eval

#: k of P@k and nDCG@k
K = 10
#: smallest gold class that is drawn from
MIN_CLASS = 10


def precision_at_k(ranked: Sequence[int], relevant: set[int], k: int = K) -> float:
    """Compute precision@k of one ranking.

    Args:
        ranked: Recommended papers (row indices), best first.
        relevant: The relevant rows (same gold class, liked papers excluded).
        k: Cut-off.

    Returns:
        The share in [0, 1] of the first ``k`` of ``ranked`` in ``relevant``, divided by ``k`` even when fewer
        were ranked.
    """
    return sum(1 for r in list(ranked)[:k] if r in relevant) / k


def ndcg_at_k(ranked: Sequence[int], relevant: set[int], k: int = K) -> float:
    """Compute binary-relevance nDCG@k of one ranking (Järvelin & Kekäläinen 2002).

    DCG = ``Σ_{i ≤ k, ranked[i] relevant} 1 / log2(i + 1)`` (``i`` 1-based), divided by the ideal DCG of
    ``min(k, |relevant|)`` relevant papers on top.

    Args:
        ranked: Recommended papers (row indices), best first.
        relevant: The relevant rows.
        k: Cut-off.

    Returns:
        nDCG@k in [0, 1]; 0 when nothing is relevant.
    """
    dcg = sum(1.0 / np.log2(i + 2) for i, r in enumerate(list(ranked)[:k]) if r in relevant)
    ideal = sum(1.0 / np.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def draws(gold: Sequence[str], n_draws: int, n_liked: int, seed: int) -> list[tuple[str, list[int]]]:
    """Draw the liked papers of the simulated requests.

    Args:
        gold: ``(n,)`` gold class per paper.
        n_draws: Draws per class.
        n_liked: Liked papers per draw, all from one class, without replacement.
        seed: Seed of ``numpy.random.default_rng``.

    Returns:
        ``(class, sorted liked rows)`` per request: ``n_draws`` for every class with at least
        ``max(MIN_CLASS, n_liked + 1)`` papers, classes in sorted order.
    """
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


#: How many recommenders :func:`method_rows` scores (the progress bar's requests per request drawn).
N_METHODS = 4


def method_rows(texts: Sequence[str], gold: Sequence[str], emb: np.ndarray,
                requests: list[tuple[str, list[int]]], update: Callable[[int], None] | None = None) -> list[dict]:
    """Score every recommender on one set of requests.

    Methods: ``paperatlas`` (:class:`paperatlas.recommend.Recommender`), ``arxiv-sanity-lite (SVM)``
    (:class:`paperatlas.recommend.SvmBaseline`, after Karpathy's arxiv-sanity-lite: a linear SVM on TF-IDF trained
    per request with the liked papers as positives), and our ``MiniLM cosine`` and ``TF-IDF cosine`` ablations.

    Args:
        texts: ``(n,)`` texts from :func:`paperatlas.eval.topic_eval.load_gold`.
        gold: ``(n,)`` gold classes.
        emb: ``(n, 384)`` MiniLM embeddings of ``texts``.
        requests: ``(class, liked rows)`` from :func:`draws`.
        update: Called with 1 after each request of each method (a progress bar), outside the timed ranking.

    Returns:
        One dict per method, in order: ``method``, ``p10`` and ``ndcg10`` (:func:`precision_at_k`,
        :func:`ndcg_at_k` at :data:`K`, mean over a class's draws, then over classes), ``ms_mean`` and ``ms_p95``
        (milliseconds per request, ranking only), ``build_s`` (seconds to build its corpus-level model) and
        ``ms`` (every request's milliseconds).
    """
    from ..recommend import Recommender, SvmBaseline

    def timed(make):
        t0 = time.perf_counter()
        obj = make()
        return obj, time.perf_counter() - t0

    from ..enrich.topics import fit_hierarchy, topic_embedding

    def make_ours() -> Recommender:
        # the paper representation the atlas stores (MiniLM ⊕ LSA) and the topics the build fits on it
        x = topic_embedding(emb, texts)[0]
        h = fit_hierarchy(x)
        leaf = np.asarray(h.leaf, dtype=np.int64)
        return Recommender(texts, x, topics=leaf, areas=np.asarray(h.parent, dtype=np.int64)[leaf])

    ours, ours_s = timed(make_ours)
    minilm = Recommender(texts, emb, tfidf=(ours.tfidf, ours.terms))
    svm, svm_s = timed(lambda: SvmBaseline(texts))
    methods: list[tuple[str, Callable[[list[int]], Sequence[int]], float]] = [
        ("paperatlas", lambda liked: ours.rank(liked, k=K)[0], ours_s),
        ("arxiv-sanity-lite (SVM)", lambda liked: svm.rank(liked, k=K)[0], svm_s),
        ("MiniLM cosine", lambda liked: minilm.rank(liked, k=K, signals="dense")[0], ours_s),
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
            if update is not None:
                update(1)
        p10 = float(np.mean([np.mean([s[0] for s in v]) for v in per_class.values()]))
        nd = float(np.mean([np.mean([s[1] for s in v]) for v in per_class.values()]))
        out.append({"method": name, "p10": p10, "ndcg10": nd, "ms_mean": float(np.mean(ms)),
                    "ms_p95": float(np.percentile(ms, 95)), "build_s": build_s, "ms": ms})
    return out


#: ``(row key, heading, format)`` of the table (:func:`format_table`)
COLUMNS = [("method", "method", "{}"), ("p10", "P@10", "{:.3f}"), ("ndcg10", "nDCG@10", "{:.3f}"),
            ("ms_mean", "ms/request", "{:.1f}"), ("ms_p95", "p95 ms", "{:.1f}"), ("build_s", "build s", "{:.2f}")]


def evaluate_set(texts: Sequence[str], gold: Sequence[str], emb: np.ndarray,
                 runs: Sequence[list[tuple[str, list[int]]]],
                 progress: ProgressFactory | None = None) -> tuple[list[dict], list[list[dict]]]:
    """Score every recommender on one gold set over several seeded sets of requests.

    Args:
        texts: ``(n,)`` texts from :func:`paperatlas.eval.topic_eval.load_gold`.
        gold: ``(n,)`` gold classes.
        emb: ``(n, 384)`` MiniLM embeddings of ``texts``.
        runs: One :func:`draws` per seed.
        progress: Where the requests answered are counted (every method's, over every run; default a tqdm bar on
            stderr when it is a terminal: :func:`paperatlas.sources.progress.progress_of`).

    Returns:
        ``(rows, per_seed)``: ``per_seed`` holds :func:`method_rows` of each run; ``rows`` one row per method
        with the mean over runs (and ``p10_sd``, ``ndcg10_sd``: standard deviations, see
        :func:`paperatlas.eval.topic_eval.aggregate`), ``ms_mean`` and ``ms_p95`` over every request of every run.
    """
    total = N_METHODS * sum(len(reqs) for reqs in runs)
    with progress_of("recommend eval", total, "request", progress) as update:
        per_seed = [method_rows(texts, gold, emb, reqs, update) for reqs in runs]
    rows = topic_eval.aggregate(per_seed, sd_keys=("p10", "ndcg10"))
    for row, *same in zip(rows, *per_seed, strict=True):  # latency over every request of every seed
        ms = [m for r in same for m in r["ms"]]
        row["ms_mean"], row["ms_p95"] = float(np.mean(ms)), float(np.percentile(ms, 95))
    return rows, per_seed


def format_table(rows: list[dict]) -> str:
    """Format :func:`evaluate_set` rows as a plain-text table.

    Args:
        rows: Rows of :func:`evaluate_set`.

    Returns:
        The :data:`COLUMNS` table of :func:`paperatlas.eval.topic_eval.format_table` (P@10 and nDCG@10 as
        ``mean ± sd`` over several seeds).
    """
    return topic_eval.format_table(rows, COLUMNS)


def goal_check(label: str, rows: list[dict], per_seed: list[list[dict]]) -> str:
    """Check the goal on one gold set: our P@10 above arxiv-sanity-lite's.

    Args:
        label: The gold set's name.
        rows: ``rows`` of :func:`evaluate_set`.
        per_seed: ``per_seed`` of :func:`evaluate_set`.

    Returns:
        One line: yes or no on the means, both means, and in how many seeds ours was above.
    """
    n_seeds = len(per_seed)
    by = {r["method"]: r for r in rows}
    ours, base = by["paperatlas"], by["arxiv-sanity-lite (SVM)"]
    wins = sum(a["p10"] > b["p10"] for a, b in
               ((next(r for r in run if r["method"] == "paperatlas"),
                 next(r for r in run if r["method"] == "arxiv-sanity-lite (SVM)")) for run in per_seed))
    ratio = ours["p10"] / base["p10"] if base["p10"] else float("inf")
    return (f"{label}: P@10 above arxiv-sanity-lite: {'yes' if ours['p10'] > base['p10'] else 'no'} "
            f"({ours['p10']:.3f} vs {base['p10']:.3f}{', mean' if n_seeds > 1 else ''}; {ratio:.3f}x, goal 1.10x: "
            f"{'yes' if ratio >= 1.10 else 'no'}; above in {wins} of {n_seeds} seeds)")
