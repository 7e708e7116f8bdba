"""Search filters: status, venue, year, author, topic, keyphrase and the facets (rating, affiliation, code, ...).

The one implementation of search filtering: the CLI (``paperatlas search``) and the web app (``/``,
``/api/search``) both build a :class:`Filters` and pass it to :func:`paperatlas.search.search_results`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..facets import PaperFacets, affiliation_matcher, facets_of
from ..model import Paper
from ..store import Atlas
from ..topics import resolve_topics
from ..vocab import concept_key


@dataclass
class Filters:
    """Search filters; empty values mean "any".

    Attributes:
        status: accepted statuses (case-insensitive, e.g. ``["Oral", "Spotlight"]``).
        venue: substring of the venue (case-insensitive).
        year: ``(min, max)`` inclusive; either may be None (open end).
        author: substring of any author name (case-insensitive; accents are not ignored).
        topic: topic id or a substring of the topic label (an area includes its sub-topics).
        keyphrase: a keyphrase the paper must carry (generated or listed; spelling variants match, ``Neural
            Networks`` = ``neural network``, ``optimize`` = ``optimization``; an acronym the corpus defines matches
            its long form, ``NTK`` = ``neural tangent kernel``, through the ``acronyms`` the build stores in the
            atlas's meta).
        min_rating: the mean review rating must be at least this (:func:`paperatlas.facets.facets_of`); papers
            without ratings are left out.
        affiliation: the paper is from this institution (:func:`paperatlas.facets.affiliation_matcher`: its
            normalised institution, ``Google Brain`` = ``Google``, or whole words of one of its institutions or raw
            affiliations, case- and accent-insensitive, ``stanford`` matches ``Stanford University``); papers
            without affiliations are left out.
        has_code: only papers with a code link (False: no filter).
        institution: a normalised institution the paper must have (exact, case-insensitive; a facet value of
            :attr:`paperatlas.facets.PaperFacets.institutions`).
        decision: the decision the paper must have (the whole text, case-insensitive: ``accept (oral)`` =
            ``Accept (Oral)``); papers without a decision are left out.
        min_citations: at least this many citations; papers without a count are left out.
        min_confidence: mean reviewer confidence at least this; papers without confidences are left out.
        max_spread: spread of the review ratings at most this; papers with fewer than 2 ratings are left out.
        facets_for: ``paper -> PaperFacets`` the facet filters read (:func:`paperatlas.facets.facets_of`, or a
            cache of it such as the web app's); not a filter, so neither compared nor shown.
    """

    status: list[str] = field(default_factory=list)
    venue: str = ""
    year: tuple[int | None, int | None] = (None, None)
    author: str = ""
    topic: str = ""
    keyphrase: str = ""
    min_rating: float | None = None
    affiliation: str = ""
    has_code: bool = False
    institution: str = ""
    decision: str = ""
    min_citations: int | None = None
    min_confidence: float | None = None
    max_spread: float | None = None
    facets_for: Callable[[Paper], PaperFacets] = field(default=facets_of, compare=False, repr=False)

    def any(self) -> bool:
        """Whether any filter is set.

        Returns:
            True when at least one field differs from "any".
        """
        return self != Filters()

    def matcher(self, atlas: Atlas) -> Callable[[Paper], bool]:
        """A predicate applying these filters to papers of ``atlas``.

        Args:
            atlas: the atlas whose topics and acronyms the ``topic`` and ``keyphrase`` filters use.

        Returns:
            ``paper -> bool``, true when the paper passes every filter.
        """
        statuses = {s.strip().lower() for s in self.status if s.strip()}
        venue = self.venue.lower()
        author = self.author.lower()
        lo, hi = self.year
        topic_ids = resolve_topics(atlas, [self.topic]) if self.topic else None
        kp = keyphrase_keys(self.keyphrase, atlas.meta.get("acronyms") or {}) if self.keyphrase.strip() else set()
        facets_for = self.facets_for
        aff = affiliation_matcher(self.affiliation, lambda p: facets_for(p).institutions) \
            if self.affiliation.strip() else None
        inst = self.institution.strip().lower()
        decision = self.decision.strip().lower()
        facet_set = (self.has_code or inst or decision or self.min_rating is not None
                     or self.min_citations is not None or self.min_confidence is not None
                     or self.max_spread is not None)

        def at_least(value: float | None, bound: float | None) -> bool:
            return bound is None or (value is not None and value >= bound)

        def facets_ok(p: Paper) -> bool:
            f = facets_for(p)
            return (f.has_code or not self.has_code) and at_least(f.rating_mean, self.min_rating) \
                and at_least(f.citations, self.min_citations) and at_least(f.confidence_mean, self.min_confidence) \
                and (self.max_spread is None or (f.rating_spread is not None and f.rating_spread <= self.max_spread)) \
                and (not decision or (f.decision or "").lower() == decision) \
                and (not inst or inst in (x.lower() for x in f.institutions))

        def ok(p: Paper) -> bool:
            if statuses and p.status.lower() not in statuses:
                return False
            if venue and venue not in p.venue.lower():
                return False
            if lo is not None and (p.year is None or p.year < lo):
                return False
            if hi is not None and (p.year is None or p.year > hi):
                return False
            if author and not any(author in a.lower() for a in p.authors):
                return False
            if topic_ids is not None and p.topic_id not in topic_ids:
                return False
            if kp and kp.isdisjoint(concept_key(k) for k in p.keyphrases + p.given_keyphrases):
                return False
            if facet_set and not facets_ok(p):
                return False
            return aff is None or aff(p)

        return ok


def keyphrase_keys(phrase: str, acronyms: dict[str, str]) -> set[str]:
    """The :func:`paperatlas.vocab.concept_key` values a keyphrase facet matches.

    The phrase's own and, when it is an acronym the corpus defines (case-sensitive first, then case-insensitive)
    or the long form of one, the other spelling too.

    Args:
        phrase: the facet's keyphrase (whitespace collapsed).
        acronyms: the corpus's acronyms, e.g. ``{"NTK": "neural tangent kernel"}``.

    Returns:
        The concept keys.
    """
    phrase = " ".join(phrase.split())
    keys = {concept_key(phrase)}
    long = acronyms.get(phrase) or next((v for k, v in acronyms.items() if k.lower() == phrase.lower()), None)
    if long:
        keys.add(concept_key(long))
    keys.update(concept_key(k) for k in _acronyms_by_long_form(acronyms).get(concept_key(phrase), ()))
    return keys


#: ``id(acronyms) -> (acronyms, {concept key of a long form: [its acronyms]})`` for the last few acronym tables
#: (the table itself is held, so its id cannot be reused while cached)
_LONG_FORMS: dict[int, tuple[dict[str, str], dict[str, list[str]]]] = {}


def _acronyms_by_long_form(acronyms: dict[str, str]) -> dict[str, list[str]]:
    """The acronyms of ``acronyms`` grouped by the :func:`concept_key` of their long form.

    Computed once per table (a corpus of 10k papers defines ~3k acronyms: re-normalising them all cost ~10 ms per
    facet lookup).
    """
    hit = _LONG_FORMS.get(id(acronyms))
    if hit is not None and hit[0] is acronyms:
        return hit[1]
    index: dict[str, list[str]] = {}
    for k, v in acronyms.items():
        index.setdefault(concept_key(v), []).append(k)
    if len(_LONG_FORMS) >= 4:
        _LONG_FORMS.clear()
    _LONG_FORMS[id(acronyms)] = (acronyms, index)
    return index


def parse_years(spec: str) -> tuple[int | None, int | None]:
    """Parse a year filter.

    ``"2021"`` → (2021, 2021); ``"2019-2021"`` → (2019, 2021); ``"2019-"`` → (2019, None); ``"-2021"`` →
    (None, 2021); ``""`` → (None, None).

    Args:
        spec: the filter text (surrounding whitespace ignored).

    Returns:
        ``(min, max)`` inclusive, None for an open end.

    Raises:
        ValueError: with the offending text, for anything else.
    """
    spec = spec.strip()
    if not spec:
        return (None, None)
    m = re.fullmatch(r"(\d{4})?\s*(-)?\s*(\d{4})?", spec)
    if not m or not (m.group(1) or m.group(3)):
        raise ValueError(f"bad year filter {spec!r}: use 2021, 2019-2021, 2019- or -2021")
    a = int(m.group(1)) if m.group(1) else None
    b = int(m.group(3)) if m.group(3) else (None if m.group(2) else a)
    return (a, b)


