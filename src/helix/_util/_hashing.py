"""Canonical JSON and content hashes: the same data always gives the same bytes and key."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

__all__ = ["canonical_json", "content_hash"]


def canonical_json(obj: Any) -> bytes:
    """Serialize ``obj`` with sorted keys and no whitespace, so equal data gives equal bytes."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def content_hash(obj: Any, *, length: int = 20) -> str:
    """A hex SHA-256 prefix (default 80 bits) of the canonical JSON of ``obj``."""
    return hashlib.sha256(canonical_json(obj)).hexdigest()[:length]
