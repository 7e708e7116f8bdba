"""Nearest papers by embedding cosine: exact below :data:`ANN_MIN_PAPERS` papers, approximate (HNSW) above.

:class:`NeighbourIndex` answers "which rows of an ``(n, dim)`` float32 matrix of L2-normalised vectors have the
largest cosine to this query". Up to :data:`ANN_MIN_PAPERS` rows it is the exact brute-force product
``vectors @ query`` (numpy only). From there on it is a hierarchical navigable small-world graph (HNSW; Malkov &
Yashunin 2016, "Efficient and robust approximate nearest neighbor search using Hierarchical Navigable Small World
graphs", arXiv:1603.09320) as implemented by USearch (Unum Cloud, ``pip install 'paperatlas[ann]'``), chosen over
sqlite-vec by ``benchmarks/ann_bench.py`` (sqlite-vec 0.1.9 has no approximate index: its exact scan took 0.66 s a
query at 1M rows, numpy's 0.16 s, the graph's 0.6 ms). The graph holds an int8 copy of the vectors; its candidates
(four times as many as asked for) are re-ranked by their exact float32 cosine against the caller's matrix, so the
cosines returned are exact and only the set of rows found is approximate. Recall@10 at the defaults on the
benchmark's near-duplicate vectors (copies of real MiniLM vectors with as much noise as signal, a hard case):
1.000 at 200,000 rows, 0.954 at 1,000,000 (measured with 2 candidates a result: 4 can only find more).

An index is stored as :meth:`NeighbourIndex.to_bytes`: a short JSON header and USearch's own serialisation (bytes of
arrays, no Python objects). :meth:`NeighbourIndex.from_bytes` checks the whole graph (sizes, levels, every neighbour
slot, every key) before USearch sees it, because USearch trusts its input: a corrupted neighbour slot crashes the
process at the first search instead of raising.
"""

from __future__ import annotations

import json
import struct

import numpy as np

#: Below this many rows :meth:`NeighbourIndex.build` makes an exact index (one mat-vec). Chosen where the exact
#: query's p95 passes ~20 ms on a shared 2-core machine (``benchmarks/ann_bench.py``: p95 4-16 ms at 42,000 rows,
#: 22-25 ms at 100,000, 31-41 ms at 200,000).
ANN_MIN_PAPERS = 100_000
#: HNSW graph degree M (edges per node on the upper levels; 2 M on the base level).
CONNECTIVITY = 16
#: Beam width while inserting (``efConstruction``).
EXPANSION_ADD = 128
#: Beam width while searching (``ef``): higher is slower and finds more of the true neighbours (recall@10 at
#: 1M rows: 0.73 at 64, 0.88 at 128, 0.95 at 256; p95 0.7, 0.9, 1.4 ms).
EXPANSION_SEARCH = 256
#: graphs of fewer vectors are built by one thread (deterministic; a few seconds at most)
SINGLE_THREAD_BELOW = 10_000
#: Scalar type of the graph's copy of the vectors: ``"i8"`` (1 byte a component), ``"f16"`` or ``"f32"``.
DTYPE = "i8"
#: Candidates fetched per result before the exact re-ranking (the 4k best by the int8 graph's own distance; free
#: while 4k <= ef, as the beam is the same; at ef 64, 1 instead of 2 loses 6-8 points of recall@10).
OVERSAMPLE = 4

_MAGIC = b"paperatlas-ann\n"
_FORMAT = 1
_USEARCH_SCALARS = {"f32": (11, 4), "f16": (12, 2), "i8": (23, 1)}  # name -> (USearch scalar kind, bytes)
_USEARCH_IP, _USEARCH_U64, _USEARCH_U32 = 105, 14, 15  # metric kind "ip", key kind u64, compressed slot u32
_USEARCH_FORMATS = {(2, 26)}  # (major, minor) versions whose serialised layout _check_usearch_blob knows
_CHUNK = 1 << 14


def _usearch():
    """The ``usearch.index`` module, or an ImportError saying how to install it."""
    try:
        from usearch import index
    except ImportError as e:
        raise ImportError("approximate nearest-neighbour search over a large atlas needs USearch: "
                          "pip install 'paperatlas[ann]'") from e
    return index


def top_k(sims: np.ndarray, k: int) -> np.ndarray:
    """Rows of the ``k`` largest values of ``sims`` ``(n,)``, largest first, ties in row order.

    The same rows and order as ``np.argsort(-sims, kind="stable")[:k]`` in O(n) instead of O(n log n).
    """
    n = len(sims)
    if k >= n:
        return np.argsort(-sims, kind="stable")
    part = np.argpartition(-sims, k - 1)[:k]
    cand = np.flatnonzero(sims >= sims[part].min())  # every row tied with the k-th value too
    return cand[np.lexsort((cand, -sims[cand]))][:k]


class NeighbourIndex:
    """The rows of a matrix of unit vectors nearest to a query by cosine, exact or approximate.

    Make one with :meth:`build` or :meth:`from_bytes`, not with the constructor. The matrix is the caller's
    (``atlas.vectors``): it is not copied, and must not change while the index is in use.

    Attributes:
        vectors: ``(n, dim)`` float32, L2-normalised; row ``i`` is result ``i``.
        exact: True when every search is the brute-force product (no graph).
        expansion_search: The HNSW search beam width ``ef`` (ignored when exact); may be changed at any time.
        oversample: Candidates fetched per wanted result before the exact re-ranking (ignored when exact).
    """

    def __init__(self, vectors: np.ndarray, graph=None, *, params: dict | None = None, blob=None):
        self.vectors = vectors
        self._graph = graph
        self._blob = blob  # the buffer a viewed graph lives in: kept alive with it
        self._params = dict(params or {})
        self.exact = graph is None
        self.expansion_search = int(self._params.get("expansion_search", EXPANSION_SEARCH))
        self.oversample = int(self._params.get("oversample", OVERSAMPLE))

    @property
    def dim(self) -> int:
        """Number of columns of the indexed vectors."""
        return int(self.vectors.shape[1]) if self.vectors.ndim == 2 else 0

    def __len__(self) -> int:
        return len(self.vectors)

    @classmethod
    def build(cls, vectors: np.ndarray, *, min_papers: int = ANN_MIN_PAPERS, dtype: str = DTYPE,
              connectivity: int = CONNECTIVITY, expansion_add: int = EXPANSION_ADD,
              expansion_search: int = EXPANSION_SEARCH, oversample: int = OVERSAMPLE,
              threads: int = 0) -> NeighbourIndex:
        """An index over ``vectors``: exact below ``min_papers`` rows, an HNSW graph (USearch) from there on.

        Args:
            vectors: ``(n, dim)`` float32, L2-normalised (cosine = dot product); kept by reference.
            min_papers: Fewest rows for a graph (default :data:`ANN_MIN_PAPERS`; 0 always builds one).
            dtype: Scalar type of the graph's copy of the vectors: ``"i8"``, ``"f16"`` or ``"f32"``.
            connectivity: HNSW degree M.
            expansion_add: Beam width while inserting (``efConstruction``).
            expansion_search: Beam width while searching (``ef``).
            oversample: Candidates per wanted result re-ranked by exact cosine.
            threads: Threads inserting into the graph (0: one per core).

        Returns:
            The index. Building a graph takes ~55 s for 200,000 rows and ~4.5 min for 1,000,000 on 2 cores at the
            defaults (int8 is 2-3 times faster to build than f16 / f32).

        Raises:
            ValueError: ``vectors`` is not a 2-D float32 matrix, or ``dtype`` is unknown.
            ImportError: A graph is needed and USearch is not installed (``pip install 'paperatlas[ann]'``).
        """
        vectors = _matrix(vectors)
        if dtype not in _USEARCH_SCALARS:
            raise ValueError(f"dtype must be one of {', '.join(_USEARCH_SCALARS)}, not {dtype!r}")
        if len(vectors) < max(min_papers, 1):
            return cls(vectors)
        index = _usearch()
        graph = index.Index(ndim=vectors.shape[1], metric="ip", dtype=dtype, connectivity=connectivity,
                            expansion_add=expansion_add, expansion_search=expansion_search)
        # a small graph is built by one thread: the same vectors then give the same graph (several threads insert
        # in a varying order, and a small graph's recall varies with it)
        graph.add(np.arange(len(vectors), dtype=np.uint64), vectors,
                  threads=1 if len(vectors) < SINGLE_THREAD_BELOW else threads)
        params = {"dtype": dtype, "connectivity": connectivity, "expansion_search": expansion_search,
                  "oversample": oversample}
        return cls(vectors, graph, params=params)

    def search(self, query: np.ndarray, k: int = 10) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` rows nearest to ``query``, best first.

        Args:
            query: ``(dim,)`` float32, L2-normalised.
            k: How many rows (fewer when the matrix has fewer).

        Returns:
            ``(rows, cosines)``: ``(min(k, n),)`` int64 row numbers of :attr:`vectors` and ``(min(k, n),)``
            float32 cosines, largest first (ties in row order). Exact mode gives the rows of
            ``np.argsort(-(vectors @ query), kind="stable")[:k]``; graph mode the exact cosines of the rows found.
        """
        rows, cos = self.search_many(np.asarray(query, dtype=np.float32)[None, :], k, threads=1)
        return rows[0], cos[0]

    def search_many(self, queries: np.ndarray, k: int = 10, threads: int = 0,
                    oversample: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`search` for each row of ``queries``.

        Args:
            queries: ``(m, dim)`` float32, L2-normalised.
            k: Rows per query (fewer when the matrix has fewer).
            threads: Threads searching the graph (0: one per core; ignored when exact).
            oversample: Candidates per wanted result re-ranked by exact cosine (None: :attr:`oversample`; 1 for
                a long list, whose beam is already ``k`` wide).

        Returns:
            ``(rows, cosines)``: ``(m, min(k, n))`` int64 and ``(m, min(k, n))`` float32, each row best first.
        """
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.vectors.shape[1]:
            raise ValueError(f"queries must be (m, {self.vectors.shape[1]}), not {queries.shape}")
        k = min(int(k), len(self.vectors))
        rows = np.empty((len(queries), k), np.int64)
        cos = np.empty((len(queries), k), np.float32)
        if k <= 0:
            return rows, cos
        if self.exact:
            step = max(1, (1 << 24) // max(len(self.vectors), 1))  # at most ~64 MB of similarities at once
            for s in range(0, len(queries), step):
                sims = queries[s:s + step] @ self.vectors.T
                for j, row in enumerate(sims):
                    top = top_k(row, k)
                    rows[s + j], cos[s + j] = top, row[top]
            return rows, cos
        self._graph.expansion_search = self.expansion_search
        over = self.oversample if oversample is None else oversample
        found = self._graph.search(queries, count=min(k * max(over, 1), len(self.vectors)),
                                   threads=threads)
        if hasattr(found, "counts"):  # BatchMatches
            keys, counts = found.keys, found.counts
        else:  # one query gives Matches
            keys, counts = found.keys[None, :], [len(found.keys)]
        for i, q in enumerate(queries):
            cand = keys[i, :counts[i]].astype(np.int64)
            if len(cand) < k:  # the graph did not reach k rows (tiny or odd graphs): answer exactly
                sims = self.vectors @ q
                top = top_k(sims, k)
                rows[i], cos[i] = top, sims[top]
                continue
            sims = self.vectors[cand] @ q
            order = np.lexsort((cand, -sims))[:k]
            rows[i], cos[i] = cand[order], sims[order]
        return rows, cos

    def to_bytes(self) -> bytes:
        """The index as bytes for the atlas file: a JSON header, then USearch's own serialisation of the graph.

        Returns:
            ``_MAGIC``, a 4-byte little-endian header length, the UTF-8 JSON header (format, mode, ``n``, ``dim``,
            graph parameters, USearch version), then the graph (nothing in exact mode); no Python objects.
        """
        header = {"format": _FORMAT, "mode": "exact" if self.exact else "usearch", "n": len(self.vectors),
                  "dim": int(self.vectors.shape[1])}
        body = b""
        if not self.exact:
            header.update(self._params, expansion_search=self.expansion_search, oversample=self.oversample,
                          usearch=_usearch_version())
            body = bytes(self._graph.save())
        head = json.dumps(header, sort_keys=True).encode()
        return _MAGIC + struct.pack("<I", len(head)) + head + body

    @classmethod
    def from_bytes(cls, data: bytes | bytearray, vectors: np.ndarray) -> NeighbourIndex:
        """The index saved by :meth:`to_bytes`, over the same ``vectors`` it was built on.

        Args:
            data: The bytes of :meth:`to_bytes`, or a ``bytearray`` of them (kept by reference: the graph is viewed
                in place, not copied).
            vectors: ``(n, dim)`` float32, the matrix the index was built on (same rows, same order).

        Returns:
            The index; its searches give the same results as the saved one's.

        Raises:
            ValueError: ``data`` is not an index, is truncated or corrupt, was written by a USearch whose format
                is not known here, or does not match the shape of ``vectors`` (rebuild it with :meth:`build`).
            ImportError: It holds a graph and USearch is not installed (``pip install 'paperatlas[ann]'``).
        """
        vectors = _matrix(vectors)
        view = memoryview(data).cast("B")
        if bytes(view[:len(_MAGIC)]) != _MAGIC or len(view) < len(_MAGIC) + 4:
            raise ValueError("not a paperatlas neighbour index")
        (hlen,) = struct.unpack_from("<I", view, len(_MAGIC))
        start = len(_MAGIC) + 4 + hlen
        try:
            header = json.loads(bytes(view[len(_MAGIC) + 4:start]))
        except (UnicodeDecodeError, ValueError) as e:
            raise ValueError("neighbour index: unreadable header") from e
        if not isinstance(header, dict) or header.get("format") != _FORMAT:
            raise ValueError("neighbour index: unknown header format")
        if header.get("n") != len(vectors) or header.get("dim") != vectors.shape[1]:
            raise ValueError(f"neighbour index built on {header.get('n')} × {header.get('dim')} vectors, "
                             f"not {len(vectors)} × {vectors.shape[1]}: rebuild it")
        if header.get("mode") == "exact":
            return cls(vectors)
        if header.get("mode") != "usearch" or header.get("dtype") not in _USEARCH_SCALARS:
            raise ValueError(f"neighbour index: unknown mode {header.get('mode')!r} / dtype {header.get('dtype')!r}")
        index = _usearch()
        body = view[start:]
        _check_usearch_blob(body, len(vectors), vectors.shape[1], header["dtype"], int(header.get("connectivity", 0)))
        graph = index.Index(ndim=vectors.shape[1], metric="ip", dtype=header["dtype"],
                            connectivity=int(header["connectivity"]))
        try:
            graph.view(body)
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"neighbour index: USearch could not read the graph ({e})") from e
        if len(graph) != len(vectors):
            raise ValueError(f"neighbour index: the graph holds {len(graph)} rows, not {len(vectors)}")
        params = {key: header[key] for key in ("dtype", "connectivity", "expansion_search", "oversample")
                  if key in header}
        return cls(vectors, graph, params=params, blob=data)


def _usearch_version() -> str:
    """The installed USearch's version string."""
    from importlib.metadata import version

    return version("usearch")


def _matrix(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as a C-contiguous 2-D float32 matrix (no copy when it already is one)."""
    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or vectors.dtype != np.float32:
        raise ValueError(f"vectors must be a 2-D float32 matrix, not {vectors.dtype} of shape {vectors.shape}")
    return np.ascontiguousarray(vectors)


def _u32_at(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Little-endian uint32 values at the byte positions ``pos`` of ``buf`` (uint8)."""
    b = buf[pos[..., None] + np.arange(4)].astype(np.uint32)
    return b[..., 0] | (b[..., 1] << 8) | (b[..., 2] << 16) | (b[..., 3] << 24)


def _check_usearch_blob(blob: memoryview, n: int, dim: int, dtype: str, connectivity: int) -> None:
    """Raise ValueError unless ``blob`` is a well-formed USearch 2.26 dense index of ``n`` rows keyed ``0..n-1``.

    USearch's loader reads sizes but not the graph: a neighbour slot out of range is followed at search time (a
    segmentation fault, not an exception). This walks the serialised layout (the ``rows, cols`` matrix header
    and the vectors; the 64-byte dense header; the graph header ``size, connectivity, connectivity_base,
    max_level, entry_slot``; one int16 level per node; per node its uint64 key, int16 level and, per level, a
    uint32 neighbour count and ``connectivity_base`` or ``connectivity`` uint32 slots) and checks every field.
    """
    buf = np.frombuffer(blob, dtype=np.uint8)
    kind, width = _USEARCH_SCALARS[dtype]

    def fail(what: str):
        raise ValueError(f"neighbour index: corrupt graph ({what}): rebuild it")

    if len(buf) < 8 + 64 + 40:
        fail("too short")
    rows, cols = struct.unpack_from("<II", blob, 0)
    if rows != n or cols != dim * width:
        fail(f"matrix {rows} × {cols} bytes")
    at = 8 + rows * cols
    if len(buf) < at + 64 + 40:
        fail("truncated")
    head = bytes(blob[at:at + 64])
    major, minor, _patch = struct.unpack_from("<3H", head, 7)
    metric, scalar, key, slot = head[13:17]
    present, deleted, dims = struct.unpack_from("<3Q", head, 17)
    if head[:7] != b"usearch" or (major, minor) not in _USEARCH_FORMATS:
        fail(f"not a USearch {'/'.join(f'{a}.{b}' for a, b in sorted(_USEARCH_FORMATS))} index")
    if (metric, scalar, key, slot) != (_USEARCH_IP, kind, _USEARCH_U64, _USEARCH_U32) or any(head[41:]):
        fail("kinds")
    if (present, deleted, dims) != (n, 0, dim):
        fail("counts")
    at += 64
    size, m, m0, max_level, entry = struct.unpack_from("<5Q", blob, at)
    if size != n or m != connectivity or not 2 <= m <= 1024 or m0 != 2 * m or entry >= max(n, 1) or max_level > 64:
        fail("graph header")
    at += 40
    if len(buf) < at + 2 * n:
        fail("truncated levels")
    levels = np.frombuffer(blob, dtype="<i2", count=n, offset=at).astype(np.int64)
    at += 2 * n
    if n and (levels.min() < 0 or levels.max() != max_level or levels[entry] != max_level):
        fail("levels")
    base_bytes, upper_bytes = 4 + 4 * m0, 4 + 4 * m
    sizes = 10 + base_bytes + levels * upper_bytes
    starts = at + np.concatenate([[0], np.cumsum(sizes)[:-1]]) if n else np.zeros(0, np.int64)
    if at + int(sizes.sum()) != len(buf):
        fail("length")
    seen = np.zeros(n, bool)
    for s in range(0, n, _CHUNK):
        st, lv = starts[s:s + _CHUNK], levels[s:s + _CHUNK]
        keys = _u32_at(buf, st).astype(np.uint64) | (_u32_at(buf, st + 4).astype(np.uint64) << np.uint64(32))
        node_level = buf[st + 8].astype(np.int64) | (buf[st + 9].astype(np.int64) << 8)
        if (node_level != lv).any() or (keys >= n).any():
            fail("node header")
        seen[keys.astype(np.int64)] = True
        blocks = [(st + 10, m0)]  # (positions of neighbour counts, capacity)
        upper = np.repeat(st, lv)
        if len(upper):
            j = np.arange(len(upper)) - np.repeat(np.cumsum(lv) - lv, lv)  # 0 for a node's level 1, ...
            blocks.append((upper + 10 + base_bytes + j * upper_bytes, m))
        for pos, cap in blocks:
            count = _u32_at(buf, pos).astype(np.int64)
            if (count > cap).any():
                fail("neighbour count")
            slots = _u32_at(buf, pos[:, None] + 4 + 4 * np.arange(cap))
            if ((slots >= n) & (np.arange(cap) < count[:, None])).any():
                fail("neighbour slot")
    if not seen.all():
        fail("keys")
