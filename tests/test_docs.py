"""The registries drive the command line and the docs (in the pattern of Datasette's tests/test_docs.py): every
reader, output format and generative backend is a choice of its option, described in its ``--help`` and in the
README; README.md's tables and docs/cli.md are what cog generates now; every command function is named
``*_command`` (groups ``*_group``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from cogapp import Cog

from paperatlas.cli import main
from paperatlas.cli._docs import command_paths
from paperatlas.llm.backends import BACKENDS
from paperatlas.publish import ATLAS_FORMATS, DIRECTORY_FORMATS, EXPORT_FORMATS, FORMATS, REGISTRY
from paperatlas.sources import READERS, describe

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GENERATED = ["README.md", "docs/cli.md"]


def help_of(*path: str) -> str:
    """``paperatlas PATH --help``, wide and with whitespace collapsed, so descriptions are found whole."""
    res = CliRunner().invoke(main, [*path, "--help"], terminal_width=1000, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return " ".join(res.output.split())


def choices(command: str, option: str) -> list[str]:
    """The choices of ``paperatlas COMMAND OPTION``."""
    param = next(p for p in main.commands[command].params if option in p.opts)
    assert isinstance(param.type, click.Choice), f"{command} {option} is not a click.Choice"
    return list(param.type.choices)


def collapse(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------------------ registries -> choices and help


def test_option_choices_are_the_registries():
    assert choices("build", "--format") == list(READERS)
    assert choices("build", "--tldr-backend") == ["extractive", *BACKENDS]
    assert choices("build", "--label-backend") == ["extractive", *BACKENDS]
    assert sorted(choices("publish", "--format")) == sorted([*FORMATS, *DIRECTORY_FORMATS, *ATLAS_FORMATS])
    assert choices("publish", "--format") == list(REGISTRY)
    assert sorted(choices("search", "--export")) == sorted(EXPORT_FORMATS)
    assert set(EXPORT_FORMATS) <= set(FORMATS)  # an export is one text file


@pytest.mark.parametrize("name", list(READERS))
def test_every_reader_is_in_build_help_and_readme(name):
    assert name in help_of("build")
    assert collapse(describe(name)) in help_of("build")
    assert f"| `{name}` |" in README


@pytest.mark.parametrize("name", [*FORMATS, *DIRECTORY_FORMATS, *ATLAS_FORMATS])
def test_every_publish_format_is_in_publish_help_and_readme(name):
    text = help_of("publish")
    assert f"{name}: {collapse(REGISTRY[name].description)}" in text
    assert f"| `{name}` |" in README


@pytest.mark.parametrize("name", list(EXPORT_FORMATS))
def test_every_export_format_is_in_search_help(name):
    assert f"{name}: {collapse(REGISTRY[name].description)}" in help_of("search")


@pytest.mark.parametrize("name", list(BACKENDS))
def test_every_backend_is_in_build_help_and_readme(name):
    text = help_of("build")
    description = collapse(BACKENDS[name][1])
    assert text.count(f"{name}: {description}") == 2  # --tldr-backend and --label-backend
    assert f"| `{name}` |" in README


def test_a_new_reader_or_backend_needs_only_its_registry_entry():
    # A fresh interpreter: the CLI's options are made when it is imported.
    code = """
import types
from click.testing import CliRunner
import paperatlas.sources as sources
import paperatlas.llm.backends as backends
sources.READERS["zz-reader"] = types.ModuleType("zz", "Reader for zz listings, one per line.")
backends.BACKENDS["zz-backend"] = (lambda url, model: None, "a backend made up by the test")
from paperatlas.cli import main
out = CliRunner().invoke(main, ["build", "--help"], terminal_width=1000).output
print(" ".join(out.split()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "zz-reader: Zz listings, one per line." in out
    assert out.count("zz-backend: a backend made up by the test") == 2


# ------------------------------------------------------------------------------------------- cog: docs are current


def cog_check(*paths: Path | str) -> int:
    return Cog().main(["cog", "--check", *map(str, paths)])


def test_generated_docs_are_current(capsys):
    status = cog_check(*(ROOT / p for p in GENERATED))
    assert status == 0, f"stale docs: run `cog -r {' '.join(GENERATED)}`\n{capsys.readouterr().out}"


@pytest.mark.parametrize(("doc", "line"), [("README.md", "| `csv` |"), ("docs/cli.md", "Usage: paperatlas publish")])
def test_cog_check_fails_on_stale_docs(tmp_path, capsys, doc, line):
    copy = tmp_path / Path(doc).name
    shutil.copy(ROOT / doc, copy)
    assert cog_check(copy) == 0
    text = copy.read_text(encoding="utf-8")
    assert line in text
    copy.write_text(text.replace(line, line + " (edited by hand)", 1), encoding="utf-8")
    assert cog_check(copy) != 0
    assert "changed" in capsys.readouterr().out.lower()


def test_cli_reference_covers_every_command():
    text = (ROOT / "docs/cli.md").read_text(encoding="utf-8")
    for path in command_paths():
        command = " ".join(("paperatlas", *path))
        assert f"\n## {command}\n" in text and f"$ {command} --help\n" in text, command
    assert ("list", "mark-read") in set(command_paths()) and ("eval", "tldr") in set(command_paths())


# ------------------------------------------------------------------------------------------- naming of commands


def walk(group: click.Group):
    for cmd in group.commands.values():
        yield cmd
        if isinstance(cmd, click.Group):
            yield from walk(cmd)


@pytest.mark.parametrize("cmd", list(walk(main)), ids=lambda c: c.name)
def test_command_functions_are_named_command_or_group(cmd):
    suffix = "_group" if isinstance(cmd, click.Group) else "_command"
    assert cmd.callback.__name__.endswith(suffix), f"{cmd.name}: function {cmd.callback.__name__}"
