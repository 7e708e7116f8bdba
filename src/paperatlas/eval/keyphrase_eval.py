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
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path

import click
import numpy as np

from ..model import Paper, SourceError

EVAL_EXTRA = "pip install 'paperatlas[eval]'"
METHODS = ("ours", "yake", "keybert")
_REPO_ROOT = Path(__file__).resolve().parents[3]
GOLD_SETS = {
    "colm": ("data/paperlists/colm/colm2024.json.gz", "data/paperlists/colm/colm2025.json.gz"),
    "colm2024": ("data/paperlists/colm/colm2024.json.gz",),  # our scorer's training set
    "colm2025": ("data/paperlists/colm/colm2025.json.gz",),  # held out
    "awesome": ("seeds/004_67aa5497667b379c.txt",),
}

_PUNCT = re.compile(r"[^\w\s]|_")


class EvalUnavailable(click.ClickException):
    """A package the evaluation needs is missing; the message names the install command."""


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
    """Matching key of a phrase: ``"Neural Scaling-Laws!"`` → ``"neural scale law"``."""
    text = _PUNCT.sub(" ", phrase.lower().replace("-", " "))
    return " ".join(_stem(w) for w in text.split())


def paper_text(p: Paper) -> str:
    """The text a method sees besides the title: the abstract, else the digest (awesome lists)."""
    return p.abstract or p.digest or ""


def _dedup(keys: Iterable[str]) -> list[str]:
    return [k for k in dict.fromkeys(keys) if k]


def prf(pred: Sequence[str], gold: Sequence[str], k: int) -> tuple[float, float, float]:
    """P@k, R@k, F1@k of ranked predictions against gold phrases (both matched by :func:`match_key`)."""
    g = set(_dedup(match_key(x) for x in gold))
    top = _dedup(match_key(x) for x in pred)[:k]
    hit = sum(1 for x in top if x in g)
    p = hit / k
    r = hit / len(g) if g else 0.0
    return p, r, (2 * p * r / (p + r) if hit else 0.0)


def ceiling(papers: Sequence[Paper]) -> float:
    """Share of gold keyphrases whose key occurs (as a token sequence) in the key of title + text."""
    found = total = 0
    for p in papers:
        doc = f" {match_key(p.title + ' ' + paper_text(p))} "
        for g in _dedup(match_key(x) for x in p.given_keyphrases):
            total += 1
            found += f" {g} " in doc
    return found / total if total else 0.0


# --- methods: each maps (papers, embeddings) to one ranked phrase list per paper ------------------------------

def _ours(papers: Sequence[Paper], emb: np.ndarray | None) -> list[list[str]]:
    from ..enrich.keyphrases import KeyphraseExtractor

    kx = KeyphraseExtractor().fit((p.title, paper_text(p)) for p in papers)
    return [kx.extract(p.title, paper_text(p)) for p in papers]


def _yake(papers: Sequence[Paper], emb: np.ndarray | None) -> list[list[str]]:
    try:
        import yake
    except ImportError as e:
        raise EvalUnavailable(f"the YAKE baseline is not installed ({e.name} missing): {EVAL_EXTRA}") from e
    kw = yake.KeywordExtractor(lan="en", n=3, top=10)
    return [[phrase for phrase, _ in kw.extract_keywords(f"{p.title}. {paper_text(p)}")] for p in papers]


def _keybert(papers: Sequence[Paper], emb: np.ndarray | None) -> list[list[str]]:
    try:
        from keybert import KeyBERT
    except ImportError as e:
        raise EvalUnavailable(f"the KeyBERT baseline is not installed ({e.name} missing): {EVAL_EXTRA}") from e
    from ..enrich.embed import get_embedder
    from ..enrich.embed import paper_text as embed_text

    kb = KeyBERT(model=get_embedder()._model)
    kb.model.encode_kwargs["batch_size"] = 256  # same vectors, ~5x faster on CPU than the default 32
    docs = [embed_text(p.title, paper_text(p)) for p in papers]
    out = kb.extract_keywords(docs, keyphrase_ngram_range=(1, 3), stop_words="english", use_mmr=True,
                              diversity=0.5, top_n=10, doc_embeddings=emb)
    if len(docs) == 1:  # KeyBERT unwraps the list for a single document
        out = [out]
    return [[phrase for phrase, _ in kws] for kws in out]


#: name -> (function, needs the paper embeddings)
METHOD_FUNCS: dict[str, tuple[Callable[[Sequence[Paper], np.ndarray | None], list[list[str]]], bool]] = {
    "ours": (_ours, False),
    "yake": (_yake, False),
    "keybert": (_keybert, True),
}


def embed_papers(papers: Sequence[Paper]) -> np.ndarray:
    """all-MiniLM-L6-v2 embeddings of ``"title. text"``, one row per paper (as the build embeds them)."""
    from ..enrich.embed import get_embedder
    from ..enrich.embed import paper_text as embed_text

    return get_embedder().encode([embed_text(p.title, paper_text(p)) for p in papers])


def evaluate_keyphrases(papers: Sequence[Paper], methods: Iterable[str] = METHODS,
                        embeddings: np.ndarray | None = None) -> list[dict]:
    """Score each method on ``papers`` (those with ``given_keyphrases``; others are dropped).

    Returns one dict per method, in order: ``method``, ``n``, ``p5 r5 f5 p10 r10 f10`` (macro means in [0, 1]),
    ``seconds`` and ``papers_per_s`` (extraction only, after embedding), ``embed_seconds`` (time spent computing
    the paper embeddings in this call, 0 when passed in or not needed), ``ceiling`` and ``predictions``.
    Raises ``ValueError`` for an unknown method and :class:`EvalUnavailable` when a baseline is missing.
    """
    papers = [p for p in papers if p.given_keyphrases]
    methods = list(methods)
    unknown = [m for m in methods if m not in METHOD_FUNCS]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(METHOD_FUNCS)}")
    embed_seconds = 0.0
    if embeddings is None and papers and any(METHOD_FUNCS[m][1] for m in methods):
        t0 = time.perf_counter()
        embeddings = embed_papers(papers)
        embed_seconds = time.perf_counter() - t0
    ceil = ceiling(papers)
    rows = []
    for m in methods:
        fn, _ = METHOD_FUNCS[m]
        t0 = time.perf_counter()
        preds = fn(papers, embeddings) if papers else []
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
    """Plain-text aligned table of :func:`evaluate_keyphrases` rows."""
    head = ["method", "n", "P@5", "R@5", "F1@5", "P@10", "R@10", "F1@10", "papers/s"]
    body = [[r["method"], str(r["n"]), *(f"{r[c]:.3f}" for c in ("p5", "r5", "f5", "p10", "r10", "f10")),
             f"{r['papers_per_s']:.1f}"] for r in rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
    return "\n".join([fmt(head), "  ".join("-" * w for w in widths), *(fmt(b) for b in body)])


def resolve_shared(rel: str) -> Path:
    """``../shared/<rel>`` relative to the working directory if it exists there, else to the repo root."""
    cwd = Path.cwd().parent / "shared" / rel
    return cwd if cwd.exists() else _REPO_ROOT.parent / "shared" / rel


def load_gold(name: str) -> tuple[str, list[Paper]]:
    """``(label, papers with gold keyphrases)`` for a gold set name or a listing file path."""
    from ..sources import read

    paths = [resolve_shared(rel) for rel in GOLD_SETS[name]] if name in GOLD_SETS else [Path(name)]
    papers: list[Paper] = []
    for path in paths:
        if not path.is_file():
            raise click.ClickException(f"gold file not found: {path}")
        try:
            papers += read(path)
        except SourceError as e:
            raise click.ClickException(f"cannot read gold file {path}: {e}") from e
    label = {"colm": "COLM 2024+2025 author keywords", "colm2024": "COLM 2024 author keywords (our training set)",
             "colm2025": "COLM 2025 author keywords (held out)",
             "awesome": "seed 004 (Awesome Deep Phenomena) Key Words"}
    return label.get(name, name), [p for p in papers if p.given_keyphrases]


@click.command(name="keyphrases")
@click.option("--gold", "golds", multiple=True, default=("colm", "awesome"), show_default=True,
              help="Gold set: colm (2024+2025), colm2024, colm2025, awesome, or a listing FILE with keywords "
                   "(repeatable).")
@click.option("--method", "methods", multiple=True, type=click.Choice(list(METHOD_FUNCS)),
              default=METHODS, show_default=True, help="Method to score (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Use only the first N papers of each set.")
def keyphrases_command(golds: tuple[str, ...], methods: tuple[str, ...], limit: int | None) -> None:
    """P/R/F1@5 and @10 of our keyphrases, YAKE and KeyBERT against author keywords (exact match after
    lower-casing, hyphens to spaces, punctuation stripped and Porter stemming)."""
    _stemmer()  # fail early with the install hint
    for m in methods:  # the baselines' packages, before the slow parts
        if m == "yake":
            _yake([], None)
        elif m == "keybert":
            try:
                import keybert  # noqa: F401
            except ImportError as e:
                raise EvalUnavailable(f"the KeyBERT baseline is not installed ({e.name} missing): "
                                      f"{EVAL_EXTRA}") from e
    sets = [load_gold(g) for g in golds]
    for i, (label, papers) in enumerate(sets):
        papers = papers[:limit] if limit else papers
        if i:
            click.echo()
        click.echo(f"== {label}: {len(papers)} papers ==")
        if not papers:
            click.echo("(no papers with gold keyphrases)")
            continue
        embeddings, embed_s = None, 0.0
        if any(METHOD_FUNCS[m][1] for m in methods):
            t0 = time.perf_counter()
            embeddings = embed_papers(papers)
            embed_s = time.perf_counter() - t0
        rows = evaluate_keyphrases(papers, methods, embeddings=embeddings)
        click.echo(format_table(rows))
        if embeddings is not None:
            click.echo(f"embedding (once, shared, not in papers/s): {embed_s:.1f} s, "
                       f"{len(papers) / embed_s:.1f} papers/s")
        click.echo(f"ceiling: {rows[0]['ceiling']:.1%} of gold keyphrases occur in title + text")
