"""Answer a question from the atlas, extractively: a short paragraph of sentences copied from the papers, each cited.

:func:`ask` drops the question's framing words (:data:`FRAMING_WORDS`: "what is *known* about", "*explain*") and
searches the atlas for the rest (:func:`paperatlas.search.search_results`, the ranking of ``paperatlas search``),
takes the first :data:`POOL` hits, splits their TL;DRs and abstracts (a curator's digest for a paper without an
abstract) into sentences (:func:`paperatlas.text.split_sentences`) and scores each sentence for the question:

* **word overlap**: the share of the question's idf (the search's BM25 idf of each question word,
  :func:`paperatlas.search.terms.query_terms`) carried by words the sentence uses (a word matches a sentence word
  equal to it or starting with it, so ``transformer`` matches ``transformers``);
* **meaning**: the cosine of the sentence's MiniLM vector with the question's, when an encoder is given;
* **paper rank**: ``1 / (1 + rank)`` of the paper in the search.

Sentences are picked paper by paper in the search's order (on ``eval ask``, best sentences first from any hit
cited deeper hits and lost 0.06-0.08 citation precision), best first within a paper, skipping a sentence whose
content words overlap a chosen one's by a Jaccard index above :data:`REDUNDANCY_MAX_JACCARD` (or vectors a cosine
above :data:`REDUNDANCY_MAX_COSINE`); at most :data:`MAX_PER_PAPER` from one paper, :data:`MAX_SENTENCES` in all.
They are ordered as a paragraph (:func:`reading_order`): a paper's sentences together, papers whose sentence
defines the subject or gives background first, then by rank; within a paper background first, findings ("we show",
numbers) last, introduction and method in the paper's order (:func:`sentence_role`); papers are numbered ``[1]``..
``[k]`` in that order. Every sentence is verbatim from its source field, so true to its source by construction.

With a generative ``backend`` (:func:`rewrite`, :mod:`paperatlas.llm.answer`) the model rewrites the chosen
sentences; a sentence it writes is kept only when the paper it cites supports it, and is marked ``written``.

When the atlas does not address the question (the search finds no paper; or no paper uses the question's words, or
half or more of them are in no paper, and no sentence comes close in meaning) the answer is an honest miss: no
sentences, the search's message, and the topics nearest to the question (by cosine of the question with each topic's
mean paper vector, or else by the question's words in the topics' labels and keyphrases).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .ask_order import ROLES as ROLES
from .ask_order import background_places, reading_order, sentence_role
from .limits import MAX_QUESTION_CHARS, QuestionTooLong, check_question
from .llm.answer import Dropped, Excerpt, Source, rewrite_answer
from .llm.backends import ChatBackend
from .search import search_results
from .search.filters import Filters
from .search.terms import query_terms, query_words, searched_terms
from .store import Atlas
from .text import split_sentences
from .topics import topic_centroids
from .vocab import STOP

#: How many of the search's hits are read for sentences.
POOL = 15
#: Most sentences embedded for one question (the best by word overlap and paper rank); MiniLM on CPU takes
#: ~10-20 ms a sentence.
ENCODE_MAX = 32
#: Most sentences of one paper embedded (those using most of the question's words), so that the first papers of the
#: search are all read before deeper ones.
ENCODE_PER_PAPER = 4
#: Fewest and most sentences of an answer.
MIN_SENTENCES, MAX_SENTENCES = 2, 5
#: Most sentences taken from one paper.
MAX_PER_PAPER = 2
#: Two sentences whose content-word sets have a Jaccard index above this are redundant: only the better is kept.
REDUNDANCY_MAX_JACCARD = 0.4
#: Two sentences whose MiniLM vectors have a cosine above this are redundant (when an encoder is given).
REDUNDANCY_MAX_COSINE = 0.8
#: A sentence that uses none of the question's words is kept only when its cosine to the question is at least this.
SENTENCE_MIN_COSINE = 0.45
#: Weights of the sentence score: word overlap, meaning (cosine), paper rank.
W_OVERLAP, W_COSINE, W_RANK = 0.5, 0.4, 0.1
#: A question with no paper using all its words is searched again without each word in turn when it has this
#: many content words (:func:`paperatlas.search.terms.query_words`): a question's framing word may be in no paper.
MIN_RELAX_WORDS, MAX_RELAX_WORDS = 3, 8
#: Words that frame a question rather than name its subject (beyond the stop words :data:`paperatlas.vocab.STOP`):
#: "What is *known* about X?", "*Explain* X", "What is the *role* of X?". They are dropped before the search
#: (unless nothing would be left): no paper uses "known", so the search found nothing for "what is known about
#: self-supervision".
FRAMING_WORDS = frozenset({"known", "know", "tell", "explain", "explained", "describe", "role", "happens", "happen",
                           "mean", "means", "meant", "does", "papers", "paper", "research", "literature",
                           "question", "questions", "answer", "say", "says", "anything", "something", "there"})
#: How many nearest topics an honest miss offers.
N_TOPICS = 3

_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")


@dataclass
class AnswerSentence:
    """One sentence of an answer.

    Attributes:
        text: the sentence, verbatim from its source field.
        cite: the 1-based number of its paper in :attr:`Answer.papers`.
        paper_id: its paper's id.
        source: ``"tldr"`` or ``"abstract"``: the field it was copied from; ``"model"`` for a sentence a generative
            backend wrote.
        score: its score for the question (0..1, see the module docstring); for a written sentence, the score of the
            extractive sentence it rewrites.
        written: True when a generative backend wrote it (it passed :func:`paperatlas.llm.answer.support` against
            its cited paper); False for a sentence copied verbatim.
        rewrites: for a written sentence, the extractive sentence it took the place of (``""`` otherwise).
    """

    text: str
    cite: int
    paper_id: str
    source: str
    score: float
    written: bool = False
    rewrites: str = ""


@dataclass
class CitedPaper:
    """A paper cited by an answer.

    Attributes:
        cite: its 1-based citation number.
        id: the paper id.
        title: its title.
        authors: its authors' names.
        status: ``Oral``/``Spotlight``/``Poster``/... or ``""``.
        url: its paper (or OpenReview/project) link, or ``""``.
    """

    cite: int
    id: str
    title: str
    authors: list[str]
    status: str
    url: str


@dataclass
class NearTopic:
    """A topic offered by an honest miss: its ``id``, ``label`` and ``size`` (papers)."""

    id: int
    label: str
    size: int


@dataclass
class Answer:
    """The answer to a question.

    Attributes:
        question: the question as asked.
        sentences: the answer's sentences in reading order (empty on a miss).
        papers: the cited papers, numbered 1..k in order of first citation.
        miss: True when the atlas does not address the question.
        message: on a miss, one line saying so (e.g. the search's ``No paper mentions “grokking”…``).
        nearest_topics: on a miss, the topics nearest to the question, nearest first.
        written_by: the generative backend's ``method`` (e.g. ``openai:qwen2.5:0.5b@http://…/v1``) when one was
            asked to rewrite the answer, else ``""``; the sentences it wrote have ``written`` set.
        dropped: the sentences the backend wrote that the support check refused (text, the ``cite`` it gave in this
            answer's numbering, 0 for none or a paper the answer no longer cites, the cited ``paper_id`` when it
            is one of the answer's, and the reason), in the model's order; the extractive sentence stayed in their
            place.
        note: one line when the backend failed or none of its sentences was kept (the answer is then extractive),
            else ``""``.
    """

    question: str
    sentences: list[AnswerSentence] = field(default_factory=list)
    papers: list[CitedPaper] = field(default_factory=list)
    miss: bool = False
    message: str = ""
    nearest_topics: list[NearTopic] = field(default_factory=list)
    written_by: str = ""
    dropped: list[Dropped] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        """The answer as a JSON-ready dict (the fields above; the sentences, papers and topics as dicts)."""
        return asdict(self)

    def paragraph(self) -> str:
        """The sentences joined as one paragraph, each followed by its ``[n]``; ``""`` on a miss."""
        return " ".join(f"{s.text} [{s.cite}]" for s in self.sentences)


def content_words(text: str) -> set[str]:
    """The lower-case words of ``text`` other than stop words (:data:`paperatlas.vocab.STOP`).

    Args:
        text: any text.

    Returns:
        The set of words, e.g. ``"We study the grokking of networks."`` → ``{"study", "grokking", "networks"}``.
    """
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOP and len(w) > 1}


def jaccard(a: set[str], b: set[str]) -> float:
    """Jaccard index ``|a ∩ b| / |a ∪ b|`` of two word sets (0.0 when both are empty)."""
    return len(a & b) / len(a | b) if a or b else 0.0


def _uses(words: set[str], term: str) -> bool:
    """True when a word of ``words`` is ``term`` or starts with its stem (``transformers`` in ``transformer``)."""
    stem = term[:-1] if len(term) > 4 and term.endswith("s") else term
    return term in words or (len(stem) >= 4 and any(w.startswith(stem) for w in words))


def ask(atlas: Atlas, question: str, filters: Filters | None = None,
        encode: Callable[[list[str]], np.ndarray] | None = None, backend: ChatBackend | None = None) -> Answer:
    """Answer ``question`` with 2-5 cited sentences from the atlas's papers, or an honest miss.

    With a generative ``backend`` the extractive answer is then rewritten by the model and each written sentence
    kept only when its cited paper supports it (:func:`rewrite`).

    Args:
        atlas: the atlas.
        question: any user string of at most :data:`MAX_QUESTION_CHARS` characters.
        filters: the search filters (as ``paperatlas search``); None for none.
        encode: maps texts to ``(n, dim)`` float32 L2-normalised rows with the atlas's embedding model
            (:func:`paperatlas.enrich.query_embed.query_embedder`'s ``encode``); without it, the search has no
            meaning tier and sentences are scored by their words and paper rank only.
        backend: a generative backend (:func:`paperatlas.llm.backends.make_backend`), or None for the extractive
            answer; a backend failure leaves the extractive answer with a :attr:`Answer.note`.

    Returns:
        The answer (see :class:`Answer`).

    Raises:
        QuestionTooLong: the question is longer than :data:`MAX_QUESTION_CHARS` characters.
        ValueError: the question is empty.
    """
    q = check_question(question)
    if not q:
        raise ValueError("the question is empty")
    subject = subject_of(q)
    qv = np.asarray(encode([subject])[0], dtype=np.float32) if encode is not None else None
    embed = (lambda _s: qv) if qv is not None else None
    res = search_results(atlas, subject, filters=filters, embed_query=embed)
    searched = res.corrected or subject
    words = query_words(subject)
    if res.n_keyword == 0 and MIN_RELAX_WORDS <= len(words) <= MAX_RELAX_WORDS:
        best = _without_framing_word(atlas, words, filters, qv)
        if best is not None:
            res = search_results(atlas, best, filters=filters, embed_query=embed)
            searched = res.corrected or best
    hits = list(res.hits[:POOL])
    if not hits:
        return _miss(atlas, q, qv, res.message or "No paper in the atlas addresses this question.")
    terms = [t for t in searched_terms(query_terms(atlas, searched), len(atlas.papers)) if len(t.docs)]
    idf = {t.word: t.idf for t in terms}
    total_idf = sum(idf.values()) or 1.0
    cands, roles = _sentences(hits, idf, total_idf)
    if not cands:
        return _miss(atlas, q, qv, "No paper in the atlas addresses this question.")
    if encode is not None and len(cands) > ENCODE_MAX:  # the model's time grows with the sentences: keep, paper by
        # paper in the search's order, each paper's ENCODE_PER_PAPER sentences using most of the question's words
        per: dict[int, int] = {}
        kept = []
        for c in sorted(cands, key=lambda c: (c[0], -c[5], c[1])):
            if per.get(c[0], 0) < ENCODE_PER_PAPER and len(kept) < ENCODE_MAX:
                per[c[0]] = per.get(c[0], 0) + 1
                kept.append(c)
        cands = kept
    sv = encode([c[3] for c in cands]) if encode is not None else None
    cos = np.asarray(sv @ qv, dtype=np.float64) if sv is not None else np.zeros(len(cands))
    score = np.array([W_OVERLAP * c[5] + W_COSINE * max(0.0, float(cos[i])) + W_RANK / (1 + c[0])
                      for i, c in enumerate(cands)])
    relevant = [i for i, c in enumerate(cands) if c[5] > 0 or cos[i] >= SENTENCE_MIN_COSINE]
    # half or more of the question's words in no paper ("which fertiliser schedule increases tomato yield"): the
    # papers using the rest answer another question, unless a sentence comes close in meaning
    absent = [t.typed for t in query_terms(atlas, subject) if not len(t.docs)]
    partial = bool(absent) and 2 * len(absent) >= len(query_words(subject))
    if not relevant or ((res.n_keyword == 0 or partial)
                        and not any(cos[i] >= SENTENCE_MIN_COSINE for i in relevant)):
        message = f"No paper in the atlas mentions “{' '.join(absent)}”." if partial else res.message
        return _miss(atlas, q, qv, message or "No paper in the atlas addresses this question.")
    chosen = _pick(list(range(len(cands))), cands, score, sv)  # the search's first papers, each one's best sentences
    if len(chosen) < MIN_SENTENCES:  # fill from the rest, still without redundancy
        rest = [i for i in range(len(cands)) if i not in chosen and cands[i][0] in {cands[j][0] for j in chosen}]
        chosen = _pick(rest, cands, score, sv, chosen)
    chosen = reading_order([(cands[i][0], cands[i][1], roles[cands[i][0], cands[i][1]]) for i in chosen], chosen)
    ans = _cited_answer(q, [cands[i][:4] for i in chosen], hits, [float(score[i]) for i in chosen])
    return rewrite(atlas, ans, backend, encode) if backend is not None else ans


def _without_framing_word(atlas: Atlas, words: list[str], filters: Filters | None, qv: np.ndarray | None) \
        -> str | None:
    """The question's words without the one no paper uses, or None when no such variant finds a paper.

    A question's framing word ("how do transformers *handle* images") may be in no paper: search (by words only)
    without each word in turn and keep the variant whose papers are closest to the question in meaning (without
    an encoder: the variant most papers use every word of).
    """
    best, best_key = None, (-2.0, 0)  # below any cosine: a variant is kept even when all are negative
    for w in words:
        rest = " ".join(x for x in words if x != w)
        alt = search_results(atlas, rest, filters=filters, mode="bm25")
        if not alt.n_keyword:
            continue
        key = (_closeness(atlas, alt, qv), alt.n_keyword)
        if key > best_key:
            best, best_key = rest, key
    return best


def _sentences(hits: list, idf: dict[str, float], total_idf: float) -> tuple[list, dict[tuple[int, int], str]]:
    """The candidate sentences of the hits' papers and every sentence's reading role.

    Returns:
        ``(rank, position, source, text, words, overlap)`` per sentence of 3 content words or more (``overlap``:
        the share of the question's IDF its words carry), and ``(rank, position) -> role``
        (:func:`sentence_role`).
    """
    cands = []
    roles: dict[tuple[int, int], str] = {}
    for rank, h in enumerate(hits):
        p = h.paper
        fields = [("tldr", p.tldr)] if p.tldr else []
        body = "abstract" if (p.abstract or "").strip() or not (p.digest or "").strip() else "digest"
        fields += [(body, s) for s in split_sentences(p.abstract if body == "abstract" else p.digest)]
        first_self = background_places(fields)
        for pos, (source, text) in enumerate(fields):
            roles[rank, pos] = sentence_role(text, source, background=pos < first_self)
            words = content_words(text)
            if len(words) < 3:
                continue
            overlap = sum(w for t, w in idf.items() if _uses(words, t)) / total_idf
            cands.append((rank, pos, source, text, words, overlap))
    return cands, roles


def _cited_answer(q: str, chosen: list[tuple[int, int, str, str]], hits: list, scores: list[float]) -> Answer:
    """The answer of the ``chosen`` ``(rank, position, source, text)`` sentences in order, papers numbered as cited."""
    ans = Answer(q)
    cite_of: dict[int, int] = {}
    for (rank, _pos, source, text), sc in zip(chosen, scores, strict=True):
        if rank not in cite_of:
            cite_of[rank] = len(cite_of) + 1
            p = hits[rank].paper
            ans.papers.append(CitedPaper(cite_of[rank], p.id, p.title, list(p.authors), p.status, p.paper_url))
        pid = hits[rank].paper.id
        ans.sentences.append(AnswerSentence(text, cite_of[rank], pid, source, round(sc, 4)))
    return ans


def rewrite(atlas: Atlas, ans: Answer, backend: ChatBackend,
            encode: Callable[[list[str]], np.ndarray] | None = None) -> Answer:
    """``ans`` rewritten by a generative backend, sentence by sentence checked (:mod:`paperatlas.llm.answer`).

    The model sees the question, the answer's sentences with their ``[n]`` and the cited papers' titles, TL;DRs and
    abstracts. A written sentence stays only when the paper it cites supports it (numbers, content words and, with
    ``encode``, MiniLM cosine); otherwise the extractive sentence it rewrites stays. The cited papers are then
    renumbered in order of first citation (a paper no longer cited is left out).

    Args:
        atlas: the atlas the answer came from.
        ans: an extractive answer (a miss is returned as it is).
        backend: the generative backend.
        encode: the MiniLM encoder, or None for the word checks only.

    Returns:
        A new :class:`Answer` with ``written_by``, ``dropped`` and ``note`` set; on a backend failure the
        extractive sentences with a ``note``.
    """
    if ans.miss or not ans.sentences:
        return ans
    by_cite = {c.cite: c for c in ans.papers}
    sources = []
    for c in ans.papers:
        p = atlas.by_id[c.id]
        sources.append(Source(c.cite, p.title, p.abstract or "", p.tldr or ""))
    res = rewrite_answer(backend, ans.question, [Excerpt(s.text, s.cite) for s in ans.sentences], sources, encode)
    out = Answer(ans.question, written_by=res.method, dropped=res.dropped, note=res.note)
    renumber: dict[int, int] = {}
    for w in res.sentences:
        if w.cite not in renumber:
            renumber[w.cite] = len(renumber) + 1
            c = by_cite[w.cite]
            out.papers.append(CitedPaper(renumber[w.cite], c.id, c.title, list(c.authors), c.status, c.url))
        orig = ans.sentences[w.origin]
        if w.written:
            out.sentences.append(AnswerSentence(w.text, renumber[w.cite], by_cite[w.cite].id, "model", orig.score,
                                                written=True, rewrites=orig.text))
        else:
            out.sentences.append(AnswerSentence(orig.text, renumber[w.cite], orig.paper_id, orig.source, orig.score))
    for d in out.dropped:  # the [n] a dropped sentence gave, in the new numbering (0 when no longer cited)
        if d.cite in by_cite:
            d.paper_id = by_cite[d.cite].id
            d.cite = renumber.get(d.cite, 0)
    return out


def subject_of(question: str) -> str:
    """``question`` without its framing words (:data:`FRAMING_WORDS`), or as it is when nothing else would be left.

    Args:
        question: any user string.

    Returns:
        The words to search for, e.g. ``"What is known about self-supervision?"`` → ``"What is about
        self-supervision?"`` (stop words are left to the search, which drops them), ``"explain"`` → ``"explain"``.
    """
    kept = [w for w in re.split(r"(\s+)", question) if w.strip(" ?!.,;:'\"").lower() not in FRAMING_WORDS]
    rest = " ".join("".join(kept).split())
    return rest if query_words(rest) and set(query_words(rest)) - STOP else question


def _closeness(atlas: Atlas, res, qv: np.ndarray | None, k: int = 5) -> float:
    """Mean cosine of the question vector with the first ``k`` hits' stored vectors (0.0 without vectors)."""
    if qv is None or not atlas.vectors.size:
        return 0.0
    rows = [atlas.row_of[h.paper.id] for h in res.hits[:k] if h.paper.id in atlas.row_of]
    return float(np.mean(atlas.vectors[rows] @ qv)) if rows else 0.0


def _pick(order: list[int], cands: list, score: np.ndarray, sv: np.ndarray | None,
          chosen: list[int] | None = None) -> list[int]:
    """Greedy pick of non-redundant candidates: paper by paper in the search's order, best score first within one.

    At most :data:`MAX_PER_PAPER` per paper and :data:`MAX_SENTENCES` in all (see the module).
    """
    chosen = list(chosen or [])
    for i in sorted(order, key=lambda i: (cands[i][0], -score[i])):
        if len(chosen) >= MAX_SENTENCES:
            break
        if sum(cands[j][0] == cands[i][0] for j in chosen) >= MAX_PER_PAPER:
            continue
        if any(jaccard(cands[i][4], cands[j][4]) > REDUNDANCY_MAX_JACCARD for j in chosen):
            continue
        if sv is not None and any(float(sv[i] @ sv[j]) > REDUNDANCY_MAX_COSINE for j in chosen):
            continue
        chosen.append(i)
    return chosen


def _miss(atlas: Atlas, q: str, qv: np.ndarray | None, message: str) -> Answer:
    """An honest miss with the :data:`N_TOPICS` sub-topics nearest to the question."""
    subs = [t for t in atlas.topics.values() if getattr(t, "level", 1) == 1] or list(atlas.topics.values())
    if qv is not None and atlas.vectors.size:
        cent = topic_centroids(atlas)
        near = sorted((t for t in subs if t.id in cent), key=lambda t: -float(cent[t.id] @ qv))
    else:
        words = content_words(q)
        near = sorted(subs, key=lambda t: -len(words & content_words(" ".join([t.label, *t.keyphrases]))))
    return Answer(q, miss=True, message=message,
                  nearest_topics=[NearTopic(t.id, t.label, t.size) for t in near[:N_TOPICS]])


__all__ = ["MAX_QUESTION_CHARS", "ROLES", "Answer", "AnswerSentence", "CitedPaper", "Dropped", "NearTopic",
           "QuestionTooLong", "ask", "background_places", "check_question", "content_words", "jaccard", "reading_order",
           "rewrite", "sentence_role", "subject_of"]
