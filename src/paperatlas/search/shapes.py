r"""Query shapes: the spellings papers use for a query word, and when a short query no paper uses is still answered.

**Spellings.** FTS5's unicode61 tokenizer splits ``ResNet-50`` into ``resnet 50`` and keeps ``ResNet50`` whole, reads
LaTeX ``$\epsilon$-greedy`` as ``epsilon greedy`` and ``$1 \times 1$`` as ``1 times 1``. A query word is searched
as typed and in the other spellings of the same thing (:func:`spellings`): hyphens dropped (``k-means`` →
``kmeans``), letters and digits apart (``L2`` → ``l 2``, which ``$L_2$`` and ``L-2`` give; ``ResNet50`` →
``resnet 50``), ``ℓ`` and Greek letters by their LaTeX names (``ε-greedy`` → ``epsilon-greedy``, ``L2`` → ``ell 2``
as ``$\ell_2$``), ``NxM`` as ``N times M``. A unicode ``1×1`` in an abstract cannot be told from ``1.1`` in the
index (both are ``1 1``), so it is not searched.

**Short queries answered by meaning.** A paper without the query's words is a meaning match from an absolute cosine
(:data:`MEANING_MIN_COSINE`, 0.42 with all-MiniLM-L6-v2), which a short technical term is
never that close to: on ICLR 2021 ``k-means`` (no paper says it) is at most 0.29 from any paper, though its nearest
are about clustering. For a query of at most :data:`SHORT_MAX_WORDS` words that no paper uses, :func:`meaning_floor`
compares the query's cosines with their own background instead: the :data:`SHORT_RANK`-th best must stand
:data:`SHORT_MARGIN` standard deviations above where the :data:`SHORT_RANK`-th best of as many cosines drawn from a
normal distribution with the same mean and deviation would be, and the best must reach :data:`SHORT_MIN_BEST`; then
the papers from that cosine on are meaning matches.

Calibration (all-MiniLM-L6-v2; excess = the third-best cosine's z-score minus its expected value by chance): one-word
queries no paper uses whose nearest papers are about them stood 0.93 (``k-means``), 1.14-1.18 (``StyleGAN``,
``DCGAN``) out on ICLR 2021 (860 papers), 1.33-1.61 (``StyleGAN``, ``Isomap``, ``cryptocurrency``) on 3,095 NeurIPS
2017-18 and ICML 2018-19 papers; those whose nearest were unrelated at most 0.71 (``U-Net``, ``poetry``) on ICLR 2021,
0.84 (``GPT-2``) on the 3,095 and 0.897 (``U-Net``) on the Deep Phenomena list (542). The margins are thin: ``word2vec``
(0.899 on ICLR 2021, nearest "Can a Fruit Fly Learn Word Embeddings?") is left out. The cosines of a short term say
little about what it means; a query the rule leaves out still says that no paper is close.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

#: LaTeX names of the Greek letters (and ``ℓ``), as the index holds ``$\epsilon$``: ``epsilon``
GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho",
    "σ": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega", "ℓ": "ell",
}
_NXM = re.compile(r"(\d+)x(\d+)")
#: a boundary between letters and digits inside a word part (``l|2``, ``resnet|50``, ``3|d``)
_LETTER_DIGIT = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")

#: a paper without the query's words is a meaning match from this query-paper cosine (all-MiniLM-L6-v2)
MEANING_MIN_COSINE = 0.42
#: queries of at most this many words may be answered by :func:`meaning_floor` (a hyphenated ``k-means`` is one word;
#: with two, ``protein folding`` on the Deep Phenomena atlas stood 1.33 deviations out, on neural-collapse papers)
SHORT_MAX_WORDS = 1
#: which best cosine must stand above the background (1 = the best: one outlier paper is not enough)
SHORT_RANK = 3
#: how many standard deviations above its expected place by chance (see the module docstring for the calibration)
SHORT_MARGIN = 0.9
#: the best cosine must reach at least this (all-MiniLM-L6-v2)
SHORT_MIN_BEST = 0.28
#: fewest papers for the background to mean anything
SHORT_MIN_PAPERS = 100


def spellings(word: str) -> list[str]:
    """The phrases papers may use for one query word, the word itself first.

    Args:
        word: one query word (:func:`paperatlas.text.query_tokens`), any case.

    Returns:
        Lower-case phrases, no repeats, e.g. ``"k-means"`` → ``["k-means", "kmeans"]``, ``"L2"`` →
        ``["l2", "l 2", "ell 2"]``, ``"ε-greedy"`` → ``["ε-greedy", "epsilon-greedy"]``, ``"1x1"`` →
        ``["1x1", "1 times 1"]``; ``[word]`` for a plain word.
    """
    w = word.lower()
    named = "".join(GREEK.get(c, c) for c in w)
    out = [w, named]
    for form in (w, named):
        if "-" in form:
            out.append(form.replace("-", ""))
        m = _NXM.fullmatch(form)
        if m:
            out.append(f"{m.group(1)} times {m.group(2)}")
        elif _LETTER_DIGIT.search(form):
            split = _LETTER_DIGIT.sub(" ", form)
            out.append(split)
            if re.fullmatch(r"l \d+", split):
                out.append("ell" + split[1:])
    return list(dict.fromkeys(out))


def split_first_letter(word: str) -> str | None:
    """``word`` with its first letter apart (``kmeans`` → ``k means``, ``tsne`` → ``t sne``), or None.

    Tried only for a word no paper uses in any of its :func:`spellings` (as typed without the hyphen of ``k-means``,
    ``t-SNE``, ``U-Net``, ``k-NN``, ``X-ray``).

    Args:
        word: one lower-case query word.

    Returns:
        The phrase, or None when ``word`` is not 3 to 8 letters.
    """
    return f"{word[0]} {word[1:]}" if word.isalpha() and 3 <= len(word) <= 8 else None


def meaning_floor(sims: np.ndarray, terms: Sequence) -> float:
    """The cosine from which papers without the query's words are meaning matches.

    Args:
        sims: ``(n_rows,)`` float32, the query's cosine to every paper's vector (all rows, not a sample).
        terms: the query's :class:`paperatlas.search.terms.Term` (each with ``docs``, the papers using the word).

    Returns:
        :data:`MEANING_MIN_COSINE`, or a lower cosine for a query of at most :data:`SHORT_MAX_WORDS` words that no
        paper uses whose :data:`SHORT_RANK`-th best cosine stands out of the background (see the module docstring):
        ``mean + (z + SHORT_MARGIN) * std`` of ``sims``, where ``z`` is the standard normal quantile
        ``1 - SHORT_RANK / (n + 1)`` (2.70 for 860 papers, 3.81 for 42,736).
    """
    n = len(sims)
    if any(len(t.docs) for t in terms) or not 1 <= len(terms) <= SHORT_MAX_WORDS or n < SHORT_MIN_PAPERS:
        return MEANING_MIN_COSINE
    top = np.partition(sims, n - SHORT_RANK)[n - SHORT_RANK:]
    cut = float(sims.mean()) + (NormalDist().inv_cdf(1 - SHORT_RANK / (n + 1)) + SHORT_MARGIN) * float(sims.std())
    if float(top.min()) < cut or float(top.max()) < SHORT_MIN_BEST:
        return MEANING_MIN_COSINE
    return min(MEANING_MIN_COSINE, cut)


def combos(forms: Sequence[Sequence[str]], limit: int = 8) -> list[list[str]]:
    """Every choice of one spelling per word, the typed spellings first, at most ``limit``.

    Args:
        forms: per query word, its spellings some paper uses (each non-empty).
        limit: most choices returned.

    Returns:
        Lists of one phrase per word, e.g. ``[["l2", "loss"], ["l 2", "loss"]]``.
    """
    out: list[list[str]] = [[]]
    for f in forms:
        out = [c + [s] for c in out for s in f][:limit]
    return out
