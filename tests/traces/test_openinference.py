"""Phoenix / OpenInference span exports: JSONL (nested or dotted attributes), REST pages, rows, Parquet."""

from __future__ import annotations

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


def _jsonl(path: Path, records: list[Any]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


@pytest.fixture
def phoenix_file(tmp_path: Path, span_writers: ModuleType) -> Path:
    return _jsonl(tmp_path / "spans.jsonl", span_writers.phoenix_spans(3))


def test_phoenix_jsonl_is_detected_and_builds_trees(phoenix_file: Path) -> None:
    assert detect_format(phoenix_file).format == "openinference"
    intake = read_traces(phoenix_file)
    assert intake.report.skipped == [] and intake.report.traces_read == 3
    trace = intake.traces[0]
    assert [e.kind for e in trace.events] == ["agent", "llm", "tool"]
    assert trace.events[0].parent_id is None
    assert {e.parent_id for e in trace.events[1:]} == {trace.events[0].id}
    assert trace.session_id == "conv_0"
    assert trace.input == "Weather in City0?" and trace.output == "It is 21C in City0."
    assert trace.events[0].attributes["metadata.env"] == "prod"


def test_llm_messages_usage_cost_and_tool_link(phoenix_file: Path) -> None:
    trace = read_traces(phoenix_file).traces[1]
    llm = trace.events[1]
    assert llm.model == "gpt-4o-2024-08-06" and llm.provider == "openai"
    assert llm.usage is not None and (llm.usage.input_tokens, llm.usage.total_tokens) == (42, 59)
    assert llm.cost == pytest.approx(0.000275)
    assert [m["role"] for m in llm.input] == ["system", "user"]
    assert llm.output[0]["tool_calls"] == [
        {"id": "call_1", "name": "get_weather", "arguments": {"city": "City1"}}
    ]
    tool = trace.tool_events()[0]
    assert tool.name == "get_weather" and tool.tool_call_id == "call_1"  # linked by name: no tool.id
    assert tool.input == {"city": "City1"} and tool.output == "21C"
    assert tool.status == "error" and tool.error == "TimeoutError: upstream timed out"
    assert trace.messages is not None
    assert [m.role for m in trace.messages] == ["system", "user", "assistant", "tool"]


def test_rest_page_pretty_document_and_flat_rows_read_the_same(
    phoenix_file: Path, tmp_path: Path, span_writers: ModuleType
) -> None:
    expected = read_traces(phoenix_file).traces
    page = tmp_path / "page.json"
    page.write_text(json.dumps({"data": span_writers.phoenix_spans(3), "next_cursor": None}, indent=2))
    assert detect_format(page).format == "openinference"
    assert [t.id for t in read_traces(page).traces] == [t.id for t in expected]

    rows = _jsonl(tmp_path / "rows.jsonl", span_writers.phoenix_rows(span_writers.phoenix_spans(3)))
    got = read_traces(rows)
    assert got.report.skipped == []
    assert [[e.kind for e in t.events] for t in got.traces] == [[e.kind for e in t.events] for t in expected]
    assert got.traces[1].events[1].usage == expected[1].events[1].usage
    assert got.traces[1].tool_events()[0].tool_call_id == "call_1"


def test_parquet_export_through_pyarrow(tmp_path: Path, span_writers: ModuleType) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "trace_dataset-1.parquet"
    pq.write_table(pa.Table.from_pylist(span_writers.phoenix_rows(span_writers.phoenix_spans(2))), path)
    detection = detect_format(path)
    assert detection.format == "openinference" and "Parquet" in detection.reason
    intake = read_traces(path)
    assert intake.report.skipped == [] and intake.report.traces_read == 2
    trace = intake.traces[0]
    assert [e.kind for e in trace.events] == ["agent", "llm", "tool"]
    assert trace.events[1].cost == pytest.approx(0.000275)
    assert trace.tool_events()[0].tool_call_id == "call_0"


def test_parquet_without_phoenix_columns_is_counted(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "other.parquet"
    pq.write_table(pa.Table.from_pylist([{"a": 1}]), path)
    report = read_traces(path).report
    assert [s.reason for s in report.skipped] == ["unrecognised-record"]
    assert "context.span_id" in report.skipped[0].detail


def test_orphans_and_children_before_parents(tmp_path: Path, span_writers: ModuleType) -> None:
    spans = span_writers.phoenix_spans(2)
    without_root = [
        s for s in spans if not (s["context"]["trace_id"] == f"{0:032x}" and s["span_kind"] == "AGENT")
    ]
    intake = read_traces(_jsonl(tmp_path / "orphans.jsonl", without_root))
    first = next(t for t in intake.traces if t.id == f"{0:032x}")
    assert first.metadata["orphan_spans"] == 2
    assert all(e.parent_id is None for e in first.events)
    assert any("kept as roots" in n for n in intake.report.notes)


def test_round_trip_and_bad_records(phoenix_file: Path, tmp_path: Path, span_writers: ModuleType) -> None:
    traces = read_traces(phoenix_file).traces
    again = read_traces(write_traces_jsonl(traces, tmp_path / "canonical.jsonl.gz"))
    assert again.traces == traces
    bad = tmp_path / "bad.jsonl"
    span = span_writers.phoenix_spans(1)[0]
    bad.write_bytes(
        orjson.dumps(span)
        + b"\n"
        + orjson.dumps({**span, "context": {"trace_id": 5.5, "span_id": "x"}})
        + b"\n[1, 2]\n{\n"
    )
    report = read_traces(bad, format="openinference").report
    assert [(s.line, s.reason) for s in report.skipped] == [
        (2, "invalid-record"),
        (3, "wrong-type"),
        (3, "wrong-type"),
        (4, "invalid-json"),
    ]


_WRONG = [None, 7, "text", [], {}, [1, "a"], {"x": {"y": []}}, "y" * 100_000]


@st.composite
def _fuzzed(draw: st.DrawFn, span_writers: ModuleType) -> list[bytes]:
    spans = span_writers.phoenix_spans(2)
    out: list[bytes] = []
    for span in draw(st.lists(st.sampled_from(spans), min_size=1, max_size=6)):
        choice = draw(st.integers(0, 4))
        if choice == 1:
            key = draw(st.sampled_from(sorted(span)))
            span = {**span, key: draw(st.sampled_from(_WRONG))}
        line = orjson.dumps(span)
        if choice == 2:
            depth = draw(st.integers(5, 1000))
            nested = b'{"llm":' + b"[" * depth + b"]" * depth + b"}"
            line = (
                orjson.dumps({k: v for k, v in span.items() if k != "attributes"})[:-1]
                + b',"attributes":'
                + nested
                + b"}"
            )
        if choice == 3:
            line = line[: draw(st.integers(0, len(line) - 1))]
        elif choice == 4:
            line = line[:5] + b"\xff" + line[5:]
        out.append(line)
    return out


def test_fuzzed_spans_never_crash_and_every_span_is_read_or_skipped(
    tmp_path: Path, span_writers: ModuleType
) -> None:
    path = tmp_path / "fuzz.jsonl"

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(_fuzzed(span_writers))
    def check(lines: list[bytes]) -> None:
        assert_one_event_or_skip_per_line(path, "openinference", lines)

    check()
