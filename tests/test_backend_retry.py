"""The OpenAI-compatible backend tries again after a 429 (or a 503 with Retry-After) or a connection reset.

Before, one 429 became a BackendError at once, so a build's generated TL;DR silently fell back to the extractive one.
Served by the stub chat-completions server of tests/_fake_openai.py; the waits are recorded, not slept.
"""

from __future__ import annotations

import email.utils
import time

import pytest

from _fake_openai import FakeOpenAI
from paperatlas.enrich import tldr
from paperatlas.llm.backends import BackendError, OpenAIChatBackend, _retry_after
from paperatlas.llm.tldr import generate_tldr

TITLE = "Neural networks with late-phase weights"
ABSTRACT = ("The largely successful method of training neural networks is to learn their weights using some variant "
            "of stochastic gradient descent (SGD). Here, we show that the solutions found by SGD can be further "
            "improved by ensembling a subset of the weights in late stages of learning.")
ANSWER = "Ensembling a subset of the weights in late stages of learning improves the solutions found by SGD."


@pytest.fixture
def fake():
    server = FakeOpenAI()
    yield server
    server.close()


def backend(fake, waits, **kw):
    return OpenAIChatBackend(fake.base_url, "m", sleep=waits.append, **kw)


def test_a_429_then_200_gives_the_generated_tldr_not_the_fallback(fake):
    waits = []
    fake.answers = [429, ANSWER]
    text, method = generate_tldr(backend(fake, waits), TITLE, ABSTRACT)
    assert text == ANSWER and "fallback" not in method
    assert len(fake.requests) == 2 and waits == [1.0]


def test_backoff_doubles_and_the_third_429_is_the_error(fake):
    waits = []
    fake.answers = [429, 429, 429, ANSWER]
    with pytest.raises(BackendError, match=r"HTTP 429") as ei:
        backend(fake, waits).complete([{"role": "user", "content": "hi"}])
    assert ei.value.short == "HTTP 429"
    assert len(fake.requests) == 3 and waits == [1.0, 2.0]
    text, method = generate_tldr(backend(fake, []), TITLE, ABSTRACT)  # the answer left: the 4th request
    assert text == ANSWER


def test_the_total_wait_is_bounded(fake):
    waits = []
    fake.answers = [429, 429, ANSWER]
    with pytest.raises(BackendError, match="HTTP 429"):
        backend(fake, waits, max_wait_s=2.5).complete([{"role": "user", "content": "hi"}])
    assert waits == [1.0]  # 1 s, then 2 s more would exceed 2.5 s: raised instead
    assert len(fake.requests) == 2


@pytest.mark.parametrize("status", [500, 503])
def test_other_errors_are_not_tried_again(fake, status):
    fake.answers = [status, ANSWER]
    text, method = generate_tldr(backend(fake, waits := []), TITLE, ABSTRACT)
    assert method == f"{tldr.METHOD} (fallback: backend error: HTTP {status})"
    assert len(fake.requests) == 1 and waits == []


def test_retry_after_seconds_and_http_date():
    assert _retry_after("7") == 7.0
    assert _retry_after(None) is None and _retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 120, usegmt=True)
    assert 100 < _retry_after(later) <= 120
    assert _retry_after(email.utils.formatdate(time.time() - 60, usegmt=True)) == 0.0
