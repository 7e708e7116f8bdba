"""The process's memory: freed heap handed back to the OS (glibc ``malloc_trim``, ``mallopt``), its peak RSS."""

from __future__ import annotations

import ctypes
import gc
import resource


def trim_heap() -> None:
    """Collect garbage and hand the freed heap back to the OS (glibc ``malloc_trim``; a no-op elsewhere).

    Without it the freed memory of one step (a TF-IDF fit's vocabulary, UMAP's neighbour graph) stays with the
    process, and the next step's arrays are mapped anew on top of it: the build's peak becomes the sum of its
    steps' peaks. Costs a full garbage collection (~0.3 s with 42k papers' objects alive).
    """
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (``getrusage`` ``ru_maxrss``, KiB on Linux), in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


#: glibc's ``mallopt`` parameter number of ``M_MMAP_THRESHOLD`` (``malloc.h``)
_M_MMAP_THRESHOLD = -3


def set_mmap_threshold(n_bytes: int) -> None:
    """Map every allocation of ``n_bytes`` or more on its own (glibc ``mallopt(M_MMAP_THRESHOLD)``; a no-op elsewhere).

    Freed, such a block goes back to the OS at once instead of staying in a heap that later, differently shaped
    allocations fragment; the price is more page faults (system time).

    Args:
        n_bytes: the threshold, bytes.
    """
    try:
        ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, n_bytes)
    except (OSError, AttributeError):  # not glibc
        pass
