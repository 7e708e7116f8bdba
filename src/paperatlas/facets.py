"""Facets of a paper from its listing's metadata: review rating and confidence, decision, citations, code, institution.

Readers store what a source says in :attr:`paperatlas.model.Paper.extra` under the keys of
:data:`paperatlas.model.EXTRA_KEYS` (``ratings``, ``rating_mean``, ``confidences``, ``decision``, ``citations``,
``institutions``, ...) and the raw affiliations in :attr:`~paperatlas.model.Paper.affiliations`; :func:`facets_of`
turns them into one :class:`PaperFacets`. A facet the source does not give is ``None`` (or empty): missing is never
0, is not counted in a bucket, and sorts last.

Institutions (:func:`institutions`) come from the source's own normalised names where it has them (paperlists'
``aff_unique_norm``, kept by its reader in ``extra["institutions"]``), else from the raw affiliations, one string
per author. Each name goes through :func:`normalise_institution`: footnote marks, departments, cities, countries and
company suffixes are dropped, and the spellings of one organisation are merged by our alias table
(:data:`INSTITUTION_PREFIXES`, :data:`INSTITUTION_ALIASES`), matched on :func:`institution_key` (case, accents,
punctuation, spacing, a leading "The" and "at" do not matter: ``Tel-Aviv University`` = ``Tel Aviv University``,
``Universit e de Montr eal`` = ``Université de Montréal``), and by a fuzzy match (rapidfuzz ``fuzz.ratio`` >=
:data:`FUZZY_MIN_SCORE` on keys of at least :data:`FUZZY_MIN_CHARS` characters) against the table's names only, for
misspellings (``Carnegie Melon University``). Other names are kept, cleaned: two universities are never merged by
mere similarity (``University of Washington`` and ``Washington University in St. Louis`` stay apart). The table is
ours, written from the 42,647-paper Paper Copilot paperlists corpus: from its raw affiliations alone (28,156
spellings -> 7,311 institutions) we agree with Paper Copilot's own ``aff_unique_norm`` on 91.6% of the 138k
affiliation mentions both name; most of the rest are choices of level (DeepMind or Google, Mila or Université de
Montréal, an institute of the Chinese Academy of Sciences or the Academy).
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process

from .model import Paper

#: Sort keys of ``search --sort`` and the web app: ``relevance`` keeps the search order.
SORT_KEYS = ("relevance", "rating", "citations", "year")

#: The alias table: ``data/institutions.json`` in the package (ours, written from the spellings of the paperlists
#: corpus; its ``_about`` says how each part is matched).
INSTITUTIONS_FILE = Path(__file__).parent / "data" / "institutions.json"
_TABLE = json.loads(INSTITUTIONS_FILE.read_text(encoding="utf-8"))
#: (pattern, institution): organisations whose units are named after them (``Google Research, London``, ``Microsoft
#: Research Asia``, ``MIT CSAIL``). The first pattern that matches the start of an affiliation or of one of its
#: comma-separated parts (case-insensitive) names the institution. DeepMind is kept apart from Google.
INSTITUTION_PREFIXES: tuple[tuple[str, str], ...] = tuple((p, n) for p, n in _TABLE["prefixes"])
#: Companies named by their first word (``NVIDIA Research``, ``Baidu Inc., Beijing``): their display names.
COMPANIES: tuple[str, ...] = tuple(_TABLE["companies"])
_PREFIXES = [(re.compile(p, re.IGNORECASE), name) for p, name in
             (*INSTITUTION_PREFIXES, *((re.escape(c) + r"\b", c) for c in COMPANIES))]
#: institution -> its other spellings, matched whole on :func:`institution_key` (and fuzzily, see the module
#: docstring). Main campuses stand for their university (``University of Michigan, Ann Arbor``); other campuses keep
#: their own name (``University of California, Irvine``, ``University of Maryland, Baltimore County``).
INSTITUTION_ALIASES: dict[str, tuple[str, ...]] = {n: tuple(a) for n, a in _TABLE["aliases"].items()}
#: A fuzzy match (misspelling) needs this rapidfuzz ``fuzz.ratio`` (0-100) ...
FUZZY_MIN_SCORE = 95.0
#: ... on a key of at least this many characters (shorter names differ by a letter: ``Ulm``/``Ulb``).
FUZZY_MIN_CHARS = 16

# Placeholders some listings put where an affiliation is unknown.
_PLACEHOLDER_RE = re.compile(r"^(?:unknown(?: institution| university| affiliation)?|(?:university |institution )?"
                             r"(?:affiliation )?not (?:specified|available|given)|independent(?: researcher)?|none|"
                             r"n/?a|null|anonymous(?: institution)?|personal|self|-+|\?+)$", re.IGNORECASE)
# Footnote marks and stray numbering: "KAIST1", "1Xinjiang ...", "Google Research‡", "... Haifa 32000".
_MARKS_RE = re.compile(r"[†‡⋆∗*§¶‖#]+|(?<=[^\W\d_])\d$|^\d(?=[^\W\d_])|^\s*\d+\s+|\s+\d+\s*$")
_COMPANY_SUFFIX_RE = re.compile(r"(?:[,\s]+(?:inc|ltd|llc|plc|gmbh|corp|corporation|co|limited|s\.a|ag|pte)\.?)+$",
                                re.IGNORECASE)
_DEPARTMENT_RE = re.compile(r"^(?:the )?(?:dep(?:t|artment|artament)?s?\b|school of|faculty|college of|division|"
                            r"cent(?:er|re) for|lab(?:oratory)?\b|graduate school|program|group|key lab|state key|"
                            r"national key|national engineering|ministry of|engineering research|institute for|"
                            r"institute of (?!technology)|research (?:center|centre|institute|group)|unit\b)",
                            re.IGNORECASE)
# A part that is only ever a sub-unit of an institution (an affiliation of nothing else names no institution).
_SUBUNIT_RE = re.compile(r"^(?:the )?(?:dep(?:t|artment|artament)?s?\b|school of|faculty|college of|division|"
                         r"graduate school|program|group\b|unit\b)", re.IGNORECASE)
_STRONG_RE = re.compile(r"universit|universidad|college\b(?! of)|[ée]cole|polytechn|politecnico|academy|institute "
                        r"of technology|\b(?:inc|ltd|llc|gmbh|corporation|limited)\b", re.IGNORECASE)
_WEAK_RE = re.compile(r"institut|lab|research|cent(?:er|re)|technolog|foundation|hospital|\bai\b|council|agency",
                      re.IGNORECASE)
_PLACE_RE = re.compile(r"^(?:usa|u\.?s\.?a?\.?|united states(?: of america)?|uk|u\.k\.|united kingdom|england|"
                       r"(?:p\.? ?r\.? )?china|japan|(?:south |republic of )?korea|germany|france|canada|israel|"
                       r"switzerland|italy|spain|(?:the )?netherlands|singapore|australia|india|hong kong(?: sar)?|"
                       r"taiwan(?: r\.o\.c\.?)?|r\.o\.c\.?|belgium|sweden|denmark|finland|norway|austria|russia|brazil|"
                       r"(?-i:AL|AZ|CA|CO|CT|FL|GA|IL|IN|MA|MD|MI|MN|NC|NJ|NY|OH|PA|TX|VA|WA|WI)|"
                       r".*\d{4,}.*)$", re.IGNORECASE)
_GENERIC_WORDS = frozenset(
    "the of and for in at & department dept dep school faculty division college center centre lab laboratory labs "
    "group institute research unit program key state national graduate computer computing computational science "
    "sciences engineering electrical electronic electronics mechanical information vision machine learning data "
    "statistics statistical mathematics mathematical applied physics robotics systems system signal processing "
    "language technologies technology software communication communications automation control cognitive brain "
    "neuroscience medical image imaging multimedia pattern recognition intelligent intelligence artificial ai ml "
    "cs cse ece eecs ee csd mld ii comp sci tech eng operations decision analytics industrial".split())
# A university system or a name completed by the next comma-separated part: "University of California, Irvine",
# "Indian Institute of Technology, Kanpur", "Queen Mary, University of London".
_CAMPUS_RE = re.compile(r"(?:the )?(?:university of (?:california|maryland|north carolina|illinois|texas|"
                        r"massachusetts|colorado|wisconsin|michigan|hawaii|minnesota|technology)|"
                        r"(?:indian|international) institute of (?:information )?technology|"
                        r"national institute of technology|iit|iiit|nit)",
                        re.IGNORECASE)
# A trailing US state and/or postcode: "Berkeley, CA 94720", "Pittsburgh PA".
_STATE_ZIP_RE = re.compile(r"(?:\s+(?:[A-Z]{2}\s+)?\d{5}(?:-\d{4})?|\s+(?:CA|MA|NY|PA|WA|TX|IL|NJ|GA|MD|NC|WI|MI|CO|MN|"
                           r"AZ|OR|UT|CT|VA|FL|OH|IN|IA|USA))$")
_UC_RE = re.compile(r"^UC[ -](Berkeley|Los Angeles|San Diego|Irvine|Davis|Santa Barbara|Santa Cruz|Riverside|Merced|"
                    r"San Francisco)\b", re.IGNORECASE)


def institution_key(name: str) -> str:
    """The key two spellings of one institution share.

    Args:
        name: An institution name.

    Returns:
        ``name`` lower-cased, without accents, a leading "the", the word "at", spaces and punctuation, with
        ``&`` = ``and``, ``Laboratory`` = ``Lab``, ``Centre`` = ``Center``: ``"The University of Texas at Austin"``
        -> ``"universityoftexasaustin"``.
    """
    text = "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch)).lower()
    text = re.sub(r"\bat\b", " ", re.sub(r"^\W*the\s+", "", text)).replace("&", " and ")
    text = re.sub(r"\blaborator(?:y|ies)\b", lambda m: "labs" if m.group(0).endswith("ies") else "lab", text)
    return re.sub(r"[\W_]+", "", text.replace("centre", "center"))


_KNOWN: dict[str, str] = {institution_key(n): n for n in INSTITUTION_ALIASES}
_KNOWN.update({institution_key(a): n for n, spellings in INSTITUTION_ALIASES.items() for a in spellings})
_FUZZY_KEYS = [k for k in _KNOWN if len(k) >= FUZZY_MIN_CHARS]


def _prefix(text: str) -> str:
    return next((name for pattern, name in _PREFIXES if pattern.match(text)), "")


def _known(text: str) -> str:
    """The alias table's institution for ``text`` (prefix rule, exact key), else ``""``."""
    return _prefix(text) or _KNOWN.get(institution_key(text), "")


def _clean(raw: str) -> str:
    text = re.sub(r"\bA\s?\*\s?STAR\b", "A-STAR", unicodedata.normalize("NFKC", raw or ""), flags=re.IGNORECASE)
    text = re.sub(r"u00([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), text, flags=re.IGNORECASE)
    text = "".join(" " if unicodedata.category(ch)[0] == "S" and ch not in "&+" else ch for ch in text)
    # "(KAIST)", "(Guangzhou)", "Megvii Inc. (Face" are dropped; "(Sun Yat-sen University)" becomes a part.
    text = re.sub(r"\(([^()]*)\)", lambda m: f", {m.group(1)}," if len(m.group(1).split()) > 2 else " ",
                  _MARKS_RE.sub(" ", text))
    text = " ".join(re.sub(r"\([^()]*$", " ", text).split()).strip(" ,;-–—/.")
    text = _UC_RE.sub(lambda m: f"University of California, {m.group(1)},", text)
    text = re.sub(r"(?<!\w)IIT[- ](?=[A-Z][a-z])", "Indian Institute of Technology ", text)
    return re.sub(r"\bUniv\.?(?=\s)", "University", text)


def _score(part: str) -> int:
    if _PLACE_RE.match(part) or not _COMPANY_SUFFIX_RE.sub("", " " + part).strip():
        return -2
    if _DEPARTMENT_RE.match(part):
        return 0
    return 3 if _STRONG_RE.search(part) else 2 if _WEAK_RE.search(part) else 1


@functools.lru_cache(maxsize=1 << 16)
def normalise_institution(raw: str) -> str:
    """The institution one affiliation string names.

    Args:
        raw: One affiliation as a listing gives it, e.g. ``"Google Research, London"``, ``"MIT CSAIL"``,
            ``"School of Computer Science, Carnegie Mellon University"``, ``"Google Research‡"``, ``"KAIST1"``.

    Returns:
        The institution: a name of :data:`INSTITUTION_ALIASES` or :data:`INSTITUTION_PREFIXES` (``"Google"``,
        ``"MIT"``, ``"Carnegie Mellon University"``), else the part of the affiliation that names an institution
        (departments, cities, countries, postcodes, parentheses, company suffixes and a leading "The" dropped);
        ``""`` for a placeholder (``Unknown Institution``) or a department alone (``Department of Computer
        Science``).
    """
    text = _clean(raw)
    if not text or _PLACEHOLDER_RE.match(text):
        return ""
    if known := _known(text):
        return known
    parts = [_STATE_ZIP_RE.sub("", p).strip(" .") for p in re.split(r",|\s+[-–—/]\s+|/|\s+[–—]", text)]
    parts = [p for p in parts if p]
    i = 0
    while i + 1 < len(parts):  # "University of California, Irvine", "University of Michigan, Ann Arbor"
        nxt = parts[i + 1]
        if _CAMPUS_RE.fullmatch(parts[i]) and _score(nxt) == 1 and len(nxt.split()) <= 3:
            parts[i:i + 2] = [f"{parts[i]}, {nxt}" if parts[i].lower().startswith(("univ", "the")) else
                              f"{parts[i]} {nxt}"]
        elif re.fullmatch(r"university of london", nxt, re.IGNORECASE) and _score(parts[i]) == 1:
            parts[i:i + 2] = [f"{parts[i]}, {nxt}"]
        i += 1
    # The part naming an institution: a known one or the most institution-like, the first on a tie.
    scored = [(3 if (known := _known(part)) else _score(part), -i, part, known) for i, part in enumerate(parts)]
    floor = 0  # after a generic lab's name, a city ("Computer Vision Lab, Zurich") is no institution
    for score, _, best, known in sorted(scored, reverse=True):
        if known or score < floor:
            return known
        best = _COMPANY_SUFFIX_RE.sub("", re.sub(r"^the\s+", "", best, flags=re.IGNORECASE)).strip(" ,")
        if not best or set(re.findall(r"[\w&]+", best.lower())) <= _GENERIC_WORDS or (score == 0 and
                                                                                       _SUBUNIT_RE.match(best)):
            floor = max(floor, min(score, 2))
            continue  # a department or lab with a generic name: the next part may name the institution
        key = institution_key(best)
        if key in _KNOWN:
            return _KNOWN[key]
        if len(key) >= FUZZY_MIN_CHARS:
            match = process.extractOne(key, _FUZZY_KEYS, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN_SCORE)
            if match:
                return _KNOWN[match[0]]
        return best
    return ""


def _institution_like(piece: str) -> bool:
    words = re.findall(r"[\w&]+", piece.lower())
    return bool(_known(piece) or len(words) >= 2 and (_STRONG_RE.search(piece) or _WEAK_RE.search(piece))
                and not _DEPARTMENT_RE.match(piece) and words[0] not in _GENERIC_WORDS)


def split_affiliation(raw: str) -> list[str]:
    """One author's affiliation string cut into its institutions' strings.

    Args:
        raw: E.g. ``"University of Amsterdam + CIFAR"`` (paperlists joins an author's several affiliations with
            ``+``, not in ``Face++``), ``"MIT; Google"``, ``"University of Toronto and Vector Institute"`` (cut at
            ``and``, ``&``, ``/`` only when every piece names an institution of two or more words and none is a
            department: ``University of Science and Technology of China`` stays whole).

    Returns:
        The pieces, stripped, empty ones left out.
    """
    out = []
    for piece in re.split(r"(?<!\+)\+(?!\+)|;", raw or ""):
        piece = piece.strip()
        if "," not in piece:
            for sep in (r"\s+&\s+", r"\s*/\s*", r"\s+and\s+"):
                pieces = [x.strip() for x in re.split(sep, piece)]
                if len(pieces) > 1 and all(_institution_like(x) for x in pieces):
                    out.extend(pieces)
                    break
            else:
                out.append(piece)
        elif piece:
            out.append(piece)
    return [x for x in out if x]


def _given_institutions(p: Paper) -> list[str]:
    given = p.extra.get("institutions")
    return given if isinstance(given, list) and all(isinstance(x, str) for x in given) else []


def _raw_institutions(p: Paper) -> list[str]:
    return _given_institutions(p) or [x for aff in p.affiliations for x in split_affiliation(aff)]


def institutions(p: Paper) -> tuple[str, ...]:
    """The paper's institutions, normalised (:func:`normalise_institution`) and de-duplicated, in author order.

    Args:
        p: The paper: its ``extra["institutions"]`` (the source's own normalised names) when given, else its
            :attr:`~paperatlas.model.Paper.affiliations` (one string per author; ``+`` or ``;`` between an
            author's several affiliations).

    Returns:
        E.g. ``("UC Berkeley", "Google")``; empty when the listing gives no affiliations.
    """
    out: dict[str, str] = {}
    given = _given_institutions(p)
    for raw in given or _raw_institutions(p):
        # A source's own institution name is kept even when it reads like a department ("Computer Vision Center").
        name = normalise_institution(raw) or (given and not _PLACEHOLDER_RE.match(_clean(raw)) and _clean(raw))
        if name:
            out.setdefault(institution_key(name), name)
    return tuple(out.values())


def _fold(text: str) -> str:
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return " ".join(text.lower().split())


def affiliation_matcher(text: str,
                        institutions_of: Callable[[Paper], Sequence[str]] | None = None) -> Callable[[Paper], bool]:
    """A predicate: whether a paper is from the institution ``text`` names.

    A paper matches when one of its institutions is ``text``'s institution (``Google Brain``, ``google`` ->
    ``Google``; compared by :func:`institution_key`), or when ``text`` occurs as whole words in one of its
    institutions or raw affiliations, ignoring case and accents (``stanford`` matches ``Stanford University``;
    ``mit`` does not match ``Mitsubishi``).

    Args:
        text: An institution or part of an affiliation; blank matches every paper.
        institutions_of: ``paper -> its normalised institutions`` (:func:`institutions`, the default, or a cache
            of it).

    Returns:
        ``Paper -> bool``; a paper without affiliations never matches a non-blank ``text``.
    """
    query = " ".join(text.split())
    if not query:
        return lambda p: True
    key = institution_key(normalise_institution(query) or query)
    words = re.compile(r"(?<!\w)" + re.escape(_fold(query)) + r"(?!\w)")

    names_of = institutions_of or institutions

    def match(p: Paper) -> bool:
        names = names_of(p)
        if any(institution_key(n) == key for n in names):
            return True
        return any(words.search(_fold(x)) for x in (*names, *p.affiliations, *_raw_institutions(p)) if x)

    return match


@dataclass(frozen=True)
class PaperFacets:
    """One paper's facets; ``None`` (or empty) where the source does not say.

    Attributes:
        rating_mean: Mean review rating, on the venue's scale (e.g. 1-10 for ICLR).
        rating_spread: Population standard deviation of the review ratings, same scale (None with fewer than 2).
        n_reviews: Number of review ratings.
        confidence_mean: Mean reviewer confidence, on the venue's scale (e.g. 1-5).
        decision: The decision as the venue words it, e.g. ``"Accept (Oral)"``.
        status: :attr:`~paperatlas.model.Paper.status`, e.g. ``"Oral"``.
        citations: Citation count.
        has_code: Whether the paper has a code link.
        institutions: Normalised institutions (:func:`institutions`).
    """

    rating_mean: float | None = None
    rating_spread: float | None = None
    n_reviews: int | None = None
    confidence_mean: float | None = None
    decision: str | None = None
    status: str | None = None
    citations: int | None = None
    has_code: bool = False
    institutions: tuple[str, ...] = ()


def _numbers(value) -> list[float]:
    if not isinstance(value, list):
        return []
    out = []
    for v in value:
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
            out.append(float(v))
    return out


def _number(value) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def facets_of(p: Paper) -> PaperFacets:
    """The facets of one paper (see the module docstring).

    Args:
        p: The paper.

    Returns:
        Its :class:`PaperFacets`. Ratings come from ``extra["ratings"]`` (mean and population standard deviation),
        else ``extra["rating_mean"]``; citations from ``extra["citations"]``, else ``extra["gs_citation"]``
        (negative counts are missing).
    """
    ratings = _numbers(p.extra.get("ratings"))
    confidences = _numbers(p.extra.get("confidences"))
    mean = sum(ratings) / len(ratings) if ratings else _number(p.extra.get("rating_mean"))
    spread = (math.sqrt(sum((r - mean) ** 2 for r in ratings) / len(ratings)) if len(ratings) >= 2 and
              mean is not None else None)
    cites = _number(p.extra.get("citations", p.extra.get("gs_citation")))
    decision = p.extra.get("decision")
    return PaperFacets(
        rating_mean=round(mean, 2) if mean is not None else None,
        rating_spread=round(spread, 2) if spread is not None else None,
        n_reviews=len(ratings) or None,
        confidence_mean=round(sum(confidences) / len(confidences), 2) if confidences else None,
        decision=decision if isinstance(decision, str) and decision else None,
        status=p.status or None,
        citations=int(cites) if cites is not None and cites >= 0 else None,
        has_code=any(link.kind == "code" and link.url for link in p.links),
        institutions=institutions(p))


#: Rating buckets (lower bound inclusive) and citation buckets shown as facets.
RATING_BUCKETS = ((8.0, "8+"), (6.0, "6-8"), (4.0, "4-6"), (float("-inf"), "<4"))
CITATION_BUCKETS = ((1000, "1000+"), (100, "100-999"), (10, "10-99"), (1, "1-9"), (0, "0"))


def _bucket(value: float, buckets) -> str:
    return next(label for lo, label in buckets if value >= lo)


def facet_counts(papers: Iterable[Paper], top_institutions: int = 30) -> dict[str, list[tuple[str, int]]]:
    """Counts of each facet value over ``papers`` (e.g. the current search results), for facet lists.

    Args:
        papers: The papers.
        top_institutions: How many institutions to list (the most frequent).

    Returns:
        ``{"status": [("Poster", 693), ...], "decision": [...], "institution": [...], "has_code": [("yes", n),
        ("no", m)], "rating": [("8+", n), ("6-8", ...), ...], "citations": [("1000+", n), ...]}``, most frequent
        first (buckets in scale order); a facet no paper has is left out, and a paper without a value is not
        counted in that facet.
    """
    c: dict[str, Counter] = {k: Counter() for k in ("status", "decision", "institution", "has_code", "rating",
                                                      "citations")}
    spellings: dict[str, Counter] = defaultdict(Counter)  # institution key -> its spellings
    for p in papers:
        f = facets_of(p)
        if f.status:
            c["status"][f.status] += 1
        if f.decision:
            c["decision"][f.decision] += 1
        for name in f.institutions:
            spellings[institution_key(name)][name] += 1
        c["has_code"]["yes" if f.has_code else "no"] += 1
        if f.rating_mean is not None:
            c["rating"][_bucket(f.rating_mean, RATING_BUCKETS)] += 1
        if f.citations is not None:
            c["citations"][_bucket(f.citations, CITATION_BUCKETS)] += 1
    for names in spellings.values():  # one institution, shown in its most frequent spelling
        c["institution"][min(names, key=lambda n: (-names[n], n))] = sum(names.values())
    out: dict[str, list[tuple[str, int]]] = {}
    for key, counter in c.items():
        if not counter or (key == "has_code" and not counter.get("yes")):
            continue
        if key == "rating":
            out[key] = [(label, counter[label]) for _, label in RATING_BUCKETS if counter[label]]
        elif key == "citations":
            out[key] = [(label, counter[label]) for _, label in CITATION_BUCKETS if counter[label]]
        else:
            items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
            out[key] = items[:top_institutions] if key == "institution" else items
    return out


def sort_papers(papers: Iterable[Paper], key: str) -> list[Paper]:
    """Papers in the order of a sort key, highest first; papers without the value last, in their given order.

    Args:
        papers: The papers (e.g. search results in relevance order).
        key: One of :data:`SORT_KEYS`.

    Returns:
        The papers reordered (``relevance``: unchanged).

    Raises:
        ValueError: ``key`` is not in :data:`SORT_KEYS`.
    """
    papers = list(papers)
    if key not in SORT_KEYS:
        raise ValueError(f"unknown sort key {key!r}; one of: {', '.join(SORT_KEYS)}")
    if key == "relevance":
        return papers

    def value(p: Paper) -> float:
        if key == "year":
            return float(p.year) if p.year is not None else math.nan
        f = facets_of(p)
        v = f.rating_mean if key == "rating" else f.citations
        return float(v) if v is not None else math.nan

    values = np.fromiter((value(p) for p in papers), np.float64, len(papers))
    return [papers[i] for i in sort_order(values).tolist()]


def sort_order(values: np.ndarray) -> np.ndarray:
    """The order of a sort: highest value first, ties in their given order, NaN (no value) last.

    The one ordering of every sort by a facet (:func:`sort_papers`, and the web app's sort on its table of cached
    facets, :meth:`paperatlas.web.facet_table.FacetTable.order_by`).

    Args:
        values: ``(m,)`` float, each item's value, NaN when it has none.

    Returns:
        ``(m,)`` int64 indices into ``values``.
    """
    values = np.asarray(values, dtype=np.float64)
    missing = np.isnan(values)
    return np.lexsort((np.arange(len(values)), -np.where(missing, 0.0, values), missing))
