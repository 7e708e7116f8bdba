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

The ``paperatlas eval tldr`` command (:mod:`paperatlas.cli.eval`) prints what these functions return.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ..enrich import tldr
from ..sources.progress import ProgressFactory, progress_of
from ._common import EVAL_EXTRA, EvalUnavailable

Method = Callable[[dict], str]
METRICS = ("rouge1", "rouge2", "rougeL")
BASELINES = ("title", "first-sentence", "oracle")
_REPO = Path(__file__).resolve().parents[3]
DEFAULT_GOLD = Path("..") / "shared" / "data" / "scitldr" / "dev.jsonl.gz"


def _scorer():
    try:
        from rouge_score import rouge_scorer
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise EvalUnavailable(f"the TL;DR evaluation needs the rouge-score package: {EVAL_EXTRA}") from e
    return rouge_scorer.RougeScorer(list(METRICS), use_stemmer=True)


def load_records(path: str | Path) -> list[dict]:
    """Read SciTLDR records.

    Args:
        path: A SciTLDR ``.jsonl`` or ``.jsonl.gz`` file, one JSON record per line (blank lines skipped).

    Returns:
        The records in file order, each a dict with ``source`` (abstract sentences), ``target`` (gold TL;DRs, the
        author's first), ``title`` and ``paper_id``.
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def abstract_of(rec: dict) -> str:
    """Join a record's abstract into one string.

    Args:
        rec: A SciTLDR record.

    Returns:
        The non-blank ``source`` sentences, stripped and joined with single spaces.
    """
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


def backend_label(name: str, model: str | None) -> str:
    """Name the table row of a generative backend.

    Args:
        name: The backend's name in :data:`paperatlas.llm.backends.BACKENDS`.
        model: The model name given for it, if any.

    Returns:
        ``"openai:<model>"`` for the openai backend with a model, else ``name``.
    """
    return f"{name}:{model}" if name == "openai" and model else name


def backend_method(name: str, base_url: str | None, model: str | None) -> Method:
    """Make a generative backend an eval method.

    The method asks the backend (:func:`paperatlas.llm.tldr.backend_summarizer`) and keeps its answer when the
    check against the abstract accepts it, else it returns the extractive TL;DR, as ``build --tldr-backend`` does.

    Args:
        name: The backend's name in :data:`paperatlas.llm.backends.BACKENDS`.
        base_url: Endpoint of the openai backend (e.g. ``http://127.0.0.1:11434/v1``), else ``None``.
        model: Model name of the openai backend, else ``None``.

    Returns:
        ``method(record) -> TL;DR``, with ``fallback_rate()`` (share in [0, 1] of the papers so far that fell
        back) and ``summarizer`` (its call, fallback and reason counts) attributes.

    Raises:
        ValueError: Unknown backend, or ``base_url``/``model`` missing for openai.
        paperatlas.llm.backends.BackendError: The backend's packages are missing or its model cannot be loaded.
    """
    from ..llm.backends import make_backend
    from ..llm.tldr import backend_summarizer

    summarize = backend_summarizer(make_backend(name, base_url=base_url, model=model))

    def method(rec: dict) -> str:
        return summarize(rec.get("title") or "", abstract_of(rec))

    method.fallback_rate = lambda: summarize.fallback_rate  # type: ignore[attr-defined]
    method.summarizer = summarize  # type: ignore[attr-defined]
    return method


def available_methods() -> dict[str, Method]:
    """List the extractive methods and the baselines.

    Returns:
        Method name -> ``function(record) -> TL;DR``: our method (:data:`paperatlas.enrich.tldr.METHOD`) and its
        variants first, then the baselines ``title``, ``first-sentence`` and ``oracle``.
    """
    methods: dict[str, Method] = {tldr.METHOD: _ours(tldr.extract_tldr)}
    for name, fn in getattr(tldr, "VARIANTS", {}).items():
        methods.setdefault(name, _ours(fn))
    methods["title"] = lambda rec: rec.get("title") or ""
    methods["first-sentence"] = lambda rec: (rec.get("source") or [""])[0]
    methods["oracle"] = _oracle
    return methods


def method_names(methods: Sequence[str] = ()) -> list[str]:
    """Check the names of the methods asked for and add the baselines.

    Args:
        methods: Names from :func:`available_methods`; empty for all of ours.

    Returns:
        The names asked for (or all of ours), then every baseline not among them, in :data:`BASELINES` order.

    Raises:
        ValueError: A name is not in :func:`available_methods`.
    """
    avail = available_methods()
    names = list(methods) if methods else [m for m in avail if m not in BASELINES]
    unknown = [m for m in names if m not in avail]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(avail)}")
    return names + [b for b in BASELINES if b not in names]


def choose_methods(names: Sequence[str], generative: dict[str, Method] | None = None) -> dict[str, Method]:
    """Put the methods of one run in table order.

    Args:
        names: From :func:`method_names`.
        generative: Row label -> method of the generative backends (:func:`backend_label`,
            :func:`backend_method`).

    Returns:
        Name -> method: ours from ``names``, then ``generative``, then the baselines.
    """
    avail = available_methods()
    chosen: dict[str, Method] = {m: avail[m] for m in names if m not in BASELINES}
    chosen.update(generative or {})
    chosen.update({b: avail[b] for b in BASELINES})
    return chosen


def check_ready(gold: Path) -> None:
    """Fail early, before the slow parts, when the evaluation cannot run.

    Args:
        gold: The SciTLDR file.

    Raises:
        EvalUnavailable: ``gold`` is not a file, or ``rouge-score`` is not installed.
    """
    if not gold.is_file():
        raise EvalUnavailable(f"gold file not found: {gold}")
    _scorer()


def default_gold() -> Path:
    """Find the default gold file, the SciTLDR-A dev set.

    Returns:
        ``../shared/data/scitldr/dev.jsonl.gz`` relative to the working directory if it exists, else relative to
        the repository root.
    """
    here = Path.cwd() / DEFAULT_GOLD
    return here if here.exists() else _REPO.parent / "shared" / "data" / "scitldr" / "dev.jsonl.gz"


def evaluate_tldr(records: Iterable[dict], methods: Iterable[str] | dict[str, Method] | None = None,
                  progress: ProgressFactory | None = None) -> list[dict]:
    """Score TL;DR methods with ROUGE against the SciTLDR targets.

    ROUGE-1/2/L F1 comes from the ``rouge-score`` package (Google's reimplementation of Lin 2004, Porter stemmer
    on); "max" scores take, per paper and per metric, the best of all targets, as in the SciTLDR paper (Cachola et
    al., 2020). Records without a target or an abstract are dropped.

    Args:
        records: SciTLDR records (:func:`load_records`).
        methods: Names from :func:`available_methods`, or a name -> ``function(record) -> TL;DR`` mapping (e.g.
            from :func:`choose_methods`); ``None`` for all of :func:`available_methods`.
        progress: Where the TL;DRs made are counted, one bar per method (default a tqdm bar on stderr when it is a
            terminal: :func:`paperatlas.sources.progress.progress_of`; a generative backend takes seconds a paper).

    Returns:
        One row per method, in order: ``method``, ``n`` (papers), ``r1``/``r2``/``rL`` (F1 × 100 vs the author
        TL;DR, the first target), ``r1_max``/``r2_max``/``rL_max`` (F1 × 100 vs the best target), ``words``
        (average TL;DR length in words), ``papers_per_s`` and ``s_per_paper`` (generation only, scoring excluded)
        and ``fallback`` (share in [0, 1] of papers whose generated TL;DR was rejected for the extractive one;
        ``None`` for non-generative methods).

    Raises:
        ValueError: An unknown method name.
        EvalUnavailable: ``rouge-score`` is not installed.
    """
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
        outs = []
        with progress_of(f"TL;DR {name}", len(records), "paper", progress) as update:
            for r in records:
                outs.append(_oracle(r, scorer) if fn is _oracle else fn(r))
                update(1)
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
    """Format :func:`evaluate_tldr` rows as a plain-text table.

    Args:
        rows: Rows of :func:`evaluate_tldr`.

    Returns:
        A header line, a dashed rule and one line per row, columns aligned (method left, numbers right; ROUGE
        with one decimal, ``-`` for a missing value), without trailing spaces or newline.
    """
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


def fallback_report(methods: dict[str, Method]) -> list[str]:
    """Summarise how the generative backends' answers fared after :func:`evaluate_tldr` ran them.

    Args:
        methods: The methods of the run (those from :func:`backend_method` carry the counts).

    Returns:
        One line per generative method that was called: how many of its TL;DRs passed the check against the
        abstract, and its fallback reasons, most common first.
    """
    lines = []
    for name, fn in methods.items():
        summarizer = getattr(fn, "summarizer", None)
        if summarizer is not None and summarizer.calls:
            reasons = ", ".join(f"{r} {n}" for r, n in summarizer.reasons.most_common())
            lines.append(f"{name}: {summarizer.calls - summarizer.fallbacks}/{summarizer.calls} generated TL;DRs "
                         f"passed the check against the abstract; fallbacks: {reasons or 'none'}")
    return lines
