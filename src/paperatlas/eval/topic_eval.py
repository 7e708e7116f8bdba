"""``paperatlas eval topics``: our topic hierarchy vs BERTopic against gold classes, and 10-NN accuracy.

Clustering NMI/ARI of the topic areas and sub-topics, and 10-nearest-neighbour accuracy of the paper embeddings.

Gold sets (:mod:`paperatlas.eval.gold_sets`): ``awesome`` (seed 004's 8 named sections), ``aaai`` (AAAI 2022
primary areas), ``cvpr2019`` and ``iccv2019`` (presentation sessions; the default run's four), ``cvpr2017`` and
``iccv2017`` (sessions, on request), or any listing file (gold class = first awesome-list section, else
``primary_area``, else ``session``).

Every method gets the same papers and the same paper embeddings: all-MiniLM-L6-v2 of ``"title. text"``
(:func:`paperatlas.enrich.embed.paper_text`), computed once per gold set (:func:`embed_texts`, cached on disk by
text: :mod:`paperatlas.eval.embed_cache`).

**Clustering** (:mod:`paperatlas.eval.topic_filing`: our areas and sub-topics as a build files them, the level
nearest the gold class count, our areas with ``k = #gold``, BERTopic, plain k-means on MiniLM with ``k = #gold``
and ``k = #sub-topics``), scored by :func:`score_clustering`: scikit-learn's ``normalized_mutual_info_score``
(arithmetic-mean normalisation, the default), ``adjusted_rand_score`` and the misfiled share
(:func:`paperatlas.eval.filing.misfiled_share`, ``1 - purity``). Label–name agreement at the nearest level:
:mod:`paperatlas.eval.label_agreement`.

``BERTopic (default)`` (:func:`bertopic_labels`) is BERTopic (Grootendorst 2022, *BERTopic: Neural topic modeling
with a class-based TF-IDF procedure*, ``bertopic`` package) with its default pipeline, UMAP to 5-d + HDBSCAN
(``min_cluster_size=10``) + c-TF-IDF, run as ``BERTopic(embedding_model=None, umap_model=...).fit_transform(texts,
embeddings=E)``. The ``umap_model`` is BERTopic's own default UMAP configuration (``n_neighbors=15,
n_components=5, min_dist=0.0, metric="cosine", low_memory=False``) with ``random_state`` set so runs repeat.
HDBSCAN leaves outliers in topic ``-1``; they are *not* reassigned (no ``reduce_outliers``), are shown in the
``no topic`` column, are not counted in ``#topics``, count as one cluster of their own for NMI and ARI and as
misfiled for the misfiled share. A BERTopic failure (e.g. too few papers) is printed in its row instead of
stopping the run.

Every method runs with ``--seeds`` seeds (default 3: k-means, LSA and UMAP seeded ``seed``, ``seed+1``, ...); the
tables give the mean and the standard deviation over seeds, and the goal check compares means (one seed can favour
either side by a few NMI points). ``seconds`` is the wall time of the row's fit after the shared MiniLM embedding.

**10-NN accuracy** (:func:`knn_accuracy`), the protocol of the berenslab ICLR benchmark (González-Márquez &
Kobak 2024, *Learning representations of learning representations*, DMLR workshop at ICLR 2024) and of
González-Márquez, Schmidt, Schmidt, Berens & Kobak 2024 (*The landscape of biomedical research*, Patterns): how
often the majority class of a paper's 10 nearest neighbours (cosine similarity) is its gold class. Only papers
whose gold class has at least 10 papers take part, as queries and as neighbours; each paper is left out of its
own neighbour list (leave-one-out instead of the papers' held-out split). Ties in the vote go to the tied class
whose member is nearest to the paper. Representations: ``paperatlas topic embedding`` (MiniLM + LSA, what the
topics are fitted on), ``TF-IDF`` (:func:`paperatlas.topics.tfidf_vectorizer` with unigrams only, the plain
TF-IDF baseline, sparse) and ``MiniLM`` (the 384-d sentence embedding alone). The majority-class share of the
papers used is printed as the chance level.

The ``paperatlas eval topics`` command (:mod:`paperatlas.cli.eval`) prints what these functions return.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..sources.progress import ProgressFactory, progress_of
from ._common import EVAL_EXTRA, EvalUnavailable
from .filing import misfiled_share
from .gold_sets import EXCLUDED_SECTIONS as EXCLUDED_SECTIONS
from .gold_sets import GOLD_SETS as GOLD_SETS
from .gold_sets import load_gold as load_gold

#: k of the k-NN accuracy and the smallest gold class that takes part
KNN_K = 10
KNN_MIN_CLASS = 10
BERTOPIC_MISSING = f"BERTopic not installed: {EVAL_EXTRA}"


class BertopicUnavailable(RuntimeError):
    """The ``bertopic`` package is missing."""


# --------------------------------------------------------------------------------------------------- gold data
def sample(n: int, limit: int | None, seed: int = 42) -> np.ndarray:
    """Choose the papers a limited run uses.

    A plain head would hold a single class for lists sorted by section, so the sample is random (seeded).

    Args:
        n: Number of papers.
        limit: How many to use; ``None`` for all.
        seed: Seed of the sample.

    Returns:
        Sorted indices ``(min(n, limit),)``: all ``n`` without a limit (or when ``limit >= n``), else ``limit``
        of them drawn without replacement by ``numpy.random.default_rng(seed)``.
    """
    if limit is None or limit >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False))


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """Embed the texts of a gold set once for every method, with a progress bar on stderr (when it is a terminal).

    Vectors embedded before (same text, model and precision) come from the disk cache
    (:func:`paperatlas.eval.embed_cache.cached_encode`).

    Args:
        texts: From :func:`load_gold`.

    Returns:
        all-MiniLM-L6-v2 (sentence-transformers) embeddings ``(len(texts), 384)`` float32, L2-normalised.

    Raises:
        EvalUnavailable: The embedding model cannot be loaded.
    """
    from ..enrich import embed
    from .embed_cache import cached_encode, embedder_key

    def load():
        try:
            return embed.get_embedder()
        except embed.EmbedderUnavailable as e:
            raise EvalUnavailable(str(e)) from e

    precision = embed.resolve_precision("auto")
    key = embedder_key(embed.MiniLMEmbedder.name, precision if precision != "auto" else load().precision)
    with progress_of("embedding", len(texts), "paper") as update:
        return cached_encode(list(texts), key, load, progress=update)


# --------------------------------------------------------------------------------------------------- scores
def score_clustering(gold: Sequence, pred: Sequence) -> dict:
    """Measure the agreement of a predicted partition with the gold classes.

    NMI and ARI are scikit-learn's ``normalized_mutual_info_score`` (arithmetic-mean normalisation, the default)
    and ``adjusted_rand_score``.

    Args:
        gold: ``(n,)`` gold classes, any hashable type.
        pred: ``(n,)`` predicted clusters; ``-1`` marks BERTopic's outliers, which count as one cluster for
            NMI/ARI.

    Returns:
        ``n_topics`` (distinct predicted labels other than ``-1``), ``no_topic`` (share of ``-1``, in [0, 1]),
        ``nmi`` (in [0, 1]), ``ari`` (at most 1, about 0 for chance), ``misfiled``
        (:func:`paperatlas.eval.filing.misfiled_share`, in [0, 1]; ``-1`` papers count as misfiled) and
        ``largest`` (the largest topic's share of all papers, ``-1`` not a topic; issue 28's goal for areas:
        at most 15 %).

    Raises:
        ValueError: ``gold`` and ``pred`` differ in length.
    """
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    pred_list = list(pred)
    if len(pred_list) != len(gold):
        raise ValueError(f"{len(gold)} gold labels but {len(pred_list)} predictions")
    outlier = [p == -1 for p in pred_list]
    return {
        "n_topics": len({p for p, o in zip(pred_list, outlier, strict=True) if not o}),
        "no_topic": sum(outlier) / len(pred_list) if pred_list else 0.0,
        "nmi": float(normalized_mutual_info_score(list(gold), pred_list)),
        "ari": float(adjusted_rand_score(list(gold), pred_list)),
        "misfiled": misfiled_share(gold, pred_list),
        "largest": max(Counter(p for p in pred_list if p != -1).values(), default=0) / max(len(pred_list), 1),
    }


def knn_accuracy(x, labels: Sequence, k: int = KNN_K, min_class: int = KNN_MIN_CLASS) -> tuple[float, int, int]:
    """Measure how well a representation keeps gold classes together: leave-one-out k-NN accuracy.

    The protocol of the berenslab ICLR benchmark (González-Márquez & Kobak 2024): cosine similarity (scikit-learn's
    brute-force ``NearestNeighbors``). Only papers whose class has at least ``min_class`` members take part (as
    queries and as neighbours). Each paper's class is predicted by majority vote of its ``k`` nearest other
    papers; a tie goes to the tied class whose member is nearest.

    Args:
        x: ``(n, dim)`` representation, a dense array or a scipy sparse matrix.
        labels: ``(n,)`` gold classes.
        k: Neighbours that vote.
        min_class: Smallest class that takes part.

    Returns:
        ``(accuracy, papers used, classes used)``; accuracy in [0, 1], ``nan`` when fewer than 2 papers take part.
    """
    from sklearn.neighbors import NearestNeighbors

    y = np.asarray(list(labels), dtype=object)
    counts = Counter(y.tolist())
    keep = np.flatnonzero([counts[c] >= min_class for c in y.tolist()])
    n_classes = len({y[i] for i in keep})
    if len(keep) < 2:
        return float("nan"), len(keep), n_classes
    xs, ys = x[keep], y[keep]
    n_nb = min(k + 1, len(keep))
    nn = NearestNeighbors(n_neighbors=n_nb, metric="cosine", algorithm="brute").fit(xs)
    _, ind = nn.kneighbors(xs)
    correct = 0
    for i, row in enumerate(ind):
        others = [j for j in row.tolist() if j != i][: n_nb - 1]  # self removed (or the farthest, for duplicates)
        votes = ys[others].tolist()
        tally = Counter(votes)
        top = max(tally.values())
        pred = next(c for c in votes if tally[c] == top)
        correct += pred == ys[i]
    return correct / len(keep), len(keep), n_classes


# --------------------------------------------------------------------------------------------------- methods
def bertopic_labels(texts: Sequence[str], embeddings: np.ndarray, seed: int = 42) -> np.ndarray:
    """Cluster with BERTopic's default pipeline (Grootendorst 2022, ``bertopic`` package) on given embeddings.

    UMAP (BERTopic's own default configuration, seeded) to 5-d, HDBSCAN, c-TF-IDF; outliers are not reassigned.

    Args:
        texts: ``(n,)`` texts (for c-TF-IDF).
        embeddings: ``(n, dim)`` embeddings of ``texts``.
        seed: UMAP's ``random_state``.

    Returns:
        ``(n,)`` int topic per paper, ``-1`` for outliers.

    Raises:
        BertopicUnavailable: ``bertopic`` is not installed.
    """
    try:
        from bertopic import BERTopic
    except ImportError as e:
        raise BertopicUnavailable(BERTOPIC_MISSING) from e
    from umap import UMAP

    # BERTopic 0.17's own default UMAP, only seeded (a seeded UMAP runs single-threaded anyway: n_jobs=1 says so)
    umap_model = UMAP(n_neighbors=15, n_components=5, min_dist=0.0, metric="cosine", low_memory=False,
                      random_state=seed, n_jobs=1)
    topics, _ = BERTopic(embedding_model=None, umap_model=umap_model).fit_transform(list(texts),
                                                                                   embeddings=embeddings)
    return np.asarray(topics, dtype=int)


def bertopic_available() -> bool:
    """Tell whether BERTopic can run, without importing it (the import takes seconds).

    Returns:
        True when the ``bertopic`` package is installed.
    """
    from importlib.util import find_spec

    return find_spec("bertopic") is not None


def failure(e: Exception) -> str:
    """One line saying why a method failed: the exception's type and its message's first 100 characters."""
    msg = " ".join(str(e).split())
    return f"{type(e).__name__}: {msg[:100]}" if msg else type(e).__name__


def knn_rows(texts: Sequence[str], gold: Sequence[str], embeddings: np.ndarray, seed: int = 42) -> list[dict]:
    """Compute the 10-NN accuracy (:func:`knn_accuracy`) of three representations on one gold set with one seed.

    Representations: our topic embedding (:func:`paperatlas.enrich.topics.topic_embedding`, MiniLM + LSA),
    plain TF-IDF of unigrams (:func:`paperatlas.enrich.topics.tfidf_vectorizer`, sparse) and MiniLM alone.

    Args:
        texts: ``(n,)`` texts from :func:`load_gold`.
        gold: ``(n,)`` gold classes.
        embeddings: ``(n, 384)`` MiniLM embeddings of ``texts``.
        seed: Seed of the LSA.

    Returns:
        One dict per representation with ``method``, ``dim`` (dimensions), ``acc`` (in [0, 1]), ``n`` (papers
        used) and ``classes`` (classes used), or ``method`` and ``error``.
    """
    from ..enrich.topics import tfidf_vectorizer, topic_embedding

    def tfidf():
        return tfidf_vectorizer().set_params(ngram_range=(1, 1)).fit_transform(list(texts))

    reps = [("paperatlas topic embedding", lambda: topic_embedding(embeddings, texts, seed=seed)[0]),
            ("TF-IDF", tfidf), ("MiniLM", lambda: embeddings)]
    rows = []
    for name, make in reps:
        try:
            x = make()
        except ValueError as e:  # e.g. TF-IDF's empty vocabulary on a handful of papers
            rows.append({"method": name, "error": failure(e)})
            continue
        acc, used, classes = knn_accuracy(x, gold)
        rows.append({"method": name, "dim": int(x.shape[1]), "acc": acc, "n": used, "classes": classes})
    return rows


def aggregate(runs: list[list[dict]], sd_keys: Sequence[str] = ("nmi", "ari", "acc")) -> list[dict]:
    """Combine the rows of several seeded runs into one row per method.

    Args:
        runs: One list of rows per seed, the same methods in the same order.
        sd_keys: Numbers that also get a standard deviation.

    Returns:
        One row per method: ``method``, ``seeds`` (number of runs), the mean of every number and, for the
        ``sd_keys``, its population standard deviation as ``<key>_sd``. A method that failed in any run keeps
        its first error row instead.
    """
    out = []
    for rows in zip(*runs, strict=True):
        first = rows[0]
        errors = [r for r in rows if "error" in r]
        if errors:
            out.append(errors[0])
            continue
        agg = {"method": first["method"], "seeds": len(rows)}
        for k, v in first.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                vals = [float(r[k]) for r in rows]
                agg[k] = float(np.mean(vals))
                if k in sd_keys:
                    agg[f"{k}_sd"] = float(np.std(vals))
        out.append(agg)
    return out


def knn_class_sizes(gold: Sequence[str]) -> list[int]:
    """Size the gold classes ``(n,)`` that take part in the k-NN accuracy.

    Returns:
        The sizes of the classes with at least :data:`KNN_MIN_CLASS` papers, in order of first appearance
        (empty: no k-NN accuracy).
    """
    return [c for c in Counter(gold).values() if c >= KNN_MIN_CLASS]


def evaluate_knn(texts: Sequence[str], gold: Sequence[str], embeddings: np.ndarray,
                 seeds: Sequence[int], progress: ProgressFactory | None = None) -> list[dict]:
    """Compute the 10-NN accuracy of every representation on one gold set over several seeds.

    Args:
        texts: Title + abstract (or digest) per paper, as for :func:`knn_rows`.
        gold: Gold class per paper.
        embeddings: ``(n_papers, 384)`` float32 MiniLM embeddings, L2-normalised.
        seeds: One run of :func:`knn_rows` per seed.
        progress: Where the seeds done are counted (default a tqdm bar on stderr when it is a terminal:
            :func:`paperatlas.sources.progress.progress_of`).

    Returns:
        :func:`aggregate` of the runs: per representation the mean (and standard deviation of ``acc``) over seeds.
    """
    runs = []
    with progress_of("k-NN eval", len(seeds), "seed", progress) as update:
        for s in seeds:
            runs.append(knn_rows(texts, gold, embeddings, seed=s))
            update(1)
    return aggregate(runs)


# --------------------------------------------------------------------------------------------------- output
#: ``(row key, heading, format)`` of the clustering and the k-NN tables (:func:`format_table`)
CLUSTER_COLUMNS = [("method", "method", "{}"), ("n_topics", "#topics", "{:.0f}"),
                    ("no_topic", "no topic", "{:.1%}"), ("nmi", "NMI", "{:.3f}"), ("ari", "ARI", "{:.3f}"),
                    ("misfiled", "misfiled", "{:.1%}"), ("largest", "largest", "{:.1%}"),
                    ("seconds", "seconds", "{:.1f}")]
KNN_COLUMNS = [("method", "method", "{}"), ("dim", "dim", "{:.0f}"), ("acc", "10-NN acc", "{:.3f}")]


def format_table(rows: list[dict], columns: list[tuple[str, str, str]] = CLUSTER_COLUMNS) -> str:
    """Format rows as a plain-text table.

    Args:
        rows: Rows of :func:`clustering_rows`, :func:`knn_rows` or :func:`aggregate` (or any rows with a
            ``method``).
        columns: ``(row key, heading, format)`` per column: :data:`CLUSTER_COLUMNS`, :data:`KNN_COLUMNS` or the
            like.

    Returns:
        A header line, a dashed rule and one line per row, aligned (method left, numbers right); a value with a
        standard deviation over several seeds reads ``mean ± sd``, a missing one ``-``, a failed row
        ``failed: <reason>`` after its method. No final newline.
    """
    head = [h for _, h, _ in columns]
    def cell(r: dict, k: str, f: str) -> str:
        if r.get(k) is None:
            return "-"
        sd = r.get(f"{k}_sd")
        return f.format(r[k]) + (f" ± {f.format(sd)}" if sd is not None and r.get("seeds", 1) > 1 else "")

    body = [None if "error" in r else [cell(r, k, f) for k, _, f in columns] for r in rows]
    widths = [max(len(c[i]) for c in [head, *(b for b in body if b)]) for i in range(len(columns))]
    widths[0] = max([widths[0], *(len(r["method"]) for r in rows)])

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths,
                                                                                           strict=True)))

    lines = [fmt(head), "  ".join("-" * w for w in widths)]
    for r, b in zip(rows, body, strict=True):
        lines.append(fmt(b) if b else f"{r['method'].ljust(widths[0])}  failed: {r['error']}")
    return "\n".join(lines)


def _by_method(rows: list[dict]) -> dict[str, dict]:
    return {r["method"]: r for r in rows if "error" not in r}


def goal_checks(label: str, cluster: list[dict], knn: list[dict]) -> list[str]:
    """Check the goals on one gold set.

    Args:
        label: The gold set's name.
        cluster: Clustering rows (:func:`paperatlas.eval.topic_filing.evaluate_set`'s ``rows``).
        knn: k-NN rows (:func:`evaluate_knn`; empty when not computed).

    Returns:
        Three lines: whether our default areas' NMI is above BERTopic's; whether our level nearest the gold class
        count misfiles fewer papers than plain k-means on MiniLM with as many clusters as that level (``k = #areas``
        or ``k = #sub-topics``); and whether the topic embedding's 10-NN accuracy is above
        both TF-IDF's and MiniLM's; each with the numbers (or ``n/a`` and why).
    """
    c, k = _by_method(cluster), _by_method(knn)
    lines = []
    ours, bt = c.get("paperatlas areas"), c.get("BERTopic (default)")
    if ours and bt:
        verdict = "yes" if ours["nmi"] > bt["nmi"] else "no"
        over = f", mean of {ours['seeds']} seeds" if ours.get("seeds", 1) > 1 else ""
        lines.append(f"{label}: NMI above BERTopic: {verdict} ({ours['nmi']:.3f} vs {bt['nmi']:.3f}{over})")
    else:
        lines.append(f"{label}: NMI above BERTopic: n/a (no BERTopic score)")
    near = next((r for m, r in c.items() if m.startswith("paperatlas nearest level = ")), None)
    base = c.get("k-means MiniLM (k = #sub-topics)" if near and near["method"].endswith("sub-topics")
                 else "k-means MiniLM (k = #areas)")
    if near and base:
        verdict = "yes" if near["misfiled"] < base["misfiled"] else "no"
        lines.append(f"{label}: {near['method'][len('paperatlas '):]} misfiles fewer than {base['method']}: "
                     f"{verdict} ({near['misfiled']:.1%} vs {base['misfiled']:.1%})")
    te, tf, ml = (k.get(m) for m in ("paperatlas topic embedding", "TF-IDF", "MiniLM"))
    if te and tf and ml:
        verdict = "yes" if te["acc"] > tf["acc"] and te["acc"] > ml["acc"] else "no"
        lines.append(f"{label}: 10-NN beats TF-IDF and MiniLM: {verdict} "
                     f"({te['acc']:.3f} vs {tf['acc']:.3f} and {ml['acc']:.3f})")
    else:
        lines.append(f"{label}: 10-NN beats TF-IDF and MiniLM: n/a (not computed for every representation)")
    return lines
