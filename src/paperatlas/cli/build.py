"""``paperatlas build``, ``serve`` and ``demo``: make an atlas from listings and serve it as a local web app."""

from __future__ import annotations

import warnings
from pathlib import Path

import click

from ..model import SourceError
from ..settings import settings
from ..sources import READERS, RecordSkipped, SourceWarning, describe
from ._common import (
    DEFAULT_DB,
    EXTRACTIVE,
    SAMPLE_LISTING,
    SEED_LISTING,
    backend_choices,
    choice_help,
    db_option,
    resolve_db,
    tqdm_progress,
)

_BACKENDS = backend_choices()


@click.command(name="build")
@click.argument("listings", nargs=-1, required=True, metavar="SOURCES...")
@db_option
@click.option("--format", "fmt", multiple=True, metavar="NAME", type=click.Choice(list(READERS)),
              help=choice_help("Reader per listing: once for all, or once per listing (default: detected from the "
                               "content).", ((name, describe(name)) for name in READERS)))
@click.option("--venue", default=None, help='Venue for listings that do not state it, e.g. "ICLR 2021".')
@click.option("--year", type=int, default=None, help="Year for listings that do not state it.")
@click.option("--strict", is_flag=True,
              help="Stop at the first malformed record (default: report it as FILE:LINE, skip it, count it).")
@click.option("--include-rejected", is_flag=True,
              help="openreview: also the rejected and withdrawn submissions (default: accepted papers only).")
@click.option("--max", "max_results", type=click.IntRange(1), default=None, metavar="N",
              help="arxiv: at most N papers per query (default 1000).")
@click.option("--since", "date_from", default=None, metavar="YYYY-MM-DD",
              help="arxiv: papers submitted on or after this day.")
@click.option("--until", "date_to", default=None, metavar="YYYY-MM-DD",
              help="arxiv: papers submitted on or before this day.")
@click.option("--acl-data", "acl_data", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="acl: the ACL Anthology's data directory (a checkout of acl-org/acl-anthology) [env "
              "PAPERATLAS_ACL_DATA]; without it the acl-anthology package clones the repository once.")
@click.option("--refresh", is_flag=True,
              help="Network sources: fetch again instead of building from what was fetched before (the cache, "
              "$PAPERATLAS_CACHE or ~/.cache/paperatlas).")
@click.option("--topics", "n_topics", type=click.IntRange(1, 2000), default=None,
              help="Number of sub-topics (default: about one per 25 papers, at most 15 per area).")
@click.option("--areas", "n_areas", type=click.IntRange(1, 100), default=None,
              help="Number of top-level areas (default: cube root of the number of papers, 8-20).")
@click.option("--refit-topics", is_flag=True,
              help="Recluster and re-lay-out from scratch even when the atlas's topics could be updated (a "
              "rebuild that adds up to 25% new papers otherwise keeps topic ids, labels and map positions).")
@click.option("--replace", is_flag=True,
              help="Replace the atlas even when the listings yield no papers or would keep fewer than half of its "
              "papers (such a build is otherwise refused and the atlas left as it is).")
@click.option("--seed", type=int, default=42, show_default=True, help="Random seed of clustering and map layout.")
@click.option("--precision", type=click.Choice(["auto", "fp32", "bf16", "onnx-fp32"]), default="auto",
              show_default=True, envvar="PAPERATLAS_PRECISION",
              help="How the embedding model runs: auto times fp32 and bf16 (torch) and onnx-fp32 (ONNX Runtime, "
              "the same vectors) on this machine once (20-60 s, cached) and keeps the fastest that finds the same "
              "neighbours (bf16 was 1.9x fp32 on one 2-core CPU, 0.8x on another with the same flags, 0.2x on one "
              "without native bf16; onnx-fp32 1.2x there), and one thread per process against all; the build "
              "report says which and why [env PAPERATLAS_PRECISION].")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where the per-paper work (embedding, keyphrases, TL;DRs) runs: in this process, or as Ray Data "
              "batch jobs on a Ray cluster (pip install 'paperatlas[ray]'; a local cluster without --address).")
@click.option("--address", default=None, metavar="HOST:PORT",
              help="ray: the cluster to run on, as 'ray start --head' prints it (default: start a local one).")
@click.option("--workers", type=click.IntRange(1), default=None, metavar="N",
              help="ray: worker processes, each with one CPU and its own model (default: one per cluster CPU).")
@click.option("--tldr-backend", type=click.Choice([name for name, _ in _BACKENDS]), default=EXTRACTIVE,
              show_default=True, help=choice_help("How TL;DRs are written. Generated TL;DRs that their abstract does "
                                                  "not support fall back to the extractive one.", _BACKENDS))
@click.option("--label-backend", type=click.Choice([name for name, _ in _BACKENDS]), default=EXTRACTIVE,
              show_default=True, help=choice_help("Rewrite topic labels with a generative model; a generated "
                                                  "label the topic's keyphrases and titles do not support is not "
                                                  "used.", _BACKENDS))
@click.option("--base-url", default=None, help="Endpoint of the openai backends, e.g. http://127.0.0.1:11434/v1")
@click.option("--model", "llm_model", default=None, help="Model name for the openai backends.")
def build_command(listings, db, fmt, venue, year, strict, include_rejected, max_results, date_from, date_to, acl_data,
                  refresh, n_topics, n_areas, refit_topics, replace, seed, tldr_backend, label_backend, base_url,
                  llm_model, precision="auto", engine="local", address=None, workers=None):
    """Build or rebuild an atlas from one or more SOURCES: listing files or network sources.

    \b
    A source is a file in any format below (detected from its content), or
    SCHEME:QUERY for a service (fetched once, then rebuilt from the cache), e.g.
      paperatlas build ../shared/seeds/001_2614e1796f49d7fd.txt
      paperatlas build zotero-export.bib my-notes.ris
      paperatlas build openreview:ICLR.cc/2025/Conference
      paperatlas build arxiv:cs.LG --since 2026-01-01 --max 500
      paperatlas build 'arxiv:"grokking"'
      paperatlas build acl:2023.acl-long

    The atlas then holds exactly these sources; the same paper in several sources is merged. Rebuilding is
    atomic (an interrupted build leaves the previous atlas as it was) and embeds only new or changed papers. A
    second build of the same atlas waits for the first to finish.
    """
    from ..build import BuildRefused
    from ..build import build as run_build
    from ._common import refuse_directory

    refuse_directory(db or settings.db or DEFAULT_DB)  # at once, not after the whole build
    from ..enrich.embed import EmbedderUnavailable
    from ..store import AtlasTooNew, MalformedAtlas
    from ..store.lock import AtlasBusy

    if fmt and len(fmt) not in (1, len(listings)):
        raise click.UsageError("give --format once (for all listings) or once per listing")
    if address and engine != "ray":
        raise click.UsageError("--address is the Ray cluster's address: it needs --engine ray")
    run_engine = _ray_engine(address, workers, precision, tldr_backend) if engine == "ray" else None
    from ..enrich.embed import precision_warning

    if warning := precision_warning(precision):  # run as asked, but said before anything is read
        click.echo(f"warning: {warning}", err=True)
    formats = list(fmt) * len(listings) if len(fmt) == 1 else (list(fmt) or None)
    path = Path(db) if db else Path(settings.db or DEFAULT_DB)
    backends: dict[str, object] = {}
    for name in {tldr_backend, label_backend} - {EXTRACTIVE}:  # one instance when both use the same model
        from ..llm.backends import BackendUnavailable, make_backend

        try:
            backends[name] = make_backend(name, base_url=base_url, model=llm_model)
        except (BackendUnavailable, ValueError) as e:
            raise click.ClickException(str(e)) from e
    backend = backends.get(tldr_backend)
    options = {k: v for k, v in (("include_rejected", include_rejected), ("max_results", max_results),
                                 ("date_from", date_from), ("date_to", date_to), ("refresh", refresh),
                                 ("acl_data", acl_data)) if v}
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SourceWarning)
            rep = run_build(listings, path, formats=formats, venue=venue, year=year, n_topics=n_topics, strict=strict,
                            source_options=options,
                            seed=seed, progress=tqdm_progress, tldr_backend=backend, n_areas=n_areas,
                            refit_topics=refit_topics, label_backend=backends.get(label_backend),
                            replace=replace, on_wait=lambda msg: click.echo(msg, err=True), precision=precision,
                            engine=run_engine)
    except (SourceError, EmbedderUnavailable, AtlasTooNew, BuildRefused, AtlasBusy, MalformedAtlas) as e:
        raise click.ClickException(str(e)) from e
    finally:  # outside catch_warnings: a warning shown here is not recorded again (that looped forever)
        for w in caught:
            if issubclass(w.category, RecordSkipped):
                click.echo(f"skipped: {w.message}", err=True)
            elif issubclass(w.category, SourceWarning):
                click.echo(f"warning: {w.message}", err=True)
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
        n_skipped = sum(issubclass(w.category, RecordSkipped) for w in caught)
        if n_skipped:
            click.echo(f"{n_skipped} malformed record{'s' if n_skipped > 1 else ''} skipped (listed above); "
                       "--strict makes them fatal", err=True)
    _print_report(rep, path, label_backend, engine)
    prepare_query_model()


def _ray_engine(address: str | None, workers: int | None, precision: str, tldr_backend: str):
    """The Ray engine ``build --engine ray`` runs on (:func:`paperatlas.engines.get_engine`).

    Raises:
        click.UsageError: with a generative ``--tldr-backend`` (it runs on the local engine).
        click.ClickException: ray is not installed (the message names the extra).
    """
    if tldr_backend != EXTRACTIVE:
        raise click.UsageError("--engine ray runs the extractive TL;DR; a --tldr-backend runs on the local engine")
    from ..engines import get_engine
    from ..engines.ray_engine import RayUnavailable

    try:
        return get_engine("ray", address=address, workers=workers, precision=precision)
    except RayUnavailable as e:
        raise click.ClickException(str(e)) from e


def _print_report(rep, path: Path, label_backend: str, engine: str) -> None:
    """What the build did (:class:`paperatlas.build.BuildReport`): counts, topics, notes and the stage table."""
    click.echo(f"{path}: {rep.n_papers} papers ({rep.n_read} records read), {rep.n_areas} areas, "
               f"{rep.n_topics} topics; embedded {rep.n_embedded}, reused {rep.n_reused}"
               + (f" ({rep.n_resumed} from an interrupted build)" if rep.n_resumed else "")
               + (f"; kept {rep.n_tldr_reused} TL;DRs and {rep.n_keyphrases_reused} keyphrase sets of unchanged papers"
                  if rep.n_tldr_reused or rep.n_keyphrases_reused else ""))
    how = {"fit": "clustered", "refit": "reclustered (ids and labels matched to the previous build)",
           "update": "updated from the previous build (map positions kept)"}.get(rep.topic_mode, rep.topic_mode)
    kept = f"; {rep.topics_kept_share:.1%} of earlier papers keep their topic" \
        if rep.topics_kept_share is not None else ""
    click.echo(f"topics {how}{kept}; {rep.n_low_confidence} low-confidence placements, "
               f"{rep.n_with_secondary} papers with a secondary topic")
    if rep.build_number > 1 and rep.n_new:
        click.echo(f"build {rep.build_number}: {rep.n_new} new papers (`paperatlas new` ranks them for you)")
    if label_backend != EXTRACTIVE:
        reasons = sorted(set(rep.labels_rejected.values()))
        click.echo(f"topic labels by {label_backend}: {rep.n_labels_generated} generated, "
                   f"{len(rep.labels_rejected)} kept extractive" + (f" ({'; '.join(reasons[:4])})" if reasons else ""))
    for note in rep.notes:
        click.echo(f"note: {note}", err=True)
    if engine == "ray":
        click.echo(f"ray: per-paper work {rep.per_paper_seconds:.1f}s wall; worker time "
                   + ", ".join(f"{k} {v:.1f}s" for k, v in rep.worker_seconds.items()))
    if rep.precision:
        click.echo(f"embedding precision: {rep.precision}")
    click.echo("\n".join(rep.stage_table()))


def prepare_query_model() -> None:
    """Export the query model to ONNX once per machine (:mod:`paperatlas.enrich.query_embed`).

    So the first ``search`` after a build answers in under a second; a failure only says that searches will be
    slower (the atlas is built either way).
    """
    try:
        from ..enrich.onnx_embed import export_onnx, onnx_path

        if not onnx_path().exists():
            click.echo("preparing the fast query model (once per machine, ~5 s)", err=True)
            export_onnx(quiet=True)
    except Exception as e:  # noqa: BLE001 - the atlas is built; only query speed is at stake
        click.echo(f"note: the fast query model could not be prepared ({e}); searches will load "
                   "sentence-transformers (~5 s each)", err=True)


@click.command(name="serve")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--token", envvar="PAPERATLAS_TOKEN", default=None, metavar="TOKEN",
              help="Access token (at least 16 characters) every browser must present once (open the printed URL "
              "with ?token=...) or every request send as 'Authorization: Bearer TOKEN'; required when --host is "
              "not a loopback address [env PAPERATLAS_TOKEN].")
def serve_command(db, host, port, token=None):
    """Serve the atlas as a local web app (search, paper and topic pages, map).

    It answers only to its own address (Host checked) and accepts changes only from its own pages (Origin and
    CSRF token checked). A non-loopback --host (e.g. 0.0.0.0) shows your reading list and notes to the network:
    it needs --token, of at least 16 characters. Idle connections are closed after 30 s, and up to 1,000 may be
    open at once (paperatlas.web.security.SERVER_LIMITS).
    """
    from ..store import AtlasNotFound, MalformedAtlas
    from ..web import create_app
    from ..web.security import check_access_token, is_loopback, make_server

    if token is not None:  # checked first: a refused token is one line, before any warning
        try:
            token = check_access_token(token)
        except ValueError as e:
            raise click.ClickException(str(e)) from e
    wildcard = host.strip("[]") in ("0.0.0.0", "::", "")
    if not is_loopback(host):
        click.echo(f"warning: --host {host} serves the atlas, your reading list and notes to the network, "
                   "not just this machine", err=True)
        if not token:
            raise click.ClickException("refusing to serve on a non-loopback address without --token TOKEN "
                                       "(or $PAPERATLAS_TOKEN)")
    path = resolve_db(db)
    try:
        app = create_app(path, allowed_hosts=None if wildcard else (host,), access_token=token or None,
                         warm_up_now=False)
    except (AtlasNotFound, MalformedAtlas) as e:
        raise click.ClickException(str(e)) from e
    try:
        server = make_server(app, host=host, port=port)
    except OSError as e:  # the port is taken, the address is not this machine's
        raise click.ClickException(f"cannot listen on {host} port {port}: {e.strerror or e}") from e
    app.extensions["paperatlas.warm_up"]()  # once the port is ours (see create_app's warm_up_now)
    shown = f"[{host}]" if ":" in host else host
    port = getattr(server, "effective_port", port)  # --port 0: the free port the system chose
    click.echo(f"Serving {path} at http://{shown}:{port}/{'?token=' + token if token else ''}  (Ctrl+C to stop)")
    server.run()


@click.command(name="demo")
@click.option("--db", default="iclr2021.db", show_default=True, help="Atlas file to build.")
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--no-serve", is_flag=True, help="Only build the demo atlas.")
@click.pass_context
def demo_command(ctx, db, port, no_serve):
    """Build the ICLR 2021 demo atlas (from ../shared/seeds, else the bundled sample) and serve it."""
    listing = SEED_LISTING if SEED_LISTING.is_file() else SAMPLE_LISTING
    if listing == SAMPLE_LISTING:
        click.echo(f"{SEED_LISTING} not found: using the bundled 60-paper sample", err=True)
    ctx.invoke(build_command, listings=(str(listing),), db=db, fmt=(), venue="ICLR 2021", year=2021, n_topics=None,
               n_areas=None, refit_topics=False, seed=42, tldr_backend="extractive", label_backend="extractive",
               base_url=None, llm_model=None)
    if not no_serve:
        ctx.invoke(serve_command, db=db, host="127.0.0.1", port=port)
