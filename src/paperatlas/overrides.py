"""The reader's overrides: their own TL;DR, keyphrases and topic for a paper, and their own topic labels.

Overrides live in the atlas file's ``overrides`` table (one row per paper and field, with the paper's title and
the time of the edit; a topic's label keyed ``"topic:<id>"``), which builds never write: a rebuild carries it over
and re-applies it. Each edit also shows at once in the live atlas. Topic renames and moves:
:func:`rename_topic` and :func:`move_paper` (:mod:`paperatlas.store.topic_overrides`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import store
from .limits import MAX_KEYPHRASE_CHARS as MAX_KEYPHRASE_CHARS
from .limits import MAX_KEYPHRASES as MAX_KEYPHRASES
from .limits import check_keyphrase, check_keyphrase_count, check_keyphrases, check_tldr
from .model import Paper
from .store.topic_overrides import MAX_TOPIC_LABEL_CHARS as MAX_TOPIC_LABEL_CHARS
from .store.topic_overrides import move_paper as move_paper
from .store.topic_overrides import rename_topic as rename_topic


def parse_keyphrases(text: str, paper: str | None = None) -> list[str]:
    """Split a keyphrase field as the reader types it.

    ``"a; b ;c"`` → ``["a", "b", "c"]``: ``;``-separated, whitespace collapsed, blanks and case-insensitive
    repeats dropped (the first spelling is kept). Linear in the length of ``text``.

    Args:
        text: The ``;``-separated keyphrases.
        paper: The paper's id, for the message of a refusal.

    Returns:
        The keyphrases, in the order given (possibly empty).

    Raises:
        paperatlas.limits.LimitExceeded: More than :data:`paperatlas.limits.MAX_KEYPHRASES` distinct keyphrases
            (the message says how many), or one longer than :data:`paperatlas.limits.MAX_KEYPHRASE_CHARS`
            characters (a ValueError).
    """
    out: list[str] = []
    seen: set[str] = set()
    for k in text.split(";"):
        k = " ".join(k.split())
        if not k or k.lower() in seen:
            continue
        seen.add(k.lower())
        if len(out) < MAX_KEYPHRASES:  # past the limit only counted, for the message
            out.append(check_keyphrase(k, paper))
    check_keyphrase_count(len(seen), paper)
    return out


def show_overrides(con: store.Connection, paper: str | Mapping[str, Any],
                   overrides: dict[str, dict[str, object]]) -> Paper:
    """Put the reader's overrides of one paper on its stored row and search index at once, without a rebuild.

    Runs inside the caller's transaction (see :func:`paperatlas.store.show_overrides`).

    Args:
        con: A writable connection to the atlas (e.g. from :func:`paperatlas.store.write_transaction`).
        paper: The paper's id, or its ``papers`` row (anything with an ``"id"`` item).
        overrides: ``paper_id -> {field: value}`` as :func:`paperatlas.store.get_overrides` gives them.

    Returns:
        The paper as now stored.

    Raises:
        LookupError: The atlas has no paper ``paper_id``.
    """
    paper_id = paper if isinstance(paper, str) else str(paper["id"])
    return store.row_to_paper(store.show_overrides(con, paper_id, overrides))


def override_paper(db: str | Path, paper_id: str, tldr: str | None = None, keyphrases: list[str] | None = None,
               clear: bool = False) -> Paper:
    """Record the reader's TL;DR and/or keyphrases for a paper and show them at once.

    The overrides, the paper's row and its search-index row are written in one transaction on the live file.
    ``clear=True`` removes the paper's overrides first; the generated values come back at the next build, and a
    move to another topic (:func:`move_paper`) is undone at once.

    Args:
        db: The atlas file.
        paper_id: The paper's id.
        tldr: The reader's TL;DR (whitespace collapsed), or None to leave it.
        keyphrases: The reader's keyphrases (see :func:`parse_keyphrases`), or None to leave them.
        clear: Remove the paper's stored overrides.

    Returns:
        The paper as now stored (its ``tldr_method`` / ``keyphrases_method`` ``"edited by reader"`` where edited).

    Raises:
        paperatlas.store.AtlasNotFound: There is no file at ``db``.
        ValueError: The TL;DR is blank or the keyphrase list is empty.
        paperatlas.limits.LimitExceeded: The TL;DR is longer than :data:`paperatlas.limits.MAX_TLDR_CHARS`
            characters, or the keyphrases are over their limits (a ValueError); nothing is written.
        LookupError: The atlas has no paper ``paper_id``.
        paperatlas.store.AtlasTooNew: The atlas was written by a newer paperatlas.
    """
    path = store.require_atlas(db)
    if tldr is not None and not tldr.strip():
        raise ValueError("the TL;DR is empty")
    if keyphrases is not None and not keyphrases:
        raise ValueError("no keyphrases given (separate them with ';')")
    values: dict[str, object] = {}
    if tldr is not None:
        values["tldr"] = check_tldr(" ".join(tldr.split()), paper_id)
    if keyphrases is not None:
        values["keyphrases"] = check_keyphrases(keyphrases, paper_id)
    if clear:
        move_paper(path, paper_id, None)  # put a paper the reader moved back under its earlier sub-topic
    return store.row_to_paper(store.set_overrides(path, paper_id, values, clear=clear))
