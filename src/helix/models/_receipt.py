"""Call receipts: what one judged unit cost and how its provider calls went, success or failure."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["RECEIPTS_FILE", "RECEIPT_FORMAT_VERSION", "CallReceipt", "ReceiptLog", "read_receipts"]

RECEIPTS_FILE = "receipts.jsonl"
"""The append-only receipt log of a run directory: one JSON line per judged unit and pass."""

RECEIPT_FORMAT_VERSION = 1


class CallReceipt(BaseModel):
    """One line of ``receipts.jsonl``: one per judged unit and pass, written even when it failed.

    A unit may take more than one model call (a reply that did not parse is asked again once);
    ``calls`` counts them and ``attempts`` counts every HTTP attempt across them, retries included.
    ``cost_usd`` is None when the served model has no price (unknown, not free).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = RECEIPT_FORMAT_VERSION
    key: str
    provider: str
    requested_model: str
    served_model: str | None = None
    calls: int = Field(default=0, ge=0)
    attempts: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = None
    price_table_hash: str | None = None
    latency_s: float = Field(default=0.0, ge=0.0)
    """Summed latency of the successful model calls."""
    started_at: datetime
    ended_at: datetime
    status: Literal["ok", "error"] = "ok"
    error: str | None = None


class ReceiptLog:
    """Appends receipts to ``<run>/receipts.jsonl``, one line each, flushed as it goes.

    Append-only: a re-judged unit adds a line, so earlier failures stay on record. One open file
    for the whole pass (a file per unit costs a new inode each, the hot path's largest cost). A
    crash can at worst tear the last line, which :func:`read_receipts` skips and counts.
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / RECEIPTS_FILE
        self._fh: IO[bytes] | None = None

    def append(self, receipt: CallReceipt) -> None:
        """Write one receipt line and flush it to the OS."""
        if self._fh is None:
            self._fh = self.path.open("ab")
        self._fh.write(receipt.model_dump_json().encode() + b"\n")
        self._fh.flush()

    def close(self) -> None:
        """Close the log file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def read_receipts(run_dir: str | Path) -> tuple[list[CallReceipt], int]:
    """Every receipt of a run, in the order written, and how many torn or invalid lines were skipped."""
    path = Path(run_dir) / RECEIPTS_FILE
    if not path.exists():
        return [], 0
    receipts: list[CallReceipt] = []
    skipped = 0
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue
        try:
            receipts.append(CallReceipt.model_validate_json(line))
        except ValidationError:
            skipped += 1
    return receipts, skipped
