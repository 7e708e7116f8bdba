"""Persistence. The default (and currently only) backend is one SQLite file per atlas: see
:mod:`paperatlas.store.sqlite`."""

from .sqlite import Atlas, AtlasNotFound, atomic_rebuild, connect

__all__ = ["Atlas", "AtlasNotFound", "atomic_rebuild", "connect"]
