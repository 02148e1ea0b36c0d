"""The layout of a campaign run directory, written down once.

```
<run>/campaign.json                                  the design (helix campaign run)
<run>/summary.json                                   counts and aggregates (helix campaign run)
<run>/cost-ledger.jsonl                              every attempt's cost, append-only
<run>/cache-index/<identity>.jsonl                   a cache of finished results, one line each
<run>/cells/<cell_id>/<cache_key>.result.json        a finished cell (status ok): the source of truth
<run>/cells/<cell_id>/<cache_key>.failed.json        a cell whose final attempt failed
<run>/cells/<cell_id>/failure-receipt.json           the last final failure's receipt
<run>/cells/<cell_id>/failure-receipt.attempt-<n>.json   a failed attempt that was retried
```

Every reader and writer of a cell's files goes through :class:`CellPaths`. Its paths are plain
strings: a 100k-cell plan builds one per cell, and ``pathlib`` objects would triple that cost.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .._exceptions import UsageError

__all__ = [
    "CAMPAIGN_MANIFEST_FILE",
    "CELLS_DIR",
    "FAILURE_RECEIPT_FILE",
    "INDEX_DIR",
    "LEDGER_FILE",
    "SUMMARY_FILE",
    "CellPaths",
]

CAMPAIGN_MANIFEST_FILE = "campaign.json"
SUMMARY_FILE = "summary.json"
LEDGER_FILE = "cost-ledger.jsonl"
INDEX_DIR = "cache-index"
CELLS_DIR = "cells"
FAILURE_RECEIPT_FILE = "failure-receipt.json"
_RECEIPT_PREFIX = "failure-receipt"


@dataclass(frozen=True, kw_only=True, slots=True)
class CellPaths:
    """Where one cell of a run keeps its files under one cache key.

    ``CellPaths.of(run_dir, cell_id, cache_key)``; ``directory`` is ``<run>/cells/<cell_id>``.
    """

    directory: str
    cache_key: str

    @classmethod
    def of(cls, run_dir: str | Path, cell_id: str, cache_key: str) -> CellPaths:
        """The paths of cell ``cell_id`` of the run in ``run_dir``."""
        if not cell_id or "/" in cell_id or "\\" in cell_id or cell_id in (".", ".."):
            raise UsageError(
                f"cell id {cell_id!r} cannot name a directory; cell ids come from build_cell_schedule"
            )
        return cls(directory=f"{os.fspath(run_dir)}{os.sep}{CELLS_DIR}{os.sep}{cell_id}", cache_key=cache_key)

    @property
    def result(self) -> str:
        """The durable result of the finished cell."""
        return f"{self.directory}{os.sep}{self.cache_key}.result.json"

    @property
    def failed(self) -> str:
        """The durable result of the cell whose final attempt failed."""
        return f"{self.directory}{os.sep}{self.cache_key}.failed.json"

    @property
    def receipt(self) -> str:
        """The receipt of the cell's last final failure."""
        return f"{self.directory}{os.sep}{FAILURE_RECEIPT_FILE}"

    def attempt_receipt(self, attempt: int) -> str:
        """The receipt of failed attempt ``attempt`` that was retried."""
        return f"{self.directory}{os.sep}{_RECEIPT_PREFIX}.attempt-{attempt}.json"

    def receipt_files(self) -> list[str]:
        """Every failure receipt in the cell's directory (final and per attempt), sorted by name."""
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        return sorted(
            f"{self.directory}{os.sep}{n}"
            for n in names
            if n.startswith(_RECEIPT_PREFIX) and n.endswith(".json")
        )
