"""Masking for byte-identity: replace what differs between two runs over the same inputs.

Run ids (UUID-like values and ``run-...`` ids), ISO-8601 timestamps and absolute filesystem paths
(POSIX, home-relative ``~/``, ``file://`` URIs and Windows drive paths) are replaced by fixed
placeholders wherever they occur inside string values. Dict keys are structure and are kept as is.
Masking is for comparing and publishing artifacts; it is not a security boundary.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from pydantic import BaseModel

from ._scorecard import Scorecard

__all__ = [
    "MASK_PATH",
    "MASK_RUN_ID",
    "MASK_TIMESTAMP",
    "mask_text",
    "mask_value",
    "masked_scorecard_json",
]

MASK_PATH = "<abs-path>"
MASK_TIMESTAMP = "<timestamp>"
MASK_RUN_ID = "<run-id>"

_PATH_CHARS = r"[^\s\"'<>|`]"
_PATH = re.compile(
    r"file://" + _PATH_CHARS + r"+"  # file:///home/me/x
    r"|(?<![\w.~/:>-])~?/" + _PATH_CHARS + r"+"  # /abs/path, ~/path (not a URL's //host)
    r"|(?<![\w])[A-Za-z]:[\\/]" + _PATH_CHARS + r"*"  # C:\Users\me, D:/data
)
_TIMESTAMP = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w])"
)
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\b")
_RUN_ID = re.compile(r"(?<![\w<-])run[-_](?=[A-Za-z0-9_.:-]*\d)[A-Za-z0-9][A-Za-z0-9_.:-]*")


def mask_text(text: str) -> str:
    """Mask one string: paths first (so a path holding a run id becomes one placeholder), then
    timestamps, UUIDs and ``run-...`` ids."""
    text = _PATH.sub(MASK_PATH, text)
    text = _TIMESTAMP.sub(MASK_TIMESTAMP, text)
    text = _UUID.sub(MASK_RUN_ID, text)
    return _RUN_ID.sub(MASK_RUN_ID, text)


def mask_value(obj: Any) -> Any:
    """A copy of a JSON-like value with every string value masked (dicts, lists and tuples recurse;
    a pydantic model is dumped to JSON-mode data first)."""
    if isinstance(obj, BaseModel):
        return mask_value(obj.model_dump(mode="json"))
    if isinstance(obj, str):
        return mask_text(obj)
    if isinstance(obj, dict):
        return {key: mask_value(value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [mask_value(item) for item in obj]
    return obj


def masked_scorecard_json(scorecard: Scorecard) -> bytes:
    """:func:`scorecard_json` after :func:`mask_value`: equal across reruns of the same inputs."""
    return orjson.dumps(mask_value(scorecard), option=orjson.OPT_INDENT_2) + b"\n"
