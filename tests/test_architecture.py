"""The package's shape: imports flow one way (import-linter contracts in pyproject.toml), no cycles, small modules."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SRC = ROOT / "src" / "paperatlas"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
#: the most lines a module may have ("no module over ~500 lines": a bigger one is two rooms)
MAX_MODULE_LINES = 520


def _lint_imports(src_root: Path) -> subprocess.CompletedProcess:
    if not LINT_IMPORTS.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    env = {**os.environ, "PYTHONPATH": str(src_root)}
    return subprocess.run([str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache", "--no-logo"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_imports_flow_one_way_without_cycles():
    res = _lint_imports(ROOT / "src")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "2 kept, 0 broken" in res.stdout


@pytest.mark.parametrize(("module", "line", "broken"), [
    # the store reaching up into the web app: an upward import
    ("store/sqlite.py", "from ..web import create_app\n", "paperatlas.store.sqlite -> paperatlas.web"),
    # two siblings of one layer: the web app borrowing from publish
    ("web/app.py", "from ..publish import FORMATS\n", "paperatlas.web.app -> paperatlas.publish"),
    # a cycle inside the cli package (_common is imported by build)
    ("cli/_common.py", "from . import build\n", "No cycles are allowed in paperatlas.cli"),
])
def test_a_wrong_import_breaks_the_suite(tmp_path, module, line, broken):
    copy = tmp_path / "src" / "paperatlas"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "data", "vendor", "static"))
    target = copy / module
    target.write_text(target.read_text(encoding="utf-8") + line, encoding="utf-8")
    res = _lint_imports(tmp_path / "src")
    assert res.returncode != 0
    assert "BROKEN" in res.stdout and broken in res.stdout, res.stdout


def test_no_module_is_too_big():
    sizes = {str(p.relative_to(SRC)): len(p.read_text(encoding="utf-8").splitlines()) for p in SRC.rglob("*.py")}
    too_big = {k: v for k, v in sizes.items() if v > MAX_MODULE_LINES}
    assert not too_big, f"split these modules (over {MAX_MODULE_LINES} lines): {too_big}"


def test_code_passes_ruff_including_google_style_docstrings():
    """``ruff check`` with the project's rules (pyproject.toml): lint, import order, and pydocstyle's Google
    convention for every public module, class and function of the package."""
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    res = subprocess.run([str(ruff), "check", "--no-cache", "src", "tests", "scripts", "benchmarks"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_docstring_out_of_style_fails_ruff(tmp_path):
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    pkg = tmp_path / "src" / "paperatlas"
    pkg.mkdir(parents=True)
    (pkg / "bad.py").write_text('"""A module."""\n\n\ndef scale(x: float, factor: float) -> float:\n'
                                '    """Multiply x by a factor, a summary that goes on\n    to a second line."""\n'
                                '    return x * factor\n', encoding="utf-8")
    res = subprocess.run([str(ruff), "check", "--no-cache", "src"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 1 and "D205" in res.stdout, res.stdout


#: the most lines a function may span from its ``def`` to its last line, docstring included ("no function over 100
#: lines"; a command's click decorators are not counted)
MAX_FUNCTION_LINES = 100


def _long_functions(root: Path, limit: int) -> dict[str, int]:
    """``module:function (line) -> lines`` of every function or method under ``root`` spanning over ``limit`` lines."""
    import ast

    found = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                span = node.end_lineno - node.lineno + 1
                if span > limit:
                    found[f"{path.relative_to(root)}:{node.name} (line {node.lineno})"] = span
    return found


def test_no_function_is_too_long():
    too_long = _long_functions(SRC, MAX_FUNCTION_LINES)
    assert not too_long, f"split these functions (over {MAX_FUNCTION_LINES} lines): {too_long}"


def test_a_long_function_is_caught(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))  # 100 body lines + the def line
    (pkg / "m.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}", encoding="utf-8")
    assert _long_functions(tmp_path, MAX_FUNCTION_LINES) == {"pkg/m.py:long (line 5)": MAX_FUNCTION_LINES + 1}
