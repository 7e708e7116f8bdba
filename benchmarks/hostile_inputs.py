"""Benchmark: how long paperatlas takes to refuse or cut hostile input (figures, not assertions).

The tests check *what* happens to each input below (refused with a message naming the file, cut with a warning,
bounded); this prints *how long* it takes, which a test must not assert (a shared CI machine is noisy: a 2 s bound
failed there at 2.2 s). Each case runs ``--runs`` times; the median and the worst are printed, in seconds.

    python benchmarks/hostile_inputs.py            # all cases, 3 runs each
    python benchmarks/hostile_inputs.py --runs 5 --only keyphrases

Cases (the same inputs as the tests named):

* ``keyphrases``: ``parse_keyphrases`` of 100,000 distinct phrases (refused) and of 200,000 repeats plus 49
  phrases (kept: repeats do not count) (``tests/test_web_security.py``);
* ``edit``: the web app's keyphrase edit with 100,000 (400) and 200,000 phrases (413) (same file);
* ``junk``: reading a 10 MB line of junk (``tests/test_reader_fuzz.py``) and ``paperatlas build`` of a 10 MB
  line of ``x`` into an atlas (``tests/test_build_safety.py``);
* ``abstract``: reading a paperlists markdown listing with a 10 MB abstract (cut to 20,000 characters), and
  ``paperatlas build`` of it with the hash embedder (``tests/test_build_safety.py``, ``tests/test_reader_fuzz.py``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXCERPT = ROOT / "tests" / "fixtures" / "iclr2021_excerpt.md"
sys.path.insert(0, str(ROOT / "tests"))  # the tests' HashEmbedder: builds without loading the model


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """``(median, worst)`` wall seconds of ``runs`` calls of ``fn``."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), max(times)


def _expect(exc: type[BaseException], fn: Callable[[], object]) -> None:
    try:
        fn()
    except exc:
        return
    raise SystemExit(f"expected {exc.__name__} from {fn}")


def keyphrase_cases(work: Path) -> dict[str, Callable[[], object]]:
    """``parse_keyphrases`` on the two hostile fields of ``tests/test_web_security.py``."""
    from paperatlas.limits import MAX_KEYPHRASES
    from paperatlas.overrides import parse_keyphrases

    distinct = ";".join(f"phrase {i}" for i in range(100_000))
    repeats = ";".join(["same"] * 200_000 + [f"k{i}" for i in range(MAX_KEYPHRASES - 1)])
    return {"parse_keyphrases: 100,000 distinct (refused)": lambda: _expect(ValueError,
                                                                            lambda: parse_keyphrases(distinct)),
            "parse_keyphrases: 200,000 repeats + 49 (kept)": lambda: parse_keyphrases(repeats)}


def _small_atlas(work: Path) -> Path:
    from paperatlas.build import build
    from test_build_safety import HashEmbedder

    db = work / "atlas.db"
    if not db.exists():
        build([EXCERPT], db, embedder=HashEmbedder())
    return db


def edit_cases(work: Path) -> dict[str, Callable[[], object]]:
    """The web app's keyphrase edit (a same-origin form post with its CSRF token, as the tests send it)."""
    from paperatlas.store import Atlas
    from paperatlas.web import create_app
    from test_web_security import ORIGIN, token_of

    db = _small_atlas(work)
    pid = Atlas(db).papers[0].id
    client = create_app(db, preload_model=False).test_client()
    token = token_of(client, pid)

    def post(n: int, status: int) -> None:
        res = client.post(f"/paper/{pid}/edit", headers={"Origin": ORIGIN},
                          data={"keyphrases": ";".join(f"k{i}" for i in range(n)), "csrf_token": token})
        if res.status_code != status:
            raise SystemExit(f"edit with {n:,} keyphrases answered {res.status_code}, expected {status}")

    return {"web edit: 100,000 keyphrases (400)": lambda: post(100_000, 400),
            "web edit: 200,000 keyphrases (413)": lambda: post(200_000, 413)}


def _cli_build(listing: Path, db: Path, code: int) -> None:
    from click.testing import CliRunner

    import paperatlas.engines.local as local
    from paperatlas.cli import main
    from test_build_safety import HashEmbedder

    local.get_embedder = lambda **_: HashEmbedder()  # what the tests' fast_model does: no model load timed
    res = CliRunner().invoke(main, ["build", str(listing), "--db", str(db)])
    if res.exit_code != code:
        raise SystemExit(f"build of {listing.name} exited {res.exit_code}, expected {code}:\n{res.output}")


def junk_cases(work: Path) -> dict[str, Callable[[], object]]:
    """A 10 MB line of junk, read and built."""
    from paperatlas import sources
    from paperatlas.model import SourceError

    junk = work / "junk.md"
    junk.write_bytes(b"#-[{ junk \xc3\xa9 " * 700_000)
    xs = work / "xs.md"
    xs.write_bytes(b"x" * 10_000_000)
    db = _small_atlas(work)
    return {"read: 10 MB line of junk (refused)": lambda: _expect(SourceError, lambda: sources.read(junk)),
            "build: 10 MB line of x into an atlas (refused)": lambda: _cli_build(xs, db, 1)}


def abstract_cases(work: Path) -> dict[str, Callable[[], object]]:
    """A paperlists markdown listing whose first abstract is 10 MB."""
    from paperatlas import sources

    text = EXCERPT.read_text()
    end = text.index("\n", text.index("- abstract@"))
    listing = work / "iclr2021.md"
    listing.write_text(text[:end] + " and so on" * 1_000_000 + text[end:])

    def read() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sources.read(listing)

    def build() -> None:
        db = work / "huge.db"
        db.unlink(missing_ok=True)
        _cli_build(listing, db, 0)

    return {"read: 10 MB abstract (cut)": read, "build: 10 MB abstract (cut, hash embedder)": build}


CASES = {"keyphrases": keyphrase_cases, "edit": edit_cases, "junk": junk_cases, "abstract": abstract_cases}


def main(argv: list[str] | None = None) -> None:
    """Print one line per case: median and worst wall seconds over ``--runs``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per case (default 3)")
    ap.add_argument("--only", choices=sorted(CASES), action="append", help="run only these groups (repeatable)")
    args = ap.parse_args(argv)
    print(f"{'case':<52} {'median s':>9} {'worst s':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for group in args.only or list(CASES):
            for name, fn in CASES[group](Path(tmp)).items():
                med, worst = timed(fn, args.runs)
                print(f"{name:<52} {med:>9.2f} {worst:>9.2f}", flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
