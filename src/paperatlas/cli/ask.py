"""The ``ask`` command: a short cited answer to a question, copied sentence by sentence from the atlas's papers."""

from __future__ import annotations

import textwrap

import click

from ._common import db_option, filter_options, open_atlas, parse_filters, status_tag


@click.command(name="ask")
@click.argument("question")
@db_option
@filter_options
@click.option("--json", "as_json", is_flag=True, help="Print the answer as one JSON object.")
@click.option("--no-meaning", is_flag=True,
              help="Do not load the embedding model: rank papers and sentences by the question's words only.")
def ask_command(question, db, as_json, no_meaning, **filter_args):
    """Answer QUESTION in 2-5 sentences copied from the atlas's papers, each followed by its paper's [n].

    The sentences come from the TL;DRs and abstracts of the papers a search for QUESTION ranks first, chosen for
    the question's words and meaning without repeating one another, and are followed by the cited papers. When no
    paper addresses the question, it says so and names the nearest topics instead. The same filters as `search`
    narrow the papers read.

    \b
    Examples:
      paperatlas ask "how do transformers handle images"
      paperatlas ask "what causes double descent" --status Oral,Spotlight
      paperatlas ask "what is a lottery ticket" --json
    """
    import json

    from ..ask import ask, check_question

    try:
        q = check_question(question)
    except ValueError as e:
        raise click.UsageError(str(e)) from e
    if not q:
        raise click.UsageError("QUESTION is empty")
    atlas = open_atlas(db)
    encode = None
    if not no_meaning and atlas.vectors.size:
        from ..enrich.query_embed import query_embedder

        encode = query_embedder().encode
    ans = ask(atlas, q, filters=parse_filters(**filter_args), encode=encode)
    if as_json:
        click.echo(json.dumps(ans.to_json(), ensure_ascii=False))
        return
    if ans.miss:
        click.echo(ans.message)
        if ans.nearest_topics:
            click.echo("Nearest topics: " + "; ".join(f"{t.label} (#{t.id}, {t.size} papers)"
                                                       for t in ans.nearest_topics))
        return
    click.echo(textwrap.fill(ans.paragraph(), 100))
    click.echo()
    by_id = atlas.by_id
    for c in ans.papers:
        p = by_id[c.id]
        authors = ", ".join(c.authors[:4]) + (" et al." if len(c.authors) > 4 else "")
        click.echo(f"[{c.cite}] {click.style(c.title, bold=True)}{status_tag(p)}  ({c.id})")
        click.echo(f"    {authors}" + (f" · {c.url}" if c.url else ""))
