"""Embedding throughput and neighbour quality of every way paperatlas can run all-MiniLM-L6-v2 on this CPU.

Usage:
    python benchmarks/embed_paths.py [--n 600] [--listing ../shared/data/paperlists/icml/icml2019.json.gz]
                                     [--paths st-fp32-b32,st-fp32,st-bf16,onnx-fp32,onnx-opt,onnx-int8]

Embeds the first ``--n`` papers with an abstract of a real listing (``"<title>. <abstract>"``, 256 tokens, as the
build does) with each path and prints, per path: papers/s, speed-up over ``st-fp32-b32`` (sentence-transformers
fp32 called batch by batch in listing order: the build before issue 16), the top-10-neighbour overlap with that
reference (share of each paper's 10 nearest papers, by cosine within the set, that the reference also lists), the
mean cosine between a paper's two vectors, and the worst one.

Paths:
    st-fp32-b32   sentence-transformers fp32, 32 texts per call in listing order (the old build).
    st-fp32       sentence-transformers fp32, texts sorted by length first (less padding): ``--precision fp32``.
    st-bf16       as st-fp32 under ``torch.autocast("cpu", bfloat16)`` (AMX / AVX512-BF16): ``--precision bf16``.
    onnx-fp32     the ONNX export of :mod:`paperatlas.enrich.query_embed`, ONNX Runtime, length-sorted batches.
    onnx-opt      the same graph after ONNX Runtime's transformer optimiser (fused attention, LayerNorm, GELU).
    onnx-int8     onnx-fp32 with dynamic int8 quantisation of the weights (``quantize_dynamic``).

Speed belongs here, not in tests. Run on an idle machine: the figures are wall-clock.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LISTING = ROOT.parent / "shared" / "data" / "paperlists" / "icml" / "icml2019.json.gz"
ALL_PATHS = ["st-fp32-b32", "st-fp32", "st-bf16", "onnx-fp32", "onnx-opt", "onnx-int8"]


def texts_of(listing: Path, n: int) -> list[str]:
    from paperatlas.enrich.embed import paper_text
    from paperatlas.sources import read

    out = [paper_text(p.title, p.abstract) for p in read(listing) if p.title and p.abstract]
    if len(out) < n:
        raise SystemExit(f"{listing}: only {len(out)} papers with an abstract, asked for {n}")
    return out[:n]


def top10(v: np.ndarray) -> np.ndarray:
    sims = v @ v.T
    np.fill_diagonal(sims, -np.inf)
    return np.argsort(-sims, axis=1)[:, :10]


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    ta, tb = top10(a), top10(b)
    return float(np.mean([len(set(x) & set(y)) / 10 for x, y in zip(ta, tb, strict=True)]))


def st_old(texts: list[str]) -> np.ndarray:
    """The build before issue 16: one sentence-transformers call per 32 texts, in listing order, fp32."""
    from paperatlas.enrich.embed import MiniLMEmbedder

    model = MiniLMEmbedder(precision="fp32")._model
    out = [model.encode(texts[s:s + 32], batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
                        show_progress_bar=False) for s in range(0, len(texts), 32)]
    return np.concatenate(out).astype(np.float32)


def onnx_variant(kind: str, workdir: Path):
    """An :class:`~paperatlas.enrich.onnx_embed.OnnxEmbedder` on the plain, optimised or int8 graph."""
    from paperatlas.enrich.onnx_embed import OnnxEmbedder, export_onnx

    path = export_onnx(quiet=True)
    if kind == "opt":
        from onnxruntime.transformers.optimizer import optimize_model

        opt = workdir / "opt.onnx"
        if not opt.exists():
            optimize_model(str(path), model_type="bert", num_heads=12, hidden_size=384).save_model_to_file(str(opt))
        path = opt
    if kind == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        q = workdir / "int8.onnx"
        if not q.exists():
            quantize_dynamic(str(path), str(q), weight_type=QuantType.QInt8)
        path = q
    return OnnxEmbedder(path)


def sorted_encode(encode, texts: list[str], batch: int = 32) -> np.ndarray:
    order = np.argsort([-len(t) for t in texts], kind="stable")
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for s in range(0, len(texts), batch):
        rows = order[s:s + batch]
        out[rows] = encode([texts[i] for i in rows])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=600, help="papers to embed (default 600)")
    ap.add_argument("--listing", type=Path, default=DEFAULT_LISTING, help="a paperlists JSON(.gz) listing")
    ap.add_argument("--paths", default=",".join(ALL_PATHS), help=f"comma-separated, from {ALL_PATHS}")
    args = ap.parse_args()
    paths = args.paths.split(",")
    texts = texts_of(args.listing, args.n)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from paperatlas.enrich.embed import MiniLMEmbedder

    work = Path(tempfile.mkdtemp(prefix="embed_paths_"))
    results: dict[str, tuple[float, np.ndarray]] = {}
    for name in ["st-fp32-b32", *[p for p in paths if p != "st-fp32-b32"]]:
        if name == "st-fp32-b32":
            run = st_old
        elif name.startswith("st-"):
            emb = MiniLMEmbedder(precision=name[3:])
            run = emb.encode
        elif name.startswith("onnx-"):
            emb = onnx_variant(name[5:], work)
            run = lambda t, emb=emb: sorted_encode(emb.encode, t)  # noqa: E731
        else:
            raise SystemExit(f"unknown path {name!r}; known: {ALL_PATHS}")
        run(texts[:16])  # warm-up: first-call allocations and kernel selection
        t0 = time.perf_counter()
        vecs = run(texts)
        dt = time.perf_counter() - t0
        results[name] = (len(texts) / dt, np.asarray(vecs, dtype=np.float32))
        print(f"  {name}: {len(texts) / dt:.1f} papers/s", file=sys.stderr, flush=True)
    ref_rate, ref = results["st-fp32-b32"]
    print(f"\n{len(texts)} papers of {args.listing.name}, all-MiniLM-L6-v2, 256 tokens, {os.cpu_count()} cores\n")
    print("| path | papers/s | speed-up | top-10 overlap | mean cosine to ref | min cosine |")
    print("|---|---|---|---|---|---|")
    for name, (rate, vecs) in results.items():
        cos = np.sum(vecs * ref, axis=1)
        print(f"| {name} | {rate:.1f} | {rate / ref_rate:.2f}x | {overlap(vecs, ref):.3f} | {cos.mean():.5f} | "
              f"{cos.min():.5f} |")


if __name__ == "__main__":
    main()
