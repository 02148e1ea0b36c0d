"""Strict JSON reading for judge answers and verdict files, shared by every packet kind.

:func:`decode_strict` reads a whole document (an agent runtime's verdict file): duplicate keys and
``NaN``/``Infinity`` are errors, and the error names the line. :func:`find_answer_object` finds the
answer object in a provider's reply: bare JSON, a fenced code block, or an object inside prose that
holds the kind's marker key. Both raise :class:`~helix.VerdictFileError` naming the source and the
fix. The trajectory verdict parser (``_parse.py``) applies the same rules and could be expressed
with these two functions.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .._exceptions import VerdictFileError

__all__ = ["decode_strict", "find_answer_object", "read_verdict_document"]

_FENCED = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```", re.DOTALL)


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(key)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKeyError(k)
        out[k] = v
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_no_constant)


def _duplicate(exc: _DuplicateKeyError, source: str) -> VerdictFileError:
    return VerdictFileError(f"key {exc.key!r} appears twice in one object; write each key once", path=source)


def decode_strict(text: str, source: str) -> Any:
    """The one JSON document in ``text`` (duplicate keys and non-finite numbers are errors)."""
    try:
        return _DECODER.decode(text)
    except _DuplicateKeyError as exc:
        raise _duplicate(exc, source) from exc
    except ValueError as exc:
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        raise VerdictFileError(
            f"not valid JSON ({exc}); write one JSON object", path=source, line=line
        ) from exc


def find_answer_object(text: str, source: str, *, marker: str, shape: str) -> dict[str, Any]:
    """The answer object in a provider reply: bare, fenced, or in prose (then it must hold ``marker``).

    ``shape`` is shown in the error when no object is found (e.g. ``{"determination": {...}}``).
    """
    stripped = text.strip()
    for candidate in [stripped, *(m.group(1).strip() for m in _FENCED.finditer(text))]:
        try:
            obj = _DECODER.decode(candidate)
        except _DuplicateKeyError as exc:
            raise _duplicate(exc, source) from exc
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = _DECODER.raw_decode(text, match.start())
        except _DuplicateKeyError as exc:
            raise _duplicate(exc, source) from exc
        except ValueError:
            continue
        if isinstance(obj, dict) and marker in obj:
            return obj
    raise VerdictFileError(
        f"no JSON object with {marker!r} in the answer (it begins {stripped[:120]!r}); answer with one "
        f"JSON object {shape}",
        path=source,
    )


def read_verdict_document(path: str | Path, *, remedy: str) -> dict[str, Any]:
    """The JSON object of a verdict file an agent runtime wrote (``remedy``: how to get a missing one)."""
    source = str(path)
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError as exc:
        raise VerdictFileError(f"verdict file does not exist; {remedy}", path=source) from exc
    except UnicodeDecodeError as exc:
        raise VerdictFileError(
            f"not UTF-8 text ({exc}); write the verdict as UTF-8 JSON", path=source
        ) from exc
    obj = decode_strict(text, source)
    if not isinstance(obj, dict):
        raise VerdictFileError(f"a verdict must be a JSON object, got {type(obj).__name__}", path=source)
    return obj
