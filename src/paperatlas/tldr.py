"""One-sentence TL;DRs.

Method ``"extractive v1"``: pick the abstract sentence that best says what the paper does or finds, then
compress it. A sentence scores for (a) contribution cue phrases (``we propose``, ``we show``, ``we introduce``;
cf. the "contribution statement" cues of Teufel & Moens 2002, argumentative zoning), (b) overlap of its content
words with the title, (c) a position prior (first sentences of an abstract are usually context, the contribution
comes early-to-middle), and is penalised when it opens with a discourse connective (``However``, ``Moreover``)
or a dangling reference (``This``, ``These``), which reads badly out of context. Compression removes framing
prefixes (``In this paper, we`` → ``We``) and cuts the sentence to at most :data:`MAX_WORDS` words at a clause
boundary.
"""

from __future__ import annotations

import re

from .keyphrases import STOP, norm_word
from .text import split_sentences, word_tokens

METHOD = "extractive v1"
MAX_WORDS = 40

_CUES = [
    (re.compile(r"\bwe (propose|introduce|present|develop|design|derive|prove|establish)\b", re.I), 3.0),
    (re.compile(r"\b(this|our) (paper|work) (proposes|introduces|presents|develops|shows|studies)\b", re.I), 3.0),
    (re.compile(r"\bwe (show|demonstrate|find|observe|argue|study|investigate|analy[sz]e)\b", re.I), 2.0),
    (re.compile(r"\b(outperform|state-of-the-art|improv|significantly|achiev)", re.I), 0.7),
    (re.compile(r"\b(novel|new|first)\b", re.I), 0.5),
]
_BAD_START = re.compile(r"^(however|moreover|furthermore|additionally|also|then|thus|hence|therefore|finally|"
                        r"specifically|in addition|in particular|to this end|to address|this|these|such|it|they|"
                        r"here|in contrast|as a result)\b", re.I)
_FRAMING = re.compile(r"^(in this (paper|work|study|note|article)|here|in this work|to this end|in particular|"
                      r"specifically|to address (this|these) (issue|issues|problem|problems|challenges?|limitations?)"
                      r")\s*,?\s+", re.I)


# parenthetical asides that carry no claim: "(e.g., CIFAR-10, ImageNet)", "(i.e. ...)", "(see ...)"
_ASIDE = re.compile(r"\s*\((?:e\.g\.|i\.e\.|see |cf\.|for example|for instance)[^()]*\)", re.I)


def _content(text: str) -> set[str]:
    return {norm_word(w) for w in word_tokens(text) if w.lower() not in STOP and len(w) > 2}


def score_sentences(title: str, sentences: list[str]) -> list[float]:
    """One score per sentence (higher = better TL;DR candidate); see module doc for the features."""
    title_words = _content(title)
    n = len(sentences)
    scores = []
    for i, s in enumerate(sentences):
        words = word_tokens(s)
        sc = sum(w for rx, w in _CUES if rx.search(s))
        cw = _content(s)
        if title_words:
            sc += 3.0 * len(cw & title_words) / len(title_words)
        # position prior: 0 for the very first sentence of a long abstract, peak at ~1/3, fading after
        rel = i / max(n - 1, 1)
        sc += 1.0 - abs(rel - 0.3) * 1.5 if n > 2 else 0.5
        if _BAD_START.match(s):
            sc -= 1.5
        if len(words) < 8:
            sc -= 2.0
        elif len(words) > 60:
            sc -= 1.0
        scores.append(sc)
    return scores


def compress(sentence: str, max_words: int = MAX_WORDS) -> str:
    """Remove framing (``In this paper, we propose`` → ``We propose``) and cut at ``max_words`` words,
    preferring a clause boundary (``,``/``;``/`` which``/`` that``); ends with a period."""
    s = sentence.strip()
    s = _FRAMING.sub("", s)
    s = _ASIDE.sub("", s)
    s = s[0].upper() + s[1:] if s else s
    words = s.split()
    if len(words) > max_words:
        cut = " ".join(words[:max_words])
        m = max(cut.rfind(", "), cut.rfind("; "), cut.rfind(" which "), cut.rfind(" while "), cut.rfind(" by "))
        if m > 0 and len(cut[:m].split()) >= 12:
            s = cut[:m]
        elif len(words) <= max_words + 15:
            pass  # no clean cut: a slightly long sentence beats a broken one
        else:
            s = cut.rstrip(" ,;:") + "…"
    s = s.rstrip(" ,;:")
    if s and s[-1] not in ".!?…":
        s += "."
    return s


def extract_tldr(title: str, abstract: str) -> str:
    """A one-sentence TL;DR of a paper (≤ :data:`MAX_WORDS` words); ``""`` when the abstract is empty."""
    sentences = [s for s in split_sentences(abstract) if len(word_tokens(s)) >= 4]
    if not sentences:
        return ""
    scores = score_sentences(title, sentences)
    best = max(range(len(sentences)), key=lambda i: (scores[i], -i))
    return compress(sentences[best])
