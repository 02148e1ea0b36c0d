"""`helix traces inspect`: the intake summary in Rich or JSON; exit 2 with the message on misuse."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
from typer.testing import CliRunner

from helix.cli import app
from helix.traces import IntakeReport, Trace, write_traces_jsonl

runner = CliRunner()


def _file_with_skips(tmp_path: Path, make_trace: Callable[[int], Trace]) -> Path:
    path = tmp_path / "runs.jsonl"
    write_traces_jsonl([make_trace(i) for i in range(4)], path)
    with path.open("ab") as fh:
        fh.write(b"{truncated\n[1]\n")
    return path


def test_inspect_prints_the_summary(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    path = _file_with_skips(tmp_path, make_trace)
    result = runner.invoke(app, ["traces", "inspect", str(path)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "traces read 4" in out
    assert "skipped     2" in out
    assert "invalid-json: 1" in out and "wrong-type: 1" in out
    assert "runs.jsonl:5" in out  # file:line of a skipped example
    assert "get_order" in out
    assert "error tool results 2" in out


def test_inspect_json_is_the_report(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    path = _file_with_skips(tmp_path, make_trace)
    result = runner.invoke(app, ["traces", "inspect", str(path), "--json"])
    assert result.exit_code == 0, result.output
    report = IntakeReport.model_validate(orjson.loads(result.output))
    assert report.format == "helix"
    assert report.traces_read == 4
    assert [(s.line, s.reason) for s in report.skipped] == [(5, "invalid-json"), (6, "wrong-type")]
    assert report.tools == {"get_order": 4}


def test_inspect_escapes_markup_from_the_file(tmp_path: Path) -> None:
    chat = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "function": {"name": "[red]evil[/red]", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    path = tmp_path / "chats.jsonl"
    path.write_bytes(orjson.dumps(chat) + b"\n")
    result = runner.invoke(app, ["traces", "inspect", str(path)])
    assert result.exit_code == 0, result.output
    assert "[red]evil[/red]" in result.output


def test_inspect_unknown_format_exits_2_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "otel-logs.jsonl"
    path.write_bytes(b'{"resourceLogs": []}\n')
    result = runner.invoke(app, ["traces", "inspect", str(path)])
    assert result.exit_code == 2
    assert "Helix reads: helix, openai-messages, tau-bench" in result.output.replace("\n", " ")
    assert "Traceback" not in result.output


def test_inspect_bad_format_option_and_missing_file_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("")
    result = runner.invoke(app, ["traces", "inspect", str(path), "--format", "csv"])
    assert result.exit_code == 2
    assert "'csv'" in result.output
    missing = runner.invoke(app, ["traces", "inspect", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2
    assert "does not exist" in missing.output


def test_inspect_explicit_format(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    path = write_traces_jsonl([make_trace(1)], tmp_path / "runs.jsonl")
    result = runner.invoke(app, ["traces", "inspect", str(path), "--format", "openai-messages", "--json"])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.output)
    assert report["traces_read"] == 0
    assert report["skipped_by_reason"] == {"unrecognised-record": 1}
