"""The plugin door (paperatlas.plugins): an installed plugin package adds a reader, a format and a command.

tests/plugin_example is a real package (pyproject.toml with ``[project.entry-points.paperatlas]``); the test installs
it into the running venv (editable, offline), uses all three from the command line in a subprocess, and uninstalls it.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from paperatlas import engines, plugins, publish, sources
from paperatlas.llm import backends

EXAMPLE = Path(__file__).resolve().parent / "plugin_example"
LISTING = EXAMPLE / "iclr2021.papers.txt"
BIN = Path(sys.executable).parent / "paperatlas"


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "-q", *args], check=True, capture_output=True, timeout=300)


@pytest.fixture
def installed():
    """The example plugin installed (editable) for the duration of one test; uninstalled after."""
    _pip("install", "--no-deps", "--no-build-isolation", "--no-index", "-e", str(EXAMPLE))
    try:
        yield
    finally:
        _pip("uninstall", "-y", "paperatlas-plugin-example")


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN), *args], cwd=cwd, capture_output=True, text=True, timeout=900)


def test_plugin_reader_format_and_command_from_the_cli(installed, tmp_path):
    # the new command
    hello = _run("hello-plugin", cwd=tmp_path)
    assert hello.returncode == 0, hello.stderr
    assert hello.stdout.strip() == "hello from paperatlas-plugin-example: reader papers-txt, format titles-txt"
    # the new reader and format are offered by --help
    assert "papers-txt" in _run("build", "--help", cwd=tmp_path).stdout
    publish_help = " ".join(_run("publish", "--help", cwd=tmp_path).stdout.split())
    assert "titles-txt: one title a line, with its topic" in publish_help
    # an atlas built from a .papers.txt file: the format detected from the content, no --format
    build = _run("build", str(LISTING), "--db", "a.db", "--venue", "ICLR 2021", cwd=tmp_path)
    assert build.returncode == 0, build.stderr[-2000:]
    assert "a.db: 30 papers (30 records read)" in build.stdout + build.stderr
    show = _run("search", "Net-DNF tabular data", "--db", "a.db", cwd=tmp_path)
    assert "Net-DNF: Effective Deep Modeling of Tabular Data" in show.stdout
    # published in the plugin's format: every title once, each with its topic's label
    pub = _run("publish", "--db", "a.db", "--format", "titles-txt", "-o", "titles.txt", "--title", "ICLR 2021",
               cwd=tmp_path)
    assert pub.returncode == 0, pub.stderr
    lines = (tmp_path / "titles.txt").read_text().splitlines()
    assert lines[0] == "# ICLR 2021"
    titles = [line.split("] ", 1)[1] for line in lines[1:]]
    expected = [line.split(" | ")[0] for line in LISTING.read_text().splitlines() if not line.startswith("#")]
    assert sorted(titles) == sorted(expected)
    assert all(line.startswith("[") and not line.startswith("[-]") for line in lines[1:])  # every paper has a topic


def test_builtins_register_through_the_same_door():
    impls = {name for name, _ in plugins.manager().list_name_plugin()}
    assert {"paperatlas.sources", "paperatlas.publish", "paperatlas.llm", "paperatlas.engines"} <= impls
    assert [r.name for r in plugins.collect("paperatlas_readers", builtin=True)] == list(sources.READERS)[:12]
    assert [f.name for f in plugins.collect("paperatlas_formats", builtin=True)][:3] == ["awesome-md", "highlights-md",
                                                                                        "highlights-html"]
    assert set(backends.BACKENDS) >= {"openai", "smollm2"}
    assert engines.ENGINES[:2] == ("local", "ray") and isinstance(engines.get_engine("local"), plugins.EngineBase)
    assert publish.REGISTRY["json"].export and publish.EXPORT_FORMATS[0] == "json"


class _Plugin:
    """A plugin object as an entry point would give it, with the hook-spec version it claims."""

    def __init__(self, version):
        if version is not None:
            self.PAPERATLAS_HOOKSPEC_VERSION = version

    @plugins.hookimpl
    def paperatlas_formats(self):
        return [plugins.Format("shout-txt", "titles in capitals",
                               render=lambda papers, _topics, _related, _title: "\n".join(p.title for p in papers))]


@pytest.mark.parametrize("version", [plugins.HOOKSPEC_VERSION + 1, None])
def test_a_plugin_for_another_hookspec_version_is_refused_with_one_line(version):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert plugins.register_plugin(_Plugin(version), "shouty") is False
    (w,) = caught
    assert issubclass(w.category, plugins.PluginWarning)
    assert str(w.message) == (f"paperatlas plugin 'shouty' refused: it targets hook-spec version {version}, this "
                              f"paperatlas has version {plugins.HOOKSPEC_VERSION}")
    assert "\n" not in str(w.message)
    assert plugins.manager().get_plugin("shouty") is None
    assert "shout-txt" not in [f.name for f in plugins.collect("paperatlas_formats")]
    assert "json" in publish.REGISTRY  # the rest works


def test_a_plugin_may_not_replace_a_builtin_name():
    class Clash:
        PAPERATLAS_HOOKSPEC_VERSION = plugins.HOOKSPEC_VERSION

        @plugins.hookimpl
        def paperatlas_formats(self):
            return [plugins.Format("json", "not the real json", render=lambda *a: "{}")]

    assert plugins.register_plugin(Clash(), "clash")
    try:
        with pytest.warns(plugins.PluginWarning, match="plugin 'clash': format 'json' refused: the name is taken"):
            formats = plugins.collect("paperatlas_formats")
        assert [f.description for f in formats if f.name == "json"] == [publish.REGISTRY["json"].description]
    finally:
        plugins.manager().unregister(name="clash")
