"""The Ray engine: the per-paper work as a Ray Data ``map_batches`` job over a pool of worker actors.

Each actor loads the embedding model once and runs :func:`~paperatlas.engines.work.enrich_batch` on the batches
it is given (Ray Data, https://docs.ray.io/en/latest/data/: ``Dataset.map_batches`` with a callable class on an
``ActorPoolStrategy``). The keyphrase extractor is fitted on the driver (it needs corpus counts) and shipped to the
actors once through Ray's object store. Results stream back to the driver batch by batch, where
:func:`paperatlas.build.build` writes them; topics and the map are fitted on the driver.

With no address a local Ray cluster is started for the build (and stopped after it); with ``--address`` (what
``ray start --head`` prints, e.g. ``192.168.1.10:6379``) the job runs on that cluster, whose workers must have
paperatlas and its model installed (``pip install 'paperatlas[ray]'``). Ray moves the extractor and the batches
between processes with its own serialisation; none of that is written to the atlas.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator

import numpy as np

from ..enrich.keyphrases import KeyphraseExtractor
from ..plugins import EngineBase
from .work import WorkItem, WorkResult, enrich_batch


class RayUnavailable(ImportError):
    """Ray (with Ray Data) is not installed: ``pip install 'paperatlas[ray]'``."""


def _import_ray():
    try:
        import ray
        import ray.data  # noqa: F401 - Ray Data is a separate part of the ray package
    except ImportError as e:
        raise RayUnavailable("the ray engine needs Ray Data: pip install 'paperatlas[ray]' "
                             f"({e.name or 'ray'} is missing)") from e
    return ray


class _Worker:
    """A Ray actor: loads the embedder once, then enriches the batches Ray Data hands it (numpy format)."""

    def __init__(self, kx_ref: list, precision: str, threads: int):
        import ray

        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import torch

            torch.set_num_threads(max(1, threads))
        except ImportError:  # the embedder will say which package is missing
            pass
        from ..enrich.embed import get_embedder

        self.kx = ray.get(kx_ref[0])  # the ref is wrapped so the actor's constructor arguments stay small
        self.precision = precision
        self.threads = max(1, threads)
        self._get_embedder = get_embedder
        self.embedder = None

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        items = [WorkItem(row=int(r), title=str(t), text=str(x), abstract=str(a), embed=bool(e), tldr=bool(d),
                          keyphrases=bool(k))
                 for r, t, x, a, e, d, k in zip(batch["row"], batch["title"], batch["text"], batch["abstract"],
                                                batch["embed"], batch["tldr"], batch["keyphrases"], strict=True)]
        if self.embedder is None and any(it.embed for it in items):
            self.embedder = self._get_embedder(precision=self.precision)
            self.embedder.set_threads(self.threads)  # the CPUs this actor reserved (onnx-fp32 starts on all)
        res = enrich_batch(items, self.kx, self.embedder)
        dim = self.embedder.dim if self.embedder else 384
        vectors = np.zeros((len(items), dim), dtype=np.float32)
        where = {r: i for i, r in enumerate(res.rows)}
        for r, v in zip(res.embedded, res.vectors, strict=True):
            vectors[where[r]] = v
        n = len(items)
        return {
            "row": np.asarray(res.rows, dtype=np.int64),
            "keyphrases": np.asarray([json.dumps(k) for k in res.keyphrases], dtype=object),
            "label_terms": np.asarray([json.dumps(k) for k in res.label_terms], dtype=object),
            "tldr": np.asarray([t or "" for t in res.tldrs], dtype=object),
            "has_tldr": np.asarray([t is not None for t in res.tldrs], dtype=bool),
            "embedded": np.asarray([it.embed for it in items], dtype=bool),
            "vector": vectors,
            # this batch's stage times, on its first row only (Ray Data may merge batches into one block)
            "seconds": np.asarray([json.dumps(res.seconds)] + [""] * (n - 1), dtype=object),
        }


class RayEngine(EngineBase):
    """Runs the per-paper work on a Ray cluster (a local one when ``address`` is None).

    Args:
        address: the cluster's address, or None for a local cluster started for this build.
        workers: worker actors (default: the cluster's CPUs / ``cpus_per_worker``, at least 1).
        precision: how the embedding model runs (one of :data:`paperatlas.enrich.embed.PRECISIONS`), resolved on
            each worker.
        batch_size: papers per batch.
        cpus_per_worker: CPUs each actor reserves (and the embedding threads it uses), default 1.

    Raises:
        RayUnavailable: ray is not installed.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None, precision: str = "auto",
                 batch_size: int = 256, cpus_per_worker: int = 1):
        self.ray = _import_ray()
        self.address = address
        self.workers = workers
        self.precision = precision
        self.batch_size = batch_size
        self.cpus_per_worker = cpus_per_worker

    def _connect(self) -> bool:
        """Connect to the cluster (start a local one); True when this engine started Ray and must shut it down."""
        ray = self.ray
        if ray.is_initialized():
            return False
        env = {"env_vars": {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}}
        quiet = {"runtime_env": env, "log_to_driver": False, "logging_level": logging.WARNING}
        for name in ("ray", "ray.data"):  # Ray's INFO lines would bury the build's progress bar
            logging.getLogger(name).setLevel(logging.ERROR)
        if self.address:
            ray.init(address=self.address, **quiet)
        else:
            ncpu = max(self.workers or 0, os.cpu_count() or 1) * self.cpus_per_worker
            ray.init(num_cpus=ncpu, include_dashboard=False, **quiet)
        ctx = self.ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.execution_options.preserve_order = False
        return True

    def run(self, items: list[WorkItem], kx: KeyphraseExtractor,
            progress: Callable[[int], None] | None = None) -> Iterator[WorkResult]:
        """Yield one :class:`WorkResult` per batch as the cluster finishes it (in no fixed order).

        Args:
            items: the papers.
            kx: the fitted keyphrase extractor (sent to every worker once).
            progress: called with the number of papers of each finished batch.

        Yields:
            :class:`WorkResult` batches; ``seconds`` holds the workers' summed stage times.

        Raises:
            RuntimeError: a worker failed (Ray's error, with the worker's traceback).
        """
        if not items:
            return
        ray = self.ray
        started = self._connect()
        try:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            workers = self.workers or max(1, cpus // self.cpus_per_worker)
            # at least 4 batches per worker, so every worker gets work and a slow one does not hold the end up
            n_blocks = max(-(-len(items) // self.batch_size), 4 * workers)
            batch = max(1, -(-len(items) // n_blocks))
            ds = ray.data.from_items([{"row": it.row, "title": it.title, "text": it.text, "abstract": it.abstract,
                                       "embed": it.embed, "tldr": it.tldr, "keyphrases": it.keyphrases}
                                     for it in items],
                                     override_num_blocks=n_blocks)
            out = ds.map_batches(_Worker, batch_size=batch, batch_format="numpy",
                                 compute=ray.data.ActorPoolStrategy(size=workers),
                                 fn_constructor_kwargs={"kx_ref": [ray.put(kx)], "precision": self.precision,
                                                        "threads": self.cpus_per_worker},
                                 num_cpus=self.cpus_per_worker, udf_modifying_row_count=False)
            for batch in out.iter_batches(batch_size=None, batch_format="numpy"):
                n = len(batch["row"])
                seconds: dict[str, float] = {}
                for s in batch["seconds"]:  # one entry per worker batch in this block
                    for k, v in (json.loads(s) if s else {}).items():
                        seconds[k] = seconds.get(k, 0.0) + v
                emb = np.asarray(batch["embedded"], dtype=bool)
                rows = [int(r) for r in batch["row"]]
                res = WorkResult(rows=rows, keyphrases=[json.loads(k) for k in batch["keyphrases"]],
                                 label_terms=[json.loads(k) for k in batch["label_terms"]],
                                 tldrs=[str(t) if h else None for t, h in zip(batch["tldr"], batch["has_tldr"],
                                                                               strict=True)],
                                 embedded=[r for r, e in zip(rows, emb, strict=True) if e],
                                 vectors=np.asarray(batch["vector"], dtype=np.float32)[emb], seconds=seconds)
                if progress:
                    progress(n)
                yield res
        finally:
            if started:
                ray.shutdown()
