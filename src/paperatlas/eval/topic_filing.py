"""The clustering rows of ``paperatlas eval topics``: our topics as a build files them vs BERTopic and k-means.

Every method gets the same papers and the same MiniLM embeddings (:func:`paperatlas.eval.topic_eval.embed_texts`).
Rows (:func:`clustering_rows`, one seed; :func:`evaluate_set`, several), each scored by
:func:`paperatlas.eval.topic_eval.score_clustering` (``#topics``, ``no topic``, NMI, ARI, and the misfiled share
of :func:`paperatlas.eval.filing.misfiled_share`):

* ``paperatlas areas`` / ``paperatlas sub-topics`` - the two levels a build gives: the gold papers through
  :func:`paperatlas.eval.label_agreement.build_topics` (the build's keyphrase label terms and
  :func:`paperatlas.enrich.topics.update_topics`, default sizes); ``seconds`` is the whole ``update_topics`` call
  (topic embedding, hierarchy, 2-D map, labels), not the keyphrases;
* ``paperatlas nearest level = <level>`` - the same numbers again for the level whose topic count is nearest the
  number of gold classes (:func:`paperatlas.eval.filing.nearest_level`), the level a researcher's filing compares
  with;
* ``paperatlas areas (k = #gold)`` - :func:`paperatlas.enrich.topics.fit_hierarchy` with ``n_areas`` = the number
  of gold classes (the effect of granularity);
* ``BERTopic (default)`` - :func:`paperatlas.eval.topic_eval.bertopic_labels` (outliers ``-1``: one cluster for
  NMI/ARI, misfiled for the misfiled share);
* ``k-means MiniLM (k = #gold)``, ``(k = #areas)`` and ``(k = #sub-topics)`` - the plain baseline
  (:func:`paperatlas.eval.filing.kmeans_labels`) with as many clusters as gold classes, as our areas and as our
  sub-topics (the misfiled share favours more topics, so each of our levels is compared with k-means of the same
  size).

With labels (the default), each seed also scores the label–name agreement at the nearest level
(:func:`paperatlas.eval.label_agreement.agreement_rows`); without, the build gets no label terms (same clustering,
placeholder labels) and skips the keyphrase step.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..sources.progress import ProgressFactory, progress_of
from . import filing, label_agreement, topic_eval
from .gold_sets import GoldPaper

NEAREST = "paperatlas nearest level"


@dataclass
class SetResult:
    """Everything ``eval topics`` prints about one gold set's clustering and labels.

    Attributes:
        rows: :func:`paperatlas.eval.topic_eval.aggregate` of the seeds' :func:`clustering_rows`.
        level: The nearest level (``"areas"`` / ``"sub-topics"``, or ``"areas/sub-topics"`` when seeds differ).
        agreement: Per class (first seed's :func:`~paperatlas.eval.label_agreement.agreement_rows`); empty without
            labels.
        agreement_means: Per seed, :func:`~paperatlas.eval.label_agreement.mean_agreement` and
            :func:`label_scores`.
        keyphrase_seconds: Wall time of the label terms (once per set).
    """

    rows: list[dict]
    level: str
    agreement: list[dict] = field(default_factory=list)
    agreement_means: list[dict] = field(default_factory=list)
    keyphrase_seconds: float = 0.0


def clustering_rows(papers: Sequence[GoldPaper], embeddings: np.ndarray, terms: list[list[str]], seed: int = 42,
                    with_bertopic: bool = True) -> tuple[list[dict], str, label_agreement.BuiltTopics]:
    """Score every method (see the module docstring) on one gold set with one seed.

    Args:
        papers: The gold papers.
        embeddings: ``(n, 384)`` MiniLM embeddings of their texts.
        terms: Label terms per paper (:func:`paperatlas.eval.label_agreement.label_terms`, or empty lists).
        seed: Seed of LSA, k-means, UMAP (ours, BERTopic's, the baseline's).
        with_bertopic: Add the BERTopic row.

    Returns:
        ``(rows, nearest level, the build's topics)``: one dict per method, in the module docstring's order, with
        ``method`` and either the :func:`~paperatlas.eval.topic_eval.score_clustering` keys plus ``seconds`` or
        ``error``.
    """
    from ..enrich.embed import paper_text
    from ..enrich.topics import default_n_topics, fit_hierarchy, topic_embedding

    gold = [p.gold for p in papers]
    texts = [paper_text(p.title, p.text) for p in papers]
    n, n_gold = len(papers), len(set(gold))
    t0 = time.perf_counter()
    built = label_agreement.build_topics(papers, embeddings, terms, seed=seed)
    secs = time.perf_counter() - t0
    areas = {"method": "paperatlas areas", **topic_eval.score_clustering(gold, built.area), "seconds": secs}
    leaves = {"method": "paperatlas sub-topics", **topic_eval.score_clustering(gold, built.leaf), "seconds": secs}
    level = filing.nearest_level(n_gold, areas["n_topics"], leaves["n_topics"])
    rows = [areas, leaves, {**(areas if level == "areas" else leaves), "method": f"{NEAREST} = {level}"}]

    t0 = time.perf_counter()
    x, _ = topic_embedding(embeddings, texts, seed=seed)
    hk = fit_hierarchy(x, n_areas=n_gold, n_topics=max(default_n_topics(n), n_gold), seed=seed)
    rows.append({"method": "paperatlas areas (k = #gold)", **topic_eval.score_clustering(gold, hk.area),
                 "seconds": time.perf_counter() - t0})
    if with_bertopic:
        t0 = time.perf_counter()
        try:
            pred = topic_eval.bertopic_labels(texts, embeddings, seed=seed)
        except Exception as e:  # BERTopic/UMAP/HDBSCAN fail in many ways on tiny data: report, don't crash
            rows.append({"method": "BERTopic (default)", "error": topic_eval.failure(e)})
        else:
            rows.append({"method": "BERTopic (default)", **topic_eval.score_clustering(gold, pred),
                         "seconds": time.perf_counter() - t0})
    for name, k in (("k-means MiniLM (k = #gold)", n_gold), ("k-means MiniLM (k = #areas)", areas["n_topics"]),
                    ("k-means MiniLM (k = #sub-topics)", leaves["n_topics"])):
        t0 = time.perf_counter()
        pred = filing.kmeans_labels(embeddings, k, seed=seed)
        rows.append({"method": name, **topic_eval.score_clustering(gold, pred), "seconds": time.perf_counter() - t0})
    return rows, level, built


def evaluate_set(papers: Sequence[GoldPaper], embeddings: np.ndarray, seeds: Sequence[int],
                 with_bertopic: bool = True, with_labels: bool = True,
                 embed: Callable[[list[str]], np.ndarray] | None = None,
                 progress: ProgressFactory | None = None) -> SetResult:
    """Score every clustering method, and the label–name agreement, on one gold set over several seeds.

    Args:
        papers: The gold papers.
        embeddings: ``(n, 384)`` float32 MiniLM embeddings of their texts, L2-normalised.
        seeds: One :func:`clustering_rows` run per seed.
        with_bertopic: Also run BERTopic (needs the ``eval`` extra).
        with_labels: Make the build's label terms and score the labels (needs ``embed``).
        embed: Texts -> L2-normalised embeddings, for the agreement's cosine (default:
            :func:`paperatlas.eval.topic_eval.embed_texts`).
        progress: Where the seeds done are counted (each clusters the set several ways, BERTopic included; default a
            tqdm bar on stderr when it is a terminal: :func:`paperatlas.sources.progress.progress_of`).

    Returns:
        The :class:`SetResult`.
    """
    embed = embed or topic_eval.embed_texts
    t0 = time.perf_counter()
    terms = label_agreement.label_terms(papers) if with_labels else [[] for _ in papers]
    kp_secs = time.perf_counter() - t0
    gold = [p.gold for p in papers]
    runs, levels, agreement, means = [], [], [], []
    with progress_of("topic eval", len(seeds), "seed", progress) as update:
        for s in seeds:
            rows, level, built = clustering_rows(papers, embeddings, terms, seed=s, with_bertopic=with_bertopic)
            runs.append(rows)
            levels.append(level)
            if with_labels:
                pred, labels = built.level(level)
                arows = label_agreement.agreement_rows(gold, pred, labels, embed)
                agreement = agreement or arows
                means.append({**label_agreement.mean_agreement(arows), **label_scores(papers, built)})
            update(1)
    if len(set(levels)) > 1:  # the nearest level differs between seeds: one row name for the mean
        for rows in runs:
            rows[2]["method"] = f"{NEAREST} = areas/sub-topics"
    out = topic_eval.aggregate(runs, sd_keys=("nmi", "ari", "misfiled"))
    return SetResult(out, "/".join(dict.fromkeys(levels)) if len(set(levels)) > 1 else levels[0],
                     agreement, means, kp_secs if with_labels else 0.0)


def label_scores(papers: Sequence[GoldPaper], built: label_agreement.BuiltTopics) -> dict:
    """The mean ``eval labels`` score of the build's area and sub-topic labels on the gold papers.

    Args:
        papers: The gold papers.
        built: Their topics (:func:`paperatlas.eval.label_agreement.build_topics`).

    Returns:
        ``label_score_areas`` and ``label_score_subtopics``: mean :func:`paperatlas.eval.label_quality.score_labels`
        score (F1 of the label as a search for its topic's papers) per level, 0.0 for a level without topics.
    """
    from ..enrich.embed import paper_text
    from .label_quality import score_labels

    n_areas = len(built.area_labels)
    parent = {int(leaf): int(area) for leaf, area in zip(built.leaf, built.area, strict=True)}
    topics = [(j, lab, 0, None) for j, lab in enumerate(built.area_labels)]
    topics += [(n_areas + j, lab, 1, parent.get(j)) for j, lab in enumerate(built.leaf_labels)]
    scores = score_labels([(paper_text(p.title, p.text), n_areas + int(leaf)) for p, leaf in zip(papers, built.leaf,
                                                                                                   strict=True)],
                          topics)
    out = {}
    for level, key in ((0, "label_score_areas"), (1, "label_score_subtopics")):
        group = [sc.score for sc in scores if sc.level == level]
        out[key] = float(np.mean(group)) if group else 0.0
    return out


#: ``(row key, heading, format)`` of the label–name agreement table
AGREEMENT_COLUMNS = [("class", "gold class", "{}"), ("n", "papers", "{:.0f}"), ("held", "in topic", "{:.0%}"),
                     ("label", "its topic's label", "{}"), ("overlap", "overlap", "{:.2f}"),
                     ("cosine", "cosine", "{:.2f}")]


def format_agreement(rows: list[dict], means: list[dict]) -> str:
    """The label–name agreement table and its means.

    Args:
        rows: :func:`paperatlas.eval.label_agreement.agreement_rows` (one seed).
        means: :func:`paperatlas.eval.label_agreement.mean_agreement` per seed.

    Returns:
        A table (one line per class: class, papers, share of them in the topic, the topic's label, token overlap,
        cosine), a line with the mean overlap and cosine (± sd over seeds when there are several) and how many
        distinct topics the classes go to (mean over seeds), and one with :func:`label_scores`. No final newline.
    """
    lines = [_format_rows(rows, AGREEMENT_COLUMNS)]
    ov, co, di = (np.array([m.get(k, 0.0) for m in means]) for k in ("overlap", "cosine", "distinct"))
    sd = len(means) > 1
    lines.append(f"mean over {len(rows)} classes: token overlap {ov.mean():.3f}" + (f" ± {ov.std():.3f}" if sd else "")
                 + f", cosine {co.mean():.3f}" + (f" ± {co.std():.3f}" if sd else "")
                 + f"; distinct topics {di.mean() * len(rows):.1f} of {len(rows)} classes"
                 + (f" (seeds: {len(means)}; per-class rows: first seed)" if sd else ""))
    if means and "label_score_areas" in means[0]:
        la, ls = (np.array([m[k] for m in means]) for k in ("label_score_areas", "label_score_subtopics"))
        lines.append(f"eval labels' score of the build's labels (F1 of the label as a search for its topic): areas "
                     f"{la.mean():.3f}" + (f" ± {la.std():.3f}" if sd else "") + f", sub-topics {ls.mean():.3f}"
                     + (f" ± {ls.std():.3f}" if sd else ""))
    return "\n".join(lines)


def _format_rows(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    head = [h for _, h, _ in columns]
    body = [[f.format(r[k]) for k, _, f in columns] for r in rows]
    widths = [max(len(c[i]) for c in [head, *body]) for i in range(len(columns))]
    text_cols = {i for i, (_, _, f) in enumerate(columns) if f == "{}"}

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i in text_cols else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths), *(fmt(b) for b in body)])
