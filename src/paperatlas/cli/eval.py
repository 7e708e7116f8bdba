"""``paperatlas eval``: score our methods and the baselines side by side on public gold data.

The commands parse their options and print; loading the gold data, running the methods, scoring and formatting
the tables is :mod:`paperatlas.eval`'s. Its functions are called through their modules (``topic_eval.embed_texts``)
so that tests can replace them. An :class:`paperatlas.eval.EvalUnavailable` (missing package or gold file)
becomes a :class:`click.ClickException` with the same message.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from ..enrich.embed import paper_text
from ..eval import (
    EvalUnavailable,
    gold_sets,
    keyphrase_eval,
    label_quality,
    recommend_eval,
    related_eval,
    run_compare,
    search_eval,
    tldr_eval,
    topic_eval,
    topic_filing,
)
from ..llm.backends import BACKENDS, BackendError
from ._common import choice_help, db_option, open_atlas, tqdm_progress

_GOLD_CLASSES_HELP = ("Gold set: awesome (seed 004 sections without Others), aaai (AAAI 2022 primary areas), "
                      "cvpr2019, iccv2019, cvpr2017, iccv2017 (sessions), or a listing FILE (repeatable).")


@contextmanager
def _click_errors() -> Iterator[None]:
    """Show an :class:`EvalUnavailable` as a click error with the same message."""
    try:
        yield
    except EvalUnavailable as e:
        raise click.ClickException(str(e)) from e


def _echo_goals(goals: list[str]) -> None:
    if goals:
        click.echo()
        click.echo("Goal check")
        for line in goals:
            click.echo(f"  {line}")


@click.group(name="eval")
def eval_group() -> None:
    """Score TL;DRs, keyphrases and topics against public gold data, ours vs baselines, in one run.

    \b
    paperatlas eval tldr         SciTLDR-A dev: ROUGE-1/2/L vs the author TL;DR and the best of all targets
    paperatlas eval keyphrases   COLM 2024+2025 author keywords and seed 004's Key Word lines: P/R/F1@5,10
    paperatlas eval topics       4 gold sets: NMI/ARI/misfiled vs BERTopic, k-means; label agreement; 10-NN
    paperatlas eval labels       an atlas's worst topic labels (too broad / not naming their papers), largest area
    paperatlas eval compare      two eval topics --json runs side by side (before / after a change)
    paperatlas eval recommend    same gold classes: P@10, nDCG@10 of recommendations vs arxiv-sanity-lite
    paperatlas eval neighbours   same gold classes: 10-NN accuracy of the paper representation vs MiniLM, TF-IDF
    paperatlas eval related      same gold classes: related papers vs MiniLM, BM25 and BM25 + MiniLM (RRF)
    paperatlas eval search       COLM 2025, WWW 2025 author keywords as queries: P@10 vs TF-IDF, BM25, MiniLM
    paperatlas eval ask          seed 004's sections and Key Words as questions: cited answers vs search TL;DRs
    """


# --------------------------------------------------------------------------------------------------- tldr
@eval_group.command(name="tldr")
@click.option("--gold", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="SciTLDR JSONL(.gz) file [default: ../shared/data/scitldr/dev.jsonl.gz].")
@click.option("--method", "methods", multiple=True,
              help="Our method(s) to score (repeatable; default: all). Baselines are always included.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Score only the first N papers.")
@click.option("--tldr-backend", "backends", multiple=True, type=click.Choice(list(BACKENDS)),
              help=choice_help("Also score a generative backend (repeatable): its checked answers with extractive "
                               "fallback.", ((name, desc) for name, (_factory, desc) in BACKENDS.items())))
@click.option("--base-url", default=None, help="Endpoint of --tldr-backend openai, e.g. http://127.0.0.1:11434/v1")
@click.option("--model", "llm_model", default=None, help="Model name for --tldr-backend openai.")
def tldr_command(gold: Path | None, methods: tuple[str, ...], limit: int | None, backends: tuple[str, ...],
                 base_url: str | None, llm_model: str | None) -> None:
    """Score TL;DRs on SciTLDR-A: ours vs title / first-sentence / oracle, ROUGE-1/2/L F1 × 100.

    Scored against the author TL;DR and against the best of all targets.

    \b
    paperatlas eval tldr                                   # extractive v2 vs baselines on all 619 dev papers
    paperatlas eval tldr --tldr-backend smollm2 --limit 100
    paperatlas eval tldr --tldr-backend openai --base-url http://127.0.0.1:11434/v1 --model qwen2.5:0.5b
    """
    gold = gold or tldr_eval.default_gold()
    with _click_errors():
        tldr_eval.check_ready(gold)  # gold file and rouge-score, before anything slow
        try:
            names = tldr_eval.method_names(methods)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--method") from e
        records = tldr_eval.load_records(gold)
        if limit is not None:
            records = records[:limit]
        generative = {}
        for name in backends:
            try:
                generative[f"{tldr_eval.backend_label(name, llm_model)} (+fallback)"] = tldr_eval.backend_method(
                    name, base_url, llm_model)
            except (ValueError, BackendError) as e:
                raise click.ClickException(f"--tldr-backend {name}: {e}") from e
        chosen = tldr_eval.choose_methods(names, generative)
        rows = tldr_eval.evaluate_tldr(records, chosen)
    click.echo(f"SciTLDR: {gold} ({rows[0]['n'] if rows else 0} papers); ROUGE F1 x 100 vs the author TL;DR "
               "and vs the best target per paper")
    click.echo(tldr_eval.format_table(rows))
    for line in tldr_eval.fallback_report(chosen):
        click.echo(line)


# --------------------------------------------------------------------------------------------------- keyphrases
@eval_group.command(name="keyphrases")
@click.option("--gold", "golds", multiple=True, default=("colm", "awesome"), show_default=True,
              help="Gold set: colm (2024+2025), colm2024, colm2025, awesome, or a listing FILE with keywords "
                   "(repeatable).")
@click.option("--method", "methods", multiple=True, type=click.Choice(list(keyphrase_eval.METHOD_FUNCS)),
              default=keyphrase_eval.METHODS, show_default=True, help="Method to score (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Use only the first N papers of each set.")
def keyphrases_command(golds: tuple[str, ...], methods: tuple[str, ...], limit: int | None) -> None:
    """P/R/F1@5 and @10 of our keyphrases, YAKE and KeyBERT against author keywords.

    A match is exact after lower-casing, hyphens to spaces, punctuation stripped and Porter stemming.
    """
    with _click_errors():
        keyphrase_eval.require_packages(methods)  # fail early with the install hint
        sets = [keyphrase_eval.load_gold(g) for g in golds]
        for i, (label, papers) in enumerate(sets):
            papers = papers[:limit] if limit else papers
            if i:
                click.echo()
            click.echo(f"== {label}: {len(papers)} papers ==")
            if not papers:
                click.echo("(no papers with gold keyphrases)")
                continue
            rows = keyphrase_eval.evaluate_keyphrases(papers, methods)  # embeds once when a method needs it
            click.echo(keyphrase_eval.format_table(rows))
            if keyphrase_eval.needs_embeddings(methods):
                embed_s = rows[0]["embed_seconds"]
                click.echo(f"embedding (once, shared, not in papers/s): {embed_s:.1f} s, "
                           f"{len(papers) / embed_s:.1f} papers/s")
            click.echo(f"ceiling: {rows[0]['ceiling']:.1%} of gold keyphrases occur in title + text")


# --------------------------------------------------------------------------------------------------- topics
@eval_group.command(name="topics")
@click.option("--gold", "golds", multiple=True, default=gold_sets.TOPIC_DEFAULTS, show_default=True,
              help=_GOLD_CLASSES_HELP)
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Use a seeded random sample of N papers of each set (quick runs).")
@click.option("--seed", type=int, default=42, show_default=True, help="First seed of k-means, LSA, UMAP; seed of "
              "--limit.")
@click.option("--seeds", "n_seeds", type=click.IntRange(min=1), default=3, show_default=True,
              help="Run every method with this many seeds (seed, seed+1, ...) and report mean ± standard deviation.")
@click.option("--labels/--no-labels", "with_labels", default=True, show_default=True,
              help="Make the build's keyphrase label terms and score label-name agreement (--no-labels: "
                   "clustering only, faster).")
@click.option("--knn/--no-knn", "with_knn", default=True, show_default=True, help="Also the 10-NN accuracy table.")
@click.option("--bertopic/--no-bertopic", "want_bertopic", default=True, show_default=True,
              help="Also the BERTopic row (when installed).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write every table's rows to this JSON file (to compare runs).")
def topics_command(golds: tuple[str, ...], limit: int | None, seed: int, n_seeds: int, with_labels: bool,
                   with_knn: bool, want_bertopic: bool, json_out: Path | None) -> None:
    """Topics vs gold classes: NMI, ARI, misfiled share vs BERTopic and k-means; label-name agreement; 10-NN.

    Our areas and sub-topics (as a build makes them), the level nearest the gold class count, BERTopic and plain
    k-means on MiniLM; each gold class's name against the label of the topic holding most of its papers; the
    10-NN accuracy of our topic embedding vs TF-IDF and MiniLM. MiniLM embeddings are cached on disk by text.

    \b
    paperatlas eval topics                          # 4 gold sets, 3 seeds (~15 min on 2 cores)
    paperatlas eval topics --gold aaai --gold cvpr2019 --seeds 1 --no-knn --json /tmp/after.json
    paperatlas eval topics --gold awesome --limit 80
    """
    with _click_errors():
        with_bertopic = want_bertopic and topic_eval.bertopic_available()
        if want_bertopic and not with_bertopic:
            click.echo(topic_eval.BERTOPIC_MISSING)
        sets = [gold_sets.load_gold_papers(g) for g in golds]  # every file checked before the slow parts
        goals: list[str] = []
        report: list[dict] = []
        for i, (label, papers) in enumerate(sets):
            papers = [papers[j] for j in topic_eval.sample(len(papers), limit, seed)]
            texts, gold = [paper_text(p.title, p.text) for p in papers], [p.gold for p in papers]
            if i:
                click.echo()
            click.echo(f"== {label}: {len(texts)} papers, {len(set(gold))} classes ==")
            if len(texts) < 2:
                click.echo("(too few papers with a gold class)")
                continue
            t0 = time.perf_counter()
            emb = topic_eval.embed_texts(texts)
            embed_s = time.perf_counter() - t0
            click.echo(f"MiniLM embedding (once, shared by every row, not in seconds; cached by text): {embed_s:.1f} s")
            seeds = list(range(seed, seed + n_seeds))
            res = topic_filing.evaluate_set(papers, emb, seeds, with_bertopic=with_bertopic, with_labels=with_labels)
            click.echo()
            click.echo(f"Clustering vs gold classes (NMI arithmetic mean; misfiled = papers whose topic's majority "
                       f"class is not theirs, BERTopic's outliers -1 misfiled and one cluster for NMI/ARI; level "
                       f"nearest {len(set(gold))} classes: {res.level})"
                       + (f"; mean ± sd over seeds {seeds[0]}-{seeds[-1]}" if n_seeds > 1 else ""))
            click.echo(topic_eval.format_table(res.rows, topic_eval.CLUSTER_COLUMNS))
            if with_labels:
                click.echo()
                click.echo(f"Label-name agreement: each gold class vs the label of the {res.level} topic holding most "
                           f"of its papers (token overlap = content-stem Jaccard; cosine = MiniLM); label terms "
                           f"{res.keyphrase_seconds:.1f} s")
                click.echo(topic_filing.format_agreement(res.agreement, res.agreement_means))
            knn: list[dict] = []
            if with_knn:
                click.echo()
                knn = _knn_table(texts, gold, emb, seeds)
            goals += topic_eval.goal_checks(label, res.rows, knn)
            report.append({"gold": golds[i], "label": label, "papers": len(texts), "classes": len(set(gold)),
                           "seeds": seeds, "level": res.level, "clustering": res.rows, "agreement": res.agreement,
                           "agreement_means": res.agreement_means, "knn": knn})
    _echo_goals(goals)
    if json_out is not None:
        json_out.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
        click.echo(f"rows written to {json_out}")


def _knn_table(texts: list[str], gold: list[str], emb, seeds: list[int]) -> list[dict]:
    """Print the 10-NN accuracy table of one gold set and return its rows (empty when no class is large enough)."""
    sizes = topic_eval.knn_class_sizes(gold)
    k, min_class = topic_eval.KNN_K, topic_eval.KNN_MIN_CLASS
    if not sizes:
        click.echo(f"{k}-NN accuracy: not computed (no gold class has >= {min_class} papers)")
        return []
    knn = topic_eval.evaluate_knn(texts, gold, emb, seeds)
    click.echo(f"{k}-NN accuracy (cosine, leave-one-out, majority vote; classes with >= {min_class} papers: "
               f"{sum(sizes)} papers, {len(sizes)} classes; majority class {max(sizes) / sum(sizes):.1%})")
    click.echo(topic_eval.format_table(knn, topic_eval.KNN_COLUMNS))
    return knn


@eval_group.command(name="compare")
@click.argument("before", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("after", type=click.Path(dir_okay=False, path_type=Path))
def compare_command(before: Path, after: Path) -> None:
    """Two eval topics --json runs side by side: NMI, ARI, misfiled share and label agreement, before and after.

    \b
    paperatlas eval topics --seeds 1 --no-knn --json before.json
    (change the topics)
    paperatlas eval topics --seeds 1 --no-knn --json after.json
    paperatlas eval compare before.json after.json
    """
    with _click_errors():
        runs_b, runs_a = run_compare.load_run(before), run_compare.load_run(after)
    old = {r["gold"]: r for r in runs_b}
    shown = 0
    for a in runs_a:
        b = old.get(a["gold"])
        if b is None:
            continue
        if shown:
            click.echo()
        shown += 1
        click.echo(f"== {a['label']}: {a['papers']} papers, {a['classes']} classes; seeds {b['seeds']} -> {a['seeds']}"
                   + (f"; papers before: {b['papers']}" if b["papers"] != a["papers"] else "") + " ==")
        click.echo(run_compare.format_comparison(run_compare.compare_set(b, a)))
        line = run_compare.agreement_line(b, a)
        if line:
            click.echo(line)
    if not shown:
        raise click.ClickException(f"no gold set is in both {before} and {after}")


# --------------------------------------------------------------------------------------------------- labels
@eval_group.command(name="labels")
@db_option
@click.option("--worst", "n_worst", type=click.IntRange(min=1), default=10, show_default=True,
              help="How many of the worst labels to list.")
@click.option("--all", "show_all", is_flag=True, help="List every topic's label (areas, then sub-topics, largest "
              "first) instead of the worst ones.")
def labels_command(db: str | None, n_worst: int, show_all: bool) -> None:
    """The worst topic labels of an atlas, and the largest area's share.

    Each label is read as a search over the atlas's papers (title + abstract, content-word stems): specificity =
    share of all papers it matches (high = too broad), coverage = share of its own topic's papers it matches
    (low = does not name them), score = F1 of precision and coverage. No gold data needed.

    \b
    paperatlas eval labels --db iclr2021.db
    paperatlas eval labels --db iclr2021.db --all
    """
    atlas = open_atlas(db)
    try:
        scores, n_papers = label_quality.atlas_label_scores(atlas)
        path = atlas.path
    finally:
        atlas.close()
    n_areas = sum(s.level == 0 for s in scores)
    click.echo(f"== {path}: {n_papers} papers with a topic, {n_areas} areas, {len(scores) - n_areas} sub-topics ==")
    if not scores:
        click.echo("(no topics)")
        return
    if show_all:
        rows = sorted(scores, key=lambda s: (s.level, -s.size, s.topic_id))
        click.echo("Every label (score = F1 of precision and coverage of the label as a search for its topic)")
    else:
        rows = label_quality.worst(scores, n_worst)
        click.echo(f"The {len(rows)} worst labels (lowest score = F1 of precision and coverage of the label as a "
                   "search for its topic)")
    click.echo(label_quality.format_scores(rows))
    click.echo()
    for line in label_quality.summary(scores, n_papers):
        click.echo(line)


# --------------------------------------------------------------------------------------------------- recommend
@eval_group.command(name="recommend")
@click.option("--gold", "golds", multiple=True, default=gold_sets.CLASS_DEFAULTS, show_default=True,
              help=_GOLD_CLASSES_HELP)
@click.option("--draws", "n_draws", type=click.IntRange(min=1), default=5, show_default=True,
              help="Draws of liked papers per class.")
@click.option("--liked", "n_liked", type=click.IntRange(min=1), default=5, show_default=True,
              help="Liked papers per draw (all from one class).")
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of the first set of draws.")
@click.option("--seeds", "n_seeds", type=click.IntRange(min=1), default=3, show_default=True,
              help="Sets of draws (seeds seed, seed+1, ...): P@10 and nDCG@10 as mean ± standard deviation over "
                   "them, latency over all their requests.")
def recommend_command(golds: tuple[str, ...], n_draws: int, n_liked: int, seed: int, n_seeds: int) -> None:
    """P@10 and nDCG@10 of recommendations from liked papers of one gold class, ours vs arxiv-sanity-lite.

    Our recommender against arxiv-sanity-lite's SVM (and MiniLM-only, TF-IDF-only ablations), with milliseconds
    per request.

    \b
    paperatlas eval recommend                  # both gold sets (~2 min on 2 cores, mostly embedding)
    paperatlas eval recommend --gold awesome --draws 2 --seeds 1
    """
    with _click_errors():
        sets = [topic_eval.load_gold(g) for g in golds]
        goals = []
        for i, (label, texts, gold) in enumerate(sets):
            if i:
                click.echo()
            runs = [recommend_eval.draws(gold, n_draws, n_liked, seed + j) for j in range(n_seeds)]
            requests = runs[0]
            used = sorted({c for c, _ in requests})
            sizes = Counter(gold)
            seeds = f" x {n_seeds} seeds ({seed}-{seed + n_seeds - 1})" if n_seeds > 1 else ""
            click.echo(f"== {label}: {len(texts)} papers, {len(sizes)} classes; {len(used)} classes with >= "
                       f"{max(recommend_eval.MIN_CLASS, n_liked + 1)} papers drawn from, {n_draws} draws x "
                       f"{n_liked} liked papers each = {len(requests)} requests{seeds} ==")
            if not requests:
                click.echo("(no class is large enough)")
                continue
            emb = topic_eval.embed_texts(texts)
            rows, per_seed = recommend_eval.evaluate_set(texts, gold, emb, runs)
            over = f"; mean ± sd over {n_seeds} seeds" if n_seeds > 1 else ""
            click.echo(f"Same-class papers in the top {recommend_eval.K} of all other papers (macro over "
                       f"classes{over}); ms = ranking only")
            click.echo(recommend_eval.format_table(rows))
            goals.append(recommend_eval.goal_check(label, rows, per_seed))
    _echo_goals(goals)


# --------------------------------------------------------------------------------------------------- neighbours
def _labelled_sets(golds: tuple[str, ...]) -> Iterator[tuple[str, list[str], list[str], object]]:
    """Each gold set with its MiniLM embeddings, after a heading; sets too small are reported and skipped."""
    sets = [topic_eval.load_gold(g) for g in golds]  # every file checked before the slow parts
    for i, (label, texts, gold) in enumerate(sets):
        if i:
            click.echo()
        sizes = topic_eval.knn_class_sizes(gold)
        click.echo(f"== {label}: {len(texts)} papers, {len(set(gold))} classes; {sum(sizes)} papers in "
                   f"{len(sizes)} classes of >= {topic_eval.KNN_MIN_CLASS} papers take part ==")
        if not sizes:
            click.echo("(no gold class is large enough)")
            continue
        t0 = time.perf_counter()
        emb = topic_eval.embed_texts(texts)
        click.echo(f"MiniLM embedding (once, shared by every row): {time.perf_counter() - t0:.1f} s")
        yield label, texts, gold, emb


@eval_group.command(name="neighbours")
@click.option("--gold", "golds", multiple=True, default=gold_sets.CLASS_DEFAULTS, show_default=True,
              help=_GOLD_CLASSES_HELP)
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of the first LSA fit.")
@click.option("--seeds", "n_seeds", type=click.IntRange(min=1), default=3, show_default=True,
              help="LSA seeds (seed, seed+1, ...): mean ± standard deviation.")
def neighbours_command(golds: tuple[str, ...], seed: int, n_seeds: int) -> None:
    """10-NN class accuracy of the paper representation beside MiniLM and TF-IDF, in one run.

    The representation (MiniLM ⊕ LSA) is what topics, related papers, recommendations and the neighbour index use.

    \b
    paperatlas eval neighbours                 # both gold sets (~2 min on 2 cores, mostly embedding)
    paperatlas eval neighbours --gold awesome --seeds 1
    """
    with _click_errors():
        goals = []
        for label, texts, gold, emb in _labelled_sets(golds):
            rows = related_eval.neighbour_rows(texts, gold, emb, list(range(seed, seed + n_seeds)))
            click.echo(f"{topic_eval.KNN_K}-NN accuracy (cosine, leave-one-out, majority vote)")
            click.echo(topic_eval.format_table(rows, topic_eval.KNN_COLUMNS))
            by = {r["method"]: r.get("acc", 0.0) for r in rows}
            ours = by.get("paperatlas representation (MiniLM ⊕ LSA)", 0.0)
            parts = max(by.get("MiniLM", 0.0), by.get("TF-IDF", 0.0))
            goals.append(f"{label}: representation above both parts: {'yes' if ours > parts else 'no'} "
                         f"({ours:.3f} vs MiniLM {by.get('MiniLM', 0.0):.3f}, TF-IDF {by.get('TF-IDF', 0.0):.3f})")
    _echo_goals(goals)


@eval_group.command(name="related")
@click.option("--gold", "golds", multiple=True, default=gold_sets.CLASS_DEFAULTS, show_default=True,
              help=_GOLD_CLASSES_HELP)
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of the representation's LSA.")
def related_command(golds: tuple[str, ...], seed: int) -> None:
    """Related papers vs gold classes: P@10, nDCG@10, 10-NN accuracy; ours vs MiniLM, BM25 and their RRF.

    \b
    paperatlas eval related                    # both gold sets (~3 min on 2 cores)
    paperatlas eval related --gold awesome
    """
    with _click_errors():
        goals = []
        for label, texts, gold, emb in _labelled_sets(golds):
            rows = related_eval.related_rows(texts, gold, emb, seed)
            click.echo(f"The {related_eval.K} papers each method relates to every paper (itself left out) vs its gold "
                       "class; ms = scoring only")
            click.echo(related_eval.format_table(rows))
            goals.append(related_eval.goal_check(label, rows))
    _echo_goals(goals)


@eval_group.command(name="search")
@click.option("--gold", "golds", multiple=True, default=tuple(search_eval.GOLD_SETS), show_default=True,
              help="Listing with author keywords: colm2025, www2025, or a paperlists JSON FILE (repeatable).")
def search_command(golds: tuple[str, ...]) -> None:
    """Keyword search with author keywords as queries: P@10, R@10, nDCG@10; ours vs TF-IDF, BM25, MiniLM.

    Each set is built into a temporary atlas without its keywords; a keyword given by 3+ papers (and at most 10%
    of them) is a query whose relevant papers are the ones that give it.

    \b
    paperatlas eval search                     # both sets (~2 min on 2 cores, mostly the two builds)
    paperatlas eval search --gold colm2025
    """
    with _click_errors():
        for g in golds:
            search_eval.load_gold(g)  # every file checked before the slow parts
        goals = []
        for i, g in enumerate(golds):
            if i:
                click.echo()
            label, n, rows = search_eval.evaluate(g)
            click.echo(f"== {label}: {n} papers, {rows[0]['n']} queries (keywords of >= {search_eval.MIN_PAPERS} "
                       f"papers and <= {search_eval.MAX_SHARE:.0%} of them) ==")
            click.echo(topic_eval.format_table(rows, search_eval.COLUMNS))
            goals.append(search_eval.goal_check(label, rows))
    _echo_goals(goals)


@eval_group.command(name="ask")
@click.option("--db", default=None, metavar="FILE", help="Atlas to evaluate [default: seeds 001 + 004 built (or "
              "rebuilt) in the cache, seed 004 without its Key Word lines].")
@click.option("--no-meaning", is_flag=True, help="Ask and search by the question's words only (no embedding model).")
@click.option("--overviews-only", is_flag=True, help="Score only the atlas's topic overviews (any atlas).")
@click.option("--overview-sample", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also print N topic overviews with their cited titles, to judge by hand.")
@click.option("--backend", type=click.Choice(list(BACKENDS)), default=None, help="Also score answers rewritten by "
              "this generative backend (--base-url, --model as eval tldr); 15-80 s a question with smollm2.")
@click.option("--base-url", default=None, help="Endpoint of --backend openai, e.g. http://127.0.0.1:11434/v1")
@click.option("--model", "llm_model", default=None, help="Model name for --backend openai.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Ask only the first N answerable questions.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the tables and every question's answers to this JSON file.")
def ask_command(db: str | None, no_meaning: bool, overviews_only: bool, overview_sample: int,
                backend: str | None, base_url: str | None, llm_model: str | None, limit: int | None,
                json_out: Path | None) -> None:
    """Cited answers vs the top search results' TL;DRs and first sentences; topic overviews.

    Questions: seed 004's sections and Key Words (its entries there are the relevant papers) and 10 it cannot
    answer. Citation precision and recall, honest and false misses, traceable sentences; then the overviews'
    own-paper share, distinct papers, redundancy and traceability.

    \b
    paperatlas eval ask                        # builds seeds 001 + 004 into the cache first (~2 min on 2 cores)
    paperatlas eval ask --db iclr2021.db --overviews-only --overview-sample 10
    """
    from ..eval import ask_atlas, ask_eval
    from ..llm.backends import make_backend

    with _click_errors():
        try:
            chat = make_backend(backend, base_url, llm_model) if backend else None
        except (ValueError, BackendError) as e:
            raise click.ClickException(f"--backend {backend}: {e}") from e
        if db is None:
            path = ask_atlas.atlas_path()
            click.echo(f"building {path} (seeds 001 + 004)", err=True)
            db = str(ask_atlas.build_atlas(path, progress=tqdm_progress))
        atlas = open_atlas(db)
        try:
            report = ask_eval.run(atlas, not no_meaning, not overviews_only, overview_sample, tqdm_progress,
                                  click.echo, chat, limit)
        finally:
            atlas.close()
    if json_out is not None:
        json_out.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
        click.echo(f"rows written to {json_out}")
