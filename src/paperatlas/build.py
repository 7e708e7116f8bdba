"""The build pipeline: read listings → merge → embed (incremental) → keyphrases → TL;DR → topics + map → store.

A build is atomic (it works on a private copy of the atlas file, see :func:`paperatlas.store.atomic_rebuild`) and
incremental (a paper's embedding is reused when its title + abstract and the model are unchanged). The stages
report timing through :class:`BuildReport`.

A build never silently wipes an atlas: it is refused (:class:`BuildRefused`, nothing written) when the listings
yield no papers or would keep fewer than half of the atlas's papers, unless ``replace=True``. Builds of one atlas
run one at a time (:mod:`paperatlas.store.lock`).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import sources
from .engines import WorkItem
from .engines.local import LocalEngine
from .enrich import keyphrase_stats, lexical
from .enrich import overview as overviews
from .enrich.embed import Embedder, MiniLMEmbedder, paper_text
from .enrich.keyphrases import KeyphraseExtractor
from .enrich.layout import LAYOUT_METHOD
from .enrich.lexical import lexical_text
from .enrich.tldr import METHOD as TLDR_METHOD
from .enrich.topics import MAX_NEW_SHARE, update_topics
from .memory import peak_rss_mib, trim_heap
from .model import AUTHOR_TLDR, Paper
from .search.neighbours import STORED as NEIGHBOURS
from .search.neighbours import build_index_blob
from .sources.merge import merge_papers
from .store import sqlite as store
from .store.enrichment import PreviousBuild, previous_build, previous_enrichment
from .store.history import record_build
from .store.keyphrase_counts import KEYPHRASE_STATS as KEYPHRASE_STATS  # the models table's name (tests)
from .store.keyphrase_counts import hash_text, updated_keyphrase_stats
from .store.lock import DEFAULT_TIMEOUT as DEFAULT_LOCK_TIMEOUT
from .store.overviews import previous_overviews
from .store.resume import ResumeCache

#: A progress factory: ``progress(stage_description, total) -> update(n)`` (tqdm in the CLI, no-op in tests).
ProgressFactory = Callable[[str, int], Callable[[int], None]]


def _no_progress(_desc: str, _total: int) -> Callable[[int], None]:
    return lambda _n: None


class BuildRefused(ValueError):
    """A build that would wipe (most of) an atlas without ``replace=True``; nothing was written.

    The message names the atlas, the counts and the ``--replace`` flag (``replace=True``).
    """


def _check_not_a_wipe(db: str | Path, n_new: int, old_ids: set[str], new_ids: set[str]) -> None:
    """Raise :class:`BuildRefused` when a build of ``n_new`` papers would empty or mostly replace the atlas.

    Args:
        db: The atlas file (named in the message).
        n_new: Papers the listings yield (after merging).
        old_ids: Ids of the papers now in the atlas (empty for a new atlas).
        new_ids: Ids of the papers the build would store.

    Raises:
        BuildRefused: ``n_new`` is 0, or fewer than half of ``old_ids`` are in ``new_ids``.
    """
    flag = "pass --replace to do it anyway"
    if n_new == 0:
        what = f"replace its {len(old_ids)} papers with none" if old_ids else "build an empty atlas"
        raise BuildRefused(f"{db}: the listings yield 0 papers; refusing to {what}; {flag}")
    kept = len(old_ids & new_ids)
    if old_ids and 2 * kept < len(old_ids):
        raise BuildRefused(f"{db}: this build would keep {kept} of the atlas's {len(old_ids)} papers ({n_new} papers "
                           f"in the listings); refusing to replace it; {flag}")


@dataclass
class BuildReport:
    """What a build did: per-stage wall time (seconds), counts, and peak resident memory (MiB).

    Attributes:
        n_read: records read from the sources (before merging).
        n_papers: papers after merging.
        n_embedded: papers embedded by this build.
        n_reused: papers whose stored embedding was reused.
        n_resumed: of those, papers whose vector an interrupted build had made.
        n_tldr_reused: papers whose TL;DR the last build made from the same text (kept, not recomputed).
        n_keyphrases_reused: papers whose keyphrases were kept (same text, and at most 25% of the papers new or
            changed: keyphrase scores depend on corpus counts).
        n_topics: sub-topics.
        n_areas: areas.
        topic_mode: how the topics were made: "fit" (first build), "refit" (fresh, matched to the old ids) or
            "update".
        topics_kept_share: share of the papers already in the atlas that keep their topic id (None on a first
            build).
        n_low_confidence: papers marked low-confidence in their topic.
        labels_rejected: topic id -> why its generated label was not used (only with a label backend).
        n_labels_generated: topic labels rewritten by the label backend.
        n_with_secondary: papers with at least one secondary topic.
        n_overviews_computed: topics whose overview this build made (the others kept the last build's).
        stage_seconds: stage name -> wall time, seconds.
        worker_seconds: per-paper stage -> seconds, summed over the engine's workers.
        per_paper_seconds: wall time of the per-paper stages together, seconds.
        peak_rss_mib: peak resident memory of the process, MiB.
        peak_rss_by_stage: stage -> peak resident memory when the stage ended, MiB.
        keyphrase_stats: "fit" (counted over the whole corpus) or "update" (the last build's counts, updated).
        build_number: this build's number in the atlas's history (:mod:`paperatlas.store.history`).
        n_new: papers no earlier build of the atlas had (``paperatlas new`` lists them).
        notes: one-line remarks for the reader (e.g. the neighbour index needs USearch).
        topic_edits_not_applied: the reader's topic renames/moves whose topic is gone, one line a kind (in notes).
    """

    n_read: int = 0
    n_papers: int = 0
    build_number: int = 0
    n_new: int = 0
    n_embedded: int = 0
    n_reused: int = 0
    #: of the reused vectors, those an interrupted build had made (the resume file, :mod:`paperatlas.store.resume`)
    n_resumed: int = 0
    #: papers whose TL;DR / keyphrases the last build made from the same text and this one kept
    n_tldr_reused: int = 0
    n_keyphrases_reused: int = 0
    n_topics: int = 0
    n_areas: int = 0
    #: how the topics were made: "fit" (first build), "refit" (fresh, matched to the old ids) or "update"
    topic_mode: str = ""
    #: share of the papers already in the atlas that keep their topic id (None on a first build)
    topics_kept_share: float | None = None
    n_low_confidence: int = 0
    #: topic id -> why its generated label was not used (only with a label backend)
    labels_rejected: dict[int, str] = field(default_factory=dict)
    n_labels_generated: int = 0
    n_with_secondary: int = 0
    n_overviews_computed: int = 0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    #: embed / keyphrases / tldr -> seconds spent in them, summed over the engine's workers
    worker_seconds: dict[str, float] = field(default_factory=dict)
    #: wall time of the per-paper stages (embedding, keyphrases, TL;DRs) together, seconds
    per_paper_seconds: float = 0.0
    peak_rss_mib: float = 0.0
    #: stage -> peak resident memory of the process when the stage ended, MiB (the first stage at the final peak
    #: is the one that set it; "per-paper" is the embedding, keyphrase and TL;DR work together)
    peak_rss_by_stage: dict[str, float] = field(default_factory=dict)
    #: how the keyphrase statistics were made: "fit" (the whole corpus) or "update" (the last build's, updated)
    keyphrase_stats: str = ""
    #: what the reader should know (e.g. an index that could not be made)
    notes: list[str] = field(default_factory=list)
    topic_edits_not_applied: list[str] = field(default_factory=list)

    @property
    def total_seconds(self) -> float:
        """Sum of the stage times, seconds."""
        return sum(self.stage_seconds.values())


def content_hash(p: Paper) -> str:
    """SHA-1 of the embedded text (title + abstract): a paper is re-embedded only when this changes.

    Args:
        p: the paper.

    Returns:
        The hex digest of :func:`paperatlas.enrich.embed.paper_text`.
    """
    return hashlib.sha1(paper_text(p.title, p.abstract).encode()).hexdigest()


def text_hash(p: Paper) -> str:
    """SHA-1 of the text keyphrases and TL;DR are made from (title + abstract, or the digest without abstract).

    Args:
        p: the paper.

    Returns:
        The hex digest.
    """
    return hash_text(p.title, p.abstract or p.digest)


#: from this many papers (in the atlas, not only those to embed: the later stages' memory grows with the atlas) the
#: default model runs in a child process that exits after the embedding, so torch's ~1 GB is not under the topic
#: stage (:mod:`paperatlas.engines.embed_child`); a smaller build loads it here and keeps it for the next build in
#: the same process (the tests, a notebook), where a child would load torch and the model again each time (3-5 s)
EMBED_IN_CHILD_MIN_PAPERS = 5_000


class _StageClock:
    """``stage(name)`` adds the wall time since the last call to the report's ``name`` stage (and its peak RSS)."""

    def __init__(self, report: BuildReport):
        self.report = report
        self.last = time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.report.stage_seconds[name] = self.report.stage_seconds.get(name, 0.0) + now - self.last
        self.report.peak_rss_by_stage[name] = peak_rss_mib()
        self.last = now

    def reset(self) -> None:
        """Start the next stage now (the time since the last call was counted elsewhere)."""
        self.last = time.perf_counter()


def build(source_paths: Sequence[str | Path], db: str | Path, formats: Sequence[str | None] | None = None,
          venue: str | None = None, year: int | None = None, n_topics: int | None = None,
          embedder: Embedder | None = None, progress: ProgressFactory = _no_progress, seed: int = 42,
          tldr_backend=None, n_areas: int | None = None, refit_topics: bool = False,
          label_backend=None, replace: bool = False, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
          on_wait: Callable[[str], None] | None = None, strict: bool = False,
          source_options: dict | None = None, precision: str = "auto", engine=None) -> BuildReport:
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
        engine: where the per-paper work runs: a :class:`paperatlas.engines.local.LocalEngine` (the default) or
            a :class:`paperatlas.engines.ray_engine.RayEngine` (:func:`paperatlas.engines.get_engine`).

    Returns:
        The :class:`BuildReport`.

    Raises:
        paperatlas.model.SourceError: for unreadable input (before anything is written).
        BuildRefused: the build would empty the atlas or drop most of its papers and ``replace`` is false
            (nothing is written).
        paperatlas.store.lock.AtlasBusy: another build of the atlas ran for longer than ``lock_timeout``.
        paperatlas.enrich.embed.EmbedderUnavailable: when the model package is missing.
    """
    report = BuildReport()
    stage = _StageClock(report)
    if engine is None and embedder is None and store.stored_paper_count(db) >= EMBED_IN_CHILD_MIN_PAPERS:
        engine = LocalEngine(precision=precision, embed_in_child=True)  # a large atlas: its child starts loading
        engine.start_embedder()  # the model while the listings are read (ended when nothing needs a vector)
    try:
        formats = list(formats) if formats else [None] * len(source_paths)
        records: list[Paper] = []
        for path, fmt in zip(source_paths, formats, strict=True):
            hints = {k: v for k, v in (("venue", venue), ("year", year)) if v is not None}
            records.extend(sources.read(path, format=fmt, strict=strict, **hints, **(source_options or {})))
        report.n_read = len(records)
        papers = merge_papers(records)
        report.n_papers = len(papers)
        stage("read+merge")
        if not papers and not replace and not Path(db).exists():
            _check_not_a_wipe(db, 0, set(), set())  # refused before a lock file or directory is made
        if engine is None:
            engine = LocalEngine(precision=precision, embedder=embedder,
                                 embed_in_child=len(papers) >= EMBED_IN_CHILD_MIN_PAPERS)
        if hasattr(engine, "start_embedder"):  # the child loads its model while the atlas's vectors are read
            engine.start_embedder()
        return _build(papers, db, report, stage, source_paths, embedder, progress, seed, tldr_backend, n_areas,
                      n_topics, refit_topics, label_backend, replace, lock_timeout, on_wait, engine)
    finally:  # the embedding child never outlives the build
        if hasattr(engine, "close"):
            engine.close()


def _build(papers: list[Paper], db, report: BuildReport, stage: _StageClock, source_paths, embedder,
           progress: ProgressFactory, seed: int, tldr_backend, n_areas, n_topics, refit_topics: bool, label_backend,
           replace: bool, lock_timeout: float, on_wait, engine) -> BuildReport:
    """:func:`build` from the merged papers on (the arguments are :func:`build`'s)."""
    resume: ResumeCache | None = None
    with store.atomic_rebuild(db, lock_timeout=lock_timeout, on_wait=on_wait) as con:
        resume = ResumeCache(db)
        if not replace:  # under the lock: the atlas as the previous build left it
            _check_not_a_wipe(db, len(papers), set(store.previous_placement(con)), {p.id for p in papers})
        # --- embeddings (incremental), keyphrases, TL;DRs: per paper, batch by batch, on the engine ---
        model_name, dim = (embedder.name, embedder.dim) if embedder else (MiniLMEmbedder.name, MiniLMEmbedder.dim)
        hashes = [content_hash(p) for p in papers]
        hashes_by_id = dict(zip([p.id for p in papers], hashes, strict=True))
        cache = store.cached_embeddings(con, model_name)
        resumed = resume.get(model_name)  # what an interrupted build of this atlas embedded
        vectors = np.zeros((len(papers), dim), dtype=np.float32)
        todo = set()
        stored = set()  # ids whose stored row holds their vector: not written again
        for i, (p, h) in enumerate(zip(papers, hashes, strict=True)):
            hit = cache.get(p.id)
            if hit and hit[0] == h and hit[1].shape == (dim,):
                vectors[i] = hit[1]
                stored.add(p.id)
            elif h in resumed and resumed[h].shape == (dim,):
                vectors[i] = resumed[h]
                report.n_resumed += 1
            else:
                todo.add(i)
        del cache, resumed
        report.n_reused = len(papers) - len(todo)
        report.n_embedded = len(todo)
        if not todo and hasattr(engine, "close"):  # nothing to embed: a child started early is not needed
            engine.close()
        stage("load-cache")

        # what the last build made from the same text is kept: TL;DRs always, keyphrases and label terms while
        # the corpus changes little (they depend on corpus counts; the same rule as keeping topics)
        prev = previous_enrichment(con)
        text_hashes = [text_hash(p) for p in papers]
        changed = sum(1 for p, th in zip(papers, text_hashes, strict=True)
                      if p.id not in prev or prev[p.id].text_hash != th)
        keep_terms = not refit_topics and changed <= MAX_NEW_SHARE * len(papers)
        label_terms: list[list[str]] = [[] for _ in papers]  # a paper's 15 best candidate phrases: label evidence
        items = []
        kp_method = KeyphraseExtractor.method
        for i, (p, th) in enumerate(zip(papers, text_hashes, strict=True)):
            e = prev.get(p.id)
            same = e is not None and e.text_hash == th
            need_tldr = tldr_backend is None and not (p.tldr and p.tldr_method == AUTHOR_TLDR)
            if need_tldr and same and e.tldr_method == TLDR_METHOD and e.tldr:
                p.tldr, p.tldr_method, need_tldr = e.tldr, e.tldr_method, False
                report.n_tldr_reused += 1
            need_kp = True
            if keep_terms and same and e.keyphrases_method == kp_method == e.terms_method and e.label_terms:
                p.keyphrases, p.keyphrases_method, label_terms[i] = e.keyphrases, kp_method, e.label_terms
                need_kp = False
                report.n_keyphrases_reused += 1
            if i in todo or need_tldr or need_kp:
                items.append(WorkItem(row=i, title=p.title, text=p.abstract or p.digest, abstract=p.abstract,
                                      embed=i in todo, tldr=need_tldr, keyphrases=need_kp))
        if keep_terms and hasattr(engine, "embed_ahead"):  # the child embeds while the statistics are updated
            engine.embed_ahead(items)  # (not beside a fit: the fit's memory and the child's together are the peak)
        # the keyphrase statistics: the last build's, updated with the papers that came, changed or left, while
        # the corpus changes little; else fitted on the whole corpus (a minute at 42k papers)
        kx = updated_keyphrase_stats(con, papers, text_hashes, prev) if keep_terms else None
        report.keyphrase_stats = "update" if kx is not None else "fit"
        if kx is None:
            kx = keyphrase_stats.fit((p.title, p.abstract or p.digest) for p in papers)  # compacted: -0.4 GB
            trim_heap()  # the fit's full counts (millions of phrases at 42k papers) are gone: give the memory back
        stage("keyphrases")
        del prev
        what = "embedding, keyphrases, TL;DRs" if todo else "keyphrases, TL;DRs"
        loop_start = time.perf_counter()
        prepared: PreviousBuild | None = None
        for res in engine.run(items, kx, progress=progress(what, len(items))):
            if res.waiting and prepared is None:  # only the embedding child is busy: do what needs no vectors
                t = time.perf_counter()
                prepared = previous_build(con, kx, papers, text_hashes, label_terms, hashes_by_id, model_name)
                report.stage_seconds["prepare (while embedding)"] = time.perf_counter() - t
            if res.embedded:
                vectors[res.embedded] = res.vectors
                resume.add(model_name, [hashes[i] for i in res.embedded], res.vectors)
            for i, kps, terms, tldr in zip(res.rows, res.keyphrases, res.label_terms, res.tldrs, strict=True):
                if kps is not None:
                    papers[i].keyphrases, papers[i].keyphrases_method = kps, kx.method
                    label_terms[i] = terms or []
                if tldr is not None:
                    papers[i].tldr, papers[i].tldr_method = tldr, TLDR_METHOD
            for k, v in res.seconds.items():
                report.worker_seconds[k] = report.worker_seconds.get(k, 0.0) + v
        report.per_paper_seconds = time.perf_counter() - loop_start
        if engine.name == "local":  # in this process: the stage times are wall time
            for k, v in report.worker_seconds.items():
                report.stage_seconds[k] = report.stage_seconds.get(k, 0.0) + v
            # the rest of the loop's wall time (the child's start-up, the resume file's writes) is the embedding's
            rest = report.per_paper_seconds - sum(report.worker_seconds.values()) \
                - report.stage_seconds.get("prepare (while embedding)", 0.0)
            if rest > 0:
                key = "embed" if todo else "keyphrases"
                report.stage_seconds[key] = report.stage_seconds.get(key, 0.0) + rest
            stage.reset()
        else:
            stage(f"per-paper ({engine.name})")
        report.peak_rss_by_stage["per-paper"] = peak_rss_mib()
        trim_heap()
        store.write_embeddings(con, model_name, [p.id for p in papers], hashes, vectors, unchanged=stored)
        if prepared is None:
            prepared = previous_build(con, kx, papers, text_hashes, label_terms, hashes_by_id, model_name)
        stage("write-embeddings")
        if tldr_backend is not None:  # a generative TL;DR: here, one paper at a time
            from .llm.tldr import generate_tldr

            tick = progress("tldr", len(papers))
            for p in papers:
                if not (p.tldr and p.tldr_method == AUTHOR_TLDR):  # the authors' own TL;DR is kept as given
                    p.tldr, p.tldr_method = generate_tldr(tldr_backend, p.title, p.abstract or p.digest)
                tick(1)
            stage("tldr")

        # --- topics + 2-D map ---
        tick = progress("topics+map", 1)
        prev_model, prev_place, old_topics = prepared.topic_model, prepared.placement, prepared.topics
        # fewer papers than the stored sub-topics: the stored model cannot be updated (k-means), so refit
        refit_topics = refit_topics or len(papers) < sum(t.level == 1 for t in old_topics.values())
        res = update_topics([p.id for p in papers], vectors,
                            [paper_text(p.title, p.abstract or p.digest) for p in papers],
                            [t or p.given_keyphrases for t, p in zip(label_terms, papers, strict=True)],
                            previous=prev_model, previous_papers=prev_place,
                            previous_topics=old_topics, n_areas=n_areas, n_topics=n_topics,
                            refit=refit_topics, seed=seed, embed_model=model_name)
        for i, p in enumerate(papers):
            p.topic_id = int(res.topic_id[i])
            p.topic_confidence = round(float(res.confidence[i]), 4)
            p.low_confidence = bool(res.low_confidence[i])
            p.secondary_topic_ids = res.secondary[i]
            p.x, p.y = float(res.xy[i, 0]), float(res.xy[i, 1])
        topics = res.topics
        for t in topics:  # a label kept from the last build keeps its provenance (e.g. a generated label)
            if t.id in old_topics and old_topics[t.id].label == t.label:
                t.method = old_topics[t.id].method or t.method
        if label_backend is not None:
            from .llm.labels import rewrite_labels

            confidence = res.confidence
            central = sorted(range(len(papers)), key=lambda i: -float(confidence[i]))
            titles: dict[int, list[str]] = {}
            parent = {t.id: t.parent_id for t in topics}
            for i in central:
                tid = papers[i].topic_id
                for key in (tid, parent.get(tid)):
                    if key is not None:
                        titles.setdefault(key, []).append(papers[i].title)
            fresh = {t.id for t in topics if t.id not in old_topics or old_topics[t.id].label != t.label}
            report.labels_rejected = rewrite_labels(label_backend, topics, titles, only=fresh,
                                                    progress=progress("topic labels", len(fresh)))
            report.n_labels_generated = sum(t.id in fresh and "; label by " in t.method for t in topics)
        report.n_topics = sum(t.level == 1 for t in topics)
        report.n_areas = sum(t.level == 0 for t in topics)
        report.topic_mode = res.mode
        report.topics_kept_share = res.kept_share
        report.n_low_confidence = int(res.low_confidence.sum())
        report.n_with_secondary = sum(bool(s) for s in res.secondary)
        tick(1)
        stage("topics+map")

        # the reader's last word: overrides (TL;DR, keyphrases, topic labels and placements) win over all the above
        from .store.topic_overrides import apply_reader_edits  # re-links first: a corrected title changes the id
        apply_reader_edits(con, papers, topics, report)  # sizes follow a moved paper; a gone topic: in report.notes
        stage("topics+map")  # a topic of the same label and papers as the last build's keeps its overview:
        keys, report.n_overviews_computed = overviews.refresh_overviews(topics, papers, vectors,
                                                                        previous_overviews(con))
        stage("overviews")
        named = [str(s) if sources.network_source(s) else str(Path(s)) for s in source_paths]
        entry = record_build(con, [(p.id, p.title) for p in papers], named)  # before the papers are rewritten
        report.build_number, report.n_new = entry.id, entry.n_new
        store.write_papers(con, papers, hashes_by_id)
        store.write_topics(con, topics, keys)
        store.write_model_from(con, "topics", res.model.dump_file)  # streamed: the 42k model is 132 MB
        store.write_model(con, KEYPHRASE_STATS, prepared.keyphrase_stats)
        store.set_meta(con, sources=named, embed_model=model_name,
                       layout_method=LAYOUT_METHOD, built_at=time.strftime("%Y-%m-%dT%H:%M:%S"),
                       n_papers=len(papers), acronyms=kx.acronyms)
        stage("write")
        # the query-side indexes, made now rather than at a reader's first request; what the stages above held
        # (the keyphrase extractor's counts, the topic model and its text space) is let go first: the TF-IDF fit
        # counts every bigram of the corpus and would otherwise raise the build's peak memory
        # the paper representation (MiniLM ⊕ LSA, stored with the topic model) is what the neighbour index holds
        representation = res.model.x if res.model.x is not None and len(res.model.x) == len(vectors) else vectors
        del kx, res, items, label_terms, prev_model, prev_place, old_topics, prepared
        trim_heap()
        texts = [lexical_text(p.title, p.abstract, p.digest, p.tldr) for p in papers]
        ids = [p.id for p in papers]
        # while the corpus changes little, the stored index keeps its vocabulary and rows (only new rows are made)
        index = lexical.update_index(store.read_model(con, lexical.NAME), ids, texts, MAX_NEW_SHARE) \
            if keep_terms else None
        matrix, terms, idf = index if index is not None else lexical.fit_index(texts)
        store.write_model(con, lexical.NAME, lexical.dumps(matrix, terms, ids, texts, idf))
        del matrix, terms, texts, index
        try:
            store.write_model(con, NEIGHBOURS, build_index_blob(representation))
        except ImportError as e:  # searched exactly (slower, same results) until USearch is installed
            store.write_model(con, NEIGHBOURS, None)
            report.notes.append(str(e))
        stage("indexes")
    stage("write")
    if resume is not None:  # the atlas now holds every vector: nothing to resume
        resume.discard()
    report.peak_rss_mib = peak_rss_mib()
    return report
