r"""Publish an atlas as JSON: one object per paper.

Each object has every :class:`~paperatlas.model.Paper` field, plus ``topic_label`` (the label of the paper's
topic, ``""`` when it has none) and ``related_ids`` (ids of its related papers, most similar first). ``links``
holds only http(s) and DOI links (:func:`paperatlas.text.safe_url`; a bare DOI as ``https://doi.org/...``) and
placeholder links with an empty URL; any other link (``javascript:``, ``data:``, relative) is left out. A source's
``path`` is the listing's file name only (:func:`source_name`: ``iclr2021.md``, never ``/home/me/lists/iclr2021.md``);
a network source keeps its name (``openreview:ICLR.cc/2021/Conference``).

The array is sorted by paper id (stable across runs), pretty-printed with two-space indentation and written as
UTF-8 without ``\u`` escapes. Non-finite floats (NaN map coordinates) become ``null``; NumPy scalars and arrays
become plain numbers and lists, so the output is always strict JSON.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable
from pathlib import PureWindowsPath
from typing import Any

from ..facets import facets_of
from ..model import Paper, Topic
from ..text import safe_url

FORMAT = "json"

# A network source's name (``openreview:VENUE``, ``arxiv:QUERY``, ``https://...``): a scheme of two letters or more
# (``C:`` is a Windows drive).
_NETWORK_SOURCE_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")


def source_name(path: str) -> str:
    r"""What an export says a paper came from: a listing's file name, never where it is on the reader's machine.

    Args:
        path: A :class:`~paperatlas.model.SourceRef`'s ``path``.

    Returns:
        The file name of a local path (``/home/me/lists/iclr.md``, ``lists\\iclr.md``, ``~/iclr.md`` ->
        ``iclr.md``); a network source's name (``openreview:ICLR.cc/2021/Conference``) as it is.
    """
    path = str(path or "")
    if _NETWORK_SOURCE_RE.match(path):
        return path
    return PureWindowsPath(path).name  # splits at "/" and "\\" alike, and drops a drive


def _plain(value: Any) -> Any:
    """``value`` with NumPy scalars/arrays, tuples and non-finite floats turned into strict-JSON values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy scalar or array
        return _plain(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _safe_links(links: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The links whose URL is empty (a placeholder) or safe, with the safe URL (:func:`paperatlas.text.safe_url`)."""
    out = []
    for link in links:
        if not str(link.get("url") or "").strip():
            out.append(link)
        elif url := safe_url(str(link["url"])):
            out.append({**link, "url": url} if url != link["url"] else link)
    return out


def paper_records(papers: Iterable[Paper], topics: Iterable[Topic],
                  related: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """The records :func:`render` serialises.

    Args:
        papers: the papers.
        topics: the atlas's topics (for ``topic_label``).
        related: paper id -> related paper ids (for ``related_ids``; missing ids give ``[]``).

    Returns:
        ``Paper.to_dict()`` + ``topic_label`` + ``related_ids`` + ``facets`` (:func:`paperatlas.facets.facets_of`:
        rating mean/spread, reviews, confidence, decision, citations, has_code, institutions; ``null`` when missing)
        per paper, sorted by id, with NumPy values, tuples
        and non-finite floats made strict-JSON values, only safe links, and sources' file names without their folder
        (see the module docstring).
    """
    labels = {t.id: t.label for t in topics}
    related = related or {}
    out = []
    for p in sorted(papers, key=lambda p: p.id):
        d = p.to_dict()
        d["links"] = _safe_links(d["links"])
        d["sources"] = [{**s, "path": source_name(s.get("path", ""))} for s in d["sources"]]
        d["topic_label"] = labels.get(p.topic_id, "") if p.topic_id is not None else ""
        d["related_ids"] = [str(r) for r in related.get(p.id, [])]
        d["facets"] = dataclasses.asdict(facets_of(p))
        out.append(_plain(d))
    return out


def render(papers: Iterable[Paper], topics: Iterable[Topic], related: dict[str, list[str]] | None = None,
           title: str = "") -> str:
    """Render the papers as a pretty-printed JSON array (see the module docstring).

    Args:
        papers: the papers.
        topics: the atlas's topics (for ``topic_label``).
        related: paper id -> related paper ids (for ``related_ids``; missing ids give ``[]``).
        title: unused (uniform signature).

    Returns:
        The JSON text ending with a newline.

    Raises:
        TypeError: a paper's ``extra`` holds a value that JSON cannot represent.
    """
    return json.dumps(paper_records(papers, topics, related), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
