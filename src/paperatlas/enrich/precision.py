"""``--precision auto`` by measurement: the embedding's arithmetic and parallelism chosen by timing them here.

CPU flags do not say which path is faster: on one 2-core machine with AVX512-BF16 bf16 autocast embeds 1.88x the
papers/s of fp32, on another with the same flags 0.80x (issue 31). So ``auto`` times every path on real texts once
per machine and model, and keeps the fastest one that finds the same neighbours:

* **Texts**: the 60 ICLR 2021 abstracts of the bundled sample listing
  (:func:`~paperatlas.enrich.embed.calibration_texts`), embedded as a build embeds them (title + abstract, longest
  first, batches of 32).
* **Paths**: fp32, bf16 under ``torch.autocast`` (where torch can run it at all) and onnx-fp32 (the same model's
  ONNX export on ONNX Runtime, fp32: 1.11-1.26x the papers/s of torch fp32 on a 2-core AVX2 EPYC, 1.01x on a
  Xeon with AVX512-BF16; docs/scale.md), on every CPU: whether oneDNN reports native bf16 is not trusted either
  way. Each is warmed up on one batch, then timed over all texts :data:`REPEATS` times; its speed is the best of
  those (papers/s), the least disturbed by other work on the machine.
  A path other than fp32 is first *probed* on :data:`PROBE_TEXTS` texts after a warm-up on as many; one below
  :data:`PROBE_SHARE` of fp32's speed there cannot win and is not timed further (on a 2-core AMD EPYC with AVX2
  only, where oneDNN emulates bf16: 3.0 papers/s against 17.4 for fp32; the probe costs ~5 s, timing in full ~50).
* **Agreement**: a path other than fp32 qualifies when its top-10-neighbour overlap with fp32 over the 60 texts
  (mean share of each text's 10 nearest others that both paths find) is at least :data:`MIN_OVERLAP`.
* **Parallelism**: fp32 and every qualifying path are timed again with one thread. ``cores × one-thread speed`` is
  what a child process per core would reach at best; a path runs as ``processes`` when that bound is at least
  :data:`PROCESSES_MIN_SHARE` of its threads' speed, else as ``threads`` (:func:`arrangement`). ONNX Runtime gains
  more from one thread than torch does (on a 2-core AVX2 EPYC, 60 ICLR abstracts: 12.1 against 8.4 papers/s,
  while 16.7 against 14.9 on two threads), so the paths are compared each at its best arrangement.
* **Choice**: the fastest qualifying path at its best arrangement, when it is at least :data:`MIN_GAIN` times
  fp32's (a smaller gain is within the timing noise), else fp32; :attr:`Calibration.parallel` is its arrangement.

The result (:class:`Calibration`, with every figure) is cached as JSON beside the exported query model
(:func:`calibration_path`, one file per machine and model: CPU model, core count, torch version) and reused by every
later build; ``paperatlas build`` prints it in its report. Delete the file to measure again. A measurement made
while other work kept the cores busy (1-minute load average above :data:`BUSY_LOAD` per core) is used but made
again by the first model load on a quieter machine (:func:`needs_measurement`): other work slows two torch threads
far more than one, and the choice is kept for good.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..settings import settings

#: the embedding paths ``--precision auto`` times (:data:`paperatlas.enrich.embed.PRECISIONS`): torch fp32 (the
#: reference the others must agree with), torch bf16 autocast, and ONNX Runtime fp32
PATHS = ("fp32", "bf16", "onnx-fp32")

#: a path other than fp32 must keep at least this top-10-neighbour overlap with fp32 (issue 31)
MIN_OVERLAP = 0.99
#: a path other than fp32 is chosen only when at least this many times as fast (timing noise)
MIN_GAIN = 1.05
#: a child per core is chosen over one process's threads unless its bound is below this share of the threads' speed:
#: in a build the children share the cores with the build's own work (keyphrases, TL;DRs), where single-threaded
#: children lose no more than their share (2 children beside a TL;DR process: 16.4 CPU-s per 600 abstracts each, as
#: alone) but one process's torch threads wait for each other (~45 % slower at 42k papers); the bare embedding's
#: own difference is within the timing noise either way (calibrations of one machine: 1.04-1.15x for processes)
PROCESSES_MIN_SHARE = 0.9
#: timed passes over the texts per path; the best is kept
REPEATS = 2
#: a path other than fp32 is first timed on this many texts (after a warm-up on as many) ...
PROBE_TEXTS = 8
#: ... and timed no further when it is below this share of fp32's speed there (it cannot reach :data:`MIN_GAIN`
#: whatever the texts' lengths: a margin of 2x for one small batch against fp32's full passes)
PROBE_SHARE = 0.5
#: texts embedded per model call, as the build does (:class:`~paperatlas.enrich.embed.MiniLMEmbedder`)
BATCH_SIZE = 32
#: version of the cached file's layout; another version is measured again
CALIBRATION_VERSION = 3  # 2: processes unless below PROCESSES_MIN_SHARE; 3: onnx-fp32 timed too
#: nearest neighbours compared per text
NEIGHBOURS = 10
#: 1-minute load average per core above which a measurement counts as disturbed (made again when it is quieter)
BUSY_LOAD = 0.5


@dataclass
class Calibration:
    """What ``--precision auto`` measured on this machine, and what it chose.

    Attributes:
        model: the embedding model's versioned name.
        machine: CPU model, logical cores and torch version it was measured with.
        papers_per_s: path -> papers/s (best of :data:`REPEATS` passes) with torch's default threads (ONNX Runtime
            runs on as many).
        overlap: path -> top-10-neighbour overlap with fp32 (fp32: 1.0); none for a path only probed
            (:attr:`probed`).
        chosen: the path builds use (one of :data:`PATHS`).
        threads: torch's intra-op threads in the timed passes.
        one_thread: path -> papers/s with one thread, for each path that keeps the neighbours
            (:attr:`one_thread_papers_per_s`: the chosen path's).
        parallel: ``threads`` (one process, ``threads`` intra-op threads) or ``processes`` (a child per core would be
            faster, see the module docstring).
        seconds: how long the calibration took, seconds.
        measured_at: local time of the measurement, ISO 8601.
        load_average: the 1-minute load average when it started (-1 where the OS has none).
        version: :data:`CALIBRATION_VERSION`.
    """

    model: str
    machine: str
    papers_per_s: dict[str, float] = field(default_factory=dict)
    overlap: dict[str, float] = field(default_factory=dict)
    chosen: str = "fp32"
    threads: int = 1
    one_thread: dict[str, float] = field(default_factory=dict)
    parallel: str = "threads"
    seconds: float = 0.0
    measured_at: str = ""
    load_average: float = -1.0
    version: int = CALIBRATION_VERSION

    @property
    def one_thread_papers_per_s(self) -> float:
        """The chosen path's papers/s with one thread (0.0 when it was not timed so)."""
        return self.one_thread.get(self.chosen, 0.0)

    @property
    def probed(self) -> list[str]:
        """Paths timed on one batch only (:data:`PROBE_SHARE`): a speed (that batch's) and no overlap."""
        return [k for k in self.papers_per_s if k not in self.overlap]

    def describe(self) -> str:
        """One line for the build report: the choice, and the figures it was made on."""
        speeds = ", ".join(f"{k} {v:.1f} papers/s" for k, v in self.papers_per_s.items())
        other = [k for k in self.papers_per_s if k != "fp32"]
        agree = "".join(f"; {k} top-10 overlap {self.overlap[k]:.3f}" if k in self.overlap
                        else f"; {k} below {PROBE_SHARE:.0%} of fp32 on one batch: not timed further" for k in other)
        n = cores()
        single = ", ".join(f"{k} {v:.1f}" for k, v in self.one_thread.items())
        par = (f"; one thread: {single} papers/s; {self.chosen} on {self.threads} threads "
               f"{self.papers_per_s.get(self.chosen, 0):.1f} papers/s vs {n} x 1 thread "
               f"{n * self.one_thread_papers_per_s:.1f} at best: {self.parallel}")
        return (f"{self.chosen}, measured on this machine {self.measured_at[:10]} ({speeds}{agree}{par}; "
                f"delete {calibration_path(self.model).name} in {calibration_path(self.model).parent} to measure "
                "again)")


def _load() -> float:
    """The 1-minute load average (-1 where the OS has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return -1.0


def needs_measurement(cal: Calibration | None) -> bool:
    """Whether the model's next load should measure: no calibration, or a disturbed one and the machine quieter now.

    Args:
        cal: the cached calibration (:func:`cached_calibration`), or None.

    Returns:
        True when there is none, or it was made above :data:`BUSY_LOAD` per core and the load is now below both
        that and the load it was made at.
    """
    if cal is None:
        return True
    busy = BUSY_LOAD * cores()
    now = _load()
    return cal.load_average > busy and 0 <= now < min(busy, cal.load_average)


def cores() -> int:
    """The logical cores this process may run on (its CPU affinity where the OS has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else :func:`platform.processor`)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def machine_description() -> str:
    """``"<CPU model>, <n> cores, torch <version>"``: what a calibration holds for.

    Read without importing torch (:mod:`importlib.metadata`): the build process of a large atlas asks for the cached
    calibration and must not load torch's ~300 MB (its embedding runs in a child).
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        tv = version("torch")
    except PackageNotFoundError:
        tv = "none"
    return f"{cpu_model()}, {cores()} cores, torch {tv}"


def calibration_path(model: str) -> Path:
    """The cached calibration of ``model`` on this machine, beside the exported query model (may not exist).

    Args:
        model: the embedding model's versioned name.

    Returns:
        ``<model cache>/precision-<12 hex digits>.json``, the digits a hash of the model and
        :func:`machine_description`.
    """
    key = hashlib.sha1(f"{model}|{machine_description()}".encode()).hexdigest()[:12]
    return settings.model_cache_dir / f"precision-{key}.json"


def cached_calibration(model: str) -> Calibration | None:
    """The calibration cached for ``model`` on this machine; None when there is none (or it is unreadable)."""
    try:
        data = json.loads(calibration_path(model).read_text())
        cal = Calibration(**data)
    except (OSError, ValueError, TypeError):
        return None
    return cal if cal.version == CALIBRATION_VERSION and cal.chosen in PATHS else None


def neighbour_overlap(a: np.ndarray, b: np.ndarray, k: int = NEIGHBOURS) -> float:
    """Mean share of each row's ``k`` nearest other rows (cosine) that ``a`` and ``b`` agree on.

    Args:
        a: ``(n, dim)`` float32, L2-normalised.
        b: ``(n, dim)`` float32, L2-normalised: the same texts in the same order, embedded another way.
        k: neighbours per row (at most ``n - 1``).

    Returns:
        A share in [0, 1] (1.0 for fewer than 2 rows).
    """
    n = len(a)
    k = min(k, n - 1)
    if k < 1:
        return 1.0

    def top(x: np.ndarray) -> np.ndarray:
        s = x @ x.T
        np.fill_diagonal(s, -np.inf)
        return np.argsort(-s, axis=1, kind="stable")[:, :k]

    ta, tb = top(np.asarray(a, np.float32)), top(np.asarray(b, np.float32))
    return float(np.mean([len(set(ra.tolist()) & set(rb.tolist())) / k for ra, rb in zip(ta, tb, strict=True)]))


def _timed(encode: Callable[[list[str]], np.ndarray], texts: list[str]) -> tuple[float, np.ndarray]:
    """``(papers/s, vectors)``: one warm-up batch, then the best of :data:`REPEATS` passes over ``texts``."""
    encode(texts[:BATCH_SIZE])
    best, vecs = float("inf"), None
    for _ in range(REPEATS):
        t = time.perf_counter()
        vecs = encode(texts)
        best = min(best, time.perf_counter() - t)
    return len(texts) / best, vecs


def _probe(encode: Callable[[list[str]], np.ndarray], texts: list[str]) -> float:
    """Papers/s of one batch of :data:`PROBE_TEXTS` texts, after a warm-up batch of as many (texts 0-7, then 8-15)."""
    encode(texts[:PROBE_TEXTS])
    batch = texts[PROBE_TEXTS:2 * PROBE_TEXTS] or texts[:PROBE_TEXTS]
    t = time.perf_counter()
    encode(batch)
    return len(batch) / max(time.perf_counter() - t, 1e-9)


def calibrate(encode_with: Callable[[str], Callable[[list[str]], np.ndarray]], model: str,
              texts: Sequence[str], paths: Sequence[str] = PATHS) -> Calibration:
    """Time every path of ``paths`` on ``texts`` and choose (see the module docstring); nothing is cached here.

    Args:
        encode_with: ``encode_with(path)`` -> a function embedding a list of texts at that path, returning
            ``(n, dim)`` float32 L2-normalised rows (it runs with torch's current thread count).
        model: the embedding model's versioned name (recorded).
        texts: the texts (:func:`paperatlas.enrich.embed.calibration_texts`: the bundled sample's abstracts).
        paths: the paths to time; the first is the reference the others must agree with (fp32).

    Returns:
        The :class:`Calibration`.
    """
    import torch

    start = time.perf_counter()
    texts = list(texts)
    cal = Calibration(model=model, machine=machine_description(), threads=torch.get_num_threads(),
                      load_average=_load())
    ref = None
    for path in paths:
        try:
            if ref is not None:  # a path that cannot win is not timed over every text
                speed = _probe(encode_with(path), texts)
                if speed < PROBE_SHARE * cal.papers_per_s[paths[0]]:
                    cal.papers_per_s[path] = round(speed, 2)  # no overlap: listed in cal.probed
                    continue
            speed, vecs = _timed(encode_with(path), texts)
        except RuntimeError:  # this torch cannot run the path on this CPU at all
            continue
        ref = vecs if ref is None else ref
        cal.papers_per_s[path] = round(speed, 2)
        cal.overlap[path] = round(neighbour_overlap(ref, vecs), 4)
    agree = [p for p in cal.papers_per_s if p == paths[0] or cal.overlap.get(p, 0.0) >= MIN_OVERLAP]
    threads = torch.get_num_threads()
    try:  # each path that keeps the neighbours on one thread too: a child per core runs one thread each
        torch.set_num_threads(1)
        for path in agree:
            cal.one_thread[path] = (round(_timed(encode_with(path), texts)[0], 2) if cores() > 1
                                    else cal.papers_per_s[path])
    finally:
        torch.set_num_threads(threads)
    best = {p: arrangement(cal, p) for p in agree}  # path -> (papers/s at its best, "threads" or "processes")
    fit = [p for p in agree if p != paths[0] and best[p][0] >= MIN_GAIN * best[paths[0]][0]]
    cal.chosen = max(fit, key=lambda p: best[p][0]) if fit else paths[0]
    cal.parallel = best[cal.chosen][1]
    cal.seconds = round(time.perf_counter() - start, 2)
    cal.measured_at = time.strftime("%Y-%m-%dT%H:%M:%S")
    return cal


def arrangement(cal: Calibration, path: str) -> tuple[float, str]:
    """How ``path`` embeds fastest here: ``(papers/s, "threads" | "processes")``.

    ``processes`` (a single-threaded child per core) when ``cores x`` its one-thread speed is at least
    :data:`PROCESSES_MIN_SHARE` of its speed on the default threads; its papers/s is then that bound.

    Args:
        cal: a calibration with ``path`` timed both ways (:attr:`Calibration.one_thread`).
        path: one of :data:`PATHS`.

    Returns:
        ``(papers/s, arrangement)``.
    """
    on_threads = cal.papers_per_s[path]
    bound = cores() * cal.one_thread.get(path, 0.0)
    if cores() > 1 and bound >= PROCESSES_MIN_SHARE * on_threads:
        return bound, "processes"
    return on_threads, "threads"


def save_calibration(cal: Calibration) -> None:
    """Cache ``cal`` at :func:`calibration_path` (written atomically; an unwritable cache is only a lost cache)."""
    path = calibration_path(cal.model)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(cal), indent=1))
        os.replace(tmp, path)
