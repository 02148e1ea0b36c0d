"""`helix traces inspect`: the intake summary in Rich or JSON; exit 2 with the message on misuse."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
from typer.testing import CliRunner

from helix.cli import app
from helix.traces import IntakeReport, Trace, iter_traces, write_traces_jsonl

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


def _corrupt_gzip(path: Path) -> Path:
    import gzip

    data = gzip.compress(
        b"".join(b'{"messages": [{"role": "user", "content": "m%d"}]}\n' % i for i in range(500))
    )
    path.write_bytes(data[:20] + b"\x00garbage\xff" * 50 + data[500:])
    return path


def test_a_corrupt_gzip_is_reported_once(tmp_path: Path) -> None:
    path = _corrupt_gzip(tmp_path / "runs.jsonl.gz")
    for fmt in ("openai-messages", "helix", "otlp", "tau2-bench", "inspect"):
        report = IntakeReport()
        for _ in iter_traces(path, format=fmt, report=report):
            pass
        assert report.skipped_by_reason == {"unreadable": 1}, fmt
        assert "compressed data is corrupt" in report.skipped[0].detail


def test_folder_intake_lists_each_unread_file_once_grouped_by_why(tmp_path: Path) -> None:
    _corrupt_gzip(tmp_path / "bad.jsonl.gz")
    (tmp_path / "notes.jsonl").write_text("hello\n")
    (tmp_path / "a.json").write_text('{"foo": 1}')
    (tmp_path / "b.json").write_text('{"bar": 1}')
    (tmp_path / "good.jsonl").write_text('[{"role": "user", "content": "hi"}]\n')
    summary = orjson.loads(runner.invoke(app, ["traces", "inspect", str(tmp_path), "--json"]).output)
    kinds = {Path(u["path"]).name: u["kind"] for u in summary["unread"]}
    assert kinds == {
        "bad.jsonl.gz": "damaged",
        "notes.jsonl": "not-json",
        "a.json": "unknown-shape",
        "b.json": "unknown-shape",
    }
    assert all(
        str(tmp_path) not in u["reason"] and "Helix reads" not in u["reason"] for u in summary["unread"]
    )
    out = runner.invoke(app, ["traces", "inspect", str(tmp_path)]).output
    for name in kinds:
        assert out.count(name) == 1, name
    assert out.count("Helix reads:") == 1 and "JSON that no format Helix reads matches: 2 file(s)" in out


def test_messages_name_no_internals(tmp_path: Path) -> None:
    """Skips tell what to do in words a user types: no Python reprs of bytes, no format='...' code."""
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        b'{"resourceSpans": []}\n'  # an OTLP record in a Helix file
        b"\xff\xfe not utf-8\n"
        b'{"resourceLogs": []}\n'
    )
    details = []
    for fmt in ("helix", "openai-messages", "tau-bench", "otlp"):
        report = IntakeReport()
        for _ in iter_traces(path, format=fmt, report=report):
            pass
        details += [skip.detail for skip in report.skipped]
    text = " ".join(details)
    assert "format=" not in text and "b'" not in text and 'b"' not in text and "sibling_logs" not in text
    assert "--format otlp" in text and "0xFF" in text


def test_turns_count_the_transcript_when_a_trace_has_no_events(tmp_path: Path) -> None:
    """A Helix trace with messages but no events has as many turns as user messages (it reported 0)."""
    trace = Trace(
        id="t1",
        messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "bye"},
        ],
    )
    path = write_traces_jsonl([trace], tmp_path / "runs.jsonl")
    report = orjson.loads(runner.invoke(app, ["traces", "inspect", str(path), "--json"]).output)
    assert report["turns"] == {"n": 1, "min": 2, "median": 2, "max": 2}


def test_the_format_help_lists_every_format() -> None:
    from helix.cli._traces import TRACE_FORMAT_NAMES
    from helix.traces import TRACE_FORMATS

    assert TRACE_FORMAT_NAMES == ", ".join(TRACE_FORMATS)
    result = runner.invoke(app, ["traces", "inspect", "--help"])
    assert all(name in result.output for name in TRACE_FORMATS)
