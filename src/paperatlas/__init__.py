"""paperatlas: turn a paper listing into a navigable atlas and publish it.

The atlas adds TL;DRs, keyphrases, topics on a 2-D map, hybrid search and related work to the listing.
"""

__version__ = "0.1.0"
