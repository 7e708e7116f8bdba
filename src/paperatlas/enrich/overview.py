"""Topic overviews: 2-4 sentences copied verbatim from a topic's papers, each cited, on what its papers do together.

:func:`compute_overview` makes the overview of one area or sub-topic, extractively (no model; the sentence
machinery of :mod:`paperatlas.ask`, :func:`paperatlas.text.split_sentences` and
:func:`paperatlas.text.content_words`):

1. **papers read**: the topic's members are ranked by *centrality* (the cosine of the paper's vector with the
   topic's mean vector, rescaled to 0..1 within the topic), the overlap of their keyphrases with the topic's words,
   and a bonus for Oral/Spotlight papers (:data:`STATUS_BONUS`); the best :data:`POOL` are read (for an area, taken
   in turn from each of its sub-topics, so several of them are cited);
2. **sentences scored**: each paper's TL;DR and abstract sentences (its digest's when it has no abstract; of
   :data:`MIN_WORDS`..:data:`MAX_WORDS` words, no links; an extractive TL;DR only as the whole abstract sentence
   it was cut from) are scored
   ``W_COVER * coverage + W_CENTRAL * centrality + W_ROLE * role + status bonus``, where
   *coverage* is the share of the topic's word weight the sentence uses (its label's words, then its c-TF-IDF
   keyphrases' words by rank, words matched by :func:`paperatlas.vocab.stem`; words of every ML paper,
   :data:`paperatlas.vocab.BROAD`, count a fifth) and *role* favours the TL;DR and sentences in the authors' voice
   (what the paper does) over background sentences (:data:`ROLE_TLDR`, :data:`ROLE_OWN`, :data:`ROLE_OTHER`), less
   :data:`DANGLING_PENALTY` for a sentence that leans on the one before it ("Finally, ...", "This ...");
3. **picked greedily** (maximal-marginal-relevance style, as :mod:`paperatlas.ask`): best first, at most one
   sentence per paper (one listed twice, same title and abstract, counts once), none whose content words overlap
   a chosen one's by a Jaccard index above
   :data:`REDUNDANCY_MAX_JACCARD`, for an area at most one per sub-topic while other sub-topics have candidates;
   :func:`target_sentences` of them (2-4 by topic size);
4. **ordered** as a paragraph: sentences from early in their abstract (what is studied) before later ones
   (approaches, findings); papers are numbered ``[1]``.. in that order.

Every sentence is copied verbatim from its paper's TL;DR or abstract, so it is true to its source by construction,
and every cited paper is a member of the topic. Deterministic (ties broken by paper id and position); no sentence
is embedded, so all topics of a 42k-paper atlas take seconds.

:func:`refresh_overviews` is the build's stage: a topic whose :func:`overview_key` (its label and sorted member ids,
and :data:`KEY_VERSION`) is the one stored by the last build keeps its stored overview; only new or changed topics
are computed. A reader's own overview (``overview_method == "edit"``) is never replaced.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..model import Paper, Topic
from ..text import content_words, jaccard, split_sentences
from ..vocab import BROAD_KEYS, STOP, stem

#: ``Topic.overview_method`` of a computed overview.
METHOD = "extractive"
#: ``Topic.overview_method`` of a reader's own overview (never replaced by a build).
EDIT_METHOD = "edit"
#: Part of every :func:`overview_key`: raise it when the method changes, so every stored overview is made again.
KEY_VERSION = "extractive-4"
#: Fewest and most sentences of an overview.
MIN_SENTENCES, MAX_SENTENCES = 2, 4
#: Two sentences whose content-word sets have a Jaccard index above this are redundant (the value of
#: :data:`paperatlas.ask.REDUNDANCY_MAX_JACCARD`).
REDUNDANCY_MAX_JACCARD = 0.4
#: Papers of a topic whose sentences are read (the best by centrality, keyphrase overlap and status).
POOL = 12
#: Shortest and longest sentence read, in words.
MIN_WORDS, MAX_WORDS = 8, 45
#: Weights of a sentence's score: coverage of the topic's words, its paper's centrality, what the sentence says.
W_COVER, W_CENTRAL, W_ROLE = 0.5, 0.3, 0.2
#: A sentence's *role*: a TL;DR (the paper's contribution in one sentence), a sentence in the authors' voice ("we
#: propose", "this paper", "our results"), any other sentence (background, e.g. "In recent years, ...").
ROLE_TLDR, ROLE_OWN, ROLE_OTHER = 0.9, 0.7, 0.2
#: Score taken off a sentence that leans on the one before it ("Finally, ...", "This ...", "To this end, ...", "We
#: find that it ...").
DANGLING_PENALTY = 0.15
_DANGLING = re.compile(
    r"^(?:(?:we|our \w+) (?:\w+ )?(?:find|show|observe|demonstrate)s? that )?"
    r"(?:finally|further(?:more)?|moreover|additionally|however|thus|therefore|hence|then|also|besides|"
    r"second(?:ly)?|third(?:ly)?|next|in addition|in particular|to this end|towards? (?:answering )?this|"
    r"this(?! (?:paper|work|study|article))|these|those|it|they|such|both|specifically)\b", re.I)
_OWN = re.compile(r"\b(?:we|our|us)\b|\bth(?:is|e present) (?:paper|work|study)\b", re.I)
#: Score bonus of a sentence (and of a paper when the pool is chosen) by the paper's status, lower case.
STATUS_BONUS = {"oral": 0.1, "spotlight": 0.06}
#: Weight of each of the label's words; a topic keyphrase's words weigh ``1 / (1 + KP_DECAY * rank)``.
LABEL_WEIGHT, KP_DECAY = 2.0, 0.15
#: How many of the topic's keyphrases give it words.
N_KEYPHRASES = 12
#: Share of its weight a word of every ML paper (:data:`paperatlas.vocab.BROAD`) keeps.
BROAD_SHARE = 0.2
#: A sentence holding one of these is not copied (links, code availability, a split fragment).
_SKIP = re.compile(r"https?://|www\.|github|\bcode (?:is|and)\b|available at|\burl\b", re.I)
_TOKEN = re.compile(r"\S+")
_CITE = re.compile(r"\[(\d{1,4})\]")


@dataclass
class OverviewSentence:
    """One sentence of an overview.

    Attributes:
        text: the sentence, verbatim from its source field.
        cite: the 1-based number of its paper in :attr:`Overview.papers`.
        paper_id: its paper's id.
        source: ``"tldr"``, ``"abstract"`` or ``"digest"`` (a paper without an abstract): the field it was copied
            from.
        score: its score (see the module docstring; ~0..1.2).
    """

    text: str
    cite: int
    paper_id: str
    source: str
    score: float


@dataclass
class Overview:
    """A topic's overview.

    Attributes:
        text: the sentences as one paragraph, each followed by ``[n]`` (``""`` for a topic without papers).
        papers: the cited paper ids, ``[n]`` being ``papers[n - 1]``.
        key: the :func:`overview_key` it was made for.
        sentences: the sentences with their sources.
    """

    text: str
    papers: list[str]
    key: str
    sentences: list[OverviewSentence] = field(default_factory=list)


def overview_key(label: str, member_ids: list[str]) -> str:
    """What a topic's overview is made from, hashed: :data:`KEY_VERSION`, its label and its sorted member ids.

    Args:
        label: the topic's label.
        member_ids: the ids of its papers (any order).

    Returns:
        A 40-character hex SHA-1; equal keys mean the stored overview can be kept.
    """
    text = "\n".join([KEY_VERSION, label, *sorted(member_ids)])
    return hashlib.sha1(text.encode()).hexdigest()


def topic_members(topics: list[Topic], papers: list[Paper]) -> dict[int, list[int]]:
    """The rows of ``papers`` in each topic: a sub-topic's papers; an area's, its sub-topics' (and any filed under it).

    Args:
        topics: areas and sub-topics.
        papers: the papers, their ``topic_id`` set.

    Returns:
        ``topic id -> rows`` (ascending) for every topic of ``topics`` (empty for a topic without papers).
    """
    parent = {t.id: t.parent_id for t in topics}
    out: dict[int, list[int]] = {t.id: [] for t in topics}
    for i, p in enumerate(papers):
        tid = p.topic_id
        if tid is None or tid not in out:
            continue
        out[tid].append(i)
        pid = parent.get(tid)
        if pid is not None and pid in out:
            out[pid].append(i)
    return out


def target_sentences(n_papers: int) -> int:
    """How many sentences an overview of a topic of ``n_papers`` papers has: 2 (< 6 papers), 3, or 4 (40+)."""
    return MIN_SENTENCES if n_papers < 6 else MAX_SENTENCES if n_papers >= 40 else 3


def _stems(words: set[str]) -> set[str]:
    return {stem(w) for w in words}


def _topic_weights(t: Topic) -> dict[str, float]:
    """Stem -> weight of the topic's words: its label's, then its keyphrases' by rank (see the module)."""
    weights: dict[str, float] = {}
    for s in _stems(content_words(t.label, STOP)):
        weights[s] = LABEL_WEIGHT
    for rank, kp in enumerate(t.keyphrases[:N_KEYPHRASES]):
        w = 1.0 / (1.0 + KP_DECAY * rank)
        for s in _stems(content_words(kp, STOP)):
            weights[s] = max(weights.get(s, 0.0), w)
    return {s: w * (BROAD_SHARE if s in BROAD_KEYS else 1.0) for s, w in weights.items()}


def _bonus(p: Paper) -> float:
    return STATUS_BONUS.get((p.status or "").strip().lower(), 0.0)


def _centrality(rows: list[int], vectors: np.ndarray) -> np.ndarray:
    """Cosine of each row's vector with the rows' mean vector, rescaled to 0..1 (all 1.0 without vectors)."""
    if not len(rows) or vectors.ndim != 2 or vectors.shape[0] <= max(rows) or not vectors.shape[1]:
        return np.ones(len(rows))
    x = vectors[rows].astype(np.float64)
    c = x.sum(axis=0)
    c /= np.linalg.norm(c) or 1.0
    cos = x @ c
    lo, hi = float(cos.min()), float(cos.max())
    return (cos - lo) / (hi - lo) if hi > lo else np.ones(len(rows))


def _weight_of(stems: set[str] | frozenset[str], weights: dict[str, float]) -> float:
    """The summed weight of the topic words among ``stems``."""
    if len(stems) < len(weights):
        return sum(weights.get(s, 0.0) for s in stems)
    return sum(w for s, w in weights.items() if s in stems)


def _pool(t: Topic, rows: list[int], papers: list[Paper], cent: dict[int, float], weights: dict[str, float],
          sub_of: Mapping[int, int | None], kp_stems: dict[int, frozenset[str]]) -> list[int]:
    """The :data:`POOL` rows read (for an area, the best of each sub-topic in turn)."""
    total = sum(weights.values()) or 1.0
    scores: dict[int, tuple[float, str]] = {}
    for i in rows:
        kp = kp_stems.get(i)
        if kp is None:
            kp = kp_stems[i] = frozenset(_stems(content_words(" ".join(papers[i].keyphrases), STOP)))
        scores[i] = (-(0.6 * cent[i] + 0.4 * _weight_of(kp, weights) / total + _bonus(papers[i])), papers[i].id)
    score = scores.__getitem__
    ranked = sorted(rows, key=score)
    if t.level != 0:
        return ranked[:POOL]
    by_sub: dict[int | None, list[int]] = {}
    for i in ranked:
        by_sub.setdefault(sub_of.get(i), []).append(i)
    queues = sorted(by_sub.values(), key=lambda q: score(q[0]))
    out: list[int] = []
    depth = 0
    while len(out) < POOL + POOL // 2 and any(depth < len(q) for q in queues):
        out += [q[depth] for q in queues if depth < len(q)]
        depth += 1
    return out[:POOL + POOL // 2]


def _candidates(p: Paper) -> list[tuple[str, int, float, str]]:
    """``(source, position, role, text)`` of each sentence of paper ``p`` that may be copied.

    A paper without an abstract (an awesome-list entry) is read from its curator's ``digest`` instead (source
    ``"digest"``).
    """
    body = "abstract" if (p.abstract or "").strip() or not (p.digest or "").strip() else "digest"
    abstract = split_sentences(p.abstract if body == "abstract" else p.digest)
    tldr, whole = (p.tldr or "").strip(), None
    if tldr:  # an extractive TL;DR is a sentence cut short ("... approach based."): the whole sentence is read
        words = content_words(tldr, STOP)
        whole = next((s for s in abstract if len(s) >= len(tldr) and words <= content_words(s, STOP)), None)
        # and one cut from two sentences ("... and show that Folklore Graph Neural Networks (FGNN).") is not read
        cut = (p.tldr_method or "").startswith("extractive")
        tldr = "" if whole is not None or cut else tldr
    fields = [("tldr", tldr)] if tldr else []
    fields += [(body, s) for s in abstract]
    out = []
    for pos, (source, text) in enumerate(fields):
        n = len(_TOKEN.findall(text))
        if not (MIN_WORDS <= n <= MAX_WORDS) or _SKIP.search(text) or not text[0].isupper() \
                or text[-1] not in ".!?)\"'":
            continue
        at = 0 if source == "tldr" else pos - (1 if fields[0][0] == "tldr" else 0)
        role = ROLE_TLDR if source == "tldr" or text == whole else ROLE_OWN if _OWN.search(text) else ROLE_OTHER
        out.append((source, at, role - (DANGLING_PENALTY if _DANGLING.match(text) else 0.0), text))
    return out


def compute_overview(t: Topic, rows: list[int], papers: list[Paper], vectors: np.ndarray,
                     sub_of: Mapping[int, int | None] | None = None,
                     kp_stems: dict[int, frozenset[str]] | None = None) -> Overview:
    """The extractive overview of topic ``t`` (see the module docstring for the method).

    Args:
        t: the area or sub-topic (its label and keyphrases give the words scored).
        rows: the rows of ``papers`` (and ``vectors``) of its members (:func:`topic_members`).
        papers: every paper of the atlas (their ``tldr``, ``abstract``, ``keyphrases``, ``status``).
        vectors: ``(len(papers), dim)`` float32 L2-normalised paper vectors, row ``i`` for ``papers[i]``; an
            empty array scores every paper as equally central.
        sub_of: for an area, row -> the sub-topic id of that paper (so several sub-topics are cited).
        kp_stems: row -> the stems of that paper's keyphrases, filled as they are made (shared by the calls of one
            atlas: a paper is in a sub-topic and an area).

    Returns:
        The overview: :func:`target_sentences` sentences (fewer when the topic's papers have fewer distinct,
        non-redundant sentences; none for a topic without papers), each from a distinct member paper.
    """
    key = overview_key(t.label, [papers[i].id for i in rows])
    if not rows:
        return Overview("", [], key)
    sub_of = sub_of or {}
    weights = _topic_weights(t)
    total = sum(sorted(weights.values(), reverse=True)[:6]) or 1.0  # a sentence covering 6 top words scores 1
    cent = dict(zip(rows, _centrality(rows, vectors).tolist(), strict=True))
    cands = []  # (score, paper id, position, row, source, text, words)
    for i in _pool(t, rows, papers, cent, weights, sub_of, {} if kp_stems is None else kp_stems):
        p = papers[i]
        for source, pos, role, text in _candidates(p):
            words = content_words(text, STOP)
            if len(words) < 4:
                continue
            stems = _stems(words)
            cover = min(1.0, _weight_of(stems, weights) / total)
            score = W_COVER * cover + W_CENTRAL * cent[i] + W_ROLE * role + _bonus(p)
            cands.append((-score, p.id, pos, i, source, text, words))
    cands.sort(key=lambda c: c[:3])
    want = target_sentences(len(rows))
    chosen: list[tuple] = []

    def same_paper(a: int, b: int) -> bool:  # one paper listed twice (same title and abstract) counts once
        return a == b or (papers[a].title, papers[a].abstract) == (papers[b].title, papers[b].abstract)

    for distinct_subs in ((True, False) if t.level == 0 and sub_of else (False,)):
        for c in cands:
            if len(chosen) >= want:
                break
            if any(same_paper(c[3], d[3]) or jaccard(c[6], d[6]) > REDUNDANCY_MAX_JACCARD for d in chosen):
                continue
            if distinct_subs and any(sub_of.get(c[3]) == sub_of.get(d[3]) for d in chosen):
                continue
            chosen.append(c)
    chosen.sort(key=lambda c: (c[2], c[0], c[1]))  # early in the abstract first: what is studied, then findings
    ids: list[str] = []
    sentences = []
    for c in chosen:
        ids.append(c[1])
        sentences.append(OverviewSentence(c[5], len(ids), c[1], c[4], round(-c[0], 4)))
    return Overview(" ".join(f"{s.text} [{s.cite}]" for s in sentences), ids, key, sentences)


def compute_overviews(topics: list[Topic], papers: list[Paper], vectors: np.ndarray,
                      only: set[int] | None = None) -> dict[int, Overview]:
    """The overviews of many topics (:func:`compute_overview` of each).

    Args:
        topics: the atlas's areas and sub-topics.
        papers: its papers (``topic_id`` set to a sub-topic, or an area when there is no hierarchy).
        vectors: ``(len(papers), dim)`` paper vectors in the order of ``papers`` (empty: no centrality).
        only: the ids of the topics to compute; None for all.

    Returns:
        ``topic id -> Overview`` for the topics computed.
    """
    members = topic_members(topics, papers)
    sub_of = {i: p.topic_id for i, p in enumerate(papers)}
    kp_stems: dict[int, frozenset[str]] = {}
    return {t.id: compute_overview(t, members[t.id], papers, vectors, sub_of if t.level == 0 else None, kp_stems)
            for t in topics if only is None or t.id in only}


@dataclass
class StoredOverview:
    """A topic's overview as the last build stored it (:func:`paperatlas.store.overviews.previous_overviews`).

    Attributes:
        key: the :func:`overview_key` it was made for (``""`` when unknown).
        text: the overview.
        papers: the cited paper ids.
        method: its ``overview_method``.
    """

    key: str
    text: str
    papers: list[str]
    method: str


def refresh_overviews(topics: list[Topic], papers: list[Paper], vectors: np.ndarray,
                      previous: Mapping[int, StoredOverview]) -> tuple[dict[int, str], int]:
    """Give every topic its overview, in place: the stored one when its topic is unchanged, else a fresh one.

    A topic keeps the last build's overview when its :func:`overview_key` (label and members) is the stored key
    and the stored overview was computed (not a reader's); a topic whose ``overview_method`` is already
    :data:`EDIT_METHOD` (the reader's text, put on by :func:`paperatlas.store.topic_overrides.apply_reader_edits`)
    is left as it is.

    Args:
        topics: the build's areas and sub-topics (their labels and the papers' placements final), changed in place.
        papers: the build's papers.
        vectors: their vectors, row ``i`` for ``papers[i]``.
        previous: ``topic id -> StoredOverview`` of the last build (empty for a first build).

    Returns:
        ``(keys, n_computed)``: ``topic id -> overview key`` to store with each topic (``""`` for a reader's
        overview, so that clearing it makes the next build compute one), and how many topics were computed.
    """
    members = topic_members(topics, papers)
    keys: dict[int, str] = {}
    todo: set[int] = set()
    for t in topics:
        if t.overview_method == EDIT_METHOD:
            keys[t.id] = ""
            continue
        keys[t.id] = key = overview_key(t.label, [papers[i].id for i in members[t.id]])
        old = previous.get(t.id)
        if old is not None and old.key == key and old.method == METHOD:
            t.overview, t.overview_papers, t.overview_method = old.text, list(old.papers), old.method
        else:
            todo.add(t.id)
    if todo:
        ov = compute_overviews(topics, papers, vectors, only=todo)
        for t in topics:
            if t.id in todo:
                t.overview, t.overview_papers, t.overview_method = ov[t.id].text, ov[t.id].papers, METHOD
    return keys, len(todo)


def overview_parts(text: str, cited: list[str]) -> list[tuple[str, int, str | None]]:
    """An overview cut into its runs of text and its citations, for a page that links each ``[n]``.

    Args:
        text: the overview (any text; each sentence normally followed by ``[n]``).
        cited: the cited paper ids (``[n]`` is ``cited[n - 1]``).

    Returns:
        ``[(text, n, paper id), ...]`` in reading order: a run of text is ``(text, 0, None)``; a citation is
        ``("[n]", n, id)``, with id None when ``n`` is out of range (shown as plain text). ``[]`` for ``""``.
    """
    out: list[tuple[str, int, str | None]] = []
    pos = 0
    for m in _CITE.finditer(text or ""):
        if m.start() > pos:
            out.append((text[pos:m.start()], 0, None))
        n = int(m.group(1))
        out.append((m.group(0), n, cited[n - 1] if 1 <= n <= len(cited) else None))
        pos = m.end()
    if pos < len(text or ""):
        out.append((text[pos:], 0, None))
    return out


def without_paper(text: str, cited: list[str], paper_id: str) -> tuple[str, list[str]]:
    """An overview with the sentences citing ``paper_id`` left out and the rest renumbered.

    For a paper the reader moved out of a topic: its overview then cites only the topic's own papers until the
    next build makes it anew.

    Args:
        text: the overview, each sentence followed by ``[n]``.
        cited: its cited paper ids (``[n]`` is ``cited[n - 1]``).
        paper_id: the paper whose sentences go.

    Returns:
        ``(text, cited)``, unchanged when ``paper_id`` is not cited.
    """
    if paper_id not in cited:
        return text, list(cited)
    parts = _CITE.split(text)
    ids: list[str] = []
    out: list[str] = []
    for i in range(0, len(parts) - 1, 2):
        n = int(parts[i + 1])
        pid = cited[n - 1] if 1 <= n <= len(cited) else None
        if pid == paper_id:
            continue
        if pid is None:
            out.append(parts[i].strip())
            continue
        if pid not in ids:
            ids.append(pid)
        out.append(f"{parts[i].strip()} [{ids.index(pid) + 1}]")
    if parts[-1].strip():
        out.append(parts[-1].strip())
    return " ".join(x for x in out if x), ids
