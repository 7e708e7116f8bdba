"""Which of some candidate papers use a query's words together, decided on their stored text in Python.

The same answer as FTS5's ``NEAR("w1" "w2" ..., N)`` or ``{title keyphrases tldr}: "w1" AND ...`` over
``papers_fts`` (:func:`paperatlas.search.terms.docs_using_together`), for the given rows only. SQLite cannot
restrict those queries to a few rows cheaply (a ``MATCH`` with ``rowid IN (...)`` is evaluated once per rowid), and
over the whole table a ``NEAR`` of common words walks their position lists in every paper having them all: at 1M
papers 10-130 ms a query even when two dozen papers are candidates.

**Exact.** Each candidate's five indexed columns are read from ``papers_fts`` (its stored text, not the
``Paper``) and tokenized as FTS5 does: the text is cut at ASCII characters other than letters and digits (the
``unicode61`` tokenizer separates tokens there and nowhere else depends on them), and each piece is tokenized by
FTS5 itself (:meth:`paperatlas.search.postings.Postings.tokenize`, porter stems: ``Networks`` → ``network``), kept
per piece (:data:`PIECE_CACHE`). A phrase occurs where its tokens follow each other in one column; the ``NEAR``
test is FTS5's own search for a window (``fts5ExprNearIsMatch`` in SQLite's ``fts5_expr.c``), on positions
``column << 32 | offset`` as FTS5 encodes them.

~90 µs a candidate once its pieces are known (reading, cutting and mapping ~300 tokens; FTS5 over the whole 42k
atlas is 1-3 ms), so :func:`paperatlas.search.terms.docs_using_together` uses it only for few candidates
(:data:`paperatlas.search.terms.TOGETHER_TEXT_RATIO`).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from itertools import chain, compress, count

import numpy as np

from ..store import Atlas, connect, file_identity, fts
from ..store.fts import match_rowids as match_rowids  # the rows FTS5 expressions match (terms.py asks it here)
from .postings import postings, sorted_unique

#: the columns where each word alone makes a paper use the words together (FTS5 column numbers of
#: :data:`paperatlas.store.fts.SALIENT`: 1, 4, 5)
SALIENT = tuple(1 + fts.COLUMNS.index(c) for c in fts.SALIENT)
#: most pieces of text whose tokens are kept (~150 bytes each); all are dropped when it is reached
PIECE_CACHE = 2_000_000
#: candidates whose text one statement reads
READ_CHUNK = 5_000
#: runs of characters FTS5's unicode61 tokenizer may join into tokens: anything but ASCII punctuation/space
_PIECE = re.compile(r"[0-9A-Za-z\x80-\U0010ffff]+")


class Tokens:
    """Piece of text → its FTS5 tokens, asked of FTS5 once per piece (thread-safe). Use :func:`tokens_of`.

    Args:
        atlas: the atlas (its postings' tokenizer is used).
    """

    def __init__(self, atlas: Atlas):
        self._px = postings(atlas)
        self._known: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def learn(self, pieces: set[str]) -> dict[str, tuple[str, ...]]:
        """Make sure every piece's tokens are known; return the mapping to read them from.

        Args:
            pieces: pieces of text (:data:`_PIECE` matches).

        Returns:
            A dict holding at least every piece of ``pieces`` (do not modify it).
        """
        with self._lock:
            known = self._known
            new = [p for p in pieces if p not in known]
            if not new:
                return known
            found = dict(zip(new, self._px.tokenize(new), strict=True))
            if len(known) + len(found) > PIECE_CACHE:  # start again with what this call needs
                known = {p: known[p] for p in pieces if p in known}
                self._known = known
            known.update(found)  # a dict handed out is never emptied: replaced instead
            return known


def tokens_of(atlas: Atlas) -> Tokens:
    """The :class:`Tokens` kept with ``atlas``."""
    return atlas.derived("text piece tokens", lambda: Tokens(atlas))


#: papers whose text pieces :func:`warm_pieces` tokenizes ahead of the first query
WARM_PAPERS = 10_000
#: pieces tokenized per FTS5 call while warming (a warm-up pauses between calls)
WARM_CHUNK = 2000


def fts_texts(con, rowids: np.ndarray, pause: Callable[[], None] | None = None,
              lock: AbstractContextManager | None = None) -> Iterator[tuple]:
    """The stored text of FTS5 rows: ``(rowid, *store.fts.COLUMNS)`` tuples, :data:`READ_CHUNK` rows a statement.

    Args:
        con: a connection to the atlas (``sqlite3.Connection``).
        rowids: ``(n,)`` int, ``papers_fts`` rowids (rows come in the order SQLite reads them, per chunk).
        pause: called before each statement (a web app's warm-up waits there while requests are answered).
        lock: held while each statement runs (:attr:`Postings.con_lock` for the atlas's shared connection).

    Yields:
        ``(rowid, title, ..., tldr)``: one tuple per row found, texts ``None`` where empty.
    """
    cur = con.cursor()
    cur.row_factory = None
    for lo in range(0, len(rowids), READ_CHUNK):
        if pause is not None:
            pause()
        with lock or contextlib.nullcontext():
            rows = fts.column_texts(cur, rowids[lo:lo + READ_CHUNK].tolist())
        yield from rows


def warm_pieces(atlas: Atlas, pause: Callable[[], None] | None = None, n_papers: int = WARM_PAPERS) -> int:
    """Tokenize the text pieces of ``n_papers`` papers spread over the atlas before anyone searches.

    The first search deciding a few hundred candidates on their text otherwise tokenized most of their pieces
    through FTS5: on the 1M atlas (``benchmarks/million.py``) ``expressive power of graph neural networks`` took
    276 ms with no piece known, 58 ms once its candidates' pieces were, 57 ms with only a 3,000-paper sample's pieces
    (``generating molecules with desired properties``: 203, 42, 90 ms). A sample's pieces hold the common words in
    their usual spellings.

    Args:
        atlas: the atlas.
        pause: called between FTS5 calls (a web app's warm-up waits there while requests are answered).
        n_papers: how many papers (every ``len / n_papers``-th FTS5 row).

    Returns:
        The number of pieces now known.
    """
    px = postings(atlas)
    if not px.can_tokenize or n_papers <= 0:
        return 0
    rowids = np.sort(px.rowid_of_paper[px.rowid_of_paper >= 0])
    pick = rowids[:: max(1, len(rowids) // n_papers)][:n_papers]
    pieces: set[str] = set()
    for _, *texts in fts_texts(px.con, pick, pause, px.con_lock):
        for text in texts:
            if text:
                pieces.update(_PIECE.findall(text))
    tok = tokens_of(atlas)
    ordered = sorted(pieces)
    for lo in range(0, len(ordered), WARM_CHUNK):
        if pause is not None:
            pause()
        tok.learn(set(ordered[lo:lo + WARM_CHUNK]))
    return len(tok.learn(set()))


def near_match(starts: list[list[int]], lengths: list[int], near: int) -> bool:
    """Whether one occurrence of each phrase lies within ``near`` tokens of the others: FTS5's ``NEAR`` test.

    A transcription of the window search of ``fts5ExprNearIsMatch`` (SQLite ``fts5_expr.c``): the occurrences
    ``p_i`` match when, for ``m`` the last of them, ``m - lengths[i] - near <= p_i <= m`` for every phrase.

    Args:
        starts: per phrase, its start positions, ascending (``column << 32 | offset``).
        lengths: per phrase, its number of tokens (≥ 1).
        near: the ``NEAR`` distance (tokens).

    Returns:
        True when such occurrences exist (False when a phrase has none).
    """
    if any(not s for s in starts):
        return False
    at = [0] * len(starts)
    top = starts[0][0]
    while True:
        matched = True
        for i, pos in enumerate(starts):
            low = top - lengths[i] - near
            p = pos[at[i]]
            if p < low or p > top:
                matched = False
                while p < low:
                    at[i] += 1
                    if at[i] == len(pos):
                        return False
                    p = pos[at[i]]
                if p > top:
                    top = p
        if matched:
            return True


def _phrase_starts(hits: dict[str, list[int]], phrase: tuple[str, ...], base: int) -> list[int]:
    """Start positions (``base + offset``) where the tokens of ``phrase`` follow each other, from ``hits``."""
    first = hits.get(phrase[0], ())
    if len(phrase) == 1:
        return [base + p for p in first]
    rest = [set(hits.get(t, ())) for t in phrase[1:]]
    return [base + p for p in first if all(p + j in s for j, s in enumerate(rest, start=1))]


def using_together(atlas: Atlas, phrases: list[tuple[str, ...]], docs: np.ndarray, near: int) -> np.ndarray:
    """The papers of ``docs`` whose stored text uses all ``phrases`` together.

    Together: each phrase in the title, keyphrases or TL;DR (any of them: FTS5 ``{title keyphrases tldr}: "w1"
    AND ...``), or one occurrence of each within ``near`` tokens (FTS5 ``NEAR(... , near)``, any one column).

    Args:
        atlas: the atlas.
        phrases: the FTS5 tokens of each query word (:meth:`paperatlas.search.postings.Postings.tokens`), each
            non-empty.
        docs: ``(n,)`` int, indices into ``atlas.papers``.
        near: the ``NEAR`` distance, tokens.

    Returns:
        ``(m,)`` int32, sorted, no repeats: the papers of ``docs`` that pass (a paper without FTS5 row never does).
    """
    px = postings(atlas)
    docs = sorted_unique(np.asarray(docs, dtype=np.int64))
    rowids = px.rowid_of_paper[docs]
    rowids = rowids[rowids >= 0]
    if not len(rowids) or not phrases:
        return np.zeros(0, dtype=np.int32)
    wanted = frozenset(chain.from_iterable(phrases))
    lengths = [len(p) for p in phrases]
    tok = tokens_of(atlas)
    known = tok.learn(set())
    passed: list[int] = []
    for rowid, *texts in fts_texts(px.con, rowids, lock=px.con_lock):
        spread: list[list[int]] = [[] for _ in phrases]
        salient = [False] * len(phrases)
        for col, text in enumerate(texts, start=1):
            if not text:
                continue
            pieces = _PIECE.findall(text)
            try:
                terms = list(chain.from_iterable(map(known.__getitem__, pieces)))
            except KeyError:  # a piece not seen yet
                known = tok.learn(set(pieces))
                terms = list(chain.from_iterable(map(known.__getitem__, pieces)))
            at = list(compress(count(), map(wanted.__contains__, terms)))
            if not at:
                continue
            hits: dict[str, list[int]] = {}
            for i in at:
                hits.setdefault(terms[i], []).append(i)
            for k, phrase in enumerate(phrases):
                s = _phrase_starts(hits, phrase, col << 32)
                if s:
                    spread[k].extend(s)
                    salient[k] = salient[k] or col in SALIENT
        if all(salient) or near_match(spread, lengths, near):
            passed.append(rowid)
    out = px.paper_of_rowid[np.asarray(passed, dtype=np.int64)] if passed else np.zeros(0, np.int32)
    return sorted_unique(out[out >= 0]).astype(np.int32)


class FtsWorker:
    """One thread with its own read-only connection to an atlas file, running FTS5 statements beside a search.

    A search's numpy work (coverage, cosines, BM25 sums) releases the GIL, and so does SQLite while it steps, so an
    FTS5 statement in this thread costs a search little more than the longer of the two: on the synthetic 1M atlas
    (``benchmarks/million.py``), ``NEAR`` and the salient-column statement for ``contrastive learning`` (34 ms) beside
    the search's own 33 ms took 35 ms. (Two FTS5 statements in two threads took longer than one after the other.)
    Use :func:`fts_worker`.

    Args:
        atlas: the atlas; its file is opened again, read-only.

    Raises:
        paperatlas.store.MalformedAtlas: the file is no longer an atlas.
        sqlite3.Error: it cannot be opened.
    """

    def __init__(self, atlas: Atlas):
        self._con = connect(atlas.path, readonly=True)
        self._con.row_factory = None
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="paperatlas-fts")

    def rowids(self, expressions: list[str]) -> Future[list[int]]:
        """Start :func:`paperatlas.store.fts.match_rowids` of each expression, one after the other, in this thread.

        Args:
            expressions: FTS5 query expressions.

        Returns:
            A future of every rowid found, in statement order (repeats kept).
        """
        return self._pool.submit(self._run, expressions)

    def close(self) -> None:
        """Let the thread end and close the connection (:meth:`paperatlas.store.Atlas.close` calls it)."""
        self._pool.shutdown(wait=True)
        self._con.close()

    def _run(self, expressions: list[str]) -> list[int]:
        return match_rowids(self._con, expressions)


def fts_worker(atlas: Atlas) -> FtsWorker | None:
    """The :class:`FtsWorker` kept with ``atlas``, or None when its file is not the one the atlas was read from.

    A build replaces the atlas file by renaming a new one over it; a served atlas keeps reading its own (its open
    connection holds it), and a connection opened now would read the new one, whose rows differ.

    Args:
        atlas: the atlas.

    Returns:
        The worker; None when the file at ``atlas.path`` was replaced or cannot be opened (then a search asks FTS5 on
        ``atlas.con`` itself).
    """

    def make() -> FtsWorker | None:
        try:
            worker = FtsWorker(atlas)
        except (OSError, sqlite3.Error, ValueError):  # MalformedAtlas is a ValueError
            return None
        if atlas.file_identity is None or file_identity(atlas.path) != atlas.file_identity:
            worker.close()  # opened on another file: not used, so not left open
            return None
        return worker

    return atlas.derived("fts worker", make)
