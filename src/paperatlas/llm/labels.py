"""Optional generative rewriting of topic labels (``build --label-backend openai|smollm2``).

The extractive c-TF-IDF label (:mod:`paperatlas.enrich.labels`) stays the default. With a backend
(:mod:`paperatlas.llm.backends`: the same OpenAI-compatible endpoint or bundled SmolLM2 as the generative TL;DRs of
:mod:`paperatlas.llm.tldr`), each topic's label is rewritten from its extractive label, top keyphrases and a few of
its paper titles. An answer is used only when it is a name a curator would write and the topic's own words support
it (:func:`acceptable`); otherwise the extractive label stays. The method string of a rewritten topic ends with
``"; label by <backend method>"``.
"""

from __future__ import annotations

import re

from ..model import Topic
from ..text import word_tokens
from ..vocab import STOP, norm_word

SYSTEM_PROMPT = (
    "You name research topics for a conference programme, like a curator writing a table of contents. Reply with "
    "ONE topic name of 1 to 5 words in sentence case (e.g. 'Lottery tickets and pruning', 'Neural tangent kernel "
    "theory', 'Offline reinforcement learning'). Use the field's standard terms. No quotes, no punctuation at the "
    "end, no explanation."
)
#: the most words an accepted label may have
MAX_WORDS = 5
#: share of an answer's content words that must occur in the topic's keyphrases or titles
MIN_SUPPORT = 0.6


def label_messages(label: str, keyphrases: list[str], titles: list[str]) -> list[dict[str, str]]:
    """The chat messages asking for a better name of one topic.

    Args:
        label: the topic's current (extractive) label.
        keyphrases: its top keyphrases (at most 10 are shown).
        titles: its papers' titles (at most 8 are shown).

    Returns:
        A system message (:data:`SYSTEM_PROMPT`) and a user message.
    """
    lines = "\n".join(f"- {t}" for t in titles[:8])
    user = (f"Current name: {label}\nTop keyphrases: {'; '.join(keyphrases[:10])}\nSome papers:\n{lines}\n\n"
            "Topic name (1-5 words):")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def clean_label(answer: str) -> str:
    """Clean a model answer into a candidate label.

    Args:
        answer: the model's raw answer (None counts as empty).

    Returns:
        The first non-blank line without quotes, a leading ``Current name:``, anything before a colon, a trailing
        parenthesis and trailing punctuation, in sentence case; ``""`` when nothing is left.
    """
    line = next((x for x in (answer or "").splitlines() if x.strip()), "").strip()
    line = re.sub(r"^((current|new|better|suggested|topic)\s+)*(name|label|topic)\s*[:\-]\s*", "", line, flags=re.I)
    if ":" in line:  # "Attention: Reinforcement learning" - the name is what follows the colon
        line = line.rsplit(":", 1)[1]
    line = re.sub(r"\s*\([^)]*\)\s*$", "", line.strip(" \"'`*_.;:!"))  # a trailing "(GANs)"
    line = line.strip(" \"'`*_.;:!").strip()
    return line[:1].upper() + line[1:] if line else ""


def acceptable(label: str, keyphrases: list[str], titles: list[str], taken: set[str]) -> tuple[bool, str]:
    """Decide whether a generated ``label`` is usable.

    It must have 1-5 words, not be already used by another topic (case-insensitive), not open like a sentence
    (``A new approach to ...``), not be cut off after a function word, not be the start of one of the topic's paper
    titles, and have at least :data:`MIN_SUPPORT` of its content words found in the topic's keyphrases and titles
    (so the model cannot name a topic after something its papers do not say).

    Args:
        label: the cleaned answer (:func:`clean_label`).
        keyphrases: the topic's keyphrases.
        titles: its papers' titles.
        taken: case-folded labels of the other topics.

    Returns:
        ``(ok, reason)``: the reason is ``"ok"`` or says why the label was rejected.
    """
    words = label.split()
    if not words:
        return False, "empty"
    if len(words) > MAX_WORDS:
        return False, f"{len(words)} words"
    if label.casefold() in taken:
        return False, "duplicate"
    if words[0].lower() in ("a", "an", "the", "this", "these", "our"):
        return False, "starts like a sentence"
    if words[-1].lower() in STOP or words[-1].lower() in ("and", "for", "of", "with", "to", "in", "on", "via"):
        return False, "cut off"
    if any(t.casefold().startswith(label.casefold()) for t in titles):
        return False, "copies a paper title"
    evidence = {norm_word(w) for text in [*keyphrases, *titles] for w in word_tokens(text)}
    content = [norm_word(w) for w in word_tokens(label) if w.lower() not in STOP and len(w) > 2]
    if not content:
        return False, "no content words"
    support = sum(w in evidence for w in content) / len(content)
    if support < MIN_SUPPORT:
        return False, f"unsupported words ({support:.0%} found)"
    return True, "ok"


def rewrite_labels(backend, topics: list[Topic], titles: dict[int, list[str]], only: set[int] | None = None,
                   progress=None) -> dict[int, str]:
    """Rewrite the labels of ``topics`` in place with ``backend``.

    An accepted label also appends ``"; label by <backend method>"`` to the topic's method. A backend error does
    not stop the rewrite; it is reported per topic.

    Args:
        backend: has ``complete(messages, max_tokens)`` and ``method`` (a :class:`~.backends.ChatBackend`).
        topics: the topics; their ``label`` and ``method`` are changed in place.
        titles: topic id → its papers' titles (most central first).
        only: limits the rewrite to these topic ids (labels kept from an earlier build are not rewritten); None
            for all.
        progress: optional callback; ``progress(n)`` is called after each topic.

    Returns:
        ``topic id -> reason`` for every topic whose answer was rejected or whose backend call failed (the
        extractive label then stays).
    """
    from .backends import BackendError

    taken = {t.label.casefold() for t in topics}
    rejected: dict[int, str] = {}
    for t in topics:
        if only is not None and t.id not in only:
            continue
        try:
            answer = clean_label(backend.complete(label_messages(t.label, t.keyphrases, titles.get(t.id, [])),
                                                  max_tokens=16))
        except BackendError as e:
            rejected[t.id] = e.short
        else:
            ok, why = acceptable(answer, t.keyphrases, titles.get(t.id, []), taken - {t.label.casefold()})
            if ok and answer.casefold() != t.label.casefold():
                taken.discard(t.label.casefold())
                taken.add(answer.casefold())
                t.label = answer
                t.method = f"{t.method}; label by {backend.method}"
            elif not ok:
                rejected[t.id] = why
        if progress:
            progress(1)
    return rejected
