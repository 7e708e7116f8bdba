"""Every paper's facets as columns, so a result set's facet counts are a few numpy operations.

The search page's facet panel counts, over *every* result, the statuses, decisions, rating and citation steps,
code links and institutions. Read from one :class:`~paperatlas.facets.PaperFacets` object per result, that cost
~40-80 ms for the 20,000 results of ``graph neural networks`` in the synthetic 1M-paper atlas
(``benchmarks/million.py``); from these columns it is a gather and a ``bincount`` per facet.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ..facets import PaperFacets, sort_order

#: papers between a warm-up's pauses while the table is made
PAUSE_EVERY = 5000


class _Codes:
    """Strings → small ints, in order of first sight."""

    def __init__(self):
        self.names: list[str] = []
        self.code: dict[str, int] = {}

    def of(self, name: str | None) -> int:
        if not name:
            return -1
        c = self.code.get(name)
        if c is None:
            c = self.code[name] = len(self.names)
            self.names.append(name)
        return c


@dataclass(frozen=True)
class FacetCounts:
    """The facets of a set of papers, counted.

    Attributes:
        n: how many papers were counted.
        status: ``{status: papers}`` for every status at least one has.
        decision: ``{decision: papers}``, likewise.
        rating_mean: ``(k,)`` float64, the mean review ratings of the papers having one (any order).
        rating_spread: ``(k,)`` float64, the rating spreads of those having one.
        confidence_mean: ``(k,)`` float64, the mean reviewer confidences of those having one.
        citations: ``(k,)`` float64, the citation counts of those having one (integers, exact in float64).
        n_code: how many have a code link.
        institutions: ``{institution: occurrences}``, an institution counted once per paper listing it (twice if
            a paper lists it twice).
    """

    n: int
    status: dict[str, int]
    decision: dict[str, int]
    rating_mean: np.ndarray
    rating_spread: np.ndarray
    confidence_mean: np.ndarray
    citations: np.ndarray
    n_code: int
    institutions: dict[str, int]


class FacetTable:
    """The facets of papers ``0..n-1`` (e.g. ``atlas.papers`` in order) as numpy columns; see the module docstring.

    Args:
        facets: one :class:`~paperatlas.facets.PaperFacets` per paper, in order.
        years: each paper's year (None when unknown), in the same order; None: no year column (all NaN).
        pause: called every :data:`PAUSE_EVERY` papers while the table is made (a web app's warm-up waits there
            while requests are answered).
    """

    def __init__(self, facets: Iterable[PaperFacets], years: Iterable[int | None] | None = None,
                 pause: Callable[[], None] | None = None):
        status, decision, inst = _Codes(), _Codes(), _Codes()
        # typed arrays, not lists: a list of 1M floats holds 1M float objects (24 MB more per column)
        st, de, ic = array("i"), array("i"), array("i")
        rm, rs, cm, ci = array("d"), array("d"), array("d"), array("d")
        code = array("b")
        ptr = array("q", [0])
        nan = float("nan")
        for i, f in enumerate(facets):
            if pause is not None and i % PAUSE_EVERY == 0:
                pause()
            st.append(status.of(f.status))
            de.append(decision.of(f.decision))
            rm.append(nan if f.rating_mean is None else f.rating_mean)
            rs.append(nan if f.rating_spread is None else f.rating_spread)
            cm.append(nan if f.confidence_mean is None else f.confidence_mean)
            ci.append(nan if f.citations is None else f.citations)
            code.append(bool(f.has_code))
            ic.extend(inst.of(x) for x in f.institutions)
            ptr.append(len(ic))
        self.status, self.status_names = np.frombuffer(st, dtype=np.int32).copy(), status.names
        self.decision, self.decision_names = np.frombuffer(de, dtype=np.int32).copy(), decision.names
        self.rating_mean = np.frombuffer(rm, dtype=np.float64).copy()
        self.rating_spread = np.frombuffer(rs, dtype=np.float64).copy()
        self.confidence_mean = np.frombuffer(cm, dtype=np.float64).copy()
        self.citations = np.frombuffer(ci, dtype=np.float64).copy()
        self.has_code = np.frombuffer(code, dtype=np.int8).astype(bool)
        #: papers ``i``'s institutions are ``institution[institution_ptr[i]:institution_ptr[i + 1]]``
        self.institution_ptr = np.frombuffer(ptr, dtype=np.int64).copy()
        self.institution = np.frombuffer(ic, dtype=np.int32).copy()
        self.institution_names = inst.names
        #: ``(n,)`` float64, each paper's year, NaN when unknown (for sorting by year)
        self.year = np.full(len(st), np.nan) if years is None else \
            np.array([np.nan if y is None else y for y in years], dtype=np.float64)
        if len(self.year) != len(st):
            raise ValueError(f"{len(self.year)} years for {len(st)} papers' facets")

    def __len__(self) -> int:
        return len(self.status)

    def order_by(self, key: str, rows: np.ndarray) -> np.ndarray:
        """The order of ``rows`` by a sort key: highest first, ties in their given order, rows without a value last.

        :func:`paperatlas.facets.sort_order` (the order of :func:`paperatlas.facets.sort_papers`), on these columns.

        Args:
            key: ``"year"``, ``"rating"`` (mean review rating) or ``"citations"``.
            rows: ``(m,)`` int, papers' positions in the table.

        Returns:
            ``(m,)`` int64 indices into ``rows``.

        Raises:
            KeyError: for another key.
        """
        return sort_order({"year": self.year, "rating": self.rating_mean, "citations": self.citations}[key][rows])

    def count(self, rows: np.ndarray) -> FacetCounts:
        """The facets of the papers at ``rows``, counted.

        Args:
            rows: ``(m,)`` int, papers' positions in the table (a paper listed twice counts twice).

        Returns:
            The counts.
        """
        rows = np.asarray(rows, dtype=np.int64)

        def named(codes: np.ndarray, names: list[str]) -> dict[str, int]:
            counts = np.bincount(codes[codes >= 0], minlength=len(names))
            return {names[c]: int(counts[c]) for c in np.flatnonzero(counts).tolist()}

        def present(col: np.ndarray) -> np.ndarray:
            v = col[rows]
            return v[~np.isnan(v)]

        lo, hi = self.institution_ptr[rows], self.institution_ptr[rows + 1]
        lengths = hi - lo
        if lengths.sum():
            # every institution code of the papers: each paper's run of the flat array, concatenated
            starts = np.repeat(lo - np.cumsum(lengths) + lengths, lengths)
            inst = self.institution[starts + np.arange(int(lengths.sum()))]
        else:
            inst = np.zeros(0, dtype=np.int32)
        return FacetCounts(len(rows), named(self.status[rows], self.status_names),
                           named(self.decision[rows], self.decision_names), present(self.rating_mean),
                           present(self.rating_spread), present(self.confidence_mean), present(self.citations),
                           int(self.has_code[rows].sum()), named(inst, self.institution_names))
