"""Keyphrase extraction: 3-8 phrases per paper, most specific first.

Method ``"phrase-logreg v2"``:

* **candidates** - runs of 1-4 words with no stop word or punctuation taken from the title and the abstract
  (after Rose et al. 2010, RAKE), not starting or ending with research filler, plus ``A of B`` phrases
  (``mixture of experts``) that occur in at least two papers;
* **one concept, one spelling** - candidates are grouped by :func:`concept_key` (plural and derivational suffixes
  stripped: ``optimize``/``optimization``, ``neural network(s)``) and shown in the corpus's most frequent
  spelling; ``long form (ACRONYM)`` definitions found anywhere in the corpus (Schwartz & Hearst 2003) link an
  acronym to its long form (:attr:`KeyphraseExtractor.acronyms`), so ``NTK`` counts as, and is shown as,
  ``neural tangent kernel``;
* **score** - a logistic regression over :data:`FEATURES`: title occurrence, in-paper frequency, position of
  first occurrence, length, corpus document frequency (binned: phrases seen in only one paper are usually
  fragments, phrases in hundreds of papers are generic), how often the phrase appears in titles across the corpus,
  nesting (a phrase seen mostly inside one longer phrase - ``tangent kernel`` - is a fragment), and shape
  (acronym/mixed case, gerund start, adjective end). Weights (:data:`WEIGHTS`) are fitted on COLM 2024 author
  keywords by ``scripts/train_keyphrases.py`` and checked on the held-out COLM 2025 papers and on seed 004's Key
  Words (``paperatlas eval keyphrases --gold colm2025 --gold awesome``);
* **selection** - best first, one phrase per concept; a single word (or a fragment) is dropped when a chosen
  phrase contains it, and replaced in place when a later phrase contains it; a single word that names no concept
  on its own (``value``, ``worth``, ``pre-trained``: :func:`single_word_ok`) is never chosen; at least 5 phrases
  when the paper has them, up to 8 while the score stays above :data:`STOP_PROB`.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np

from ..vocab import BROAD_KEYS, concept_key
from .candidates import (
    _WORD,
    _adjective_like,
    _keep_case,
    _surface,
    _written_as_acronym,
    candidate_spans,
    candidates,  # noqa: F401 - part of this module's API (tests, scripts)
    find_acronyms,
)

METHOD = "phrase-logreg v2"

#: Feature names of :meth:`KeyphraseExtractor.features`, in column order.
FEATURES = (
    "bias", "in_title", "log_tf", "in_text", "early", "w1", "w2", "w3", "w4", "df1", "df2_3", "df4_10",
    "df11_30", "df31_100", "df_gt100", "log_title_df", "title_share", "acronym", "caps", "precolon", "maximal",
    "of_phrase", "broad_last", "in_title_w1", "whole_share", "first_ing", "last_ing", "last_ed", "last_adj",
    "fragment",
)
#: Logistic-regression weights for :data:`FEATURES`, fitted on COLM 2024 author keywords (candidate = positive
#: when it matches an author keyword after Porter stemming) by ``scripts/train_keyphrases.py`` (C = 1).
WEIGHT_BY_FEATURE = {
    "bias": -4.430,
    "in_title": +0.600,
    "log_tf": +1.147,
    "in_text": -0.117,
    "early": +0.458,
    "w1": -1.642,
    "w2": -0.759,
    "w3": -0.747,
    "w4": -1.283,
    "df1": -0.242,
    "df2_3": +0.413,
    "df4_10": +0.216,
    "df11_30": -0.667,
    "df31_100": -0.827,
    "df_gt100": -3.323,
    "log_title_df": +0.819,
    "title_share": +1.104,
    "acronym": +0.688,
    "caps": -0.459,
    "precolon": -1.224,
    "maximal": +0.835,
    "of_phrase": +0.149,
    "broad_last": +0.095,
    "in_title_w1": +0.270,
    "whole_share": -0.566,
    "first_ing": -0.842,
    "last_ing": +1.031,
    "last_ed": -0.412,
    "last_adj": -0.374,
    "fragment": -0.428,
}
WEIGHTS = np.array([WEIGHT_BY_FEATURE[f] for f in FEATURES])


class KeyphraseExtractor:
    """Corpus-aware keyphrase extractor (see the module docstring).

    ``fit(docs)`` learns, from ``(title, abstract)`` pairs, document frequencies, the corpus's most frequent
    spelling of every concept and the acronyms it defines (:attr:`acronyms`, ``"NTK" -> "neural tangent
    kernel"``); ``extract(title, abstract)`` returns between ``min_k`` and ``max_k`` phrases (fewer only when the
    text has fewer candidates), most specific first.

    Args:
        min_k: fewest phrases :meth:`extract` returns when the paper has them (default 3).
        max_k: most phrases :meth:`extract` returns (default 8).
        weights: logistic-regression weights, one per :data:`FEATURES` column; None for :data:`WEIGHTS`.
    """

    method = METHOD

    def __init__(self, min_k: int = 3, max_k: int = 8, weights: np.ndarray | None = None):
        self.min_k, self.max_k = min_k, max_k
        self.weights = WEIGHTS if weights is None else np.asarray(weights, dtype=float)
        #: concept key -> papers with it, for concepts in 2+ papers (:meth:`doc_freq` answers for all)
        self.df: dict[str, int] = {}
        #: concept key -> papers with it in the title, for the concepts of :attr:`df`
        self.title_df: dict[str, int] = {}
        #: concept key -> df of its most frequent one-word extension, where that is 2+
        self.parent_df: dict[str, int] = {}
        #: 64-bit hashes (:func:`_hash`) of the concepts in exactly one paper / of those in that paper's title /
        #: of the concepts whose most frequent extension is in one paper
        self._df1: set[int] = set()
        self._title1: set[int] = set()
        self._parent1: set[int] = set()
        self._spelled: set[str] = set()
        self.forms: dict[str, Counter[str]] = {}
        self.acronyms: dict[str, str] = {}
        self._acr_key: dict[str, str] = {}
        self._long_keys: set[str] = set()
        self._canon: dict[str, str] = {}
        self.n_docs = 0

    # --- corpus statistics ---------------------------------------------------------------------------------

    def _key(self, phrase: str, local: dict[str, str] | None = None) -> str:
        k = concept_key(phrase)
        if not _written_as_acronym(phrase):  # "feature map" or "mAP" is not "MAP" (maximum a posteriori)
            return k
        if local and k in local:
            return local[k]
        return self._acr_key.get(k, k)

    @staticmethod
    def local_acronyms(title: str, abstract: str, definitions: list[tuple[str, str]] | None = None
                       ) -> dict[str, str]:
        """Map the concept key of each acronym the paper itself defines to the concept key of its long form.

        Args:
            title: the paper's title.
            abstract: the paper's abstract.
            definitions: the paper's :func:`find_acronyms` result when it is already at hand; None to find them.

        Returns:
            ``{concept key of the acronym: concept key of its long form}``, leaving out definitions whose two
            keys are equal.
        """
        if definitions is None:
            definitions = find_acronyms(f"{title}. {abstract}")
        return {concept_key(short): concept_key(long) for short, long in definitions
                if concept_key(long) != concept_key(short)}

    def fit(self, docs: Iterable[tuple[str, str]],
            progress: Callable[[int], None] | None = None) -> KeyphraseExtractor:
        """Learn acronyms, document frequencies and canonical spellings from the corpus.

        An acronym is linked to its long form corpus-wide (:attr:`acronyms`) when at least two papers define it
        that way, or when the papers defining it are at least half of the papers using it; otherwise only the
        papers that define it read it as the long form (so one paper's ``controllable counterfactuals (COCO)``
        does not turn every other paper's COCO dataset into counterfactuals).

        Args:
            docs: ``(title, abstract)`` pairs, one per paper (None counts as empty).
            progress: called with the number of papers counted since its last call (every 500 papers and at the
                end), for a progress bar over ``len(docs)``; None for none.

        Returns:
            ``self``.
        """
        docs = [(t or "", a or "") for t, a in docs]
        definitions = [find_acronyms(f"{title}. {abstract}") for title, abstract in docs]  # once per paper
        longs: dict[str, Counter[str]] = {}
        for defs in definitions:
            for short, long in {(s, _surface(lf)) for s, lf in defs}:
                longs.setdefault(short, Counter())[long] += 1
        uses: Counter[str] = Counter()  # papers that use each defined acronym (as a word, plural "s" allowed)
        if longs:
            for title, abstract in docs:
                words = set(_WORD.findall(f"{title}. {abstract}"))
                uses.update({w for w in words if w in longs} | {w[:-1] for w in words if w[:-1] in longs})
        self.acronyms, self._acr_key = {}, {}
        for short, forms in longs.items():
            long, n_def = forms.most_common(1)[0]
            if concept_key(long) == concept_key(short) or 2 * n_def < sum(forms.values()):
                continue  # not an abbreviation of it, or papers disagree on what it stands for
            if n_def >= 2 or 2 * n_def >= uses[short]:
                self.acronyms[short] = long
                self._acr_key[concept_key(short)] = concept_key(long)
        self._long_keys = set(self._acr_key.values())
        self._canon = {}
        df: Counter[str] = Counter()
        title_df: Counter[str] = Counter()
        self.forms, self._spelled, self.n_docs = {}, set(self._long_keys), 0
        for (title, abstract), defs in zip(docs, definitions, strict=True):
            keys, tkeys = self._count_forms(title, abstract, defs, +1, create=True)
            df.update(keys)
            title_df.update(tkeys)
            self.n_docs += 1
            if progress is not None and self.n_docs % 500 == 0:
                progress(500)
        if progress is not None and self.n_docs % 500:
            progress(self.n_docs % 500)
        # C-value-like nesting statistic: the df of the most frequent one-word extension of each phrase
        parent_df: Counter[str] = Counter()
        for k, d in df.items():
            words = k.split()
            if len(words) > 1:
                for sub in (" ".join(words[1:]), " ".join(words[:-1])):
                    if d > parent_df[sub]:
                        parent_df[sub] = d
        # Most concepts occur in one paper only: their counts are kept as 64-bit hashes (a third of the memory at
        # 42k papers), and a concept with one spelling in the whole corpus keeps none (canonical() shows the
        # paper's own spelling, which is that one); the long forms of acronyms keep theirs
        self.df = {k: d for k, d in df.items() if d > 1}
        self.title_df = {k: t for k, t in title_df.items() if t and k in self.df}
        self._df1 = {_hash(k) for k, d in df.items() if d == 1}
        self._title1 = {_hash(k) for k, d in df.items() if d == 1 and title_df.get(k)}
        self.parent_df = {k: d for k, d in parent_df.items() if d > 1}
        self._parent1 = {_hash(k) for k, d in parent_df.items() if d == 1}
        self.forms = {k: f for k, f in self.forms.items() if len(f) > 1 or k in self._spelled}
        return self

    def _count_forms(self, title: str, abstract: str, defs: list[tuple[str, str]] | None, sign: int,
                     create: bool) -> tuple[set[str], set[str]]:
        """One paper's concept keys (all, and those in its title); adds ``sign`` to its spellings' counts.

        ``create``: start a count for a concept not yet in :attr:`forms` (while fitting; an update only touches
        the spellings it keeps, see :meth:`update`).
        """
        keys: set[str] = set()
        tkeys: set[str] = set()
        local = self.local_acronyms(title, abstract, defs)
        self._spelled.update(local.values())
        for text, in_title in ((title, True), (abstract, False)):
            for c, _, _ in candidate_spans(text):
                k = self._key(c, local)
                keys.add(k)
                if in_title:
                    tkeys.add(k)
                if concept_key(c) == k:  # spell an acronym's concept by its long form
                    f = self.forms.get(k)
                    if f is None and (create or (sign > 0 and k in self._spelled)):
                        f = self.forms[k] = Counter()
                    if f is not None:
                        f[surface := _surface(c)] += sign
                        if f[surface] <= 0:
                            del f[surface]
        return keys, tkeys

    def doc_freq(self, key: str) -> int:
        """Papers of the corpus whose candidates include the concept ``key`` (0 when none)."""
        return self.df.get(key) or (1 if _hash(key) in self._df1 else 0)

    def _title_df(self, key: str) -> int:
        return self.title_df.get(key, 0) if key in self.df else int(_hash(key) in self._title1)

    def _parent_df(self, key: str) -> int:
        return self.parent_df.get(key) or (1 if _hash(key) in self._parent1 else 0)

    def update(self, added: Iterable[tuple[str, str]], removed: Iterable[tuple[str, str]] = ()
               ) -> KeyphraseExtractor:
        """Add papers to (and take papers out of) the fitted statistics without refitting the corpus.

        Document and title frequencies come out as a fit of the new corpus would give them. Kept as they were:
        the corpus-wide acronyms (a paper's own definitions still apply to it), the nesting statistic of a phrase
        whose longer phrase lost papers (it only grows), and the spellings of concepts that had one spelling
        before (shown as each paper writes them). A rebuild uses it while at most a quarter of the papers are new
        or changed, the same rule by which it keeps topics; at 42k papers it takes a second where a fit takes a
        minute.

        Args:
            added: ``(title, abstract)`` of the papers that come in (None counts as empty).
            removed: ``(title, abstract)`` of the papers that leave, as they were fitted.

        Returns:
            ``self``.
        """
        touched: set[str] = set()
        for docs, sign in ((removed, -1), (added, +1)):
            for title, abstract in docs:
                keys, tkeys = self._count_forms(title or "", abstract or "", None, sign, create=False)
                for k in keys:
                    self._add_count(k, k in tkeys, sign)
                touched |= keys
                self.n_docs += sign
        for k in touched:  # the nesting statistic of the sub-phrases of what was added
            d = self.doc_freq(k)
            words = k.split()
            if d and len(words) > 1:
                for sub in (" ".join(words[1:]), " ".join(words[:-1])):
                    if d > self._parent_df(sub):
                        if d > 1:
                            self.parent_df[sub] = d
                            self._parent1.discard(_hash(sub))
                        else:
                            self._parent1.add(_hash(sub))
        self._canon = {}
        return self

    def _add_count(self, k: str, in_title: bool, sign: int) -> None:
        """Add ``sign`` (±1) paper to the concept ``k``'s document frequency (and its title frequency)."""
        d, t = self.doc_freq(k), self._title_df(k)
        d2, t2 = max(d + sign, 0), max(t + (sign if in_title else 0), 0)
        h = _hash(k)
        self.df.pop(k, None)
        self.title_df.pop(k, None)
        self._df1.discard(h)
        self._title1.discard(h)
        if d2 > 1:
            self.df[k] = d2
            if t2:
                self.title_df[k] = t2
        elif d2 == 1:
            self._df1.add(h)
            if t2:
                self._title1.add(h)

    def canonical(self, phrase: str, key: str | None = None) -> str:
        """The corpus's most frequent spelling of ``phrase``'s concept (the long form for an acronym).

        Args:
            phrase: a candidate phrase.
            key: overrides the concept key (a paper's own acronym definitions, see :meth:`local_acronyms`).

        Returns:
            The canonical spelling; the phrase's display form when the corpus never saw the concept.
        """
        k = key or self._key(phrase)
        if k in self._canon:
            return self._canon[k]
        forms = self.forms.get(k)
        if forms:
            best = max(forms.items(), key=lambda x: (x[1], x[0].islower(), x[0]))[0]
        elif k != concept_key(phrase):
            best = next((v for s, v in self.acronyms.items() if self._acr_key.get(concept_key(s)) == k), None)
            if best is None:
                return _surface(phrase)
        else:
            return _surface(phrase)
        self._canon[k] = best
        return best

    # --- one paper ----------------------------------------------------------------------------------------

    def features(self, title: str, abstract: str) -> tuple[list[str], list[str], np.ndarray]:
        """Feature rows of the paper's candidate concepts.

        Args:
            title: the paper's title (None counts as empty).
            abstract: the paper's abstract (None counts as empty).

        Returns:
            ``(keys, spellings, X)``: concept keys, the spelling first seen in the paper, and ``X``
            ``(n_candidates, len(FEATURES))`` float, one row of :data:`FEATURES` per candidate concept.
        """
        title, abstract = title or "", abstract or ""
        info: dict[str, list] = {}  # key -> [in_title, tf, first_pos, maximal, phrase, precolon, n_whole]
        pre = title.split(":")[0].strip() if ":" in title else ""
        local = self.local_acronyms(title, abstract)
        long_keys = self._long_keys | set(local.values())
        for c, _, whole in candidate_spans(title):
            k = self._key(c, local)
            e = info.setdefault(k, [False, 0, 1.0, False, c, False, 0])
            e[0] = True
            e[3] |= whole
            e[5] |= c == pre
        spans = candidate_spans(abstract)
        n_tok = max((s for _, s, _ in spans), default=0) + 1
        for c, start, whole in spans:
            k = self._key(c, local)
            e = info.setdefault(k, [False, 0, 1.0, False, c, False, 0])
            e[1] += 1
            e[2] = min(e[2], start / n_tok)
            e[3] |= whole
            e[6] += whole
        keys, phrases, rows = [], [], []
        for k, (in_title, tf, pos, whole, c, precolon, n_whole) in info.items():
            words = k.split()
            cw = c.lower().split()
            nw = len(words)
            df = self.df.get(k, 0) or 1
            of = " of " in f" {c} "
            if of and df < 2:
                continue
            tdf = self._title_df(k)
            acr = k in long_keys
            caps = not acr and any(_keep_case(w) for w in c.split())
            rows.append((
                1.0, float(in_title), math.log1p(tf), float(tf > 0), 1.0 - pos if tf else 0.0,
                float(nw == 1), float(nw == 2), float(nw == 3), float(nw >= 4),
                float(df <= 1), float(2 <= df <= 3), float(4 <= df <= 10), float(11 <= df <= 30),
                float(31 <= df <= 100), float(df > 100), math.log1p(tdf), tdf / df,
                float(acr), float(caps), float(precolon), float(whole), float(of),
                float(words[-1] in BROAD_KEYS), float(in_title and nw == 1), n_whole / tf if tf else 0.0,
                float(cw[0].endswith("ing")), float(cw[-1].endswith("ing")), float(cw[-1].endswith("ed")),
                float(_adjective_like(cw[-1])), min(1.0, self._parent_df(k) / df),
            ))
            keys.append(k)
            phrases.append(c)
        return keys, phrases, np.array(rows, dtype=float).reshape(len(rows), len(FEATURES))

    def score(self, title: str, abstract: str) -> list[tuple[str, float]]:
        """Score all candidates of one paper.

        Args:
            title: the paper's title.
            abstract: the paper's abstract.

        Returns:
            ``(phrase, keyphrase probability)`` pairs, best first, one entry per concept, each in its canonical
            spelling.
        """
        keys, phrases, x = self.features(title, abstract)
        if not keys:
            return []
        p = 1.0 / (1.0 + np.exp(-(x @ self.weights)))
        scored = [(self.canonical(c, k), float(s)) for k, c, s in zip(keys, phrases, p, strict=True)]
        scored.sort(key=lambda x: (-x[1], x[0]))
        return scored

    def _fragment(self, key: str) -> bool:
        """A single word, or a phrase seen in the corpus mostly inside one longer phrase (``tangent kernel``)."""
        return " " not in key or self._parent_df(key) >= FRAGMENT_SHARE * max(self.doc_freq(key), 1)

    def extract(self, title: str, abstract: str, scored: list[tuple[str, float]] | None = None) -> list[str]:
        """Choose ``min_k``-``max_k`` keyphrases of one paper (5+ when the paper has them), best first.

        No two share a :func:`concept_key` (nor differ only by "neural": ``convolutional networks`` =
        ``convolutional neural networks``) and no single word sits next to a phrase containing it.

        Args:
            title: the paper's title.
            abstract: the paper's abstract.
            scored: a precomputed :meth:`score` result; None to score the paper here.

        Returns:
            The keyphrases, most specific first.
        """
        chosen: list[str] = []
        keys: list[str] = []
        for phrase, s in scored if scored is not None else self.score(title, abstract):
            if not single_word_ok(phrase):
                continue
            k = concept_key(phrase)
            if _same_concept(k) in {_same_concept(c) for c in keys} or (
                    self._fragment(k) and any(f" {k} " in f" {c} " for c in keys)):
                continue
            if len(chosen) >= max(self.min_k, TARGET_K) and s < STOP_PROB:
                break
            # most specific first: a phrase replaces the fragments (single words) it contains, in their place
            inner = [i for i, c in enumerate(keys) if self._fragment(c) and f" {c} " in f" {k} "]
            if inner:
                chosen[inner[0]], keys[inner[0]] = phrase, k
                for i in reversed(inner[1:]):
                    del chosen[i], keys[i]
                continue
            chosen.append(phrase)
            keys.append(k)
            if len(chosen) >= self.max_k:
                break
        return chosen




#: single words that name no concept on their own (seen as keyphrases of ICLR 2021 papers: "value", "worth",
#: "linear; depth"): quantities and properties, prose nouns and title verbs
GENERIC_SINGLE = frozenset("""
value values worth depth width height size length linear nonlinear role roles matters matter mind meets meet fly
evaluate estimate estimates solve discover learn examples example weights weight layers layer label labels object
objects images mistakes environments environment properties property effect effects power step steps cost costs
rate rates gap gaps view views tool tools need needs way case cases point points set sets rules rule fast rapid
robust implicit explicit local global sound""".split())
def single_word_ok(phrase: str) -> bool:
    """Whether a one-word keyphrase names a concept on its own.

    Kept: acronyms and mixed case (``BERT``, ``GPT-3``), and nouns that name a method or phenomenon (``pruning``,
    ``meta-learning``, ``mixup``), adjectives that name a field (``multilingual``) and hyphenated modifiers that
    authors list as keywords (``zero-shot``, ``multi-agent``). Dropped: the generic words of :data:`GENERIC_SINGLE`
    and bare participles (``supervised``).

    Args:
        phrase: a keyphrase.

    Returns:
        True for phrases of two or more words and for one-word concepts.
    """
    if " " in phrase.strip():
        return True
    if _keep_case(phrase) or any(c.isdigit() for c in phrase):
        return True
    w = phrase.lower()
    if w in GENERIC_SINGLE:
        return False
    last = w.split("-")[-1]
    if len(w.split("-")) > 1 and (last in GENERIC_SINGLE or last in ("trained", "based", "efficient")):
        return False  # "large-scale" names no more than "scale"; "pre-trained", "model-based" qualify a noun
    # hyphenated modifiers stay: authors list "zero-shot" and "multi-agent" as keywords (dropping them cost 0.002
    # F1@5 on COLM); a bare participle (trained, supervised, based) names nothing
    return not (last.endswith("ed") and len(last) > 4 and "-" not in w)


def _same_concept(key: str) -> str:
    """A :func:`concept_key` without "neural": ``deep neural network`` and ``deep network`` name one concept."""
    return " ".join(w for w in key.split() if w != "neural") or key
TARGET_K = 5
STOP_PROB = 0.05
FRAGMENT_SHARE = 0.3


def _hash(key: str) -> int:
    """A stable 64-bit hash of a concept key (BLAKE2b): the rare-concept counts are kept as these."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
