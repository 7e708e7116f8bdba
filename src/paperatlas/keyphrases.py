"""Keyphrase extraction: 3-8 phrases per paper, most specific first.

Method ``"ctfidf-phrases v1"``: candidate phrases are runs of 1-4 non-stop words taken from the title and the
abstract (phrases never cross punctuation or stop words, after Rose et al. 2010, RAKE). Each candidate is
scored by its frequency in the paper (title occurrences count :data:`TITLE_WEIGHT` times) times its inverse
document frequency over the corpus being built, times a length bonus for multi-word phrases. Phrases made only of
generic research vocabulary (``method``, ``results``, ``propose``) are dropped; near-duplicates (plural/singular,
sub-phrases of a chosen phrase) are removed.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

METHOD = "ctfidf-phrases v1"
TITLE_WEIGHT = 3.0
MAX_WORDS = 4

#: Words that are never a keyphrase on their own and never start or end one (research-prose filler).
GENERIC = frozenset("""
paper papers work works approach approaches method methods methodology result results propose proposed proposes
present presents show shows shown demonstrate demonstrates novel new existing prior previous recent state art
problem problems performance performances task tasks setting settings based using use used framework frameworks
experiment experiments experimental empirical empirically effective effectiveness efficient efficiently various
different significant significantly improve improves improved improvement improvements achieve achieves achieved
technique techniques study studies studied analysis analyze analyse provide provides benchmark benchmarks
extensive large small simple key main important challenging challenge challenges able ability way ways number
also furthermore however moreover addition additionally specifically particular particularly general generally
outperform outperforms outperforming compared comparable standard strong well better best high low training
introduce introduces introduced called named termed leads lead allow allows allowing enable enables enabling
demonstrating showing propose proposing given like including typically often widely commonly current first
second one two three paradigm aim aims goal goals code available github com https http www org
predict predicting extract extracting capturing capture avoiding avoid boosting boost enhance enhancing apply
applying learn learns learned learnt make makes making obtain obtaining remain remains require requires
provides providing having instead yielding yields yield leading resulting result suffer suffers consider
considers considering called via typically thereby whereas""".split())

#: ``-ly`` words that are nouns/adjectives, not adverbs (adverbs never belong in a keyphrase).
NOT_ADVERBS = frozenset("family anomaly supply early only assembly monopoly italy july rely apply reply".split())

#: Words that may sit inside or at the end of a phrase (``reinforcement learning``, ``graph neural networks``) but
#: are too broad to be a keyphrase alone or to start one.
BROAD = frozenset("""
learning training model models data dataset datasets algorithm algorithms network networks neural deep trained
train representation representations function functions system systems
""".split())

STOP = frozenset(ENGLISH_STOP_WORDS) | {"via", "et", "al", "eg", "ie", "wrt", "e.g", "i.e", "can", "may", "might"}

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*|[.,;:!?()\[\]{}\"$=<>/\\]")


def norm_word(w: str) -> str:
    """Lower-case and strip a plural ``s`` (``networks`` → ``network``, keeps ``loss``, ``analysis``)."""
    w = w.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "ics")):
        return w[:-1]
    return w


def phrase_key(phrase: str) -> str:
    """Key that identifies spelling variants of a phrase: ``"Neural Networks"`` and ``"neural network"``
    share one key (words through :func:`norm_word`, hyphens as spaces)."""
    return " ".join(norm_word(w) for w in phrase.replace("-", " ").split())


def candidates(text: str) -> list[str]:
    """All candidate phrases in ``text`` in order of occurrence (repeats kept), original casing.

    A candidate is a contiguous run of 1-:data:`MAX_WORDS` words containing no stop word or punctuation, that
    neither starts nor ends with a :data:`GENERIC` word, and whose words are not all digits.
    """
    runs: list[list[str]] = [[]]
    for tok in _TOKEN.findall(text):
        if not tok[0].isalpha() or tok.lower() in STOP:
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append(tok)
    out: list[str] = []
    for run in runs:
        for n in range(1, MAX_WORDS + 1):
            for i in range(len(run) - n + 1):
                words = run[i:i + n]
                first, last = words[0].lower(), words[-1].lower()
                if first in GENERIC or last in GENERIC:
                    continue
                if n == 1 and (len(first) < 3 or first in BROAD):
                    continue
                if first in BROAD and first not in ("neural", "deep"):
                    continue
                if any(w.lower().endswith("ly") and len(w) > 4 and w.lower() not in NOT_ADVERBS for w in words):
                    continue
                out.append(" ".join(words))
    return out


def _surface(phrase: str) -> str:
    """Display form: lower-case unless a word is an acronym or mixed case (``BERT``, ``ResNet``)."""
    return " ".join(w if any(c.isupper() for c in w[1:]) or (w.isupper() and len(w) > 1) else w.lower()
                    for w in phrase.split())


def _overlaps(a: str, b: str) -> bool:
    """True when phrase keys ``a`` and ``b`` are nested or share more than half of the shorter one's words
    (``real time recurrent`` vs ``time recurrent learning``)."""
    if f" {a} " in f" {b} " or f" {b} " in f" {a} ":
        return True
    wa, wb = a.split(), b.split()
    shared = len(set(wa) & set(wb))
    return shared * 2 > min(len(wa), len(wb)) and min(len(wa), len(wb)) > 1


class KeyphraseExtractor:
    """Corpus-aware keyphrase extractor (see module doc).

    ``fit(docs)`` learns document frequencies from ``(title, abstract)`` pairs; ``extract(title, abstract)``
    returns between ``min_k`` and ``max_k`` phrases (fewer only when the text has fewer candidates).
    """

    method = METHOD

    def __init__(self, min_k: int = 3, max_k: int = 8):
        self.min_k, self.max_k = min_k, max_k
        self.df: Counter[str] = Counter()
        self.n_docs = 0

    def fit(self, docs: Iterable[tuple[str, str]]) -> KeyphraseExtractor:
        """Count in how many papers each phrase key occurs. Returns ``self``."""
        for title, abstract in docs:
            self.df.update({phrase_key(c) for c in candidates(f"{title}. {abstract}")})
            self.n_docs += 1
        return self

    def score(self, title: str, abstract: str) -> list[tuple[str, float]]:
        """All candidates of one paper with scores, best first, one entry per phrase key."""
        tf: Counter[str] = Counter()
        forms: dict[str, Counter[str]] = {}
        for weight, text in ((TITLE_WEIGHT, title), (1.0, abstract)):
            for c in candidates(text):
                k = phrase_key(c)
                tf[k] += weight
                forms.setdefault(k, Counter())[_surface(c)] += 1
        n = max(self.n_docs, 1)
        scored = []
        for k, f in tf.items():
            df = self.df.get(k, 0) + 1
            if df <= 1 and f < 2 and len(k.split()) == 1:  # a word seen once in the corpus is noise
                continue
            idf = math.log((n + 1) / df) + 1.0
            words = len(k.split())
            bonus = 1.0 + 0.6 * (min(words, 3) - 1)
            # multi-word phrases seen once in one paper only are usually sentence fragments
            if words >= 2 and df <= 1 and f < 2:
                bonus *= 0.3
            scored.append((forms[k].most_common(1)[0][0], f * idf * bonus))
        scored.sort(key=lambda x: (-x[1], x[0]))
        return scored

    def extract(self, title: str, abstract: str, scored: list[tuple[str, float]] | None = None) -> list[str]:
        """3-8 keyphrases, best first: no two share a :func:`phrase_key` and none overlaps a better one.
        ``scored`` may pass a precomputed :meth:`score` result."""
        chosen: list[str] = []
        keys: list[str] = []
        for phrase, s in scored if scored is not None else self.score(title, abstract):
            k = phrase_key(phrase)
            if any(_overlaps(k, c) for c in keys):
                continue
            if len(chosen) >= self.min_k and s < 0.25 * (self.score_cache_top or s):
                break
            if not chosen:
                self.score_cache_top = s
            chosen.append(phrase)
            keys.append(k)
            if len(chosen) >= self.max_k:
                break
        self.score_cache_top = None
        return chosen

    score_cache_top: float | None = None
