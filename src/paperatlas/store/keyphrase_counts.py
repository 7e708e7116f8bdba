"""The stored keyphrase statistics a rebuild updates instead of counting the whole corpus again.

Split out of :mod:`paperatlas.build`: the statistics (:mod:`paperatlas.enrich.keyphrase_stats`) are stored in the
``models`` table as :data:`KEYPHRASE_STATS`; while the corpus changes little, a rebuild takes the last build's
counts and adds the new and changed papers and takes out the leaving ones (:func:`updated_keyphrase_stats`).
"""

from __future__ import annotations

import hashlib
import sqlite3

from ..enrich import keyphrase_stats
from ..enrich.keyphrases import KeyphraseExtractor
from ..model import Paper
from .models import read_model
from .paper_rows import paper_texts

#: the ``models`` table's name of the keyphrase statistics (:func:`paperatlas.enrich.keyphrase_stats.dumps`)
KEYPHRASE_STATS = "keyphrases.stats"


def hash_text(title: str | None, text: str | None) -> str:
    """SHA-1 (hex) of a title and the text keyphrases and TL;DR are made from (:func:`paperatlas.build.text_hash`)."""
    return hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()


def updated_keyphrase_stats(con: sqlite3.Connection, papers: list[Paper], text_hashes: list[str],
                            prev) -> KeyphraseExtractor | None:
    """The stored keyphrase statistics with the new and changed papers added and the leaving ones taken out.

    Args:
        con: The build's copy of the atlas (before the papers are rewritten).
        papers: The build's papers.
        text_hashes: :func:`hash_text` of each paper's title and text, in the order of ``papers``.
        prev: ``paper id -> PreviousEnrichment`` of the last build (:func:`paperatlas.store.enrichment
            .previous_enrichment`: its ``text_hash``).

    Returns:
        The updated extractor; None (the caller fits anew) when the atlas stores none, they are of another method,
        or the stored text of a leaving paper is not the text it was counted from (the reader edited it).
    """
    kx = keyphrase_stats.loads(read_model(con, KEYPHRASE_STATS))
    if kx is None:
        return None
    now = {p.id: th for p, th in zip(papers, text_hashes, strict=True)}
    leaving = [pid for pid, e in prev.items() if now.get(pid) != e.text_hash]
    old = paper_texts(con, leaving)
    if any(hash_text(t, x) != prev[pid].text_hash for pid, (t, x) in old.items()) or len(old) != len(leaving):
        return None
    added = [(p.title, p.abstract or p.digest) for p, th in zip(papers, text_hashes, strict=True)
             if p.id not in prev or prev[p.id].text_hash != th]
    return kx.update(added, list(old.values()))
