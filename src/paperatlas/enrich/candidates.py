"""Candidate keyphrases and acronym definitions in a paper's text, for :mod:`paperatlas.enrich.keyphrases`.

* :func:`candidate_spans` / :func:`candidates`: runs of 1-4 words with no stop word or punctuation (after Rose et al.
  2010, RAKE), not starting or ending with research filler, plus ``A of B`` phrases (``mixture of experts``); TeX
  math and commands break runs and give no words, and no candidate holds a lone lower-case letter or ends in a
  single letter (``x t``, ``R n``, ``matrix X``: variables of a formula written without TeX);
* :func:`find_acronyms`: ``long form (ACRONYM)`` definitions (Schwartz & Hearst 2003).
"""

from __future__ import annotations

import re

from ..vocab import BROAD, GENERIC, NOT_ADVERBS, STOP

#: the most words a candidate phrase has
MAX_WORDS = 4

# a word starts at a word boundary: "16x16" is no word (not "x16"), "GPT-3" and "state-of-the-art" are one
_TOKEN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*|[0-9][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*"
                    r"|[.,;:!?()\[\]{}\"$=<>/\\]")


#: Research-prose filler that may not *end* a candidate phrase. Unlike :data:`GENERIC` it lets through words
#: that end real terms (``adversarial training``, ``interpretability analysis`` stays out, ``benchmark`` in).
_NOT_END = GENERIC - {"training", "benchmark", "benchmarks", "analysis", "performance", "efficiency"}
_NOT_START = GENERIC - {"efficient", "benchmark", "benchmarks", "training", "recurrent"}
_SINGLE_BAD = BROAD | {"large", "language", "fine", "based", "multi", "self", "human", "text", "input", "output",
                       "test", "quality", "level", "order", "information", "knowledge", "tool", "time", "context"}
_WORD = re.compile(r"[\w-]+")
# TeX math ($...$, $$...$$, \(...\), \[...\]) and TeX commands (\mathbb, \ell): never part of a phrase; each is
# cut out as a break, so "$\mathbf{x} \in \mathbb{R}^n$" gives no "mathbf x" or "r n"
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]|\\[A-Za-z]+", re.S)
_ACRONYM = re.compile(r"\(\s*([A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*?)(s?)\s*\)")
_SEGMENT_END = re.compile(r"[.;:!?()\[\]{}\"]|, ")


def _keep_case(w: str) -> bool:
    return any(len(p) > 1 and (p.isupper() or any(c.isupper() for c in p[1:])) for p in w.split("-"))


def _surface(phrase: str) -> str:
    """Display form: lower-case unless a word (or a hyphenated part) is an acronym or mixed case.

    ``BERT``, ``ResNet``, ``Text-to-SQL`` keep their case; but ``low-rank`` for ``Low-Rank``.
    """
    return " ".join(w if _keep_case(w) else w.lower() for w in phrase.split())


_ADJ_END = ("al", "ive", "ous", "able", "ible", "ful")
#: words that make an ``A of B`` phrase a fragment of prose ("capable of training", "terms of accuracy")
_NOT_BEFORE_OF = frozenset("""capable able free aware independent regardless instead terms lot lots number numbers
set sets kind kinds type types part parts form forms amount amounts majority variety range use means level levels
order lack because""".split())
_ADJ_NOUNS = frozenset("""retrieval signal removal tutorial interval potential proposal approval trial arrival
journal manual objective narrative alternative initiative rival""".split())


def _adjective_like(w: str) -> bool:
    w = w.lower()
    return w.endswith(_ADJ_END) and w not in _ADJ_NOUNS or w in ("neural", "deep", "large", "multi", "fine")


def _ok(words: list[str]) -> bool:
    first, last = words[0].lower(), words[-1].lower()
    if first in _NOT_START or last in _NOT_END:
        return False
    # "x t", "t updates", "R n", "matrix X": variables of formulas written without TeX ("x_t", "R^n")
    if any(len(w) == 1 and w.islower() for w in words) or len(words) > 1 and len(words[-1]) == 1:
        return False
    if len(words) == 1:
        if len(first) < 2 or (len(first) < 3 and not words[0].isupper()) or first in _SINGLE_BAD or first in GENERIC:
            return False
    elif first in BROAD and first not in ("neural", "deep", "graph", "data"):
        return False
    return not any(w.lower().endswith("ly") and len(w) > 4 and w.lower() not in NOT_ADVERBS for w in words)


def _runs(text: str) -> list[tuple[list[str], int, str]]:
    """Stop-word/punctuation-delimited runs ``(words, start token index, following token)``."""
    runs: list[tuple[list[str], int, str]] = []
    cur: list[str] = []
    start = 0
    toks = _TOKEN.findall(_MATH.sub(" ; ", text) if "$" in text or "\\" in text else text)
    for i, tok in enumerate(toks):
        if not tok[0].isalpha() or tok.lower() in STOP:
            if cur:
                runs.append((cur, start, tok.lower()))
                cur = []
            continue
        if not cur:
            start = i
        cur.append(tok)
    if cur:
        runs.append((cur, start, ""))
    return runs


def candidate_spans(text: str) -> list[tuple[str, int, bool]]:
    """Every candidate phrase in ``text``, in order, with its position.

    A candidate is a contiguous run of 1-:data:`MAX_WORDS` words with no stop word or punctuation (RAKE), that
    does not start or end with research filler, is not a lone broad word and holds no adverb; plus ``A of B``
    phrases (``mixture of experts``) bridging two runs, whose acceptance the extractor checks against the corpus.

    Args:
        text: a title or an abstract.

    Returns:
        ``(phrase, start token index, is a whole run)`` for every candidate, in order (original casing).
    """
    runs = _runs(text)
    out: list[tuple[str, int, bool]] = []
    for j, (run, start, nxt) in enumerate(runs):
        for n in range(1, min(MAX_WORDS, len(run)) + 1):
            for i in range(len(run) - n + 1):
                words = run[i:i + n]
                if _ok(words):
                    out.append((" ".join(words), start + i, n == len(run)))
        if nxt == "of" and j + 1 < len(runs) and runs[j + 1][1] == start + len(run) + 1 \
                and not _adjective_like(run[-1]) and run[-1].lower() not in _NOT_BEFORE_OF:
            nrun = runs[j + 1][0]
            for a in (1, 2):
                for b in (1, 2):
                    if a <= len(run) and b <= len(nrun) and a + b <= 3:
                        words = run[len(run) - a:] + nrun[:b]
                        if _ok(words):
                            out.append((" ".join(run[len(run) - a:] + ["of"] + nrun[:b]),
                                        start + len(run) - a, False))
    return out


def candidates(text: str) -> list[str]:
    """All candidate phrases in ``text`` in order of occurrence (repeats kept), original casing.

    Args:
        text: a title or an abstract.

    Returns:
        The phrases of :func:`candidate_spans`, without positions.
    """
    return [c for c, _, _ in candidate_spans(text)]


def _long_form(short: str, before: str) -> str | None:
    """The long form of acronym ``short`` at the end of ``before`` (Schwartz & Hearst 2003).

    The shortest tail of ``before`` whose words cover the letters of ``short`` in order, the first letter
    starting a word; ``None`` when there is none.
    """
    words = before.split()
    if not words:
        return None
    cand = " ".join(words[-min(len(short) + 5, 2 * len(short)):])
    s, li = len(short) - 1, len(cand) - 1
    while s >= 0:
        c = short[s].lower()
        if not c.isalnum():
            s -= 1
            continue
        while li >= 0 and (cand[li].lower() != c or (s == 0 and li > 0 and cand[li - 1].isalnum())):
            li -= 1
        if li < 0:
            return None
        li -= 1
        s -= 1
    long = cand[cand.rfind(" ", 0, li + 1) + 1:]
    lw = long.split()
    if len(long) <= len(short) or not lw or lw[0].lower() in STOP or len(lw) < 2 and "-" not in long:
        return None
    return long.strip("-")


def _written_as_acronym(phrase: str) -> bool:
    """Whether a candidate is written like an acronym: a capital followed by at least one more capital.

    ``MAP``, ``NTK``, ``GANs``, ``ViT`` are; ``map`` or ``mAP`` are not.
    """
    p = phrase.strip()
    return len(p) >= 2 and p[0].isupper() and any(c.isupper() for c in p[1:])


def find_acronyms(text: str) -> list[tuple[str, str]]:
    """Find the ``long form (ACRONYM)`` definitions in ``text`` (Schwartz & Hearst 2003).

    Args:
        text: a paper's text, typically ``"<title>. <abstract>"``.

    Returns:
        ``(ACRONYM, long form)`` for each definition, in order; acronyms with fewer than 2 capitals or more
        than 10 characters are skipped.
    """
    out = []
    for m in _ACRONYM.finditer(text):
        short = m.group(1)
        if sum(c.isupper() for c in short) < 2 or len(short) > 10:
            continue
        head = text[:m.start()]
        cut = max((x.end() for x in _SEGMENT_END.finditer(head[-200:])), default=0)
        seg = head[-200:][cut:]
        long = _long_form(short, seg)
        if long:
            out.append((short, long))
    return out
