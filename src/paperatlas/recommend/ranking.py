"""The recommenders themselves, on plain arrays.

Ours (:class:`Recommender`) and arxiv-sanity-lite's SVM (:class:`SvmBaseline`, :func:`svm_rank`); the methods,
constants and their sources are described in :mod:`paperatlas.recommend`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..enrich.lexical import lexical_index

#: weight of the lexical (TF-IDF) z-score next to the paper representation's (MiniLM ⊕ LSA, which already holds a
#: lexical half: 1.0 counted the words twice; 0.25 measured best, see :mod:`paperatlas.recommend`)
LEXICAL_WEIGHT = 0.25
#: share of the max (vs the mean) of the per-liked-paper cosines in a paper's affinity
MAX_WEIGHT = 0.0
#: weight of the max cosine to a disliked paper, subtracted from the affinity
DISLIKE_WEIGHT = 0.5
#: weight of the topic signal: the share of the liked papers in a paper's sub-topic, and in its area, each times this
#: (z-score units; 2.0 measured best of 0.5-3, see :mod:`paperatlas.recommend`)
TOPIC_WEIGHT = 2.0
#: pseudo-relevance feedback: the first round's top papers added as liked, each with this weight (0 = off)
PRF_DEPTH = 10
PRF_WEIGHT = 0.5

#: arxiv-sanity-lite's compute.py TF-IDF settings (current version)
ASL_TFIDF = dict(input="content", encoding="utf-8", decode_error="replace", strip_accents="unicode",
                 lowercase=True, analyzer="word", stop_words="english",
                 token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b", ngram_range=(1, 2), max_features=20000,
                 norm="l2", use_idf=True, smooth_idf=True, sublinear_tf=True, max_df=0.1, min_df=5)
#: arxiv-sanity-lite's serve.py svm_rank classifier settings (current version)
ASL_SVM = dict(class_weight="balanced", verbose=False, max_iter=10000, tol=1e-6, C=0.01)


def _zscore(s: np.ndarray) -> np.ndarray:
    sd = float(s.std())
    return (s - float(s.mean())) / (sd or 1.0)


class Recommender:
    """Our ranking over one corpus, on arrays.

    Building fits the TF-IDF matrix once (``self.tfidf``, sparse ``(n, vocab)``, its terms in ``self.terms``;
    :func:`paperatlas.enrich.lexical.lexical_index`) unless it is given.

    Args:
        texts: ``texts[i]`` is paper ``i``'s ``"title. abstract"``.
        vectors: ``(n, dim)`` float32 L2-normalised paper representation (MiniLM ⊕ LSA, 384 + k; or MiniLM, 384).
        lexical_weight: weight of the lexical z-score (default :data:`LEXICAL_WEIGHT`).
        max_weight: share of the max cosine in the affinity (default :data:`MAX_WEIGHT`).
        dislike_weight: weight of the max cosine to a disliked paper (default :data:`DISLIKE_WEIGHT`).
        prf_depth: papers added by the feedback round (default :data:`PRF_DEPTH`).
        prf_weight: their weight (default :data:`PRF_WEIGHT`; 0 = off).
        tfidf: ``(matrix, terms)`` of ``texts`` made already (:func:`paperatlas.enrich.lexical.lexical_index`, e.g.
            stored by the build); None to fit it here.
        topics: ``(n,)`` int sub-topic id of every paper (-1: none); None for no topic signal.
        areas: ``(n,)`` int area id of every paper (-1: none); None for no topic signal.
        topic_weight: weight of the topic signal (default :data:`TOPIC_WEIGHT`).

    Raises:
        ValueError: when ``texts``, ``vectors``, ``topics`` or ``areas`` differ in length.
    """

    def __init__(self, texts: Sequence[str], vectors: np.ndarray, lexical_weight: float = LEXICAL_WEIGHT,
                 max_weight: float = MAX_WEIGHT, dislike_weight: float = DISLIKE_WEIGHT, prf_depth: int = PRF_DEPTH,
                 prf_weight: float = PRF_WEIGHT, tfidf=None, topics: np.ndarray | None = None,
                 areas: np.ndarray | None = None, topic_weight: float = TOPIC_WEIGHT):
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        self.n = len(texts)
        self.vectors = np.asarray(vectors, dtype=np.float32)
        if tfidf is not None:
            self.tfidf, self.terms = tfidf
        else:
            self.tfidf, self.terms = lexical_index(texts) if self.n else (None, np.array([], dtype=object))
        self.lexical_weight, self.max_weight, self.dislike_weight = lexical_weight, max_weight, dislike_weight
        self.prf_depth, self.prf_weight = prf_depth, prf_weight
        self.topic_weight = topic_weight
        self.groups = [np.asarray(g, dtype=np.int64) for g in (topics, areas) if g is not None]
        if any(len(g) != self.n for g in self.groups):
            raise ValueError(f"{self.n} papers but topic ids for {[len(g) for g in self.groups]}")

    # per-signal cosines of every paper to the given rows: (n, len(rows))
    def dense_sims(self, rows: Sequence[int]) -> np.ndarray:
        """Embedding cosines of every paper to ``rows``.

        Args:
            rows: paper rows.

        Returns:
            ``(n, len(rows))``.
        """
        return self.vectors @ self.vectors[list(rows)].T

    def lexical_sims(self, rows: Sequence[int]) -> np.ndarray:
        """TF-IDF cosines of every paper to ``rows``.

        Args:
            rows: paper rows.

        Returns:
            ``(n, len(rows))``.
        """
        q = self.tfidf[list(rows)].T.toarray()  # (vocab, len(rows)) dense: sparse @ dense is the fast product
        return np.asarray(self.tfidf @ q)

    def cosines(self, rows: Sequence[int]) -> dict[str, np.ndarray]:
        """Both signals' cosines of every paper to ``rows``.

        Pass them to :meth:`rank` (``sims``) and reuse them to explain the ranking instead of computing them twice.

        Args:
            rows: paper rows.

        Returns:
            ``{"dense": (n, len(rows)), "lexical": (n, len(rows))}``.
        """
        rows = [int(r) for r in rows]
        return {"dense": self.dense_sims(rows), "lexical": self.lexical_sims(rows)}

    def _affinity(self, sims: np.ndarray, weights: np.ndarray) -> np.ndarray:
        mean = sims @ (weights / weights.sum())
        return (1 - self.max_weight) * mean + self.max_weight * sims.max(axis=1)

    def scores(self, liked: Sequence[int], disliked: Sequence[int] = (), signals: str = "both",
               prf: bool = True, sims: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """Score every paper (see the module docstring).

        Args:
            liked: liked rows (repeats ignored).
            disliked: disliked rows (repeats and liked rows ignored).
            signals: ``"both"`` (ours), ``"dense"`` or ``"lexical"`` (ablations: one signal, no feedback round
                unless ``prf``).
            prf: run the pseudo-relevance-feedback round.
            sims: :meth:`cosines` of the liked rows then the disliked ones (each without repeats, a disliked row
                that is also liked left out), when the caller has them already.

        Returns:
            ``(n,)`` score of every paper (higher = recommend first; the liked/disliked rows themselves included).

        Raises:
            ValueError: when ``liked`` is empty or ``sims`` has another number of columns.
        """
        liked = list(dict.fromkeys(int(r) for r in liked))
        if not liked:
            raise ValueError("recommendations need at least one liked paper")
        disliked = [int(r) for r in dict.fromkeys(disliked) if r not in liked]
        parts = [("dense", self.dense_sims, 1.0), ("lexical", self.lexical_sims, self.lexical_weight)]
        parts = [p for p in parts if signals in ("both", p[0])]
        given = sims or {}
        if any(s.shape[1] != len(liked) + len(disliked) for s in given.values()):
            raise ValueError(f"sims have {[s.shape[1] for s in given.values()]} columns, not "
                             f"{len(liked) + len(disliked)} (liked + disliked)")
        sims = {name: (f, w, given[name] if name in given else f(liked + disliked)) for name, f, w in parts}

        def combine(extra: list[int]) -> np.ndarray:
            total = np.zeros(self.n, dtype=np.float64)
            weights = np.array([1.0] * len(liked) + [self.prf_weight] * len(extra))
            for f, w, s in sims.values():
                pos = s[:, :len(liked)]
                if extra:
                    pos = np.hstack([pos, f(extra)])
                a = self._affinity(pos, weights)
                if disliked:
                    a = a - self.dislike_weight * s[:, len(liked):].max(axis=1)
                total += w * _zscore(a)
            return total

        total = combine([])
        if signals == "both" and self.groups and self.topic_weight:
            total = total + self.topic_signal(liked)
        if prf and self.prf_depth and self.prf_weight:
            seen = set(liked) | set(disliked)
            top = [int(i) for i in np.argsort(-total, kind="stable")[: self.prf_depth + len(seen)] if i not in seen]
            total = combine(top[: self.prf_depth])
            if self.groups and self.topic_weight:
                total = total + self.topic_signal(liked)
        return total

    def topic_signal(self, liked: Sequence[int]) -> np.ndarray:
        """The topic signal: per paper, the share of ``liked`` in its sub-topic plus the share in its area.

        Args:
            liked: liked rows.

        Returns:
            ``(n,)`` float64, times :attr:`topic_weight`; 0 for papers without a topic, or without topic ids.
        """
        out = np.zeros(self.n, dtype=np.float64)
        liked = list(liked)
        for g in self.groups:
            ids, counts = np.unique(g[liked], return_counts=True)
            share = dict(zip(ids.tolist(), (counts / len(liked)).tolist(), strict=True))
            share.pop(-1, None)
            if share:
                keys = np.array(list(share), dtype=np.int64)
                vals = np.array(list(share.values()))
                pos = np.searchsorted(keys, g)
                hit = (pos < len(keys)) & (keys[np.minimum(pos, len(keys) - 1)] == g)
                out[hit] += vals[pos[hit]]
        return self.topic_weight * out

    def driving_terms(self, row: int, liked: Sequence[int], k: int = 3, vocabulary: set[str] | None = None
                      ) -> list[str]:
        """The TF-IDF terms that add most to ``row``'s lexical cosine with the ``liked`` rows.

        A term's contribution is its weight in ``row`` × its mean weight in the liked papers. Skipped: a unigram
        inside a chosen bigram, terms with a number or a word every ML paper uses (``neural``, ``learning``,
        ``results``), and, when ``vocabulary`` is given, terms with a word outside it.

        Args:
            row: the recommended paper's row.
            liked: liked rows.
            k: most terms returned.
            vocabulary: lower-case words the terms must consist of; None for any.

        Returns:
            Up to ``k`` terms, largest contribution first.
        """
        from ..vocab import BROAD, GENERIC, STOP, norm_word

        x = self.tfidf[int(row)]
        liked_mean = np.asarray(self.tfidf[list(liked)].mean(axis=0)).ravel()
        contrib = x.data * liked_mean[x.indices]
        out: list[str] = []
        keys: list[set[str]] = []  # each chosen term's words, singular: "transformers" = "transformer"
        for j in np.argsort(-contrib, kind="stable"):
            if contrib[j] <= 0 or len(out) == k:
                break
            term = str(self.terms[x.indices[j]])
            words = term.split()
            if any(w in BROAD or w in GENERIC or w in STOP or not w.isalpha() for w in words):
                continue
            if vocabulary is not None and not all(w in vocabulary for w in words):
                continue
            key = {norm_word(w) for w in words}
            if any(key <= o for o in keys):
                continue
            keep = [i for i, o in enumerate(keys) if not o < key]  # a bigram replaces its unigrams
            out, keys = [out[i] for i in keep] + [term], [keys[i] for i in keep] + [key]
        return out

    def rank(self, liked: Sequence[int], disliked: Sequence[int] = (), k: int | None = 10,
             exclude: Iterable[int] = (), signals: str = "both", sims: dict[str, np.ndarray] | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best rows, best first, never a liked, disliked or ``exclude``d row.

        The feedback round runs only for ``signals="both"``.

        Args:
            liked: liked rows.
            disliked: disliked rows.
            k: most rows returned; None for all.
            exclude: rows never returned.
            signals: ``"both"``, ``"dense"`` or ``"lexical"`` (see :meth:`scores`).
            sims: precomputed cosines (see :meth:`scores`).

        Returns:
            ``(rows, scores)``.

        Raises:
            ValueError: as :meth:`scores`.
        """
        s = self.scores(liked, disliked, signals=signals, prf=signals == "both", sims=sims)
        drop = np.array(sorted({*map(int, liked), *map(int, disliked), *map(int, exclude)}), dtype=int)
        s = s.copy()
        s[drop] = -np.inf
        order = np.argsort(-s, kind="stable")
        order = order[: len(order) - len(drop)]
        if k is not None:
            order = order[:k]
        return order, s[order]


class SvmBaseline:
    """arxiv-sanity-lite's ranking (see the module docstring).

    Its TF-IDF features of ``texts`` are built once (``self.x``, sparse ``(n, ≤ 20000)``), a LinearSVC is trained
    per request.

    Args:
        texts: one text per paper (title + abstract).
    """

    def __init__(self, texts: Sequence[str]):
        from sklearn.feature_extraction.text import TfidfVectorizer

        try:
            self.x = TfidfVectorizer(**ASL_TFIDF).fit_transform(list(texts)).astype(np.float32)
        except ValueError:  # tiny corpus: no term in >= 5 papers and <= 10% of them
            self.x = TfidfVectorizer(**{**ASL_TFIDF, "min_df": 1, "max_df": 1.0}).fit_transform(list(texts))
        self.n = self.x.shape[0]

    def rank(self, liked: Sequence[int], k: int | None = 10, exclude: Iterable[int] = ()) -> tuple[np.ndarray,
                                                                                                   np.ndarray]:
        """Rank the papers for the ``liked`` rows by the SVM's decision values.

        Args:
            liked: liked rows (class 1; every other paper is class 0).
            k: most rows returned; None for all.
            exclude: rows never returned.

        Returns:
            ``(rows, decision values)`` best first, never a liked or ``exclude``d row.

        Raises:
            ValueError: when no paper or every paper is liked.
        """
        from sklearn.svm import LinearSVC

        y = np.zeros(self.n, dtype=np.float32)
        y[list(liked)] = 1.0
        if y.sum() == 0 or y.sum() == self.n:
            raise ValueError("the SVM needs at least one liked and one other paper")
        s = LinearSVC(**ASL_SVM).fit(self.x, y).decision_function(self.x)
        drop = {*map(int, liked), *map(int, exclude)}
        order = [int(i) for i in np.argsort(-s, kind="stable") if int(i) not in drop]
        if k is not None:
            order = order[:k]
        return np.array(order, dtype=int), s[order]


def svm_rank(texts: Sequence[str], liked: Sequence[int], k: int | None = 10) -> list[int]:
    """arxiv-sanity-lite's SVM ranking of ``texts`` for the ``liked`` rows.

    Args:
        texts: one text per paper.
        liked: liked rows.
        k: most rows returned; None for all.

    Returns:
        The best ``k`` other rows, best first.

    Raises:
        ValueError: when no paper or every paper is liked.
    """
    return SvmBaseline(texts).rank(liked, k=k)[0].tolist()
