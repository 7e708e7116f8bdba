"""``paperatlas eval tldr``: our TL;DR method(s) vs baselines on SciTLDR-A (Cachola et al., 2020).

Gold data: SciTLDR-A JSONL (optionally gzipped); each record has ``source`` (the abstract as a list of sentences),
``target`` (gold TL;DRs, the first written by the authors), ``title`` and ``paper_id``. Every method gets the
title and the abstract as one string (``" ".join(source)``), i.e. the same code path as real papers.

Scores: ROUGE-1/2/L F1 × 100 (``rouge-score``, Porter stemmer) against the author TL;DR (first target) and
against the best of all targets (per paper and per metric the maximum over targets, as in the SciTLDR paper).

Baselines, scored in the same run on the same papers:

* ``title`` -- the paper title;
* ``first-sentence`` -- the first abstract sentence;
* ``oracle`` -- the single abstract sentence with the best ROUGE-1 against the targets (max over targets): a
  ceiling for any method that selects one sentence unchanged.

Generative backends (``--tldr-backend smollm2`` or ``--tldr-backend openai --base-url URL --model NAME``) add a
row each: the backend's answer when :func:`paperatlas.tldr_llm.supported` accepts it, else the extractive TL;DR
(exactly what ``build --tldr-backend`` stores), with the share of papers that fell back and seconds per paper.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import click

from ..enrich import tldr

Method = Callable[[dict], str]
METRICS = ("rouge1", "rouge2", "rougeL")
BASELINES = ("title", "first-sentence", "oracle")
_REPO = Path(__file__).resolve().parents[3]
DEFAULT_GOLD = Path("..") / "shared" / "data" / "scitldr" / "dev.jsonl.gz"


def _scorer():
    try:
        from rouge_score import rouge_scorer
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise click.ClickException(
            "the TL;DR evaluation needs the rouge-score package: pip install 'paperatlas[eval]'") from e
    return rouge_scorer.RougeScorer(list(METRICS), use_stemmer=True)


def load_records(path: str | Path) -> list[dict]:
    """SciTLDR records from a ``.jsonl`` or ``.jsonl.gz`` file (blank lines skipped)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def abstract_of(rec: dict) -> str:
    """The abstract as one string: the record's sentences joined with spaces."""
    return " ".join(s.strip() for s in rec.get("source", []) if s.strip())


def _ours(fn: Callable[[str, str], str]) -> Method:
    return lambda rec: fn(rec.get("title") or "", abstract_of(rec))


def _oracle(rec: dict, scorer=None) -> str:
    scorer = scorer or _scorer()
    best, best_s = "", -1.0
    for sent in rec.get("source", []):
        s = max(scorer.score(t, sent)["rouge1"].fmeasure for t in rec["target"])
        if s > best_s:
            best, best_s = sent, s
    return best


def _backend_method(name: str, base_url: str | None, model: str | None) -> Method:
    """A generative backend as an eval method (record → TL;DR) with a ``fallback_rate()`` attribute."""
    from ..llm.backends import BackendError, make_backend
    from ..llm.tldr import backend_summarizer

    try:
        backend = make_backend(name, base_url=base_url, model=model)
    except (ValueError, BackendError) as e:
        raise click.ClickException(f"--tldr-backend {name}: {e}") from e
    summarize = backend_summarizer(backend)

    def method(rec: dict) -> str:
        return summarize(rec.get("title") or "", abstract_of(rec))

    method.fallback_rate = lambda: summarize.fallback_rate  # type: ignore[attr-defined]
    method.summarizer = summarize  # type: ignore[attr-defined]
    return method


def available_methods() -> dict[str, Method]:
    """Method name → function(record) → TL;DR: our methods first, then the baselines."""
    methods: dict[str, Method] = {tldr.METHOD: _ours(tldr.extract_tldr)}
    for name, fn in getattr(tldr, "VARIANTS", {}).items():
        methods.setdefault(name, _ours(fn))
    methods["title"] = lambda rec: rec.get("title") or ""
    methods["first-sentence"] = lambda rec: (rec.get("source") or [""])[0]
    methods["oracle"] = _oracle
    return methods


def evaluate_tldr(records: Iterable[dict], methods: Iterable[str] | dict[str, Method] | None = None) -> list[dict]:
    """Score ``methods`` (names from :func:`available_methods`, or a name → function(record) mapping; default:
    all) on ``records``. One row per method, in order: ``method``, ``n``, ``r1``/``r2``/``rL`` (F1 × 100 vs the
    author TL;DR), ``r1_max``/``r2_max``/``rL_max`` (vs the best target per paper and metric), ``words`` (average
    TL;DR length), ``papers_per_s`` and ``s_per_paper`` (seconds; generation only, scoring excluded) and ``fallback``
    (share of papers whose generated TL;DR was rejected for the extractive one; ``None`` for non-generative
    methods). Raises ``ValueError`` for an unknown method name."""
    records = [r for r in records if r.get("target") and r.get("source")]
    avail = available_methods()
    if methods is None:
        chosen = avail
    elif isinstance(methods, dict):
        chosen = dict(methods)
    else:
        unknown = [m for m in methods if m not in avail]
        if unknown:
            raise ValueError(f"unknown TL;DR method(s) {unknown}; choose from {list(avail)}")
        chosen = {m: avail[m] for m in methods}
    scorer = _scorer()
    rows = []
    for name, fn in chosen.items():
        t0 = time.perf_counter()
        outs = [(_oracle(r, scorer) if fn is _oracle else fn(r)) for r in records]
        dt = time.perf_counter() - t0
        fallback = getattr(fn, "fallback_rate", None)
        sums = dict.fromkeys(("r1", "r2", "rL", "r1_max", "r2_max", "rL_max"), 0.0)
        for rec, out in zip(records, outs, strict=True):
            per_target = [scorer.score(t, out) for t in rec["target"]]
            for m, key in zip(METRICS, ("r1", "r2", "rL"), strict=True):
                sums[key] += per_target[0][m].fmeasure
                sums[key + "_max"] += max(s[m].fmeasure for s in per_target)
        n = len(records)
        row = {"method": name, "n": n}
        row.update({k: 100 * v / max(n, 1) for k, v in sums.items()})
        row["words"] = sum(len(o.split()) for o in outs) / max(n, 1)
        row["papers_per_s"] = n / dt if dt > 0 else float("inf")
        row["s_per_paper"] = dt / n if n else 0.0
        row["fallback"] = fallback() if callable(fallback) else fallback
        rows.append(row)
    return rows


_COLUMNS = [("method", "method", "{}"), ("n", "n", "{}"),
            ("r1", "R1-author", "{:.1f}"), ("r2", "R2-author", "{:.1f}"), ("rL", "RL-author", "{:.1f}"),
            ("r1_max", "R1-max", "{:.1f}"), ("r2_max", "R2-max", "{:.1f}"), ("rL_max", "RL-max", "{:.1f}"),
            ("words", "words", "{:.1f}"), ("papers_per_s", "papers/s", "{:.2f}"),
            ("s_per_paper", "s/paper", "{:.4f}"), ("fallback", "fallback", "{:.0%}")]


def format_table(rows: list[dict]) -> str:
    """Plain-text table with aligned columns (method left-aligned, numbers right-aligned)."""
    cells = [[h for _, h, _ in _COLUMNS]] + [["-" if r.get(k) is None else f.format(r[k]) for k, _, f in _COLUMNS]
                                             for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(_COLUMNS))]
    lines = []
    for j, row in enumerate(cells):
        parts = [c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row)]
        lines.append("  ".join(parts).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _default_gold() -> Path:
    here = Path.cwd() / DEFAULT_GOLD
    return here if here.exists() else _REPO.parent / "shared" / "data" / "scitldr" / "dev.jsonl.gz"


@click.command(name="tldr")
@click.option("--gold", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="SciTLDR JSONL(.gz) file [default: ../shared/data/scitldr/dev.jsonl.gz].")
@click.option("--method", "methods", multiple=True,
              help="Our method(s) to score (repeatable; default: all). Baselines are always included.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Score only the first N papers.")
@click.option("--tldr-backend", "backends", multiple=True, type=click.Choice(["openai", "smollm2"]),
              help="Also score a generative backend (repeatable): its checked answers with extractive fallback.")
@click.option("--base-url", default=None, help="Endpoint of --tldr-backend openai, e.g. http://127.0.0.1:11434/v1")
@click.option("--model", "llm_model", default=None, help="Model name for --tldr-backend openai.")
def tldr_command(gold: Path | None, methods: tuple[str, ...], limit: int | None, backends: tuple[str, ...],
                 base_url: str | None, llm_model: str | None) -> None:
    """Score TL;DRs on SciTLDR-A: ours vs title / first-sentence / oracle, ROUGE-1/2/L F1 × 100
    against the author TL;DR and against the best of all targets.

    \b
    paperatlas eval tldr                                   # extractive v2 vs baselines on all 619 dev papers
    paperatlas eval tldr --tldr-backend smollm2 --limit 100
    paperatlas eval tldr --tldr-backend openai --base-url http://127.0.0.1:11434/v1 --model qwen2.5:0.5b
    """
    gold = gold or _default_gold()
    if not gold.is_file():
        raise click.ClickException(f"gold file not found: {gold}")
    _scorer()  # fail early and clearly without rouge-score
    avail = available_methods()
    names = list(methods) if methods else [m for m in avail if m not in BASELINES]
    unknown = [m for m in names if m not in avail]
    if unknown:
        raise click.BadParameter(f"unknown method(s) {unknown}; choose from {list(avail)}", param_hint="--method")
    names += [b for b in BASELINES if b not in names]
    records = load_records(gold)
    if limit is not None:
        records = records[:limit]
    chosen: dict[str, Method] = {m: avail[m] for m in names if m not in BASELINES}
    for name in backends:
        label = f"{name}:{llm_model}" if name == "openai" and llm_model else name
        chosen[f"{label} (+fallback)"] = _backend_method(name, base_url, llm_model)
    chosen.update({b: avail[b] for b in BASELINES})
    rows = evaluate_tldr(records, chosen)
    click.echo(f"SciTLDR: {gold} ({rows[0]['n'] if rows else 0} papers); ROUGE F1 x 100 vs the author TL;DR "
               "and vs the best target per paper")
    click.echo(format_table(rows))
    for name, fn in chosen.items():
        summarizer = getattr(fn, "summarizer", None)
        if summarizer is not None and summarizer.calls:
            reasons = ", ".join(f"{r} {n}" for r, n in summarizer.reasons.most_common())
            click.echo(f"{name}: {summarizer.calls - summarizer.fallbacks}/{summarizer.calls} generated TL;DRs "
                       f"passed the check against the abstract; fallbacks: {reasons or 'none'}")
