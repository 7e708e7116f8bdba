"""paperatlas: turn a paper listing into a navigable atlas (TL;DRs, keyphrases, topics on a 2-D map,
hybrid search, related work) and publish it."""

__version__ = "0.1.0"
