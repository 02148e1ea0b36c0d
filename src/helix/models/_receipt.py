"""Call receipts: what each judged unit cost and how its provider calls went, success or failure.

``<run>/receipts.jsonl`` is append-only and holds two kinds of line:

* an **attempt** line, written (and handed to the OS) just *before* each HTTP request is sent, so a
  process killed mid-request still leaves a record of every request a server may have seen (and
  billed);
* a **unit** receipt (:class:`CallReceipt`), written when the unit ends, success or failure: calls,
  attempts, tokens (cached ones apart), cost, latency, served model, request ids, and the failure
  kind when it ended unscored.

An attempt no later receipt of its unit settles was in flight when the process died
(:attr:`ReceiptLogContents.unsettled`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "RECEIPTS_FILE",
    "RECEIPT_FORMAT_VERSION",
    "AttemptRecord",
    "CallReceipt",
    "ReceiptLog",
    "ReceiptLogContents",
    "read_receipt_log",
    "read_receipts",
]

RECEIPTS_FILE = "receipts.jsonl"
"""The append-only receipt log of a run directory."""

RECEIPT_FORMAT_VERSION = 2
"""2 added attempt lines, cached-token counts, the failure kind, batch ids and request ids."""


class CallReceipt(BaseModel):
    """One unit line of ``receipts.jsonl``: one per judged unit and pass, written even when it failed.

    A unit may take more than one model call (a reply that did not parse is asked again once);
    ``calls`` counts them and ``attempts`` counts every HTTP attempt across them, retries included.
    ``input_tokens`` counts every prompt token, ``cached_input_tokens`` and ``cache_write_tokens``
    the parts read from and written to the provider's prompt cache. ``cost_usd`` is None when the
    served model has no price (unknown, not free).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = RECEIPT_FORMAT_VERSION
    record: Literal["unit"] = "unit"
    key: str
    provider: str
    requested_model: str
    served_model: str | None = None
    mode: Literal["live", "batch"] = "live"
    calls: int = Field(default=0, ge=0)
    attempts: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cached_input_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = None
    price_table_hash: str | None = None
    latency_s: float = Field(default=0.0, ge=0.0)
    """Summed latency of the successful model calls."""
    started_at: datetime
    ended_at: datetime
    status: Literal["ok", "error"] = "ok"
    """``error``: the provider failed (the unit is unscored); ``ok``: it answered (parsed or not)."""
    error: str | None = None
    failure: str | None = None
    """Why the unit ended unscored, as a kind (``connection_refused``, ``unparseable``, ``expired``...)."""
    request_ids: tuple[str, ...] = ()
    batch_id: str | None = None
    prompt_layout: int | None = None
    """How the prompt's texts were arranged into messages (``helix.judging`` layout revision)."""


class AttemptRecord(BaseModel):
    """One attempt line: a request about to be sent for unit ``key`` (call and attempt, 1-based)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = RECEIPT_FORMAT_VERSION
    record: Literal["attempt"] = "attempt"
    key: str
    call: int = Field(ge=1)
    attempt: int = Field(ge=1)
    at: datetime


class ReceiptLog:
    """Appends to ``<run>/receipts.jsonl``: one ``write`` per line on an ``O_APPEND`` descriptor.

    Each line reaches the OS before the call returns (a killed process loses nothing written; only a
    power loss can drop the tail), and lines from several threads never interleave. A crash can at
    worst tear the last line, which the readers skip and count.
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / RECEIPTS_FILE
        self._fd: int | None = None

    def _write(self, line: bytes) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        view = memoryview(line)
        while view:
            view = view[os.write(self._fd, view) :]

    def append(self, receipt: CallReceipt) -> None:
        """Write one unit receipt."""
        self._write(receipt.model_dump_json().encode() + b"\n")

    def append_raw(self, line: bytes) -> None:
        """Write one already-encoded line (it must end in a newline and validate as a receipt)."""
        self._write(line)

    def record_attempt(self, key: str, call: int, attempt: int) -> None:
        """Write the attempt line of a request about to be sent (call before sending it)."""
        at = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        self._write(
            b'{"version":2,"record":"attempt","key":'
            + orjson.dumps(key)
            + b',"call":%d,"attempt":%d,"at":"%s"}\n' % (call, attempt, at.encode())
        )

    def close(self) -> None:
        """Close the log file."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass(frozen=True, kw_only=True)
class ReceiptLogContents:
    """Everything in a receipt log, in the order written."""

    receipts: list[CallReceipt]
    attempts: list[AttemptRecord]
    unsettled: list[AttemptRecord]
    """Attempts no unit receipt settles: requests in flight when a process died (maybe billed)."""
    torn: int
    """Lines skipped because they were torn by a crash or are not receipts."""


def read_receipt_log(run_dir: str | Path) -> ReceiptLogContents:
    """Every unit receipt and attempt line of a run, which attempts were never settled, and torn lines.

    A unit receipt settles the latest attempts of its key written before it (as many as it counts);
    earlier attempts of that key left over belong to a pass that died before writing its receipt.
    """
    path = Path(run_dir) / RECEIPTS_FILE
    receipts: list[CallReceipt] = []
    attempts: list[AttemptRecord] = []
    pending: dict[str, list[AttemptRecord]] = {}
    unsettled: list[AttemptRecord] = []
    torn = 0
    if path.exists():
        for line in path.read_bytes().splitlines():
            if not line.strip():
                continue
            try:
                if b'"record":"attempt"' in line:
                    attempt = AttemptRecord.model_validate_json(line)
                    attempts.append(attempt)
                    pending.setdefault(attempt.key, []).append(attempt)
                    continue
                receipt = CallReceipt.model_validate_json(line)
            except ValidationError:
                torn += 1
                continue
            receipts.append(receipt)
            mine = pending.pop(receipt.key, [])
            if receipt.mode == "live" and len(mine) > receipt.attempts:
                unsettled.extend(mine[: len(mine) - receipt.attempts])
    for left in pending.values():
        unsettled.extend(left)
    unsettled.sort(key=lambda a: a.at)
    return ReceiptLogContents(receipts=receipts, attempts=attempts, unsettled=unsettled, torn=torn)


def read_receipts(run_dir: str | Path) -> tuple[list[CallReceipt], int]:
    """Every unit receipt of a run, in the order written, and how many lines were torn or invalid."""
    log = read_receipt_log(run_dir)
    return log.receipts, log.torn
