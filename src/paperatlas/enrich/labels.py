"""Curator-style topic labels from the papers' keyphrases, checked against the papers' own words.

Class-based TF-IDF (c-TF-IDF, Grootendorst 2022, BERTopic: ``W(t,c) = tf(t,c) · log(1 + A / f(t))``, ``A`` the
average number of terms per class, ``f(t)`` the term's frequency over all classes) over the papers' keyphrases
ranks each topic's candidate phrases: found in several of the topic's papers, not generic (:data:`GENERIC_TERMS`),
no dangling adjective, no label already taken nor a whole-word head or tail of one (a sub-topic may extend its
area's label, "Convolutional filters" under "Convolutional neural networks", never repeat it or say less). With
the papers' titles and abstracts at hand, :func:`paperatlas.enrich.label_words.choose_label` picks among the
:data:`CANDIDATES` best the phrase most of the topic's papers use and few others do (and a longer phrase that
says more about as well: "Attacks" -> "Adversarial attacks"); below
:data:`~paperatlas.enrich.label_words.SMALL_CORPUS` papers the titles' own word n-grams are candidates too. The
label is in sentence case, joined with a second strong, distinct keyphrase when the two fit in
:data:`MAX_LABEL_WORDS` words and are carried by the same papers (:data:`COOCCUR_MIN`: ``"Lottery tickets and
pruning"``, never ``"Language models and catastrophic forgetting"``). An area's label is weighted by how much of
the area shares it, so it describes most of its sub-topics.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..vocab import phrase_key
from .label_grammar import adjectival as _adjectival
from .label_grammar import dangling as _dangling
from .label_words import SMALL_CORPUS, PaperWords, choose_label, refine_label, title_phrases


def _sentence_case(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:] if phrase else phrase


#: the most words a label may have
MAX_LABEL_WORDS = 5


def phrase_pairs(keyphrases: list[list[str]]) -> list[list[tuple[str, str]]]:
    """Each paper's distinct spellings as ``(phrase key, spelling)`` (:func:`paperatlas.vocab.phrase_key`).

    A key appears twice in a paper's list when two of its spellings share it (it is then counted twice).

    Args:
        keyphrases: one list of keyphrases per paper.

    Returns:
        One list of pairs per paper, in the order of its keyphrases.
    """
    return [[(k, kp) for kp in dict.fromkeys(kps) if (k := phrase_key(kp))] for kps in keyphrases]


def label_topics(assign: np.ndarray, keyphrases: list[list[str]], max_terms: int = 10,
                 taken: set[str] | None = None, n_topics: int | None = None,
                 children: np.ndarray | None = None,
                 pairs: list[list[tuple[str, str]]] | None = None,
                 texts: list[str] | None = None) -> list[tuple[str, list[str]]]:
    """Label each topic and list its top terms (see the module docstring for the c-TF-IDF weighting).

    Labels are unique and 1-5 words; an empty topic gets ``"Topic N"``.

    Args:
        assign: ``(n_papers,)`` topic indices.
        keyphrases: one list of keyphrases per paper.
        max_terms: most top terms listed per topic (default 10).
        taken: phrase keys other labels already use; they are avoided, and the keys used here are added to it
            (the set is updated in place). None for none.
        n_topics: number of topics; None for ``assign.max() + 1``.
        children: ``(n_papers,)`` sub-topic index, for labelling areas: a phrase's score is multiplied by the share
            of the area's papers that sit in sub-topics where it is common (10% of a sub-topic's papers, 2 at
            least), so an area is named by what most of its sub-topics share rather than by its most distinctive
            one. None when labelling sub-topics.
        pairs: :func:`phrase_pairs` of ``keyphrases`` when at hand (labelling areas and sub-topics of the same
            papers makes them once); None to make them here.
        texts: each paper's title + abstract (``"<title>. <abstract>"``, same order as ``keyphrases``), or None for
            labels from the keyphrases alone.

    Returns:
        ``(label, top_terms)`` per topic index.
    """
    n_topics = n_topics if n_topics is not None else (int(assign.max()) + 1 if len(assign) else 0)
    c = _Corpus.of(assign, phrase_pairs(keyphrases) if pairs is None else pairs, n_topics, children,
                   taken if taken is not None else set(), texts)
    used_labels: set[str] = set()
    out: list[tuple[str, list[str]]] = []
    for t in range(n_topics):
        label, top_terms = _label_topic(c, t, max_terms)
        if not label or label.casefold() in used_labels:
            label = f"Topic {t + 1}" if not label else f"{label} ({t + 1})"
        used_labels.add(label.casefold())
        out.append((label, top_terms))
    return out


@dataclass
class _Corpus:
    """What each topic's label is weighed against: the topics' phrase counts and the labels taken so far."""

    member_rows: list[list[int]]  # each topic's papers
    pairs: list[list[tuple[str, str]]]
    tf: list[Counter[str]]  # each topic's phrase-key counts
    forms: dict[str, dict[str, int]]  # phrase key -> spelling -> count
    total: Counter[str]
    coverage: dict[tuple[int, str], float] | None  # areas only: (area, key) -> share of the area's papers
    avg: float
    n_papers: int
    max_df: float
    taken: set[str]
    taken_heads: set[str]
    taken_tails: set[str]
    words: PaperWords | None
    texts: list[str] | None
    child_rows: dict[int, list[list[int]]]  # an area's sub-topics' papers, for the spread of its label
    small: bool
    keysets: list[frozenset[str]] = field(default_factory=list)  # each paper's phrase keys, made at the first ask

    @classmethod
    def of(cls, assign: np.ndarray, pairs, n_topics: int, children, taken: set[str], texts) -> _Corpus:
        """Count the phrases of ``pairs`` per topic of ``assign`` (see :func:`label_topics` for the arguments)."""
        # a topic's phrase counts and each key's spellings, counted in C (collections.Counter over chained
        # iterables), in the order a loop over the papers would insert them (ties are broken by that order)
        members = np.argsort(assign, kind="stable")
        bounds = np.searchsorted(assign[members], np.arange(n_topics + 1)) if len(assign) \
            else np.zeros(n_topics + 1, dtype=int)
        member_rows = [members[bounds[t]:bounds[t + 1]].tolist() for t in range(n_topics)]
        tf: list[Counter[str]] = [Counter(k for i in rows for k, _ in pairs[i]) for rows in member_rows]
        forms: dict[str, dict[str, int]] = {}
        for (k, kp), n in Counter(pair for row in pairs for pair in row).items():
            forms.setdefault(k, {})[kp] = n
        total: Counter[str] = Counter()
        for counts in tf:
            total.update(counts)
        taken_heads: set[str] = set()  # phrases a taken key starts or ends with (whole words): such a phrase
        taken_tails: set[str] = set()  # would read as part of another label
        for tk in taken:
            _add_affixes(tk, taken_heads, taken_tails)
        words = PaperWords(texts) if texts is not None and len(texts) == len(assign) else None
        child_rows: dict[int, list[list[int]]] = {}
        if words is not None and children is not None:
            by_child: dict[tuple[int, int], list[int]] = {}
            for i, (t, child) in enumerate(zip(assign.tolist(), children.tolist(), strict=True)):
                by_child.setdefault((t, child), []).append(i)
            for (t, _child), rows in sorted(by_child.items()):
                child_rows.setdefault(t, []).append(rows)
        return cls(member_rows, pairs, tf, forms, total, _coverage(assign, children, pairs),
                   sum(total.values()) / max(n_topics, 1), max(len(assign), 1),
                   max(MAX_LABEL_DF, 1.5 / max(n_topics, 1)),  # with few topics, a topic's terms are in many papers
                   taken, taken_heads, taken_tails, words, texts, child_rows, len(assign) < SMALL_CORPUS)

    def weight(self, t: int, k: str, f: int) -> float:
        """c-TF-IDF weight of phrase key ``k`` found ``f`` times in topic ``t`` (an area's scaled by coverage)."""
        return _weight(f, self.avg, self.total[k], k,
                       self.coverage.get((t, k), 0.0) if self.coverage is not None else 1.0)

    def docs(self, t: int, k: str) -> set[int]:
        """The papers of topic ``t`` carrying phrase ``k``."""
        if not self.keysets:
            self.keysets.extend(frozenset(k2 for k2, _ in row) for row in self.pairs)
        return {i for i in self.member_rows[t] if k in self.keysets[i]}

    def free_of_taken(self, k: str) -> bool:
        """A (possibly extended) phrase no label has, nor less specific than one (a head or tail of a label)."""
        return k not in self.taken and k not in self.taken_heads and k not in self.taken_tails

    def labelable(self, k: str) -> bool:
        """Not too common in the whole corpus to be a label (:func:`_labelable`)."""
        return _labelable(k, self.total[k] / self.n_papers, self.max_df)


def _coverage(assign: np.ndarray, children: np.ndarray | None, pairs) -> dict[tuple[int, str], float] | None:
    """For an area: the share of its papers in sub-topics where a phrase is common (None for sub-topics).

    Common: in 10% of the sub-topic's papers, 2 at least; so an area is named by what most of its sub-topics share,
    not by its most distinctive one.
    """
    if children is None:
        return None
    coverage: dict[tuple[int, str], float] = {}
    child_size = Counter(zip(assign.tolist(), children.tolist(), strict=True))
    in_child: Counter = Counter((t, child, k) for t, child, row in zip(assign.tolist(), children.tolist(), pairs,
                                                                       strict=True) for k in {k for k, _ in row})
    for (t, child, k), n in in_child.items():
        if n >= max(2, 0.1 * child_size[(t, child)]):
            coverage[(t, k)] = coverage.get((t, k), 0.0) + child_size[(t, child)]
    area_size = Counter(assign.tolist())
    return {key: v / area_size[key[0]] for key, v in coverage.items()}


def _label_topic(c: _Corpus, t: int, max_terms: int) -> tuple[str, list[str]]:
    """Topic ``t``'s label ("" when it has none) and its top terms; the label's phrase key is marked taken."""
    tf = c.tf[t]
    size = len(c.member_rows[t])
    support = max(2, round(0.08 * size)) if size >= 6 else 1
    # ties go to the longer, more specific phrase; only the phrases in `support` papers are ranked unless none is
    # (a generic phrase in many papers must not stand for support: a mixed area whose only frequent phrase is
    # "machine learning" would otherwise have no label at all)
    scored = sorted(((c.weight(t, k, f), len(k.split()), k) for k, f in tf.items()
                     if f >= support and k not in _GENERIC_KEYS), reverse=True)
    fallback = not scored
    if fallback:
        scored = sorted(((c.weight(t, k, f), len(k.split()), k) for k, f in tf.items()), reverse=True)
    good = [k for _, _, k in scored]
    # phrases in fewer papers than this can neither make a ranked phrase a tail fragment nor extend it
    floor = 1 if fallback else min(2, math.ceil(0.3 * support))
    parts = _phrase_parts(tf if floor == 1 else Counter({k: f for k, f in tf.items() if f >= floor}))
    top_terms = _shown_terms(good, tf, c.forms, max_terms, parts)
    weight = {k: sc for sc, _, k in scored}
    free, shown, rank_weight = _candidates(c, t, good, weight, parts)
    if not free:
        return "", top_terms
    k = _chosen(c, t, free, shown, weight, rank_weight)
    label = _sentence_case(shown[k])
    # add a second strong, distinct term to make labels specific: not a variant or acronym of the first,
    # present in a tenth of the topic's papers, and the whole label still at most five words
    second_support = max(3, round(0.1 * size))
    for k2 in free[:6]:
        if k2 == k or k2 not in c.forms or _related_terms(k, k2) or tf[k2] < second_support \
                or not _cooccur(c.docs(t, k), c.docs(t, k2)):
            continue
        if weight.get(k2, 0) >= 0.5 * weight.get(k, 0) \
                and len(label.split()) + 1 + len(k2.split()) <= MAX_LABEL_WORDS \
                and (len(k2.split()) > 1 or len(k.split()) == 1):
            label = f"{label} and {_display(c.forms, k2)}"
            break
    c.taken.add(k)
    _add_affixes(k, c.taken_heads, c.taken_tails)
    return label, top_terms


def _candidates(c: _Corpus, t: int, good: list[str], weight: dict[str, float], parts) \
        -> tuple[list[str], dict[str, str], dict[str, float]]:
    """Topic ``t``'s label candidates (keys), their shown spellings and rank weights (``weight`` gains extensions).

    The first :data:`CANDIDATES` labelable phrases, each weighed as the ranked phrase it was extended from (a
    fragment "lottery" ranked first stands for its phrase "lottery ticket hypothesis"); in a small library or with
    thin keyphrase evidence, the titles' own word n-grams too.
    """
    tf, forms = c.tf[t], c.forms
    free: list[str] = []
    rank_weight: dict[str, float] = {}
    for key in good:
        for k in _clean_terms([key], tf, forms, keep=lambda k: k not in c.taken and c.labelable(k), parts=parts):
            if k not in rank_weight and c.free_of_taken(k) and not _dangling(_display(forms, k)):
                free.append(k)
                if k not in weight:  # an extended fragment may be in fewer papers than `support`
                    weight[k] = c.weight(t, k, tf[k])
                rank_weight[k] = max(weight[k], weight[key])
        if len(free) >= CANDIDATES:
            break
    shown = {k: _display(forms, k) for k in free}
    if c.words is not None and (c.small or not free or tf[free[0]] < 2):
        best = max(weight.values(), default=1.0)
        for phrase, _n in title_phrases([c.texts[i].split(". ", 1)[0] for i in c.member_rows[t]]):
            k = phrase_key(phrase)
            if k and k not in shown and k not in _GENERIC_KEYS and c.free_of_taken(k) \
                    and not _dangling(phrase) and len(k.split()) <= MAX_LABEL_WORDS:
                free.append(k)
                shown[k] = phrase
                rank_weight[k] = best
    return free, shown, rank_weight


def _chosen(c: _Corpus, t: int, free: list[str], shown: dict[str, str], weight: dict[str, float],
            rank_weight: dict[str, float]) -> str:
    """The candidate key that names topic ``t`` (``shown`` gains a longer phrase's spelling when one is chosen)."""
    tf, forms = c.tf[t], c.forms
    ranked = [(shown[k], rank_weight[k]) for k in free]
    j = None if c.words is None else choose_label(c.words, c.member_rows[t], ranked, groups=c.child_rows.get(t))
    if j is not None:
        k = free[j]
        longer = [k2 for k2 in dict.fromkeys([*free, *_containing(k, tf)]) if k2 != k and c.free_of_taken(k2)
                  and (k2 in shown or (c.labelable(k2) and not _dangling(_display(forms, k2))))]
        j = refine_label(c.words, c.member_rows[t], shown[k], [shown.get(k2) or _display(forms, k2)
                                                                for k2 in longer])
        if j is not None:
            k = longer[j]
            shown.setdefault(k, _display(forms, k))
        return k
    # a specific multi-word phrase beats a slightly stronger single word ("backdoor attacks" > "attacks")
    kp = [k for k in free if k in forms] or free
    # a title phrase that is a keyphrase elsewhere has no weight in this topic: its rank weight stands
    w = {k: weight.get(k, rank_weight.get(k, 0.0)) for k in kp[:4]}
    multi = [k for k in kp[:4] if len(k.split()) > 1 and w[k] >= 0.7 * w[kp[0]]]
    return multi[0] if multi and len(kp[0].split()) == 1 else kp[0]


#: most candidate phrases per topic weighed by the papers' own words
CANDIDATES = 8


def _containing(key: str, tf: Counter[str], most: int = 5) -> list[str]:
    """The ``most`` phrases of a topic most frequent among those that contain ``key``'s words and more (2+ papers)."""
    words = key.split()
    least = max(2, 0.2 * tf[key]) if key in tf else 2
    found = [(f, k2) for k2, f in tf.items() if f >= least and k2 != key and len(k2.split()) <= MAX_LABEL_WORDS
             and all(w in k2.split() for w in words)]
    found.sort(key=lambda item: -item[0])
    return [k2 for _, k2 in found[:most]]


def _weight(f: int, avg: float, total: int, key: str, share: float) -> float:
    """c-TF-IDF weight of a phrase in ``f`` of a topic's papers (module docstring), a multi-word phrase x 1.3."""
    return f * math.log(1 + avg / total) * (1 + 0.3 * (" " in key)) * share


def _add_affixes(key: str, heads: set[str], tails: set[str]) -> None:
    """Record the whole-word heads and tails of ``key``.

    Adds each ``h`` with ``key.startswith(h + " ")`` to ``heads``, each ``t`` with ``key.endswith(" " + t)`` to
    ``tails``.
    """
    for i, c in enumerate(key):
        if c == " ":
            heads.add(key[:i])
            tails.add(key[i + 1:])


#: phrase keys too general to name a topic of an ML corpus (they describe every paper)
GENERIC_TERMS = frozenset({
    "neural network", "neural networks", "deep learning", "deep neural network", "deep neural networks",
    "machine learning", "deep network", "deep networks", "network", "networks", "learning", "model", "models",
    "training", "data", "method", "methods", "performance", "result", "results", "approach", "framework", "task",
    "tasks", "algorithm", "algorithms", "deep", "neural", "problem", "problems", "dataset", "datasets",
    "deep learning models", "deep models", "experiments", "state of the art", "state-of-the-art", "benchmark",
    "benchmarks", "paper", "work", "system", "systems", "architecture", "architectures", "end-to-end",
    "label", "labels", "object", "objects", "words", "feature", "features", "input", "inputs", "output",
    "outputs", "loss", "function", "functions", "parameters", "samples", "distribution", "distributions",
    "artificial neural network", "artificial neural networks", "neural net", "neural nets", "dnn", "dnns",
    "layer", "layers", "weight", "weights", "neurons", "units", "accuracy", "efficiency", "scale", "structure",
})
#: a phrase found in more than this share of all papers is not used as a label
MAX_LABEL_DF = 0.2


def _labelable(key: str, df: float, max_df: float = MAX_LABEL_DF) -> bool:
    """Whether a phrase key may name a topic: not generic, in at most ``max_df`` of all papers, 1-5 words."""
    return (key not in _GENERIC_KEYS and df <= max_df
            and 0 < len(key.split()) <= MAX_LABEL_WORDS)


def _tail_fragment(key: str, tf: Counter[str], tails: dict[str, int] | None = None) -> bool:
    """Whether ``key`` is the tail of a longer phrase (``series modeling`` of ``time series modeling``).

    True when a longer phrase of this topic ends with ``key`` and is found in at least half as many of its papers.
    ``tails``: :func:`_phrase_parts` of ``tf`` when at hand (the same answer, without a scan of ``tf``).
    """
    if tails is not None:
        return tails.get(key, 0) >= 0.5 * tf[key]
    return any(k2.endswith(" " + key) and f >= 0.5 * tf[key] for k2, f in tf.items())


def _phrase_parts(tf: Counter[str]) -> tuple[dict[str, int], dict[str, list[tuple[str, int]]]]:
    """``(tails, heads)`` of a topic's phrase counts, so that fragments are found without scanning every phrase.

    ``tails``: each word-boundary tail of a phrase (``series modeling`` of ``time series modeling``) -> the largest
    count of a phrase ending with it; ``heads``: each leading part -> the ``(phrase, count)`` pairs starting with
    it, in ``tf``'s order.
    """
    tails: dict[str, int] = {}
    heads: dict[str, list[tuple[str, int]]] = {}
    for k2, f in tf.items():
        for tail, head in _splits(k2):
            if f > tails.get(tail, 0):
                tails[tail] = f
            heads.setdefault(head, []).append((k2, f))
    return tails, heads


@lru_cache(maxsize=1 << 18)
def _splits(key: str) -> tuple[tuple[str, str], ...]:
    """``(tail, head)`` at each word boundary of a phrase key (``("networks", "graph neural")``, ...)."""
    words = key.split()
    return tuple((" ".join(words[i:]), " ".join(words[:i])) for i in range(1, len(words)))


def _extend(key: str, tf: Counter[str], forms: dict[str, dict[str, int]],
            heads: dict[str, list[tuple[str, int]]] | None = None) -> str:
    """Extend a fragment like ``graph neural`` or ``self-supervised`` to the phrase it starts in this topic.

    The fragment becomes that phrase (``graph neural networks``) when it is found in at least half (a single word:
    30%) as many of its papers; an adjective-like fragment takes its most frequent extension found in 2+ papers,
    and is returned as ``""`` (unusable) when it has none.
    """
    best, best_f = key, 0
    share = 0.5 if len(key.split()) > 1 else 0.3
    shown = _display(forms, key).lower()
    adjectival = _adjectival(shown)
    for k2, f in heads.get(key, []) if heads is not None else tf.items():
        if not k2.startswith(key + " ") or len(k2.split()) > MAX_LABEL_WORDS or f <= best_f:
            continue
        if not _display(forms, k2).lower().startswith(shown + " "):  # "gradient descent-ascent" extends nothing
            continue
        if f >= share * tf[key] or (adjectival and f >= 2):
            best, best_f = k2, f
    return "" if best == key and adjectival else best


def _clean_terms(keys: list[str], tf: Counter[str], forms: dict[str, dict[str, int]],
                 keep: Callable[[str], bool] = lambda key: True, parts=None) -> Iterator[str]:
    """A topic's ranked phrase keys as a reader may see them (labels and the terms on topic pages).

    In order, repeats possible: no generic terms (``neural networks``, also by an acronym's long form: ``dnn``), no
    tail fragments (``series modeling``), adjective fragments extended to their phrase (``self-supervised`` →
    ``self-supervised learning``) or dropped, no possessives (``single model's``); ``keep`` is checked on each key
    before its (costly) extension. ``parts``: :func:`_phrase_parts` of ``tf`` when at hand.
    """
    tails, heads = parts if parts is not None else _phrase_parts(tf)
    for key in keys:
        if key in _GENERIC_KEYS or _tail_fragment(key, tf, tails) or not keep(key):
            continue
        full = _extend(key, tf, forms, heads)
        if not full:
            continue
        shown = _display(forms, full)
        if phrase_key(shown) not in _GENERIC_KEYS and not shown.endswith(("'s", "’s", "'")):
            yield full


def _shown_terms(keys: list[str], tf: Counter[str], forms: dict[str, dict[str, int]], k: int,
                 parts=None) -> list[str]:
    """The first ``k`` distinct :func:`_clean_terms` of a topic's ranked phrase keys, as shown on its page.

    ``parts``: :func:`_phrase_parts` of ``tf`` when at hand.
    """
    out: list[str] = []
    for full in _clean_terms(keys, tf, forms, parts=parts):
        if full not in out:
            out.append(full)
            if len(out) == k:
                break
    return [_display(forms, key) for key in out]


#: two phrases are joined into one label ("Lottery tickets and pruning") only when at least this share of the papers
#: carrying the rarer one carry the other too; else the label would join two unrelated halves of a topic
COOCCUR_MIN = 0.3


def _cooccur(a: set[int], b: set[int]) -> bool:
    """Whether two phrases' papers overlap enough to name one topic together (:data:`COOCCUR_MIN`)."""
    return bool(a and b) and len(a & b) >= COOCCUR_MIN * min(len(a), len(b))


def _related_terms(a: str, b: str) -> bool:
    """True when two phrase keys name the same thing.

    That is: a shared word, a shared word stem (first 5 letters: ``private``/``privacy``), or one the acronym of
    the other.
    """
    wa, wb = set(a.split()), set(b.split())
    if wa & wb or {w[:5] for w in wa if len(w) >= 5} & {w[:5] for w in wb if len(w) >= 5}:
        return True
    return any(_is_acronym_pair(a, w) for w in wb) or any(_is_acronym_pair(b, w) for w in wa)


def _is_acronym_pair(a: str, b: str) -> bool:
    """True when one phrase key is the acronym of the other.

    ``gan`` / ``generative adversarial network``, ``ebm`` / ``energy based model``, ``nas`` / ``neural
    architecture search``.
    """
    for short, long_ in ((a, b), (b, a)):
        words = long_.replace("-", " ").split()
        if len(short.split()) == 1 and len(words) > 1:
            initials = "".join(w[0] for w in words)
            if short.rstrip("s") in (initials, initials.rstrip("s")) or initials.startswith(short.rstrip("s")):
                return True
    return False


_GENERIC_KEYS = frozenset(phrase_key(t) for t in GENERIC_TERMS)


def _count(item: tuple[str, int]) -> int:
    return item[1]


def _display(forms: dict[str, dict[str, int]], key: str) -> str:
    """Most common spelling of a phrase key.

    Plural forms are preferred for multi-word noun phrases as people write topic names in the plural (``graph
    neural networks``).
    """
    best = max(forms[key].items(), key=_count)[0]  # the first most frequent, as Counter.most_common(1)
    plural = [f for f in forms[key] if f.lower().endswith("s") and not best.lower().endswith("s")]
    return plural[0] if plural and len(best.split()) > 1 else best
