"""Finding the one paper a user means: by id, by title, or by a fragment of a title — and asking when it is several."""

from __future__ import annotations

from ..model import Paper
from ..store import Atlas
from ..text import normalize_title
from .ranking import bm25_ranking


class AmbiguousPaper(LookupError):
    """A title fragment matches several papers.

    Attributes:
        ref: the fragment as given.
        candidates: the papers it matches, best first (at most the ``limit`` of :func:`find_papers`).
    """

    def __init__(self, ref: str, candidates: list[Paper]):
        self.ref = ref
        self.candidates = candidates
        listing = "; ".join(f"{p.title} [{p.id}]" for p in candidates[:5])
        more = f" and {len(candidates) - 5} more" if len(candidates) > 5 else ""
        super().__init__(f"{ref!r} matches {len(candidates)} papers: {listing}{more}; give more of the title or "
                         "the paper id")


def _titles(atlas: Atlas) -> dict[str, list[str]]:
    """Normalised title → ids of the papers with it (computed once per atlas)."""

    def index() -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for p in atlas.papers:
            out.setdefault(normalize_title(p.title), []).append(p.id)
        return out

    return atlas.derived("normalised titles", index)


def find_papers(atlas: Atlas, ref: str, limit: int = 10) -> list[Paper]:
    """Every paper ``ref`` could mean, best first.

    The paper with that id; else the papers with exactly that (normalised) title; else the papers whose title
    contains every word of ``ref``, in BM25 order of the fragment.

    Args:
        atlas: the atlas.
        ref: a paper id, a title, or part of a title.
        limit: at most this many papers.

    Returns:
        The candidates (empty when nothing matches).
    """
    if ref in atlas.by_id:
        return [atlas.by_id[ref]]
    key = normalize_title(ref)
    titles = _titles(atlas)
    if key in titles:
        return [atlas.by_id[i] for i in titles[key]][:limit]
    words = set(key.split())
    if not words:
        return []
    found = [i for t, ids in titles.items() if words <= set(t.split()) for i in ids]
    rank = {pid: r for r, pid in enumerate(bm25_ranking(atlas, ref, limit=max(50, len(found))))}
    found.sort(key=lambda pid: (rank.get(pid, len(rank)), atlas.by_id[pid].title))
    return [atlas.by_id[i] for i in found[:limit]]


def find_paper(atlas: Atlas, ref: str) -> Paper:
    """The one paper whose id is ``ref``, or whose title is or contains it.

    Args:
        atlas: the atlas.
        ref: a paper id, a title, or a fragment of a title (every word must be in the title).

    Returns:
        The paper.

    Raises:
        AmbiguousPaper: when a fragment (not an id or a whole title) matches several papers; it lists them.
        LookupError: naming ``ref``, when nothing matches.
    """
    found = find_papers(atlas, ref, limit=50)
    if not found:
        raise LookupError(f"no paper with id or title {ref!r}; try `paperatlas search {ref!r}`")
    if len(found) > 1 and normalize_title(found[0].title) != normalize_title(ref):
        raise AmbiguousPaper(ref, found)
    return found[0]
