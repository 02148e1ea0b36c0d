"""The cost ledger: one append-only JSONL line per cell attempt, success or failure.

Every attempt (a retried one too) is charged here, so the ledger is the campaign's bill: the sum of
``cost_usd`` over its lines is what was spent, and ``status`` tells paid successes from paid (or
unknown-cost) failures. Lines are flushed to the OS as they are written (one ``write`` each), which
survives a killed process; a torn last line after a power cut is skipped and counted on reading.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from ._model import FailureStage, upgrade_stage_record
from ._paths import LEDGER_FILE

__all__ = ["LEDGER_FORMAT_VERSION", "CostLedger", "LedgerEntry", "read_ledger"]

LEDGER_FORMAT_VERSION = 2
"""Version 2: the ``judge`` stage is called ``score``; version 1 lines are read and upgraded."""


class LedgerEntry(BaseModel):
    """One attempt of one cell: what it cost (None = unknown), which calls it paid for, how it ended."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = LEDGER_FORMAT_VERSION
    session: str
    """Which ``run_campaign`` call made the attempt (a resumed run has a new session)."""
    cell_id: str
    cache_key: str
    attempt: int
    status: Literal["ok", "failed"]
    stage: FailureStage | None = None
    served_model: str | None = None
    cost_usd: float | None = None
    call_ids: tuple[str, ...] = ()
    at: datetime

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        return upgrade_stage_record(data, current=LEDGER_FORMAT_VERSION, what="ledger line")


class CostLedger:
    """Appends :class:`LedgerEntry` lines to ``<run>/cost-ledger.jsonl`` through one open file."""

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / LEDGER_FILE
        self._fh: IO[bytes] | None = None

    def append(self, entry: LedgerEntry) -> None:
        """Write one line and flush it (a single ``write`` call, so a killed process never tears it)."""
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("ab")
        self._fh.write(entry.model_dump_json().encode() + b"\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def read_ledger(run_dir: str | Path) -> tuple[list[LedgerEntry], int]:
    """Every ledger line of a run in the order written, and how many torn or invalid lines were skipped."""
    path = Path(run_dir) / LEDGER_FILE
    if not path.exists():
        return [], 0
    entries: list[LedgerEntry] = []
    skipped = 0
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue
        try:
            entries.append(LedgerEntry.model_validate_json(line))
        except ValidationError:
            skipped += 1
    return entries, skipped
