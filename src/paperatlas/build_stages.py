"""The build's stages: what :func:`paperatlas.build.build` runs, one small function each, over a :class:`BuildContext`.

Every stage has the same signature, ``stage(ctx: BuildContext) -> None``: it reads what the stages before it left in
the context and leaves what the stages after it need. :func:`run_stages` runs a list of :class:`Stage` records in
order, times each one (``BuildReport.stage_seconds``, seconds of wall time, one row per stage name) and notes the
peak resident memory when it ended (``BuildReport.peak_rss_by_stage``, MiB). The pipeline itself (the order, and the
two stages that live beside :func:`~paperatlas.build.build`: opening the atlas and the topics) is
:data:`paperatlas.build.PIPELINE`.

A stage that shows progress asks ``ctx.progress(description, total)`` for an ``update(n)`` callback (a tqdm bar in
the CLI) and counts real units where it has them (papers embedded, TL;DRs written, labels rewritten).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import sources
from .build_report import BuildReport, check_not_a_wipe, content_hash, text_hash
from .engines import EngineBase, WorkItem
from .enrich import keyphrase_stats, lexical
from .enrich import overview as overviews
from .enrich.embed import Embedder, MiniLMEmbedder, precision_note
from .enrich.keyphrases import KeyphraseExtractor
from .enrich.layout import LAYOUT_METHOD
from .enrich.layout import warm_up as warm_up_layout
from .enrich.lexical import lexical_text
from .enrich.tldr import METHOD as TLDR_METHOD
from .enrich.topics import MAX_NEW_SHARE
from .memory import peak_rss_mib, trim_heap
from .model import AUTHOR_TLDR, Paper
from .search.neighbours import STORED as NEIGHBOURS
from .search.neighbours import build_index_blob
from .sources.merge import merge_papers
from .store import sqlite as store
from .store.enrichment import PreviousBuild, previous_build, previous_enrichment
from .store.history import record_build
from .store.keyphrase_counts import KEYPHRASE_STATS, updated_keyphrase_stats
from .store.overviews import previous_overviews
from .store.resume import ResumeCache

#: A progress factory: ``progress(stage_description, total) -> update(n)`` (tqdm in the CLI, no-op in tests).
ProgressFactory = Callable[[str, int], Callable[[int], None]]

#: the per-paper stage's extra row while the embedding child works alone (what needs no vectors is done then)
PREPARE = "prepare (while embedding)"
#: below this many papers the per-paper stage compiles UMAP's code while the embedding children work alone
#: (:func:`paperatlas.enrich.layout.warm_up`, ~4-5 s of one core, shared with them instead of added after them);
#: from here the ~0.2 GB that compiling holds is kept out of the embedding's peak, and the seconds matter less
WARM_UP_MAX_PAPERS = 20_000


def no_progress(_desc: str, _total: int) -> Callable[[int], None]:
    """The progress factory that shows nothing (the default of :func:`paperatlas.build.build`)."""
    return lambda _n: None


@dataclass
class BuildOptions:
    """What the build was asked to do: :func:`paperatlas.build.build`'s arguments, unchanged by the stages."""

    source_paths: Sequence[str | Path]
    db: str | Path
    formats: Sequence[str | None] | None = None
    venue: str | None = None
    year: int | None = None
    n_topics: int | None = None
    n_areas: int | None = None
    embedder: Embedder | None = None
    progress: ProgressFactory = no_progress
    seed: int = 42
    tldr_backend: Any = None
    label_backend: Any = None
    refit_topics: bool = False
    replace: bool = False
    lock_timeout: float = 0.0
    on_wait: Callable[[str], None] | None = None
    strict: bool = False
    source_options: dict | None = None
    precision: str = "auto"


@dataclass
class BuildContext:
    """What the stages pass along; each field is set by the stage named beside it and read by later ones.

    Attributes:
        opts: the build's arguments.
        report: the :class:`BuildReport` being filled.
        engine: where the per-paper work runs (set by ``open``, or by the caller for a large atlas).
        exits: the open atlas's context (the private copy and the lock); closed by ``commit``.
        con: the private copy's connection (``open``).
        resume: vectors an interrupted build made (``open``); discarded by ``commit``.
        records: papers as read, before merging (``read``).
        papers: the merged papers (``merge``), enriched in place by later stages.
        model_name, dim: the embedding model and its vector size (``load-cache``).
        hashes: per paper, the hash of its embedded text; ``hashes_by_id`` the same by id (``load-cache``).
        vectors: ``(n_papers, dim)`` float32 embeddings (``load-cache``, completed by ``per-paper``).
        todo: rows to embed; ``stored``: ids whose stored vector is still right (``load-cache``).
        text_hashes: per paper, the hash of the text keyphrases and TL;DR come from (``keyphrases``).
        previous: paper id -> what the last build made from it (``keyphrases``; dropped once the statistics are made).
        keep_terms: the corpus changed little: keyphrases, statistics and index are updated, not refitted.
        label_terms: per paper, its best candidate phrases (label evidence).
        items: the per-paper work (``keyphrases``); ``kx``: the keyphrase extractor with its statistics.
        prepared: what the last build left that the topic stage reads (``per-paper`` or ``prepare``).
        topic_result: the :class:`~paperatlas.enrich.topics.TopicResult`; ``topics``: its topics (``topics``; their
            map positions filled in by ``layout``).
        overview_keys: topic id -> the key of its overview (``overviews``).
        named: the sources as recorded in the atlas (``write``).
    """

    opts: BuildOptions
    report: BuildReport = field(default_factory=BuildReport)
    engine: EngineBase | None = None
    exits: ExitStack = field(default_factory=ExitStack)
    con: Any = None
    resume: ResumeCache | None = None
    records: list[Paper] = field(default_factory=list)
    papers: list[Paper] = field(default_factory=list)
    model_name: str = ""
    dim: int = 0
    hashes: list[str] = field(default_factory=list)
    hashes_by_id: dict[str, str] = field(default_factory=dict)
    vectors: np.ndarray | None = None
    todo: set[int] = field(default_factory=set)
    stored: set[str] = field(default_factory=set)
    text_hashes: list[str] = field(default_factory=list)
    previous: dict = field(default_factory=dict)
    keep_terms: bool = False
    label_terms: list[list[str]] = field(default_factory=list)
    items: list[WorkItem] = field(default_factory=list)
    kx: KeyphraseExtractor | None = None
    acronyms: dict[str, str] = field(default_factory=dict)
    prepared: PreviousBuild | None = None
    topic_result: Any = None
    topics: list = field(default_factory=list)
    overview_keys: dict = field(default_factory=dict)
    named: list[str] = field(default_factory=list)

    def progress(self, desc: str, total: int) -> Callable[[int], None]:
        """A progress callback ``update(n)`` for ``total`` units of ``desc`` (the build's progress factory)."""
        return self.opts.progress(desc, total)


@dataclass(frozen=True)
class Stage:
    """One named step of the build.

    Attributes:
        name: its row in the stage table (``BuildReport.stage_seconds``); stages may share a row.
        run: ``run(ctx) -> None``.
        when: ``when(ctx) -> bool``: the stage runs (and has a row) only when true; None: always.
        own_rows: the stage writes its own time rows (the per-paper work splits its wall time by kind of work).
    """

    name: str
    run: Callable[[BuildContext], None]
    when: Callable[[BuildContext], bool] | None = None
    own_rows: bool = False


def run_stages(ctx: BuildContext, stages: Iterable[Stage]) -> None:
    """Run ``stages`` in order, adding each one's wall time (s) and the peak RSS after it (MiB) to ``ctx.report``.

    Args:
        ctx: the build's context.
        stages: the stages; one whose ``when`` is false is skipped and gets no row.

    Raises:
        Whatever a stage raises (the caller's ``ctx.exits`` then rolls the private copy back).
    """
    report = ctx.report
    for st in stages:
        if st.when is not None and not st.when(ctx):
            continue
        start = time.perf_counter()
        st.run(ctx)
        if not st.own_rows:
            report.stage_seconds[st.name] = report.stage_seconds.get(st.name, 0.0) + time.perf_counter() - start
        report.peak_rss_by_stage[st.name] = peak_rss_mib()


def read_sources(ctx: BuildContext) -> None:
    """``read``: every source, by :func:`paperatlas.sources.read` (a network reader shows its own progress)."""
    o = ctx.opts
    formats = list(o.formats) if o.formats else [None] * len(o.source_paths)
    hints = {k: v for k, v in (("venue", o.venue), ("year", o.year)) if v is not None}
    for path, fmt in zip(o.source_paths, formats, strict=True):
        ctx.records.extend(sources.read(path, format=fmt, strict=o.strict, **hints, **(o.source_options or {})))
    ctx.report.n_read = len(ctx.records)


def merge_records(ctx: BuildContext) -> None:
    """``merge``: the same paper from several records made one (:func:`~paperatlas.sources.merge.merge_papers`).

    Raises:
        paperatlas.build_report.BuildRefused: no papers, no ``replace``, and no atlas yet (refused before a lock
            file or directory is made).
    """
    ctx.papers = merge_papers(ctx.records)
    ctx.records = []
    ctx.report.n_papers = len(ctx.papers)
    if not ctx.papers and not ctx.opts.replace and not Path(ctx.opts.db).exists():
        check_not_a_wipe(ctx.opts.db, 0, set(), set())


def reuse_vectors(ctx: BuildContext) -> None:
    """``load-cache``: each paper's stored (or resumed) vector when its text and the model are unchanged."""
    papers, emb, report = ctx.papers, ctx.opts.embedder, ctx.report
    ctx.model_name, ctx.dim = (emb.name, emb.dim) if emb else (MiniLMEmbedder.name, MiniLMEmbedder.dim)
    ctx.hashes = [content_hash(p) for p in papers]
    ctx.hashes_by_id = dict(zip([p.id for p in papers], ctx.hashes, strict=True))
    cache = store.cached_embeddings(ctx.con, ctx.model_name)
    resumed = ctx.resume.get(ctx.model_name)  # what an interrupted build of this atlas embedded
    ctx.vectors = np.zeros((len(papers), ctx.dim), dtype=np.float32)
    for i, (p, h) in enumerate(zip(papers, ctx.hashes, strict=True)):
        hit = cache.get(p.id)
        if hit and hit[0] == h and hit[1].shape == (ctx.dim,):
            ctx.vectors[i] = hit[1]
            ctx.stored.add(p.id)  # its stored row holds its vector: not written again
        elif h in resumed and resumed[h].shape == (ctx.dim,):
            ctx.vectors[i] = resumed[h]
            report.n_resumed += 1
        else:
            ctx.todo.add(i)
    report.n_reused = len(papers) - len(ctx.todo)
    report.n_embedded = len(ctx.todo)
    if not ctx.todo:  # nothing to embed: a child started early is not needed
        ctx.engine.close()


def plan_work(ctx: BuildContext) -> None:
    """``keyphrases`` (first half): keep what the last build made from the same text; list the per-paper work.

    TL;DRs are always kept; keyphrases and label terms only while the corpus changes little (they depend on
    corpus counts; the same rule as keeping topics, :data:`~paperatlas.enrich.topics.MAX_NEW_SHARE`).
    """
    papers, report, o = ctx.papers, ctx.report, ctx.opts
    prev = previous_enrichment(ctx.con)
    ctx.text_hashes = [text_hash(p) for p in papers]
    changed = sum(1 for p, th in zip(papers, ctx.text_hashes, strict=True)
                  if p.id not in prev or prev[p.id].text_hash != th)
    ctx.keep_terms = not o.refit_topics and changed <= MAX_NEW_SHARE * len(papers)
    ctx.label_terms = [[] for _ in papers]  # a paper's 15 best candidate phrases: label evidence
    kp_method = KeyphraseExtractor.method
    for i, (p, th) in enumerate(zip(papers, ctx.text_hashes, strict=True)):
        e = prev.get(p.id)
        same = e is not None and e.text_hash == th
        need_tldr = o.tldr_backend is None and not (p.tldr and p.tldr_method == AUTHOR_TLDR)
        if need_tldr and same and e.tldr_method == TLDR_METHOD and e.tldr:
            p.tldr, p.tldr_method, need_tldr = e.tldr, e.tldr_method, False
            report.n_tldr_reused += 1
        need_kp = True
        if ctx.keep_terms and same and e.keyphrases_method == kp_method == e.terms_method and e.label_terms:
            p.keyphrases, p.keyphrases_method, ctx.label_terms[i] = e.keyphrases, kp_method, e.label_terms
            need_kp = False
            report.n_keyphrases_reused += 1
        if i in ctx.todo or need_tldr or need_kp:
            ctx.items.append(WorkItem(row=i, title=p.title, text=p.abstract or p.digest, abstract=p.abstract,
                                      embed=i in ctx.todo, tldr=need_tldr, keyphrases=need_kp))
    ctx.previous = prev  # read by keyphrase_statistics, then dropped


def keyphrase_statistics(ctx: BuildContext) -> None:
    """``keyphrases`` (second half): the corpus statistics keyphrases are scored with.

    While the corpus changes little, the last build's counts updated with the papers that came, changed or left
    (the embedding child embeds meanwhile); else fitted on the whole corpus (a minute at 42k papers; its bar counts
    the papers).
    """
    prev, ctx.previous = ctx.previous, {}
    if ctx.keep_terms:  # the child embeds while the statistics are updated
        ctx.engine.embed_ahead(ctx.items)  # (not beside a fit: the fit's memory and the child's are the peak)
    papers = ctx.papers
    ctx.kx = updated_keyphrase_stats(ctx.con, papers, ctx.text_hashes, prev) if ctx.keep_terms else None
    ctx.report.keyphrase_stats = "update" if ctx.kx is not None else "fit"
    if ctx.kx is None:
        tick = ctx.progress("keyphrase statistics", len(papers))  # papers counted (the fit's long pass)
        ctx.kx = keyphrase_stats.fit(((p.title, p.abstract or p.digest) for p in papers), progress=tick)
        trim_heap()  # the fit's full counts (millions of phrases at 42k papers) are gone: give the memory back


def _prepare(ctx: BuildContext) -> PreviousBuild:
    """What the last build left that the topic stage reads (needs no vectors)."""
    return previous_build(ctx.con, ctx.kx, ctx.papers, ctx.text_hashes, ctx.label_terms, ctx.hashes_by_id,
                          ctx.model_name)


def _fits_a_fresh_map(ctx: BuildContext) -> bool:
    """Whether the topic stage will fit a new map (no usable topic model, or a refit asked) of a small build.

    Small: below :data:`WARM_UP_MAX_PAPERS` papers.
    """
    o = ctx.opts
    return len(ctx.papers) < WARM_UP_MAX_PAPERS and (
        ctx.prepared.topic_model is None or o.refit_topics or o.n_topics is not None or o.n_areas is not None)


def run_per_paper(ctx: BuildContext) -> None:
    """``per-paper``: embeddings, keyphrases and extractive TL;DRs on the engine, batch by batch (a bar counts papers).

    Its rows: on the local engine the wall time split by kind of work (``embed``, ``keyphrases``, ``tldr``, the
    rest of the loop counted as the embedding's) plus :data:`PREPARE`; on another engine one ``per-paper (NAME)``
    row. Vectors are written to the resume file as they come.
    """
    papers, report, engine, kx = ctx.papers, ctx.report, ctx.engine, ctx.kx
    what = "embedding, keyphrases, TL;DRs" if ctx.todo else "keyphrases, TL;DRs"
    start = time.perf_counter()
    for res in engine.run(ctx.items, kx, progress=ctx.progress(what, len(ctx.items))):
        if res.waiting and ctx.prepared is None:  # only the embedding child is busy: do what needs no vectors
            t = time.perf_counter()
            ctx.prepared = _prepare(ctx)
            if _fits_a_fresh_map(ctx):
                warm_up_layout(ctx.opts.seed)
            report.stage_seconds[PREPARE] = time.perf_counter() - t
        if res.embedded:
            ctx.vectors[res.embedded] = res.vectors
            ctx.resume.add(ctx.model_name, [ctx.hashes[i] for i in res.embedded], res.vectors)
        for i, kps, terms, tldr in zip(res.rows, res.keyphrases, res.label_terms, res.tldrs, strict=True):
            if kps is not None:
                papers[i].keyphrases, papers[i].keyphrases_method = kps, kx.method
                ctx.label_terms[i] = terms or []
            if tldr is not None:
                papers[i].tldr, papers[i].tldr_method = tldr, TLDR_METHOD
        for k, v in res.seconds.items():
            report.worker_seconds[k] = report.worker_seconds.get(k, 0.0) + v
    report.per_paper_seconds = time.perf_counter() - start
    seconds = report.stage_seconds
    if engine.name != "local":
        seconds[f"per-paper ({engine.name})"] = report.per_paper_seconds
        return
    for k, v in report.worker_seconds.items():  # in this process: the stage times are wall time
        seconds[k] = seconds.get(k, 0.0) + v
    # the rest of the loop's wall time (the child's start-up, the resume file's writes) is the embedding's
    rest = report.per_paper_seconds - sum(report.worker_seconds.values()) - seconds.get(PREPARE, 0.0)
    if rest > 0:
        key = "embed" if ctx.todo else "keyphrases"
        seconds[key] = seconds.get(key, 0.0) + rest


def write_embeddings(ctx: BuildContext) -> None:
    """``write-embeddings``: the new vectors into the atlas (the stored ones are not written again).

    Also notes in the report which arithmetic embedded them and why (``BuildReport.precision``).
    """
    trim_heap()
    if ctx.todo:
        emb = ctx.opts.embedder
        ctx.report.precision = (precision_note(ctx.opts.precision) if emb is None
                                else f"{getattr(emb, 'precision', 'unknown')} (the embedder given)")
        n = getattr(ctx.engine, "processes", 1) if getattr(ctx.engine, "embed_in_child", False) else 0
        if n:
            ctx.report.precision += f"; embedded in {n} child process{'es' if n > 1 else ''}"
    store.write_embeddings(ctx.con, ctx.model_name, [p.id for p in ctx.papers], ctx.hashes, ctx.vectors,
                           unchanged=ctx.stored)


def release_keyphrase_stats(ctx: BuildContext) -> None:
    """Let go of the keyphrase statistics and the per-paper work items once every paper is annotated.

    Only the corpus's acronyms are read again (the atlas's metadata); the statistics themselves are written from
    their serialised copy (``ctx.prepared``). At 42k papers this frees ~220 MB of Python objects before the topic
    stage and the map, where the build's memory peaks.
    """
    ctx.acronyms = ctx.kx.acronyms if ctx.kx is not None else {}
    ctx.kx, ctx.items = None, []
    trim_heap()


def prepare_topics(ctx: BuildContext) -> None:
    """``prepare``: what the last build left that the topic stage reads (its topic model, placements, topics).

    Runs only when the per-paper stage did not do it while the embedding child worked alone (:data:`PREPARE`).
    """
    ctx.prepared = _prepare(ctx)


def generate_tldrs(ctx: BuildContext) -> None:
    """``tldr``: a generative TL;DR per paper, one at a time (only with a TL;DR backend; a bar counts papers)."""
    from .llm.tldr import generate_tldr

    tick = ctx.progress("tldr", len(ctx.papers))
    for p in ctx.papers:
        if not (p.tldr and p.tldr_method == AUTHOR_TLDR):  # the authors' own TL;DR is kept as given
            p.tldr, p.tldr_method = generate_tldr(ctx.opts.tldr_backend, p.title, p.abstract or p.digest)
        tick(1)


def rewrite_topic_labels(ctx: BuildContext) -> None:
    """``topic labels``: new or changed labels rewritten by the label backend (only with one; a bar counts them)."""
    from .llm.labels import rewrite_labels

    papers, topics, report = ctx.papers, ctx.topics, ctx.report
    old_topics = ctx.prepared.topics
    confidence = ctx.topic_result.confidence
    central = sorted(range(len(papers)), key=lambda i: -float(confidence[i]))
    titles: dict[int, list[str]] = {}
    parent = {t.id: t.parent_id for t in topics}
    for i in central:
        tid = papers[i].topic_id
        for key in (tid, parent.get(tid)):
            if key is not None:
                titles.setdefault(key, []).append(papers[i].title)
    fresh = {t.id for t in topics if t.id not in old_topics or old_topics[t.id].label != t.label}
    report.labels_rejected = rewrite_labels(ctx.opts.label_backend, topics, titles, only=fresh,
                                            progress=ctx.progress("topic labels", len(fresh)))
    report.n_labels_generated = sum(t.id in fresh and "; label by " in t.method for t in topics)


def apply_edits(ctx: BuildContext) -> None:
    """``edits``: the reader's last word (TL;DR, keyphrases, topic labels and placements) wins over all the above.

    Re-links first (a corrected title changes the id); sizes follow a moved paper; an edit whose topic is gone is
    named in ``report.notes``.
    """
    from .store.topic_overrides import apply_reader_edits

    apply_reader_edits(ctx.con, ctx.papers, ctx.topics, ctx.report)


def make_overviews(ctx: BuildContext) -> None:
    """``overviews``: each topic's overview; a topic of the same label and papers as the last build's keeps its own."""
    ctx.overview_keys, ctx.report.n_overviews_computed = overviews.refresh_overviews(
        ctx.topics, ctx.papers, ctx.vectors, previous_overviews(ctx.con))


def write_atlas(ctx: BuildContext) -> None:
    """``write``: the build's history entry, papers, topics, models and metadata."""
    papers, con, report = ctx.papers, ctx.con, ctx.report
    ctx.named = [str(s) if sources.network_source(s) else str(Path(s)) for s in ctx.opts.source_paths]
    entry = record_build(con, [(p.id, p.title) for p in papers], ctx.named)  # before the papers are rewritten
    report.build_number, report.n_new = entry.id, entry.n_new
    store.write_papers(con, papers, ctx.hashes_by_id)
    store.write_topics(con, ctx.topics, ctx.overview_keys)
    store.write_model_from(con, "topics", ctx.topic_result.model.dump_file)  # streamed: the 42k model is 132 MB
    store.write_model(con, KEYPHRASE_STATS, ctx.prepared.keyphrase_stats)
    store.set_meta(con, sources=ctx.named, embed_model=ctx.model_name,
                   layout_method=LAYOUT_METHOD, built_at=time.strftime("%Y-%m-%dT%H:%M:%S"),
                   n_papers=len(papers), acronyms=ctx.acronyms)


def write_indexes(ctx: BuildContext) -> None:
    """``indexes``: the query-side indexes (lexical TF-IDF and the neighbour index), made now, not at a first query.

    What the stages above held (the topic model and its text space; the keyphrase statistics went before the topic
    stage, :func:`release_keyphrase_stats`) is let go first: the TF-IDF fit counts every bigram of the corpus and
    would otherwise raise the build's peak memory. The neighbour index holds the paper representation (MiniLM ⊕ LSA,
    stored with the topic model).
    """
    papers, con, vectors = ctx.papers, ctx.con, ctx.vectors
    model = ctx.topic_result.model
    representation = model.x if model.x is not None and len(model.x) == len(vectors) else vectors
    del model
    ctx.topic_result = ctx.prepared = None
    ctx.label_terms = []
    trim_heap()
    texts = [lexical_text(p.title, p.abstract, p.digest, p.tldr) for p in papers]
    ids = [p.id for p in papers]
    # while the corpus changes little, the stored index keeps its vocabulary and rows (only new rows are made)
    index = lexical.update_index(store.read_model(con, lexical.NAME), ids, texts, MAX_NEW_SHARE) \
        if ctx.keep_terms else None
    matrix, terms, idf = index if index is not None else lexical.fit_index(texts)
    store.write_model(con, lexical.NAME, lexical.dumps(matrix, terms, ids, texts, idf))
    del matrix, terms, texts, index
    try:
        store.write_model(con, NEIGHBOURS, build_index_blob(representation))
    except ImportError as e:  # searched exactly (slower, same results) until USearch is installed
        store.write_model(con, NEIGHBOURS, None)
        ctx.report.notes.append(str(e))


def commit(ctx: BuildContext) -> None:
    """``commit``: the private copy replaces the atlas (atomically) and the lock is let go; the resume file goes."""
    ctx.exits.close()
    ctx.con = None
    if ctx.resume is not None:  # the atlas now holds every vector: nothing to resume
        ctx.resume.discard()
