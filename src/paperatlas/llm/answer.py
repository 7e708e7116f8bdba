"""Generative answers: a model rewrites an extractive answer, and every sentence it writes is checked.

:func:`rewrite_answer` gives a backend (:mod:`paperatlas.llm.backends`) the question, the extractive answer's
sentences with their ``[n]`` (:class:`Excerpt`) and the cited papers' titles, TL;DRs and abstracts
(:class:`Source`), and asks for 2-6 sentences, each ending with the ``[n]`` of the paper it comes from. Its answer
is parsed into sentences and citations (:func:`parse_answer`) and each written sentence is kept only when
:func:`support` finds it supported by the paper it cites:

* **numbers**: every number it states occurs in the cited paper's title, abstract or TL;DR
  (:func:`paperatlas.llm.tldr.unsupported_numbers`);
* **words**: at least :data:`MIN_WORD_SHARE` of its content words (framing and connective words such as
  ``propose``, ``also``, ``another`` exempt) occur there (:func:`paperatlas.llm.tldr.word_support`);
* **meaning** (when an encoder is given): its MiniLM cosine with the closest sentence of the cited paper's abstract
  or TL;DR is at least :data:`MIN_COSINE`;
* **attribution**: it does not restate a sentence of another paper of the answer (cosine at least
  :data:`MISATTRIBUTED_COSINE` with that paper's excerpt): a model that moves a sentence to the wrong ``[n]`` is
  not saved by the two papers sharing a subject's words.

The thresholds were chosen on SciTLDR dev (Cachola et al. 2020): the gold TL;DRs against their own paper's
abstract and against the most similar other abstract of the set (``benchmarks/ask_support.py``; the figures are in
its docstring). A sentence citing no paper, a paper not in the answer, or failing the check is dropped
(:class:`Dropped`, with the reason) and the extractive sentence it came from (the excerpt it is closest to) takes
its place; when no written sentence survives, or the backend fails, the extractive answer stays.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..text import split_sentences
from .backends import BackendError, ChatBackend
from .tldr import FRAMING_WORDS, _content_words, _stem, unsupported_numbers, word_support

#: Share of a written sentence's content words that must occur in the cited paper's title + abstract + TL;DR.
#: With :data:`MIN_COSINE`, on SciTLDR dev: 77 % of author TL;DRs pass against their own abstract, 2.3 % against
#: the most similar other abstract; 2.5 % of abstract sentences pass when cited to the most similar other paper.
MIN_WORD_SHARE = 0.65
#: Least MiniLM cosine of a written sentence with the closest sentence of its cited paper (when encoded).
MIN_COSINE = 0.55
#: A written sentence this close (MiniLM cosine; without an encoder, the Jaccard index of word stems) to an excerpt
#: of another paper than the one it cites restates that paper: it is dropped as misattributed, even when the cited
#: paper's words support it (two papers on one subject share most words: SmolLM2 cited GANs Can Play Lottery Tickets
#: Too for Long Live the Lottery's definition of the lottery ticket hypothesis).
MISATTRIBUTED_COSINE, MISATTRIBUTED_JACCARD = 0.85, 0.6
#: Most sentences read from the model's answer (the prompt asks for 2-6).
MAX_WRITTEN = 6
#: Longest written sentence, in words (a longer one is dropped: it is several claims run together).
MAX_SENTENCE_WORDS = 60
#: Each abstract is cut to this many characters in the prompt ...
MAX_ABSTRACT_CHARS = 1_200
#: ... and all of them together to this many (~900 tokens), so that the prompt and the answer fit SmolLM2's
#: 2,048-token context.
MAX_ABSTRACTS_CHARS = 3_200
#: Most tokens the model may write.
MAX_TOKENS = 320
#: Words a written sentence may use without its source using them: framing words and the connectives of a paragraph.
ANSWER_EXEMPT = FRAMING_WORDS | frozenset(
    "also another other others similarly however moreover furthermore additionally addition instead whereas "
    "while both several various researchers paper's papers works approaches methods models example such "
    "including include includes first second finally overall".split())

SYSTEM_PROMPT = (
    "You answer a question about research papers using only the numbered excerpts and abstracts you are given. "
    "Rewrite the excerpts into a short paragraph of 2 to 6 plain sentences that answers the question. End every "
    "sentence with the number in brackets, like [1], of the one paper it comes from. Use only facts stated in "
    "that paper; do not add numbers, names or claims. No preamble, no lists, no markdown."
)

#: The last line of the user message.
INSTRUCTION = "Rewrite the excerpts into 2 to 6 sentences that answer the question, each ending with its [n]:"
#: The heading of the excerpts in the user message.
EXCERPTS_HEADING = "Excerpts that answer the question:"
#: The prompt's own sentences, lower case without final punctuation: a model echoing them back has written nothing.
_INSTRUCTIONS = " ".join(f"{SYSTEM_PROMPT} {INSTRUCTION} {EXCERPTS_HEADING}".lower().split())

_CITE = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")


@dataclass
class Excerpt:
    """One sentence of the extractive answer: its ``text`` (verbatim) and the ``cite`` number of its paper."""

    text: str
    cite: int


@dataclass
class Source:
    """A cited paper as the model and the check see it.

    Attributes:
        cite: its 1-based citation number.
        title: its title.
        abstract: its abstract.
        tldr: its TL;DR, or ``""``.
    """

    cite: int
    title: str
    abstract: str
    tldr: str = ""

    def text(self) -> str:
        """Title, abstract and TL;DR, one per line: what a written sentence citing the paper must be true to."""
        return "\n".join(x for x in (self.title, self.abstract, self.tldr) if x)

    def sentences(self) -> list[str]:
        """The TL;DR and the abstract's sentences (:func:`paperatlas.text.split_sentences`), for the cosine check."""
        return ([self.tldr] if self.tldr else []) + split_sentences(self.abstract)


@dataclass
class Written:
    """A sentence of the rewritten answer.

    Attributes:
        text: the sentence, without its ``[n]``.
        cite: the citation number of its paper.
        written: True when the model wrote it (and it passed :func:`support`); False for an extractive sentence.
        origin: index in the excerpts of the extractive sentence it rewrites or is (-1: none).
    """

    text: str
    cite: int
    written: bool
    origin: int = -1


@dataclass
class Dropped:
    """A sentence the model wrote and the check refused.

    Attributes:
        text: the sentence, without its ``[n]``.
        cite: the ``[n]`` it gave (0: none).
        reason: why it was refused, e.g. ``"numbers not in the cited paper: 37%"``.
        paper_id: the id of the paper it cited when that paper is one of the answer's (set by
            :func:`paperatlas.ask.rewrite`), else ``""``.
    """

    text: str
    cite: int
    reason: str
    paper_id: str = ""


@dataclass
class Rewrite:
    """What :func:`rewrite_answer` returns.

    Attributes:
        sentences: the answer's sentences in order (all extractive when nothing written survived).
        dropped: the written sentences refused, in the model's order.
        method: the backend's ``method`` (which model wrote the sentences marked written).
        note: one line when the backend failed or nothing written survived (e.g. ``the model failed (HTTP 500);
            the answer is extractive``), else ``""``.
        raw: the model's raw answer (``""`` when the backend failed).
    """

    sentences: list[Written]
    dropped: list[Dropped] = field(default_factory=list)
    method: str = ""
    note: str = ""
    raw: str = ""

    @property
    def n_written(self) -> int:
        """How many of the answer's sentences the model wrote."""
        return sum(s.written for s in self.sentences)


def answer_messages(question: str, excerpts: list[Excerpt], sources: list[Source]) -> list[dict[str, str]]:
    """System + user chat messages asking for the rewritten answer.

    Args:
        question: the question.
        excerpts: the extractive answer's sentences, in order.
        sources: the cited papers (each abstract cut to :data:`MAX_ABSTRACT_CHARS` characters, all of them to
            :data:`MAX_ABSTRACTS_CHARS`).

    Returns:
        OpenAI-style chat messages.
    """
    papers = []
    cap = min(MAX_ABSTRACT_CHARS, MAX_ABSTRACTS_CHARS // max(1, len(sources)))
    for s in sources:
        abstract = " ".join(s.abstract.split())
        if len(abstract) > cap:
            abstract = abstract[:cap].rsplit(" ", 1)[0] + " …"
        papers.append(f"[{s.cite}] {s.title.strip()}\n" + (f"TL;DR: {s.tldr.strip()}\n" if s.tldr else "")
                      + f"Abstract: {abstract}")
    lines = "\n".join(f"{e.text} [{e.cite}]" for e in excerpts)
    user = (f"Question: {question.strip()}\n\nPapers:\n" + "\n\n".join(papers)
            + f"\n\n{EXCERPTS_HEADING}\n{lines}\n\n{INSTRUCTION}")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_answer(raw: str) -> list[tuple[str, list[int]]]:
    """The model's answer as ``(sentence, cites)`` pairs, in order.

    Preamble, bullets and markdown emphasis are removed, each line ends a sentence, the text is
    cut after each ``[n]``/``[n, m]`` marker, and a piece of several sentences gives each of them its marker (a
    model often cites once after two sentences of one paper). Text after the last marker has no citation:
    ``cites`` is empty. Markers are removed from the sentence, which keeps its final punctuation.

    Args:
        raw: the model's raw answer (None counts as empty).

    Returns:
        E.g. ``[("Hopfield networks store patterns.", [1]), ("They have a new update rule.", [1, 2])]``.
    """
    lines = [_strip_markup(ln) for ln in (raw or "").splitlines()]
    # a line ends a sentence: "Answer:" or an unpunctuated line does not run into the next one
    text = " ".join(ln if ln[-1] in ".!?]" else ln.rstrip(" :;,") + "." for ln in lines if ln)
    out: list[tuple[str, list[int]]] = []
    pos = 0
    for m in _CITE.finditer(text):
        cites = [int(x) for x in re.split(r"[,;]", m.group(1))]
        piece = text[pos:m.start()]
        pos = m.end()
        trail = re.match(r"\s*[.!?]", text[pos:])  # "... [1]." : the period after the marker ends the sentence
        if trail:
            pos += trail.end()
        for s in _sentences(piece):
            out.append((s, cites))
    out += [(s, []) for s in _sentences(text[pos:])]
    return out


def _strip_markup(line: str) -> str:
    """One line of a model answer without bullets, headings, emphasis and a ``Answer:``-style preamble."""
    s = re.sub(r"^\s*(?:#+|[-*•]|\d+[.)])\s+", "", line.strip())
    s = re.sub(r"^(?:here(?:'s| is)|sure|certainly|okay|ok)\b[^\n]*?:\s*", "", s, flags=re.I)
    s = re.sub(r"^(?:answer|paragraph|summary)\s*:\s*", "", s, flags=re.I)
    s = re.sub(r"(\*\*|__|`)", "", s)
    return s.strip()


def _sentences(piece: str) -> list[str]:
    """The sentences of a piece of answer text, each ending in punctuation; fragments of < 3 words dropped."""
    out = []
    for s in split_sentences(" ".join(piece.split())):
        s = s.strip().strip("\"'“”").strip()
        if len(s.split()) < 3:
            continue
        out.append(s if s[-1] in ".!?" else s.rstrip(" ,;:") + ".")
    return out


def support(text: str, source: Source, encode: Callable[[list[str]], np.ndarray] | None = None,
            vector: np.ndarray | None = None, source_vectors: np.ndarray | None = None) -> tuple[bool, str]:
    """Whether a written sentence is supported by the paper it cites (the check of the module docstring).

    Args:
        text: the sentence, without its ``[n]``.
        source: the cited paper.
        encode: texts -> ``(n, dim)`` L2-normalised float32 rows (MiniLM), or None to skip the meaning check.
        vector: the sentence's row of ``encode`` when already computed.
        source_vectors: ``encode(source.sentences())`` when already computed.

    Returns:
        ``(ok, reason)``: reason ``"ok"`` or what failed, e.g. ``"numbers not in the cited paper: 37%"``,
        ``"words not in the cited paper (50% supported): quantum, oracle"``,
        ``"meaning far from the cited paper (cosine 0.31)"``.
    """
    t = " ".join(text.split())
    n_words = len(t.split())
    if n_words > MAX_SENTENCE_WORDS:
        return False, f"too long ({n_words} words > {MAX_SENTENCE_WORDS})"
    bad = unsupported_numbers(t, source.text())
    if bad:
        return False, "numbers not in the cited paper: " + ", ".join(bad)
    share, missing = word_support(t, source.text(), ANSWER_EXEMPT)
    if share is None:
        return False, "no content words"
    if share < MIN_WORD_SHARE:
        uniq = list(dict.fromkeys(w.lower() for w in missing))
        return False, f"words not in the cited paper ({share:.0%} supported): " + ", ".join(uniq)
    if encode is not None or (vector is not None and source_vectors is not None):
        cos = max_cosine(t, source, encode, vector, source_vectors)
        if cos < MIN_COSINE:
            return False, f"meaning far from the cited paper (cosine {cos:.2f})"
    return True, "ok"


def max_cosine(text: str, source: Source, encode: Callable[[list[str]], np.ndarray] | None = None,
               vector: np.ndarray | None = None, source_vectors: np.ndarray | None = None) -> float:
    """The cosine of ``text`` with the closest sentence of ``source`` (TL;DR or abstract); 0.0 when it has none.

    Args:
        text: the sentence.
        source: the paper.
        encode: the encoder (needed unless both vectors are given).
        vector: ``text``'s row when already computed.
        source_vectors: the rows of ``source.sentences()`` when already computed.
    """
    if source_vectors is None:
        sents = source.sentences()
        if not sents or encode is None:
            return 0.0
        source_vectors = encode(sents)
    if vector is None:
        if encode is None:
            return 0.0
        vector = encode([text])[0]
    if not len(source_vectors):
        return 0.0
    return float(np.max(np.asarray(source_vectors, dtype=np.float32) @ np.asarray(vector, dtype=np.float32)))


def _plain(text: str) -> str:
    """``text`` lower case, whitespace collapsed, without final punctuation (to tell a copy from a rewrite)."""
    return " ".join(text.lower().split()).rstrip(".!? ")


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _content_words(text)}


def rewrite_answer(backend: ChatBackend, question: str, excerpts: list[Excerpt], sources: list[Source],
                   encode: Callable[[list[str]], np.ndarray] | None = None) -> Rewrite:
    """The extractive answer rewritten by ``backend``, every written sentence checked (see the module docstring).

    Each written sentence's origin is the excerpt closest to it (by MiniLM cosine when ``encode`` is given, else by
    the Jaccard index of their word stems), whatever paper it cites. A kept sentence takes the place of its origin;
    a dropped one is replaced by its origin (once, and not when a kept sentence rewrites that origin); a kept one
    that merely copies its origin (same words, same paper) counts as the copied sentence, not written. A sentence
    repeating an earlier one word for word, or echoing the prompt, is skipped (small models loop and echo); one
    whose words are all a paper's title is dropped (the prompt lists the papers by title). The answer has at most
    :data:`MAX_WRITTEN` sentences, written or copied; when fewer than two result, the excerpts not yet used follow
    in their order. Backend errors are not raised: the extractive answer comes back with a ``note``.

    Args:
        backend: the generative backend.
        question: the question.
        excerpts: the extractive answer's sentences in order (at least one).
        sources: the cited papers (each ``cite`` used by an excerpt).
        encode: MiniLM encoder (L2-normalised rows), or None for the word checks only.

    Returns:
        The :class:`Rewrite`; its ``sentences`` cite only ``sources``.
    """
    extractive = [Written(e.text, e.cite, False, i) for i, e in enumerate(excerpts)]
    try:
        raw = backend.complete(answer_messages(question, excerpts, sources), max_tokens=MAX_TOKENS)
    except BackendError as e:
        return Rewrite(extractive, method=backend.method,
                       note=f"the model failed ({e.short}); the answer is extractive")
    parsed = parse_answer(raw)[: MAX_WRITTEN * 2]
    by_cite = {s.cite: s for s in sources}
    texts = [s for s, _ in parsed]
    sv = ev = None
    src_vecs: dict[int, np.ndarray] = {}
    if encode is not None and texts:
        sv = encode(texts)
        ev = encode([e.text for e in excerpts])
        for s in sources:
            sents = s.sentences()
            src_vecs[s.cite] = encode(sents) if sents else np.zeros((0, sv.shape[1]), dtype=np.float32)
    ex_stems = [_stems(e.text) for e in excerpts]
    decided = []  # (text, cite, ok, reason, origin) in the model's order
    seen: set[str] = set()
    for k, (text, cites) in enumerate(parsed):
        norm = " ".join(text.lower().split())
        for heading in (EXCERPTS_HEADING.lower(), "papers:", "question:"):  # "Excerpts that answer ...: We find ..."
            if norm.startswith(heading):
                text, norm = text[len(heading):].strip(), norm[len(heading):].strip()
        if not norm or norm in seen or norm.rstrip(".") in _INSTRUCTIONS:  # a repetition loop, the prompt echoed
            continue
        seen.add(norm)
        st = _stems(text)
        if sv is not None and ev is not None:
            origin = int(np.argmax(ev @ sv[k]))
        else:
            origin = max(range(len(excerpts)), key=lambda i: (len(st & ex_stems[i]) / (len(st | ex_stems[i]) or 1), -i))
        ok, reason, cite = _verdict(text, cites, st, sources, by_cite, sv[k] if sv is not None else None, src_vecs)
        if ok and cite != excerpts[origin].cite:  # close to another paper's sentence: the citation is misplaced
            close = float(ev[origin] @ sv[k]) if sv is not None and ev is not None else \
                len(st & ex_stems[origin]) / (len(st | ex_stems[origin]) or 1)
            if close >= (MISATTRIBUTED_COSINE if sv is not None else MISATTRIBUTED_JACCARD):
                ok, reason = False, (f"cites [{cite}] but restates a sentence of [{excerpts[origin].cite}] "
                                     f"({'cosine' if sv is not None else 'word overlap'} {close:.2f})")
        decided.append((text, cite, ok, reason, origin))
    out, dropped, used = _assemble(decided, excerpts, extractive)
    if not any(s.written for s in out):
        if not parsed:
            note = "the model wrote no sentence; the answer is extractive"
        elif any(ok for _t, _c, ok, _r, _o in decided):
            note = "the model only copied sentences; the answer is extractive"
        else:
            note = "no sentence the model wrote is supported by its cited abstract; the answer is extractive"
        return Rewrite(extractive, dropped, backend.method, note, raw)
    for i, e in enumerate(extractive):
        if len(out) >= 2:
            break
        if i not in used:
            out.append(e)
            used.add(i)
    return Rewrite(out, dropped, backend.method, "", raw)


def _verdict(text: str, cites: list[int], st: set[str], sources: list[Source], by_cite: dict[int, Source],
             vector: np.ndarray | None, src_vecs: dict[int, np.ndarray]) -> tuple[bool, str, int]:
    """``(kept, why not, cite)`` of a written sentence: the first of its ``cites`` whose paper supports it.

    ``st`` is the sentence's word stems; a sentence that is a paper's title, cites nothing or cites no paper of
    the answer is not kept.
    """
    ok, reason, cite = False, "cites no paper", cites[0] if cites else 0
    if st and any(st <= _stems(x.title) for x in sources):
        return ok, "a paper's title, not a sentence", cite  # the prompt lists the papers by title; a model echoes
    if cites:
        reasons = []
        for c in cites:
            if c not in by_cite:
                reasons.append(f"cites [{c}], not a paper of the answer")
                continue
            ok, why = support(text, by_cite[c], vector=vector, source_vectors=src_vecs.get(c))
            if ok:
                cite = c
                break
            reasons.append(why)
        reason = "; ".join(reasons)
    return ok, reason, cite


def _assemble(decided: list[tuple[str, int, bool, str, int]], excerpts: list[Excerpt], extractive: list[Written]) \
        -> tuple[list[Written], list[Dropped], set[int]]:
    """The kept sentences (at most :data:`MAX_WRITTEN`), the dropped ones, and the excerpts used.

    ``decided`` is ``(text, cite, kept, why not, origin)`` per written sentence in the model's order; a dropped
    sentence's origin stands in for it (once, unless a kept sentence rewrites it); a kept copy of its origin counts
    as that excerpt.
    """
    kept = {origin for _t, _c, ok, _r, origin in decided[:MAX_WRITTEN] if ok}
    out: list[Written] = []
    dropped: list[Dropped] = []
    used: set[int] = set()
    for text, cite, ok, reason, origin in decided:
        if ok and len(out) < MAX_WRITTEN:
            same = _plain(text) == _plain(excerpts[origin].text) and cite == excerpts[origin].cite
            out.append(extractive[origin] if same else Written(text, cite, True, origin))  # a copy is not written
            used.add(origin)
            continue
        dropped.append(Dropped(text, cite, reason if not ok else f"more than {MAX_WRITTEN} sentences"))
        # the copied sentence it came from stands in, once, unless a kept sentence already rewrites it
        if origin not in used and origin not in kept and len(out) < MAX_WRITTEN:
            out.append(extractive[origin])
            used.add(origin)
    return out, dropped, used


__all__ = ["ANSWER_EXEMPT", "MIN_COSINE", "MIN_WORD_SHARE", "Dropped", "Excerpt", "Rewrite", "Source", "Written",
           "answer_messages", "max_cosine", "parse_answer", "rewrite_answer", "support"]
