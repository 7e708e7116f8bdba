"""The labelled gold sets of ``paperatlas eval topics`` (and of ``recommend``, ``neighbours``, ``related``).

Named sets, found under ``../shared`` (:func:`paperatlas.eval._common.resolve_shared`):

* ``awesome`` - seed 004 (Awesome Deep Phenomena): the papers filed first under one of the 8 named phenomena
  sections (``Others`` is left out: 329 of 542 papers); gold class = that section; those entries have no abstract,
  so text = title + the curator's digest;
* ``aaai`` - AAAI 2022 (1,319 papers): gold class = ``primary_area`` (20 tracks; three of them are ``Computer
  Vision I/II/III`` and three ``Machine Learning I/II/III``, splits no text-based method can recover);
* ``cvpr2019`` - CVPR 2019 (1,294 papers): gold class = the presentation ``session`` (15 sessions; ``Deep
  Learning`` (195) and ``Recognition`` (178) are broad, method-named sessions rather than subjects);
* ``iccv2019`` - ICCV 2019 (1,062 of 1,075 papers have a session): 29 sessions, among them near-duplicates
  (``Applications, Medical, & Robotics`` / ``Applications. Medical, & Robotics`` / ``Applications, Medical &
  Robotics``, kept apart as written) and broad ones (``Deep Learning`` 180, ``Recognition`` 151);
* ``cvpr2017`` - CVPR 2017 (783 papers, 26 sessions) and ``iccv2017`` - ICCV 2017 (621 papers, 22 sessions):
  available but not in the default run: their sessions mix subject sessions with numbered oral blocks
  (``Machine Learning 1`` ... ``4``, ``Recognition I``/``2``/``3``, 12-13 papers each) that no text-based method can
  tell apart from the subject session of the same name.

Every paper of the paperlists files has an abstract (checked: 0 of 3,773 without); text = title + abstract.

Any listing file :func:`paperatlas.sources.read` understands can be given instead of a name: awesome lists are
labelled by first section (without ``Others``), paperlists JSON by ``primary_area``, else ``session``; papers
without a label are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..model import SourceError
from ._common import EvalUnavailable, resolve_shared

#: name -> file under ``../shared``
GOLD_SETS = {
    "awesome": "seeds/004_67aa5497667b379c.txt",
    "aaai": "data/paperlists/aaai/aaai2022.json.gz",
    "cvpr2019": "data/paperlists/cvpr/cvpr2019.json.gz",
    "iccv2019": "data/paperlists/iccv/iccv2019.json.gz",
    "cvpr2017": "data/paperlists/cvpr/cvpr2017.json.gz",
    "iccv2017": "data/paperlists/iccv/iccv2017.json.gz",
}
GOLD_LABELS = {
    "awesome": "seed 004 (Awesome Deep Phenomena) sections",
    "aaai": "AAAI 2022 primary areas",
    "cvpr2019": "CVPR 2019 sessions",
    "iccv2019": "ICCV 2019 sessions",
    "cvpr2017": "CVPR 2017 sessions",
    "iccv2017": "ICCV 2017 sessions",
}
#: the sets ``paperatlas eval topics`` runs by default
TOPIC_DEFAULTS = ("awesome", "aaai", "cvpr2019", "iccv2019")
#: the sets the other class-based evaluations (recommend, neighbours, related) run by default
CLASS_DEFAULTS = ("awesome", "aaai")
#: awesome-list sections that are not a topic (left out of the gold set)
EXCLUDED_SECTIONS = frozenset({"Others"})


@dataclass
class GoldPaper:
    """One paper of a gold set.

    Attributes:
        title: Its title.
        text: Its abstract (or, without one, the curator's digest); what keyphrases are made from.
        gold: Its gold class.
    """

    title: str
    text: str
    gold: str


def gold_class(sections: list[str], extra: dict | None) -> str:
    """The gold class of a paper as read by :func:`paperatlas.sources.read`.

    Args:
        sections: Its awesome-list sections (empty for other listings).
        extra: Its ``extra`` fields.

    Returns:
        The first section (``""`` when it is in :data:`EXCLUDED_SECTIONS`); without sections ``primary_area``,
        else ``session``; ``""`` when there is none (the paper is dropped).
    """
    if sections:
        return sections[0] if sections[0] not in EXCLUDED_SECTIONS else ""
    extra = extra or {}
    return str(extra.get("primary_area") or extra.get("session") or "")


def load_gold_papers(name: str) -> tuple[str, list[GoldPaper]]:
    """Load a gold set of papers with one class each.

    Args:
        name: A key of :data:`GOLD_SETS` (found under ``../shared``) or the path of any listing
            :func:`paperatlas.sources.read` understands.

    Returns:
        ``(label, papers)``: a readable name of the set (the path for a file) and the papers with a class
        (:func:`gold_class`), in file order.

    Raises:
        EvalUnavailable: The file is missing or unreadable (the message names it).
    """
    from ..sources import read

    path = resolve_shared(GOLD_SETS[name]) if name in GOLD_SETS else Path(name)
    if not path.is_file():
        raise EvalUnavailable(f"gold file not found: {path}")
    try:
        papers = read(path)
    except SourceError as e:
        raise EvalUnavailable(f"cannot read gold file {path}: {e}") from e
    out = []
    for p in papers:
        label = gold_class(p.sections, p.extra)
        if label:
            out.append(GoldPaper(p.title, p.abstract or p.digest or "", label))
    return GOLD_LABELS.get(name, str(path)), out


def load_gold(name: str) -> tuple[str, list[str], list[str]]:
    """Load a gold set as texts and classes (:func:`load_gold_papers`).

    Args:
        name: As for :func:`load_gold_papers`.

    Returns:
        ``(label, texts, gold)``: per paper with a class, in file order, ``texts[i]`` =
        :func:`paperatlas.enrich.embed.paper_text` of its title and abstract (or digest) and ``gold[i]`` its class.

    Raises:
        EvalUnavailable: The file is missing or unreadable (the message names it).
    """
    from ..enrich.embed import paper_text

    label, papers = load_gold_papers(name)
    return label, [paper_text(p.title, p.text) for p in papers], [p.gold for p in papers]
