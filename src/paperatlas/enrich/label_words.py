"""Topic labels checked against the papers' own words (issue 28): coverage, specificity, title phrases.

:func:`paperatlas.enrich.labels.label_topics` ranks a topic's keyphrases by c-TF-IDF; this module then reads the
papers' titles and abstracts to choose among the best of them (:func:`choose_label`):

* **coverage**: the share of the topic's papers whose title + abstract use every content word of the phrase (word
  prefixes of a light stem: ``diffusion models`` is found in "a diffusion model", ``reinforcement learning`` in
  "reinforcement-learning agents"; words every ML paper uses, :data:`paperatlas.vocab.BROAD`, are only required
  when the phrase has no other word);
* **precision**: the share of all papers using the phrase that belong to the topic (estimated on an evenly spaced
  sample of :data:`ATLAS_SAMPLE` papers of the atlas): ``Bounds`` or ``Convergence`` is used all over an ML
  conference, ``Offline reinforcement learning`` mostly in its own topic;
* the phrase's score is the F-measure of the two (van Rijsbergen 1979, *Information Retrieval*: the phrase
  judged as a classifier of the topic's papers; :data:`BETA` 1, the F1 ``paperatlas eval labels`` reports),
  times its c-TF-IDF weight relative to the topic's best (the keyphrase ranking keeps its say; flattened below
  :data:`SMALL_CORPUS` papers), :data:`SINGLE_WORD` for a single word (a session is rarely named by one word),
  :data:`BROAD_ONLY` for a phrase of words every ML paper uses, and, for an area, how evenly its sub-topics use
  the phrase (:func:`spread`);
* a longer phrase that says more than the chosen one, in half as many papers and about as precisely, replaces
  it (:func:`refine_label`: "Attacks" -> "Adversarial attacks", "Lottery ticket" -> "Lottery ticket hypothesis").

Below :data:`SMALL_CORPUS` papers, or when a topic's keyphrases are thin (no phrase in two of its papers), word
n-grams of the topic's titles are candidates too (:func:`title_phrases`): a 20-paper library is labelled by what
its papers' titles say ("Diffusion models", "Deep reinforcement learning"), not by a phrase two papers share.

Cost: each topic's coverage is read on at most :data:`TOPIC_SAMPLE` of its papers (evenly spaced), so labelling
42k papers reads about 25k texts (lower-cased, punctuation to spaces) and a few substring tests each.
"""

from __future__ import annotations

import bisect
from collections import Counter
from functools import lru_cache

from ..vocab import BROAD, GENERIC, STOP, norm_word

#: below this many papers, labels may come from the titles' own word n-grams
SMALL_CORPUS = 50
#: most papers of a topic read for a phrase's coverage (evenly spaced over its papers)
TOPIC_SAMPLE = 60
#: most papers of the atlas read for a phrase's share of all papers (evenly spaced)
ATLAS_SAMPLE = 600
#: a label must be used by at least this share of its topic's papers when a candidate that is exists
MIN_COVERAGE = 0.1
#: score factor of a one-word label ("Bounds", "Convergence": too broad to name a session on their own)
SINGLE_WORD = 0.8
#: below :data:`SMALL_CORPUS` papers the keyphrase weight counts as ``weight ** SMALL_PRIOR`` (c-TF-IDF over a few
#: papers says little; their words decide)
SMALL_PRIOR = 0.1
#: score factor of a phrase of words every ML paper uses ("Representation learning": found in any topic's papers)
BROAD_ONLY = 0.5
#: beta of the F-measure of coverage (recall) and precision (0.5, precision weighted more, was tried on ICLR 2021:
#: sub-topic labels scored 0.454 by ``eval labels`` vs 0.468 with 1, areas 0.487 vs 0.485)
BETA = 1.0
#: a topic whose best candidate scores an F below this is labelled by its keyphrases alone (its words say little)
MIN_EVIDENCE = 0.1
#: a longer phrase replaces a label when it is used by at least this share as many of the topic's papers
REFINE_SHARE = 0.5
#: a phrase that contains the label word for word and adds a name's last word replaces it when used by at least
#: this share as many papers ("Lottery ticket" -> "Lottery ticket hypothesis", 0.44 of 0.92 in seed 004)
REFINE_SHARE_NAME = 0.4
#: words that make a phrase longer, not more specific ("Information bottleneck theory", "Phenomenon of grokking")
_FILLER = frozenset("""theory theories analysis approach approaches method methods framework model models perspective
perspectives study studies view problem problems setting phenomenon phenomena effect effects principle principles
review paradigm understanding results""".split())
#: a single-word label used at least this precisely by its topic's papers is not replaced by a longer phrase (0.9
#: turned ICLR 2021's "Quantization" (0.84) into "Mixed-precision quantization", found in 10% of its papers)
REFINE_PRECISION = 0.8
#: words a label may carry that its papers need not write ("Fair machine learning" names papers on fairness)
_NOT_REQUIRED = frozenset({"deep", "neural", "machine", "artificial", "based", "driven", "aware", "using"})

_KEEP = set("abcdefghijklmnopqrstuvwxyz0123456789")
#: every ASCII character but letters and digits reads as a space
_SPACES = str.maketrans({chr(c): " " for c in range(128) if chr(c) not in _KEEP})
#: (suffix, replacement) pairs of :func:`word_prefix`, the first that fits is used
_SUFFIXES = (("izations", "iz"), ("ization", "iz"), ("isations", "is"), ("isation", "is"), ("izing", "iz"),
             ("ising", "is"), ("ized", "iz"), ("ised", "is"), ("ations", ""), ("ation", ""), ("ional", "ion"),
             ("ings", ""), ("ing", ""), ("ies", ""), ("ial", ""), ("al", ""), ("ed", ""), ("es", ""), ("s", ""),
             ("y", ""), ("e", ""))


@lru_cache(maxsize=1 << 16)
def word_prefix(word: str) -> str:
    """The prefix a word's variants share: ``diffusion`` -> ``diffusion``, ``policies`` -> ``polic``.

    A light suffix stripper (plural, ``-ing``, ``-ed``, ``-al``, ``-ization``, ``-y``, ``-e``), keeping 4 letters at
    least; a text uses the word when one of its words starts with the prefix (``convolution`` covers
    ``convolutional``, ``reinforc`` covers ``reinforcement``).

    Args:
        word: one lower-case word (letters and digits).

    Returns:
        The prefix (the word itself when it has at most 4 letters or is not alphabetic).
    """
    if len(word) <= 4 or not word.isalpha():
        return word
    for suf, rep in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 4:
            return word[: len(word) - len(suf)] + rep
    return word


@lru_cache(maxsize=1 << 16)
def phrase_prefixes(phrase: str) -> tuple[str, ...]:
    """The word prefixes a text must contain to use ``phrase`` (:func:`word_prefix` of its content words).

    Stop words and research-prose filler (:data:`paperatlas.vocab.STOP`, :data:`~paperatlas.vocab.GENERIC`) are
    left out; words of every ML paper (:data:`~paperatlas.vocab.BROAD`: ``learning``, ``models``, ``networks``) too
    unless nothing else is left. ``("diffusion",)`` for "Diffusion models", ``("reinforc",)`` for "Deep
    reinforcement learning", ``("graph",)`` for "Graph neural networks".

    Args:
        phrase: a phrase as written or as a key.

    Returns:
        The sorted, distinct prefixes; empty for a phrase of stop words only.
    """
    out: set[str] = set()
    broad: set[str] = set()
    for token in phrase.lower().replace("non-", "non").split():
        # a hyphenated compound is one unit, its parts all required ("off-policy" is not "policy"), less any
        # trailing filler ("score-based" -> "score")
        parts = token.replace("-", " ").translate(_SPACES).split()
        while len(parts) > 1 and (parts[-1] in GENERIC or parts[-1] in _NOT_REQUIRED):
            parts.pop()
        if not parts or (len(parts) == 1 and (parts[0] in STOP or parts[0] in GENERIC)):
            continue
        last = parts[-1]
        unit = " ".join([*parts[:-1], word_prefix(last) if len(last) > 4 else last + " "])
        if len(parts) == 1 and (last in BROAD or norm_word(last) in BROAD or last in _NOT_REQUIRED):
            broad.add(unit)
        else:
            out.add(unit)
    # a unit ends with a space when its last word must match whole: short words ("pre", "ode", "rl")
    return tuple(sorted(out or broad))


#: :func:`word_prefix` (or the word and a space, for short words) of every broad word
_BROAD_UNITS = frozenset(word_prefix(w) if len(w) > 4 else w for w in (*BROAD, *_NOT_REQUIRED))


def broad_only(phrase: str) -> bool:
    """Whether every content word of ``phrase`` is one every ML paper uses ("Representation learning", "Models").

    Such a phrase is used by most papers of any topic, so its coverage says nothing about the topic.
    """
    prefixes = phrase_prefixes(phrase)
    return bool(prefixes) and all(" " not in u.strip() and (u.strip() in _BROAD_UNITS) for u in prefixes)


def _spread(rows: list[int], k: int) -> list[int]:
    """At most ``k`` of ``rows``, evenly spaced (all of them when there are at most ``k``)."""
    if len(rows) <= k:
        return rows
    step = len(rows) / k
    return [rows[int(j * step)] for j in range(k)]


class PaperWords:
    """The papers' titles + abstracts, read for which words they use (lazily: only the texts asked about).

    Args:
        texts: one title + abstract per paper (``"<title>. <abstract>"``), in the order of the papers.
    """

    def __init__(self, texts: list[str]):
        self.texts = texts
        self.n = len(texts)
        self._norm: dict[int, str] = {}
        self._df: dict[tuple[str, ...], float] = {}
        self._sample_words: list[set[str]] | None = None
        self._sorted_words: list[str] = []
        self._word_rows: dict[str, set[int]] = {}

    def text(self, i: int) -> str:
        """Paper ``i``'s text lower-cased, every ASCII character but letters and digits a space, space-delimited.

        ``non-`` is joined to its word (``non-convex`` reads ``nonconvex``: not a use of ``convex``).
        """
        t = self._norm.get(i)
        if t is None:
            t = self._norm[i] = " " + self.texts[i].lower().replace("non-", "non").translate(_SPACES) + " "
        return t

    def uses(self, i: int, prefixes: tuple[str, ...]) -> bool:
        """Whether paper ``i``'s text has a word starting with each of ``prefixes``."""
        t = self.text(i)
        return all(" " + p in t for p in prefixes)

    def coverage(self, rows: list[int], prefixes: tuple[str, ...]) -> float:
        """Share of the papers ``rows`` (at most :data:`TOPIC_SAMPLE` read, evenly spaced) that use ``prefixes``."""
        if not rows or not prefixes:
            return 0.0
        sample = _spread(rows, TOPIC_SAMPLE)
        return sum(self.uses(i, prefixes) for i in sample) / len(sample)

    def atlas_share(self, prefixes: tuple[str, ...]) -> float:
        """Share of all papers that use ``prefixes`` (read on at most :data:`ATLAS_SAMPLE` evenly spaced papers)."""
        if not prefixes or not self.n:
            return 0.0
        got = self._df.get(prefixes)
        if got is None:
            if self._sample_words is None:
                sample = _spread(list(range(self.n)), ATLAS_SAMPLE)
                self._sample_words = [set(self.text(i).split()) for i in sample]
                for j, words in enumerate(self._sample_words):
                    for w in words:
                        self._word_rows.setdefault(w, set()).add(j)
                self._sorted_words = sorted(self._word_rows)
            rows: set[int] | None = None
            for p in prefixes:
                hit = self._prefix_rows(p)
                rows = hit if rows is None else rows & hit
                if not rows:
                    break
            got = self._df[prefixes] = len(rows or ()) / len(self._sample_words)
        return got

    def _prefix_rows(self, prefix: str) -> set[int]:
        """Rows of the atlas sample with a word starting with ``prefix``."""
        if " " in prefix.strip():  # a compound ("off polic"): papers with each of its words
            parts = prefix.split(" ")
            rows = self._prefix_rows(parts[-1]) if parts[-1] else set()
            for w in parts[:-1]:
                rows &= self._prefix_rows(w + " ")
            return rows
        if prefix.endswith(" "):  # a whole word
            return set(self._word_rows.get(prefix[:-1], ()))
        words = self._sorted_words
        lo = bisect.bisect_left(words, prefix)
        out: set[int] = set()
        while lo < len(words) and words[lo].startswith(prefix):
            out |= self._word_rows[words[lo]]
            lo += 1
        return out

    def score(self, rows: list[int], prefixes: tuple[str, ...]) -> tuple[float, float, float]:
        """``(f, coverage, precision)`` of a phrase as the name of the papers ``rows`` (module docstring)."""
        cov = self.coverage(rows, prefixes)
        if cov == 0.0:
            return 0.0, 0.0, 0.0
        inside = cov * len(rows)
        everywhere = max(self.atlas_share(prefixes) * self.n, inside)
        prec = inside / everywhere
        return (1 + BETA ** 2) * prec * cov / (BETA ** 2 * prec + cov), cov, prec


def title_phrases(titles: list[str], min_titles: int = 2) -> list[tuple[str, int]]:
    """Word n-grams (1-3 words) shared by several titles, as candidate labels of a small topic.

    An n-gram neither starts nor ends with a stop word or research-prose filler and is counted once per title
    (under its :func:`phrase_prefixes`, so ``Diffusion Model`` and ``diffusion models`` meet); it is shown in its
    most frequent spelling, lower-cased unless written in capitals (``GAN``).

    Args:
        titles: the topic's titles.
        min_titles: least number of titles an n-gram must be in.

    Returns:
        ``(phrase, number of titles)`` pairs, most titles first, then longer phrases first.
    """
    count: Counter[tuple[str, ...]] = Counter()
    spellings: dict[tuple[str, ...], Counter[str]] = {}
    for title in titles:
        words = [w.strip("-") for w in title.replace(":", " : ").replace(",", " , ").split()]
        seen: set[tuple[str, ...]] = set()
        for n in (1, 2, 3):
            for s in range(len(words) - n + 1):
                gram = words[s:s + n]
                low = [w.lower() for w in gram]
                if any(not w or not any(c.isalnum() for c in w) for w in gram) \
                        or low[0] in STOP or low[-1] in STOP or low[0] in GENERIC or low[-1] in GENERIC:
                    continue
                shown = " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in gram)
                key = phrase_prefixes(shown)
                if not key or key in seen:
                    continue
                seen.add(key)
                count[key] += 1
                spellings.setdefault(key, Counter())[shown] += 1
    best: dict[str, int] = {}
    for key, c in count.items():
        if c >= min_titles:
            shown = max(spellings[key].items(), key=lambda kv: (kv[1], len(kv[0].split())))[0]
            best[shown] = max(best.get(shown, 0), c)
    return sorted(best.items(), key=lambda kv: (-kv[1], -len(kv[0].split()), kv[0]))


def choose_label(words: PaperWords, rows: list[int], candidates: list[tuple[str, float]],
                 groups: list[list[int]] | None = None) -> int | None:
    """Index of the candidate that best names the papers ``rows`` by their own words.

    Args:
        words: the atlas's :class:`PaperWords`.
        rows: the topic's papers.
        candidates: ``(phrase, keyphrase weight)`` in rank order; the weight is the candidate's c-TF-IDF score
            (a title n-gram gets the best candidate's weight).
        groups: for an area, its sub-topics' papers: a candidate's score is then multiplied by its
            :func:`spread` over them (:data:`SPREAD`; an area is named by what its sub-topics share).

    Returns:
        The index in ``candidates`` of the highest score (module docstring); among candidates under
        :data:`MIN_COVERAGE` only when none reaches it. None when the words say little: no candidate reaches
        :data:`MIN_EVIDENCE` (a topic whose papers share no words; the keyphrase ranking then decides).
    """
    best, best_score, best_covered, evidence = 0, -1.0, False, 0.0
    top = max((w for _, w in candidates), default=0.0) or 1.0
    for j, (phrase, weight) in enumerate(candidates):
        prefixes = phrase_prefixes(phrase)
        f, cov, _prec = words.score(rows, prefixes)
        if f <= 0:
            continue
        evidence = max(evidence, f)
        prior = (max(weight, 0.0) / top) ** (SMALL_PRIOR if words.n < SMALL_CORPUS else 1.0)
        score = f * prior * (SINGLE_WORD if len(phrase.split()) == 1 else 1.0) \
            * (BROAD_ONLY if broad_only(phrase) else 1.0)
        if groups and len(groups) > 1 and (SPREAD or words.n < SMALL_CORPUS):
            score *= spread(words, groups, prefixes, cov)
        covered = cov >= MIN_COVERAGE
        if (covered, score) > (best_covered, best_score):
            best, best_score, best_covered = j, score, covered
    return best if evidence >= MIN_EVIDENCE else None


#: whether an area's candidates are weighed by their :func:`spread` from :data:`SMALL_CORPUS` papers up (off: the
#: keyphrase weight already carries the share of the area's sub-topics where a phrase is common, and the spread
#: twice over cost seed 004 its "Scaling laws" and "Neural collapse" areas); below, where the keyphrase weight
#: counts little, it is on (20 papers in one area are not all "Diffusion models")
SPREAD = False
#: most papers of each sub-topic read for :func:`spread`
GROUP_SAMPLE = 20


def spread(words: PaperWords, groups: list[list[int]], prefixes: tuple[str, ...], cov: float) -> float:
    """How evenly an area's sub-topics use a phrase: 1 when each uses it as much as the whole area.

    ``sum(size_g * min(1, cov_g / cov)) / sum(size_g)`` over the sub-topics ``g`` (``cov_g``: the share of its
    papers using the phrase, read on at most :data:`GROUP_SAMPLE` of them; ``cov``: the area's).

    Args:
        words: the atlas's :class:`PaperWords`.
        groups: each sub-topic's papers.
        prefixes: :func:`phrase_prefixes` of the phrase.
        cov: the phrase's coverage of the whole area.

    Returns:
        The spread, in ``[0, 1]``.
    """
    if cov <= 0:
        return 0.0
    total = sum(len(g) for g in groups) or 1
    got = 0.0
    for g in groups:
        sample = _spread(g, GROUP_SAMPLE)
        if sample:
            got += len(g) * min(1.0, sum(words.uses(i, prefixes) for i in sample) / len(sample) / cov)
    return got / total


def refine_label(words: PaperWords, rows: list[int], phrase: str, longer: list[str]) -> int | None:
    """A more specific phrase than ``phrase``: ``Attacks`` -> ``Adversarial attacks``.

    A phrase of ``longer`` qualifies when it says more (for a single word: uses it and more words; for a phrase:
    contains it, word for word), is used by at least :data:`REFINE_SHARE` (a phrase: :data:`REFINE_SHARE_NAME`)
    as many of the papers and about as precisely (90%; a phrase: 95%), and adds more than filler
    (:data:`_FILLER`: not ``Information bottleneck theory``); the best scored wins. A single word used mostly by
    the topic's papers (precision of :data:`REFINE_PRECISION` or more: ``Grokking``, ``Quantization``) is kept.

    Args:
        words: the atlas's :class:`PaperWords`.
        rows: the topic's papers.
        phrase: the chosen label.
        longer: candidate phrases (typically the topic's keyphrases containing ``phrase``'s words).

    Returns:
        The index in ``longer`` of the chosen phrase, or None to keep ``phrase``.
    """
    single = len(phrase.split()) == 1
    base = set(phrase_prefixes(phrase))
    _f, cov, prec = words.score(rows, tuple(sorted(base)))
    if single and prec >= REFINE_PRECISION:
        return None
    inner = f" {' '.join(phrase.lower().split())} "
    filler = {word_prefix(w) for w in _FILLER}
    best, best_f = None, 0.0
    for j, other in enumerate(longer):
        pre = phrase_prefixes(other)
        if not base < set(pre) or (not single and inner not in f" {' '.join(other.lower().split())} ") \
                or set(pre) - base <= filler:
            continue
        f2, cov2, prec2 = words.score(rows, pre)
        share = REFINE_SHARE if single else REFINE_SHARE_NAME
        if cov2 >= share * cov and prec2 >= (0.9 if single else 0.95) * prec and f2 > best_f:
            best, best_f = j, f2
    return best
