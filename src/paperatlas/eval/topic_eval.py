"""``paperatlas eval topics``: our topic hierarchy vs BERTopic against gold classes, plus 10-NN accuracy of the
paper embeddings.

Gold sets:

* ``awesome`` - seed 004 (Awesome Deep Phenomena, ``../shared/seeds/004_67aa5497667b379c.txt``): the papers filed
  first under one of the 8 named phenomena sections (``Others`` is left out: 329 of 542 papers); gold class = that
  section; those entries have no abstract, so text = title + the curator's digest;
* ``aaai`` - AAAI 2022 (``../shared/data/paperlists/aaai/aaai2022.json.gz``, 1,319 papers): gold class = the
  paper's ``primary_area`` (20 tracks; note that three of them are ``Computer Vision I/II/III`` and three
  ``Machine Learning I/II/III``, splits no text-based method can recover); text = title + abstract;
* any listing file :func:`paperatlas.sources.read` understands: awesome lists are labelled by first section (without
  ``Others``), paperlists JSON by ``primary_area``; papers without a label are dropped.

Every method gets the same papers and the same paper embeddings: all-MiniLM-L6-v2 of ``"title. text"``
(:func:`paperatlas.embed.paper_text`), computed once per gold set and kept in memory for the run.

**Clustering** (:func:`clustering_rows`), scored by :func:`score_clustering` with scikit-learn's
``normalized_mutual_info_score`` (arithmetic-mean normalisation, the default) and ``adjusted_rand_score``:

* ``paperatlas areas`` - :func:`paperatlas.topics.fit_hierarchy` on :func:`paperatlas.topics.topic_embedding`
  with the default number of areas (what a user gets); label = area;
* ``paperatlas areas (k = #gold)`` - the same with ``n_areas`` = the number of gold classes (``n_topics`` = the
  default, at least that): the effect of granularity;
* ``paperatlas sub-topics`` - the sub-topics (leaves) of the default fit (same fit, same seconds as the areas);
* ``BERTopic (default)`` - BERTopic (Grootendorst 2022, *BERTopic: Neural topic modeling with a class-based TF-IDF
  procedure*, ``bertopic`` package) with its default pipeline, UMAP to 5-d + HDBSCAN (``min_cluster_size=10``) +
  c-TF-IDF, run as ``BERTopic(embedding_model=None, umap_model=...).fit_transform(texts, embeddings=E)``. The
  ``umap_model`` is BERTopic's own default UMAP configuration (``n_neighbors=15, n_components=5, min_dist=0.0,
  metric="cosine", low_memory=False``) with ``random_state`` set so runs repeat. HDBSCAN leaves outliers in topic
  ``-1``; they are *not* reassigned (no ``reduce_outliers``), are shown in the ``no topic`` column, are not counted
  in ``#topics`` and count as one cluster of their own for NMI and ARI. A BERTopic failure (e.g. too few papers)
  is printed in its row instead of stopping the run.

Every method runs with ``--seeds`` seeds (default 3: k-means, LSA and BERTopic's UMAP seeded ``seed``, ``seed+1``,
...); the tables give the mean and the standard deviation over seeds, and the goal check compares means (one seed
can favour either side by a few NMI points).

``seconds`` is the wall time of the row's fit after the shared MiniLM embedding (ours: TF-IDF + LSA + k-means;
BERTopic: UMAP + HDBSCAN + c-TF-IDF).

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
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import click
import numpy as np

from ..model import SourceError
from .keyphrase_eval import EVAL_EXTRA, resolve_shared

GOLD_SETS = {
    "awesome": "seeds/004_67aa5497667b379c.txt",
    "aaai": "data/paperlists/aaai/aaai2022.json.gz",
}
_GOLD_LABELS = {
    "awesome": "seed 004 (Awesome Deep Phenomena) sections",
    "aaai": "AAAI 2022 primary areas",
}
#: awesome-list sections that are not a topic (left out of the gold set)
EXCLUDED_SECTIONS = frozenset({"Others"})
#: k of the k-NN accuracy and the smallest gold class that takes part
KNN_K = 10
KNN_MIN_CLASS = 10
BERTOPIC_MISSING = f"BERTopic not installed: {EVAL_EXTRA}"


class BertopicUnavailable(RuntimeError):
    """The ``bertopic`` package is missing."""


# --------------------------------------------------------------------------------------------------- gold data
def load_gold(name: str) -> tuple[str, list[str], list[str]]:
    """``(label, texts, gold classes)`` for a gold set name (``awesome``, ``aaai``) or a listing file path.

    ``texts[i]`` is ``paper_text(title, abstract or digest)`` of paper ``i``, ``gold[i]`` its class (first section
    of an awesome list without ``Others``; ``primary_area`` of paperlists JSON). Papers without a class are
    dropped. Raises :class:`click.ClickException` naming the path when the file is missing or unreadable.
    """
    from ..enrich.embed import paper_text
    from ..sources import read

    path = resolve_shared(GOLD_SETS[name]) if name in GOLD_SETS else Path(name)
    if not path.is_file():
        raise click.ClickException(f"gold file not found: {path}")
    try:
        papers = read(path)
    except SourceError as e:
        raise click.ClickException(f"cannot read gold file {path}: {e}") from e
    texts: list[str] = []
    gold: list[str] = []
    for p in papers:
        if p.sections:
            label = p.sections[0] if p.sections[0] not in EXCLUDED_SECTIONS else ""
        else:
            label = str((p.extra or {}).get("primary_area") or "")
        if label:
            texts.append(paper_text(p.title, p.abstract or p.digest or ""))
            gold.append(label)
    return _GOLD_LABELS.get(name, str(path)), texts, gold


def sample(n: int, limit: int | None, seed: int = 42) -> np.ndarray:
    """Indices of the papers a ``--limit`` run uses: all ``n`` without a limit, else a seeded random sample of
    ``limit`` of them in file order (a plain head would hold a single class for lists sorted by section)."""
    if limit is None or limit >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False))


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """all-MiniLM-L6-v2 embeddings ``(len(texts), 384)`` float32, L2-normalised, with a progress bar on stderr."""
    from tqdm import tqdm

    from ..enrich.embed import EmbedderUnavailable, get_embedder

    try:
        embedder = get_embedder()
    except EmbedderUnavailable as e:
        raise click.ClickException(str(e)) from e
    with tqdm(total=len(texts), desc="embedding", unit="paper", file=sys.stderr, dynamic_ncols=True,
              leave=False) as bar:
        return embedder.encode(list(texts), progress=bar.update)


# --------------------------------------------------------------------------------------------------- scores
def score_clustering(gold: Sequence, pred: Sequence) -> dict:
    """Agreement of a predicted partition with the gold classes.

    ``gold`` and ``pred`` are ``(n,)`` labels of any hashable type; ``pred == -1`` marks BERTopic's outliers,
    which count as one cluster for NMI/ARI. Returns ``n_topics`` (distinct predicted labels other than ``-1``),
    ``no_topic`` (share of ``-1``, in [0, 1]), ``nmi`` (arithmetic-mean normalisation) and ``ari``.
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
    }


def knn_accuracy(x, labels: Sequence, k: int = KNN_K, min_class: int = KNN_MIN_CLASS) -> tuple[float, int, int]:
    """Leave-one-out k-NN accuracy of ``x`` ``(n, dim)`` (dense array or scipy sparse matrix) with cosine
    similarity against ``labels`` ``(n,)``.

    Only papers whose class has at least ``min_class`` members take part (as queries and as neighbours). Each
    paper's class is predicted by majority vote of its ``k`` nearest other papers; a tie goes to the tied class
    whose member is nearest. Returns ``(accuracy in [0, 1] (nan when fewer than 2 papers take part), papers
    used, classes used)``.
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
    """BERTopic's default pipeline on precomputed ``embeddings`` ``(n, dim)``: topic per paper ``(n,)`` int,
    ``-1`` for outliers. Raises :class:`BertopicUnavailable` when ``bertopic`` is not installed."""
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
    """True when the ``bertopic`` package is installed (found without importing it: the import takes seconds)."""
    from importlib.util import find_spec

    return find_spec("bertopic") is not None


def _failure(e: Exception) -> str:
    msg = " ".join(str(e).split())
    return f"{type(e).__name__}: {msg[:100]}" if msg else type(e).__name__


def clustering_rows(texts: Sequence[str], gold: Sequence[str], embeddings: np.ndarray, seed: int = 42,
                    with_bertopic: bool = True) -> list[dict]:
    """Score our areas (default and ``k = #gold``), sub-topics and BERTopic on one gold set.

    ``embeddings`` ``(n, 384)`` MiniLM of ``texts``. One dict per method, in order: ``method`` and either the
    :func:`score_clustering` keys plus ``seconds`` or ``error`` (the reason the method failed).
    """
    from ..enrich.topics import default_n_topics, fit_hierarchy, topic_embedding

    n, n_gold = len(texts), len(set(gold))
    rows: list[dict] = []

    def ours(n_areas: int | None, n_topics: int | None):
        t0 = time.perf_counter()
        x, _ = topic_embedding(embeddings, texts, seed=seed)
        h = fit_hierarchy(x, n_areas=n_areas, n_topics=n_topics, seed=seed)
        return h, time.perf_counter() - t0

    h, secs = ours(None, None)
    rows.append({"method": "paperatlas areas", **score_clustering(gold, h.area), "seconds": secs})
    hk, secs_k = ours(n_gold, max(default_n_topics(n), n_gold))
    rows.append({"method": "paperatlas areas (k = #gold)", **score_clustering(gold, hk.area), "seconds": secs_k})
    rows.append({"method": "paperatlas sub-topics", **score_clustering(gold, h.leaf), "seconds": secs})
    if with_bertopic:
        t0 = time.perf_counter()
        try:
            pred = bertopic_labels(texts, embeddings, seed=seed)
        except Exception as e:  # BERTopic/UMAP/HDBSCAN fail in many ways on tiny data: report, don't crash
            rows.append({"method": "BERTopic (default)", "error": _failure(e)})
        else:
            rows.append({"method": "BERTopic (default)", **score_clustering(gold, pred),
                         "seconds": time.perf_counter() - t0})
    return rows


def knn_rows(texts: Sequence[str], gold: Sequence[str], embeddings: np.ndarray, seed: int = 42) -> list[dict]:
    """10-NN accuracy of our topic embedding, plain TF-IDF (unigrams) and MiniLM on one gold set: one dict per
    representation with ``method``, ``dim``, ``acc``, ``n``, ``classes`` (or ``error``)."""
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
            rows.append({"method": name, "error": _failure(e)})
            continue
        acc, used, classes = knn_accuracy(x, gold)
        rows.append({"method": name, "dim": int(x.shape[1]), "acc": acc, "n": used, "classes": classes})
    return rows


def aggregate(runs: list[list[dict]], sd_keys: Sequence[str] = ("nmi", "ari", "acc")) -> list[dict]:
    """Combine the rows of several seeded runs (same methods in the same order) into one row per method: the
    mean of every number and, for the ``sd_keys``, also its standard deviation (``nmi_sd``, ...) and
    ``seeds``. A method that failed in any run keeps its first error."""
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


# --------------------------------------------------------------------------------------------------- output
_CLUSTER_COLUMNS = [("method", "method", "{}"), ("n_topics", "#topics", "{:.0f}"),
                    ("no_topic", "no topic", "{:.1%}"), ("nmi", "NMI", "{:.3f}"), ("ari", "ARI", "{:.3f}"),
                    ("seconds", "seconds", "{:.1f}")]
_KNN_COLUMNS = [("method", "method", "{}"), ("dim", "dim", "{:.0f}"), ("acc", "10-NN acc", "{:.3f}")]


def format_table(rows: list[dict], columns: list[tuple[str, str, str]] = _CLUSTER_COLUMNS) -> str:
    """Plain-text table with aligned columns (method left-aligned, numbers right-aligned); a failed row shows
    ``failed: <reason>`` after its method."""
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
    """The two goal lines for one gold set: our default areas' NMI above BERTopic's, and the topic embedding's
    10-NN accuracy above both TF-IDF's and MiniLM's."""
    c, k = _by_method(cluster), _by_method(knn)
    lines = []
    ours, bt = c.get("paperatlas areas"), c.get("BERTopic (default)")
    if ours and bt:
        verdict = "yes" if ours["nmi"] > bt["nmi"] else "no"
        over = f", mean of {ours['seeds']} seeds" if ours.get("seeds", 1) > 1 else ""
        lines.append(f"{label}: NMI above BERTopic: {verdict} ({ours['nmi']:.3f} vs {bt['nmi']:.3f}{over})")
    else:
        lines.append(f"{label}: NMI above BERTopic: n/a (no BERTopic score)")
    te, tf, ml = (k.get(m) for m in ("paperatlas topic embedding", "TF-IDF", "MiniLM"))
    if te and tf and ml:
        verdict = "yes" if te["acc"] > tf["acc"] and te["acc"] > ml["acc"] else "no"
        lines.append(f"{label}: 10-NN beats TF-IDF and MiniLM: {verdict} "
                     f"({te['acc']:.3f} vs {tf['acc']:.3f} and {ml['acc']:.3f})")
    else:
        lines.append(f"{label}: 10-NN beats TF-IDF and MiniLM: n/a (not computed for every representation)")
    return lines


@click.command(name="topics")
@click.option("--gold", "golds", multiple=True, default=tuple(GOLD_SETS), show_default=True,
              help="Gold set: awesome (seed 004 sections without Others), aaai (AAAI 2022 primary areas), or a "
                   "listing FILE (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Use a seeded random sample of N papers of each set (quick runs).")
@click.option("--seed", type=int, default=42, show_default=True, help="First seed of k-means, LSA, UMAP; seed of "
              "--limit.")
@click.option("--seeds", "n_seeds", type=click.IntRange(min=1), default=3, show_default=True,
              help="Run every method with this many seeds (seed, seed+1, ...) and report mean ± standard deviation.")
def topics_command(golds: tuple[str, ...], limit: int | None, seed: int, n_seeds: int) -> None:
    """NMI/ARI of our topic areas and sub-topics vs BERTopic against gold classes, and 10-NN accuracy of our
    topic embedding vs TF-IDF and MiniLM, on the same papers and MiniLM embeddings.

    \b
    paperatlas eval topics                          # both gold sets (~3-5 min on 2 cores)
    paperatlas eval topics --gold awesome --limit 80
    """
    with_bertopic = bertopic_available()
    if not with_bertopic:
        click.echo(BERTOPIC_MISSING)
    sets = [load_gold(g) for g in golds]  # every file checked before the slow parts
    goals: list[str] = []
    for i, (label, texts, gold) in enumerate(sets):
        idx = sample(len(texts), limit, seed)
        texts, gold = [texts[j] for j in idx], [gold[j] for j in idx]
        if i:
            click.echo()
        click.echo(f"== {label}: {len(texts)} papers, {len(set(gold))} classes ==")
        if len(texts) < 2:
            click.echo("(too few papers with a gold class)")
            continue
        t0 = time.perf_counter()
        emb = embed_texts(texts)
        embed_s = time.perf_counter() - t0
        click.echo(f"MiniLM embedding (once, shared by every row, not in seconds): {embed_s:.1f} s, "
                   f"{len(texts) / embed_s:.1f} papers/s")
        seeds = list(range(seed, seed + n_seeds))
        cluster = aggregate([clustering_rows(texts, gold, emb, seed=s, with_bertopic=with_bertopic) for s in seeds])
        click.echo()
        click.echo("Clustering vs gold classes (NMI arithmetic mean; BERTopic's outliers -1 count as one cluster)"
                   + (f"; mean ± sd over seeds {seeds[0]}-{seeds[-1]}" if n_seeds > 1 else ""))
        click.echo(format_table(cluster, _CLUSTER_COLUMNS))
        click.echo()
        sizes = [c for c in Counter(gold).values() if c >= KNN_MIN_CLASS]
        if not sizes:
            click.echo(f"{KNN_K}-NN accuracy: not computed (no gold class has >= {KNN_MIN_CLASS} papers)")
            knn: list[dict] = []
        else:
            knn = aggregate([knn_rows(texts, gold, emb, seed=s) for s in seeds])
            click.echo(f"{KNN_K}-NN accuracy (cosine, leave-one-out, majority vote; classes with >= "
                       f"{KNN_MIN_CLASS} papers: {sum(sizes)} papers, {len(sizes)} classes; majority class "
                       f"{max(sizes) / sum(sizes):.1%})")
            click.echo(format_table(knn, _KNN_COLUMNS))
        goals += goal_checks(label, cluster, knn)
    if goals:
        click.echo()
        click.echo("Goal check")
        for line in goals:
            click.echo(f"  {line}")
