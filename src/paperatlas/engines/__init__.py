"""Where a build's per-paper work runs: in this process (``local``) or as Ray Data batch jobs (``ray``).

The per-paper work (:func:`~paperatlas.engines.work.enrich_batch`) is the same everywhere: the paper's keyphrases
and label terms (from a :class:`~paperatlas.enrich.keyphrases.KeyphraseExtractor` fitted on the whole corpus by
the driver), its extractive TL;DR, and its embedding when the atlas has none for its text. An engine takes the
papers as :class:`WorkItem` rows and yields :class:`WorkResult` batches as they finish, so the driver
(:func:`paperatlas.build.build`) can write them as they come; what needs every paper at once (topics, the map)
stays on the driver.
"""

from __future__ import annotations

from .work import WorkItem, WorkResult, enrich_batch

#: ``--engine`` choices
ENGINES = ("local", "ray")


def get_engine(name: str = "local", address: str | None = None, workers: int | None = None,
               precision: str = "auto", batch_size: int = 256):
    """The engine called ``name``.

    Args:
        name: ``local`` or ``ray``.
        address: ray: the cluster's address (``ray start --head`` prints it); None starts a local cluster.
        workers: ray: number of worker actors (default: one per 2 CPUs of the cluster, at least 1).
        precision: the embedding model's arithmetic (:func:`paperatlas.enrich.embed.resolve_precision`).
        batch_size: papers per batch.

    Returns:
        A :class:`~paperatlas.engines.local.LocalEngine` or :class:`~paperatlas.engines.ray_engine.RayEngine`.

    Raises:
        ValueError: for an unknown engine name.
        paperatlas.engines.ray_engine.RayUnavailable: ray is not installed (the message names the extra).
    """
    if name == "local":
        from .local import LocalEngine

        return LocalEngine(precision=precision, batch_size=batch_size)
    if name == "ray":
        from .ray_engine import RayEngine

        return RayEngine(address=address, workers=workers, precision=precision, batch_size=batch_size)
    raise ValueError(f"unknown engine {name!r}; choose from {', '.join(ENGINES)}")


__all__ = ["ENGINES", "WorkItem", "WorkResult", "enrich_batch", "get_engine"]
