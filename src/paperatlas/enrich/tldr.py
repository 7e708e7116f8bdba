r"""One-sentence TL;DRs.

Method ``"extractive v2"``: a learned selector picks one abstract sentence *and* how much of it to keep, then the
choice is rendered readable.

1. **Clean** every abstract sentence (:func:`clean_sentence`): LaTeX math rendered as text (``$\ell_p$`` →
   ``ℓp``), citations (``(Smith et al., 2019)``, ``[12]``, ``\citet{..}``) and asides (``(e.g., ...)``) dropped,
   framing removed (``In this paper, we propose`` → ``We propose``, ``This paper studies`` → ``We study``),
   leading connectives dropped (``However,``, ``To address this issue,``).
2. **Candidates** (:func:`candidates`): the cleaned sentence and its prefixes cut at clause boundaries
   (``, which``, `` by ``, `` using ``, ``; ``, ...), each at most :data:`MAX_WORDS` words; a sentence with no
   usable cut is shortened at the last word that leaves no dangling function word.
   Besides, a sentence saying what the paper does (``We propose X``) joined to a later one saying what it finds
   (``We show that Y``): ``We propose X and show that Y`` (:func:`paper_candidates`).
3. **Score** each candidate with a linear model over hand features (:func:`candidate_features`: position,
   length, cue phrases such as ``we propose``/``we show``, title overlap, centrality in the abstract, numbers,
   first person, dangling starts, the kind of cut, and a small bag of words). The weights are learned on
   SciTLDR-A train by ``scripts/train_tldr.py`` (ridge regression on each candidate's ROUGE against the author
   TL;DR) and shipped in ``data/tldr_selector.json``.

The best-scoring candidate that does not start with a dangling reference (``This``, ``These``, ``It``) is the
TL;DR, with references inside it made definite (``this reliance on CNNs`` → ``the reliance on CNNs``).
``extract_tldr`` needs no model (nor the paper embedding) and runs at ~100 papers/s on one CPU core.
"""

from __future__ import annotations

import re

from ..latex import render_latex
from ..text import split_sentences, word_tokens
from ..vocab import STOP
from .tldr_selector import (  # noqa: F401 - re-exported: scripts/train_tldr.py and tests use them from here
    _DANGLING,
    MODEL,
    MODEL_PATH,
    Context,
    _toks,
    candidate_features,
    load_model,
    score,
    sentence_features,
    word_features,
)

METHOD = "extractive v2"
MAX_WORDS = 30
MIN_WORDS = 6

# ------------------------------------------------------------------------------------------- cleaning rules

_CITE = re.compile(
    r"\s*\\cite[a-z]*\{[^{}]*\}"  # \cite{..}, \citet{..}
    r"|\s*\[\d+(?:\s*[,–-]\s*\d+)*\]"  # [12], [1, 2], [3-5]
    r"|\s*\((?:[A-Z][^()]*?(?:et al\.?|\band\b [A-Z][^()]*?)?,? (?:19|20)\d\d[a-z]?(?:[;,] ?)?)+\)"  # (Smith, 2019)
)
# parenthetical asides that carry no claim: "(e.g., CIFAR-10, ImageNet)", "(i.e. ...)", "(see ...)"
_ASIDE = re.compile(r"\s*\((?:e\.g\.?|i\.e\.?|see |cf\.|for example|for instance|such as|including)[^()]*\)", re.I)
_FRAMING = re.compile(
    r"^(?:(?:in|within|through|with) (?:this|the present|the current|our) (?:[a-z-]+ ){0,2}(?:paper|work|study|note|"
    r"article|submission|abstract|report|thesis|manuscript)|here|herein)\s*(?:,\s*|\s+)"
    r"|^(?:however|moreover|furthermore|additionally|also|thus|hence|therefore|finally|further|then|"
    r"in addition|in particular|specifically|consequently|accordingly)\s+(?=we\b)"
    r"|^(?:to this end|to that end|in particular|specifically|concretely|in summary|overall|in this context|"
    r"to do so|to do this|as a result|consequently|"
    r"to (?:address|tackle|solve|overcome|alleviate|mitigate|remedy|fill|bridge|handle|resolve) (?:this|these|"
    r"such|the above|both|those|this gap|that)[^,]{0,40}|"
    r"(?:motivated|inspired|based|building|guided|driven) (?:by|on|upon) (?:this|these|that|such|the above)"
    r"[^,]{0,40}|"
    r"however|moreover|furthermore|additionally|also|then|thus|hence|therefore|finally|further|besides|"
    r"in addition|in contrast|instead|nevertheless|nonetheless|notably|importantly|interestingly|surprisingly|"
    r"unfortunately|crucially|meanwhile|second|secondly|third|thirdly|first|firstly|lastly|next|"
    r"indeed|in fact|on the other hand|as such|as a consequence|subsequently|similarly|likewise|"
    r"empirically|experimentally|theoretically|technically|in practice|in particular)\s*,\s+", re.I)
_THIS_PAPER = re.compile(r"^(?:(?:this|our|the present|the current|the) (?:paper|work|study|article|note|submission)"
                         r"|(?P<authors>the authors))\s+(?:also\s+)?([a-z]+)\b", re.I)


def _we_verb(verb: str) -> str:
    """``proposes`` → ``propose``, ``studies`` → ``study`` (third person to first person plural)."""
    v = verb.lower()
    if v in {"is", "was"}:
        return "are"
    if v == "has":
        return "have"
    if v.endswith("ies") and len(v) > 4:
        return v[:-3] + "y"
    if v.endswith(("sses", "shes", "ches", "xes", "zes")):
        return v[:-2]
    if v.endswith("s") and not v.endswith("ss"):
        return v[:-1]
    return v


def clean_sentence(sentence: str) -> str:
    """Apply the readability rules to one abstract sentence.

    LaTeX rendered, Markdown emphasis, citations and asides dropped, framing and leading connectives removed,
    ``This paper proposes`` → ``We propose``, first letter capitalised, whitespace normalised.

    Args:
        sentence: one raw abstract sentence.

    Returns:
        The cleaned sentence.
    """
    s = " ".join(sentence.split())
    s = _CITE.sub("", s)
    s = re.sub(r"(?<![\w*])\*{1,2}([^*\s][^*]*?)\*{1,2}(?![\w*])", r"\1", s)  # Markdown emphasis
    s = _ASIDE.sub("", s)
    s = render_latex(s)
    for _ in range(3):
        new = _FRAMING.sub("", s)
        if new == s:
            break
        s = new
    m = _THIS_PAPER.match(s)
    verb = m.group(2).lower() if m else ""
    if m and (m.group("authors") and verb not in {"are", "were", "have", "had"}
              or verb.endswith("s") and verb not in {"is", "was", "has"}):
        s = "We " + _we_verb(m.group(2)) + s[m.end():]
    s = re.sub(r"\s+([,.;:)])", r"\1", s)
    s = re.sub(r"\(\s*\)", "", s)
    s = " ".join(s.split())
    if s and s[0].islower():
        s = s[0].upper() + s[1:]
    return s


# ----------------------------------------------------------------------------------------------- candidates

#: Clause boundaries a TL;DR may be cut before (kind → pattern); the cut keeps the text before the match.
CUTS = {
    "comma-which": r", (?:which|where|whereby|while|whereas|thereby|thus|hence|allowing|enabling|leading|"
                   r"resulting|making|yielding|providing|i\.e\.|e\.g\.|especially|particularly|including|"
                   r"such as|as well as|even|without|despite|although|though)\b",
    "comma-and": r", (?:and|but|or)\b",
    "comma": r",",
    "semicolon": r";|:| -- | — ",
    "by": r" (?:by|via|through|using|based on|with the help of)\b",
    "that": r" (?:which|that|where|whose)\b",
    "to": r" (?:in order to|to|so that|for)\b",
    "with": r" (?:with|without|while|when|under|on|in|across|over|from|at)\b",
    "and": r" (?:and|but|as well as)\b",
}
_CUT_RES = {k: re.compile(v) for k, v in CUTS.items()}
_END_BAD = frozenset("""a an the of to for and or but with by in on at from as that which whose where when while
via using than between into onto over under its their our his her this these those is are was were be been being
can could may might will would should must has have had do does not no such each both either neither very more most
less least also only just so thus hence e.g i.e whether if because since although though how what who whom
""".split())


def _trim_dangling(words: list[str]) -> list[str]:
    """Drop trailing function words and unbalanced brackets from a cut word list."""
    while words:
        w = words[-1].lower().strip(",;:")
        if w in _END_BAD or not any(c.isalnum() for c in w) or words[-1].endswith(("-", "/")):
            words = words[:-1]
            continue
        text = " ".join(words)
        if text.count("(") > text.count(")"):
            words = text[:text.rfind("(")].split()
            continue
        break
    return words


def _finish(text: str) -> str:
    text = text.strip().rstrip(" ,;:-—")
    if text.count("(") > text.count(")"):
        text = text[:text.rfind("(")].rstrip(" ,;:")
    if text and text[-1] not in ".!?":
        text += "."
    return text


def candidates(sentence: str, max_words: int = MAX_WORDS) -> list[tuple[str, str, float]]:
    """Candidate TL;DRs from one cleaned sentence.

    The whole sentence (kind ``full``) when it fits in ``max_words`` words, plus every prefix ending before a
    clause boundary of :data:`CUTS` with at least :data:`MIN_WORDS` words; when nothing fits, the sentence cut
    at ``max_words`` words without dangling function words (kind ``hard``). Each text ends with a period.

    Args:
        sentence: a sentence cleaned by :func:`clean_sentence`.
        max_words: most words in a candidate (default :data:`MAX_WORDS`).

    Returns:
        ``(text, cut kind, fraction of words kept)`` per distinct candidate text.
    """
    base = sentence.rstrip(" .")
    n = len(base.split())
    out: dict[str, tuple[str, str, float]] = {}
    if n <= max_words:
        out[_finish(base)] = (_finish(base), "full", 1.0)
    for kind, rx in _CUT_RES.items():
        for m in rx.finditer(base):
            prefix = base[:m.start()]
            words = prefix.split()
            if len(words) < MIN_WORDS or len(words) > max_words:
                continue
            words = _trim_dangling(words)
            if len(words) < MIN_WORDS:
                continue
            text = _finish(" ".join(words))
            if text not in out:
                out[text] = (text, kind, len(words) / max(n, 1))
    if not out:
        words = _trim_dangling(base.split()[:max_words])
        if len(words) < MIN_WORDS:
            words = base.split()[:max_words]
        text = _finish(" ".join(words))
        out[text] = (text, "hard", len(words) / max(n, 1))
    return list(out.values())


_LEAD = re.compile(r"^(?P<lead>[^,]{12,120}?),\s+(?=(?:we|our)\b)", re.I)
_THAT = re.compile(r"^(?:we|our (?:results|experiments|analysis|evaluation)|(?:extensive |empirical |experimental )?"
                   r"(?:results|experiments|evaluations?)(?: [^,]{0,40})?) (?:also |further |empirically )?"
                   r"(?:show|shows|demonstrate|demonstrates|indicate|indicates|suggest|suggests|confirm|confirms|"
                   r"reveal|reveals|prove|proves|find|argue|verify|verifies) that\s+", re.I)
_PAREN = re.compile(r"\s*\([^()]*\)")


def variants(cleaned: str, max_words: int = MAX_WORDS) -> list[tuple[str, str, float]]:
    """The :func:`candidates` of a cleaned sentence and of its rewrites.

    The rewrites are: without a leading clause before ``we``/``our`` (``To improve X, we propose Y`` → ``We
    propose Y``), without a ``we show that`` frame, and without parentheses.

    Args:
        cleaned: a sentence cleaned by :func:`clean_sentence`.
        max_words: most words in a candidate (default :data:`MAX_WORDS`).

    Returns:
        ``(text, cut kind, fraction of words kept)`` per distinct candidate text; kinds of the rewrites are
        prefixed (``lead+``, ``that+``, ``noparen+``).
    """
    n = len(cleaned.split())
    out = {c[0]: c for c in candidates(cleaned, max_words)}
    rewrites = []
    m = _LEAD.match(cleaned)
    if m and not _DANGLING.match(cleaned[m.end():]):
        rewrites.append(("lead+", cleaned[m.end():]))
    m = _THAT.match(cleaned)
    if m and not _DANGLING.match(cleaned[m.end():]):
        rewrites.append(("that+", cleaned[m.end():]))
    if "(" in cleaned:
        rewrites.append(("noparen+", " ".join(_PAREN.sub("", cleaned).split())))
    for prefix, text in rewrites:
        if len(text.split()) < MIN_WORDS:
            continue
        text = text[0].upper() + text[1:]
        for t, kind, _kept in candidates(text, max_words):
            if t not in out:
                out[t] = (t, prefix + kind, len(t.split()) / max(n, 1))
    return list(out.values())


def paper_candidates(title: str, sentences: list[str], model: dict | None = None
                     ) -> list[tuple[str, dict[str, float], int]]:
    """All candidates of one paper, including joined ``We propose X and show that Y`` ones.

    Args:
        title: the paper's title.
        sentences: the abstract's sentences (as written).
        model: a selector from :func:`load_model`, for its vocabulary and word model; None for neither.

    Returns:
        ``(text, features, sentence index)`` per candidate.
    """
    cleaned = [clean_sentence(s) for s in sentences]
    ctx = Context(title, sentences, cleaned, model)
    vocab = (model or {}).get("_vocab")
    out = []
    for i, (raw, cl) in enumerate(zip(sentences, cleaned, strict=True)):
        if len(word_tokens(cl)) < 4:
            continue
        sent = sentence_features(ctx, i, raw, cl)
        for text, kind, kept in variants(cl):
            if " ".join(word_tokens(text.lower())) == ctx.title_key:
                continue
            out.append((text, candidate_features(ctx, sent, text, kind, kept, vocab), i))
    # "We propose X." + "We show that Y." -> "We propose X and show that Y." (what it does and what it finds)
    does = [(i, cl) for i, cl in enumerate(cleaned) if _WE_DO.match(cl)]
    finds = [(j, cl) for j, cl in enumerate(cleaned) if _WE_FIND.match(cl)]
    for i, first in does:
        for j, second in [(j, cl) for j, cl in finds if j > i][:2]:
            fa = [t for t, kind, _ in candidates(first, MAX_WORDS - 6) if kind != "hard"]
            sb = [t for t, kind, _ in candidates(second[3:], MAX_WORDS - 6) if kind != "hard"]
            for ta in sorted(fa, key=len)[:2]:
                for tb in sorted(sb, key=len)[:2]:
                    text = ta.rstrip(".") + " and " + tb
                    if len(text.split()) > MAX_WORDS:
                        continue
                    sent = sentence_features(ctx, i, sentences[i], first)
                    f = candidate_features(ctx, sent, text, "joined", len(text.split()) / max(
                        len(first.split()) + len(second.split()), 1), vocab)
                    f[f"joined_gap_{min(j - i, 3)}"] = 1.0
                    out.append((text, f, i))
    return out


_WE_DO = re.compile(r"^We (?:propose|introduce|present|develop|design|devise|formulate|describe|study|investigate|"
                    r"analy[sz]e|explore|examine|consider|address|tackle|revisit|identify|establish)\b")
_WE_FIND = re.compile(r"^We (?:also |further |then |empirically |theoretically |experimentally )?(?:show|demonstrate|"
                      r"prove|find|observe|obtain|achieve|verify|validate|confirm|evaluate)\b")


def _undangle(text: str) -> str:
    """Make inner dangling references definite: ``this/these/those X`` → ``the X``, ``such X`` → ``X``.

    A demonstrative used as a pronoun (``this is``) is left alone.
    """
    def det(m: re.Match[str]) -> str:
        nxt = m.group(2).lower()
        verb_like = nxt.endswith("ed") or nxt.endswith("s") and not nxt.endswith(("ss", "is", "us"))
        if nxt in STOP or m.group(1).lower() == "this" and verb_like:  # "this is", "this leads to"
            return m.group(0)
        return ("The " if m.group(1)[0].isupper() else "the ") + m.group(2)

    text = re.sub(r"\b(this|these|those) ([A-Za-z][\w-]*)", det, text)
    return re.sub(r"\bsuch (?!as\b|that\b)", "", text)


def rank_candidates(title: str, abstract: str, model: dict | None = None) -> list[tuple[str, float]]:
    """Every candidate TL;DR of a paper with its selector score, best first (ties: earlier sentence).

    Args:
        title: the paper's title.
        abstract: the paper's abstract.
        model: a selector from :func:`load_model`; None for the shipped :data:`MODEL`.

    Returns:
        ``(text, score)`` pairs, best first.
    """
    sentences = [s for s in split_sentences(abstract) if len(word_tokens(s)) >= 4]
    model = MODEL if model is None else model
    cands = paper_candidates(title, sentences, model)
    scored = sorted(((score(f, model), i, text) for text, f, i in cands), key=lambda c: (-c[0], c[1]))
    return [(text, s) for s, _, text in scored]


def extract_tldr(title: str, abstract: str) -> str:
    """A one-sentence TL;DR of a paper (≤ :data:`MAX_WORDS` words).

    The best-scoring candidate that does not open with a dangling reference, with inner references made definite
    (``this reliance`` → ``the reliance``, ``such networks`` → ``networks``: :func:`_undangle`). Preferring
    candidates free of such references instead cost 0.1-0.7 ROUGE-1 and was dropped.

    Args:
        title: the paper's title.
        abstract: the paper's abstract.

    Returns:
        The TL;DR, ending with a period; ``""`` when the abstract is empty.
    """
    ranked = rank_candidates(title, abstract)
    if not ranked:
        sentences = [s for s in split_sentences(abstract) if len(word_tokens(s)) >= 4]
        return _finish(" ".join(clean_sentence(sentences[0]).split()[:MAX_WORDS])) if sentences else ""
    usable = [(t, s) for t, s in ranked if not _DANGLING.match(t)]
    if not usable:
        # every candidate opens with a dangling reference: "This method ..." reads as "The method ..."
        text = re.sub(r"^(?:this|these|those|that|such)\b", "The", ranked[0][0], count=1, flags=re.I)
        return _finish(_undangle(text))
    return _finish(_undangle(usable[0][0]))
