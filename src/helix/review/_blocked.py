"""Reading a verdict's ``blocked_by`` in either form: the old free text or ``{kind, detail}``.

Verdict files written before ``blocked_by`` was typed hold a string (what evidence was missing);
newer ones hold an object with a ``kind`` (``missing-evidence``, ``factual-intent``, ``normative``,
``scope``) and a ``detail``. Both read; a missing kind is ``missing-evidence``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULT_BLOCKED_KIND", "blocked_kind", "blocked_text"]

DEFAULT_BLOCKED_KIND = "missing-evidence"


def _field(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def blocked_kind(value: Any) -> str | None:
    """The kind of what blocked the judge; None when nothing did (``blocked_by`` absent)."""
    if value is None:
        return None
    if isinstance(value, str):
        return DEFAULT_BLOCKED_KIND
    kind = _field(value, "kind")
    return str(kind) if isinstance(kind, str) and kind else DEFAULT_BLOCKED_KIND


def blocked_text(value: Any) -> str | None:
    """One line for people: ``normative: whether a partial refund is allowed`` (or the old text)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    detail = _field(value, "detail")
    kind = blocked_kind(value)
    return f"{kind}: {detail}" if isinstance(detail, str) and detail else kind
