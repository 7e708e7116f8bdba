"""The per-value validators of :mod:`paperatlas.store.check`: the type of a scalar cell, and JSON decoded safely.

Each validator takes a stored value and returns it (decoded, for JSON) or raises :class:`Bad` saying what is wrong
with it. JSON is decoded without deep recursion: its nesting is counted first
(:func:`paperatlas.limits.json_depth`, at most :data:`paperatlas.limits.MAX_JSON_DEPTH` levels, the limit of every
way in; an atlas writes 2 at most), and NaN, Infinity and numbers too large for a float are refused.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

from ..limits import MAX_JSON_DEPTH, json_depth

#: Largest absolute value of ``papers.year``.
MAX_YEAR = 9999

class Bad(ValueError):
    """A value a validator refuses; the message says what is wrong with it (``text 'x', not an integer``)."""


# ----------------------------------------------------------------------------------------------------- values
def _show(value: object) -> str:
    """A short description of a stored value for a message: its SQLite type and the start of it."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"a BLOB of {len(value)} bytes"
    if isinstance(value, str):
        return f"text {value[:24]!r}{'…' if len(value) > 24 else ''}"
    if isinstance(value, float):
        return f"the real {value!r}"
    return f"the {type(value).__name__} {value!r}"[:60]


def text(value: object) -> str:
    """A required text column.

    Raises:
        Bad: ``value`` is not text (NULL, a number, a BLOB).
    """
    if type(value) is not str:
        raise Bad(f"{_show(value)}, not text")
    return value


def opt_text(value: object) -> str | None:
    """A text column that may be NULL.

    Raises:
        Bad: ``value`` is a number or a BLOB.
    """
    if value is not None and type(value) is not str:
        raise Bad(f"{_show(value)}, not text")
    return value


def nonempty_text(value: object) -> str:
    """A required, non-empty text column (an id).

    Raises:
        Bad: ``value`` is not text, or is empty.
    """
    if type(value) is not str or not value:
        raise Bad(f"{_show(value)}, not an id")
    return value


def integer(value: object) -> int:
    """A required integer column.

    Raises:
        Bad: ``value`` is not an integer.
    """
    if type(value) is not int:
        raise Bad(f"{_show(value)}, not an integer")
    return value


def opt_integer(value: object) -> int | None:
    """An integer column that may be NULL.

    Raises:
        Bad: ``value`` is text, a real or a BLOB.
    """
    if value is not None and type(value) is not int:
        raise Bad(f"{_show(value)}, not an integer")
    return value


def year(value: object) -> int | None:
    """``papers.year``: NULL or an integer of at most 4 digits.

    Raises:
        Bad: ``value`` is not an integer, or its absolute value exceeds :data:`MAX_YEAR`.
    """
    value = opt_integer(value)
    if value is not None and abs(value) > MAX_YEAR:
        raise Bad(f"{value}, not a year")
    return value


def rating(value: object) -> int:
    """``marks.rating``: -1, 0 or +1.

    Raises:
        Bad: ``value`` is another value.
    """
    if type(value) is not int or value not in (-1, 0, 1):
        raise Bad(f"{_show(value)}, not -1, 0 or 1")
    return value


def opt_real(value: object) -> float | None:
    """A real column that may be NULL: a finite number.

    Raises:
        Bad: ``value`` is text, a BLOB, or infinite.
    """
    if value is None:
        return None
    if type(value) not in (float, int):
        raise Bad(f"{_show(value)}, not a number")
    if not math.isfinite(value):
        raise Bad(f"{_show(value)}, not a finite number")
    return value


def blob(value: object) -> bytes:
    """A required BLOB column (``models.blob``).

    Raises:
        Bad: ``value`` is not a BLOB.
    """
    if type(value) is not bytes:
        raise Bad(f"{_show(value)}, not a BLOB")
    return value


def anything(value: object) -> object:
    """A column whose value is not read as a type (kept as it is)."""
    return value


# ------------------------------------------------------------------------------------------------------- JSON
_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_constant(name: str) -> float:
    raise Bad(f"JSON with {name}, not a finite number")


def _finite(literal: str) -> float:
    x = float(literal)
    if not math.isfinite(x):
        raise Bad(f"JSON with the number {literal[:24]}, too large to be finite")
    return x


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)


def decode_json(value: object) -> object:
    r"""Decode a JSON column's text without deep recursion: nested at most :data:`MAX_JSON_DEPTH`, numbers finite.

    Args:
        value: The stored value.

    Returns:
        The decoded value.

    Raises:
        Bad: ``value`` is not text, not JSON, nested deeper than :data:`MAX_JSON_DEPTH`, holds NaN, Infinity or a
            number too large for a float, or a lone surrogate (``"\\ud800"``, which no file can hold).
    """
    if type(value) is not str:
        raise Bad(f"{_show(value)}, not JSON text")
    if value.count("[") + value.count("{") > MAX_JSON_DEPTH and json_depth(value) > MAX_JSON_DEPTH:
        raise Bad(f"JSON nested deeper than {MAX_JSON_DEPTH} levels ({len(value)} characters)")
    try:
        out = _DECODER.decode(value)
    except Bad:
        raise
    except RecursionError:  # cannot happen after the depth check; never let it out
        raise Bad("JSON nested too deep") from None
    except ValueError as e:  # not JSON; an integer of more than 4300 digits
        raise Bad(f"bad JSON ({str(e)[:60]})") from None
    if "\\u" in value and _has_surrogate(out):
        raise Bad("JSON with a lone surrogate (\\ud800-\\udfff), which is not text")
    return out


def _has_surrogate(value: object) -> bool:
    """Whether a decoded JSON value holds a lone surrogate in a string (depth is bounded: recursion is fine)."""
    if isinstance(value, str):
        return bool(_SURROGATE.search(value))
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


def _kind(value: object) -> str:
    return {list: "a list", dict: "an object", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def json_list(item: Callable[[object], object], what: str) -> Callable[[object], list]:
    """A validator of a JSON column holding a list whose items ``item`` accepts (NULL or ``""``: empty).

    Args:
        item: Validates one item (raises :class:`Bad`).
        what: The items, for messages (``"strings"``).

    Returns:
        ``value -> list``.
    """

    def validate(value: object) -> list:
        if value is None or value == "":
            return []
        out = decode_json(value)
        if type(out) is not list:
            raise Bad(f"JSON {_kind(out)}, not a list of {what}")
        for i, x in enumerate(out):
            try:
                item(x)
            except Bad as e:
                raise Bad(f"item {i} is {e}") from None
        return out

    validate.__doc__ = f"A JSON list of {what} (NULL or empty text: an empty list)."
    return validate


def _json_str(x: object) -> str:
    if type(x) is not str:
        raise Bad(f"JSON {_kind(x)}, not a string")
    return x


def _json_int(x: object) -> int:
    if type(x) is not int:
        raise Bad(f"JSON {_kind(x)}, not an integer")
    return x


def _json_number(x: object) -> float:
    if type(x) not in (int, float):
        raise Bad(f"JSON {_kind(x)}, not a number")
    return x


def _record(fields: dict[str, Callable[[object], object]], required: tuple[str, ...]) -> Callable[[object], dict]:
    """An item that is an object with only ``fields`` (each validated), ``required`` among them."""

    def validate(x: object) -> dict:
        if type(x) is not dict:
            raise Bad(f"JSON {_kind(x)}, not an object")
        for k, v in x.items():
            check = fields.get(k)
            if check is None:
                raise Bad(f"an object with the unknown key {k[:24]!r}")
            try:
                check(v)
            except Bad as e:
                raise Bad(f"an object whose {k!r} is {e}") from None
        missing = [k for k in required if k not in x]
        if missing:
            raise Bad(f"an object without {', '.join(map(repr, missing))}")
        return x

    return validate


def _opt(check: Callable[[object], object]) -> Callable[[object], object]:
    return lambda x: None if x is None else check(x)


_LINK = _record({"url": _json_str, "kind": _json_str, "label": _json_str}, ("url",))
_SOURCE = _record({"format": _json_str, "path": _json_str, "line": _opt(_json_int), "record": _opt(_json_int),
                   "section": _json_str, "year_heading": _json_str, "native_id": _json_str}, ("format", "path"))
#: Keys of ``papers.extra`` that pages show as text (:data:`paperatlas.model.EXTRA_KEYS`); the numbers there are
#: read leniently (:mod:`paperatlas.facets`).
_EXTRA_TEXT = ("decision", "doi", "arxiv_id", "openreview_id", "primary_area", "session", "starts_at", "ends_at",
               "timezone", "location", "poster")


def json_object(value: object) -> dict:
    """A JSON column holding an object (NULL or ``""``: empty), e.g. ``papers.extra``.

    The keys of :data:`paperatlas.model.EXTRA_KEYS` that are text must be strings, ``institutions`` a list of
    strings.

    Raises:
        Bad: Not JSON (see :func:`decode_json`), not an object, or a known key of the wrong type.
    """
    if value is None or value == "":
        return {}
    out = decode_json(value)
    if type(out) is not dict:
        raise Bad(f"JSON {_kind(out)}, not an object")
    for k in _EXTRA_TEXT:
        if k in out and out[k] is not None and type(out[k]) is not str:
            raise Bad(f"an object whose {k!r} is JSON {_kind(out[k])}, not a string")
    if "institutions" in out and out["institutions"] is not None:
        json_list(_json_str, "strings")(json.dumps(out["institutions"]))
    return out


def any_json(value: object) -> object:
    """A JSON column of any shape (``meta.value`` of a key this code does not know).

    Raises:
        Bad: Not JSON (see :func:`decode_json`).
    """
    return decode_json(value)


_STRINGS = json_list(_json_str, "strings")


def _meta_typed(check: Callable[[object], object], what: str) -> Callable[[object], object]:
    def validate(value: object) -> object:
        out = decode_json(value)
        try:
            check(out)
        except Bad:
            raise Bad(f"JSON {_kind(out)}, not {what}") from None
        return out

    return validate


def _str_map(x: object) -> dict:
    if type(x) is not dict or any(type(v) is not str for v in x.values()):
        raise Bad("not an object of strings")
    return x


def _str_list(x: object) -> list:
    if type(x) is not list or any(type(v) is not str for v in x):
        raise Bad("not a list of strings")
    return x


#: ``meta`` key -> validator of its value (others: :func:`any_json`).
META = {"schema_version": _meta_typed(_json_int, "an integer"), "sources": _meta_typed(_str_list, "a list of strings"),
        "embed_model": _meta_typed(_json_str, "a string"), "layout_method": _meta_typed(_json_str, "a string"),
        "built_at": _meta_typed(_json_str, "a string"), "n_papers": _meta_typed(_json_int, "an integer"),
        "acronyms": _meta_typed(_str_map, "an object of strings")}


def meta_value(key: object, value: object) -> object:
    """The decoded value of a ``meta`` row.

    Raises:
        Bad: ``value`` is not JSON (:func:`decode_json`), or not of the type a known key has.
    """
    return META.get(key, any_json)(value)


def override_value(field_: object, value: object) -> object:
    """The decoded value of an ``overrides`` row: a string for ``tldr``, a list of strings for ``keyphrases``.

    Raises:
        Bad: Not JSON, or not of the field's type.
    """
    out = decode_json(value)
    if field_ == "tldr" and type(out) is not str:
        raise Bad(f"JSON {_kind(out)}, not the string a TL;DR is")
    if field_ == "keyphrases":
        _STRINGS(value)
    return out


def listings(value: object) -> list:
    """``builds.listings``: a JSON list of strings.

    Raises:
        Bad: Not JSON, or not a list of strings.
    """
    return _STRINGS(value)


