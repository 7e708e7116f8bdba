"""Where a paper lives: its page, PDF, code, arXiv and DOI links, and searches that find it when it has none.

Every link is http(s) or a DOI (:func:`paperatlas.text.safe_url`); a listing's placeholder links with an empty URL
are skipped. Used by every face that links out to a paper: the web app, the static site, the exports.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote_plus

from ..model import Paper
from ..text import safe_url, year_in

_PAPER_KINDS = ("paper", "openreview", "project", "other")


def paper_link(p: Paper) -> str:
    """The paper's main URL.

    Unlike :attr:`Paper.paper_url` this skips placeholder links whose ``url`` is empty and links that are not
    safe to render (:func:`paperatlas.text.safe_url`: only http(s) and DOI links are).

    Args:
        p: the paper.

    Returns:
        The URL (stripped; a bare DOI as ``https://doi.org/...``) of its first safe ``paper`` link, else
        ``openreview``, ``project``, ``other`` link; ``""`` when it has none.
    """
    for kind in _PAPER_KINDS:
        for link in p.links:
            if link.kind == kind and (url := safe_url(link.url)):
                return url
    return ""


def second_link(p: Paper) -> str:
    """The paper's second safe paper/OpenReview/project link after :func:`paper_link` (e.g. the PDF beside the page).

    Args:
        p: the paper.

    Returns:
        The URL, or ``""`` when the paper has no other such link.
    """
    first = paper_link(p)
    return next((url for link in p.links if link.kind in ("paper", "openreview", "project")
                 and (url := safe_url(link.url)) and url != first), "")


def code_link(p: Paper) -> str:
    """The paper's code URL.

    Args:
        p: the paper.

    Returns:
        The URL (stripped; a bare DOI as ``https://doi.org/...``) of its first safe ``code`` link
        (:func:`paperatlas.text.safe_url`), or ``""`` (placeholder links with an empty URL are skipped).
    """
    return next((url for link in p.links if link.kind == "code" and (url := safe_url(link.url))), "")


def paper_year(p: Paper) -> int | None:
    """The year a paper is listed under (BibTeX/CSL ``year``, awesome-list year sub-sections).

    Args:
        p: the paper.

    Returns:
        :attr:`Paper.year` when set (non-zero), else the first 19xx/20xx year in its venue (``"ICLR 2021"`` ->
        2021), else ``None``.
    """
    if p.year:
        return int(p.year)
    return year_in(p.venue)


@dataclass(frozen=True)
class OutLink:
    """A link out to a paper.

    Attributes:
        label: what the link opens, as shown: ``OpenReview``, ``PDF``, ``arXiv``, ``DOI``, ``Code``, ``Project``,
            ``Paper``, or ``Search arXiv`` / ``Search Semantic Scholar``.
        url: the URL (http(s) only).
        kind: ``forum``, ``pdf``, ``arxiv``, ``doi``, ``code``, ``project``, ``paper`` or ``search``.
    """

    label: str
    url: str
    kind: str


def _kind_of(url: str, link_kind: str) -> tuple[str, str]:
    """``(label, kind)`` of one of a paper's links."""
    u = url.lower()
    if "openreview.net" in u:
        return ("PDF", "pdf") if "/pdf" in u else ("OpenReview", "forum")
    if "arxiv.org" in u:
        return ("arXiv PDF", "pdf") if "/pdf/" in u else ("arXiv", "arxiv")
    if "doi.org/" in u:
        return "DOI", "doi"
    if u.split("?")[0].endswith(".pdf"):
        return "PDF", "pdf"
    if link_kind == "code":
        return "Code", "code"
    if link_kind == "project":
        return "Project", "project"
    return "Paper", "paper"


def arxiv_search_url(title: str) -> str:
    """Title search on arXiv for ``title`` (``https://arxiv.org/search/?query=...&searchtype=title``)."""
    return f"https://arxiv.org/search/?query={quote_plus(' '.join(title.split()))}&searchtype=title"


def semantic_scholar_search_url(title: str) -> str:
    """Semantic Scholar's search for ``title`` (``https://www.semanticscholar.org/search?q=...``)."""
    return f"https://www.semanticscholar.org/search?q={quote_plus(' '.join(title.split()))}"


def out_links(p: Paper) -> list[OutLink]:
    """Every way out to the paper: its forum, PDF, arXiv, DOI, paper, code and project links, deduplicated.

    From the paper's links (:class:`paperatlas.model.Link`) and its ``extra`` ``arxiv_id`` / ``doi``
    (:data:`paperatlas.model.EXTRA_KEYS`). When none of them is a forum, PDF, arXiv, DOI or paper page (seed 001,
    the ICLR 2021 listing, has only code and project links), title searches on arXiv and Semantic Scholar are added.

    Args:
        p: the paper.

    Returns:
        The links in the order forum, PDF, arXiv, DOI, paper, code, project, search; only http(s) URLs.
    """
    found: list[OutLink] = []
    seen: set[str] = set()

    def add(label: str, url: str | None, kind: str) -> None:
        url = safe_url(url) if url else None
        if url and url.startswith(("http://", "https://")) and url not in seen:
            seen.add(url)
            found.append(OutLink(label, url, kind))

    for link in p.links:
        if link.url and (url := safe_url(link.url)):
            label, kind = _kind_of(url, link.kind)
            add(label, url, kind)
    arxiv = str(p.extra.get("arxiv_id") or "").strip()
    if arxiv and not any(o.kind == "arxiv" for o in found):
        add("arXiv", f"https://arxiv.org/abs/{arxiv}", "arxiv")
    doi = str(p.extra.get("doi") or "").strip()
    if doi and not any(o.kind == "doi" for o in found):
        add("DOI", f"https://doi.org/{doi}", "doi")
    order = ["forum", "pdf", "arxiv", "doi", "paper", "code", "project"]
    found.sort(key=lambda o: order.index(o.kind))
    if p.title.strip() and not any(o.kind in ("forum", "pdf", "arxiv", "doi", "paper") for o in found):
        found.append(OutLink("Search arXiv", arxiv_search_url(p.title), "search"))
        found.append(OutLink("Search Semantic Scholar", semantic_scholar_search_url(p.title), "search"))
    return found


def doi_of(p: Paper) -> str:
    """The paper's bare DOI (``10.xxxx/...``): ``extra["doi"]``, else one in a ``doi.org`` link; ``""`` if none."""
    doi = str(p.extra.get("doi") or "").strip()
    if doi:
        return doi
    for link in p.links:
        url = (link.url or "").strip()
        if "doi.org/10." in url.lower():
            return url[url.lower().index("doi.org/") + len("doi.org/"):]
    return ""
