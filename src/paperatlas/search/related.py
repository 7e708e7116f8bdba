"""Related papers: nearest neighbours by embedding cosine, each with a one-line human reason."""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Paper
from ..store import Atlas
from ..text import word_tokens
from ..vocab import BROAD, GENERIC, STOP, norm_word, phrase_key
from .neighbours import neighbour_index


@dataclass
class Related:
    """A related paper.

    Attributes:
        paper: the related paper.
        similarity: its cosine similarity to the source paper.
        reason: a one-line human reason (:func:`explain`).
    """

    paper: Paper
    similarity: float
    reason: str


def _content_words(p: Paper) -> dict[str, str]:
    """Normalised content word -> display form, from the title and keyphrases of ``p``."""
    out: dict[str, str] = {}
    for w in word_tokens(" ".join([p.title, *p.keyphrases, *p.given_keyphrases])):
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
        for p in atlas.papers:
            for k in _content_words(p):
                words[k] = words.get(k, 0) + 1
            for k in {phrase_key(k) for k in p.keyphrases + p.given_keyphrases}:
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


def related(atlas: Atlas, paper: Paper, k: int = 10) -> list[Related]:
    """The ``k`` papers nearest to ``paper`` by embedding cosine, each with a one-line reason.

    Args:
        atlas: the atlas.
        paper: the source paper.
        k: how many papers to return.

    Returns:
        Most similar first, reasons from :func:`explain`; empty when the paper has no embedding.
    """
    if paper.id not in atlas.row_of:
        return []
    rows, cos = neighbour_index(atlas).search(atlas.vectors[atlas.row_of[paper.id]], k + 1)
    order = [(int(i), float(c)) for i, c in zip(rows, cos, strict=True) if atlas.ids[i] != paper.id][:k]
    return [Related(atlas.by_id[atlas.ids[i]], c, explain(atlas, paper, atlas.by_id[atlas.ids[i]]))
            for i, c in order]
