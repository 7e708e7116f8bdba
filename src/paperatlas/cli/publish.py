"""``paperatlas publish``: the atlas, or one reading list, as a file or a static site."""

from __future__ import annotations

from pathlib import Path

import click

from ..publish import REGISTRY
from ._common import choice_help, db_option, open_atlas


@click.command(name="publish")
@db_option
@click.option("--format", "fmt", required=True, type=click.Choice(list(REGISTRY)),
              help=choice_help("Output format.", ((f.name, f.description) for f in REGISTRY.values())))
@click.option("-o", "--output", required=True, type=click.Path(), help="Output file (a folder for --format site).")
@click.option("--title", default="", help="Title of the published list or map.")
@click.option("--list", "list_name", default=None, metavar="NAME",
              help="Publish only this reading list (with your notes); '*' = every paper you marked. "
                   "highlights-md defaults to your liked papers.")
@click.option("--topic", default=None, metavar="TOPIC",
              help="--format atom: only this topic's papers (an id or part of its label; an area includes its "
                   "sub-topics).")
@click.option("--query", default=None, metavar="TEXT", help="--format atom: only the papers this search finds.")
def publish_command(db, fmt, output, title, list_name, topic, query):
    """Publish the atlas (or one reading list) as a file or a static site.

    An awesome list, a highlights post or the topic pages (Markdown), JSON, CSV, BibTeX, CSL-JSON, a
    self-contained interactive map (HTML), a static website folder, your what's-new digest of the last build, or an
    Atom feed of what the last builds added.

    Publishing never replaces what it did not write: a folder output goes to a new or empty folder, or to an earlier
    output of the same format (its marker file lists what it wrote); a file output never goes over a folder, the
    atlas or another SQLite database.
    """
    from ..publish import OutputRefused, check_output

    if fmt != "atom" and (topic is not None or query is not None):
        raise click.UsageError("--topic and --query go with --format atom")
    atlas = open_atlas(db)
    try:
        check_output(fmt, output, atlas.path)  # before any work: never replace the atlas or what publish did not write
        if fmt == "atom":
            from ..feed import render as atom_feed
            from ..publish import write_text_atomic

            try:
                text = atom_feed(atlas, title, topic=topic, query=query)
            except ValueError as e:
                raise click.ClickException(str(e)) from e
            n = text.count("<entry>")
            out, extra = write_text_atomic(output, text), f"{n} entries, atom"
        else:
            out, extra = _publish(atlas, fmt, output, title, list_name)
    except OutputRefused as e:
        raise click.ClickException(str(e)) from e
    except OSError as e:
        raise click.ClickException(f"{e.filename or output}: {e.strerror or e}") from e
    click.echo(f"wrote {out} ({extra})")


def _publish(atlas, fmt: str, output: str, title: str, list_name: str | None) -> tuple[Path, str]:
    """Publish ``atlas`` (or one reading list of it) as ``fmt`` at ``output``; return the path and a summary."""
    from .. import readinglist as rl
    from ..publish import USES_RELATED
    from ..publish import publish as run_publish
    from ..search import related as run_related

    if REGISTRY[fmt].from_atlas is not None:  # made from the atlas's history and the reader's data
        from ..publish import write_text_atomic

        return write_text_atomic(output, REGISTRY[fmt].from_atlas(atlas, title)), fmt
    papers = atlas.papers
    if list_name is not None or fmt.startswith("highlights"):
        entries = rl.entries(atlas.con, None if list_name in (None, "*") else list_name)
        if list_name is None:  # a highlights post of the papers you liked
            entries = [e for e in entries if e.rating > 0]
        notes = {e.paper_id: e.note for e in entries}
        papers = [p for p in atlas.papers if p.id in notes]
        if not papers:
            what = f"list {list_name!r}" if list_name not in (None, "*") else "your reading list"
            raise click.ClickException(f"{what} has no papers of this atlas (see `paperatlas list show`)")
        for p in papers:
            if notes[p.id]:
                p.extra["note"] = notes[p.id]
    rel = {p.id: [r.paper.id for r in run_related(atlas, p, k=5)] for p in papers} if fmt in USES_RELATED else {}
    # a list's document names only its own papers (its overviews' other citations stay plain [n]), so that
    # `list import` of the published post gives back the same list
    out = run_publish(fmt, papers, list(atlas.topics.values()), rel, output, title=title)
    extra = ""
    if fmt == "site":
        from ..publish.site import first_load_bytes

        extra = f"; the first page loads {first_load_bytes(out) / 1e6:.2f} MB, open {Path(out) / 'index.html'}"
    return out, f"{len(papers)} papers, {fmt}{extra}"
