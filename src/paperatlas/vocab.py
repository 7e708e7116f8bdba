"""Word lists and word/phrase keys shared by the keyphrase, TL;DR, topic-label, search and recommendation code.

* :data:`GENERIC`, :data:`BROAD`, :data:`STOP`, :data:`NOT_ADVERBS`: which words say nothing about a paper's
  subject (research-prose filler, words of every ML paper, English stop words from scikit-learn's
  ``ENGLISH_STOP_WORDS`` plus a few abbreviations); the phrases too general to name a topic are
  :data:`paperatlas.enrich.labels.GENERIC_TERMS`;
* :func:`norm_word`, :func:`phrase_key`, :func:`stem`, :func:`concept_key`: keys under which spelling variants of
  one word, phrase or concept meet (``Neural Networks`` = ``neural network``; ``optimize`` = ``optimization``).
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache


def _sklearn_stop_words() -> frozenset[str]:
    """scikit-learn's ``ENGLISH_STOP_WORDS`` (the Glasgow IR group's list), read from its own small module file.

    Loaded by file so that the command line does not pay for importing scikit-learn (~1.4 s) to know what "the"
    is; falls back to the package import when its layout differs.
    """
    spec = importlib.util.find_spec("sklearn")
    if spec is not None and spec.submodule_search_locations:
        for root in spec.submodule_search_locations:
            path = f"{root}/feature_extraction/_stop_words.py"
            try:
                file_spec = importlib.util.spec_from_file_location("_paperatlas_sklearn_stop_words", path)
                module = importlib.util.module_from_spec(file_spec)
                file_spec.loader.exec_module(module)
                return frozenset(module.ENGLISH_STOP_WORDS)
            except (OSError, AttributeError):
                continue
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


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
considers considering called via typically thereby whereas rethinking revisiting improving incorporating
integrating leveraging exploiting exploring towards toward""".split())

#: ``-ly`` words that are nouns/adjectives, not adverbs (adverbs never belong in a keyphrase).
NOT_ADVERBS = frozenset("family anomaly supply early only assembly monopoly italy july rely apply reply".split())

#: Words that may sit inside or at the end of a phrase (``reinforcement learning``, ``graph neural networks``) but
#: are too broad to be a keyphrase alone or to start one.
BROAD = frozenset("""
learning training model models data dataset datasets algorithm algorithms network networks neural deep trained
train representation representations function functions system systems
""".split())

STOP = _sklearn_stop_words() | {"via", "et", "al", "eg", "ie", "wrt", "e.g", "i.e", "can", "may", "might"}


@lru_cache(maxsize=1 << 16)
def norm_word(w: str) -> str:
    """Lower-case and strip a plural ``s`` (``networks`` → ``network``, keeps ``loss``, ``analysis``).

    Cached (a pure function of the word, asked ~1,900 times per paper by the TL;DR selector and keyphrases).

    Args:
        w: one word.

    Returns:
        The normalised word (``-ies`` → ``-y``).
    """
    w = w.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "ics")):
        return w[:-1]
    return w


@lru_cache(maxsize=1 << 18)
def phrase_key(phrase: str) -> str:
    """Key that identifies spelling variants of a phrase (cached: topic labelling asks ~2M times at 42k papers).

    ``"Neural Networks"`` and ``"neural network"`` share one key (words through :func:`norm_word`, hyphens as
    spaces).

    Args:
        phrase: a phrase as written.

    Returns:
        The key: normalised words joined by single spaces.
    """
    return " ".join(norm_word(w) for w in phrase.replace("-", " ").split())


@lru_cache(maxsize=100_000)
def stem(w: str) -> str:
    """A light suffix stripper for grouping spelling variants of one concept (cached).

    Groups ``optimize``/``optimization``/``optimizing``, ``alignment``/``align``, ``tuning``/``tuned``/``tune``,
    plurals. Milder than Porter so that ``generation``, ``generalization`` and ``general`` stay apart.

    Args:
        w: one word.

    Returns:
        The stem (words of at most 4 letters, or not purely alphabetic, only go through :func:`norm_word`).
    """
    w = norm_word(w.lower().strip("'"))
    if len(w) <= 4 or not w.isalpha():
        return w
    for suf, rep in (("isation", "iz"), ("ization", "iz"), ("izing", "iz"), ("ising", "iz"), ("ized", "iz"),
                     ("ised", "iz"), ("izes", "iz"), ("ize", "iz"), ("ation", ""), ("ment", ""), ("sion", "s"),
                     ("ing", ""), ("ed", "")):
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            w = w[: len(w) - len(suf)] + rep
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    if len(w) > 4 and w[-1] == w[-2] and w[-1] not in "lsz":  # planning -> plann -> plan
        w = w[:-1]
    return w


def concept_key(phrase: str) -> str:
    """Key under which spelling variants of one concept are merged and deduplicated.

    Hyphens count as spaces, ``'s`` is dropped and every word goes through :func:`stem`: ``"Neural Scaling-Laws"``
    and ``"neural scaling law"`` share one key, so do ``"optimize"`` and ``"optimization"``.

    Args:
        phrase: a phrase as written.

    Returns:
        The key: stems joined by single spaces.
    """
    return " ".join(stem(w) for w in phrase.replace("-", " ").replace("'s", "").split())


#: :func:`stem` of every :data:`BROAD` word.
BROAD_KEYS = frozenset(stem(w) for w in BROAD)
