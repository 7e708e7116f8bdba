"""``paperatlas eval ask``: cited answers (:func:`paperatlas.ask.ask`) vs two baselines on seed 004's own filing.

Atlas: seeds 001 (ICLR 2021, 860 papers with abstracts) and 004 (Awesome Deep Phenomena, 542 entries with a
curator's digest and no abstract), built with the real pipeline into ``<cache root>/eval-ask/`` (or any atlas
given with ``--db``; :mod:`.ask_atlas`). By default seed 004 is built *without* its ``Key Word:`` lines:
the search indexes a paper's given keyphrases, so a keyword question would otherwise find its relevant papers by
their own gold label (the same protocol as ``eval search``, which drops author keywords).

Questions (:func:`load_questions`), from seed 004 (:data:`QUESTION_SEED`):

* ``section``: one per named section (``Others`` left out), e.g. *What is known about deep double descent?*;
  relevant = the entries the list files under that section;
* ``keyword``: one per ``Key Word:`` phrase given by at least :data:`MIN_KEYWORD_PAPERS` entries (phrases equal
  after lower-casing, hyphens as spaces and a plural ``s`` dropped from the last word are one phrase, asked in its
  most common spelling): *What is known about grokking?*; relevant = the entries that give it;
* ``unanswerable``: :data:`UNANSWERABLE`, 10 questions neither seed addresses.

Relevant papers are matched to the atlas by title (lower-case, non-alphanumerics collapsed). ICLR 2021 papers on
the same subject are not in the gold, so precision is a lower bound for every method alike.

Methods, all on the same search (:func:`paperatlas.search.search_results`, the query's MiniLM vector when an
encoder is given):

* ``ours (extractive)``: :func:`paperatlas.ask.ask`;
* ``top search TL;DRs``: the TL;DRs of the first k search hits in rank order, k = the number of papers our answer
  cites (3 when ours is a miss);
* ``first sentences``: the first sentence of each of those k hits' abstract (the digest for an awesome entry,
  which has none);
* ``TL;DRs, subject search``: as ``top search TL;DRs``, but searching what ours searches: the question without its
  framing words (:func:`paperatlas.ask.subject_of`), so ours is also compared with the search it starts from.

Metrics (:func:`score_answer`, means over questions): with C = the distinct cited papers (k = |C|) and R = the
relevant ones, ``P`` = |C ∩ R| / k, ``R`` = |C ∩ R| / |R|, ``Rk`` = |C ∩ R| / min(|R|, k) (recall at the
answer's length: 1.0 when every citation the answer's length allows is relevant), ``Pj`` = |C ∩ R| / |C ∩ J|
with J the list's entries (precision over the citations the gold can judge; an ICLR 2021 paper on the subject is
never relevant, so a method that cites ICLR papers more loses P without being wrong); a miss on an answerable question
scores 0 on all three and counts in ``false miss``; ``honest miss`` = the share of unanswerable questions answered
as a miss (baselines never miss: 0); ``traceable`` = the share of sentences found verbatim (whitespace collapsed)
in their cited paper's abstract, TL;DR or digest, computed, not assumed; ``sents`` = mean sentences per answer.
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import overview_eval
from ._common import EvalUnavailable, resolve_shared
from .overview_eval import traceable

#: the seed the questions and their relevant papers come from
QUESTION_SEED = "seeds/004_67aa5497667b379c.txt"
#: fewest entries giving a Key Word phrase for it to be a question
MIN_KEYWORD_PAPERS = 3
#: sections that are not a subject
EXCLUDED_SECTIONS = frozenset({"Others"})
#: how many papers a baseline cites when our answer is a miss
MISS_K = 3
#: Questions neither seed can answer (ICLR 2021 papers and deep-learning phenomena): wet-lab biology, law,
#: cooking, gardening, medicine, finance, building, pets, history. No paper of either seed is about any of these
#: subjects (their words may occur, e.g. "protein" in a protein-design ICLR paper, which is why the questions name
#: lab, legal or household practice, not a modelling task); checked with the hybrid search on the seeds 001 + 004
#: atlas: no hit for any of the 10 (the search's meaning tier included).
UNANSWERABLE = (
    "What buffer and temperature should a wet-lab protein folding refolding protocol use?",
    "How is capital gains tax on inherited property calculated?",
    "What hydration gives the best sourdough pizza dough?",
    "How should a landlord handle a tenant's security deposit under tenancy law?",
    "Which fertiliser schedule increases tomato yield in greenhouses?",
    "What is the recommended dosage of amoxicillin for children with otitis media?",
    "How do central banks set interest rates to control inflation?",
    "What mortar mix is used to repoint a Victorian brick wall?",
    "How do you train a puppy to stop barking at the doorbell?",
    "What were the causes of the fall of the Western Roman Empire?",
)

_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def title_key(title: str) -> str:
    """A title as matched between the seed and the atlas: lower-case, runs of non-alphanumerics as one space."""
    return _NON_ALNUM.sub(" ", title.lower()).strip()


def keyword_key(phrase: str) -> str:
    """A Key Word phrase's identity: :func:`title_key` with hyphens as spaces and a last word's plural ``s`` dropped.

    ``"Neural Scaling Laws"`` and ``"neural scaling law"`` → ``"neural scaling law"``.
    """
    words = title_key(phrase).split()
    if words and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return " ".join(words)


@dataclass
class Question:
    """One question of the evaluation.

    Attributes:
        text: the question asked.
        kind: ``"section"``, ``"keyword"`` or ``"unanswerable"``.
        source: the section name or Key Word phrase it was made from (``""`` for an unanswerable one).
        relevant: atlas ids of its relevant papers (empty for an unanswerable one).
        judged: atlas ids of the papers the gold can judge (every entry of the list; an ICLR paper on the subject
            is in no list): ``Pj`` is precision over the cited ones among them; empty = every paper is judged.
    """

    text: str
    kind: str
    source: str = ""
    relevant: set[str] = field(default_factory=set)
    judged: set[str] = field(default_factory=set)


def _read_seed(path: Path):
    from ..model import SourceError
    from ..sources import read

    if not path.is_file():
        raise EvalUnavailable(f"gold file not found: {path}")
    try:
        return read(path)
    except SourceError as e:
        raise EvalUnavailable(f"cannot read gold file {path}: {e}") from e


def load_questions(atlas, seed: Path | None = None, min_keyword_papers: int = MIN_KEYWORD_PAPERS,
                   unanswerable: tuple[str, ...] = UNANSWERABLE) -> list[Question]:
    """Make the questions of the module docstring from an awesome list and match their papers to ``atlas``.

    Args:
        atlas: an open :class:`paperatlas.store.Atlas` holding the list's papers.
        seed: the awesome list (default :data:`QUESTION_SEED` under ``../shared``), read with its Key Words.
        min_keyword_papers: fewest entries giving a phrase for it to be a question.
        unanswerable: the questions with no relevant paper.

    Returns:
        Section questions (list order), keyword questions (most entries first, then alphabetical), then the
        unanswerable ones; a question whose relevant papers are none of the atlas's is left out.

    Raises:
        EvalUnavailable: the list is missing or unreadable.
    """
    papers = _read_seed(seed or resolve_shared(QUESTION_SEED))
    id_of = {title_key(p.title): p.id for p in atlas.papers}
    judged = {id_of[k] for k in (title_key(p.title) for p in papers) if k in id_of}
    by_section: dict[str, set[str]] = defaultdict(set)
    by_kw: dict[str, set[str]] = defaultdict(set)
    spelling: dict[str, Counter] = defaultdict(Counter)
    for p in papers:
        pid = id_of.get(title_key(p.title))
        if pid is None:
            continue
        for s in p.sections:
            if s not in EXCLUDED_SECTIONS:
                by_section[s].add(pid)
        for k in p.given_keyphrases:
            key = keyword_key(k)
            if key:
                by_kw[key].add(pid)
                spelling[key][k.strip().lower()] += 1
    out = [Question(f"What is known about {s.lower()}?", "section", s, rel, judged) for s, rel in by_section.items()]
    kws = sorted((k for k, rel in by_kw.items() if len(rel) >= min_keyword_papers), key=lambda k: (-len(by_kw[k]), k))
    for k in kws:
        phrase = min(spelling[k].items(), key=lambda kv: (-kv[1], kv[0]))[0]
        out.append(Question(f"What is known about {phrase}?", "keyword", phrase, by_kw[k], judged))
    return out + [Question(q, "unanswerable") for q in unanswerable]


@dataclass
class MethodAnswer:
    """One method's answer to one question.

    Attributes:
        sentences: ``(text, cited paper id)`` in order.
        miss: the method answered that the atlas does not address the question.
        written: for a generative method, how many sentences the model wrote (and the support check kept); None for
            an extractive one.
        dropped: how many written sentences the support check refused (the extractive one stayed).
    """

    sentences: list[tuple[str, str]]
    miss: bool = False
    written: int | None = None
    dropped: int = 0

    @property
    def cited(self) -> list[str]:
        """The distinct cited paper ids in order of first citation."""
        return list(dict.fromkeys(pid for _t, pid in self.sentences))


def score_answer(ans: MethodAnswer, q: Question, by_id: dict) -> dict:
    """The metrics of one answer (module docstring).

    Args:
        ans: the answer.
        q: its question.
        by_id: the atlas's ``paper id -> Paper`` (for traceability).

    Returns:
        ``kind``, ``miss``, ``sents`` (count), ``traced`` (sentences traceable), ``k`` (cited papers) and, for an
        answerable question, ``p``, ``r``, ``rk`` in [0, 1] (0 on a miss) and ``pj`` (precision over the cited
        papers in ``q.judged``; None when it cites none of them).
    """
    row = {"kind": q.kind, "miss": ans.miss, "sents": len(ans.sentences), "k": len(ans.cited),
           "written": ans.written, "dropped": ans.dropped,
           "traced": sum(traceable(t, by_id[pid]) for t, pid in ans.sentences if pid in by_id)}
    if q.kind != "unanswerable":
        hits = len(set(ans.cited) & q.relevant)
        k = len(ans.cited)
        row.update(p=hits / k if k and not ans.miss else 0.0, r=hits / len(q.relevant) if not ans.miss else 0.0,
                   rk=hits / min(len(q.relevant), k) if k and not ans.miss else 0.0)
        judged = [c for c in ans.cited if c in q.judged] if q.judged else ans.cited
        row["pj"] = hits / len(judged) if judged and not ans.miss else None
    return row


def methods(atlas, encode: Callable[[list[str]], np.ndarray] | None, backend=None
            ) -> dict[str, Callable[[str], MethodAnswer]]:
    """Ours and the two baselines of the module docstring, each ``question -> MethodAnswer``.

    The baselines read the k of the last answer ``ours`` gave, so ``ours`` must be called first for each question
    (:func:`evaluate` does).

    Args:
        atlas: an open atlas.
        encode: the query embedder's ``encode`` (None: words only, for ours and the search alike).
        backend: a generative backend (:func:`paperatlas.llm.backends.make_backend`): also ``ours + <backend>``,
            :func:`paperatlas.ask.ask` with it (the model rewrites the extractive answer, each written sentence
            kept only when its cited paper supports it; a written sentence is rarely verbatim, so its traceability
            is what the check kept).

    Returns:
        Method name -> function, ours first.
    """
    from ..ask import ask, subject_of
    from ..search import search_results
    from ..text import split_sentences

    last_k = [MISS_K]

    def ours(q: str) -> MethodAnswer:
        a = ask(atlas, q, encode=encode)
        last_k[0] = len(a.papers) if not a.miss and a.papers else MISS_K
        return MethodAnswer([(s.text, s.paper_id) for s in a.sentences], a.miss)

    def top(q: str):
        emb = (lambda s: encode([s])[0]) if encode is not None else None
        return [h.paper for h in search_results(atlas, q, embed_query=emb).hits[:last_k[0]]]

    def tldrs(q: str) -> MethodAnswer:
        return MethodAnswer([(p.tldr, p.id) for p in top(q) if p.tldr])

    def subject_tldrs(q: str) -> MethodAnswer:  # the same search ours makes: framing words dropped
        return tldrs(subject_of(q))

    def firsts(q: str) -> MethodAnswer:
        out = []
        for p in top(q):
            sents = split_sentences(p.abstract or p.digest or "")
            if sents:
                out.append((sents[0], p.id))
        return MethodAnswer(out)

    def written(q: str) -> MethodAnswer:
        a = ask(atlas, q, encode=encode, backend=backend)
        n_written = sum(bool(getattr(s, "written", False)) for s in a.sentences)
        return MethodAnswer([(s.text, s.paper_id) for s in a.sentences], a.miss, n_written,
                            len(getattr(a, "dropped", [])))

    runs = {"ours (extractive)": ours, "top search TL;DRs": tldrs, "first sentences": firsts,
            "TL;DRs, subject search": subject_tldrs}
    if backend is not None:
        runs[f"ours + {getattr(backend, 'method', 'backend').split(' ')[0]}"] = written
    return runs


def evaluate(atlas, questions: list[Question], encode=None, progress: Callable[[int], None] | None = None,
             backend=None) -> tuple[list[dict], list[dict]]:
    """Ask every question of every method and score the answers.

    Args:
        atlas: an open atlas.
        questions: :func:`load_questions`.
        encode: as :func:`methods`.
        progress: called with 1 after each question.
        backend: as :func:`methods`.

    Returns:
        ``(rows, details)``: :func:`summarise`'s rows, and per question ``question``, ``kind``, ``source``,
        ``relevant`` (count) and per method its scores plus ``cited`` (ids) and ``ms`` (ours: wall time).
    """
    runs = methods(atlas, encode, backend)
    by_id = atlas.by_id
    details = []
    for q in questions:
        d = {"question": q.text, "kind": q.kind, "source": q.source, "relevant": len(q.relevant), "methods": {}}
        for name, run in runs.items():
            t0 = time.perf_counter()
            ans = run(q.text)
            s = score_answer(ans, q, by_id)
            s.update(cited=ans.cited, ms=1000 * (time.perf_counter() - t0), sentences=ans.sentences)
            d["methods"][name] = s
        details.append(d)
        if progress:
            progress(1)
    return summarise(details, list(runs)), details


def summarise(details: list[dict], names: list[str]) -> list[dict]:
    """Mean metrics per question kind and method.

    Args:
        details: :func:`evaluate`'s per-question details.
        names: the methods, in table order.

    Returns:
        Rows for ``section``, ``keyword``, ``answerable`` (both) and ``all`` (answerable + unanswerable), each
        method: ``kind``, ``method``, ``n`` (questions), ``p``, ``r``, ``rk``, ``pj``, ``false_miss`` (answerable
        kinds), ``honest_miss`` (``all``: over the unanswerable questions), ``traceable`` (share of all sentences),
        ``sents`` and ``cited`` (means), for a generative method ``written`` (share of sentences the model wrote)
        and ``dropped`` (written sentences refused, per answer); a metric that does not apply is None.
    """
    groups = {"section": ("section",), "keyword": ("keyword",), "answerable": ("section", "keyword"),
              "all": ("section", "keyword", "unanswerable")}
    rows = []
    for g, kinds in groups.items():
        ds = [d for d in details if d["kind"] in kinds]
        if not ds:
            continue
        for name in names:
            ss = [d["methods"][name] for d in ds]
            ans = [s for s in ss if s["kind"] != "unanswerable"]
            una = [s for s in ss if s["kind"] == "unanswerable"]
            n_sents = sum(s["sents"] for s in ss)
            rows.append({
                "kind": g, "method": name, "n": len(ss),
                "p": _mean([s["p"] for s in ans]), "r": _mean([s["r"] for s in ans]),
                "rk": _mean([s["rk"] for s in ans]), "pj": _mean([s["pj"] for s in ans if s["pj"] is not None]),
                "false_miss": _mean([float(s["miss"]) for s in ans]),
                "honest_miss": _mean([float(s["miss"]) for s in una]),
                "traceable": sum(s["traced"] for s in ss) / n_sents if n_sents else None,
                "sents": _mean([s["sents"] for s in ss if not s["miss"]]),
                "cited": _mean([s["k"] for s in ss if not s["miss"]]),
                "written": (sum(s["written"] for s in ss) / n_sents if n_sents else None)
                if any(s["written"] is not None for s in ss) else None,
                "dropped": _mean([s["dropped"] for s in ss]) if any(s["written"] is not None for s in ss) else None,
            })
    return rows


def _mean(xs: list[float]) -> float | None:
    return float(np.mean(xs)) if xs else None


COLUMNS = [("kind", "questions", "{}"), ("method", "method", "{}"), ("n", "n", "{}"), ("p", "P", "{:.3f}"),
           ("r", "R", "{:.3f}"), ("rk", "R@k", "{:.3f}"), ("pj", "Pj", "{:.3f}"),
           ("false_miss", "false miss", "{:.1%}"), ("honest_miss", "honest miss", "{:.1%}"),
           ("traceable", "traceable", "{:.3f}"), ("sents", "sents", "{:.2f}"), ("cited", "cited", "{:.2f}")]
#: the columns of a generative backend's run
BACKEND_COLUMNS = [*COLUMNS, ("written", "written", "{:.3f}"), ("dropped", "dropped", "{:.2f}")]


def format_table(rows: list[dict], columns=COLUMNS) -> str:
    """Rows as an aligned text table; a None cell prints as ``-``."""
    head = [c[1] for c in columns]
    body = [[("-" if r.get(k) is None else f.format(r[k])) for k, _h, f in columns] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=False)]

    def fmt(cells: list[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in pairs)

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths), *(fmt(b) for b in body)])


def losses(details: list[dict], ours: str = "ours (extractive)", base: str = "top search TL;DRs",
           n: int = 10) -> list[dict]:
    """The answerable questions where ``ours`` has the lowest precision relative to ``base`` (most behind first).

    Returns:
        Up to ``n`` dicts ``question``, ``kind``, ``relevant``, ``ours`` and ``base`` (precision), ``miss`` (ours)
        where ours is behind.
    """
    out = [{"question": d["question"], "kind": d["kind"], "relevant": d["relevant"],
            "ours": d["methods"][ours]["p"], "base": d["methods"][base]["p"], "miss": d["methods"][ours]["miss"]}
           for d in details if d["kind"] != "unanswerable"]
    return sorted((x for x in out if x["ours"] < x["base"]), key=lambda x: x["ours"] - x["base"])[:n]


def run(atlas, meaning: bool = True, questions: bool = True, overview_sample: int = 0, progress=None,
        echo: Callable[[str], None] = print, backend=None, limit: int | None = None) -> dict:
    """The whole ``paperatlas eval ask`` report on one atlas: print its tables with ``echo`` and return them.

    Args:
        atlas: an open atlas (seeds 001 + 004 for the questions; any atlas for the overviews).
        meaning: embed the questions with the atlas's model (:func:`paperatlas.enrich.query_embed.query_embedder`;
            False, or an atlas without vectors: words only).
        questions: ask the questions (False: overviews only).
        overview_sample: also print this many overviews to judge by hand (:func:`overview_eval.sample`).
        progress: the progress factory (``(desc, total) -> update(n)``) of the questions; None: silent.
        echo: prints one line (or block).
        backend: as :func:`methods` (a generative method is added, with its ``written``/``dropped`` columns).
        limit: ask only the first ``limit`` answerable questions (sections, then keywords by entries) and the
            unanswerable ones (SmolLM2 takes 15-80 s a question on 2 shared cores).

    Returns:
        ``{"atlas", "papers", "rows", "questions", "losses", "overviews", "overview_scores"}`` (JSON-ready).

    Raises:
        EvalUnavailable: the question seed is missing, or no question's papers are in the atlas.
    """
    out: dict = {"atlas": str(atlas.path), "papers": len(atlas.papers), "rows": [], "questions": [], "losses": []}
    if questions:
        qs = load_questions(atlas)
        if not any(q.relevant for q in qs):
            raise EvalUnavailable(f"{atlas.path}: none of seed 004's papers is in this atlas (build it from seeds "
                                  "001 + 004, or leave out --db)")
        if limit is not None:
            qs = [q for q in qs if q.kind != "unanswerable"][:limit] + [q for q in qs if q.kind == "unanswerable"]
        encode = None
        if meaning and atlas.vectors.size:
            from ..enrich.query_embed import query_embedder

            encode = query_embedder().encode
        kw = sum(bool(p.given_keyphrases) for p in atlas.papers)
        kinds = Counter(q.kind for q in qs)
        echo(f"== {atlas.path}: {len(atlas.papers)} papers ({kw} with given keyphrases); {kinds['section']} section, "
             f"{kinds['keyword']} keyword (>= {MIN_KEYWORD_PAPERS} entries), {kinds['unanswerable']} unanswerable "
             f"questions; {'question embedded' if encode is not None else 'words only'} ==")
        rows, details = evaluate(atlas, qs, encode, progress("questions", len(qs)) if progress else None, backend)
        echo("P = cited papers that are relevant / cited; R = / relevant; R@k = / min(relevant, cited); Pj = / cited "
             "seed 004 entries (the papers the gold can judge); a miss on an answerable question scores 0 (Pj: left "
             "out); traceable = sentences verbatim in the cited paper's abstract, TL;DR or digest")
        echo(format_table(rows, BACKEND_COLUMNS if backend is not None else COLUMNS))
        behind = losses(details)
        if behind:
            echo("")
            echo(f"Questions where ours cites fewer relevant papers (share) than the top search TL;DRs ({len(behind)} "
                 "worst):")
            for b in behind:
                echo(f"  {b['ours']:.2f} vs {b['base']:.2f}  {b['question']} ({b['kind']}, {b['relevant']} relevant"
                     + (", ours a miss)" if b["miss"] else ")"))
        out.update(rows=rows, questions=details, losses=behind)
    scores = overview_eval.overview_scores(atlas)
    out.update(overview_scores=scores, overviews=overview_eval.overview_rows(scores, overview_eval.topic_counts(atlas)))
    echo("")
    if not scores:
        echo("Topic overviews: none in this atlas (rebuild it with a version that makes them)")
    else:
        echo("Topic overviews (cites own papers = share of cited papers in the topic; redundancy = largest content-"
             "word Jaccard of two sentences, mean; traceable = sentences verbatim in a paper they cite)")
        echo(format_table(out["overviews"], overview_eval.COLUMNS))
    if overview_sample and scores:
        echo("")
        echo(f"{min(overview_sample, len(scores))} overviews to judge by hand (does it say what the topic studies?):")
        for block in overview_eval.sample(atlas, overview_sample):
            echo(block)
    return out
