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

import json
import math
import re
from functools import cache
from pathlib import Path

from ..latex import render_latex
from ..text import split_sentences, word_tokens
from ..vocab import STOP, norm_word

METHOD = "extractive v2"
MAX_WORDS = 30
MIN_WORDS = 6
MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "tldr_selector.json"

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
_DANGLING = re.compile(r"^(?:this|these|those|that|it|its|they|their|them|such|the above|the latter|the former|"
                       r"both|here|there|he|she|and|or|but|so|which|thus|hence)\b", re.I)


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


# ------------------------------------------------------------------------------------------------- features

_CUE_RES = {
    "cue_we_propose": r"\bwe (?:propose|introduce|present|develop|design|devise|formulate|describe|offer|build)",
    "cue_we_show": r"\bwe (?:show|demonstrate|prove|find|observe|establish|derive|obtain|achieve|provide)",
    "cue_we_study": r"\bwe (?:study|investigate|analy[sz]e|explore|examine|consider|address|tackle|focus|revisit)",
    "cue_this_paper": r"\b(?:this|our|the present) (?:paper|work|study|article)\b|^in this (?:paper|work)",
    "cue_novel": r"\b(?:novel|new|first|simple|efficient|general|principled|unified)\b",
    "cue_called": r"\b(?:called|named|dubbed|termed|coined)\b",
    "cue_result": r"\b(?:outperform|state-of-the-art|state of the art|improv|significant|competitive|superior|"
                  r"better|surpass|achiev|gain)",
    "cue_experiment": r"\b(?:experiment|empirical|evaluat|benchmark|dataset|results? (?:show|demonstrate|suggest))",
    "cue_background": r"\b(?:recent|recently|existing|prior|previous|traditional|conventional|typically|often|"
                      r"widely|popular|commonly|has been|have been|remains?|challenging|difficult|limited|suffer)",
    "cue_problem": r"\b(?:however|but|unfortunately|lack|fail|problem|issue|drawback|limitation)",
    "cue_method": r"\b(?:method|approach|framework|algorithm|model|architecture|technique|objective|loss)\b",
    "cue_code": r"\b(?:code|github|available|release|open-source|publicly)\b",
    "cue_future": r"\b(?:future|further|finally|additionally|moreover|furthermore|also)\b",
    "cue_hedge": r"\b(?:may|might|could|can|potentially|possibly)\b",
}
_CUE_RES = {k: re.compile(v, re.I) for k, v in _CUE_RES.items()}
_NUM = re.compile(r"\d")


def _content(text: str) -> list[str]:
    return [norm_word(w) for w in word_tokens(text) if w.lower() not in STOP and len(w) > 2]


_TOK = re.compile(r"[a-z0-9]+")


def _toks(text: str) -> list[str]:
    """ROUGE-like tokens: lower-case alphanumeric runs, plural ``s`` stripped."""
    return [norm_word(t) for t in _TOK.findall(text.lower())]


class Context:
    """Per-abstract statistics shared by all candidates of one paper.

    They include each word's probability of appearing in the TL;DR under the model's word model (``p``).

    Args:
        title: the paper's title.
        raw: the abstract's sentences as written.
        cleaned: the same sentences after :func:`clean_sentence`.
        model: a selector from :func:`load_model`; its vocabulary and word model are used when present.
    """

    def __init__(self, title: str, raw: list[str], cleaned: list[str], model: dict | None = None):
        self.title = title
        self.title_words = set(_content(title))
        self.title_key = " ".join(word_tokens(title.lower()))
        self.title_toks = set(_toks(title))
        self.n = len(raw)
        self.sent_words = [set(_content(s)) for s in cleaned]
        self.df: dict[str, int] = {}
        for ws in self.sent_words:
            for w in ws:
                self.df[w] = self.df.get(w, 0) + 1
        self.count: dict[str, int] = {}
        self.nsent: dict[str, int] = {}
        self.first: dict[str, int] = {}
        self.named: set[str] = set()  # tokens written as names: ALLCAPS, MixedCase or capitalised mid-sentence
        self.in_cue: dict[str, int] = {}  # tokens in sentences with a contribution cue ("we propose", "we show")
        for k, s in enumerate(cleaned):
            toks = _toks(s)
            for t in toks:
                self.count[t] = self.count.get(t, 0) + 1
            for t in set(toks):
                self.nsent[t] = self.nsent.get(t, 0) + 1
                self.first.setdefault(t, k)
            for w in s.split()[1:]:
                w = w.strip(".,;:()[]\"'")
                if len(w) > 1 and w[0].isupper() and (w.isupper() or any(c.isupper() for c in w[1:]) or
                                                      not w[1:].islower()) or (len(w) > 2 and w[0].isupper()):
                    for t in _toks(w):
                        self.named.add(t)
            if _CUE_RES["cue_we_propose"].search(s) or _CUE_RES["cue_we_show"].search(s):
                for t in set(toks):
                    self.in_cue[t] = self.in_cue.get(t, 0) + 1
        self.vocab = (model or {}).get("_vocab") or {}
        self.p: dict[str, float] = {}
        wm = (model or {}).get("_wm")
        if wm:
            for t in self.count:
                z = wm["intercept"] + sum(wm["w"].get(k, 0.0) * v for k, v in word_features(self, t).items())
                self.p[t] = 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))


def word_features(ctx: Context, t: str) -> dict[str, float]:
    """Features of abstract word ``t`` for the word model (will ``t`` appear in the TL;DR?).

    Args:
        ctx: the paper's statistics.
        t: a token as produced by the ROUGE-like tokeniser (lower case, plural ``s`` stripped).

    Returns:
        Feature name → value.
    """
    n = max(ctx.n, 1)
    first = ctx.first.get(t, 0)
    f = {"stop": float(t in STOP), "title": float(t in ctx.title_toks),
         "log_count": math.log1p(ctx.count.get(t, 0)), "sent_frac": ctx.nsent.get(t, 0) / n,
         "first_rel": first / max(n - 1, 1), "first0": float(first == 0), "len": min(len(t), 14) / 7,
         "digit": float(any(c.isdigit() for c in t))}
    f["named"] = float(t in ctx.named)
    f["in_cue"] = min(ctx.in_cue.get(t, 0), 3) / 3
    f["named_title"] = f["named"] * f["title"]
    f["title_stop"] = f["title"] * f["stop"]
    f["title_count"] = f["title"] * f["log_count"]
    if t in ctx.vocab:
        f["v_" + t] = 1.0
    return f


def sentence_features(ctx: Context, i: int, raw: str, cleaned: str) -> dict[str, float]:
    """Features of the ``i``-th abstract sentence shared by all its candidates.

    Args:
        ctx: the paper's statistics.
        i: the sentence's 0-based index in the abstract.
        raw: the sentence as written.
        cleaned: the sentence after :func:`clean_sentence`.

    Returns:
        Feature name → value.
    """
    f: dict[str, float] = {"bias": 1.0}
    n = ctx.n
    f[f"pos_{min(i, 5)}"] = 1.0
    f["pos_last"] = float(i == n - 1 and n > 1)
    rel = i / max(n - 1, 1)
    f["rel_pos"] = rel
    f["rel_pos2"] = rel * rel
    f["n_sents"] = min(n, 15) / 10
    f["len_raw"] = min(len(raw.split()), 80) / 20
    for name, rx in _CUE_RES.items():
        if rx.search(raw):
            f[name] = 1.0
    f["dangling"] = float(bool(_DANGLING.match(cleaned)))
    f["raw_connective"] = float(cleaned[:20] != raw.strip()[:20])
    return f


def candidate_features(ctx: Context, sent: dict[str, float], cand: str, kind: str, kept: float,
                       vocab: dict[str, int] | None = None) -> dict[str, float]:
    """Features of one candidate text ``cand`` cut from a sentence with features ``sent``.

    Args:
        ctx: the paper's statistics.
        sent: the sentence's :func:`sentence_features` (copied, not changed).
        cand: the candidate text.
        kind: its cut kind (see :func:`candidates` and :func:`variants`).
        kept: fraction of the sentence's words kept.
        vocab: the model's bag-of-words vocabulary (word → index); None or empty for no word features.

    Returns:
        Feature name → value.
    """
    f = dict(sent)
    words = cand.split()
    nw = len(words)
    f["len"] = nw / 20
    f["len2"] = (nw / 20) ** 2
    f[f"len_{min(nw // 5, 6)}"] = 1.0
    f["kept"] = kept
    f[f"cut_{kind}"] = 1.0
    for name, rx in _CUE_RES.items():
        if rx.search(cand):
            f[name + "_c"] = 1.0
    cw = _content(cand)
    cws = set(cw)
    if ctx.title_words:
        inter = len(cws & ctx.title_words)
        f["title_recall"] = inter / len(ctx.title_words)
        f["title_prec"] = inter / max(len(cws), 1)
        f["title_count"] = min(inter, 6) / 3
    if ctx.n > 1 and cws:
        f["central"] = sum((ctx.df.get(w, 1) - 1) for w in cws) / (len(cws) * (ctx.n - 1))
        f["shared"] = sum(ctx.df.get(w, 1) > 1 for w in cws) / len(cws)
    f["content_frac"] = len(cw) / max(nw, 1)
    f["numbers"] = float(bool(_NUM.search(cand)))
    lw = [w.lower() for w in word_tokens(cand)]
    f["we"] = float("we" in lw or "our" in lw)
    f["starts_we"] = float(bool(lw) and lw[0] in {"we", "our"})
    f["starts_a"] = float(bool(lw) and lw[0] in {"a", "an", "the"})
    f["parens"] = float("(" in cand)
    f["i_first_person"] = float("i" in lw)
    if ctx.p:
        toks = _toks(cand)
        e = sum(ctx.p.get(t, 0.0) for t in set(toks))
        f["exp_overlap"] = e / 10
        f["exp_prec"] = e / max(len(toks), 1)
        for gold_len in (15, 20, 25):
            f[f"exp_f1_{gold_len}"] = 2 * e / (len(toks) + gold_len)
    if vocab:
        seen = {w for w in (norm_word(x) for x in lw) if w in vocab}
        for w in seen:
            f["w_" + w] = 1.0 / math.sqrt(len(seen))
    return f


# ---------------------------------------------------------------------------------------------------- model


@cache
def load_model(path: str | None = None) -> dict:
    """Load a selector model (cached per path).

    Args:
        path: a selector JSON file; None for the shipped one (``data/tldr_selector.json``).

    Returns:
        The model: ``features``, ``weights``, ``vocab``, ``mean``, ``scale``, metadata. Missing file → an empty
        model (the selector then falls back to a position prior).
    """
    p = Path(path) if path else MODEL_PATH
    if not p.exists():
        return {"weights": {}, "vocab": []}
    model = json.loads(p.read_text(encoding="utf-8"))
    model["_w"] = dict(zip(model["features"], model["weights"], strict=True))
    model["_mean"] = dict(zip(model["features"], model.get("mean", [0.0] * len(model["features"])), strict=True))
    model["_scale"] = dict(zip(model["features"], model.get("scale", [1.0] * len(model["features"])), strict=True))
    model["_vocab"] = {w: k for k, w in enumerate(model.get("vocab", []))}
    if model.get("word_model"):
        wm = model["word_model"]
        model["_wm"] = {"w": dict(zip(wm["features"], wm["weights"], strict=True)), "intercept": wm["intercept"]}
    return model


#: The shipped selector, loaded once at import.
MODEL = load_model()


def score(features: dict[str, float], model: dict) -> float:
    """Linear score of one candidate: Σ w·(x − mean)/scale over the model's features.

    Args:
        features: the candidate's :func:`candidate_features`.
        model: a selector from :func:`load_model`; an empty one scores by a fixed position/cue prior.

    Returns:
        The score (higher is better).
    """
    w, mu, sc = model.get("_w", {}), model.get("_mean", {}), model.get("_scale", {})
    if not w:  # no model: prefer early-middle, full sentences with a contribution cue
        return (features.get("cue_we_propose", 0) + features.get("cue_we_show", 0) + 0.5 * features.get("pos_1", 0)
                + features.get("title_recall", 0) - features.get("dangling", 0))
    total = 0.0
    for name, m in mu.items():
        x = features.get(name, 0.0)
        if x != m:
            total += w[name] * (x - m) / sc[name]
    return total


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
