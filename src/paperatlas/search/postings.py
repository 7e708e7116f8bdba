"""A query word's papers and BM25 terms, fetched from FTS5 once and kept in memory per atlas.

Searching a common word through FTS5 every time was the cost of a search at scale: at 42k papers, ``learning``
is in 21k papers, and ``SELECT ... ORDER BY bm25(...)`` over an ``OR`` of the query's words scored every paper
having any of them (~40-90 ms a query, most of a search). This module asks FTS5 once per *phrase* (one quoted
query word: ``"networks"``, ``"self-supervised"``) for ``(rowid, bm25)`` of every paper containing it, and keeps
that as arrays over the atlas's paper order (:class:`Posting`).

**Exact.** FTS5's ``bm25()`` of a query is ``-Σ_i idf_i · f_i (k1 + 1) / (f_i + k1 (1 - b + b D / avgdl))`` over
the query's phrases ``i`` (``f_i``: the phrase's weighted count in the row, ``D``: the row's length, ``idf_i``
from the phrase's document count in the whole table), and for a query of one phrase it is that phrase's term
alone. So the ``bm25()`` of an ``OR`` of phrases is the sum, in phrase order, of the one-phrase values:
:func:`bm25_scores` adds the kept arrays and gets the very floats SQLite computes (same operations, same order).

Postings are keyed by the phrase's FTS5 tokens (``networks`` and ``network`` share ``("network",)``), found with
the table's own tokenizer on an in-memory FTS5 table. The statements, the columns and their ``bm25()`` weights are
the store's (:mod:`paperatlas.store.fts`); this module keeps their answers as arrays. :func:`warm` fetches the
stems found in many papers ahead of the first query (the web app runs it in a background thread); what is not
warm is fetched on first use (~1.5 µs a paper it contains: ``the``, in 42k papers, ~60 ms).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..store import Atlas, fts
from ..store.fts import BM25_WEIGHTS as BM25_WEIGHTS  # the column weights, kept with the FTS5 table in the store
from ..store.fts import quote as quoted  # noqa: F401 (search's name for it)

#: fewest (paper, phrase) pairs an atlas may keep (12 bytes each: ~96 MB); the least recently used phrases go first
BUDGET = 8_000_000
#: ... and from :data:`BUDGET` / this many papers on, this many pairs per paper (1.5 KB a paper at 12 bytes a
#: pair). The whole FTS5 index holds ~106 (paper, term) pairs per paper on the 42k ICLR/phenomena atlas and its
#: synthetic 1M copy, so every term :func:`warm` fetches stays kept: a fixed 8M pairs held half of what the 70
#: benchmark queries need at 1M papers ("the", "of", "learn" are each in ~0.5-1M papers), and each query re-read
#: FTS5 (~1.5 µs a pair: 387 ms a query on average).
PAIRS_PER_PAPER = 128
#: :func:`warm` fetches the stems found in at least this many papers (a colder one costs at most ~1.5 ms)
WARM_MIN_DOCS = 1000
#: a phrase in at least this share of the papers keeps its BM25 terms as one value per paper (:attr:`Posting.dense`):
#: adding them to a query's scores is then one contiguous sum, not a scatter over most of the papers (at 1M papers,
#: ``the`` or ``learn``: ~1 ms instead of ~5 ms), in about the memory of the pairs (8 bytes a paper against 12 a pair)
DENSE_MIN_SHARE = 0.5
#: most texts whose tokens are kept (a query word is tokenized by FTS5 once)
TOKEN_CACHE = 100_000
#: rows per statement of a fetch that may pause (:func:`warm`): ~5 ms of a common word's rows each (rowids per
#: statement when the word's number of papers is not known)
ROWID_RANGE = 4096
#: ... but at most this many statements a fetch: each statement recounts the papers containing the phrase (FTS5's
#: ``bm25()`` computes its idf so, ~50 ns a paper), so cutting ``the`` (in ~1M of 1M papers) into 4096-rowid ranges
#: cost 245 recounts (~12 s) for ~1.5 s of rows, and the 1M server's warm-up never finished
MAX_STATEMENTS = 16


@dataclass(frozen=True)
class Posting:
    """The papers containing one phrase.

    Attributes:
        docs: ``(n,)`` int32, indices into ``atlas.papers`` of the papers containing the phrase (FTS5 rowid
            order).
        bm25: ``(n,)`` float64 (float32 for a lazy atlas: :attr:`Postings.dtype`), FTS5's ``bm25()`` of the
            one-phrase query for each of those papers (negative: lower is better), with :data:`BM25_WEIGHTS`.
        dense: None, or for a phrase in at least :data:`DENSE_MIN_SHARE` of the papers ``(n_papers,)`` of the same
            dtype, its ``bm25`` at its papers and 0.0 elsewhere (then ``bm25`` is not kept: empty).
    """

    docs: np.ndarray
    bm25: np.ndarray
    dense: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        """Bytes the arrays hold."""
        return int(self.docs.nbytes + self.bm25.nbytes + (0 if self.dense is None else self.dense.nbytes))

    def values(self) -> np.ndarray:
        """``(n,)`` float64, the phrase's ``bm25()`` for each paper of ``docs`` (from ``dense`` when kept so)."""
        return self.bm25 if self.dense is None else self.dense[self.docs]


class Postings:
    """The phrase postings of one atlas (see the module docstring); thread-safe.

    Use :func:`postings` to get the one kept with an atlas.

    Args:
        atlas: the atlas (its read-only connection is used for every query).
    """

    def __init__(self, atlas: Atlas):
        self.atlas = atlas
        self.con = atlas.con
        #: held around every statement on :attr:`con` (the atlas's one connection, shared by the server's request
        #: and warm-up threads): two threads running the same SQL at once on one ``sqlite3.Connection`` step one
        #: prepared statement together ("another row available", a 500 under 50 concurrent clients at 42k papers)
        self.con_lock = threading.RLock()
        index = positions(atlas)
        rows = fts.rowid_paper_ids(self._cursor())
        rowids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        #: FTS5 rowid -> index into atlas.papers (-1: no such paper)
        self.paper_of_rowid = np.full(int(rowids.max(initial=0)) + 1, -1, dtype=np.int32)
        self.paper_of_rowid[rowids] = np.fromiter((index.get(r[1], -1) for r in rows), np.int32, len(rows))
        #: index into atlas.papers -> its FTS5 rowid (-1: not in the index)
        self.rowid_of_paper = np.full(len(atlas.papers), -1, dtype=np.int64)
        mapped = self.paper_of_rowid[rowids] >= 0
        self.rowid_of_paper[self.paper_of_rowid[rowids[mapped]]] = rowids[mapped]
        #: the dtype of the kept BM25 terms: float64 (sums equal to SQLite's ``bm25()``), float32 for a lazy atlas
        #: (:attr:`paperatlas.store.Atlas.lazy`, from 200,000 papers: 8 bytes a pair instead of 12, ~375 MB less at
        #: 1M papers; the sums then differ from SQLite's in the 7th significant digit)
        self.dtype = np.float32 if atlas.lazy else np.float64
        self._cache: OrderedDict[tuple[str, ...], Posting] = OrderedDict()
        self._size = 0
        #: most (paper, phrase) pairs kept: :func:`budget` of the atlas's size
        self.budget = budget(len(atlas.papers))
        self._lock = threading.Lock()
        self._tok_lock = threading.Lock()
        self._tok = self._make_tokenizer()
        self._tokens_of: dict[str, tuple[str, ...]] = {}  # text -> its tokens (bounded by TOKEN_CACHE)

    def _cursor(self) -> sqlite3.Cursor:
        """A cursor on the atlas's connection giving plain tuples (cheaper than its ``sqlite3.Row``)."""
        cur = self.con.cursor()
        cur.row_factory = None
        return cur

    def _make_tokenizer(self) -> sqlite3.Connection | None:
        """An in-memory FTS5 table that tokenizes like ``papers_fts``, or None when that cannot be made.

        It has its own connection: the atlas's stays read-only and out of any transaction.
        """
        return fts.make_tokenizer(self.con)

    @property
    def can_tokenize(self) -> bool:
        """Whether :meth:`tokenize` works (an FTS5 table tokenizing like ``papers_fts`` could be made)."""
        return self._tok is not None

    def tokens(self, texts: list[str]) -> list[tuple[str, ...]]:
        """The FTS5 tokens of each text, as ``papers_fts`` indexes them (``"Networks"`` → ``("network",)``).

        Args:
            texts: strings (each read as plain text, never as query syntax).

        Returns:
            One tuple per text, its tokens in order; without a tokenizer, the text after a NUL character (a key,
            not tokens).
        """
        if self._tok is None:
            return [("\0" + t,) for t in texts]
        known = self._tokens_of
        got = [known.get(t) for t in texts]
        if all(k is not None for k in got):
            return got  # type: ignore[return-value]
        new = list(dict.fromkeys(t for t, k in zip(texts, got, strict=True) if k is None))
        found = dict(zip(new, self.tokenize(new), strict=True))
        with self._tok_lock:
            if len(known) + len(found) > TOKEN_CACHE:
                known.clear()
            known.update(found)
        return [k if k is not None else found[t] for t, k in zip(texts, got, strict=True)]

    def tokenize(self, texts: list[str]) -> list[tuple[str, ...]]:
        """The FTS5 tokens of each text, as ``papers_fts`` indexes them; nothing kept (see :meth:`tokens`).

        Args:
            texts: strings (plain text, never query syntax).

        Returns:
            One tuple per text, its tokens in order (empty for a text without a token).

        Raises:
            RuntimeError: the atlas's tokenizer could not be made (:meth:`tokens` then keys by text instead).
        """
        if self._tok is None:
            raise RuntimeError("no FTS5 tokenizer like papers_fts's")
        with self._tok_lock:
            return fts.tokenize(self._tok, texts)

    def get(self, text: str, key: tuple[str, ...] | None = None,
            pause: Callable[[], None] | None = None, n_docs: int | None = None) -> Posting:
        """The posting of the phrase ``text`` (kept; fetched from FTS5 on first use).

        Args:
            text: one query word or phrase as typed (``"Networks"``, ``"self-supervised"``).
            key: its tokens (:meth:`tokens`), when already known.
            pause: called between chunks of rows while fetching (lets a background warm-up give way).
            n_docs: how many papers contain it, when known (sizes the chunks: see :meth:`_fetch`).

        Returns:
            The posting; empty arrays when no paper contains the phrase (or it has no token).
        """
        key = key if key is not None else self.tokens([text])[0]
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        found = self._fetch(text if key else "", pause, n_docs)
        with self._lock:
            if key not in self._cache:
                self._cache[key] = found
                self._size += len(found.docs)
                while self._size > self.budget and len(self._cache) > 1:
                    _, old = self._cache.popitem(last=False)
                    self._size -= len(old.docs)
        return found

    def _fetch(self, text: str, pause: Callable[[], None] | None, n_docs: int | None = None) -> Posting:
        """FTS5's ``(rowid, bm25)`` of every row containing the phrase ``text``, as a :class:`Posting`.

        With ``pause``, the rows are asked for in rowid ranges, each a whole statement, and ``pause`` is called
        between them: a paused fetch holds no statement open, so no read lock that would make a write to the atlas
        (a like, a note) wait. ``bm25()`` of a range is the same float (its idf and average length are the whole
        table's). The ranges: ``n_docs / ROWID_RANGE`` equal parts of the rowids (at least 1, at most
        :data:`MAX_STATEMENTS`) when ``n_docs`` (the papers containing the phrase) is given, else
        :data:`ROWID_RANGE` rowids each.
        """
        rows: list[tuple[int, float]] = []
        if text:
            cur = self._cursor()
            if pause is None:
                with self.con_lock:
                    rows = fts.phrase_bm25(cur, fts.quote(text))
            else:
                span = len(self.paper_of_rowid)
                step = ROWID_RANGE
                if n_docs is not None:
                    parts = min(MAX_STATEMENTS, max(1, -(-n_docs // ROWID_RANGE)))
                    step = max(1, -(-span // parts))
                for lo in range(0, span, step):
                    pause()
                    with self.con_lock:
                        rows += fts.phrase_bm25(cur, fts.quote(text), (lo, lo + step))
        if not rows:
            return Posting(np.zeros(0, np.int32), np.zeros(0, self.dtype))
        docs = self.paper_of_rowid[np.fromiter((r[0] for r in rows), np.int64, len(rows))]
        bm25 = np.fromiter((r[1] for r in rows), np.float64, len(rows)).astype(self.dtype, copy=False)
        keep = docs >= 0
        if not keep.all():
            docs, bm25 = docs[keep], bm25[keep]
        docs = np.ascontiguousarray(docs, dtype=np.int32)
        n = len(self.rowid_of_paper)
        if n and len(docs) >= DENSE_MIN_SHARE * n:
            dense = np.zeros(n, dtype=self.dtype)
            dense[docs] = bm25
            return Posting(docs, np.zeros(0, self.dtype), dense)
        return Posting(docs, bm25)

    def cached(self) -> int:
        """How many (paper, phrase) pairs are kept."""
        return self._size

    def frequent_stems(self, min_docs: int) -> list[tuple[str, int]]:
        """``(term, papers containing it)`` of the index's terms in at least ``min_docs`` papers, most first.

        Args:
            min_docs: the fewest papers.

        Returns:
            The terms (FTS5 tokens: porter stems), empty without the ``fts5vocab`` module.
        """
        with self.con_lock:
            return fts.frequent_terms(self.con, min_docs)


def budget(n_papers: int) -> int:
    """Most (paper, phrase) pairs the postings of an atlas of ``n_papers`` papers keep (12 bytes each).

    Args:
        n_papers: papers in the atlas (≥ 0).

    Returns:
        ``max(BUDGET, PAIRS_PER_PAPER * n_papers)``: 8M (~96 MB) up to 62,500 papers, then 128 a paper (128M pairs,
        ~1.5 GB, at 1M papers; what is kept is bounded by the index itself: ~106M pairs, ~1.2 GB there).
    """
    return max(BUDGET, PAIRS_PER_PAPER * max(0, n_papers))


def sorted_unique(docs: np.ndarray) -> np.ndarray:
    """``docs`` sorted without repeats (``np.unique``'s answer), by a sort unless they already are.

    numpy 2.4's ``np.unique`` (hash-based) took 17 ms for 20,000 positions and 153 ms for 100,000 on this project's
    benchmark machine; a sort and a comparison of neighbours, 1.5 and 13 ms.

    Args:
        docs: ``(m,)`` int.

    Returns:
        ``(k,)`` same dtype, strictly increasing.
    """
    if len(docs) < 2 or bool((docs[1:] > docs[:-1]).all()):
        return docs
    out = np.sort(docs)
    return out[np.concatenate(([True], out[1:] != out[:-1]))]


def positions(atlas: Atlas) -> dict[str, int]:
    """Paper id -> its index in ``atlas.papers`` (computed once per atlas).

    Args:
        atlas: the atlas.

    Returns:
        The mapping.
    """
    if atlas.lazy:
        return atlas.by_id.position
    return atlas.derived("paper positions", lambda: {pid: i for i, pid in enumerate(atlas.paper_ids)})


def postings(atlas: Atlas) -> Postings:
    """The :class:`Postings` kept with ``atlas`` (made on first use: ~0.1 s at 42k papers).

    Args:
        atlas: the atlas.

    Returns:
        Its postings.
    """
    return atlas.derived("phrase postings", lambda: Postings(atlas))


def bm25_scores(atlas: Atlas, phrases: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """FTS5's ``bm25()`` of the query ``"p1" OR "p2" OR ...`` for every paper, from the kept postings.

    Args:
        atlas: the atlas.
        phrases: the query's phrases in order (:func:`paperatlas.search.ranking.fts_query`'s tokens).

    Returns:
        ``(scores, matched)``: ``(n_papers,)`` float64 equal to SQLite's ``bm25(papers_fts, 0, 10, 4, 1, 5, 2)``
        (lower is better; 0.0 where nothing matched) and ``(n_papers,)`` bool, the papers the query matches.
    """
    n = len(atlas.papers)
    scores = np.zeros(n, dtype=np.float64)
    matched = np.zeros(n, dtype=bool)
    if not phrases:
        return scores, matched
    px = postings(atlas)
    for text, key in zip(phrases, px.tokens(phrases), strict=True):
        p = px.get(text, key)
        if p.dense is not None:
            scores += p.dense  # x + 0.0 is x: the same floats as adding at its papers only
        else:
            scores[p.docs] += p.bm25
        matched[p.docs] = True
    return scores, matched


def warm(atlas: Atlas, pause: Callable[[], None] | None = None, min_docs: int = WARM_MIN_DOCS,
         words: list[str] | None = None) -> int:
    """Fetch the postings of the terms in at least ``min_docs`` papers before anyone asks (most frequent first).

    A term is fetched through the word ``words`` lists that FTS5 indexes as it (or through itself); stops at
    the postings' budget (:func:`budget`). ~5 s at 42k papers (3.4M pairs, ~40 MB) with ``min_docs`` 1000.

    Args:
        atlas: the atlas.
        pause: called between statements (a web app's warm-up waits there while requests are answered; no
            statement is open then).
        min_docs: the fewest papers a term must be in.
        words: plain words to reach stems that are not their own stem (``nois`` through ``noise``).

    Returns:
        The number of terms fetched.
    """
    px = postings(atlas)
    stems = px.frequent_stems(min_docs)
    if not stems or px._tok is None:
        return 0
    surface = {s: s for s, _ in stems}
    own = px.tokens([s for s, _ in stems])
    missing = {s for (s, _), k in zip(stems, own, strict=True) if k != (s,)}
    if missing and words:
        for w, k in zip(words, px.tokens(words), strict=True):
            if len(k) == 1 and k[0] in missing:
                surface[k[0]] = w
                missing.discard(k[0])
    done = 0
    for s, n_docs in stems:
        if s in missing:
            continue
        if px.cached() >= px.budget:
            break
        px.get(surface[s], (s,), pause, n_docs)
        done += 1
    return done
