"""Related papers from four signals, each paper with the reason that put it there.

**Signals.** The :data:`POOL` papers nearest to the source (:func:`_pool`: by the dense half of the paper
representation, :func:`paperatlas.search.representation.paper_vectors`, MiniLM ⊕ LSA, in one exact scan; by the
whole representation in the stored HNSW graph from 100k papers) are re-ranked by :func:`fuse`:

* meaning: the representation's cosine, as a z-score over the pool, plus :data:`DENSE_WEIGHT` times the z-score
  of its MiniLM half's own cosine (the half that best complements the words: measured below);
* words: the TF-IDF cosine of title + abstract (the matrix the build stored,
  :func:`paperatlas.search.representation.lexical_matrix`), as a z-score over the pool, weight
  :data:`LEXICAL_WEIGHT`;
* keyphrases: :data:`KEYPHRASE_WEIGHT` per keyphrase both papers carry that is not broad (compared by
  :func:`~paperatlas.vocab.phrase_key`), at most :data:`MAX_KEYPHRASES`;
* authors: :data:`AUTHOR_WEIGHT` when the papers share an author.

Re-ranking the vector pool (rather than a full lexical search of every paper) keeps a request at the cost of
one nearest-neighbour search plus ``POOL`` sparse dot products, as the graded related-paper benchmarks re-rank a
judged pool. The weights were set with ``paperatlas eval related`` on seed 004's sections and AAAI 2022's areas
(tuned there): on the pool, representation + 0.5 MiniLM + 0.3 TF-IDF gave P@10 0.665 / 0.303 and 10-NN accuracy
0.833 / 0.402 against the BM25 + MiniLM RRF baseline's 0.648 / 0.304 and 0.821 / 0.395 (awesome / aaai);
representation + 0.3 TF-IDF alone 0.635 / 0.293, + 0.3 BM25 0.638 / 0.296, + 0.5 MiniLM + 0.5 BM25 0.656 / 0.302.
The keyphrase and author weights are not tuned on gold data (the gold sets carry neither): they are set so that
two shared specific keyphrases or a shared author lift a paper about one standard deviation of the pool.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..enrich.lexical import StoredRows
from ..model import Paper
from ..store import Atlas
from ..text import word_tokens
from ..vocab import BROAD, GENERIC, STOP, norm_word, phrase_key
from .ann import top_k
from .neighbours import neighbour_index
from .representation import lexical_rows, paper_vectors

#: nearest papers by the representation that the other signals re-rank
POOL = 100
#: weight of the words' (TF-IDF cosine) z-score next to the meaning's (representation cosine) z-score
LEXICAL_WEIGHT = 0.3
#: weight of the MiniLM half's own cosine z-score (the representation's first 384 columns, ``atlas.vectors``)
DENSE_WEIGHT = 0.5
#: added per shared specific keyphrase, for at most :data:`MAX_KEYPHRASES` of them
KEYPHRASE_WEIGHT = 0.5
MAX_KEYPHRASES = 2
#: added when the papers share an author
AUTHOR_WEIGHT = 0.75
#: the signals, in the order of :func:`fuse`'s contributions
SIGNALS = ("meaning", "words", "keyphrases", "authors")


@dataclass
class Related:
    """A related paper.

    Attributes:
        paper: the related paper.
        similarity: the cosine of the two papers' representations.
        reason: a one-line human reason, naming the signal that put the paper there.
        signal: that signal, one of :data:`SIGNALS`.
        score: the fused score (:func:`fuse`; higher is closer).
    """

    paper: Paper
    similarity: float
    reason: str
    signal: str = "meaning"
    score: float = 0.0


def _content_words(p: Paper) -> dict[str, str]:
    """Normalised content word -> display form, from the title and keyphrases of ``p``."""
    return _content_words_of(p.title, p.keyphrases, p.given_keyphrases)


def _content_words_of(title: str, keyphrases: list[str], given: list[str]) -> dict[str, str]:
    """:func:`_content_words` of a paper's title, keyphrases and given keyphrases."""
    out: dict[str, str] = {}
    for w in word_tokens(" ".join([title, *keyphrases, *given])):
        lw = w.lower()
        if len(lw) > 2 and lw not in STOP and lw not in GENERIC and lw not in BROAD:
            out.setdefault(norm_word(lw), w)
    return out


def _df(atlas: Atlas) -> tuple[dict[str, int], dict[str, int]]:
    """``(word df, keyphrase df)`` of ``atlas``, computed once per atlas (:meth:`Atlas.derived`).

    In how many papers each content word (title and keyphrases) and each keyphrase (by :func:`phrase_key`) occurs.
    """

    def count() -> tuple[dict[str, int], dict[str, int]]:
        words: dict[str, int] = {}
        phrases: dict[str, int] = {}
        for title, keyphrases, given in atlas.fields("title", "keyphrases", "given_keyphrases"):
            for k in _content_words_of(title, keyphrases, given):
                words[k] = words.get(k, 0) + 1
            for k in {phrase_key(k) for k in keyphrases + given}:
                phrases[k] = phrases.get(k, 0) + 1
        return words, phrases

    return atlas.derived("document frequencies", count)


def _broad_phrase(key: str) -> bool:
    """Whether a keyphrase is made only of words that describe every ML paper.

    ``neural networks``, ``deep learning``, ``training data``: no reason to call two papers related.
    """
    return all(w in BROAD or w in GENERIC or w in STOP or norm_word(w) in BROAD for w in key.split())


def shared_keyphrases(atlas: Atlas, a: Paper, b: Paper) -> list[str]:
    """The keyphrases (generated or listed) ``a`` and ``b`` share.

    Never broad ones like ``neural networks``, nor one inside another shared one.

    Args:
        atlas: the atlas (for keyphrase document frequencies).
        a: the source paper.
        b: the other paper.

    Returns:
        The shared keyphrases as ``a`` spells them, rarest in the atlas first.
    """
    _, phrase_df = _df(atlas)
    mine = {phrase_key(k): k for k in a.keyphrases + a.given_keyphrases}
    shared_keys = [k for k in dict.fromkeys(phrase_key(k) for k in b.keyphrases + b.given_keyphrases)
                   if k in mine and not _broad_phrase(k)]
    # "reinforcement learning" adds nothing next to "deep reinforcement learning"
    shared_keys = [k for k in shared_keys if not any(k != o and f" {k} " in f" {o} " for o in shared_keys)]
    return [mine[k] for k in sorted(shared_keys, key=lambda k: phrase_df.get(k, 0))]


def explain(atlas: Atlas, a: Paper, b: Paper) -> str:
    """One line saying why ``b`` is related to ``a``.

    The keyphrases they share (:func:`shared_keyphrases`, at most 3), else the title/keyphrase words they share
    (at most 3, none found in over 5% of papers) and their common topic, else "similar abstract".

    Args:
        atlas: the atlas.
        a: the source paper.
        b: the related paper.

    Returns:
        The reason.
    """
    shared = shared_keyphrases(atlas, a, b)
    if shared:
        return "shares keyphrases: " + ", ".join(shared[:3])
    word_df, _ = _df(atlas)
    wa, wb = _content_words(a), _content_words(b)
    limit = max(3, 0.05 * len(atlas.papers))  # words in over 5% of papers explain nothing
    words = [wa[k] for k in wa if k in wb and word_df.get(k, 0) <= limit][:3]
    same_topic = b.topic_id is not None and b.topic_id == a.topic_id
    parts = []
    if words:
        parts.append("both about " + ", ".join(words))
    if same_topic:
        parts.append(f"same topic: {atlas.topic_label(b.topic_id)}")
    return "; ".join(parts) or "similar abstract"


def _z(s: np.ndarray) -> np.ndarray:
    sd = float(s.std()) if len(s) else 0.0
    return (s - float(s.mean())) / sd if sd > 1e-9 else np.zeros_like(s)


def fuse(cosine: np.ndarray, lexical: np.ndarray, keyphrases: np.ndarray | None = None,
         authors: np.ndarray | None = None, dense: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Fuse the signals of a pool of candidate papers (see the module docstring).

    Args:
        cosine: ``(m,)`` representation cosines of the candidates to the source.
        lexical: ``(m,)`` TF-IDF cosines of the candidates to the source.
        keyphrases: ``(m,)`` number of specific keyphrases each shares with the source (None: zeros).
        authors: ``(m,)`` number of authors each shares with the source (None: zeros).
        dense: ``(m,)`` MiniLM cosines (the representation's dense half) of the candidates (None: not used).

    Returns:
        ``(scores, signal)``: ``(m,)`` float64 fused scores (higher first), and ``(m,)`` int the index into
        :data:`SIGNALS` of the signal the reason names: authors when any is shared, else keyphrases when any is
        shared, else words when they add more than the meaning, else meaning.

    Raises:
        ValueError: the arrays differ in length.
    """
    m = len(cosine)
    kp = np.zeros(m) if keyphrases is None else np.minimum(np.asarray(keyphrases, float), MAX_KEYPHRASES)
    au = np.zeros(m) if authors is None else (np.asarray(authors, float) > 0).astype(float)
    if not len(lexical) == len(kp) == len(au) == m:
        raise ValueError(f"signals of different lengths: {m}, {len(lexical)}, {len(kp)}, {len(au)}")
    meaning = _z(np.asarray(cosine, float))
    if dense is not None:
        if len(dense) != m:
            raise ValueError(f"signals of different lengths: {m}, {len(dense)}")
        meaning = meaning + DENSE_WEIGHT * _z(np.asarray(dense, float))
    parts = np.stack([meaning, LEXICAL_WEIGHT * _z(np.asarray(lexical, float)), KEYPHRASE_WEIGHT * kp,
                      AUTHOR_WEIGHT * au])
    # the reason named: a shared author, else shared keyphrases (specific evidence a reader can check), else the
    # words when they add more than the meaning does, else the meaning
    signal = np.where(au > 0, 3, np.where(kp > 0, 2, np.where(parts[1] > np.maximum(parts[0], 0), 1, 0)))
    return parts.sum(axis=0), signal


def _row_dots(m, rows: np.ndarray, me: int) -> np.ndarray:
    """``(len(rows),)`` float64 dot products of the sparse CSR rows ``m[rows]`` with the row ``m[me]``.

    Gathered from the CSR arrays directly (each entry of the pool's rows looked up among ``me``'s columns):
    ``m[rows] @ m[me].T`` through scipy cost ~0.3 ms a request in index checks for 100 rows of ~100 entries.
    """
    out = np.zeros(len(rows), dtype=np.float64)
    mine = m[me] if isinstance(m, StoredRows) else None
    indptr = m.indptr
    if indptr[me] == indptr[me + 1]:
        return out
    if mine is not None:  # a lazy atlas's stored TF-IDF: the rows read from the file
        order = np.argsort(mine.indices, kind="stable")
        mine_cols, mine_vals = mine.indices[order], mine.data[order].astype(np.float64)
        cols, data_at, lengths = m.gather(rows)
    else:
        indices, data, lo, hi = m.indices, m.data, indptr[me], indptr[me + 1]
        order = np.argsort(indices[lo:hi], kind="stable")
        mine_cols, mine_vals = indices[lo:hi][order], data[lo:hi][order].astype(np.float64)
        starts = indptr[rows]
        lengths = indptr[rows + 1] - starts
    total = int(lengths.sum())
    if not total:
        return out
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    if mine is None:
        at = np.repeat(starts - offsets, lengths) + np.arange(total)
        cols, data_at = indices[at], data[at]
    pos = np.minimum(np.searchsorted(mine_cols, cols), len(mine_cols) - 1)
    prod = np.where(mine_cols[pos] == cols, mine_vals[pos] * data_at, 0.0)
    nonempty = lengths > 0
    out[nonempty] = np.add.reduceat(prod, offsets[nonempty])
    return out


def _keys(atlas: Atlas):
    """Per row of ``atlas.ids``: its specific keyphrases and its authors, as two sparse 0/1 CSR matrices.

    Computed once per atlas; the keyphrase and author signals are then two :func:`_row_dots` (what two papers share).
    """
    import array

    import scipy.sparse as sp

    class Incidence:  # rows built one at a time into compact arrays (1M papers: ~14M entries, 4 bytes each)
        def __init__(self):
            self.col: dict[str, int] = {}
            self.indices = array.array("i")
            self.indptr = array.array("q", [0])

        def add(self, keys: set[str]) -> None:
            self.indices.extend(self.col.setdefault(k, len(self.col)) for k in sorted(keys))
            self.indptr.append(len(self.indices))

        def matrix(self):
            indptr = np.frombuffer(self.indptr, dtype=np.int64)
            small = indptr[-1] < 2**31 - 1  # int32 positions when they fit (scipy keeps one index dtype)
            return sp.csr_matrix((np.ones(len(self.indices), dtype=np.float32),
                                  np.frombuffer(self.indices, dtype=np.int32),
                                  indptr.astype(np.int32) if small else indptr),
                                 shape=(len(indptr) - 1, max(len(self.col), 1)))

    def make():
        phrases, authors = Incidence(), Incidence()
        row_of = atlas.row_of
        for pid, keyphrases, given, names in atlas.fields("id", "keyphrases", "given_keyphrases", "authors"):
            if pid not in row_of:
                continue
            phrases.add({k for k in (phrase_key(k) for k in keyphrases + given) if k and not _broad_phrase(k)})
            authors.add({_author_key(n) for n in names if n.strip()})
        return phrases.matrix(), authors.matrix()

    return atlas.derived("related keys", make)


def _author_key(name: str) -> str:
    return " ".join(name.lower().replace(".", " ").split())


def _shared_authors(a: Paper, b: Paper) -> list[str]:
    mine = {_author_key(n) for n in a.authors if n.strip()}
    return [n for n in b.authors if _author_key(n) in mine]


def _shared_words(terms: np.ndarray, x, row_a: int, row_b: int, k: int = 3) -> list[str]:
    """The TF-IDF terms adding most to the two rows' cosine (no term inside a chosen one, none broad)."""
    a, b = x[row_a], x[row_b]
    common, ia, ib = np.intersect1d(a.indices, b.indices, return_indices=True)
    order = np.argsort(-(a.data[ia] * b.data[ib]), kind="stable")
    out: list[str] = []
    for j in order:
        term = str(terms[common[j]])
        if _broad_phrase(term) or any(term in o or o in term for o in out):
            continue
        out.append(term)
        if len(out) == k:
            break
    return out


def _reason(atlas: Atlas, signal: str, a: Paper, b: Paper, words: list[str]) -> str:
    if signal == "authors":
        return "same authors: " + ", ".join(_shared_authors(a, b)[:2])
    if signal == "keyphrases":
        return "shares keyphrases: " + ", ".join(shared_keyphrases(atlas, a, b)[:3])
    if signal == "words" and words:
        return "shares words: " + ", ".join(words)
    why = explain(atlas, a, b)
    return "close in meaning" + ("" if why == "similar abstract" else f"; {why}")


def _pool(atlas: Atlas, me: int, size: int) -> np.ndarray:
    """The ``size`` rows nearest to row ``me`` (itself left out) that the signals re-rank.

    From the stored graph of the representation when the atlas has one (from 100k papers); else by one exact scan
    of the representation's dense half (``atlas.vectors``, the MiniLM columns: the same order, 384 of its 640
    floats a row, which keeps a request at 42k papers near its cost on MiniLM alone; the eval's pools by the full
    representation scored the same: P@10 0.665 / 0.303 vs 0.672 / 0.306).
    """
    index = neighbour_index(atlas)
    if not index.exact:
        rows, _ = index.search(paper_vectors(atlas)[me], size + 1)
    else:
        sims = atlas.vectors @ atlas.vectors[me]  # as the exact index scans (BLAS; one thread in the web app)
        sims[me] = -np.inf
        rows = top_k(sims, min(size + 1, len(sims)))
    return np.array([int(r) for r in rows if int(r) != me][:size], dtype=np.int64)


def related(atlas: Atlas, paper: Paper, k: int = 10) -> list[Related]:
    """The ``k`` papers most related to ``paper``, from meaning, words, keyphrases and authors (module docstring).

    Args:
        atlas: the atlas.
        paper: the source paper.
        k: how many papers to return.

    Returns:
        Most related first, each with the representation cosine, the fused score and a reason naming the signal
        that put it there; empty when the paper has no embedding.
    """
    if paper.id not in atlas.row_of or k <= 0:
        return []
    me = atlas.row_of[paper.id]
    rows = _pool(atlas, me, max(POOL, k))
    if not len(rows):
        return []
    vectors = paper_vectors(atlas)
    cos = vectors[rows] @ vectors[me]
    x, terms = lexical_rows(atlas)
    has_lex = x.shape[0] == len(atlas.ids) and x.shape[1] > 0
    lex = _row_dots(x, rows, me) if has_lex else np.zeros(len(rows))
    phrases, authors = _keys(atlas)
    kp, au = _row_dots(phrases, rows, me), _row_dots(authors, rows, me)
    dense = atlas.vectors[rows] @ atlas.vectors[me]
    scores, signal = fuse(cos, lex, kp, au, dense=dense)
    out = []
    for j in np.argsort(-scores, kind="stable")[:k]:
        o, sig = atlas.by_id[atlas.ids[int(rows[j])]], SIGNALS[int(signal[j])]
        words = _shared_words(terms, x, me, int(rows[j])) if sig == "words" and has_lex else []
        out.append(Related(o, float(cos[j]), _reason(atlas, sig, paper, o, words), sig, float(scores[j])))
    return out


def warm_related(atlas: Atlas) -> None:
    """Load and compute once what :func:`related` reads, so that the first request does not wait for it.

    The paper representation and its neighbour index, the TF-IDF matrix, the keyphrase and author sets and the
    document frequencies of the reasons (~5 s at 42k papers, a few ms at 860).

    Args:
        atlas: the atlas.
    """
    if len(atlas.ids):
        neighbour_index(atlas)
        lexical_rows(atlas)
        _keys(atlas)
        _df(atlas)
