"""The append-only receipt log survives a torn last line."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from helix.models import RECEIPTS_FILE, CallReceipt, ReceiptLog, read_receipts


def _receipt(key: str) -> CallReceipt:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return CallReceipt(
        key=key, provider="openai", requested_model="m-2025-01-01", started_at=now, ended_at=now
    )


def test_appends_across_passes_and_skips_a_torn_line(tmp_path: Path) -> None:
    log = ReceiptLog(tmp_path)
    log.append(_receipt("a"))
    log.close()
    again = ReceiptLog(tmp_path)
    again.append(_receipt("b"))
    again.close()
    with (tmp_path / RECEIPTS_FILE).open("ab") as fh:  # a crash mid-write
        fh.write(b'{"version": 1, "key": "c", "prov')
    receipts, torn = read_receipts(tmp_path)
    assert [r.key for r in receipts] == ["a", "b"]
    assert torn == 1


def test_no_log_yet_reads_as_empty(tmp_path: Path) -> None:
    assert read_receipts(tmp_path) == ([], 0)
