"""Tolerant coercion of parsed JSON values, shared by every reader.

Exports are loosely typed (a cost as a decimal string, counts as floats, ids as integers), so each field
goes through a coercion that returns ``None`` rather than raising: one odd field must not lose the
record. A record that cannot become a trace at all raises :class:`BadRecord`, which the reader counts as
a skip with its reason.
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Mapping
from typing import Any

import orjson

from ._report import SkipReason

__all__ = [
    "BadRecord",
    "count",
    "decode_io",
    "decode_json",
    "integer",
    "kind_of",
    "number",
    "shown",
    "text_or_none",
    "usage_from",
    "usage_with_total",
]


class BadRecord(Exception):
    """A record that cannot become a trace; ``detail`` says which field and why."""

    def __init__(self, detail: str, reason: SkipReason = "invalid-record") -> None:
        self.detail = detail
        self.reason: SkipReason = reason
        super().__init__(detail)


_SHOWN = reprlib.Repr()
_SHOWN.maxlevel = 3  # a hostile value may nest 1,000 levels: repr() would exhaust the recursion limit
_SHOWN.maxstring = _SHOWN.maxother = 80
_SHOWN.maxlist = _SHOWN.maxdict = 4


def shown(value: Any) -> str:
    """A source value as messages show it: its repr, shortened and safe at any nesting depth."""
    return _SHOWN.repr(value)


def kind_of(value: Any) -> str:
    """A JSON-ish name for the type of ``value`` (for messages)."""
    return "null" if value is None else type(value).__name__


def text_or_none(value: Any) -> str | None:
    """A string field: strings as they are, integers as text, anything else ``None``."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


_MAX_NUMBER_CHARS = 64
_DIGITS = re.compile(r"-?[0-9]{1,40}")


def number(value: Any) -> float | None:
    """A finite float from a JSON number or a numeric string (``"0.000275"``); ``None`` otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            result = float(value)
        except OverflowError:
            return None
    elif isinstance(value, str) and len(value) < _MAX_NUMBER_CHARS:
        try:
            result = float(value)
        except ValueError:
            return None
    else:
        return None
    return result if math.isfinite(result) else None


def integer(value: Any) -> int | None:
    """A whole number: an int as it is, an integral float, or a string of one (``"42"``, ``"42.0"``).

    Digit strings convert exactly (an OTLP int64 such as ``"9007199254740993"`` keeps every digit).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        return int(value)
    found = number(value)
    return int(found) if found is not None and found.is_integer() else None


def count(value: Any) -> int | None:
    """A token count: a non-negative whole number (see :func:`integer`) below 2**63, else ``None``."""
    found = integer(value)
    return found if found is not None and 0 <= found < 2**63 else None


def usage_from(raw: Any, keys: Mapping[str, tuple[str, ...]]) -> dict[str, int] | None:
    """Token usage from ``raw`` given, per canonical :class:`Usage` field, the source keys to try in order."""
    if not isinstance(raw, dict):
        return None
    usage: dict[str, int] = {}
    for field, candidates in keys.items():
        for key in candidates:
            found = count(raw.get(key))
            if found is not None:
                usage[field] = found
                break
    return usage or None


def usage_with_total(usage: dict[str, int | None]) -> dict[str, int | None] | None:
    """``usage`` with ``total_tokens`` filled in from input + output when the source gave only those;
    ``None`` when it holds no count at all."""
    if usage.get("total_tokens") is None:
        given_in, given_out = usage.get("input_tokens"), usage.get("output_tokens")
        if given_in is not None and given_out is not None:
            usage["total_tokens"] = given_in + given_out
    return usage if any(v is not None for v in usage.values()) else None


def decode_json(value: Any) -> Any:
    """``value`` parsed when it is a string holding a JSON object or array; otherwise unchanged."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def decode_io(value: Any) -> Any:
    """Exported input/output text decoded: a JSON object, array or string literal (``'"hi"'``) is parsed."""
    if isinstance(value, str) and value[:1] == '"':
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return decode_json(value)
