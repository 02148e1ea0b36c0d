"""Format auto-detection: each format is recognised from its content, with the evidence."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from helix import UsageError
from helix.traces import TRACE_FORMATS, Trace, detect_format, iter_traces, read_traces, write_traces_jsonl


def test_trace_formats_lists_the_readers() -> None:
    assert TRACE_FORMATS[:3] == ("helix", "openai-messages", "tau-bench")
    assert len(set(TRACE_FORMATS)) == len(TRACE_FORMATS)
    assert {"otlp", "openinference", "openai-agents", "tau2-bench"} <= set(TRACE_FORMATS)


def test_detects_helix_jsonl(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    path = write_traces_jsonl([make_trace(1), make_trace(2)], tmp_path / "runs.jsonl")
    detection = detect_format(path)
    assert detection.format == "helix"
    assert "line 1" in detection.reason


def test_detects_openai_message_lists_and_objects(tmp_path: Path, make_chat: Callable[..., Any]) -> None:
    lists = tmp_path / "lists.jsonl"
    lists.write_bytes(orjson.dumps(make_chat(1)) + b"\n")
    objects = tmp_path / "objects.jsonl"
    objects.write_bytes(orjson.dumps({"id": "c1", "messages": make_chat(1)}) + b"\n")
    assert detect_format(lists).format == "openai-messages"
    assert "list of chat messages" in detect_format(lists).reason
    assert detect_format(objects).format == "openai-messages"
    assert "'messages' list" in detect_format(objects).reason


def test_detects_pretty_printed_json_array(tmp_path: Path, make_chat: Callable[..., Any]) -> None:
    path = tmp_path / "convs.json"
    path.write_bytes(orjson.dumps([{"messages": make_chat(1)}], option=orjson.OPT_INDENT_2))
    detection = detect_format(path)
    assert detection.format == "openai-messages"
    assert "JSON document" in detection.reason


def test_detects_tau_bench(tmp_path: Path, make_chat: Callable[..., Any]) -> None:
    path = tmp_path / "tau.json"
    path.write_bytes(
        orjson.dumps([{"task_id": 1, "trial": 0, "reward": 1.0, "info": {}, "traj": make_chat(1)}])
    )
    assert detect_format(path).format == "tau-bench"


def test_detection_reads_gzip_by_magic_bytes_not_suffix(
    tmp_path: Path, make_chat: Callable[..., Any]
) -> None:
    path = tmp_path / "no-suffix.data"  # gzip content under a name that does not say so
    path.write_bytes(gzip.compress(orjson.dumps(make_chat(1)) + b"\n"))
    assert detect_format(path).format == "openai-messages"
    assert len(read_traces(path).traces) == 1


def test_detection_skips_leading_garbage(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"not json\n\n" + make_trace(1).model_dump_json().encode() + b"\n")
    detection = detect_format(path)
    assert detection.format == "helix"
    assert "line 3" in detection.reason


def test_unknown_format_names_the_readers_and_what_was_sniffed(tmp_path: Path) -> None:
    path = tmp_path / "otel-logs.jsonl"
    path.write_bytes(b'{"resourceLogs": []}\n')
    with pytest.raises(UsageError) as info:
        detect_format(path)
    message = str(info.value)
    assert "OTLP/JSON logs" in message
    for name in TRACE_FORMATS:
        assert name in message
    assert str(path) in message


def test_unknown_format_for_non_json(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\nworld\n")
    with pytest.raises(UsageError, match="line 1 is not JSON"):
        read_traces(path)


def test_unknown_format_name_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("")
    with pytest.raises(UsageError, match="'phoenix-arrow'"):
        iter_traces(path, format="phoenix-arrow")  # raised at the call, not at the first next()


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        iter_traces(tmp_path / "missing.jsonl", format="helix")
    with pytest.raises(UsageError, match="does not exist"):
        detect_format(tmp_path / "missing.jsonl")


def test_empty_file_reads_as_zero_traces_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    intake = read_traces(path)
    assert intake.traces == []
    assert intake.report.records_skipped == 0
    assert any("no records" in note for note in intake.report.notes)
    assert "empty" in (intake.report.detection or "")
