"""``paperatlas eval compare``: two ``eval topics --json`` runs side by side (before and after a change).

Per gold set present in both files: NMI, ARI, misfiled share and largest topic's share of every clustering row
(matched by method; the ``paperatlas nearest level = ...`` rows are matched to each other whatever their level),
each as before, after and the difference, and the label–name agreement means.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ._common import EvalUnavailable
from .topic_filing import NEAREST

#: ``(row key, heading, format of a value, format of a difference)``
METRICS = [("nmi", "NMI", "{:.3f}", "{:+.3f}"), ("ari", "ARI", "{:.3f}", "{:+.3f}"),
           ("misfiled", "misfiled", "{:.1%}", "{:+.1%}"), ("largest", "largest", "{:.1%}", "{:+.1%}")]


def load_run(path: Path) -> list[dict]:
    """Read an ``eval topics --json`` file.

    Args:
        path: The file.

    Returns:
        Its list of per-set records (``gold``, ``label``, ``clustering``, ``agreement_means``, ...).

    Raises:
        EvalUnavailable: The file is missing, not JSON, or not a list of set records (the message names it).
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise EvalUnavailable(f"cannot read {path}: {e}") from e
    if not isinstance(data, list) or not all(isinstance(r, dict) and "gold" in r and "clustering" in r
                                             for r in data):
        raise EvalUnavailable(f"{path}: not the output of eval topics --json")
    return data


def _key(method: str) -> str:
    return NEAREST if method.startswith(NEAREST) else method


def compare_set(before: dict, after: dict) -> list[dict]:
    """Match the clustering rows of one gold set in two runs.

    Args:
        before: A set record of the first run.
        after: The same set's record of the second run.

    Returns:
        One row per method of ``after`` (in its order) that ``before`` has too and that did not fail in either:
        ``method`` (the nearest-level row reads ``... = <before level> -> <after level>`` when it changed), and
        per metric ``<key>_before``, ``<key>_after`` (missing when a run lacks it).
    """
    old = {_key(r["method"]): r for r in before["clustering"] if "error" not in r}
    out = []
    for r in after["clustering"]:
        b = old.get(_key(r["method"]))
        if b is None or "error" in r:
            continue
        name = r["method"] if b["method"] == r["method"] else f"{b['method']} -> {r['method'].split(' = ')[-1]}"
        row = {"method": name}
        for k, *_ in METRICS:
            row[f"{k}_before"], row[f"{k}_after"] = b.get(k), r.get(k)
        out.append(row)
    return out


def format_comparison(rows: list[dict]) -> str:
    """Format :func:`compare_set` rows: method, then before, after and difference of each of :data:`METRICS`.

    Returns:
        Header, rule and one line per row (``-`` for a missing value), no final newline.
    """
    head = ["method"] + [h for _, name, _, _ in METRICS for h in (f"{name} was", "now", "diff")]
    body = []
    for r in rows:
        cells = [r["method"]]
        for k, _, f, fd in METRICS:
            b, a = r.get(f"{k}_before"), r.get(f"{k}_after")
            cells += [f.format(b) if b is not None else "-", f.format(a) if a is not None else "-",
                      fd.format(a - b) if a is not None and b is not None else "-"]
        body.append(cells)
    widths = [max(len(c[i]) for c in [head, *body]) for i in range(len(head))]

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths,
                                                                                           strict=True)))

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths), *(fmt(b) for b in body)])


def agreement_line(before: dict, after: dict) -> str | None:
    """The label–name agreement means of one gold set in two runs, or None when either run has no labels."""
    mb, ma = before.get("agreement_means") or [], after.get("agreement_means") or []
    if not mb or not ma:
        return None

    def mean(ms: list[dict], k: str) -> float:
        return float(np.mean([m[k] for m in ms]))

    parts = [f"{name} {mean(mb, k):.3f} -> {mean(ma, k):.3f} ({mean(ma, k) - mean(mb, k):+.3f})"
             for k, name in (("overlap", "token overlap"), ("cosine", "cosine"), ("distinct", "distinct topics share"),
                             ("label_score_areas", "eval labels score areas"),
                             ("label_score_subtopics", "sub-topics"))
             if all(k in m for m in mb + ma)]
    return "label-name agreement: " + ", ".join(parts)
