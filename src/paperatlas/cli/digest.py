"""``paperatlas new``: what the last build added, ranked for the reader (:mod:`paperatlas.whatsnew`)."""

from __future__ import annotations

import click

from ._common import db_option, open_atlas, status_tag


@click.command(name="new")
@db_option
@click.option("--build", "build_id", type=int, default=None, metavar="N",
              help="The build whose new papers to list (default: the last build that added papers).")
@click.option("--limit", default=30, show_default=True, help="Most papers listed (0 = all).")
@click.option("--builds", "list_builds", is_flag=True, help="List the recorded builds instead.")
def new_command(db, build_id, limit, list_builds):
    """What's new for you: the papers the last build added, ranked for your likes, grouped by topic.

    Also the topics that grew or appeared with them and the new papers by authors of papers you liked. Without
    likes a few papers come from each topic (the topics that grew, then those with the most new papers, first).
    `publish --format new-md|new-html` writes the same digest.
    """
    from ..whatsnew import new_builds, whats_new

    atlas = open_atlas(db)
    if list_builds:
        from ..store.history import builds

        recorded = builds(atlas.con)
        if not recorded:
            click.echo("no builds recorded yet: the next `paperatlas build` of this atlas starts the history")
        for b in recorded:
            when = b.finished_at.replace("T", " ") or "before builds were recorded"
            click.echo(f"{b.id:>3}  {when:<26} {b.n_new:>6} new  {b.n_papers:>7} papers  {', '.join(b.listings)}")
        return
    try:
        digest = whats_new(atlas, build=build_id, limit=limit or None)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    if digest.build is None:
        hint = "" if new_builds(atlas) else " (the history starts with this atlas's next build)"
        click.echo(f"no build of this atlas has added papers yet{hint}")
        return
    b = digest.build
    when = f" ({b.finished_at.replace('T', ' ')})" if b.finished_at else ""
    ranked = f"ranked for your {digest.n_liked} liked papers" if digest.n_liked else \
        "by topic (like papers to have them ranked for you)"
    click.echo(click.style(f"Build {b.id}{when}: {digest.n_new} new papers of {b.n_papers}, {ranked}", bold=True))
    if digest.everything_new:
        click.echo(digest.everything_new_note)
    if digest.shown_note:
        click.echo(f"Listed: {digest.shown_note}.")
    if digest.grown:
        click.echo("\nTopics that grew:")
        click.echo(f"  ({digest.growth_note})")
        for g in digest.grown[:8]:
            how = "new topic" if g.appeared else f"+{g.n_new / g.n_before:.0%}"
            click.echo(f"  {atlas.topic_label(g.topic.id)}: {g.n_new} new ({how}, {g.excess:+.0f} beyond its share, "
                       f"p = {g.p_value:.2g})")
    for topic, members in digest.groups:
        label = atlas.topic_label(topic.id) if topic is not None else "No topic"
        click.echo("\n" + click.style(label, bold=True))
        for n in members:
            click.echo(f"{n.rank:>4}. {n.paper.title}{status_tag(n.paper)}  ({n.paper.id})")
            click.echo(f"      {n.reason}")
    if digest.by_liked_authors:
        click.echo("\nBy authors you liked:")
        for name, papers in digest.by_liked_authors[:10]:
            click.echo(f"  {name}: " + "; ".join(p.title for p in papers[:3])
                       + (f" (+{len(papers) - 3})" if len(papers) > 3 else ""))
    if len(digest.papers) < digest.n_new:
        click.echo(f"\n... {digest.n_new - len(digest.papers)} more (--limit 0 lists all)")
