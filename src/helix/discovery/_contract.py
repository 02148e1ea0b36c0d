"""Shared pieces of the two discovery verdict contracts: strict field checks with typed errors.

Every check raises :class:`~helix.VerdictFileError` naming the source (file or answer), the field
and the fix, so an agent runtime's verdict file and a provider's answer fail the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .._exceptions import VerdictFileError
from ..judging import JudgeInfo

__all__ = [
    "ENVELOPE_KEYS",
    "VerdictEnvelope",
    "bad",
    "check_envelope",
    "check_keys",
    "check_order",
    "confidence_of",
    "judge_of",
    "text_of",
]

ENVELOPE_KEYS = frozenset({"version", "key", "status", "error", "judge"})


class VerdictEnvelope(BaseModel):
    """What every discovery verdict file holds around its answer (the answer field is the kind's)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = 1
    key: str
    status: Literal["scored", "unscored"] = "scored"
    error: str | None = None
    """Why the unit is unscored (only with ``status: unscored``)."""
    judge: JudgeInfo | None = None


def bad(message: str, source: str, field: str | None = None) -> VerdictFileError:
    """The error for a broken verdict."""
    return VerdictFileError(message, path=source, field=field)


def check_keys(obj: Mapping[str, Any], allowed: Sequence[str], source: str, where: str) -> None:
    """Refuse keys outside ``allowed``."""
    extra = [k for k in obj if k not in allowed]
    if extra:
        raise bad(f"unexpected key(s) {extra}; {where} has only {list(allowed)}", source, where or None)


def check_order(obj: Mapping[str, Any], first: str, then: str, source: str, where: str) -> None:
    """``first`` must be present and come before ``then`` in the raw key order (reason first)."""
    field = f"{where}.{first}" if where else first
    if first not in obj:
        raise bad(f"no {first!r}; write {first!r} before {then!r}", source, field)
    if then not in obj:
        raise bad(f"no {then!r}; add {then!r} after {first!r}", source, f"{where}.{then}" if where else then)
    keys = list(obj)
    if keys.index(then) < keys.index(first):
        raise bad(
            f"{then!r} comes before {first!r}; reason first: write {first!r} before {then!r}", source, field
        )


def text_of(obj: Mapping[str, Any], name: str, source: str, where: str, *, what: str) -> str:
    """A non-empty string field."""
    value = obj.get(name)
    if not isinstance(value, str) or not value.strip():
        raise bad(f"{name} {value!r} is empty or not text; write {what}", source, f"{where}.{name}")
    return value


def confidence_of(obj: Mapping[str, Any], source: str, where: str) -> float:
    """A finite number from 0 to 1 (a boolean is not a number)."""
    value = obj.get("confidence")
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0.0 <= value <= 1.0
    ):
        raise bad(f"confidence {value!r} must be a number from 0 to 1", source, f"{where}.confidence")
    return float(value)


def judge_of(raw: Any, source: str) -> JudgeInfo:
    """The ``judge`` object of a verdict file: a runtime and, for an LLM, the model."""
    if not isinstance(raw, dict):
        raise bad(f"'judge' must be an object with 'runtime' and 'model', got {raw!r}", source, "judge")
    try:
        judge = JudgeInfo.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise bad(
            f"{err['msg']} (got {raw!r})", source, ".".join(str(x) for x in ("judge", *err["loc"]))
        ) from exc
    if not judge.runtime.strip():
        raise bad("'judge.runtime' is empty; name the runtime that judged", source, "judge.runtime")
    if not (judge.model and judge.model.strip()):
        raise bad(
            f"judge runtime {judge.runtime!r} gives no model; record the model that judged in 'judge.model'",
            source,
            "judge.model",
        )
    return judge


def check_envelope(obj: Mapping[str, Any], *, key: str, version: int, body: str, source: str) -> str:
    """Check a verdict file's envelope; returns its status (``scored`` or ``unscored``)."""
    check_keys(obj, [*sorted(ENVELOPE_KEYS), body], source, "")
    if obj.get("version") != version:
        raise bad(
            f'version {obj.get("version")!r} is not supported; write "version": {version}', source, "version"
        )
    if obj.get("key") != key:
        raise bad(
            f"key {obj.get('key')!r} does not match the packet's key {key!r}; copy the key from the packet",
            source,
            "key",
        )
    status = obj.get("status", "scored")
    if status not in ("scored", "unscored"):
        raise bad(f"status {status!r} is not allowed; use 'scored' or 'unscored'", source, "status")
    if status == "unscored":
        error = obj.get("error")
        if not isinstance(error, str) or not error.strip():
            raise bad("an unscored verdict needs 'error' saying why", source, "error")
        if obj.get(body) is not None:
            raise bad(f"an unscored verdict must not carry {body!r}", source, body)
    elif obj.get("error") is not None:
        raise bad("'error' is only for unscored verdicts; remove it or set status unscored", source, "error")
    return str(status)
