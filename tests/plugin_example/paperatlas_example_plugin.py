"""An example paperatlas plugin: a reader, a publish format and a command, through the hooks of paperatlas.plugins.

* reader ``papers-txt``: a ``.papers.txt`` file, one paper a line: ``Title | Authors | Abstract`` (authors separated
  by commas; lines starting with ``#`` are comments);
* publish format ``titles-txt``: one title a line, by topic;
* command ``paperatlas hello-plugin``: says which plugin answered and what it adds.
"""

from __future__ import annotations

import click

from paperatlas.model import Paper, SourceError, SourceRef
from paperatlas.plugins import Format, Reader, hookimpl

#: The hook-spec version this plugin targets (paperatlas refuses a plugin whose version is not its own).
PAPERATLAS_HOOKSPEC_VERSION = 1


def _lines(text: str):
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield number, line


def sniff(head: str) -> bool:
    """Whether a file's start is a papers.txt listing: its first paper line has three ``|``-separated fields."""
    for _number, line in _lines(head):
        return len(line.split(" | ")) == 3
    return False


def read_text(text: str, path: str, strict: bool = False, **hints) -> list[Paper]:
    """The papers of a papers.txt listing, in file order; a line without three fields is skipped (raised if strict).

    Raises:
        paperatlas.model.SourceError: (only when ``strict``) a line without three ``|``-separated fields.
    """
    papers = []
    for number, line in _lines(text):
        fields = [f.strip() for f in line.split(" | ")]
        if len(fields) != 3 or not fields[0]:
            if strict:
                raise SourceError(path, number, "expected 'Title | Authors | Abstract'")
            continue
        title, authors, abstract = fields
        papers.append(Paper(title=title, authors=[a.strip() for a in authors.split(",") if a.strip()],
                            abstract=abstract, venue=hints.get("venue") or "", year=hints.get("year"),
                            sources=[SourceRef("papers-txt", path, line=number)]))
    return papers


def titles_txt(papers, topics, related, title):
    """One line per paper, ``[topic label] title``, grouped by topic (the papers without one last)."""
    labels = {t.id: t.label for t in topics}
    rows = sorted(papers, key=lambda p: (p.topic_id is None, labels.get(p.topic_id, ""), p.title))
    head = [f"# {title}"] if title else []
    return "\n".join(head + [f"[{labels.get(p.topic_id, '-')}] {p.title}" for p in rows]) + "\n"


@click.command("hello-plugin")
def hello_plugin() -> None:
    """Say hello from the example plugin (it also adds the papers-txt reader and the titles-txt format)."""
    click.echo("hello from paperatlas-plugin-example: reader papers-txt, format titles-txt")


@hookimpl
def paperatlas_readers():
    return [Reader("papers-txt", "Reader for .papers.txt files: one paper a line, `Title | Authors | Abstract`.",
                   sniff=sniff, read_text=read_text, example="paperatlas build my.papers.txt",
                   fields="title, authors, abstract")]


@hookimpl
def paperatlas_formats():
    return [Format("titles-txt", "one title a line, with its topic", render=titles_txt)]


@hookimpl
def paperatlas_commands():
    return [hello_plugin]
