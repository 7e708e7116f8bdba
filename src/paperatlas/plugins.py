"""One door for extensions: readers, output formats, LLM backends, engines and CLI commands, through pluggy.

paperatlas has one :class:`pluggy.PluginManager` (project name ``"paperatlas"``, :func:`manager`) with five hook
specifications (:class:`HookSpecs`), each returning a list of typed records:

=========================  ===========================  ==============================================
hook                       returns                      view kept for existing callers
=========================  ===========================  ==============================================
``paperatlas_readers``     ``list[Reader]``             :data:`paperatlas.sources.READERS`
``paperatlas_formats``     ``list[Format]``             :data:`paperatlas.publish.REGISTRY`
``paperatlas_backends``    ``list[Backend]``            :data:`paperatlas.llm.backends.BACKENDS`
``paperatlas_engines``     ``list[EngineSpec]``         :func:`paperatlas.engines.get_engine`
``paperatlas_commands``    ``list[click.Command]``      the ``paperatlas`` command group
=========================  ===========================  ==============================================

The built-in readers, formats, backends, engines and commands are hook implementations too, registered by their
own package when it is imported (:func:`register_builtin`), before any outside plugin. Outside plugins are the
objects of the ``paperatlas`` entry-point group (``[project.entry-points.paperatlas]`` in a plugin's
``pyproject.toml``), loaded once, lazily (:func:`load`), the way ``pluggy.PluginManager.load_setuptools_entrypoints``
does (as ``llm`` and Datasette do), with one check more: a plugin declares the hook-spec version it targets,
``PAPERATLAS_HOOKSPEC_VERSION = 1``, and one targeting another version (or none) is refused with one
:class:`PluginWarning` line naming it and both versions; a plugin that fails to import is refused the same way.
The rest of paperatlas works either way. A plugin's record whose name a built-in (or an earlier plugin) already
uses is refused with a warning too: a plugin adds, it does not replace. See ``docs/plugins.md``.
"""

from __future__ import annotations

import importlib.metadata
import types
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from .model import Paper, Topic

if TYPE_CHECKING:  # pragma: no cover
    import click

#: The version of the hook specifications below; a plugin's ``PAPERATLAS_HOOKSPEC_VERSION`` must equal it.
HOOKSPEC_VERSION = 1

#: The entry-point group outside plugins are registered in.
ENTRY_POINT_GROUP = "paperatlas"

hookspec = pluggy.HookspecMarker("paperatlas")
#: Decorate a plugin's hook functions with it: ``@hookimpl def paperatlas_formats(): return [Format(...)]``.
hookimpl = pluggy.HookimplMarker("paperatlas")


class PluginWarning(UserWarning):
    """A plugin (or one of its records) was refused; the message is one line naming it and why."""


class HookSpecs:
    """The hook specifications: each hook returns a list of records (none is required of a plugin)."""

    @hookspec
    def paperatlas_readers(self) -> list[Reader]:
        """Listing readers to add (``build --format NAME`` and content detection, after the built-in ones)."""

    @hookspec
    def paperatlas_formats(self) -> list[Format]:
        """Output formats to add (``publish --format NAME``; ``search --export`` for ``export=True`` ones)."""

    @hookspec
    def paperatlas_backends(self) -> list[Backend]:
        """Generative backends to add (``--tldr-backend``, ``--label-backend``, ``ask --backend``)."""

    @hookspec
    def paperatlas_engines(self) -> list[EngineSpec]:
        """Engines to add (:func:`paperatlas.engines.get_engine`)."""

    @hookspec
    def paperatlas_commands(self) -> list[click.Command]:
        """``click`` commands (or groups) to add to the ``paperatlas`` command line."""


# ---------------------------------------------------------------------------------------------------- records

#: A publisher: ``render(papers, topics, related, title) -> str``.
Renderer = Callable[[list[Paper], list[Topic], dict[str, list[str]], str], str]

#: A directory publisher: ``write(papers, topics, related, out_dir, title) -> Path``, atomic.
Writer = Callable[..., Path]


@dataclass(frozen=True)
class Format:
    """One output format of ``publish``.

    Attributes:
        name: What ``publish --format`` takes, e.g. ``"csl-json"``.
        description: One line for ``--help`` and the README (Markdown backquotes allowed).
        render: The renderer of a text format made from papers and topics.
        write: The writer of a directory format.
        from_atlas: The renderer of a text format made from the whole atlas (its build history, the reader's
            likes): ``from_atlas(atlas, title) -> str``.
        uses_related: Its output shows related papers (callers compute them only for such formats: it costs a
            nearest-neighbour search per paper).
        export: It is a file export for a reference manager or a data tool, offered by ``search --export``.

    Raises:
        ValueError: (on construction) not exactly one of ``render``, ``write`` and ``from_atlas`` is given.
    """

    name: str
    description: str
    render: Renderer | None = None
    write: Writer | None = None
    uses_related: bool = False
    export: bool = False
    from_atlas: Callable[..., str] | None = None

    def __post_init__(self) -> None:
        if sum(f is not None for f in (self.render, self.write, self.from_atlas)) != 1:
            raise ValueError(f"format {self.name!r}: give exactly one of render, write and from_atlas")

    @property
    def directory(self) -> bool:
        """Whether the format writes a folder (``write``) rather than one text (``render``)."""
        return self.write is not None


@dataclass(frozen=True)
class Reader:
    """One listing reader.

    Give either ``module`` (a module with the attributes listed in :mod:`paperatlas.sources`: the built-in readers)
    or the callables.

    Attributes:
        name: What ``build --format`` takes, e.g. ``"papers-txt"``.
        description: One line for ``--help`` and the README (its first paragraph; may start "Reader for ...").
        sniff: ``sniff(head: str) -> bool``: whether a file's first 20,000 characters are in this format.
        read_text: ``read_text(text, path, strict=False, **hints) -> list[Paper]``.
        library: The library that parses it (``""``: its own parser).
        example: One ``paperatlas build ...`` line.
        fields: The :class:`~paperatlas.model.Paper` fields it fills, e.g. ``"title, authors, abstract"``.
        module: The reader module, for a built-in reader (then the other fields are read from it).
    """

    name: str
    description: str = ""
    sniff: Callable[[str], bool] | None = None
    read_text: Callable[..., list[Paper]] | None = None
    library: str = ""
    example: str = ""
    fields: str = ""
    module: Any = None

    def as_module(self) -> Any:
        """The reader as the registry of :data:`paperatlas.sources.READERS` holds it: a module-like object.

        Returns:
            ``module`` when given; else a :class:`types.ModuleType` with ``__doc__`` (the description), ``FORMAT``,
            ``LIBRARY``, ``EXAMPLE``, ``FIELDS``, ``sniff`` and ``read_text``.

        Raises:
            ValueError: no module and no ``read_text``.
        """
        if self.module is not None:
            return self.module
        if self.read_text is None:
            raise ValueError(f"reader {self.name!r}: give module or read_text")
        mod = types.ModuleType(f"paperatlas_reader_{self.name}", self.description or self.name)
        mod.FORMAT, mod.LIBRARY, mod.EXAMPLE, mod.FIELDS = self.name, self.library, self.example, self.fields
        mod.sniff = self.sniff or (lambda _head: False)
        mod.read_text = self.read_text
        return mod


@dataclass(frozen=True)
class Backend:
    """One generative backend.

    Attributes:
        name: What ``--tldr-backend`` / ``--label-backend`` / ``ask --backend`` take.
        factory: ``factory(base_url, model) -> ChatBackend`` (see :class:`paperatlas.llm.backends.ChatBackend`:
            ``complete(messages) -> str``).
        description: One line for ``--help`` and the README.
    """

    name: str
    factory: Callable[[str | None, str | None], Any]
    description: str


class EngineBase:
    """The engine protocol with no-op defaults: subclass it and implement :meth:`run`.

    :func:`paperatlas.build.build` calls, in this order: :meth:`start_embedder` (before the atlas's vectors are read),
    :meth:`embed_ahead` (while the keyphrase statistics are updated), :meth:`run`, and :meth:`close` (always, also
    when nothing needs embedding). Only :meth:`run` must do something.
    """

    def start_embedder(self) -> None:
        """Start loading the embedding model early (no-op by default)."""

    def embed_ahead(self, items: list) -> None:
        """Start embedding ``items`` (:class:`paperatlas.engines.work.WorkItem` rows) early (no-op by default)."""

    def run(self, items: list, kx: Any, progress: Callable[[int], None] | None = None) -> Iterable:
        """Yield :class:`paperatlas.engines.work.WorkResult` batches for ``items``.

        Raises:
            NotImplementedError: always, here: a subclass implements it.
        """
        raise NotImplementedError

    def close(self) -> None:
        """Release what the engine holds (a child process, a cluster connection); no-op by default."""


@dataclass(frozen=True)
class EngineSpec:
    """One engine.

    Attributes:
        name: What ``--engine`` / :func:`paperatlas.engines.get_engine` take.
        factory: ``factory(address=..., workers=..., precision=..., batch_size=...) -> EngineBase``.
        description: One line.
    """

    name: str
    factory: Callable[..., EngineBase]
    description: str = ""


# ---------------------------------------------------------------------------------------------------- manager

_pm = pluggy.PluginManager("paperatlas")
_pm.add_hookspecs(HookSpecs)
_builtins: list[str] = []
_loaded = False
_refreshers: list[Callable[[], None]] = []


def manager() -> pluggy.PluginManager:
    """The plugin manager (outside plugins loaded, :func:`load`)."""
    load()
    return _pm


def register_builtin(name: str, **hooks: Callable[[], list]) -> None:
    """Register a built-in plugin called ``name`` whose hook functions are ``hooks``, once.

    Args:
        name: The plugin's name, e.g. ``"paperatlas.sources"``.
        hooks: hook name -> function of no argument returning the hook's list, e.g.
            ``paperatlas_readers=lambda: [Reader(...)]``; each is marked with :data:`hookimpl` here.
    """
    if _pm.get_plugin(name) is None:
        _pm.register(types.SimpleNamespace(**{k: hookimpl(f) for k, f in hooks.items()}), name)
        _builtins.append(name)


def on_load(refresh: Callable[[], None]) -> None:
    """Call ``refresh()`` after outside plugins are loaded (now, when they already are): a registry view updates."""
    _refreshers.append(refresh)
    if _loaded:
        refresh()


def register_plugin(plugin: object, name: str) -> bool:
    """Register an outside plugin after checking the hook-spec version it targets.

    Args:
        plugin: The entry point's object (a module or any object with ``@hookimpl`` functions).
        name: Its name (the entry point's name).

    Returns:
        Whether it was registered. A plugin whose ``PAPERATLAS_HOOKSPEC_VERSION`` is not :data:`HOOKSPEC_VERSION`
        is refused with one :class:`PluginWarning` naming it and both versions; so is one pluggy rejects (a hook
        name it misspelled, an argument a hook does not have).
    """
    version = getattr(plugin, "PAPERATLAS_HOOKSPEC_VERSION", None)
    if version != HOOKSPEC_VERSION:
        warnings.warn(PluginWarning(f"paperatlas plugin {name!r} refused: it targets hook-spec version {version}, "
                                    f"this paperatlas has version {HOOKSPEC_VERSION}"), stacklevel=2)
        return False
    if _pm.get_plugin(name) is not None or _pm.is_blocked(name):
        return False
    try:
        _pm.register(plugin, name)
    except (pluggy.PluginValidationError, ValueError) as e:
        warnings.warn(PluginWarning(f"paperatlas plugin {name!r} refused: {' '.join(str(e).split())}"), stacklevel=2)
        return False
    return True


def load() -> None:
    """Load the outside plugins of the ``paperatlas`` entry-point group, once; then refresh the registry views.

    Like ``PluginManager.load_setuptools_entrypoints("paperatlas")``, but each plugin goes through
    :func:`register_plugin` (the version check), and one that fails to import is refused with a warning.
    """
    global _loaded
    if _loaded:
        return
    _loaded = True  # before the imports: a plugin importing paperatlas does not load again
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            plugin = ep.load()
        except Exception as e:  # noqa: BLE001 - a broken plugin must not break paperatlas
            warnings.warn(PluginWarning(f"paperatlas plugin {ep.name!r} refused: it fails to import "
                                        f"({type(e).__name__}: {' '.join(str(e).split())})"), stacklevel=2)
            continue
        register_plugin(plugin, ep.name)
    for refresh in _refreshers:
        refresh()


def collect(hook: str, builtin: bool | None = None) -> list[Any]:
    """The records every plugin returns from ``hook``: the built-ins first (in registration order), then the others.

    Does not load outside plugins (:func:`load` does, then refreshes the views).

    Args:
        hook: A hook name, e.g. ``"paperatlas_formats"``.
        builtin: True: the built-ins' records only; False: the outside plugins' only; None: both.

    Returns:
        The records, each name once: a record whose ``name`` an earlier one has is refused with a
        :class:`PluginWarning` (a command's name is its ``name`` too).
    """
    impls = {impl.plugin_name: impl for impl in getattr(_pm.hook, hook).get_hookimpls()}
    names = [n for n in _builtins if n in impls] if builtin is not False else []
    if builtin is not True:
        names += [n for n in impls if n not in _builtins]
    seen: set[str] = set()
    out = []
    for plugin_name in names:
        for record in impls[plugin_name].function() or []:
            if record.name in seen:
                kind = hook.removeprefix("paperatlas_")[:-1]
                warnings.warn(PluginWarning(f"paperatlas plugin {plugin_name!r}: {kind} {record.name!r} refused: "
                                            "the name is taken"), stacklevel=2)
                continue
            seen.add(record.name)
            out.append(record)
    return out


__all__ = ["ENTRY_POINT_GROUP", "HOOKSPEC_VERSION", "Backend", "EngineBase", "EngineSpec", "Format", "HookSpecs",
           "PluginWarning", "Reader", "Renderer", "Writer", "collect", "hookimpl", "load", "manager", "on_load",
           "register_builtin", "register_plugin"]
