"""What the readers share: the venue table and reading a venue + year off a listing's file name."""

from __future__ import annotations

import re
from pathlib import Path

#: Venue acronyms recognised in file names (lower-case) -> their display spelling when it is not the acronym in
#: capitals (``nips`` and ``neurips`` are both NeurIPS; ``corl`` is CoRL). Any acronym not in :data:`VENUE_NAMES`
#: is shown in capitals (``iclr`` -> ``ICLR``).
VENUES = ("iclr", "neurips", "nips", "icml", "cvpr", "iccv", "eccv", "wacv", "acl", "emnlp", "naacl", "eacl",
          "coling", "aaai", "ijcai", "kdd", "www", "sigir", "colm", "corl", "uai", "aistats", "colt", "tmlr",
          "interspeech", "icassp", "miccai", "icra", "iros", "rss")
VENUE_NAMES = {"neurips": "NeurIPS", "nips": "NeurIPS", "corl": "CoRL", "interspeech": "Interspeech"}

# A known venue and a 19xx/20xx year anywhere in the name: "iclr2021.md", "NeurIPS_2020.txt", "cvpr-2019";
# not inside a longer word ("xiclr2021") or a longer number ("iclr20211").
_KNOWN_VENUE_RE = re.compile(r"(?<![a-z])(" + "|".join(VENUES) + r")[-_ ]?((?:19|20)\d\d)(?!\d)", re.IGNORECASE)
# The paperlists naming "<letters><year>...", any letters: "siggraph2023.json" -> SIGGRAPH 2023.
_LEADING_VENUE_RE = re.compile(r"([a-z]+)[-_]?(\d{4})")


def venue_name(acronym: str) -> str:
    """The display spelling of a venue acronym.

    Args:
        acronym: a venue acronym in any case, e.g. ``"nips"``, ``"CoRL"``, ``"iclr"``.

    Returns:
        The spelling of :data:`VENUE_NAMES` (``"NeurIPS"``, ``"CoRL"``), else the acronym in capitals (``"ICLR"``).
    """
    key = acronym.lower()
    return VENUE_NAMES.get(key, key.upper())


def venue_from_filename(path: str, any_venue: bool = False) -> tuple[str, int | None]:
    """Venue and year stated by a listing's file name.

    A known venue (:data:`VENUES`, any case) followed by a year, optionally after ``-``, ``_`` or a space, anywhere
    in the name: ``.../iclr2021_sample.md`` -> ``("ICLR 2021", 2021)``, ``NeurIPS-2020.md`` ->
    ``("NeurIPS 2020", 2020)``, ``nips1987.json.gz`` -> ``("NeurIPS 1987", 1987)``.

    Args:
        path: the file's path; only its name is looked at.
        any_venue: when no known venue is found, also accept a name that *starts* with letters and four digits
            (Paper Copilot's ``<venue><year>.json`` naming, for venues not in the table: ``siggraph2023.json`` ->
            ``("SIGGRAPH 2023", 2023)``). The JSON reader sets it; the Markdown reader does not, so
            ``papers2019.md`` states no venue.

    Returns:
        ``(venue, year)`` with the venue spelled by :func:`venue_name`; ``("", None)`` when the name states neither.
    """
    name = Path(path).name
    m = _KNOWN_VENUE_RE.search(name)
    if m is None and any_venue:
        m = _LEADING_VENUE_RE.match(name.lower())
    if m is None:
        return "", None
    return f"{venue_name(m.group(1))} {m.group(2)}", int(m.group(2))
