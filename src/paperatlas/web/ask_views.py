"""The *Ask* page (``/ask``) and its JSON twin (``/api/ask``): a cited answer to a question (issue 29, part 1).

Both call :func:`paperatlas.ask.ask` with the search page's filters (:func:`.search_views.current_filters`, the same
parameters: ``status``, ``venue``, ``year``, ``author``, ``topic``, ...) and the app's query model once it is loaded
(``ctx.state["embedder"]``, the one search uses; before that, or without the model package, the answer is scored by
the question's words and the papers' rank alone). A read: GET, no CSRF token.
"""

from __future__ import annotations

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


class BadQuestion(ValueError):
    """A question the app does not answer: empty, or longer than the limit (:func:`paperatlas.ask.check_question`)."""


def encoder(ctx: WebContext) -> Callable[[list[str]], np.ndarray] | None:
    """The app's query model as ``ask`` takes it: ``texts -> (n, 384) float32`` L2-normalised rows, or None.

    None until the app's warm-up has loaded the model (:func:`paperatlas.web.create_app` with ``preload_model``),
    or when it could not be loaded, or when the atlas has no paper vectors.
    """
    model = ctx.state.get("embedder")
    return model.encode if model is not None and ctx.atlas.vectors.size else None


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
