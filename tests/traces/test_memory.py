"""Intake memory stays bounded whatever a file holds: each bomb is read in a child process whose address
space is limited to 512 MB, so memory that grew with the number of bad lines would fail the read.

The bombs: 10 million blank lines (a 10 KB gzip), garbage lines, records of the right format with bad
fields (200,000 of each: the report keeps 20 examples per reason, so its JSON stays small), one 300 MB
line and one 300 MB document behind a small gzip.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

LIMIT_MB = 512

_CHILD = f"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({LIMIT_MB} * 2**20, {LIMIT_MB} * 2**20))
from helix.traces import IntakeReport, iter_traces
report = IntakeReport()
read = sum(1 for _ in iter_traces(sys.argv[1], format=sys.argv[2], report=report))
status = open("/proc/self/status").read()
peak_kb = int(status.split("VmHWM:")[1].split()[0])
print(json.dumps({{"traces": read, "by_reason": report.skipped_by_reason,
                  "examples": len(report.skipped), "json_bytes": len(report.model_dump_json()),
                  "peak_mb": peak_kb / 1024}}))
"""


def _read_in_child(path: Path, fmt: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), fmt], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _gzip(path: Path, chunks: object, level: int = 6) -> Path:
    with gzip.open(path, "wb", level) as fh:
        for chunk in chunks:  # type: ignore[attr-defined]
            fh.write(chunk)
    return path


def test_ten_million_blank_lines_read_in_bounded_memory(tmp_path: Path) -> None:
    """The reproducer of issue 10: it took 98 s and 15 GB before."""
    path = _gzip(tmp_path / "b.jsonl.gz", (b"\n" * 10**6 for _ in range(10)), 9)
    assert path.stat().st_size < 20_000
    result = _read_in_child(path, "auto")
    assert result["traces"] == 0
    assert result["by_reason"] == {"blank-line": 10**7}
    assert result["examples"] <= 20 and result["json_bytes"] < 50_000


@pytest.mark.parametrize(
    ("fmt", "line", "reason"),
    [
        ("helix", b"this is not json \xff\xfe {{{\n", "invalid-utf8"),
        ("openai-messages", b'{"messages": [{"role": "user", "content": "unterminated\n', "invalid-json"),
        ("helix", b'{"id": "t", "events": 5}\n', "invalid-record"),
        ("openai-messages", b'{"messages": 5, "id": "x"}\n', "unrecognised-record"),
        (
            "otlp",
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "no ids"}]}]}]}\n',
            "invalid-record",
        ),
        (
            "langfuse",
            b'{"id": "o", "trace_id": "t", "parent_observation_id": "", "type": 5, "start_time": [1]}\n',
            None,
        ),
    ],
)
def test_bad_lines_by_the_million_read_in_bounded_memory(
    tmp_path: Path, fmt: str, line: bytes, reason: str | None
) -> None:
    count = 2 * 10**5
    path = _gzip(tmp_path / "bad.jsonl.gz", (line * 10_000 for _ in range(count // 10_000)))
    result = _read_in_child(path, fmt)
    if reason is not None:
        assert result["by_reason"] == {reason: count}
        assert result["examples"] == 20
    assert result["json_bytes"] < 200_000


@pytest.mark.parametrize(("opening", "reason"), [(b"", "too-large"), (b'{"messages": "', "too-large")])
def test_a_huge_line_or_document_behind_a_small_gzip_is_counted_not_loaded(
    tmp_path: Path, opening: bytes, reason: str
) -> None:
    path = _gzip(tmp_path / "huge.json.gz", [opening, *(b"x" * 2**20 for _ in range(300)), b"\n"], 1)
    assert path.stat().st_size < 5 * 2**20
    result = _read_in_child(path, "openai-messages")
    assert result["traces"] == 0
    assert result["by_reason"] == {reason: 1}
