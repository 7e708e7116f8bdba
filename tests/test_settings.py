"""Configuration from one place: paperatlas.settings reads every PAPERATLAS_* variable, the modules ask it, and the
README documents every variable the code names."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from paperatlas.enrich.onnx_embed import model_cache_dir
from paperatlas.eval.embed_cache import cache_file
from paperatlas.settings import VARIABLES, markdown_table, settings
from paperatlas.sources._common import cache_root, offline

SRC = Path(__file__).resolve().parents[1] / "src" / "paperatlas"
README = Path(__file__).resolve().parents[1] / "README.md"
NAMES = [v.name for v in VARIABLES]
#: PAPERATLAS_* names that are not environment variables (a plugin module's attribute, paperatlas.plugins)
NOT_ENV = {"PAPERATLAS_HOOKSPEC_VERSION"}


@pytest.fixture
def clean_env(monkeypatch):
    for name in NAMES + ["XDG_CACHE_HOME"]:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux default path")
def test_cache_defaults_are_todays_paths_on_linux(clean_env, tmp_path):
    clean_env.setenv("HOME", str(tmp_path))
    assert cache_root() == tmp_path / ".cache" / "paperatlas"
    assert model_cache_dir() == tmp_path / ".cache" / "paperatlas" / "models"
    clean_env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "paperatlas"
    assert model_cache_dir() == tmp_path / "xdg" / "paperatlas" / "models"


def test_variables_override_the_defaults_when_set_after_import(clean_env, tmp_path):
    clean_env.setenv("PAPERATLAS_CACHE", str(tmp_path / "c"))
    clean_env.setenv("PAPERATLAS_MODEL_CACHE", str(tmp_path / "m"))
    assert cache_root() == tmp_path / "c" and model_cache_dir() == tmp_path / "m"
    assert cache_file("minilm@fp32") == tmp_path / "c" / "eval-embeddings" / "minilm@fp32.npz"
    for off in ("off", "0", "no", "FALSE"):
        clean_env.setenv("PAPERATLAS_EVAL_CACHE", off)
        assert cache_file("minilm@fp32") is None
    clean_env.setenv("PAPERATLAS_EVAL_CACHE", "on")
    assert cache_file("minilm@fp32") is not None


def test_switches_and_values(clean_env):
    assert not offline() and settings.precision == "auto" and settings.db is None and settings.token is None
    clean_env.setenv("PAPERATLAS_OFFLINE", "0")
    assert not offline()
    clean_env.setenv("PAPERATLAS_OFFLINE", "1")
    assert offline()
    clean_env.setenv("PAPERATLAS_PRECISION", "fp32")
    clean_env.setenv("PAPERATLAS_DB", "notes.db")
    clean_env.setenv("PAPERATLAS_ACL_DATA", "/data/acl")
    assert settings.precision == "fp32" and settings.db == Path("notes.db") and settings.acl_data == "/data/acl"


def test_the_cli_finds_the_atlas_from_paperatlas_db(clean_env, tmp_path):
    from click.testing import CliRunner

    from paperatlas.cli import main

    clean_env.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    clean_env.setenv("PAPERATLAS_DB", "sub")
    res = CliRunner().invoke(main, ["topics"])
    assert res.exit_code != 0 and "sub" in res.output and "director" in res.output  # refused: a directory


def test_only_settings_reads_the_environment_and_every_variable_is_documented():
    named: set[str] = set()
    for path in SRC.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        named |= set(re.findall(r"(?<=[\"'$])PAPERATLAS_[A-Z_]+[A-Z]", text))
        if path.name != "settings.py":
            reads = re.findall(r"(?:environ\.get\(|environ\[|getenv\()\s*[\"']PAPERATLAS_", text)
            assert not reads, f"{path}: reads PAPERATLAS_* itself; ask paperatlas.settings"
    assert named - NOT_ENV <= set(NAMES), sorted(named - NOT_ENV - set(NAMES))
    table = markdown_table()
    assert all(f"`{n}`" in table for n in NAMES)
    assert table in README.read_text(encoding="utf-8"), "README's table is stale: run cog -r README.md"
