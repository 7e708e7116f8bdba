"""``paperatlas check``: list every damaged cell of an atlas."""

from __future__ import annotations

import click

from ._common import db_option, resolve_db


@click.command(name="check")
@db_option
def check_command(db):
    """List every damaged cell of an atlas: exit 0 when it is sound, 1 when anything is damaged.

    \b
    Every column of every table is read and checked as the commands read it
    (its type, finite numbers, JSON of its shape at most 32 levels deep,
    embeddings of the atlas's dimension), and so is the schema (no table or
    column its version has is missing). One line per damaged cell:
      papers.year of paper 'a1b2c3d4e5' (rowid 7): text 'soon', not an integer
    then what repairs it: a rebuild for what a build writes, deleting the
    row for what a rebuild keeps (your reading list, the build history).
    """
    from ..store import AtlasNotFound, MalformedAtlas
    from ..store.audit import audit

    path = resolve_db(db)
    try:
        found = audit(path)
    except (AtlasNotFound, MalformedAtlas) as e:
        raise click.ClickException(str(e)) from e
    if not found:
        click.echo(f"{path}: sound (every table, column and value checked)")
        return
    for d in found:
        where = f" (rowid {d.rowid})" if d.rowid is not None else ""
        click.echo(f"{d.cell}{where}: {' '.join(d.what.split())}")
    kept = [d for d in found if d.kept_by_rebuild]
    rebuild = [d for d in found if not d.kept_by_rebuild]
    advice = []
    if rebuild:
        advice.append(f"rebuild it with `paperatlas build LISTING --db {path}`")
    if kept:
        advice.append(f"delete the {len(kept)} row{'s' * (len(kept) > 1)} a rebuild keeps, e.g. "
                      f"{kept[0].remedy(path).split(': ', 1)[-1]}")
    click.echo(f"{path}: {len(found)} damaged cell{'s' * (len(found) > 1)}; {' and '.join(advice)}", err=True)
    raise SystemExit(1)
