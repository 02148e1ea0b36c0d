"""Failed cells: the failure receipt, bounded in-run retry, and the transient-failure predicate.

A failed attempt is written down before anything else happens to it: ``failure-receipt.json`` for
a cell's final failure, ``failure-receipt.attempt-<n>.json`` for an attempt that is retried. A
receipt holds the stage (dispatch or score), the serialized error, the exact cell result as it
stands and the cost settled so far.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from .._exceptions import AdmissionRejectedError, ModelHTTPError, UsageError
from .._util import write_atomic
from ._model import CellError, CellResult, FailureStage, upgrade_stage_record
from ._paths import CellPaths

__all__ = [
    "RECEIPT_FORMAT_VERSION",
    "TRANSIENT_STATUS_CODES",
    "CellFailure",
    "CellRetry",
    "FailureReceipt",
    "cell_retry",
    "transient_dispatch_failure",
    "write_failure_receipt",
]

RECEIPT_FORMAT_VERSION = 2
"""Version 2: the ``judge`` stage is called ``score``; version 1 receipts are read and upgraded."""
TRANSIENT_STATUS_CODES = frozenset({429, 502, 503, 504, 529})
"""Gateway errors, unavailability and admission rejections (429 too busy, 529 overloaded)."""


class FailureReceipt(BaseModel):
    """What a failed attempt leaves behind in its cell directory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = RECEIPT_FORMAT_VERSION
    cell_id: str
    attempt: int
    final: bool
    """True when no retry follows (the cell ends failed)."""
    stage: FailureStage
    error: CellError
    settled_cost_usd: float | None
    """The cell's cost over every attempt so far (None when none of it is known)."""
    cell: CellResult
    at: datetime

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        return upgrade_stage_record(data, current=RECEIPT_FORMAT_VERSION, what="failure receipt")


def write_failure_receipt(paths: CellPaths, receipt: FailureReceipt, *, fsync: bool) -> Path:
    """Write the receipt atomically and return its path."""
    target = paths.receipt if receipt.final else paths.attempt_receipt(receipt.attempt)
    return write_atomic(target, receipt.model_dump_json(indent=2).encode() + b"\n", fsync=fsync)


@dataclass(frozen=True, kw_only=True)
class CellFailure:
    """One failed attempt, as a retry predicate sees it."""

    cell_id: str
    attempt: int
    stage: FailureStage
    error: BaseException


RetryPredicate = Callable[[CellFailure], bool]


@dataclass(frozen=True, kw_only=True)
class CellRetry:
    """Bounded in-run retry: at most ``attempts`` attempts per cell, retrying failures ``retryable`` accepts."""

    attempts: int
    retryable: RetryPredicate


def cell_retry(attempts: int, retryable: RetryPredicate | None = None) -> CellRetry:
    """Retry a failed cell in the same slot (same cell id and seed), up to ``attempts`` attempts in all.

    ``retryable`` defaults to :func:`transient_dispatch_failure`.
    """
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise UsageError(f"cell_retry attempts must be an integer >= 1 (attempts in all), got {attempts!r}")
    return CellRetry(attempts=attempts, retryable=retryable or transient_dispatch_failure())


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def _transport_types() -> tuple[type[BaseException], ...]:
    types: list[type[BaseException]] = [ConnectionError, asyncio.IncompleteReadError]  # reset, refused...
    # An exception of a library can only exist once the library is imported: look, don't import.
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is not None:
        # Connection errors (ServerDisconnectedError included) and a body cut off mid-stream.
        types += [aiohttp.ClientConnectionError, aiohttp.ClientPayloadError]
    for sdk in ("openai", "anthropic"):
        module = sys.modules.get(sdk)
        if module is not None:
            types.append(module.APIConnectionError)  # includes APITimeoutError
    return tuple(types)


def _is_transient(exc: BaseException, transport: tuple[type[BaseException], ...]) -> bool:
    for link in _chain(exc):
        if isinstance(link, AdmissionRejectedError):
            return True
        status = getattr(link, "status_code", None)
        if isinstance(link, ModelHTTPError) or (
            isinstance(status, int) and type(link).__module__.split(".")[0] in ("openai", "anthropic")
        ):
            return status in TRANSIENT_STATUS_CODES
        if isinstance(link, transport):
            return True
    return False


def transient_dispatch_failure() -> RetryPredicate:
    """A retry predicate that accepts only dispatch-stage transport failures.

    Accepted: HTTP 502/503/504 (and the admission rejections 429 and 529) from
    :mod:`helix.models` or the ``openai``/``anthropic`` SDKs, dropped connections and cut-off
    streams (``ConnectionError``, aiohttp connection and payload errors, the SDKs' connection and
    timeout errors, also when wrapped in a :class:`~helix.ModelError`), and
    :class:`~helix.AdmissionRejectedError` raised by a dispatch. Never a score-stage failure, and
    never a refused request (400, 401, 404...) or a bug in the dispatch.
    """

    def retryable(failure: CellFailure) -> bool:
        return failure.stage == "dispatch" and _is_transient(failure.error, _transport_types())

    return retryable
