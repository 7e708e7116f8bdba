"""The reading order of an answer's sentences: each sentence's role (background, introduction, method, finding).

Split out of :mod:`paperatlas.ask`, which re-exports :func:`sentence_role`, :func:`background_places`,
:func:`reading_order` and :data:`ROLES`.
"""

from __future__ import annotations

import re

#: A general statement of what something is (a definition), not about the paper.
_DEFINES = re.compile(r"^(?!(?:we|our|this|these|those|it|its|they|in|here|to|however|but|for|by|using|with|"
                      r"unlike|finally|moreover|further|furthermore|then|thus|also)\b)[^,;:()]{2,80}?\b(?:(?:is|are)\s+"
                      r"(?:a|an|the|one|two|ones|often|typically|widely|commonly|usually|increasingly|known|defined|"
                      r"called|used|becoming|\w+ly\s+(?:used|known))|states?|refers? to|deals? with)\b", re.I)
#: The paper speaks of itself: "we", "our", "this paper", "here".
_SELF = re.compile(r"\b(?:we|our|us|this (?:paper|work|study|article))\b|^(?:here|in this)\b", re.I)
_INTRODUCES = re.compile(r"^(?:in this (?:paper|work)|here\b)|\b(?:we|this (?:paper|work))\s+(?:\w+ly\s+)?"
                         r"(?:propose|introduce|present|develop|describe|study|investigate|consider|explore|address|"
                         r"formulate|design|define|tackle|focus|offer|provide)\w*\b", re.I)
_FINDS = re.compile(r"\b(?:we (?:\w+ly )?(?:show|find|found|demonstrate|observe|prove|achieve|obtain|report|"
                    r"confirm|verify|evaluate)\w*|results?|outperform\w*|state[- ]of[- ]the[- ]art|experiments?|"
                    r"empirical(?:ly)?|achiev\w+|speed-?ups?|significantly|surpass\w*|better than)\b|\d", re.I)
#: A sentence opening with a word that points back ("This phenomenon …", "However, …") leans on the one before it:
#: it cannot open a paragraph.
_LEANS = re.compile(r"^\W*(?:this|these|those|such|however|but|thus|hence|moreover|also|yet|still|it|its|they|their|"
                    r"despite|unfortunately|nevertheless|instead|additionally|furthermore|further|similarly)\b", re.I)
#: Reading roles: background/definition, introduction, method/other, finding.
ROLES = ("defines", "introduces", "method", "finds")
#: The block of a paper's sentences each role reads in: background first, findings last, introduction and method
#: in the abstract's own order between them.
_BLOCK = {"defines": 0, "introduces": 1, "method": 1, "finds": 2}


def sentence_role(text: str, source: str, background: bool = False) -> str:
    """Where a sentence belongs in a paragraph: one of :data:`ROLES`.

    A sentence that does not speak of the paper (no "we", "our", "this paper") and states what something is (``X is
    a …``, ``X states that …``, ``X deals with …``) defines. Otherwise a TL;DR introduces its paper, and so does a
    sentence introducing the paper's contribution (``We propose/introduce/present/study …``, ``In this paper …``);
    a sentence not speaking of the paper that opens the abstract (``background``: it comes before the abstract's
    first sentence speaking of the paper, as abstracts open with their field's context) gives background (also
    ``"defines"``) unless it opens with a word pointing back (``This …``, ``However …``). Of the rest, one stating
    a result (``we show``, ``outperforms``, ``state-of-the-art``, experiments, numbers) finds, and the others
    describe the method.

    Args:
        text: the sentence.
        source: ``"tldr"`` or ``"abstract"``.
        background: the sentence precedes its abstract's first sentence speaking of the paper.

    Returns:
        ``"defines"``, ``"introduces"``, ``"method"`` or ``"finds"``.
    """
    if not _SELF.search(text) and _DEFINES.search(text):
        return "defines"
    if source == "tldr" or _INTRODUCES.search(text):
        return "introduces"
    if not _SELF.search(text) and background and not _LEANS.match(text):
        return "defines"
    return "finds" if _FINDS.search(text) else "method"


def background_places(fields: list[tuple[str, str]]) -> int:
    """The place of the first field speaking of the paper (:func:`sentence_role`'s ``background`` boundary).

    Args:
        fields: a paper's ``(source, text)`` fields in order (the TL;DR, then the abstract's sentences).

    Returns:
        The index of the first abstract sentence that says "we"/"our"/"this paper" or introduces the paper;
        ``len(fields)`` when none does.
    """
    for i, (source, text) in enumerate(fields):
        if source != "tldr" and (_SELF.search(text) or _INTRODUCES.search(text)):
            return i
    return len(fields)


def reading_order(items: list[tuple[int, int, str]], keys: list | None = None) -> list:
    """Order an answer's sentences to read as a paragraph.

    A paper's sentences stay together. Papers with a sentence that defines or gives background (role
    ``"defines"``) come first, then the others, each group in rank order; within a paper the background comes
    first and the findings last (see :func:`sentence_role`), each block in the paper's own order (the TL;DR
    first, then the abstract's sentences), so introduction and method keep the order their authors gave them.
    Deterministic: ties break on rank and place.

    Args:
        items: one ``(paper rank, place in the paper, role)`` per sentence (place 0 = the TL;DR when the paper has
            one, then the abstract's sentences in order; role one of :data:`ROLES`).
        keys: what to return for each item (default: the items' indices).

    Returns:
        ``keys`` (or indices) in reading order.
    """
    keys = list(range(len(items))) if keys is None else keys
    defining = {rank for rank, _place, role in items if role == ROLES[0]}

    def key(i: int) -> tuple:
        rank, place, role = items[i]
        return (rank not in defining, rank, _BLOCK[role], place)

    return [keys[i] for i in sorted(range(len(items)), key=key)]
