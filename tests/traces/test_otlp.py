"""OTLP/JSON traces written by the OpenTelemetry SDK's file exporter, read through the GenAI conventions."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_values import assert_one_event_or_skip_per_line
from helix.traces import detect_format, read_traces, write_traces_jsonl


@pytest.fixture(scope="module")
def otlp_new(tmp_path_factory: pytest.TempPathFactory, span_writers: ModuleType) -> Path:
    traces, _ = span_writers.write_otlp(tmp_path_factory.mktemp("otlp_new"), runs=3)
    return Path(traces)


@pytest.fixture(scope="module")
def otlp_old(tmp_path_factory: pytest.TempPathFactory, span_writers: ModuleType) -> tuple[Path, Path]:
    traces, logs = span_writers.write_otlp(tmp_path_factory.mktemp("otlp_old"), runs=2, old_conventions=True)
    return Path(traces), Path(logs)


def _lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines() if line.strip()]


def test_detects_and_builds_one_tree_per_run_from_children_first_lines(otlp_new: Path) -> None:
    lines = [orjson.loads(line) for line in _lines(otlp_new)]
    first_span = lines[0]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert first_span.get("parentSpanId")  # the real exporter writes a child before its parent
    assert detect_format(otlp_new).format == "otlp"

    intake = read_traces(otlp_new)
    assert intake.report.format == "otlp"
    assert intake.report.skipped == []
    assert intake.report.traces_read == 3
    trace = intake.traces[0]
    assert [e.kind for e in trace.events] == ["agent", "llm", "tool", "llm"]
    root = trace.events[0]
    assert root.parent_id is None and all(e.parent_id == root.id for e in trace.events[1:])
    assert trace.session_id == "conv_0"
    assert trace.input == "Weather in City0?" and trace.output == "It is 21C in City0."
    assert trace.metadata["resource"]["service.name"] == "weather-agent"
    assert trace.metadata["source_format"] == "otlp"


def test_llm_events_carry_messages_model_provider_usage(otlp_new: Path, span_writers: ModuleType) -> None:
    trace = read_traces(otlp_new).traces[0]
    llm = trace.events[1]
    assert llm.model == "gpt-4o-2024-08-06" and llm.provider == "openai"
    assert llm.usage is not None
    assert (llm.usage.input_tokens, llm.usage.output_tokens, llm.usage.total_tokens) == (40, 10, 50)
    assert [m["role"] for m in llm.input] == ["system", "user"]
    assert llm.input[0]["content"] == span_writers.SYSTEM
    assert llm.output[0]["tool_calls"] == [
        {"id": "call_0", "name": "get_weather", "arguments": {"city": "City0"}}
    ]
    assert llm.attributes["gen_ai.request.model"] == "gpt-4o"
    assert "gen_ai.input.messages" not in llm.attributes  # parsed into input, not kept twice


def test_tool_calls_link_and_errors_and_scores_are_kept(otlp_new: Path) -> None:
    traces = read_traces(otlp_new).traces
    ok, failed = traces[0], traces[1]
    tool = ok.tool_events()[0]
    assert tool.name == "get_weather" and tool.tool_call_id == "call_0"
    assert tool.input == {"city": "City0"} and tool.output == "21C"
    bad = failed.tool_events()[0]
    assert bad.status == "error" and bad.error == "TimeoutError: upstream timed out"
    assert [(s.name, s.value, s.source) for s in ok.scores] == [("resolved", 1.0, "otel")]
    assert [(s.name, s.value) for s in failed.scores] == [("resolved", 0.0)]
    assert ok.messages is not None
    roles = [(m.role, m.tool_call_id) for m in ok.messages]
    assert roles == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("tool", "call_0"),
        ("assistant", None),
    ]


def test_old_conventions_with_messages_in_a_sibling_logs_file(otlp_old: tuple[Path, Path]) -> None:
    traces_path, logs_path = otlp_old
    assert logs_path.exists() and b"resourceLogs" in logs_path.read_bytes()
    intake = read_traces(traces_path)
    assert any("logs file" in note for note in intake.report.notes)
    trace = intake.traces[0]
    first, second = trace.events[1], trace.events[3]
    assert first.provider == "openai"  # gen_ai.system
    assert first.usage is not None and (first.usage.input_tokens, first.usage.output_tokens) == (40, 10)
    assert [m["role"] for m in first.input] == ["system", "user"]
    assert first.output[0]["tool_calls"][0]["name"] == "get_weather"
    assert [m["role"] for m in second.input] == ["system", "user", "assistant", "tool"]
    assert second.output[0]["content"] == "It is 21C in City0."
    tool = trace.tool_events()[0]
    assert tool.tool_call_id == "call_0"  # no call id on the span: linked by name and order
    assert trace.input == "Weather in City0?" and trace.output == "It is 21C in City0."


def test_without_the_logs_file_old_spans_still_read_with_empty_content(
    otlp_old: tuple[Path, Path], tmp_path: Path
) -> None:
    copy = tmp_path / "spans-only.jsonl"
    copy.write_bytes(otlp_old[0].read_bytes())
    trace = read_traces(copy).traces[0]
    assert trace.events[1].kind == "llm" and trace.events[1].input is None
    assert trace.events[1].usage is not None


def test_missing_parent_becomes_a_root_and_is_counted(otlp_new: Path, tmp_path: Path) -> None:
    kept = [line for line in _lines(otlp_new) if b"invoke_agent WeatherBot" not in line]
    path = tmp_path / "orphans.jsonl"
    path.write_bytes(b"\n".join(kept) + b"\n")
    intake = read_traces(path)
    assert intake.report.traces_read == 3
    trace = intake.traces[0]
    assert trace.metadata["orphan_spans"] == 3
    assert all(e.parent_id is None for e in trace.events)
    assert any("kept as roots" in note for note in intake.report.notes)


def test_gzip_single_document_base64_ids_and_snake_case(otlp_new: Path, tmp_path: Path) -> None:
    expected = read_traces(otlp_new).traces
    gz = tmp_path / "traces.jsonl.gz"
    gz.write_bytes(gzip.compress(otlp_new.read_bytes()))
    assert [t.id for t in read_traces(gz).traces] == [t.id for t in expected]

    merged = {
        "resourceSpans": [rs for line in _lines(otlp_new) for rs in orjson.loads(line)["resourceSpans"]]
    }
    document = tmp_path / "export.json"
    document.write_text(json.dumps(merged, indent=2))
    assert [len(t.events) for t in read_traces(document).traces] == [4, 4, 4]

    def b64(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode()

    def snake(value: Any) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                new = "".join("_" + c.lower() if c.isupper() else c for c in key)
                if key in ("traceId", "spanId", "parentSpanId") and item:
                    item = b64(item)
                out[new] = snake(item)
            return out
        return [snake(v) for v in value] if isinstance(value, list) else value

    variant = tmp_path / "snake.jsonl"
    variant.write_bytes(
        b"".join(orjson.dumps(snake(orjson.loads(line))) + b"\n" for line in _lines(otlp_new))
    )
    assert b"resource_spans" in variant.read_bytes() and b"string_value" in variant.read_bytes()
    got = read_traces(variant)
    assert got.report.skipped == []
    assert [t.id for t in got.traces] == [t.id for t in expected]
    assert got.traces[0].events[1].usage == expected[0].events[1].usage


def _split(path: Path) -> tuple[str, list[bytes], list[bytes]]:
    lines = _lines(path)
    first_trace = orjson.loads(lines[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    mine = [line for line in lines if first_trace.encode() in line]
    others = [line for line in lines if first_trace.encode() not in line]
    return first_trace, mine, others


def _filler(others: list[bytes], copies: int) -> list[bytes]:
    """``copies`` renamed copies of the other traces (fresh trace ids), in file order."""
    ids = {orjson.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] for line in others}
    out = []
    for copy in range(copies):
        for line in others:
            for n, trace_id in enumerate(sorted(ids)):
                line = line.replace(trace_id.encode(), f"{copy:024x}{n:08x}".encode())
            out.append(line)
    return out


def test_spans_of_one_trace_spread_over_many_lines_are_grouped(otlp_new: Path, tmp_path: Path) -> None:
    trace_id, mine, others = _split(otlp_new)
    path = tmp_path / "spread.jsonl"
    path.write_bytes(b"\n".join([mine[0], *_filler(others, 100), *mine[1:]]) + b"\n")
    intake = read_traces(path)
    grouped = [t for t in intake.traces if t.id == trace_id]
    assert len(grouped) == 1 and len(grouped[0].events) == 4
    assert intake.report.traces_read == 1 + 2 * 100
    assert intake.report.duplicate_ids == []


def test_a_span_later_than_the_window_makes_a_second_trace_reported_as_duplicate(
    otlp_new: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from helix.traces import _spans

    monkeypatch.setattr(_spans, "DEFAULT_WINDOW_SPANS", 64)  # the rule, at a size a unit test can afford
    trace_id, mine, others = _split(otlp_new)
    copies = 64 // len(others) + 2
    path = tmp_path / "late.jsonl"
    path.write_bytes(b"\n".join([*mine[1:], *_filler(others, copies), mine[0]]) + b"\n")
    intake = read_traces(path)
    assert [len(t.events) for t in intake.traces if t.id == trace_id] == [3, 1]
    assert [d.id for d in intake.report.duplicate_ids] == [trace_id]


def test_round_trip_through_canonical_jsonl(otlp_new: Path, tmp_path: Path) -> None:
    traces = read_traces(otlp_new).traces
    out = write_traces_jsonl(traces, tmp_path / "canonical.jsonl")
    again = read_traces(out)
    assert again.report.format == "helix"
    assert again.traces == traces


def test_bad_lines_and_bad_spans_are_counted_with_their_line(otlp_new: Path, tmp_path: Path) -> None:
    lines = _lines(otlp_new)
    broken = orjson.loads(lines[1])
    broken["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "not-an-id"
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(
        b"\n".join(
            [lines[0], orjson.dumps(broken), lines[2][:50], b"\xff\xfe", b'{"resourceLogs": []}', *lines[3:]]
        )
        + b"\n"
    )
    report = read_traces(path).report
    by_line = {s.line: s.reason for s in report.skipped}
    assert by_line == {2: "invalid-record", 3: "invalid-json", 4: "invalid-utf8", 5: "unrecognised-record"}
    assert "traceId" in next(s.detail for s in report.skipped if s.line == 2)


# -- fuzzing ------------------------------------------------------------------------------------------------


def _mutate(draw: st.DrawFn, line: bytes) -> bytes:
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return line
    if choice == 1:
        return line[: draw(st.integers(0, max(len(line) - 1, 0)))]
    if choice == 2:
        return line.replace(b'"stringValue":"', b'"stringValue":"' + b"x" * 200_000, 1)
    if choice == 3:
        value = orjson.loads(line)
        span = value["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        key = draw(st.sampled_from(sorted(span)))
        span[key] = draw(st.sampled_from([None, 7, "text", [], {}, [1, "a"], {"x": {"y": []}}]))
        return orjson.dumps(value)
    if choice == 4:
        depth = draw(st.integers(10, 900))
        return b'{"resourceSpans":' + b"[" * depth + b"]" * depth + b"}"
    return line[:10] + b"\xc3\x28" + line[10:]


@st.composite
def _fuzzed_files(draw: st.DrawFn, lines: list[bytes]) -> list[bytes]:
    picked = draw(st.lists(st.sampled_from(lines), min_size=1, max_size=8))
    return [_mutate(draw, line) for line in picked]


def test_fuzzed_files_never_crash_and_every_span_is_read_or_skipped(otlp_new: Path, tmp_path: Path) -> None:
    lines = _lines(otlp_new)
    path = tmp_path / "fuzz.jsonl"

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(_fuzzed_files(lines))
    def check(fuzzed: list[bytes]) -> None:
        # One span per line (SimpleSpanProcessor): every line became exactly one event or was skipped.
        skipped_lines = assert_one_event_or_skip_per_line(path, "otlp", fuzzed)
        for number, line in enumerate(fuzzed, 1):
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                assert number in skipped_lines

    check()
