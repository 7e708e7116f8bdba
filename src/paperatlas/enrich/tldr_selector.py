"""The TL;DR candidate selector of :mod:`paperatlas.enrich.tldr`.

It holds the hand features of a candidate and the linear model over them.

:func:`candidate_features` describes one candidate (position, length, cue phrases such as ``we propose``/``we
show``, title overlap, centrality in the abstract, numbers, first person, dangling starts, the kind of cut, a small
bag of words); :func:`score` applies the weights that ``scripts/train_tldr.py`` learns on SciTLDR-A train (ridge
regression on each candidate's ROUGE against the author TL;DR), shipped in ``data/tldr_selector.json``
(:data:`MODEL_PATH`, loaded once as :data:`MODEL`).
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from pathlib import Path

from ..text import word_tokens
from ..vocab import STOP, norm_word

MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "tldr_selector.json"

#: a sentence opening that refers back to something the TL;DR reader has not seen (``This``, ``These``, ``It``)
_DANGLING = re.compile(r"^(?:this|these|those|that|it|its|they|their|them|such|the above|the latter|the former|"
                       r"both|here|there|he|she|and|or|but|so|which|thus|hence)\b", re.I)

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
#: per cue, strings of which every match of its pattern contains one (lower case): a cue whose strings are all absent
#: from a candidate cannot match it, so its regex is not run (a substring test costs ~1/30 of a case-insensitive
#: search; ``tests/test_tldr.py`` checks that the cues found are the same on real abstracts)
_CUE_ANCHORS = {
    "cue_we_propose": ("we ",), "cue_we_show": ("we ",), "cue_we_study": ("we ",),
    "cue_this_paper": ("paper", "work", "study", "article"),
    "cue_novel": ("novel", "new", "first", "simple", "efficient", "general", "principled", "unified"),
    "cue_called": ("called", "named", "dubbed", "termed", "coined"),
    "cue_result": ("outperform", "state", "improv", "significant", "competitive", "superior", "better", "surpass",
                   "achiev", "gain"),
    "cue_experiment": ("experiment", "empirical", "evaluat", "benchmark", "dataset", "result"),
    "cue_background": ("recent", "existing", "prior", "previous", "traditional", "conventional", "typically", "often",
                       "widely", "popular", "commonly", "been", "remain", "challenging", "difficult", "limited",
                       "suffer"),
    "cue_problem": ("however", "but", "unfortunately", "lack", "fail", "problem", "issue", "drawback", "limitation"),
    "cue_method": ("method", "approach", "framework", "algorithm", "model", "architecture", "technique", "objective",
                   "loss"),
    "cue_code": ("code", "github", "available", "release", "open-source", "publicly"),
    "cue_future": ("future", "further", "finally", "additionally", "moreover", "also"),
    "cue_hedge": ("may", "might", "could", "can", "potentially", "possibly"),
}
_CUES = [(name, rx, _CUE_ANCHORS[name]) for name, rx in _CUE_RES.items()]


def cues(text: str) -> list[str]:
    """The cue features (keys of ``_CUE_RES``) whose pattern matches ``text``, in the patterns' order.

    The same as searching every pattern, faster: a pattern is searched only when one of its anchor strings occurs
    in the lower-cased text.

    Args:
        text: a sentence or a candidate TL;DR.

    Returns:
        The names of the matching cues.
    """
    has = text.lower().__contains__
    return [name for name, rx, anchors in _CUES if any(map(has, anchors)) and rx.search(text)]
_NUM = re.compile(r"\d")


def _content(text: str, words: list[str] | None = None) -> list[str]:
    """Content words of ``text`` through :func:`norm_word`; ``words``: its :func:`word_tokens` when already made."""
    return [norm_word(w) for w in (word_tokens(text) if words is None else words)
            if w.lower() not in STOP and len(w) > 2]


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
        if wm:  # the word model's logit: the same products summed in the same order as over word_features' dict
            weights = wm.get("_fixed")
            if weights is None:
                weights = wm["_fixed"] = tuple(wm["w"].get(k, 0.0) for k in _WORD_FEATURES)
            for t in self.count:
                terms = [w * v for w, v in zip(weights, _word_values(self, t), strict=True)]
                if t in self.vocab:
                    terms.append(wm["w"].get("v_" + t, 0.0) * 1.0)
                z = wm["intercept"] + sum(terms)
                self.p[t] = 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))


#: the word model's features of every word, in :func:`word_features`' order (``v_WORD`` follows for vocabulary words)
_WORD_FEATURES = ("stop", "title", "log_count", "sent_frac", "first_rel", "first0", "len", "digit", "named", "in_cue",
                  "named_title", "title_stop", "title_count")


def _word_values(ctx: Context, t: str) -> tuple[float, ...]:
    """The values of :data:`_WORD_FEATURES` for token ``t`` (``[a-z0-9]+``, so a digit is any non-letter)."""
    n = max(ctx.n, 1)
    first = ctx.first.get(t, 0)
    stop = float(t in STOP)
    title = float(t in ctx.title_toks)
    log_count = math.log1p(ctx.count.get(t, 0))
    named = float(t in ctx.named)
    return (stop, title, log_count, ctx.nsent.get(t, 0) / n, first / max(n - 1, 1), float(first == 0),
            min(len(t), 14) / 7, float(not t.isalpha()), named, min(ctx.in_cue.get(t, 0), 3) / 3, named * title,
            title * stop, title * log_count)


def word_features(ctx: Context, t: str) -> dict[str, float]:
    """Features of abstract word ``t`` for the word model (will ``t`` appear in the TL;DR?).

    Args:
        ctx: the paper's statistics.
        t: a token as produced by the ROUGE-like tokeniser (lower case, plural ``s`` stripped).

    Returns:
        Feature name → value.
    """
    f = dict(zip(_WORD_FEATURES, _word_values(ctx, t), strict=True))
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
    for name in cues(raw):
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
    for name in cues(cand):
        f[name + "_c"] = 1.0
    words_as_written = word_tokens(cand)
    lw = [w.lower() for w in words_as_written]
    cw = _content(cand, words_as_written)
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
        seen = {w for w in map(norm_word, lw) if w in vocab}
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
    # Σ w(x − m)/s = Σ −w·m/s (every feature at 0: computed once per model) + Σ (w/s)·x over the features present
    fast = model.get("_fast")
    if fast is None:
        fast = model["_fast"] = ({name: w[name] / sc[name] for name in mu},
                                 sum(-w[name] * m / sc[name] for name, m in mu.items()))
    ws, total = fast
    for name, x in features.items():
        c = ws.get(name)
        if c is not None:
            total += c * x
    return total
