"""The *Ask* page (``/ask``) and its JSON twin (``/api/ask``): a cited answer to a question (issue 29, part 1).

Both call :func:`paperatlas.ask.ask` with the search page's filters (:func:`.search_views.current_filters`, the same
parameters: ``status``, ``venue``, ``year``, ``author``, ``topic``, ...) and the app's query model once it is loaded
(``ctx.state["embedder"]``, the one search uses; before that, or without the model package, the answer is scored by
the question's words and the papers' rank alone). A read: GET, no CSRF token.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
from flask import Flask, jsonify, render_template, request

from ..ask import Answer, ask, check_question
from .context import WebContext
from .search_views import current_filters

#: Questions the empty Ask page offers (each answered by the bundled ICLR 2021 sample and by the ICLR 2021 atlas).
EXAMPLES = ("how do neural ODEs relate to residual networks",
            "what are Hopfield networks",
            "how can reinforcement learning be made robust to adversarial observations")


#: Texts encoded in one model call: ``ask`` embeds up to 32 sentences of a question's papers, and one batch is padded
#: to its longest sentence, so they are sorted by length and encoded this many at a time (the same vectors, to the
#: last bit on ONNX Runtime; 0.16-0.38 s instead of 0.71-0.87 s a question on the ICLR 2021 atlas, 2 loaded cores).
CHUNK = 4
#: Sentence vectors kept for later questions (384 float32 each: ~1.5 kB; 20,000 ≈ 31 MB at most).
CACHE_TEXTS = 20_000


class SentenceEncoder:
    """The query model's ``encode`` for ``ask``: sentences sorted by length in chunks of :data:`CHUNK`, cached.

    A paper's sentences never change while the app runs, so a sentence another question already embedded is
    taken from a least-recently-used cache of :data:`CACHE_TEXTS` texts. Thread-safe.

    Args:
        encode: ``texts -> (n, dim)`` float32 L2-normalised rows (the app's query model).
        chunk: texts per model call.
        cache_size: texts whose vectors are kept.
    """

    def __init__(self, encode: Callable[[list[str]], np.ndarray], chunk: int = CHUNK,
                 cache_size: int = CACHE_TEXTS):
        self._encode = encode
        self._chunk = chunk
        self._size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 rows, those of the model (see the class)."""
        texts = list(texts)
        rows: list[np.ndarray | None] = [None] * len(texts)
        with self._lock:
            for i, t in enumerate(texts):
                v = self._cache.get(t)
                if v is not None:
                    self._cache.move_to_end(t)
                    rows[i] = v
        todo = sorted({t for t, v in zip(texts, rows, strict=True) if v is None}, key=len)
        got: dict[str, np.ndarray] = {}
        for s in range(0, len(todo), self._chunk):
            part = todo[s:s + self._chunk]
            got.update(zip(part, np.asarray(self._encode(part), dtype=np.float32), strict=True))
        if got:
            with self._lock:
                self._cache.update(got)
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        out = [v if v is not None else got[t] for t, v in zip(texts, rows, strict=True)]
        return np.vstack(out) if out else np.asarray(self._encode([]), dtype=np.float32)


class BadQuestion(ValueError):
    """A question the app does not answer: empty, or longer than the limit (:func:`paperatlas.ask.check_question`)."""


def encoder(ctx: WebContext) -> Callable[[list[str]], np.ndarray] | None:
    """The app's query model as ``ask`` takes it: ``texts -> (n, 384) float32`` L2-normalised rows, or None.

    A :class:`SentenceEncoder` over the model search uses (``ctx.state["embedder"]``), made once per model. None
    until the app's warm-up has loaded the model (:func:`paperatlas.web.create_app` with ``preload_model``), or
    when it could not be loaded, or when the atlas has no paper vectors.
    """
    model = ctx.state.get("embedder")
    if model is None or not ctx.atlas.vectors.size:
        return None
    enc = ctx.state.get("ask_encoder")
    if enc is None or enc[0] is not model:
        enc = ctx.state["ask_encoder"] = (model, SentenceEncoder(model.encode))
    return enc[1]


def answer_request(ctx: WebContext) -> Answer:
    """The answer to the request's ``q`` under its filters.

    Raises:
        BadQuestion: ``q`` is empty (after stripping) or too long; the message is the one line to show.
    """
    try:
        q = check_question(request.args.get("q", ""))
    except ValueError as e:  # QuestionTooLong (a ValueError): the message is one line naming the limit
        raise BadQuestion(str(e)) from e
    if not q:
        raise BadQuestion("the question is empty: ask something, e.g. “" + EXAMPLES[0] + "”")
    return ask(ctx.atlas, q, filters=current_filters(ctx), encode=encoder(ctx))


def register(app: Flask, ctx: WebContext) -> None:
    """Add ``ask_page`` (``/ask?q=...&<filters>``) and ``api_ask`` (``/api/ask?q=...&<filters>``) to ``app``.

    ``/api/ask`` answers :meth:`paperatlas.ask.Answer.to_json` (200), or ``{"error": one line}`` with status 400
    for an empty or too long question. ``/ask`` renders ``ask.html``: the Ask box with the filters, then the answer
    (each sentence followed by its ``[n]`` linking to the paper's page, then the cited papers), or on a miss the
    message and the nearest topics; an empty question shows the box and :data:`EXAMPLES`; a too long one the
    message, with status 400.

    Args:
        app: the Flask app.
        ctx: the shared state.
    """

    @app.get("/ask")
    def ask_page():
        q = request.args.get("q", "")
        args = {"q": q, "args": request.args, "examples": EXAMPLES, "answer": None, "error": None, "cited": [],
                "meaning": encoder(ctx) is not None}
        if not q.strip():
            return render_template("ask.html", **args)
        try:
            ans = answer_request(ctx)
        except BadQuestion as e:
            return render_template("ask.html", **{**args, "error": str(e)}), 400
        by_id = ctx.atlas.by_id
        cited = [(c, by_id[c.id]) for c in ans.papers if c.id in by_id]
        return render_template("ask.html", **{**args, "answer": ans, "cited": cited})

    @app.get("/api/ask")
    def api_ask():
        """The answer as JSON (:meth:`paperatlas.ask.Answer.to_json`); 400 ``{"error"}`` for a bad question."""
        try:
            ans = answer_request(ctx)
        except BadQuestion as e:
            return jsonify({"error": str(e)}), 400
        return jsonify(ans.to_json())
