"""The atlas of ``paperatlas eval ask``: seeds 001 + 004 built with the real pipeline, seed 004 without its Key Words.

The search indexes a paper's given keyphrases, so with seed 004's ``Key Word:`` lines a keyword question would find
its relevant papers by their own gold label; by default they are stripped (:func:`strip_key_words`), as
``eval search`` drops author keywords. The atlas is kept in ``<cache root>/eval-ask/`` (:func:`atlas_path`) and
rebuilt incrementally on each run (unchanged papers keep their embeddings and TL;DRs).
"""

from __future__ import annotations

import re
from pathlib import Path

from ._common import EvalUnavailable, resolve_shared

#: the two seeds of the atlas (under ``../shared``)
ATLAS_SEEDS = ("seeds/001_2614e1796f49d7fd.txt", "seeds/004_67aa5497667b379c.txt")


def strip_key_words(text: str) -> str:
    """An awesome list without its ``Key Word:`` detail lines (the reader's label, typos tolerated).

    Args:
        text: the list as :mod:`paperatlas.sources.awesome_md` reads it.

    Returns:
        The same text without those lines (every entry keeps its title, authors and digest).
    """
    return re.sub(r"^[ \t]+\u2022[ \t]*key\s*w[a-z]{0,4}\s*:.*(?:\n|$)", "", text, flags=re.MULTILINE | re.IGNORECASE)


def atlas_path(folder: Path | None = None, with_key_words: bool = False) -> Path:
    """Where :func:`build_atlas` keeps the evaluation's atlas: ``<cache root>/eval-ask/seeds-001-004[-kw].db``."""
    from ..sources._common import cache_root

    folder = folder or cache_root() / "eval-ask"
    return folder / f"seeds-001-004{'-kw' if with_key_words else ''}.db"


def build_atlas(db: Path, seeds: tuple[Path, ...] | None = None, with_key_words: bool = False,
                progress=None) -> Path:
    """Build (or incrementally rebuild) the atlas of seeds 001 + 004 at ``db`` with the real pipeline.

    Args:
        db: the atlas file (its folder is created; a rebuild reuses the embeddings and TL;DRs of unchanged papers).
        seeds: the listings (default :data:`ATLAS_SEEDS` under ``../shared``).
        with_key_words: keep the awesome list's ``Key Word:`` lines (default: stripped, see the module docstring;
            the stripped copy is written next to ``db``).
        progress: the build's progress factory (None: silent).

    Returns:
        ``db``.

    Raises:
        EvalUnavailable: a seed is missing.
    """
    from ..build import build
    from ..sources import awesome_md

    paths = list(seeds or [resolve_shared(s) for s in ATLAS_SEEDS])
    for p in paths:
        if not p.is_file():
            raise EvalUnavailable(f"gold file not found: {p}")
    db.parent.mkdir(parents=True, exist_ok=True)
    if not with_key_words:
        for i, p in enumerate(paths):
            text = p.read_text("utf-8")
            if awesome_md.sniff(text[:20_000]):
                copy = db.parent / f"{p.stem}.no-key-words.txt"
                copy.write_text(strip_key_words(text), "utf-8")
                paths[i] = copy
    build(paths, db, **({"progress": progress} if progress is not None else {}))
    return db
