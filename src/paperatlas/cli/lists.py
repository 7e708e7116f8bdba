"""``paperatlas list ...``: the reader's reading list on the command line (see :mod:`paperatlas.readinglist`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .. import readinglist as rl
from ..store import AtlasNotFound
from ._common import db_option, find_or_fail, open_atlas, resolve_db


def _paper_id(db, paper: str) -> tuple[Path, str, str]:
    """``(atlas path, paper id, title)`` of PAPER (an id or a title, as ``show`` takes it)."""
    atlas = open_atlas(db)
    try:
        p = find_or_fail(atlas, paper)
    finally:
        atlas.close()
    return atlas.path, p.id, p.title


def _short(text: str, n: int = 140) -> str:
    return text if len(text) <= n else text[:n - 1].rstrip() + "…"


def _run(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except (LookupError, ValueError, AtlasNotFound) as e:
        raise click.ClickException(str(e)) from e


@click.group(name="list")
def list_group() -> None:
    """Your reading list: like/dislike papers, put them on named lists, write notes, mark them read.

    It lives in the atlas file, survives every rebuild (also when a paper's title is corrected) and moves to
    another atlas with `list export` / `list import`.

    \b
    paperatlas list add "Sharpness-Aware Minimization"           # on the default list "reading"
    paperatlas list like "Sharpness-Aware Minimization"
    paperatlas list note "Sharpness-Aware Minimization" "have to check on this in the paper"
    paperatlas list mark-read "Sharpness-Aware Minimization"
    paperatlas list show
    """


@list_group.command(name="add")
@click.argument("paper")
@click.option("--list", "list_name", default=rl.DEFAULT_LIST, show_default=True, help="Name of the list.")
@db_option
def add_command(paper, list_name, db):
    """Put PAPER (id or title) on a list."""
    path, pid, title = _paper_id(db, paper)
    new = _run(rl.add, path, pid, list_name)
    click.echo(f"{'added to' if new else 'already on'} {list_name!r}: {title}")


@list_group.command(name="remove")
@click.argument("paper")
@click.option("--list", "list_name", default=rl.DEFAULT_LIST, show_default=True, help="Name of the list.")
@click.option("--all", "all_lists", is_flag=True, help="Remove it from every list.")
@db_option
def remove_command(paper, list_name, all_lists, db):
    """Take PAPER off a list (its note, rating and read mark stay)."""
    path, pid, title = _paper_id(db, paper)
    n = _run(rl.remove, path, pid, None if all_lists else list_name)
    click.echo(f"removed from {n} list{'s' if n != 1 else ''}: {title}")


def _rating_command(name: str, rating: int, done: str, doc: str) -> None:
    """Register ``list NAME PAPER``, which sets PAPER's rating to ``rating`` and says ``done: <title>``.

    The command function is named ``<name>_command`` like every other one.
    """

    def command(paper, db):
        path, pid, title = _paper_id(db, paper)
        _run(rl.rate, path, pid, rating)
        click.echo(f"{done}: {title}")

    command.__doc__ = doc
    command.__name__ = command.__qualname__ = f"{name.replace('-', '_')}_command"
    list_group.command(name=name)(click.argument("paper")(db_option(command)))


_rating_command("like", 1, "liked", "Like PAPER (recommendations start from the papers you like).")
_rating_command("dislike", -1, "disliked", "Dislike PAPER (recommendations move away from it).")
_rating_command("unrate", 0, "rating cleared", "Clear your like or dislike of PAPER.")


@list_group.command(name="note")
@click.argument("paper")
@click.argument("text", required=False)
@click.option("--append", is_flag=True, help="Add a paragraph to the note instead of replacing it.")
@click.option("--edit", "use_editor", is_flag=True, help="Write the note in $EDITOR.")
@db_option
def note_command(paper, text, append, use_editor, db):
    """Write your Markdown note on PAPER (TEXT, or $EDITOR with --edit; an empty TEXT clears it)."""
    path, pid, title = _paper_id(db, paper)
    if use_editor:
        old = next((e.note for e in rl.entries(path) if e.paper_id == pid), "")
        text = click.edit(old, extension=".md")
        if text is None:
            raise click.ClickException("note not changed (editor closed without saving)")
    if text is None:
        raise click.UsageError("give the note TEXT or --edit")
    stored = _run(rl.set_note, path, pid, text, append=append)
    click.echo(f"note on {title}:\n{stored}" if stored else f"note cleared: {title}")


@list_group.command(name="mark-read")
@click.argument("paper")
@click.option("--unread", is_flag=True, help="Mark it unread again.")
@db_option
def mark_read_command(paper, unread, db):
    """Mark PAPER read (or --unread)."""
    path, pid, title = _paper_id(db, paper)
    _run(rl.mark_read, path, pid, not unread)
    click.echo(f"marked {'unread' if unread else 'read'}: {title}")


@list_group.command(name="show")
@click.option("--list", "list_name", default=None, help="Only this list (default: everything you marked).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@db_option
def show_command(list_name, as_json, db):
    """Show your reading list: lists, likes, read marks and notes."""
    atlas = open_atlas(db)
    es = rl.entries(atlas.con, list_name)
    if as_json:
        click.echo(json.dumps([vars(e) for e in es], ensure_ascii=False, indent=2))
        return
    names = rl.list_names(atlas.con)
    click.echo(f"{len(es)} papers" + (f" on {list_name!r}" if list_name else "")
               + (f" · lists: {', '.join(f'{k} ({v})' for k, v in names.items())}" if names else ""))
    for e in es:
        p = atlas.by_id.get(e.paper_id)
        mark = {1: "♥ ", -1: "✗ "}.get(e.rating, "") + ("✓ " if e.read_at else "")
        title = p.title if p else f"{e.title} (not in this atlas)"
        click.echo(f"{mark}{click.style(title, bold=True)}" + (f"  [{', '.join(e.lists)}]" if e.lists else ""))
        if p is not None:
            click.echo(f"    {p.status or ''}{' · ' if p.status else ''}{atlas.topic_label(p.topic_id)} · {p.id}")
        if e.note:
            for line in e.note.splitlines():
                click.echo(f"    > {line}")


@list_group.command(name="export")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="JSON file to write.")
@db_option
def export_command(output, db):
    """Write everything you marked, noted and edited to a JSON file (for another atlas: `list import`)."""
    from ..publish import write_text_atomic

    data = _run(rl.export_json, resolve_db(db))
    out = write_text_atomic(output, json.dumps(data, ensure_ascii=False, indent=2))
    click.echo(f"wrote {out}: {len(data['entries'])} papers, {len(data['overrides'])} overrides")


@list_group.command(name="import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--list", "list_name", default=None, metavar="NAME",
              help="Put the papers on list NAME (then `publish --list NAME`) instead of liking them.")
@click.option("--strict", is_flag=True,
              help="Stop at the first malformed record, or (an export) the first entry over a limit, adding nothing "
                   "(default: report it as FILE:LINE or FILE: entries[I], skip it).")
@click.option("-q", "--quiet", is_flag=True, help="Do not list the papers found (only the summary and problems).")
@click.option("-v", "--verbose", is_flag=True, hidden=True)  # the found papers are listed by default now
@db_option
def import_command(file, list_name, strict, quiet, verbose, db):
    """Import papers you already have: a bibliography, a list of links, a post, or a `list export`.

    \b
    FILE is one of:
      a Zotero/Mendeley export (.bib, CSL-JSON, .ris, .csv) or any listing paperatlas reads;
      a list of arXiv, OpenReview or DOI links;
      any Markdown or text post that names papers (titles may have small typos);
      a `list export` JSON (marks, lists, notes and edits are merged; an entry over a limit, e.g. a note over
      100 kB, is skipped and named).
    Each paper found in the atlas (by DOI, arXiv or OpenReview id or link, else by title, authors breaking ties)
    is liked, or put on --list NAME, all at once. It prints what was found and how, what was ambiguous (several
    papers fit, or the title's paper has other authors: not added) and what is not in the atlas.
    """
    from ..limits import LimitExceeded, loads_json
    from ..model import SourceError

    text = Path(file).read_text(encoding="utf-8", errors="replace").lstrip("\ufeff")
    if text.lstrip().startswith("{") and ('"paperatlas_reading_list"' in text[:2000] or '"entries"' in text[:2000]):
        try:
            data = loads_json(text, source=file)
        except LimitExceeded as e:
            raise click.ClickException(f"{e} (nothing imported)") from e
        except ValueError as e:
            raise click.ClickException(f"{file}: cannot read JSON: {e}") from e
        rep = _run(rl.import_json, resolve_db(db), data, source=file, strict=strict)
        for msg in rep.skipped:
            click.echo(f"skipped: {msg}", err=True)
        n = len(rep.skipped)
        click.echo(f"imported {rep.entries} papers and {rep.overrides} overrides from {file}"
                   + (f", {n} entr{'ies' if n > 1 else 'y'} over a limit skipped (listed above; --strict refuses "
                      "the file)" if n else ""))
        for t in rep.not_found:
            click.echo(f"  not in this atlas (kept, linked if it appears later): {t}")
        return
    try:
        rep = rl.import_references(resolve_db(db), file, list_name, strict=strict)
    except SourceError as e:  # (a ValueError too)
        raise click.ClickException(f"{e} (nothing imported)") from e
    except (LookupError, ValueError, AtlasNotFound) as e:
        raise click.ClickException(str(e)) from e
    for msg in rep.skipped:
        click.echo(f"skipped: {msg}", err=True)
    what = f"put on {list_name!r}" if list_name else "liked"
    click.echo(f"{file}: {len(rep.matched)} papers found in the atlas ({rep.changed} newly {what}), "
               f"{len(rep.ambiguous)} ambiguous (not added), {len(rep.missing)} not in the atlas"
               + (f", {len(rep.skipped)} malformed record{'s' if len(rep.skipped) > 1 else ''} skipped (--strict makes "
                  "them fatal)" if rep.skipped else ""))
    if not quiet:
        for where, _pid, title, how in rep.matched:
            click.echo(f"  found: {title}  (by {how}; {where})")
    for where, label, cands, why in rep.ambiguous:
        click.echo(f"  ambiguous{f' ({why})' if why else ''}: {_short(label)}  ({where}) could be: "
                   + " | ".join(f"{t} ({pid})" for pid, t, _ in cands))
    for where, label in rep.missing:
        click.echo(f"  not in the atlas: {_short(label)}  ({where})")
