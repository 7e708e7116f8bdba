"""The words of a query: which papers mention each, how rare each is, and the spelling a typo meant.

A query word *matches* a paper when the FTS5 index (porter stemming, every indexed field: title, authors,
abstract, keyphrases, TL;DR) finds it there, so ``pruning`` matches ``pruned`` and ``tickets`` matches ``ticket``.
Its weight is BM25's inverse document frequency (Robertson & Zaragoza 2009, eq. 3.3 with the +1 of Lucene):
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``. A word no paper contains is looked up, by optimal string alignment
distance (rapidfuzz), among the words of the atlas's titles, keyphrases and TL;DRs, so ``lotery tiket`` is
searched as ``lottery ticket``.

A word's papers come from :mod:`.postings` (asked of FTS5 once per atlas) as positions in ``atlas.papers``, and
the tiers of :mod:`.engine` combine them as numpy arrays.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..store import Atlas
from ..text import query_tokens
from ..vocab import STOP
from . import together
from .postings import Postings, postings, quoted, sorted_unique
from .ranking import fts_phrases
from .shapes import combos, spellings, split_first_letter

#: FTS5 operators, never searched as words
_OPERATORS = {"and", "or", "not", "near"}
PAUSE_EVERY = 50  # papers between a warm-up's pauses (~2 ms of work: a request never waits longer for the GIL)
#: a query's words that some paper uses are searched without the words no paper uses only when the papers using
#: all of them are at most this share of the atlas (a common word alone says little of what was asked)
FALLBACK_MAX_SHARE = 0.25
#: typos are corrected only in words at least this long (shorter ones have too many neighbours)
MIN_TYPO_LEN = 4


@dataclass
class Term:
    """One word of a query.

    Attributes:
        word: the word as searched (lower case; the correction when the typed word was corrected).
        typed: the word as typed (lower case).
        docs: ``(n,)`` int32, indices into ``atlas.papers`` of the papers that contain it (any indexed field,
            stemmed); empty when none does.
        idf: its BM25 inverse document frequency in the atlas (natural log; 0 < idf ≤ ln(1 + 2N + 1)).
        paper_ids: ``atlas.papers[i].id`` for each index, when the term was made by :func:`query_terms`.
    """

    word: str
    typed: str
    docs: np.ndarray
    idf: float
    paper_ids: list[str] | None = None

    @property
    def ids(self) -> frozenset[str]:
        """The ids of the papers that contain the word (needs ``paper_ids``; built on each call).

        Raises:
            ValueError: the term carries no ``paper_ids``.
        """
        if self.paper_ids is None:
            raise ValueError("this Term was made without paper_ids")
        return frozenset(self.paper_ids[int(i)] for i in self.docs)


def query_words(query: str) -> list[str]:
    """The words of ``query`` that count: lower case, deduplicated, stop words dropped.

    When every word is a stop word they are all kept (``"the who"`` still searches).

    Args:
        query: any user string.

    Returns:
        The words in query order, e.g. ``"pruning at initialization"`` → ``["pruning", "initialization"]``.
    """
    words = list(dict.fromkeys(t.lower() for t in query_tokens(query)
                               if t.lower() not in _OPERATORS and any(c.isalnum() for c in t)))
    content = [w for w in words if w not in STOP]
    return content or words


def docs_with(atlas: Atlas, word: str) -> np.ndarray:
    """Indices into ``atlas.papers`` of the papers whose indexed text contains ``word`` (FTS5, porter-stemmed).

    In any of its spellings some paper uses (:func:`forms`): ``ResNet50`` also finds ``ResNet-50``. Kept per atlas
    (:mod:`.postings`): a common word is asked of FTS5 once.

    Args:
        atlas: the atlas.
        word: one word (no FTS syntax needed: it is quoted).

    Returns:
        ``(n,)`` int32, sorted (empty when none).
    """
    px = postings(atlas)
    found = [px.get(f).docs for f in forms(atlas, word)]
    return found[0] if len(found) == 1 else np.unique(np.concatenate(found)).astype(np.int32)


def forms(atlas: Atlas, word: str) -> list[str]:
    """The spellings of ``word`` (:func:`paperatlas.search.shapes.spellings`) some paper uses.

    When none does, the word with its first letter apart (``kmeans`` → ``k means``) if a paper uses that.

    Args:
        atlas: the atlas.
        word: one query word.

    Returns:
        The phrases in :func:`~paperatlas.search.shapes.spellings`' order; ``[word]`` when no paper uses any.
    """
    px = postings(atlas)
    found = [f for f in spellings(word) if len(px.get(f).docs)]
    split = None if found else split_first_letter(word.lower())
    if split and len(px.get(split).docs):
        found = [split]
    return found or [word]


def index_phrases(atlas: Atlas, query: str) -> list[str]:
    """The phrases BM25 searches for ``query``: :func:`paperatlas.search.ranking.fts_phrases` and their :func:`forms`.

    Args:
        atlas: the atlas.
        query: any user string.

    Returns:
        Lower-case phrases, no repeats, e.g. ``["resnet50", "resnet 50"]`` for ``ResNet50`` on ICLR 2021.
    """
    return list(dict.fromkeys(f for p in fts_phrases(query) for f in [p, *forms(atlas, p)]))


def papers_with(atlas: Atlas, word: str) -> frozenset[str]:
    """Ids of the papers whose indexed text contains ``word`` (FTS5, porter-stemmed); see :func:`docs_with`.

    Args:
        atlas: the atlas.
        word: one word (no FTS syntax needed: it is quoted).

    Returns:
        The paper ids (empty when none).
    """
    return frozenset(atlas.papers[int(i)].id for i in docs_with(atlas, word))


#: the words of a query must lie within this many tokens of each other in one field of an abstract to count as
#: used together (FTS5 ``NEAR``), unless each is in a title, keyphrase or TL;DR
NEAR_TOKENS = 12


#: :func:`docs_using_together` reads the candidates' text (:mod:`.together`: ~90 µs a candidate) rather than ask
#: FTS5 over the whole table when the candidates times this are at most the words' paper counts summed: FTS5's
#: ``NEAR`` walks the words' papers (~1 ms + ~60 ns a paper on the 1M atlas: 1 ms for ``lottery ticket``, whose 425
#: candidates take 31 ms on their text, 65 ms for ``certified robustness for graph models``, whose 22 take 2 ms)
TOGETHER_TEXT_RATIO = 1500


def docs_using_together(atlas: Atlas, words: list[str], among: np.ndarray | None = None) -> np.ndarray:
    """Indices into ``atlas.papers`` of the papers that use all ``words`` together.

    Together: every word in the title, keyphrases or TL;DR, or all of them within :data:`NEAR_TOKENS` tokens of
    each other in one field (FTS5 ``NEAR``, porter-stemmed).

    A paper whose abstract says "wide" in one sentence and "generalize" five sentences later mentions the words
    of ``why do wide networks generalize`` but is not about it.

    With ``among``, only those papers are asked about, and the answer is the same as without it intersected with
    them: one word is used together wherever it is used (its postings); few candidates for how common the words are
    (:data:`TOGETHER_TEXT_RATIO`) are decided on their stored text (:func:`paperatlas.search.together
    .using_together`); more, by FTS5 over every paper.

    Args:
        atlas: the atlas.
        words: the query's words (at least one).
        among: ``(m,)`` int, indices into ``atlas.papers`` (any order, repeats allowed), or None for all papers.

    Returns:
        ``(n,)`` int32, sorted, no repeats (empty for no words).
    """
    return start_together(atlas, words, among)()


#: from this many (paper, word) pairs in the words' postings (~3 ms of FTS5's walk at ~60 ns a pair), the FTS5
#: statements of :func:`start_together` run in the atlas's worker thread (:class:`paperatlas.search.together
#: .FtsWorker`) while the caller goes on
BACKGROUND_MIN_PAIRS = 50_000


def start_together(atlas: Atlas, words: list[str], among: np.ndarray | None = None) -> Callable[[], np.ndarray]:
    """Start :func:`docs_using_together`; call what it returns for the answer.

    When FTS5 is asked over the whole table about common words (:data:`BACKGROUND_MIN_PAIRS`), its statements run in
    the atlas's worker thread, so a search can compute its cosines and BM25 meanwhile; otherwise the answer is
    computed now. A word some papers spell otherwise (:func:`forms`: ``L2`` and ``$L_2$``) is used together in any
    of its spellings (at most 8 choices of one spelling per word are asked).

    Args:
        atlas: the atlas.
        words: the query's words.
        among: as for :func:`docs_using_together`.

    Returns:
        A function of no arguments giving :func:`docs_using_together`'s answer (waiting for the worker if need be).
    """
    choices = combos([forms(atlas, w) for w in words])
    if len(choices) == 1:
        return _start_together(atlas, choices[0], among)
    started = [_start_together(atlas, c, among) for c in choices]
    return lambda: np.unique(np.concatenate([f() for f in started])).astype(np.int32)


def _start_together(atlas: Atlas, words: list[str], among: np.ndarray | None) -> Callable[[], np.ndarray]:
    """:func:`start_together` for ``words`` each spelt as given (phrases some paper uses)."""
    if not words:
        empty = np.zeros(0, dtype=np.int32)
        return lambda: empty
    px = postings(atlas)
    n = len(atlas.papers)
    pairs = sum(len(px.get(w).docs) for w in words)
    if among is not None:
        among = sorted_unique(np.asarray(among, dtype=np.int64))
        if len(words) == 1:  # NEAR of one phrase: the papers containing it (the salient ones among them)
            found = among[_mask(px.get(words[0]).docs, n)[among]].astype(np.int32)
            return lambda: found
        if px.can_tokenize and len(among) * TOGETHER_TEXT_RATIO <= pairs:
            phrases = px.tokens(words)
            if all(phrases):
                found = together.using_together(atlas, phrases, among, NEAR_TOKENS)
                return lambda: found
    answers = atlas.derived("together answers", _Answers)
    key = tuple(words)
    whole = answers.get(key)
    if whole is not None:
        found = _among(whole, n, among)
        return lambda: found
    phrases = " ".join(quoted(w) for w in words)
    salient = " AND ".join("{title keyphrases tldr}: " + quoted(w) for w in words)
    exprs = [f"NEAR({phrases}, {NEAR_TOKENS})", salient]
    worker = together.fts_worker(atlas) if pairs >= BACKGROUND_MIN_PAIRS else None
    if worker is not None:
        pending = worker.rowids(exprs)

        def finish() -> np.ndarray:
            return _among(answers.put(key, _found(px, pending.result(), n)), n, among)

        return finish
    with px.con_lock:  # the atlas's connection is shared by the server's threads
        rowids = together.match_rowids(atlas.con, exprs)
    found = _among(answers.put(key, _found(px, rowids, n)), n, among)
    return lambda: found


#: whole-table answers of FTS5's together check kept per atlas (by word list; the least recently used go first): a
#: facet clicked, a page turned or another sort asks FTS5 about the same words again (~35 ms at 1M papers for
#: ``graph neural networks``)
TOGETHER_CACHE = 256


class _Answers:
    """Word list → the sorted papers using the words together in the whole table (thread-safe, bounded)."""

    def __init__(self):
        self._kept: OrderedDict[tuple[str, ...], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> np.ndarray | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key: tuple[str, ...], found: np.ndarray) -> np.ndarray:
        with self._lock:
            self._kept[key] = found
            while len(self._kept) > TOGETHER_CACHE:
                self._kept.popitem(last=False)
        return found


def _found(px: Postings, rowids: list[int], n: int) -> np.ndarray:
    """The papers (sorted int32 positions in ``atlas.papers``) of ``rowids`` (FTS5 rowids, repeats allowed)."""
    docs = px.paper_of_rowid[np.asarray(rowids, dtype=np.int64)] if rowids else np.zeros(0, np.int32)
    return np.flatnonzero(_mask(docs[docs >= 0], n)).astype(np.int32)


def _among(found: np.ndarray, n: int, among: np.ndarray | None) -> np.ndarray:
    """``found`` (sorted) restricted to ``among`` (sorted, no repeats; None: all of it): a new sorted int32 array.

    ``found`` may be a kept answer, which no caller may change.
    """
    return found.copy() if among is None else among[_mask(found, n)[among]].astype(np.int32)


def _mask(docs: np.ndarray, n: int) -> np.ndarray:
    """``(n,)`` bool, True at ``docs`` (positions in ``atlas.papers``)."""
    out = np.zeros(n, dtype=bool)
    out[docs] = True
    return out


def papers_using_together(atlas: Atlas, words: list[str]) -> frozenset[str]:
    """Ids of the papers that use all ``words`` together (see :func:`docs_using_together`).

    Args:
        atlas: the atlas.
        words: the query's words (at least one).

    Returns:
        The paper ids.
    """
    return frozenset(atlas.papers[int(i)].id for i in docs_using_together(atlas, words))


def _idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def spelling_vocabulary(atlas: Atlas, pause: Callable[[], None] | None = None) -> dict[str, int]:
    """Word → number of papers whose title, keyphrases or TL;DR use it (lower case, letters only, ≥ 3 letters).

    Computed once per atlas (:meth:`paperatlas.store.Atlas.derived`); ~0.3 s per 10k papers.

    Args:
        atlas: the atlas.
        pause: a background warm-up's ``wait`` (:func:`paperatlas.web.busy.request_gate`), called every
            :data:`PAUSE_EVERY` papers; the value is then made with :meth:`~paperatlas.store.Atlas.prepare`.

    Returns:
        The vocabulary the spelling corrector chooses from.
    """

    def count() -> dict[str, int]:
        df: dict[str, int] = {}
        for i, (title, keyphrases, given, tldr) in enumerate(atlas.fields("title", "keyphrases", "given_keyphrases",
                                                                           "tldr")):
            if pause is not None and i % PAUSE_EVERY == 0:
                pause()
            text = " ".join([title, *keyphrases, *given, tldr or ""]).lower()
            for w in set(re.findall(r"[a-z]{3,}", text)):
                df[w] = df.get(w, 0) + 1
        return df

    if pause is not None:
        atlas.prepare("spelling vocabulary", count)
    return atlas.derived("spelling vocabulary", count)


def max_typo_distance(word: str) -> int:
    """How many edits a typo of ``word`` may have: 1 up to 9 letters, 2 from 10 (``equivarient``).

    Two edits in a short word reach too many real words (``grokking`` → ``growing``).
    """
    return 1 if len(word) < 10 else 2


def candidates_by_letter(atlas: Atlas) -> dict[str, list[str]]:
    """The words a typo may be corrected to, by first letter (computed once per atlas).

    Args:
        atlas: the atlas.

    Returns:
        First letter -> the words of :func:`spelling_vocabulary` found in at least two papers, in its order.
    """

    def index() -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for w, n in spelling_vocabulary(atlas).items():
            if n >= 2:
                out.setdefault(w[0], []).append(w)
        return out

    return atlas.derived("spelling candidates", index)


def correct_word(atlas: Atlas, word: str) -> str | None:
    """The atlas word a typo most likely meant, or None.

    A candidate starts with the same letter, is within :func:`max_typo_distance` edits by optimal string alignment
    (a swap of two neighbouring letters is one edit: ``nueral`` → ``neural``) and appears in at least two papers;
    the closest wins, then the most frequent.

    Args:
        atlas: the atlas.
        word: a lower-case word no paper contains.

    Returns:
        The correction, or None when ``word`` is short, not alphabetic, or has no close neighbour.
    """
    if len(word) < MIN_TYPO_LEN or not word.isalpha():
        return None
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    vocab = spelling_vocabulary(atlas)
    limit = max_typo_distance(word)
    choices = [w for w in candidates_by_letter(atlas).get(word[0], ()) if abs(len(w) - len(word)) <= limit]
    found = process.extract(word, choices, scorer=OSA.distance, score_cutoff=limit, limit=20)
    if not found:
        return None
    best = min(found, key=lambda m: (m[1], -vocab[m[0]], m[0]))
    return best[0]


def query_terms(atlas: Atlas, query: str, correct: bool = True) -> list[Term]:
    """The :class:`Term` of each word of ``query`` (:func:`query_words`), typos corrected.

    Args:
        atlas: the atlas.
        query: any user string.
        correct: look up a correction for words no paper contains (:func:`correct_word`).

    Returns:
        The terms in query order; a word no paper contains and with no correction has empty ``ids`` and the
        highest idf.
    """
    n = len(atlas.papers)
    ids = atlas.paper_ids
    out = []
    for w in query_words(query):
        docs = docs_with(atlas, w)
        fixed = correct_word(atlas, w) if correct and not len(docs) else None
        if fixed:
            docs = docs_with(atlas, fixed)
        out.append(Term(fixed or w, w, docs, _idf(n, len(docs)), ids))
    return out


def corrected_query(query: str, terms: list[Term]) -> str | None:
    """``query`` with each corrected word replaced, or None when no word was corrected.

    Args:
        query: the query as typed.
        terms: its terms (:func:`query_terms`).

    Returns:
        E.g. ``"lottery ticket"`` for ``"lotery tiket"``.
    """
    fixes = {t.typed: t.word for t in terms if t.word != t.typed}
    if not fixes:
        return None
    return re.sub(r"[A-Za-z]+", lambda m: fixes.get(m.group(0).lower(), m.group(0)), query)


def coverage(terms: list[Term], n_papers: int) -> np.ndarray:
    """The share of the query's idf mass each paper's text contains.

    ``1.0``: every word is in the paper. Rare words weigh more: for ``certified robustness for graph models`` a
    paper without the common ``models`` still covers ~0.9.

    Args:
        terms: the query's terms.
        n_papers: ``len(atlas.papers)``.

    Returns:
        ``(n_papers,)`` float64 in ``[0, 1]`` (0 for a paper containing no term), indexed like ``atlas.papers``.
    """
    out = np.zeros(n_papers, dtype=np.float64)
    total = sum(t.idf for t in terms)
    if total <= 0:
        return out
    for t in terms:
        out[t.docs] += t.idf / total
    return np.minimum(out, 1.0)


def as_typed(query: str, word: str) -> str:
    """A query word as the user typed it.

    Args:
        query: the query as typed.
        word: one of its words, lower case (a :class:`Term`'s ``typed``).

    Returns:
        ``word`` as ``query`` spells it (``t-SNE`` for ``t-sne``); ``word`` itself when not found.
    """
    return next((t for t in query_tokens(query) if t.lower() == word), word)


def searched_terms(terms: list[Term], n_papers: int) -> list[Term]:
    """The terms the keyword tiers search: without the words no paper uses, when the others can stand alone.

    The others stand alone when they are at least as many as the missing words and the papers using all of them
    are at most :data:`FALLBACK_MAX_SHARE` of the atlas: ``t-SNE visualization`` searches ``visualization``
    (69 of ICLR 2021's 860 papers), but ``banana bread recipe`` does not search ``recipe`` alone, nor ``federated
    learning`` ``learning`` (in most papers).

    Args:
        terms: the query's terms (:func:`query_terms`).
        n_papers: ``len(atlas.papers)``.

    Returns:
        The terms some paper uses, or ``terms`` itself (so no paper uses them all).
    """
    used = [t for t in terms if len(t.docs)]
    if not used or len(used) == len(terms) or 2 * len(used) < len(terms):
        return terms
    common = used[0].docs
    for t in used[1:]:
        common = np.intersect1d(common, t.docs, assume_unique=True)
    return used if len(common) <= FALLBACK_MAX_SHARE * n_papers else terms
