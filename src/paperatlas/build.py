"""The build pipeline: read listings → merge → embed (incremental) → keyphrases → TL;DR → topics + map → store.

A build is atomic (it works on a private copy of the atlas file, see :func:`paperatlas.store.atomic_rebuild`) and
incremental (a paper's embedding is reused when its title + abstract and the model are unchanged). It runs as a list
of named stages (:data:`PIPELINE`; the stages are in :mod:`paperatlas.build_stages`), each timed into the
:class:`BuildReport`.

A build never silently wipes an atlas: it is refused (:class:`BuildRefused`, nothing written) when the listings
yield no papers or would keep fewer than half of the atlas's papers, unless ``replace=True``. Builds of one atlas
run one at a time (:mod:`paperatlas.store.lock`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from . import build_stages as st
from .build_report import BuildRefused as BuildRefused
from .build_report import BuildReport as BuildReport
from .build_report import check_not_a_wipe
from .build_report import content_hash as content_hash
from .build_report import text_hash as text_hash
from .build_stages import BuildContext, BuildOptions, Stage, run_stages
from .build_stages import ProgressFactory as ProgressFactory
from .engines import EngineBase
from .engines.local import LocalEngine
from .enrich.embed import Embedder, MiniLMEmbedder, embedding_processes, paper_text
from .enrich.precision import cached_calibration
from .enrich.topics import lay_out, update_topics
from .memory import peak_rss_mib
from .store import sqlite as store
from .store.keyphrase_counts import KEYPHRASE_STATS as KEYPHRASE_STATS  # the models table's name (tests)
from .store.lock import DEFAULT_TIMEOUT as DEFAULT_LOCK_TIMEOUT
from .store.resume import ResumeCache

#: from this many papers (in the atlas, not only those to embed: the later stages' memory grows with the atlas) the
#: default model runs in a child process that exits after the embedding, so torch's ~1 GB is not under the topic
#: stage (:mod:`paperatlas.engines.embed_child`); a smaller build loads it here and keeps it for the next build in
#: the same process (the tests, a notebook), where a child would load torch and the model again each time (3-5 s)
EMBED_IN_CHILD_MIN_PAPERS = 5_000
#: where this machine's measurement found a child process per core faster than torch's threads
#: (:func:`~paperatlas.enrich.embed.embedding_processes`; 2 x 1 thread embedded 74.7 papers/s against 65.8 for 2
#: threads on this project's 2-core AMD EPYC), builds of this many papers or more embed in that many children; below
#: it the children's start-up (~4 s) is not won back
PROCESSES_MIN_PAPERS = 1_000
#: ... and fewer than this many when the children run torch: each torch child holds ~0.7 GB while the build process
#: holds its keyphrase statistics, so a larger build keeps one child (the 42k build's peak, build + child, stays under
#: 2 GB). An ``onnx-fp32`` child holds ~0.23 GB (peak RSS 225 MiB embedding 600 abstracts on one thread, against 832
#: MiB for torch fp32), so that path runs a child per core at any size from :data:`PROCESSES_MIN_PAPERS`
PROCESSES_MAX_PAPERS = 20_000


def local_engine(precision: str, embedder: Embedder | None, n_papers: int) -> LocalEngine:
    """The local engine for a build of ``n_papers`` papers: where its embedding runs, and in how many processes.

    In this process below :data:`EMBED_IN_CHILD_MIN_PAPERS` papers (the model is kept for the next build of the
    process), in one child from there; in a child per core from :data:`PROCESSES_MIN_PAPERS` papers when this
    machine measured that faster (:func:`~paperatlas.enrich.embed.embedding_processes`), up to
    :data:`PROCESSES_MAX_PAPERS` papers unless the measured path is ``onnx-fp32`` (a small child).

    Args:
        precision: one of :data:`~paperatlas.enrich.embed.PRECISIONS`.
        embedder: a given embedder (then always in this process), or None for the default model.
        n_papers: the papers of the build (or of the atlas being rebuilt).

    Returns:
        The :class:`~paperatlas.engines.local.LocalEngine`.
    """
    processes = embedding_processes(precision) if embedder is None else 1
    measured = cached_calibration(MiniLMEmbedder.name).chosen if processes > 1 else None
    many = (processes > 1 and n_papers >= PROCESSES_MIN_PAPERS
            and (measured == "onnx-fp32" or n_papers < PROCESSES_MAX_PAPERS))
    if many:  # the children run what was measured (a one-thread child would measure again, and not for threads)
        precision = measured
    return LocalEngine(precision=precision, embedder=embedder,
                       embed_in_child=many or n_papers >= EMBED_IN_CHILD_MIN_PAPERS,
                       processes=processes if many else 1)


def build(source_paths: Sequence[str | Path], db: str | Path, formats: Sequence[str | None] | None = None,
          venue: str | None = None, year: int | None = None, n_topics: int | None = None,
          embedder: Embedder | None = None, progress: ProgressFactory = st.no_progress, seed: int = 42,
          tldr_backend=None, n_areas: int | None = None, refit_topics: bool = False,
          label_backend=None, replace: bool = False, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
          on_wait: Callable[[str], None] | None = None, strict: bool = False,
          source_options: dict | None = None, precision: str = "auto",
          engine: EngineBase | None = None) -> BuildReport:
    """Build (or rebuild) the atlas at ``db`` from ``source_paths``; the atlas then holds exactly these sources.

    When the atlas already has topics, a rebuild that adds few papers updates them (ids, labels and map positions
    kept) unless ``refit_topics`` or a size is given. The reader's overrides win over everything generated.

    Args:
        source_paths: the listing files, read by :func:`paperatlas.sources.read`.
        db: the atlas file (created or rebuilt atomically).
        formats: a reader name per source (``None`` = detect); None to detect every one.
        venue: fills listings that do not state their venue.
        year: fills listings that do not state their year.
        n_topics: ask for that many sub-topics (default: by corpus size, see :mod:`paperatlas.enrich.topics`).
        embedder: the embedding model; None to load the default only when something needs embedding.
        progress: a :data:`ProgressFactory` (no-op by default).
        seed: random seed of the topics and the map.
        tldr_backend: a :class:`paperatlas.llm.backends.ChatBackend` that generates TL;DRs instead of the
            extractive default (:func:`paperatlas.llm.tldr.generate_tldr`); each is checked against its abstract
            and falls back to the extractive one when it fails (recorded in ``tldr_method``).
        n_areas: ask for that many areas (default: by corpus size).
        refit_topics: refit the topics even when an update is possible.
        label_backend: a :class:`paperatlas.llm.backends.ChatBackend` that rewrites new or changed topic labels
            (:mod:`paperatlas.llm.labels`).
        replace: build even when the listings yield no papers or would keep fewer than half of the papers
            already in the atlas (otherwise :class:`BuildRefused`).
        lock_timeout: seconds to wait while another build of the same atlas runs
            (:func:`paperatlas.store.lock.build_lock`).
        on_wait: called once with a one-line message when the build starts waiting for another one.
        strict: stop at the first malformed record (otherwise it is skipped with a
            :class:`paperatlas.sources.RecordSkipped` warning naming file and line).
        source_options: options of the network readers (``include_rejected``, ``max_results``, ``date_from``,
            ``date_to``, ``refresh``, ``cache_dir``), see :func:`paperatlas.sources.read`.
        precision: the default embedder's arithmetic, ``auto``/``fp32``/``bf16``
            (:func:`paperatlas.enrich.embed.resolve_precision`); ignored when ``embedder`` is given.
        engine: where the per-paper work runs: an :class:`~paperatlas.plugins.EngineBase` (the engine protocol,
            :func:`paperatlas.engines.get_engine`); None for a :class:`paperatlas.engines.local.LocalEngine`.

    Returns:
        The :class:`BuildReport`.

    Raises:
        paperatlas.model.SourceError: for unreadable input (before anything is written).
        BuildRefused: the build would empty the atlas or drop most of its papers and ``replace`` is false
            (nothing is written).
        paperatlas.store.lock.AtlasBusy: another build of the atlas ran for longer than ``lock_timeout``.
        paperatlas.enrich.embed.EmbedderUnavailable: when the model package is missing.
    """
    opts = BuildOptions(source_paths, db, formats, venue, year, n_topics, n_areas, embedder, progress, seed,
                        tldr_backend, label_backend, refit_topics, replace, lock_timeout, on_wait, strict,
                        source_options, precision)
    ctx = BuildContext(opts, engine=engine)
    if engine is None and embedder is None and store.stored_paper_count(db) >= EMBED_IN_CHILD_MIN_PAPERS:
        ctx.engine = local_engine(precision, None, store.stored_paper_count(db))  # a large atlas: its child
        ctx.engine.start_embedder()  # starts loading the model while the listings are read (ended if not needed)
    try:
        return _build(ctx)
    finally:  # the embedding child never outlives the build
        if ctx.engine is not None:
            ctx.engine.close()


def _build(ctx: BuildContext) -> BuildReport:
    """Run :data:`PIPELINE` over ``ctx``; a stage that raises rolls the atlas's private copy back."""
    with ctx.exits:  # entered by the ``open`` stage, closed (committed) by ``commit``
        run_stages(ctx, PIPELINE)
    ctx.report.peak_rss_mib = peak_rss_mib()
    return ctx.report


def open_atlas(ctx: BuildContext) -> None:
    """``open``: start the engine, take the atlas's lock and its private copy, and refuse a wipe.

    Raises:
        BuildRefused: the build would empty the atlas or drop most of its papers and ``replace`` is false.
        paperatlas.store.lock.AtlasBusy: another build of the atlas ran for longer than ``lock_timeout``.
    """
    o, papers = ctx.opts, ctx.papers
    if ctx.engine is None:
        ctx.engine = local_engine(o.precision, o.embedder, len(papers))
    ctx.engine.start_embedder()  # the child loads its model while the atlas's vectors are read
    ctx.con = ctx.exits.enter_context(store.atomic_rebuild(o.db, lock_timeout=o.lock_timeout, on_wait=o.on_wait))
    ctx.resume = ResumeCache(o.db)
    if not o.replace:  # under the lock: the atlas as the previous build left it
        check_not_a_wipe(o.db, len(papers), set(store.previous_placement(ctx.con)), {p.id for p in papers})


def fit_topics(ctx: BuildContext) -> None:
    """``topics``: topics, areas and their labels (:func:`~paperatlas.enrich.topics.update_topics`).

    A fresh fit leaves the map to ``layout``; an update places its new papers beside their kept neighbours here.
    """
    papers, report, o, prepared = ctx.papers, ctx.report, ctx.opts, ctx.prepared
    tick = ctx.progress("topics", 1)
    old_topics = prepared.topics
    # fewer papers than the stored sub-topics: the stored model cannot be updated (k-means), so refit
    refit = o.refit_topics or len(papers) < sum(t.level == 1 for t in old_topics.values())
    res = update_topics([p.id for p in papers], ctx.vectors,
                        [paper_text(p.title, p.abstract or p.digest) for p in papers],
                        [t or p.given_keyphrases for t, p in zip(ctx.label_terms, papers, strict=True)],
                        previous=prepared.topic_model, previous_papers=prepared.placement,
                        previous_topics=old_topics, n_areas=o.n_areas, n_topics=o.n_topics,
                        refit=refit, seed=o.seed, embed_model=ctx.model_name, layout=False)
    for i, p in enumerate(papers):
        p.topic_id = int(res.topic_id[i])
        p.topic_confidence = round(float(res.confidence[i]), 4)
        p.low_confidence = bool(res.low_confidence[i])
        p.secondary_topic_ids = res.secondary[i]
    for t in res.topics:  # a label kept from the last build keeps its provenance (e.g. a generated label)
        if t.id in old_topics and old_topics[t.id].label == t.label:
            t.method = old_topics[t.id].method or t.method
    ctx.topic_result, ctx.topics = res, res.topics
    report.n_topics = sum(t.level == 1 for t in res.topics)
    report.n_areas = sum(t.level == 0 for t in res.topics)
    report.topic_mode, report.topics_kept_share = res.mode, res.kept_share
    report.n_low_confidence = int(res.low_confidence.sum())
    report.n_with_secondary = sum(bool(s) for s in res.secondary)
    tick(1)


def lay_out_map(ctx: BuildContext) -> None:
    """``layout``: the 2-D map (UMAP, :func:`~paperatlas.enrich.topics.lay_out`) of a fresh fit; each paper's x, y."""
    res = ctx.topic_result
    tick = ctx.progress("layout", 1)
    lay_out(res, seed=ctx.opts.seed)
    for p, (x, y) in zip(ctx.papers, res.xy.tolist(), strict=True):
        p.x, p.y = float(x), float(y)
    tick(1)


#: The build, in order: each stage's row in the stage table, the function that does it, and when it runs. The
#: embedding starts ahead of the rest: the child is started by ``open`` (or before ``read`` for a large atlas) and
#: embeds while ``keyphrases`` updates the statistics; ``per-paper`` prepares the topic stage's inputs meanwhile.
PIPELINE: tuple[Stage, ...] = (
    Stage("read", st.read_sources),
    Stage("merge", st.merge_records),
    Stage("open", open_atlas),
    Stage("load-cache", st.reuse_vectors),
    Stage("keyphrases", st.plan_work),
    Stage("keyphrases", st.keyphrase_statistics),
    Stage("per-paper", st.run_per_paper, own_rows=True),
    Stage("write-embeddings", st.write_embeddings),
    Stage("prepare", st.prepare_topics, when=lambda ctx: ctx.prepared is None),
    Stage("tldr", st.generate_tldrs, when=lambda ctx: ctx.opts.tldr_backend is not None),
    Stage("topics", st.release_keyphrase_stats),
    Stage("topics", fit_topics),
    Stage("layout", lay_out_map),
    Stage("topic labels", st.rewrite_topic_labels, when=lambda ctx: ctx.opts.label_backend is not None),
    Stage("edits", st.apply_edits),
    Stage("overviews", st.make_overviews),
    Stage("write", st.write_atlas),
    Stage("indexes", st.write_indexes),
    Stage("commit", st.commit),
)
