"""The test-once ledger: a judge is measured on a test split once; a second look must be forced.

The ledger is ``<run>/calibration/test_ledger.json``. Each entry records which criterion was
measured on which split (``test``, ``all`` for an external judge measured on every label, or
``dev``), a fingerprint of its trace ids, with which seed, when, and whether the measurement was
forced past an earlier one. Dev measurements are never refused: they are recorded so that a judge
iterated on these labels is no longer taken for an external one. Re-measuring the same split after tuning the judge
on what the first measurement showed turns the test set into a dev set; the ledger refuses that
unless the caller says ``force`` and then says so forever in the record.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .._exceptions import TestSplitReusedError
from .._util import read_json, write_json_atomic

__all__ = [
    "LEDGER_FORMAT_VERSION",
    "LedgerEntry",
    "TestLedger",
    "ledger_path",
    "read_ledger",
    "record_test_use",
]

LEDGER_FORMAT_VERSION: Literal[1] = 1


class LedgerEntry(BaseModel):
    """One measurement on a test split."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    criterion_id: str
    split: str = "test"
    """``test``, ``all`` (measured once) or ``dev`` (iterations, never refused)."""
    split_fingerprint: str
    seed: int
    test_size: int
    measured_at: datetime
    forced: bool = False
    """True when this measurement repeated an earlier one on the same split and was forced."""


class TestLedger(BaseModel):
    """The content of ``calibration/test_ledger.json``."""

    __test__ = False  # not a pytest test class
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = LEDGER_FORMAT_VERSION
    entries: tuple[LedgerEntry, ...] = ()

    def uses(self, criterion_id: str, fingerprint: str) -> tuple[LedgerEntry, ...]:
        """Earlier once-only measurements (test or all) of ``criterion_id`` on the split with ``fingerprint``."""
        return tuple(
            e
            for e in self.entries
            if e.criterion_id == criterion_id and e.split_fingerprint == fingerprint and e.split != "dev"
        )

    def developed(self, criterion_id: str) -> bool:
        """True when ``criterion_id`` was iterated on a dev split or measured on a test split before."""
        return any(e.criterion_id == criterion_id and e.split in ("dev", "test") for e in self.entries)


def ledger_path(run_dir: str | Path) -> Path:
    """Where the ledger of a run lives."""
    return Path(run_dir) / "calibration" / "test_ledger.json"


def read_ledger(run_dir: str | Path) -> TestLedger:
    """The run's ledger (empty when none was written yet)."""
    path = ledger_path(run_dir)
    if not path.is_file():
        return TestLedger()
    return TestLedger.model_validate(read_json(path))


def record_test_use(
    run_dir: str | Path,
    *,
    criterion_id: str,
    split_fingerprint: str,
    seed: int,
    test_size: int,
    force: bool = False,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    split: str = "test",
) -> LedgerEntry:
    """Record a measurement; on a ``test`` or ``all`` split refuse a repeat unless ``force`` (recorded
    as forced). ``dev`` measurements are recorded and never refused.

    Raises :class:`~helix._exceptions.TestSplitReusedError` for an unforced repeat.
    """
    ledger = read_ledger(run_dir)
    earlier = ledger.uses(criterion_id, split_fingerprint) if split != "dev" else ()
    if earlier and not force:
        raise TestSplitReusedError(
            f"criterion {criterion_id!r} was already measured on this {'set of labels' if split == 'all' else 'test split'} (fingerprint "
            f"{split_fingerprint}, seed {seed}) at {earlier[0].measured_at.isoformat()}; the test split is "
            "used once. Iterate on the dev split (--split dev), or pass --force to re-measure (the ledger "
            f"will record it as forced): {ledger_path(run_dir)}",
            criterion_id=criterion_id,
            fingerprint=split_fingerprint,
        )
    entry = LedgerEntry(
        criterion_id=criterion_id,
        split=split,
        split_fingerprint=split_fingerprint,
        seed=seed,
        test_size=test_size,
        measured_at=clock(),
        forced=bool(earlier),
    )
    updated = TestLedger(entries=(*ledger.entries, entry))
    write_json_atomic(ledger_path(run_dir), updated.model_dump(mode="json"))
    return entry
