"""``paperatlas eval keyphrases``: our keyphrase extractor vs YAKE and KeyBERT on public gold keyphrases.

Gold sets:

* ``colm`` - COLM 2024 + 2025 author keywords (``../shared/data/paperlists/colm/colm2024.json.gz`` and
  ``colm2025.json.gz``; papers without keywords are skipped), text = title + abstract; ``colm2024`` and
  ``colm2025`` alone: our scorer's weights are fitted on 2024 (``scripts/train_keyphrases.py``), so 2025 is the
  held-out part;
* ``awesome`` - seed 004 (Awesome Deep Phenomena), the ``Key Word:`` line of each entry; those entries have no
  abstract, so text = title + digest;
* any other listing file that :func:`paperatlas.sources.read` understands (its ``given_keyphrases``).

Matching (:func:`match_key`): lower-case, hyphens → spaces, other punctuation stripped, every token
Porter-stemmed (nltk's ``PorterStemmer``, the one rouge-score uses); a prediction is correct when its key equals
a gold key exactly. Predictions and gold are deduplicated by key. ``P@k`` = correct in the top k / k,
``R@k`` = correct in the top k / number of gold keyphrases, ``F1@k`` their harmonic mean, all macro-averaged
over papers. The *ceiling* is the share of gold keyphrases (over all papers) whose key occurs as a token
sequence in the key of title + text: no extractive method can find the others.

All methods run on the same papers in one run. The paper embeddings (all-MiniLM-L6-v2 of ``"title. text"``)
are computed once and timed separately; KeyBERT reuses them as document embeddings (it still embeds its
candidate n-grams, which is its own cost) and so does our method when it uses them.

The ``paperatlas eval keyphrases`` command (:mod:`paperatlas.cli.eval`) prints what these functions return.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..model import Paper, SourceError
from ..sources.progress import ProgressFactory, progress_of
from ._common import EVAL_EXTRA, EvalUnavailable, resolve_shared

METHODS = ("ours", "yake", "keybert")
GOLD_SETS = {
    "colm": ("data/paperlists/colm/colm2024.json.gz", "data/paperlists/colm/colm2025.json.gz"),
    "colm2024": ("data/paperlists/colm/colm2024.json.gz",),  # our scorer's training set
    "colm2025": ("data/paperlists/colm/colm2025.json.gz",),  # held out
    "awesome": ("seeds/004_67aa5497667b379c.txt",),
}

_PUNCT = re.compile(r"[^\w\s]|_")


@lru_cache(maxsize=1)
def _stemmer():
    try:
        from nltk.stem.porter import PorterStemmer  # installed with rouge-score (the `eval` extra)
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise EvalUnavailable(f"the keyphrase evaluation needs nltk's Porter stemmer ({e.name} missing): "
                              f"{EVAL_EXTRA}") from e
    return PorterStemmer()


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


def match_key(phrase: str) -> str:
    """Make the key two phrases must share to match.

    Lower-case, hyphens to spaces, other punctuation and ``_`` stripped, every token Porter-stemmed (nltk's
    ``PorterStemmer``, the one rouge-score uses): ``"Neural Scaling-Laws!"`` -> ``"neural scale law"``.

    Args:
        phrase: A predicted or gold keyphrase.

    Returns:
        Its key, stemmed tokens joined by single spaces (``""`` when nothing is left).

    Raises:
        EvalUnavailable: nltk is not installed.
    """
    text = _PUNCT.sub(" ", phrase.lower().replace("-", " "))
    return " ".join(_stem(w) for w in text.split())


def paper_text(p: Paper) -> str:
    """Pick the text a method sees besides the title.

    Args:
        p: A gold paper.

    Returns:
        Its abstract, else its digest (awesome lists have no abstract), else ``""``.
    """
    return p.abstract or p.digest or ""


def _dedup(keys: Iterable[str]) -> list[str]:
    return [k for k in dict.fromkeys(keys) if k]


def prf(pred: Sequence[str], gold: Sequence[str], k: int) -> tuple[float, float, float]:
    """Score one paper's ranked predictions against its gold keyphrases.

    Predictions and gold are matched and deduplicated by :func:`match_key`.

    Args:
        pred: Predicted keyphrases, best first.
        gold: The paper's gold keyphrases.
        k: Cut-off.

    Returns:
        ``(P@k, R@k, F1@k)`` in [0, 1]: correct in the top ``k`` over ``k`` (even when fewer are predicted), over
        the number of distinct gold keys (0 without gold), and their harmonic mean (0 without a hit).
    """
    g = set(_dedup(match_key(x) for x in gold))
    top = _dedup(match_key(x) for x in pred)[:k]
    hit = sum(1 for x in top if x in g)
    p = hit / k
    r = hit / len(g) if g else 0.0
    return p, r, (2 * p * r / (p + r) if hit else 0.0)


def ceiling(papers: Sequence[Paper]) -> float:
    """Measure how much of the gold any extractive method could find.

    Args:
        papers: Gold papers (``given_keyphrases`` set).

    Returns:
        The share in [0, 1], over all papers, of distinct gold keys that occur as a token sequence in the key of
        title + :func:`paper_text` (0 without gold keyphrases).
    """
    found = total = 0
    for p in papers:
        doc = f" {match_key(p.title + ' ' + paper_text(p))} "
        for g in _dedup(match_key(x) for x in p.given_keyphrases):
            total += 1
            found += f" {g} " in doc
    return found / total if total else 0.0


# --- methods: each maps (papers, embeddings) to one ranked phrase list per paper ------------------------------

def _each(papers: Sequence[Paper], fn: Callable[[Paper], list[str]], update: Callable[[int], None]) -> list[list[str]]:
    """``fn`` of every paper in order, ``update(1)`` after each."""
    out = []
    for p in papers:
        out.append(fn(p))
        update(1)
    return out


def _ours(papers: Sequence[Paper], emb: np.ndarray | None, update: Callable[[int], None]) -> list[list[str]]:
    from ..enrich.keyphrases import KeyphraseExtractor

    kx = KeyphraseExtractor().fit((p.title, paper_text(p)) for p in papers)
    return _each(papers, lambda p: kx.extract(p.title, paper_text(p)), update)


def _yake(papers: Sequence[Paper], emb: np.ndarray | None, update: Callable[[int], None]) -> list[list[str]]:
    try:
        import yake
    except ImportError as e:
        raise EvalUnavailable(f"the YAKE baseline is not installed ({e.name} missing): {EVAL_EXTRA}") from e
    kw = yake.KeywordExtractor(lan="en", n=3, top=10)
    return _each(papers, lambda p: [phrase for phrase, _ in kw.extract_keywords(f"{p.title}. {paper_text(p)}")],
                 update)


def _keybert(papers: Sequence[Paper], emb: np.ndarray | None, update: Callable[[int], None]) -> list[list[str]]:
    try:
        from keybert import KeyBERT
    except ImportError as e:
        raise EvalUnavailable(f"the KeyBERT baseline is not installed ({e.name} missing): {EVAL_EXTRA}") from e
    from ..enrich.embed import get_embedder
    from ..enrich.embed import paper_text as embed_text

    kb = KeyBERT(model=get_embedder(precision="fp32")._model)  # a sentence-transformers model
    kb.model.encode_kwargs["batch_size"] = 256  # same vectors, ~5x faster on CPU than the default 32
    docs = [embed_text(p.title, paper_text(p)) for p in papers]
    out = kb.extract_keywords(docs, keyphrase_ngram_range=(1, 3), stop_words="english", use_mmr=True,
                              diversity=0.5, top_n=10, doc_embeddings=emb)
    if len(docs) == 1:  # KeyBERT unwraps the list for a single document
        out = [out]
    update(len(docs))
    return [[phrase for phrase, _ in kws] for kws in out]


#: name -> (``fn(papers, embeddings, update) -> keyphrases per paper``, whether it needs the embeddings); ``update(n)``
#: is told the papers done (KeyBERT's one batched call reports them all at its end).
METHOD_FUNCS: dict[str, tuple[Callable[[Sequence[Paper], np.ndarray | None, Callable[[int], None]],
                                       list[list[str]]], bool]] = {
    "ours": (_ours, False),
    "yake": (_yake, False),
    "keybert": (_keybert, True),
}


def embed_papers(papers: Sequence[Paper]) -> np.ndarray:
    """Embed papers as the build does.

    Args:
        papers: Gold papers.

    Returns:
        all-MiniLM-L6-v2 (sentence-transformers) embeddings of ``"title. text"``, shape ``(len(papers), 384)``.
    """
    from ..enrich.embed import get_embedder
    from ..enrich.embed import paper_text as embed_text

    return get_embedder().encode([embed_text(p.title, paper_text(p)) for p in papers])


def evaluate_keyphrases(papers: Sequence[Paper], methods: Iterable[str] = METHODS,
                        embeddings: np.ndarray | None = None, progress: ProgressFactory | None = None) -> list[dict]:
    """Score keyphrase methods against the papers' gold keyphrases.

    Methods: ``ours`` (:class:`paperatlas.enrich.keyphrases.KeyphraseExtractor`), ``yake`` (YAKE, Campos et al.
    2020, ``yake`` package: ``n=3``, top 10) and ``keybert`` (KeyBERT, Grootendorst 2020, ``keybert`` package:
    1-3-grams, English stop words, MMR with diversity 0.5, top 10, on the MiniLM paper embeddings). Scores are
    :func:`prf` at 5 and 10, macro-averaged over papers.

    Args:
        papers: Gold papers; those without ``given_keyphrases`` are dropped.
        methods: Names from :data:`METHOD_FUNCS`, scored in this order.
        embeddings: :func:`embed_papers` of the kept papers, if already computed; else computed here when a
            method needs them.
        progress: Where the papers done are counted, one bar per method (default a tqdm bar on stderr when it is a
            terminal: :func:`paperatlas.sources.progress.progress_of`).

    Returns:
        One dict per method, in order: ``method``, ``n`` (papers), ``p5 r5 f5 p10 r10 f10`` (macro means in [0,
        1]), ``seconds`` and ``papers_per_s`` (extraction only, after embedding), ``embed_seconds`` (time spent
        computing the paper embeddings in this call, 0 when passed in or not needed), ``ceiling``
        (:func:`ceiling`) and ``predictions`` (one ranked list per paper).

    Raises:
        ValueError: An unknown method.
        EvalUnavailable: nltk or a baseline's package is missing.
    """
    papers = [p for p in papers if p.given_keyphrases]
    methods = list(methods)
    unknown = [m for m in methods if m not in METHOD_FUNCS]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(METHOD_FUNCS)}")
    embed_seconds = 0.0
    if embeddings is None and papers and needs_embeddings(methods):
        t0 = time.perf_counter()
        embeddings = embed_papers(papers)
        embed_seconds = time.perf_counter() - t0
    ceil = ceiling(papers)
    rows = []
    for m in methods:
        fn, _ = METHOD_FUNCS[m]
        with progress_of(f"keyphrases {m}", len(papers), "paper", progress) as update:
            t0 = time.perf_counter()
            preds = fn(papers, embeddings, update) if papers else []
            secs = time.perf_counter() - t0
        row: dict = {"method": m, "n": len(papers)}
        for k in (5, 10):
            scores = np.array([prf(pr, p.given_keyphrases, k) for pr, p in zip(preds, papers, strict=True)]
                              or np.zeros((0, 3)))
            means = scores.mean(axis=0) if len(scores) else np.zeros(3)
            row[f"p{k}"], row[f"r{k}"], row[f"f{k}"] = (float(x) for x in means)
        row.update(seconds=secs, papers_per_s=len(papers) / secs if secs > 0 else float("inf"),
                   embed_seconds=embed_seconds, ceiling=ceil, predictions=preds)
        rows.append(row)
    return rows


def format_table(rows: list[dict]) -> str:
    """Format :func:`evaluate_keyphrases` rows as a plain-text table.

    Args:
        rows: Rows of :func:`evaluate_keyphrases`.

    Returns:
        A header line, a dashed rule and one line per method: ``n``, P/R/F1@5 and @10 (three decimals) and
        papers per second, aligned (method left, numbers right), without a final newline.
    """
    head = ["method", "n", "P@5", "R@5", "F1@5", "P@10", "R@10", "F1@10", "papers/s"]
    body = [[r["method"], str(r["n"]), *(f"{r[c]:.3f}" for c in ("p5", "r5", "f5", "p10", "r10", "f10")),
             f"{r['papers_per_s']:.1f}"] for r in rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
    return "\n".join([fmt(head), "  ".join("-" * w for w in widths), *(fmt(b) for b in body)])


def load_gold(name: str) -> tuple[str, list[Paper]]:
    """Load a gold set.

    Args:
        name: A name of :data:`GOLD_SETS` (``colm``, ``colm2024``, ``colm2025``, ``awesome``; found under
            ``../shared``) or the path of any listing :func:`paperatlas.sources.read` understands.

    Returns:
        ``(label, papers)``: a readable name of the set and its papers that have ``given_keyphrases``, in file
        order.

    Raises:
        EvalUnavailable: A file is missing or unreadable (the message names it).
    """
    from ..sources import read

    paths = [resolve_shared(rel) for rel in GOLD_SETS[name]] if name in GOLD_SETS else [Path(name)]
    papers: list[Paper] = []
    for path in paths:
        if not path.is_file():
            raise EvalUnavailable(f"gold file not found: {path}")
        try:
            papers += read(path)
        except SourceError as e:
            raise EvalUnavailable(f"cannot read gold file {path}: {e}") from e
    label = {"colm": "COLM 2024+2025 author keywords", "colm2024": "COLM 2024 author keywords (our training set)",
             "colm2025": "COLM 2025 author keywords (held out)",
             "awesome": "seed 004 (Awesome Deep Phenomena) Key Words"}
    return label.get(name, name), [p for p in papers if p.given_keyphrases]


def needs_embeddings(methods: Iterable[str]) -> bool:
    """Tell whether any of ``methods`` uses the paper embeddings.

    Args:
        methods: Names from :data:`METHOD_FUNCS`.

    Returns:
        True when one of them (KeyBERT) needs :func:`embed_papers`.
    """
    return any(METHOD_FUNCS[m][1] for m in methods)


def require_packages(methods: Iterable[str]) -> None:
    """Fail early, before the slow parts, when a package the evaluation needs is missing.

    Args:
        methods: Names from :data:`METHOD_FUNCS`.

    Raises:
        EvalUnavailable: nltk's Porter stemmer, or the package of a chosen baseline (yake, keybert), is missing;
            the message names the install command.
    """
    _stemmer()
    for m in methods:
        if m == "yake":
            _yake([], None, lambda _n: None)
        elif m == "keybert":
            try:
                import keybert  # noqa: F401
            except ImportError as e:
                raise EvalUnavailable(f"the KeyBERT baseline is not installed ({e.name} missing): "
                                      f"{EVAL_EXTRA}") from e
