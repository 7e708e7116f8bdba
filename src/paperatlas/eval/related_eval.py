"""``paperatlas eval neighbours`` and ``paperatlas eval related``: the paper representation and related papers.

Gold sets and texts are those of ``eval topics`` (:func:`paperatlas.eval.topic_eval.load_gold`: seed 004's named
sections, AAAI 2022's primary areas, or any labelled listing), embedded once with all-MiniLM-L6-v2.

**Neighbours** (:func:`neighbour_rows`): 10-NN class accuracy (:func:`paperatlas.eval.topic_eval.knn_accuracy`,
leave-one-out, majority vote; González-Márquez & Kobak 2024) of the paper representation (MiniLM ⊕ LSA,
:func:`paperatlas.enrich.topics.topic_embedding`, the vectors related papers, recommendations and topics use)
beside its two parts' kinds: MiniLM alone and plain TF-IDF.

**Related** (:func:`related_rows`): for every paper whose class has at least 10 papers, the 10 papers each method
puts first (the paper itself left out) are scored against the gold classes: ``P@10`` (the share of the same
class), ``nDCG@10`` (binary relevance = same class, log2 discount) and ``10-NN acc`` (the majority class of the
10 is the paper's own). Methods:

* ``paperatlas related``: :func:`paperatlas.search.related.fuse` on the :data:`paperatlas.search.related.POOL`
  papers nearest by the representation's dense half (as an atlas below 100k papers picks them), with the
  MiniLM half's cosine and the TF-IDF cosine
  (:func:`paperatlas.enrich.lexical.lexical_index`, the matrix the build stores) as the words signal. The gold
  sets carry no keyphrases or author lists that the atlas would have, so the keyphrase and author signals are
  0 here: this row measures meaning + words.
* ``representation``: the representation's cosine alone (what related papers were on MiniLM until issue 27);
* ``MiniLM``: all-MiniLM-L6-v2 cosine alone;
* ``BM25``: the paper's title + text as a query over every other paper's title + text, Okapi BM25 with FTS5's
  constants (k1 = 1.2, b = 0.75; Robertson & Zaragoza 2009) on scikit-learn's English-stop-word unigram counts;
* ``BM25 + MiniLM (RRF)``: reciprocal rank fusion (Cormack, Clarke & Büttcher 2009, k = 60) of the two lists,
  the baseline the judgement issue names.

Everything is computed on arrays from the gold texts; the atlas's own path (``paperatlas related``) runs the same
:func:`~paperatlas.search.related.fuse` on the same kinds of arrays, read from the atlas.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from ..sources.progress import ProgressFactory, progress_of
from . import topic_eval

#: k of P@k, nDCG@k and the k-NN vote
K = 10
#: the BM25 constants FTS5 uses
BM25_K1, BM25_B = 1.2, 0.75

COLUMNS = [("method", "method", "{}"), ("p10", "P@10", "{:.3f}"), ("ndcg10", "nDCG@10", "{:.3f}"),
           ("acc", "10-NN acc", "{:.3f}"), ("ms", "ms/paper", "{:.2f}")]


def neighbour_rows(texts: Sequence[str], gold: Sequence[str], emb: np.ndarray, seeds: Sequence[int]) -> list[dict]:
    """10-NN accuracy of the paper representation, MiniLM and TF-IDF (:func:`topic_eval.knn_rows`).

    Args:
        texts: ``(n,)`` texts from :func:`topic_eval.load_gold`.
        gold: ``(n,)`` gold classes.
        emb: ``(n, 384)`` float32 MiniLM embeddings of ``texts``, L2-normalised.
        seeds: LSA seeds; rows are the mean ± sd over them (:func:`topic_eval.aggregate`).

    Returns:
        One row per representation: ``method``, ``dim``, ``acc`` (in [0, 1]), ``acc_sd``, ``n``, ``classes``.
    """
    rows = topic_eval.evaluate_knn(texts, gold, emb, seeds)
    for r in rows:
        if r.get("method") == "paperatlas topic embedding":
            r["method"] = "paperatlas representation (MiniLM ⊕ LSA)"
    return rows


def bm25_matrix(texts: Sequence[str]):
    """Okapi BM25 term weights of every text (the documents side), and each text's query terms.

    Args:
        texts: ``(n,)`` texts.

    Returns:
        ``(weights, terms)``: sparse CSR ``(n, vocab)`` float64 where ``weights[d, t]`` is term ``t``'s BM25
        contribution to document ``d`` (``idf · f (k1 + 1) / (f + k1 (1 - b + b |d| / avgdl))``, idf
        ``log(1 + (N - df + 0.5) / (df + 0.5))`` as FTS5), and sparse ``(n, vocab)`` binary: the terms of each text.
        A query's BM25 for every document is ``weights @ query_terms.T``.
    """
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import CountVectorizer

    counts = CountVectorizer(stop_words="english").fit_transform(list(texts)).tocsr().astype(np.float64)
    n = counts.shape[0]
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
    length = np.asarray(counts.sum(axis=1)).ravel()
    coo = counts.tocoo()
    f, dl = coo.data, length[coo.row]
    w = idf[coo.col] * f * (BM25_K1 + 1) / (f + BM25_K1 * (1 - BM25_B + BM25_B * dl / max(length.mean(), 1e-9)))
    weights = sp.csr_matrix((w, (coo.row, coo.col)), shape=counts.shape)
    return weights, (counts > 0).astype(np.float64).tocsr()


def _rrf(*scores: np.ndarray, k: int = 60) -> np.ndarray:
    from ..search.ranking import rrf_scores

    ranks = []
    for s in scores:
        r = np.empty(len(s), dtype=np.int64)
        r[np.argsort(-s, kind="stable")] = np.arange(1, len(s) + 1)
        ranks.append(r)
    return rrf_scores(ranks, k=k)


def related_methods(texts: Sequence[str], emb: np.ndarray, seed: int = 42) -> dict[str, Callable[[int], np.ndarray]]:
    """The related-paper methods of the module docstring, each ``row -> (n,) scores`` (higher = more related).

    Args:
        texts: ``(n,)`` texts.
        emb: ``(n, 384)`` MiniLM embeddings.
        seed: seed of the representation's LSA.

    Returns:
        Method name -> scoring function; the source row's own score is not excluded (callers drop it).
    """
    from ..enrich.lexical import lexical_index
    from ..enrich.topics import topic_embedding
    from ..search.related import POOL, fuse

    x, _ = topic_embedding(emb, texts, seed=seed)
    tfidf, _ = lexical_index(texts)
    weights, terms = bm25_matrix(texts)

    def bm25(i: int) -> np.ndarray:
        return np.asarray((weights @ terms[i].T).todense()).ravel()

    def ours(i: int) -> np.ndarray:
        dense = emb @ emb[i]  # the pool: nearest by the representation's dense half, as an atlas below 100k
        pool = np.argsort(-dense, kind="stable")
        pool = pool[pool != i][:POOL]
        lex = np.asarray((tfidf[pool] @ tfidf[i].T).todense()).ravel()
        fused, _ = fuse(x[pool] @ x[i], lex, dense=dense[pool])
        out = np.full(len(texts), -np.inf)
        out[pool] = fused
        return out

    return {"paperatlas related (meaning + words)": ours, "representation (MiniLM ⊕ LSA)": lambda i: x @ x[i],
            "MiniLM": lambda i: emb @ emb[i], "BM25": bm25,
            "BM25 + MiniLM (RRF)": lambda i: _rrf(bm25(i), emb @ emb[i])}


def related_rows(texts: Sequence[str], gold: Sequence[str], emb: np.ndarray, seed: int = 42,
                 progress: ProgressFactory | None = None) -> list[dict]:
    """Score every related-paper method on one gold set (module docstring).

    Args:
        texts: ``(n,)`` texts from :func:`topic_eval.load_gold`.
        gold: ``(n,)`` gold classes.
        emb: ``(n, 384)`` MiniLM embeddings of ``texts``.
        seed: seed of the representation's LSA.
        progress: where the papers scored are counted (every method's; default a tqdm bar on stderr when it is a
            terminal: :func:`paperatlas.sources.progress.progress_of`).

    Returns:
        One row per method: ``method``, ``p10``, ``ndcg10``, ``acc`` (each a mean over the papers of classes with at
        least 10 papers, in [0, 1]), ``ms`` (milliseconds per paper, scoring only) and ``n`` (papers used).
    """
    g = np.asarray(gold, dtype=object)
    size = Counter(gold)
    used = [i for i in range(len(g)) if size[g[i]] >= topic_eval.KNN_MIN_CLASS]
    rows = []
    scorers = related_methods(texts, emb, seed)
    with progress_of("related eval", len(scorers) * len(used), "paper", progress) as update:
        for name, score in scorers.items():
            rows.append(_method_row(name, score, g, used, update))
    return rows


def _method_row(name: str, score: Callable[[int], np.ndarray], g: np.ndarray, used: list[int],
                update: Callable[[int], None]) -> dict:
    """One method's row of :func:`related_rows`; ``update(1)`` after each paper."""
    from .recommend_eval import ndcg_at_k, precision_at_k

    p, nd, acc, ms = [], [], [], 0.0
    for i in used:
        t0 = time.perf_counter()
        s = np.asarray(score(i), dtype=np.float64).copy()
        s[i] = -np.inf
        top = [int(j) for j in np.argsort(-s, kind="stable")[:K]]
        ms += 1000 * (time.perf_counter() - t0)
        rel = {j for j in used if g[j] == g[i] and j != i}
        p.append(precision_at_k(top, rel))
        nd.append(ndcg_at_k(top, rel))
        votes = Counter(g[j] for j in top).most_common()
        acc.append(votes[0][0] == g[i] and (len(votes) == 1 or votes[1][1] < votes[0][1] or g[top[0]] == g[i]))
        update(1)
    return {"method": name, "p10": float(np.mean(p)), "ndcg10": float(np.mean(nd)),
            "acc": float(np.mean(acc)), "ms": ms / max(len(used), 1), "n": len(used)}


def format_table(rows: list[dict]) -> str:
    """Format :func:`related_rows` as a plain-text table (:func:`topic_eval.format_table` with :data:`COLUMNS`)."""
    return topic_eval.format_table(rows, COLUMNS)


def goal_check(label: str, rows: list[dict]) -> str:
    """One line: is ours above the BM25 + MiniLM RRF baseline on nDCG@10 and 10-NN accuracy.

    Args:
        label: the gold set's name.
        rows: :func:`related_rows`.

    Returns:
        The line.
    """
    by = {r["method"]: r for r in rows}
    ours, base = by["paperatlas related (meaning + words)"], by["BM25 + MiniLM (RRF)"]
    better = ours["ndcg10"] > base["ndcg10"] and ours["acc"] > base["acc"]
    return (f"{label}: related above BM25 + MiniLM (RRF): {'yes' if better else 'no'} (nDCG@10 {ours['ndcg10']:.3f} "
            f"vs {base['ndcg10']:.3f}, 10-NN acc {ours['acc']:.3f} vs {base['acc']:.3f})")
