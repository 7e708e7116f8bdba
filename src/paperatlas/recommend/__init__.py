r"""Recommendations from papers you liked (and disliked): ours, and arxiv-sanity-lite's SVM as the baseline.

**Ours** (:class:`Recommender`): two similarity signals between every paper and each liked paper,

* dense: cosine of the paper representation (:mod:`paperatlas.search.representation`: all-MiniLM-L6-v2 ⊕ LSA,
  ``(n, 384 + k)`` float32, L2-normalised; the topics, related papers and the neighbour index use the same vectors);
* lexical: cosine of TF-IDF vectors of title + abstract (or digest), :func:`paperatlas.enrich.topics.tfidf_vectorizer`
  (sublinear tf, unigrams + bigrams, English stop words), a sparse ``(n, ≤ 20000)`` matrix built once per corpus.

Per signal, a paper's affinity to the liked set is ``(1 - MAX_WEIGHT) * mean + MAX_WEIGHT * max`` of its cosines to
the liked papers (the mean is the Rocchio centroid score; the max would favour papers close to just one liked paper
of a mixed list, but measured worse: MAX_WEIGHT = 0.3 lost 2-3 P@10 points on both gold sets, so it is 0). Disliked
papers subtract ``DISLIKE_WEIGHT *`` the max cosine to them. Each signal is then standardised over the corpus
(z-score) and the two are summed with weight :data:`LEXICAL_WEIGHT` on the lexical one. A topic signal adds
:data:`TOPIC_WEIGHT` times the share of the liked papers in the paper's sub-topic and the share in its area (the
atlas's topics; ``eval recommend`` fits them as the build does). A second, pseudo-relevance-feedback round (Rocchio
1971; Xu & Croft 1996) adds the top :data:`PRF_DEPTH` papers of the first round as liked papers with weight
:data:`PRF_WEIGHT`. The constants are the ones ``paperatlas eval recommend`` measured best on its two gold sets. On
MiniLM alone (grid over lexical weight 0.5-1.5, max weight 0/0.3, feedback depth 0/3/5/10 and weight 0.5/1, seed 42
draws): P@10 0.898 on awesome and 0.362 on aaai vs 0.878/0.340 without the feedback round and 0.775/0.329 for MiniLM
alone. On the representation (issue 27; lexical weight 0.25/0.5/1, feedback depth 5/10, weight 0.5/1; seeds 42-44):
lexical weight 0.25, depth 10, weight 0.5 gave 0.883 / 0.359 against arxiv-sanity-lite's 0.833 / 0.320 (lexical
weight 1.0, depth 5: 0.869 / 0.357); the topic signal then (weight 0.5, 1, 1.5, 2, 3 on sub-topic and area): 0.894,
0.902, 0.908, 0.914, 0.920 / 0.360, 0.361, 0.362, 0.364, 0.362; 2.0 is kept (3.0 lets the topics outweigh every
similarity). Also tried and dropped: a LinearSVC as arxiv-sanity-lite's but on TF-IDF ⊕ the representation
(0.871-0.887 / 0.374-0.381; a per-request SVM fit over the whole atlas, too slow at 42k papers). A request is a few
dense and sparse matrix-vector products over the corpus (~10 ms for 40k papers, ``benchmarks/recommend_bench.py``).

**Baseline** (:func:`svm_rank`): arxiv-sanity-lite (Karpathy, github.com/karpathy/arxiv-sanity-lite).
``compute.py`` builds TF-IDF features of ``title + summary + authors`` with ``TfidfVectorizer(input='content',
encoding='utf-8', decode_error='replace', strip_accents='unicode', lowercase=True, analyzer='word',
stop_words='english', token_pattern=r'(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b', ngram_range=(1, 2), max_features=N,
norm='l2', use_idf=True, smooth_idf=True, sublinear_tf=True, max_df=..., min_df=5)`` (N = 20000 and max_df = 0.1
in its current version; earlier versions used 10000 and 0.5); ``serve.py``'s ``svm_rank`` trains, per request,
``svm.LinearSVC(class_weight='balanced', verbose=False, max_iter=10000, tol=1e-6, C=0.01)`` (C = 0.1 in earlier
versions) on the tagged papers = 1 vs every other paper = 0 and ranks every paper by ``decision_function``. We
use the current settings on title + abstract (our corpora have no author string in the text).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..enrich.lexical import lexical_text
from ..model import Paper
from ..search.representation import lexical_matrix, paper_vectors
from ..store import Atlas
from ..text import word_tokens
from ..vocab import concept_key
from .ranking import (  # noqa: F401 - the recommenders are part of this package's API
    ASL_SVM,
    ASL_TFIDF,
    DISLIKE_WEIGHT,
    LEXICAL_WEIGHT,
    MAX_WEIGHT,
    PRF_DEPTH,
    PRF_WEIGHT,
    Recommender,
    SvmBaseline,
    svm_rank,
)


# --------------------------------------------------------------------------------------------------- the atlas
@dataclass
class Recommendation:
    """One recommended paper.

    Attributes:
        paper: the recommended paper.
        score: its score (a sum of z-scores, higher is better).
        because: the liked paper it is closest to.
        reason: a one-line reason.
    """

    paper: Paper
    score: float
    because: Paper
    reason: str


def _atlas_text(p: Paper) -> str:
    return lexical_text(p.title, p.abstract, p.digest, p.tldr)


class _AtlasTexts(Sequence):
    """The text (:func:`_atlas_text`) of each ``atlas.ids`` row, read when asked for (none held)."""

    def __init__(self, atlas: Atlas):
        self.atlas = atlas

    def __len__(self) -> int:
        return len(self.atlas.ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return _atlas_text(self.atlas.by_id[self.atlas.ids[i]])


def recommender_for(atlas: Atlas) -> Recommender:
    """The :class:`Recommender` of ``atlas``'s embedded papers (rows = ``atlas.ids``).

    Built once per atlas object (:meth:`Atlas.derived`: the web app warms it up in a thread while a request may ask
    for it), with the TF-IDF matrix the build stored (:mod:`paperatlas.enrich.lexical`) when it still fits the
    papers (fitted here otherwise: 15-20 s at 42k papers).

    Args:
        atlas: the atlas.

    Returns:
        The shared recommender.
    """
    def make() -> Recommender:
        row_of = atlas.row_of
        tids = [tid for pid, tid in atlas.fields("id", "topic_id") if pid in row_of]
        area_of = {tid: -1 if (a := atlas.area_of(tid)) is None else a.id for tid in set(tids)}
        topics = np.array([-1 if tid is None else tid for tid in tids], dtype=np.int64)
        areas = np.array([area_of[tid] for tid in tids], dtype=np.int64)
        # the texts are read only if the TF-IDF matrix is missing (lexical_matrix fits it itself): never at 1M
        return Recommender(_AtlasTexts(atlas), paper_vectors(atlas), tfidf=lexical_matrix(atlas), topics=topics,
                           areas=areas)

    return atlas.derived("recommender", make)


def _concept_text(atlas: Atlas) -> tuple[str, np.ndarray]:
    """``(text, starts)``: the concept keys of every embedded paper as one searchable text.

    For every embedded paper, in ``atlas.ids`` order, the concept keys (:func:`concept_key`) of its keyphrases and
    of its topic's and area's labels (split at commas), written ``" key1 | key2 | ... "`` (space-padded so a key
    matches as whole words); the papers' lines joined by newlines into one ``text``, ``starts`` ``(n,)`` int64 the
    offset of each line. Computed once per atlas object: an exclusion then is a few C-speed substring scans instead
    of re-normalising ~10 phrases of every paper.
    """
    return atlas.derived("concept text", lambda: _build_concept_text(atlas))


def _build_concept_text(atlas: Atlas) -> tuple[str, np.ndarray]:
    label_keys: dict[int, list[str]] = {}
    for tid in atlas.topics:
        labels = [atlas.topic_label(tid)]
        area = atlas.area_of(tid)
        if area is not None and area.id != tid:
            labels.append(area.label)
        label_keys[tid] = [concept_key(part) for lab in labels for part in lab.replace(";", ",").split(",")]
    lines = []
    for pid in atlas.ids:
        p = atlas.by_id[pid]
        keys = [concept_key(k) for k in [*p.keyphrases, *p.given_keyphrases]]
        keys += label_keys.get(p.topic_id, []) if p.topic_id is not None else []
        lines.append(" " + " | ".join(k.replace("\n", " ") for k in keys) + " ")
    starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]]).astype(np.int64) if lines else \
        np.zeros(0, dtype=np.int64)
    return "\n".join(lines), starts


def excluded_rows(atlas: Atlas, exclude_topics: Iterable[str] = (), exclude_keyphrases: Iterable[str] = ()
                  ) -> frozenset[int]:
    """Rows (of ``atlas.ids``) of the papers an exclusion drops.

    The answer is cached on the atlas object per set of exclusions (a reader's "no reinforcement learning" is asked
    on every request).

    Args:
        atlas: the atlas.
        exclude_topics: topic ids or label substrings; a paper filed under one is dropped (an area covering its
            sub-topics, :func:`paperatlas.topics.resolve_topics`).
        exclude_keyphrases: a paper carrying one is dropped: matched like the keyphrase facet
            (:func:`paperatlas.search.keyphrase_keys`, an acronym = its long form), also inside longer keyphrases
            (``reinforcement learning`` drops ``deep reinforcement learning``) and in the paper's topic or area
            label.

    Returns:
        The rows; empty when there is no exclusion.
    """
    from ..search import keyphrase_keys
    from ..topics import resolve_topics

    topic_refs = tuple(sorted({str(t).strip() for t in exclude_topics if str(t).strip()}))
    phrases = tuple(sorted({" ".join(str(x).split()) for x in exclude_keyphrases if str(x).strip()}))
    if not topic_refs and not phrases:
        return frozenset()
    cache: dict = atlas.derived("excluded rows", dict)  # a reader keeps the same exclusions
    if (topic_refs, phrases) in cache:
        return cache[topic_refs, phrases]
    rows: set[int] = set()
    tids = resolve_topics(atlas, topic_refs)
    if tids:
        rows |= {i for i, pid in enumerate(atlas.ids) if atlas.by_id[pid].topic_id in tids}
    acr = atlas.meta.get("acronyms") or {}
    keys: set[str] = set()
    for x in phrases:
        keys |= keyphrase_keys(x, acr)
    needles = [f" {k} " for k in keys if k]
    if needles:
        text, starts = _concept_text(atlas)
        for needle in needles:
            offsets = [m.start() for m in re.finditer(re.escape(needle), text)]
            rows |= set((np.searchsorted(starts, offsets, side="right") - 1).tolist())
    if len(cache) >= 32:
        cache.clear()
    cache[topic_refs, phrases] = frozenset(rows)
    return cache[topic_refs, phrases]


def liked_papers(atlas: Atlas, refs: Iterable[str]) -> list[Paper]:
    """Resolve paper references to papers, in order, without duplicates.

    Args:
        atlas: the atlas.
        refs: paper ids or titles (:func:`paperatlas.search.find_paper`).

    Returns:
        The papers.

    Raises:
        LookupError: naming an unknown reference.
    """
    from ..search import find_paper

    out: dict[str, Paper] = {}
    for ref in refs:
        p = find_paper(atlas, ref)
        out.setdefault(p.id, p)
    return list(out.values())


def recommend(atlas: Atlas, liked: Sequence[str], disliked: Sequence[str] = (), k: int = 10,
              exclude_topics: Iterable[str] = (), exclude_keyphrases: Iterable[str] = (),
              exclude: Iterable[str] = ()) -> list[Recommendation]:
    """The ``k`` papers of ``atlas`` to read next given ``liked`` and ``disliked`` paper ids, best first.

    Liked, disliked and ``exclude``d ids never come back, nor papers that :func:`excluded_rows` ``exclude_topics``
    / ``exclude_keyphrases`` finds. Each recommendation names the liked paper it is closest to (highest summed
    z-scored dense + lexical cosine) and why (:func:`_why`: shared keyphrases and the words that drove it).
    Liked and disliked ids without an embedding are ignored.

    Args:
        atlas: the atlas.
        liked: liked paper ids.
        disliked: disliked paper ids.
        k: most recommendations.
        exclude_topics: topics whose papers are left out (see :func:`excluded_rows`).
        exclude_keyphrases: keyphrases whose papers are left out (see :func:`excluded_rows`).
        exclude: paper ids left out.

    Returns:
        The recommendations, best first; empty when no liked paper is embedded.

    Raises:
        KeyError: for an unknown liked or disliked id.
    """
    for pid in [*liked, *disliked]:
        if pid not in atlas.by_id:
            raise KeyError(f"unknown paper id {pid!r}")
    rows_l = [atlas.row_of[p] for p in dict.fromkeys(liked) if p in atlas.row_of]
    rows_d = [atlas.row_of[p] for p in dict.fromkeys(disliked) if p in atlas.row_of]
    if not rows_l:
        return []
    rec = recommender_for(atlas)
    skip = {atlas.row_of[p] for p in exclude if p in atlas.row_of}
    skip |= excluded_rows(atlas, exclude_topics, exclude_keyphrases)
    rows_d = [r for r in rows_d if r not in rows_l]
    sims = rec.cosines(rows_l + rows_d)  # ranks, then says which liked paper each recommendation is closest to
    rows, scores = rec.rank(rows_l, rows_d, k=k, exclude=skip, sims=sims)
    if not len(rows):
        return []
    # the liked paper each recommendation is closest to: both signals, each z-scored over the corpus per liked paper
    nl = len(rows_l)
    per = (_zscore_cols(sims["dense"][:, :nl]) + rec.lexical_weight * _zscore_cols(sims["lexical"][:, :nl]))[rows]
    out = []
    for j, (r, s) in enumerate(zip(rows.tolist(), scores.tolist(), strict=True)):
        paper = atlas.by_id[atlas.ids[r]]
        because = atlas.by_id[atlas.ids[rows_l[int(np.argmax(per[j]))]]]
        out.append(Recommendation(paper, float(s), because,
                                  f'close to "{because.title}": {_why(atlas, rec, because, paper, r)}'))
    return out


def _why(atlas: Atlas, rec: Recommender, because: Paper, paper: Paper, row: int) -> str:
    """The reason of one recommendation (row ``row``).

    The keyphrases it shares with the liked paper it is closest to (:func:`paperatlas.search.explain`) and the
    title/abstract words that make up most of their lexical cosine (:meth:`Recommender.driving_terms`); the shared
    topic or "similar abstract" when neither exists.
    """
    from ..search import explain, shared_keyphrases

    shared = ", ".join(shared_keyphrases(atlas, because, paper)[:3])
    covered = shared.lower()
    # words a reader can check at a glance: those of the two titles and keyphrases
    vocab = {w.lower() for p in (because, paper) for w in word_tokens(" ".join([p.title, *p.keyphrases]))}
    words = [t for t in rec.driving_terms(row, [atlas.row_of[because.id]], k=4, vocabulary=vocab)
             if t not in covered][:3]
    parts = [f"shares keyphrases: {shared}"] if shared else []
    if words:
        parts.append("words: " + ", ".join(words))
    return "; ".join(parts) if parts else explain(atlas, because, paper)


def _zscore_cols(m: np.ndarray) -> np.ndarray:
    if len(m) <= 1:
        return m
    sd = m.std(axis=0)
    return (m - m.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
