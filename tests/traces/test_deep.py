"""Nesting at any depth from 1 to 100,000 never produces a traceback: in detection, in any reader, in
``convert`` and in ``helix traces inspect``; and one such file does not stop a folder's intake."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from helix.cli import app
from helix.traces import (
    TRACE_FORMATS,
    IntakeReport,
    IntakeSummary,
    UnknownTraceFormat,
    convert_traces,
    iter_trace_files,
    iter_traces,
)

DEPTHS = (1, 2, 100, 150, 254, 255, 999, 1000, 1024, 1025, 10_000, 100_000)


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _shapes(depth: int) -> dict[str, bytes]:
    deep = _nested(depth)
    return {
        "bare": deep,
        "object": b'{"a":' * depth + b"1" + b"}" * depth,
        "message": b'{"messages": [{"role": "user", "content": ' + deep + b"}]}",
        "span": b'{"object": "trace.span", "id": "s", "trace_id": "t", "span_data": {"type": "custom", "data": '
        + deep
        + b"}}",
        "helix": b'{"id": "x", "events": [], "metadata": {"k": ' + deep + b"}}",
        "langfuse": b'[{"id": "o", "trace_id": "t", "parent_observation_id": "", "input": ' + deep + b"}]",
    }


@pytest.mark.parametrize("depth", DEPTHS)
def test_no_reader_and_no_detection_fails_at_any_depth(tmp_path: Path, depth: int) -> None:
    for name, body in _shapes(depth).items():
        for layout, data in (("lines", body + b"\n" + body + b"\n"), ("document", b"[\n" + body + b"\n]\n")):
            path = tmp_path / f"{name}-{layout}.json"
            path.write_bytes(data)
            for fmt in ("auto", *TRACE_FORMATS):
                report = IntakeReport()
                try:
                    traces = list(iter_traces(path, format=fmt, report=report))
                except UnknownTraceFormat:
                    continue
                assert "unreadable" not in report.skipped_by_reason, (fmt, report.skipped[:1])
                for trace in traces:
                    trace.model_dump_json()  # every trace read can be written
            try:
                convert_traces([path], tmp_path / "out.jsonl")
            except UnknownTraceFormat:
                pass


def test_the_deep_list_reproducer_is_an_unknown_format_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(_nested(1000) + b"\n")
    result = CliRunner().invoke(app, ["traces", "inspect", str(path)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Cannot tell the trace format" in result.output and "Traceback" not in result.output


def test_a_deep_file_does_not_stop_a_folder(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_bytes(_nested(1000) + b"\n")
    (tmp_path / "x.jsonl").write_bytes(_shapes(100_000)["message"] + b"\n")
    (tmp_path / "good.jsonl").write_bytes(b'[{"role": "user", "content": "hi"}]\n')
    summary = IntakeSummary()
    traces = list(iter_trace_files([tmp_path], summary=summary))
    assert len(traces) == 1  # good.jsonl
    assert [unread.path for unread in summary.unread] == [
        str(tmp_path / "d.jsonl"),
        str(tmp_path / "x.jsonl"),
    ]
    assert "1,024 levels" in summary.unread[1].reason
    result = CliRunner().invoke(app, ["traces", "inspect", str(tmp_path)])
    assert result.exit_code == 0, result.output
