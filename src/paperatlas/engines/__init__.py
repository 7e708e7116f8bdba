"""Where a build's per-paper work runs: in this process (``local``) or as Ray Data batch jobs (``ray``).

The per-paper work (:func:`~paperatlas.engines.work.enrich_batch`) is the same everywhere: the paper's keyphrases
and label terms (from a :class:`~paperatlas.enrich.keyphrases.KeyphraseExtractor` fitted on the whole corpus by
the driver), its extractive TL;DR, and its embedding when the atlas has none for its text. An engine takes the
papers as :class:`WorkItem` rows and yields :class:`WorkResult` batches as they finish, so the driver
(:func:`paperatlas.build.build`) can write them as they come; what needs every paper at once (topics, the map)
stays on the driver.

Engines register through the plugin door (:mod:`paperatlas.plugins`, hook ``paperatlas_engines``, records
:class:`~paperatlas.plugins.EngineSpec`), the built-in ``local`` and ``ray`` too; each engine is an
:class:`~paperatlas.plugins.EngineBase` (no-op ``start_embedder``, ``embed_ahead`` and ``close`` by default).
"""

from __future__ import annotations

from .. import plugins as _plugins
from ..plugins import EngineBase, EngineSpec
from .work import WorkItem, WorkResult, enrich_batch


def _local(address: str | None = None, workers: int | None = None, precision: str = "auto", batch_size: int = 256):
    from .local import LocalEngine

    return LocalEngine(precision=precision, batch_size=batch_size)


def _ray(address: str | None = None, workers: int | None = None, precision: str = "auto", batch_size: int = 256):
    from .ray_engine import RayEngine

    return RayEngine(address=address, workers=workers, precision=precision, batch_size=batch_size)


_plugins.register_builtin("paperatlas.engines", paperatlas_engines=lambda: [
    EngineSpec("local", _local, "in this process (the embedding in a child process)"),
    EngineSpec("ray", _ray, "Ray Data batch jobs on a local or remote cluster (pip install 'paperatlas[ray]')"),
])

#: name -> :class:`~paperatlas.plugins.EngineSpec`: a view of the plugins' ``paperatlas_engines`` records.
SPECS: dict[str, EngineSpec] = {e.name: e for e in _plugins.collect("paperatlas_engines")}

#: ``--engine`` choices (the names of :data:`SPECS`, the built-ins first).
ENGINES = tuple(SPECS)


def _refresh() -> None:
    """Add the outside plugins' engines to :data:`SPECS` and :data:`ENGINES`."""
    global ENGINES
    for e in _plugins.collect("paperatlas_engines", builtin=False):
        SPECS.setdefault(e.name, e)
    ENGINES = tuple(SPECS)


_plugins.on_load(_refresh)


def get_engine(name: str = "local", address: str | None = None, workers: int | None = None,
               precision: str = "auto", batch_size: int = 256) -> EngineBase:
    """The engine called ``name``.

    Args:
        name: ``local``, ``ray`` or a plugin's engine (:data:`SPECS`).
        address: ray: the cluster's address (``ray start --head`` prints it); None starts a local cluster.
        workers: ray: number of worker actors (default: one per 2 CPUs of the cluster, at least 1).
        precision: the embedding model's arithmetic (:func:`paperatlas.enrich.embed.resolve_precision`).
        batch_size: papers per batch.

    Returns:
        A :class:`~paperatlas.engines.local.LocalEngine`, a :class:`~paperatlas.engines.ray_engine.RayEngine` or a
        plugin's engine: each an :class:`~paperatlas.plugins.EngineBase` (``start_embedder``, ``embed_ahead``,
        ``run``, ``close``; all but ``run`` may be no-ops).

    Raises:
        ValueError: for an unknown engine name.
        paperatlas.engines.ray_engine.RayUnavailable: ray is not installed (the message names the extra).
    """
    _plugins.load()
    if name not in SPECS:
        raise ValueError(f"unknown engine {name!r}; choose from {', '.join(SPECS)}")
    return SPECS[name].factory(address=address, workers=workers, precision=precision, batch_size=batch_size)


__all__ = ["ENGINES", "SPECS", "EngineBase", "WorkItem", "WorkResult", "enrich_batch", "get_engine"]
