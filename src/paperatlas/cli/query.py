"""The reading commands: ``search``, ``show``, ``related``, ``recommend``, ``topics`` and ``edit``."""

from __future__ import annotations

import textwrap

import click

from ..facets import SORT_KEYS, facets_of
from ..publish import EXPORT_FORMATS, REGISTRY
from ._common import (
    choice_help,
    db_option,
    embed_query_fn,
    filter_options,
    find_or_fail,
    open_atlas,
    parse_filters,
    status_tag,
)


def facet_tag(p) -> str:
    """Format a paper's review rating, citations and code for a result line; missing values are left out.

    Args:
        p: The paper.

    Returns:
        E.g. ``" · rating 6.5±0.9 (4) · 120 citations · code"``, or ``""``.
    """
    f = facets_of(p)
    parts = []
    if f.rating_mean is not None:
        spread = f"±{f.rating_spread:.1f}" if f.rating_spread is not None else ""
        parts.append(f"rating {f.rating_mean:.1f}{spread}" + (f" ({f.n_reviews})" if f.n_reviews else ""))
    if f.citations is not None:
        parts.append(f"{f.citations:,} citation{'s' if f.citations != 1 else ''}")
    if f.has_code:
        parts.append("code")
    return "".join(f" · {x}" for x in parts)


#: ``search --export`` choices: the publish formats that are file exports, alphabetically.
_EXPORTS = sorted(EXPORT_FORMATS)


@click.command(name="search")
@click.argument("query", default="")
@db_option
@filter_options
@click.option("-k", "--limit", default=10, show_default=True, help="Number of results.")
@click.option("--mode", type=click.Choice(["hybrid", "bm25", "semantic"]), default="hybrid", show_default=True,
              help="hybrid = papers with your words (BM25 + embedding cosine fused by reciprocal rank fusion), then "
              "papers close in meaning; bm25 = words only; semantic = meaning only.")
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON lines.")
@click.option("--export", "export_fmt", type=click.Choice(_EXPORTS), default=None,
              help=choice_help("Also write the results in this format (as `publish --format` does); needs -o.",
                               ((name, REGISTRY[name].description) for name in _EXPORTS)))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="File for --export.")
@click.option("--sort", type=click.Choice(SORT_KEYS), default="relevance", show_default=True,
              help="Order of the results: relevance, or mean review rating, citations or year (highest first; papers "
              "without the value last).")
def search_command(query, db, limit, mode, as_json, export_fmt, output, sort, **filter_args):
    """Find papers by words and by meaning (QUERY may be empty to list filtered papers).

    Papers that use every word of QUERY come first, then those using most of them, then papers close only in
    meaning (marked ~meaning). A query no paper is about says so instead of listing unrelated papers; a misspelt
    word is searched as the atlas word it most likely meant.

    \b
    Examples:
      paperatlas search "lottery ticket" --status Oral,Spotlight
      paperatlas search "" --sort citations --has-code -k 20
      paperatlas search "graph neural networks" --min-rating 7 --affiliation Google
      paperatlas search "" --decision "Accept (Oral)" --min-citations 100
    """
    import json

    from ..search import search_results

    if bool(export_fmt) != bool(output):
        raise click.UsageError("--export FORMAT and -o FILE go together")
    atlas = open_atlas(db)
    if export_fmt:
        from ..publish import check_output

        check_output(export_fmt, output, atlas.path)  # before the search: never over the atlas or another database
    flt = parse_filters(**filter_args)
    res = search_results(atlas, query, filters=flt, mode=mode, sort=sort,
                         embed_query=embed_query_fn() if mode != "bm25" and query.strip() else None)
    hits = res.hits[:limit]
    say = (lambda m: click.echo(m, err=True)) if as_json else click.echo
    if res.corrected:
        say(f"Showing results for “{res.corrected}” (no paper mentions “{query.strip()}”)")
    if res.message:
        say(res.message)
    elif not res.hits:
        say("no papers match")
    elif as_json:
        pass  # JSON lines stay machine-readable: counts are in the rows' ranks
    elif query.strip():
        more = f"; {res.n_meaning} more close in meaning" if res.n_meaning else ""
        say(f"{res.n_keyword} paper{'s' if res.n_keyword != 1 else ''} use{'s' if res.n_keyword == 1 else ''} "
            f"your words{more}" + (f" (showing {len(hits)}; -k for more)" if res.total > len(hits) else ""))
    else:  # an empty query (filters only): the count, whether or not every match is shown
        say(f"{res.total} paper{'s' if res.total != 1 else ''} match{'es' if res.total == 1 else ''}"
            + (f" (showing {len(hits)}; -k for more)" if res.total > len(hits) else ""))
    if export_fmt:
        from ..publish import publish as run_publish

        out = run_publish(export_fmt, [h.paper for h in hits], list(atlas.topics.values()), {}, output)
        click.echo(f"wrote {out} ({len(hits)} results, {export_fmt})", err=True)
    shown_meaning = False
    for i, h in enumerate(hits, 1):
        p = h.paper
        if as_json:
            f = facets_of(p)
            click.echo(json.dumps({"rank": i, "id": p.id, "title": p.title, "status": p.status, "score": h.score,
                                   "match": h.match, "bm25_rank": h.bm25_rank, "semantic_rank": h.semantic_rank,
                                   "rating_mean": f.rating_mean, "citations": f.citations, "has_code": f.has_code,
                                   "institutions": list(f.institutions)},
                                  ensure_ascii=False))
            continue
        if h.match == "meaning" and not shown_meaning and res.n_keyword:
            click.echo(click.style("— close in meaning, without your words:", dim=True))
        shown_meaning = shown_meaning or h.match == "meaning"
        mark = click.style(" ~meaning", fg="yellow") if h.match == "meaning" else ""
        click.echo(f"{i:>2}. {click.style(p.title, bold=True)}{status_tag(p)}{facet_tag(p)}{mark}  ({p.id})")
        click.echo(f"    {', '.join(p.authors[:4])}{' et al.' if len(p.authors) > 4 else ''}"
                   f" · {atlas.topic_label(p.topic_id)}")
        if p.tldr:
            click.echo(textwrap.fill(p.tldr, 100, initial_indent="    ", subsequent_indent="    "))


@click.command(name="show")
@click.argument("paper")
@db_option
def show_command(paper, db):
    """Show one PAPER (id or title): authors, status, TL;DR, keyphrases, topic, abstract, links."""
    atlas = open_atlas(db)
    p = find_or_fail(atlas, paper)
    click.echo(click.style(p.title, bold=True))
    click.echo(f"id {p.id} · {p.venue or 'venue unknown'}{' · ' + p.status if p.status else ''}")
    click.echo(", ".join(p.authors))
    click.echo(f"\nTL;DR ({p.tldr_method}): {p.tldr}")
    click.echo(f"Keyphrases ({p.keyphrases_method}): {'; '.join(p.keyphrases)}")
    if p.given_keyphrases:
        click.echo(f"Listed keywords: {'; '.join(p.given_keyphrases)}")
    area = atlas.area_of(p.topic_id)
    where = f"{area.label} › " if area is not None and area.id != p.topic_id else ""
    note = " (low confidence: fits no topic well, placed in the nearest)" if p.low_confidence else ""
    click.echo(f"Topic: {where}{atlas.topic_label(p.topic_id)} (#{p.topic_id}){note}")
    if p.secondary_topic_ids:
        click.echo("Also: " + "; ".join(f"{atlas.topic_label(t)} (#{t})" for t in p.secondary_topic_ids))
    if p.sections:
        click.echo(f"Sections: {'; '.join(p.sections)}")
    f = facets_of(p)
    facts = facet_tag(p) + (f" · confidence {f.confidence_mean:.1f}" if f.confidence_mean is not None else "") \
        + (f" · decision: {f.decision}" if f.decision else "")
    if facts:
        click.echo(f"Facets: {facts.removeprefix(' · ')}")
    if f.institutions:
        click.echo(f"Institutions: {'; '.join(f.institutions)}")
    click.echo("")
    for para in (p.abstract or p.digest).split("\n\n"):
        click.echo(textwrap.fill(para, 100))
    for link in p.links:
        if link.url:
            click.echo(f"{link.kind}: {link.url}")


@click.command(name="related")
@click.argument("paper")
@db_option
@click.option("-k", "--limit", default=10, show_default=True, help="Number of related papers.")
def related_command(paper, db, limit):
    """Papers nearest to PAPER (id or title), each with the reason it is related."""
    from ..search import related as run_related

    atlas = open_atlas(db)
    p = find_or_fail(atlas, paper)
    click.echo(f"Related to: {p.title} ({p.id})")
    for i, r in enumerate(run_related(atlas, p, k=limit), 1):
        click.echo(f"{i:>2}. {r.paper.title}{status_tag(r.paper)}  ({r.paper.id})")
        click.echo(f"    cosine {r.similarity:.2f} · {r.reason}")


@click.command(name="topics")
@db_option
@click.option("--terms", default=5, show_default=True, help="Top keyphrases shown per topic.")
def topics_command(db, terms):
    """The atlas as a table of contents: areas, their sub-topics (id, papers, label) and top keyphrases."""
    atlas = open_atlas(db)
    for area in atlas.areas():
        subs = atlas.subtopics(area.id)
        click.echo(f"{area.id:>4}  {area.size:>5}  {click.style(area.label, bold=True)}")
        if terms and not subs:
            click.echo(f"             {'; '.join(area.keyphrases[:terms])}")
        for t in subs:
            click.echo(f"{t.id:>10}  {t.size:>5}  {t.label}")
            if terms:
                click.echo(f"                   {'; '.join(t.keyphrases[:terms])}")


@click.command(name="edit")
@click.argument("paper", required=False)
@db_option
@click.option("--tldr", default=None, help="Your one-sentence TL;DR for the paper.")
@click.option("--keyphrases", default=None, help='Your keyphrases, separated by ";", e.g. "a; b; c".')
@click.option("--topic", "topic_id", type=int, default=None, metavar="ID",
              help="With PAPER: file it under sub-topic ID. Alone (with --label, --overview or --clear): the topic "
                   "to edit. `paperatlas topics` lists the ids.")
@click.option("--label", default=None, help="With --topic ID and no PAPER: the topic's new label (area or sub-topic).")
@click.option("--overview", default=None,
              help="With --topic ID and no PAPER: your overview of the topic, replacing the computed one (its [n] "
                   "keep citing the computed overview's papers when all are in range).")
@click.option("--clear", is_flag=True,
              help="Drop your edits of PAPER (TL;DR and keyphrases return on rebuild; a moved paper goes back to its "
                   "earlier topic now), or with --topic ID alone the topic's rename and overview (the generated "
                   "ones are restored now).")
def edit_command(paper, db, tldr, keyphrases, topic_id, label, overview, clear):
    """Override PAPER's (id or title) TL;DR, keyphrases or topic, or a topic's label or overview.

    \b
      paperatlas edit PAPER --tldr TEXT --keyphrases "a; b"
      paperatlas edit PAPER --topic 12           file PAPER under sub-topic 12
      paperatlas edit --topic 3 --label "Graph learning"   rename topic 3
      paperatlas edit --topic 3 --overview TEXT  your overview of topic 3
      paperatlas edit --topic 3 --clear          give topic 3 back its generated label and overview

    Your edit wins over every later rebuild, is kept in the atlas file, shows at once, and is what publish writes.
    A TL;DR is at most 1,000 characters; at most 50 keyphrases of at most 100 characters each (as in the web app);
    a topic label at most 100 characters, an overview at most 2,000. A paper is filed under a sub-topic, not an
    area (the indented ids of `paperatlas topics`).
    """
    if paper is None:
        _edit_topic(db, topic_id, label, overview, clear, tldr is not None or keyphrases is not None)
        return
    if label is not None or overview is not None:
        raise click.UsageError("--label renames a topic and --overview writes its overview: give --topic ID "
                               "--label TEXT (or --overview TEXT) without PAPER")
    if tldr is None and keyphrases is None and topic_id is None and not clear:
        raise click.UsageError("give --tldr, --keyphrases or --clear, or --topic ID to file PAPER under a sub-topic")
    _edit_paper(db, paper, tldr, keyphrases, topic_id, clear)


def _edit_topic(db, topic_id, label, overview, clear, paper_fields: bool) -> None:
    """``paperatlas edit --topic ID --label TEXT`` / ``--overview TEXT`` (or ``--clear``): a topic's own edits."""
    from ..overrides import rename_topic
    from ..store import AtlasNotFound, MalformedAtlas
    from ..store.overviews import set_topic_overview
    from ._common import resolve_db

    if topic_id is None or paper_fields or (label is None and overview is None) == (not clear):
        raise click.UsageError("give PAPER (with --tldr, --keyphrases, --topic ID or --clear) to edit a paper, or "
                               "--topic ID with --label TEXT (or --clear) to rename a topic, or with --overview TEXT "
                               "to give it your overview")
    path = resolve_db(db)
    t, dropped, missing = None, [], None
    try:
        if clear:  # the rename and the overview, each: a LookupError only when neither is there
            for what, drop in (("rename", rename_topic), ("overview", set_topic_overview)):
                try:
                    got = drop(path, topic_id, None)
                except LookupError as e:
                    missing = e
                    continue
                t = got or t
                if got is None:
                    dropped.append(what)
            if t is None and not dropped and missing is not None:
                raise missing
        else:
            if label is not None:
                t = rename_topic(path, topic_id, label)
            if overview is not None:
                t = set_topic_overview(path, topic_id, overview)
    except (LookupError, ValueError, AtlasNotFound, MalformedAtlas) as e:
        raise click.ClickException(str(e)) from e
    if t is None:
        click.echo(f"topic {topic_id} is no longer in this atlas; its kept {' and '.join(dropped)} was dropped")
        return
    kind = "area" if t.level == 0 else "sub-topic"
    click.echo(f"Topic {t.id} ({kind}, {t.size} papers): {t.label}" + (f" ({t.method})" if t.method else ""))
    if overview is not None or clear:
        how = f" ({t.overview_method})" if t.overview_method else ""
        click.echo(f"Overview{how}: {t.overview or '(none yet: the next build makes one)'}")
    if clear:
        click.echo("edits dropped: the topic has its generated label and overview again")


def _edit_paper(db, paper, tldr, keyphrases, topic_id, clear) -> None:
    """``paperatlas edit PAPER ...``: the paper's TL;DR, keyphrases and/or topic."""
    from ..overrides import move_paper, override_paper, parse_keyphrases
    from ..store import AtlasNotFound

    atlas = open_atlas(db)
    try:
        p = find_or_fail(atlas, paper)
        labels = {t.id: (t.label, atlas.topic_label(t.parent_id) if t.parent_id is not None else "")
                  for t in atlas.topics.values()}
    finally:
        atlas.close()
    pid, before = p.id, p.topic_id
    try:
        if tldr is not None or keyphrases is not None or clear:
            p = override_paper(atlas.path, pid, tldr=tldr, clear=clear,
                               keyphrases=parse_keyphrases(keyphrases, pid) if keyphrases is not None else None)
        if topic_id is not None:
            p, _ = move_paper(atlas.path, pid, topic_id)
    except (LookupError, ValueError, AtlasNotFound) as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"{p.title} ({p.id})")
    click.echo(f"TL;DR ({p.tldr_method}): {p.tldr}")
    click.echo(f"Keyphrases ({p.keyphrases_method}): {'; '.join(p.keyphrases)}")
    if p.topic_id is not None:
        label, area = labels.get(p.topic_id, ("", ""))
        how = " (moved by reader)" if topic_id is not None else " (moved back)" if p.topic_id != before else ""
        click.echo(f"Topic: {area + ' › ' if area else ''}{label} (#{p.topic_id}){how}")
    if clear:
        click.echo("overrides cleared; the generated values come back at the next build")


def _recommend_liked(atlas, like: tuple[str, ...], dislike: tuple[str, ...] = ()) -> tuple[list, list]:
    """The ``(liked, disliked)`` papers a recommendation starts from.

    The ``--like``/``--dislike`` references (ids or titles), else the papers liked and disliked in the reading list
    (``paperatlas list like``). Raises ``LookupError`` for a reference that names no paper.
    """
    from .. import readinglist as rl
    from ..recommend import liked_papers

    if like:
        return liked_papers(atlas, like), liked_papers(atlas, dislike)
    liked, disliked = rl.ratings(atlas.con)
    return ([atlas.by_id[i] for i in liked if i in atlas.by_id],
            liked_papers(atlas, dislike) + [atlas.by_id[i] for i in disliked if i in atlas.by_id])


@click.command(name="recommend")
@click.option("--like", "like", multiple=True, metavar="PAPER",
              help="A paper you liked (id or title; repeatable; default: the papers you liked with `list like`).")
@click.option("--dislike", "dislike", multiple=True, metavar="PAPER", help="A paper you did not like (repeatable).")
@click.option("--exclude-topic", "exclude_topics", multiple=True, metavar="X",
              help="Leave out a topic (id or label substring; an area covers its sub-topics; repeatable).")
@click.option("--exclude-keyphrase", "exclude_keyphrases", multiple=True, metavar="X",
              help='Leave out papers about X, e.g. "reinforcement learning" (repeatable).')
@click.option("-k", "--limit", default=10, show_default=True, help="Number of recommendations.")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print recommendations as JSON lines.")
def recommend_command(like, dislike, exclude_topics, exclude_keyphrases, limit, db, as_json):
    """Papers to read next, from papers you liked (MiniLM + TF-IDF similarity), each with its reason.

    Papers you liked, disliked or marked read (`list read`) are left out, as on the web app's For you page.
    """
    import json

    from ..recommend import recommend as run_recommend

    atlas = open_atlas(db)
    try:
        liked, disliked = _recommend_liked(atlas, like, dislike)
    except LookupError as e:
        raise click.ClickException(str(e)) from e
    if not liked:
        raise click.UsageError("give at least one --like PAPER, or like papers first: paperatlas list like PAPER")
    from .. import readinglist as rl

    already = [e.paper_id for e in rl.entries(atlas.con) if e.read_at]  # as the web's For you: read papers are done
    recs = run_recommend(atlas, [p.id for p in liked], [p.id for p in disliked], k=limit,
                         exclude_topics=exclude_topics, exclude_keyphrases=exclude_keyphrases, exclude=already)
    if not as_json:
        click.echo("Because you liked: " + "; ".join(p.title for p in liked))
    if not recs:
        click.echo("no papers to recommend", err=True)
    for i, r in enumerate(recs, 1):
        if as_json:
            click.echo(json.dumps({"rank": i, "id": r.paper.id, "title": r.paper.title, "status": r.paper.status,
                                   "score": r.score, "because": r.because.id, "reason": r.reason},
                                  ensure_ascii=False))
            continue
        click.echo(f"{i:>2}. {r.paper.title}{status_tag(r.paper)}  ({r.paper.id})")
        click.echo(f"    score {r.score:.2f} · {r.reason}")
