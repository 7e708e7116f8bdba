r"""Configuration from one place: the ``PAPERATLAS_*`` environment variables, their defaults and the cache directory.

Every module that needs a setting asks :data:`settings` (``from paperatlas.settings import settings``) instead of
reading ``os.environ`` itself. The values are read when asked, not at import, so a variable set after the import
(a test's ``monkeypatch.setenv``, a CLI option's ``envvar``) counts. The table of the variables in the README is
generated from :data:`VARIABLES` (cog), so it cannot drift from what the code reads.

The default cache directory is ``platformdirs.user_cache_dir("paperatlas")``: ``$XDG_CACHE_HOME/paperatlas``, by
default ``~/.cache/paperatlas``, on Linux; ``~/Library/Caches/paperatlas`` on macOS;
``%LOCALAPPDATA%\paperatlas\Cache`` on Windows.

This module imports nothing of paperatlas, so every layer may use it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: Values of a switch variable that mean "off" (compared lower-cased); anything else non-empty means "on".
_OFF = ("", "0", "off", "no", "false")


@dataclass(frozen=True)
class Variable:
    """One environment variable paperatlas reads.

    Attributes:
        name: The variable, e.g. ``PAPERATLAS_DB``.
        default: The default, as a reader of the README sees it.
        meaning: What it sets, one sentence.
    """

    name: str
    default: str
    meaning: str


#: Every ``PAPERATLAS_*`` variable, in the order of the README's table.
VARIABLES: tuple[Variable, ...] = (
    Variable("PAPERATLAS_DB", "`./paperatlas.db`, or the only `*.db` in the current directory",
             "The atlas file of every command that takes `--db` (`--db` wins)."),
    Variable("PAPERATLAS_CACHE", "the user cache directory (`~/.cache/paperatlas` on Linux)",
             "Where the network readers keep their responses and `eval` its embeddings."),
    Variable("PAPERATLAS_MODEL_CACHE", "`models/` in the user cache directory",
             "Where the query model exported to ONNX is kept (written once per machine)."),
    Variable("PAPERATLAS_EVAL_CACHE", "on",
             "`off` (or `0`, `no`, `false`) turns off `eval`'s cache of embeddings."),
    Variable("PAPERATLAS_OFFLINE", "unset",
             "Set (and not `0`): the network readers read only their cache, never the network."),
    Variable("PAPERATLAS_PRECISION", "`auto`",
             "The embedding path of `build` when `--precision` is `auto`: `fp32`, `bf16`, `onnx-fp32` or `auto`."),
    Variable("PAPERATLAS_TOKEN", "unset",
             "The token `serve` asks for before it allows edits (`--token`); needed off loopback."),
    Variable("PAPERATLAS_ACL_DATA", "unset (the reader clones the Anthology's data once)",
             "A local checkout of the ACL Anthology's `data` directory for `build acl:EVENT` (`--acl-data`)."),
    Variable("PAPERATLAS_DEBUG", "unset",
             "Set: say on stderr why a fast path was not taken (e.g. the ONNX query model)."),
)


def _env(name: str) -> str:
    """The variable's value, ``""`` when unset."""
    return os.environ.get(name, "")


def _on(name: str) -> bool:
    """Whether a switch variable is on (set and not one of :data:`_OFF`)."""
    return _env(name).strip().lower() not in _OFF


class Settings:
    """The settings of this process, read from the environment each time a property is asked.

    Properties:
        db: ``$PAPERATLAS_DB`` as a path, None when unset.
        cache_dir: ``$PAPERATLAS_CACHE``, else the platform's user cache directory for paperatlas.
        model_cache_dir: ``$PAPERATLAS_MODEL_CACHE``, else ``models`` in the user cache directory.
        eval_cache: False when ``$PAPERATLAS_EVAL_CACHE`` is ``off``/``0``/``no``/``false``.
        offline: ``$PAPERATLAS_OFFLINE`` set and not ``0``.
        precision: ``$PAPERATLAS_PRECISION``, default ``"auto"``.
        token: ``$PAPERATLAS_TOKEN``, None when unset.
        acl_data: ``$PAPERATLAS_ACL_DATA``, None when unset.
        debug: ``$PAPERATLAS_DEBUG`` set and not ``0``.
    """

    @property
    def db(self) -> Path | None:
        """``$PAPERATLAS_DB`` as a path, None when unset or empty."""
        return Path(_env("PAPERATLAS_DB")) if _env("PAPERATLAS_DB") else None

    @property
    def cache_dir(self) -> Path:
        """``$PAPERATLAS_CACHE``, else ``platformdirs.user_cache_dir("paperatlas")`` (not created here)."""
        return Path(_env("PAPERATLAS_CACHE")) if _env("PAPERATLAS_CACHE") else user_cache_dir()

    @property
    def model_cache_dir(self) -> Path:
        """``$PAPERATLAS_MODEL_CACHE``, else ``<user cache directory>/models`` (not created here).

        It does not follow ``$PAPERATLAS_CACHE`` (a test's scratch cache must not re-export the model).
        """
        env = _env("PAPERATLAS_MODEL_CACHE")
        return Path(env) if env else user_cache_dir() / "models"

    @property
    def eval_cache(self) -> bool:
        """Whether ``eval`` caches embeddings (``$PAPERATLAS_EVAL_CACHE`` not ``off``/``0``/``no``/``false``)."""
        env = _env("PAPERATLAS_EVAL_CACHE")
        return not env or _on("PAPERATLAS_EVAL_CACHE")

    @property
    def offline(self) -> bool:
        """Whether network readers must read only their cache (``$PAPERATLAS_OFFLINE`` set and not ``0``)."""
        return _env("PAPERATLAS_OFFLINE") not in ("", "0")

    @property
    def precision(self) -> str:
        """``$PAPERATLAS_PRECISION`` (``fp32``, ``bf16``, ``onnx-fp32`` or ``auto``), default ``auto``.

        Read as given: :func:`paperatlas.enrich.embed.resolve_precision` refuses an unknown value.
        """
        return _env("PAPERATLAS_PRECISION") or "auto"

    @property
    def token(self) -> str | None:
        """``$PAPERATLAS_TOKEN``, None when unset or empty."""
        return _env("PAPERATLAS_TOKEN") or None

    @property
    def acl_data(self) -> str | None:
        """``$PAPERATLAS_ACL_DATA``, None when unset or empty."""
        return _env("PAPERATLAS_ACL_DATA") or None

    @property
    def debug(self) -> bool:
        """Whether to explain fallbacks on stderr (``$PAPERATLAS_DEBUG`` set and not ``0``)."""
        return _env("PAPERATLAS_DEBUG") not in ("", "0")


def user_cache_dir() -> Path:
    """The platform's user cache directory for paperatlas (``platformdirs``; ``~/.cache/paperatlas`` on Linux).

    Returns:
        The directory (not created here); on Linux ``$XDG_CACHE_HOME/paperatlas`` when that is set.
    """
    import platformdirs

    return Path(platformdirs.user_cache_dir("paperatlas", appauthor=False))


def markdown_table() -> str:
    """The README's table of the environment variables (Markdown), from :data:`VARIABLES`.

    Returns:
        A header, a rule and one row per variable, lines joined by newlines (no trailing newline).
    """
    rows = ["| Variable | Default | What it sets |", "|---|---|---|"]
    rows += [f"| `{v.name}` | {v.default} | {v.meaning} |" for v in VARIABLES]
    return "\n".join(rows)


#: The settings object every module asks.
settings = Settings()
