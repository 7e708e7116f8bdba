"""Authors of an atlas: every paper of one person and their co-authors, spellings merged.

Two spellings are one author when they share the build's merge key (:func:`paperatlas.sources.merge.author_key`:
first initial + last name, accents and case ignored, so ``Jeremy M. Cohen`` = ``Jeremy Cohen``) *and* their first
names agree: equal, or one is the initial of the other (``J. Cohen`` joins ``Jeremy Cohen`` when he is the only
J. Cohen with a full first name). ``Jie Chen`` and ``Jian Chen`` stay two people, which the bare merge key would
join.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, MutableSequence, Sequence
from dataclasses import dataclass, field

from .model import Paper
from .sources.merge import author_key
from .store import Atlas
from .text import slugify, strip_accents


@dataclass
class AuthorEntry:
    """One author of the atlas.

    Attributes:
        key: the author's page key (URL-safe, e.g. ``jeremy-cohen``).
        name: the spelling shown: the most frequent full spelling among their papers.
        positions: the positions of their papers in the indexed sequence (``atlas.papers``), ascending.
        spellings: every spelling seen, with how many papers use it.
        source: the indexed sequence of papers (``atlas.papers``, read on demand for a large atlas).
    """

    key: str
    name: str
    positions: MutableSequence[int] = field(default_factory=lambda: array("i"))  # 4 bytes a paper
    spellings: Counter = field(default_factory=Counter)
    source: Sequence[Paper] = field(default_factory=list, repr=False, compare=False)

    @property
    def papers(self) -> list[Paper]:
        """Their papers in the atlas, in atlas order (read from the file for a large atlas)."""
        read = getattr(self.source, "read", None)
        return read(self.positions) if read is not None else [self.source[i] for i in self.positions]


def _first(name: str) -> str:
    words = [w for w in strip_accents(name).replace(".", " ").replace("-", " ").lower().split() if w.isalpha()]
    return words[0] if len(words) > 1 else ""


@dataclass
class AuthorIndex:
    """The authors of a set of papers.

    Attributes:
        entries: ``page key -> AuthorEntry``.
        key_of: ``spelling as listed (spaces collapsed) -> page key`` of every author of the indexed papers (one
            person per spelling: a spelling names the same person on every paper).
    """

    entries: dict[str, AuthorEntry]
    key_of: dict[str, str]

    def keys_of(self, paper: Paper) -> list[tuple[str, str | None]]:
        """``(name as listed, page key or None)`` for each author of ``paper``, in order.

        Args:
            paper: a paper of the index.

        Returns:
            The pairs (None for a name with no letters).
        """
        return [(a, self.key_of.get(" ".join(a.split()))) for a in paper.authors]

    def coauthors(self, key: str) -> list[tuple[AuthorEntry, int]]:
        """The co-authors of the author ``key``, with how many papers they share, most first.

        Args:
            key: the author's page key.

        Returns:
            ``(co-author, shared papers)`` pairs, most shared first, then by name.

        Raises:
            KeyError: when ``key`` is not an author of the index.
        """
        counts: Counter = Counter()
        for p in self.entries[key].papers:
            for k in dict.fromkeys(k for _, k in self.keys_of(p)):
                if k and k != key:
                    counts[k] += 1
        return sorted(((self.entries[k], n) for k, n in counts.items()), key=lambda x: (-x[1], x[0].name))


def author_index(papers: Sequence[Paper], pause: Callable[[], None] | None = None,
                 authors: Callable[[], Iterable[list[str]]] | None = None) -> AuthorIndex:
    """Every author of ``papers`` (see the module docstring for which spellings are one author).

    Args:
        papers: the papers (a list, or ``atlas.papers``).
        pause: called every 50 papers (a web app's background warm-up waits there while requests are answered).
        authors: gives each paper's author list, in order, at each call (read twice): for a large atlas, its
            ``authors`` column (:meth:`paperatlas.store.Atlas.fields`) instead of every paper. Default: from
            ``papers``.

    Returns:
        The index; each author's papers in the order of ``papers``.
    """
    author_lists = authors or (lambda: (p.authors for p in papers))
    # spellings grouped by the build's merge key, then split by first name
    wait = pause or (lambda: None)
    by_merge: dict[str, Counter] = {}
    for i, names in enumerate(author_lists()):
        if i % 50 == 0:
            wait()
        for a in dict.fromkeys(" ".join(x.split()) for x in names if x.strip()):
            k = author_key(a)
            if k:
                by_merge.setdefault(k, Counter())[a] += 1
    person_of: dict[str, str] = {}  # spelling -> person id
    for k, spellings in by_merge.items():
        full = {_first(s) for s in spellings if len(_first(s)) > 1}
        for s in spellings:
            first = _first(s)
            if len(first) <= 1 and len(full) == 1:  # an initial: joins the one full first name it can mean
                first = next(iter(full))
            person_of[s] = f"{k}|{first}"
    people: dict[str, AuthorEntry] = {}
    for i, names in enumerate(author_lists()):
        if i % 50 == 0:
            wait()
        for a in dict.fromkeys(" ".join(x.split()) for x in names if x.strip()):
            pid = person_of.get(a)
            if pid is None:
                continue
            entry = people.setdefault(pid, AuthorEntry("", a, source=papers))
            if not entry.positions or entry.positions[-1] != i:
                entry.positions.append(i)
            entry.spellings[a] += 1
    entries: dict[str, AuthorEntry] = {}
    key_of: dict[str, str] = {}
    for i, pid in enumerate(sorted(people)):
        if i % 200 == 0:
            wait()
        e = people[pid]
        e.name = max(e.spellings, key=lambda s: (e.spellings[s], len(s), s))
        base = slugify(e.name) or "author"
        key, n = base, 2
        while key in entries:
            key, n = f"{base}-{n}", n + 1
        e.key = key
        entries[key] = e
        for spelling in e.spellings:
            key_of[spelling] = key
    return AuthorIndex(entries, key_of)


def atlas_authors(atlas: Atlas, pause: Callable[[], None] | None = None) -> AuthorIndex:
    """:func:`author_index` of the atlas's papers, computed once per atlas object (~0.1 s per 10k papers).

    Args:
        atlas: the atlas.
        pause: a background warm-up's ``wait``: the index is then made ahead with
            :meth:`~paperatlas.store.Atlas.prepare`, pausing every 50 papers.

    Returns:
        The index.
    """
    def authors() -> Iterable[list[str]]:
        return (names for (names,) in atlas.fields("authors"))

    if pause is not None:
        atlas.prepare("authors", lambda: author_index(atlas.papers, pause, authors))
    return atlas.derived("authors", lambda: author_index(atlas.papers, authors=authors))
