"""Enrichment stages: what a build adds to the papers a reader read.

Per paper: :mod:`.embed` (all-MiniLM-L6-v2 sentence embeddings), :mod:`.keyphrases`, :mod:`.tldr` (extractive).
Per corpus: :mod:`.topics` (areas → sub-topics, stable across rebuilds), :mod:`.labels` (c-TF-IDF topic labels),
:mod:`.layout` (the 2-D UMAP map). None of them reads or writes the store; :mod:`paperatlas.build` runs them.
"""
