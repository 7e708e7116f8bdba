"""``--precision auto`` by measurement (issue 31): the paths are timed on real abstracts, the fastest one that finds
the same neighbours is chosen, cached once per machine and model, and named in the build's report."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from conftest import SAMPLE
from paperatlas.enrich import precision as prec
from paperatlas.enrich.embed import calibration_texts


@pytest.fixture()
def model_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERATLAS_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.delenv("PAPERATLAS_PRECISION", raising=False)
    return tmp_path / "models"


def _vectors(n: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _paths(delay: dict[str, float], scramble: set[str] = frozenset()):
    """A stand-in model: each path sleeps ``delay[path]`` s per text; a scrambled path returns other neighbours; a path
    without a delay cannot run here (RuntimeError, as torch says of a path this CPU cannot run)."""
    def encode_with(path):
        if path not in delay:
            raise RuntimeError(f"{path} cannot run here")

        def encode(texts):
            time.sleep(delay[path] * len(texts))
            v = _vectors(len(texts))
            return _vectors(len(texts), seed=1) if path in scramble else v
        return encode
    return encode_with


def test_the_calibration_texts_are_the_bundled_real_abstracts():
    texts = calibration_texts()
    assert len(texts) == 60 == len(set(texts)) and all(len(t) > 200 for t in texts)
    assert texts[0].startswith("Net-DNF: Effective Deep Modeling of Tabular Data. A challenging open question")


def test_a_faster_path_that_keeps_the_neighbours_is_chosen(model_cache):
    texts = calibration_texts()
    cal = prec.calibrate(_paths({"fp32": 0.0005, "bf16": 0.0}), "m", texts)
    assert cal.chosen == "bf16" and cal.overlap["bf16"] == 1.0
    assert cal.papers_per_s["bf16"] > cal.papers_per_s["fp32"] > 0
    assert cal.one_thread_papers_per_s > 0 and cal.parallel in ("threads", "processes")


def test_a_faster_path_that_finds_other_neighbours_is_refused(model_cache):
    cal = prec.calibrate(_paths({"fp32": 0.0005, "bf16": 0.0}, scramble={"bf16"}), "m", calibration_texts())
    assert cal.overlap["bf16"] < prec.MIN_OVERLAP and cal.chosen == "fp32"


def test_a_slower_path_is_not_chosen_and_the_figures_say_why(model_cache):
    # sleeps of 5-6 ms a text: a scheduler's delay on a loaded machine (CI) is small beside them (0.5-0.6 ms failed)
    cal = prec.calibrate(_paths({"fp32": 0.005, "bf16": 0.006}), "m", calibration_texts())
    assert cal.chosen == "fp32" and cal.probed == []  # within 2x of fp32 on the probe: timed in full
    line = cal.describe()
    assert line.startswith("fp32, measured on this machine") and "bf16 top-10 overlap 1.000" in line
    assert "papers/s" in line and "to measure again" in line


def test_a_path_far_slower_on_one_batch_is_measured_no_further(model_cache):
    """Emulated bf16 (a CPU without AVX512-BF16 or AMX: 3.0 papers/s against 17.4 for fp32 on an AVX2 EPYC) is
    probed on one batch, not assumed slow from CPU flags, and not timed over every text either."""
    calls = []

    def encode_with(path):
        inner = _paths({"fp32": 0.0005, "bf16": 0.003})(path)
        return lambda texts: calls.append((path, len(texts))) or inner(texts)

    cal = prec.calibrate(encode_with, "m", calibration_texts())
    assert cal.chosen == "fp32" and cal.probed == ["bf16"] and "bf16" not in cal.overlap
    assert sum(n for path, n in calls if path == "bf16") == 2 * prec.PROBE_TEXTS
    assert cal.papers_per_s["bf16"] < prec.PROBE_SHARE * cal.papers_per_s["fp32"]
    assert "bf16 below 50% of fp32 on one batch: not timed further" in cal.describe()


def test_the_choice_is_cached_per_machine_and_a_disturbed_one_is_measured_again(model_cache, monkeypatch):
    cal = prec.calibrate(_paths({"fp32": 0.0, "bf16": 0.0}), "m", calibration_texts())
    prec.save_calibration(cal)
    path = prec.calibration_path("m")
    assert path.parent == model_cache and json.loads(path.read_text())["chosen"] == cal.chosen
    assert prec.cached_calibration("m") == cal and prec.cached_calibration("other model") is None
    monkeypatch.setattr(prec, "_load", lambda: 0.1)
    cal.load_average = 0.3
    assert not prec.needs_measurement(cal)  # made on a quiet machine: kept
    cal.load_average = 8.0  # made while the machine was busy, and it is quiet now: measured again
    assert prec.needs_measurement(cal)
    assert prec.needs_measurement(None)


def test_neighbour_overlap_counts_shared_nearest_neighbours():
    v = _vectors(60)
    assert prec.neighbour_overlap(v, v) == 1.0
    assert prec.neighbour_overlap(v, _vectors(60, seed=3)) < 0.5
    assert prec.neighbour_overlap(v[:1], v[:1]) == 1.0


@pytest.mark.slow
def test_auto_measures_once_and_the_build_report_names_the_choice(model_cache, tmp_path, monkeypatch):
    from paperatlas.build import build
    from paperatlas.engines.local import LocalEngine
    from paperatlas.enrich.embed import MiniLMEmbedder, resolve_precision

    monkeypatch.setattr(prec, "_load", lambda: 0.0)  # a quiet machine: the measurement is kept
    model = MiniLMEmbedder(precision="auto")
    cal = prec.cached_calibration(MiniLMEmbedder.name)
    assert cal is not None and model.precision == cal.chosen
    assert set(cal.papers_per_s) == {"fp32", "bf16", "onnx-fp32"}  # on every CPU, with or without native bf16
    assert cal.overlap["bf16"] >= 0.95 if "bf16" not in cal.probed else cal.chosen != "bf16"
    assert cal.overlap["onnx-fp32"] == 1.0 if "onnx-fp32" not in cal.probed else cal.chosen != "onnx-fp32"
    assert cal.one_thread_papers_per_s > 0 and cal.parallel in ("threads", "processes")
    stamp = prec.calibration_path(MiniLMEmbedder.name).stat().st_mtime_ns
    assert resolve_precision("auto") == cal.chosen
    rep = build([SAMPLE], tmp_path / "a.db", engine=LocalEngine(precision="auto"))
    assert rep.precision.startswith(f"{cal.chosen}, measured on this machine")
    assert prec.calibration_path(MiniLMEmbedder.name).stat().st_mtime_ns == stamp  # not measured again


def test_a_build_runs_a_child_per_core_only_where_that_was_measured_faster(model_cache, monkeypatch):
    from paperatlas.build import PROCESSES_MAX_PAPERS, PROCESSES_MIN_PAPERS, local_engine
    from paperatlas.enrich.embed import MiniLMEmbedder

    monkeypatch.setattr(prec, "cores", lambda: 2)
    cal = prec.calibrate(_paths({"fp32": 0.0, "bf16": 0.0}), MiniLMEmbedder.name, calibration_texts())
    for parallel, want in (("threads", 1), ("processes", 2)):
        cal.parallel = parallel
        prec.save_calibration(cal)
        engine = local_engine("auto", None, PROCESSES_MIN_PAPERS)
        assert engine.processes == want and engine.embed_in_child == (want > 1)
    assert local_engine("auto", None, PROCESSES_MIN_PAPERS - 1).processes == 1  # too few to win back 2 start-ups
    big = local_engine("auto", None, PROCESSES_MAX_PAPERS)  # the memory of two children: one child
    assert big.processes == 1 and big.embed_in_child
    assert local_engine("fp32", None, PROCESSES_MIN_PAPERS).processes == 1  # a precision asked for: not measured
    cal.chosen = "onnx-fp32"  # a child of ONNX Runtime holds ~0.23 GB, not ~0.7: a child per core at any size
    prec.save_calibration(cal)
    big = local_engine("auto", None, 10 * PROCESSES_MAX_PAPERS)
    assert big.processes == 2 and big.precision == "onnx-fp32"
    monkeypatch.setenv("PAPERATLAS_PRECISION", "bf16")
    assert local_engine("auto", None, PROCESSES_MIN_PAPERS).processes == 1


def test_the_build_process_reads_the_choice_without_loading_torch(model_cache, monkeypatch):
    """A large build embeds in children so that its own process never holds torch (~300 MB): reading the cached
    choice, choosing the children and writing the report line must not import it."""
    import subprocess
    import sys

    from paperatlas.enrich.embed import MiniLMEmbedder

    cal = prec.calibrate(_paths({"fp32": 0.0, "bf16": 0.0}), MiniLMEmbedder.name, calibration_texts())
    cal.parallel, cal.load_average = "processes", 0.1
    prec.save_calibration(cal)
    code = ("import sys\nfrom paperatlas.build import local_engine\nfrom paperatlas.enrich.embed import "
            "precision_note\ne = local_engine('auto', None, 30000)\nnote = precision_note('auto')\n"
            "print(e.embed_in_child, note.split(',')[0], 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", cal.chosen, "False"]


def test_an_arithmetic_asked_for_is_run_and_the_build_warns_with_this_machines_figures(model_cache, monkeypatch,
                                                                                      tmp_path):
    """``--precision bf16`` is not refused from CPU flags: it runs, and the build says first, from the measurement
    when there is one, that it is slower here (an AVX2 EPYC: fp32 15.2 papers/s, bf16 2.7 on one batch)."""
    from click.testing import CliRunner

    from paperatlas.cli import main
    from paperatlas.enrich import embed

    monkeypatch.setattr(embed, "bf16_native", lambda: False)
    assert embed.resolve_precision("bf16") == "bf16"  # no ValueError any more
    assert "no native bfloat16" in embed.precision_warning("bf16")  # nothing measured yet: a hint from oneDNN
    assert embed.precision_warning("fp32") is None and embed.precision_warning("auto") is None
    cal = prec.Calibration(model=embed.MiniLMEmbedder.name, machine="AMD EPYC, 2 cores",
                           papers_per_s={"fp32": 15.2, "bf16": 2.7}, overlap={"fp32": 1.0}, chosen="fp32")
    prec.save_calibration(cal)
    line = embed.precision_warning("bf16")
    assert line == ("--precision bf16: 2.7 papers/s measured on this machine, against 15.2 for fp32 (what "
                    "--precision auto runs)")
    assert embed.precision_warning("fp32") is None
    junk = tmp_path / "notes.txt"
    junk.write_text("just some notes\nnothing like a paper listing\n")
    res = CliRunner().invoke(main, ["build", str(junk), "--db", str(tmp_path / "a.db"), "--precision", "bf16"])
    assert res.exit_code != 0 and "No such option" not in res.output  # the listing is refused, not the precision
    assert f"warning: {line}" in res.output and not (tmp_path / "a.db").exists()
