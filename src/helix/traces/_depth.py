"""Values nested too deeply to keep: found with one ``orjson.dumps``, clipped in place, never a crash.

JSON parsers read up to ~1,000 levels of nesting (orjson: 1,024), but orjson writes at most 255 and
pydantic reads a Helix JSONL line back only up to 200; Python's own recursion (``repr``, ``==``) stops
near 1,000. A hostile or broken record can therefore be parsed, then crash a conversion, or make a trace
that cannot be written, or one that is written and not read back. Readers keep values while the trace
stays under ``_WRITABLE_DEPTH`` levels and replace deeper parts by a note.
"""

from __future__ import annotations

import threading
from typing import Any

import orjson

__all__ = ["CLIP_DEPTH", "bounded", "same_items", "too_deep"]

_WRITABLE_DEPTH = 150
_ORJSON_DEPTH = 255  # orjson.dumps raises TypeError past this many levels: the probe below
CLIP_DEPTH = 100
_CLIPPED = f"[a value nested deeper than {CLIP_DEPTH} levels was dropped]"


_probe = threading.local()  # per thread: a prebuilt chain of lists the probed value is hung into


def too_deep(value: Any) -> bool:
    """Whether a trace holding ``value`` would nest past ``_WRITABLE_DEPTH`` levels (one ``orjson.dumps``)."""
    chain = getattr(_probe, "chain", None)
    if chain is None:
        innermost: list[Any] = [None]
        outer = innermost
        for _ in range(_ORJSON_DEPTH - _WRITABLE_DEPTH - 1):
            outer = [outer]
        chain = _probe.chain = (outer, innermost)
    outer, innermost = chain
    innermost[0] = value
    try:
        orjson.dumps(outer)
    except TypeError:  # too deep (or a type JSON cannot hold: then only deep parts are clipped)
        return True
    finally:
        innermost[0] = None
    return False


def bounded(value: Any) -> Any:
    """``value`` unchanged when a trace holding it can be written and read back as JSON; else with its
    parts past ``CLIP_DEPTH`` levels replaced by a note. Containers are edited in place."""
    if not isinstance(value, dict | list) or not too_deep(value):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        for key in range(len(node)) if isinstance(node, list) else list(node):
            child = node[key]
            if isinstance(child, dict | list):
                if depth + 1 >= CLIP_DEPTH:
                    node[key] = _CLIPPED
                else:
                    stack.append((child, depth + 1))
    return root[0]


def same_items(a: Any, b: Any) -> bool:
    """``a == b`` for parsed JSON, ``False`` when too deeply nested to compare (hostile input must not
    crash a read: JSON parsers accept ~1,000 levels, Python's comparison stops at its recursion limit)."""
    try:
        return bool(a == b)
    except RecursionError:
        return False
