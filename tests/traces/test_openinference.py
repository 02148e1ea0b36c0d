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
from helix._exceptions import UsageError
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


def _agent_trace_checks(traces: list[Any]) -> None:
    assert len(traces) == 2
    for run, trace in enumerate(sorted(traces, key=lambda t: t.session_id or "")):
        kinds = {event.name: event.kind for event in trace.events}
        assert kinds == {
            "CodeAgent.run": "agent",
            "Step 1": "other",
            "LiteLLMModel.generate": "llm",
            "get_weather": "tool",
        }
        (root,) = [event for event in trace.events if event.parent_id is None]
        assert root.name == "CodeAgent.run" and trace.output == f"It is 21C in City{run}."
        (llm,) = [event for event in trace.events if event.kind == "llm"]
        assert llm.usage is not None and llm.usage.input_tokens == 42 and llm.model == "gpt-4o"
        (tool,) = trace.tool_events()
        assert tool.tool_call_id == f"call_{run}" and tool.status == ("error" if run % 2 else "unset")
        assert trace.messages is not None and trace.messages[1].content == f"Weather in City{run}?"


def test_phoenix_rest_spans_are_detected_as_openinference_and_read(
    tmp_path: Path, span_writers: ModuleType
) -> None:
    """GET /v1/projects/{p}/spans: a GlobalID 'id', 'events', flat dotted attributes and the kind only in
    'span_kind'. Detected as Helix JSONL before, so every line was skipped and 0 traces read."""
    spans = span_writers.phoenix_rest_spans(span_writers.openinference_otel_spans(2))
    assert spans[0]["id"] and "openinference.span.kind" not in spans[0]["attributes"]
    lines = _jsonl(tmp_path / "spans.jsonl", spans)
    detection = detect_format(lines)
    assert detection.format == "openinference", detection.reason
    intake = read_traces(lines)
    assert intake.report.records_skipped == 0
    _agent_trace_checks(intake.traces)
    page = tmp_path / "page.json"
    page.write_bytes(orjson.dumps({"data": spans, "next_cursor": None}))
    assert detect_format(page).format == "openinference"
    _agent_trace_checks(read_traces(page).traces)


def test_helix_detection_needs_a_valid_trace(tmp_path: Path) -> None:
    """An object with a string 'id' and 'events' is not Helix JSONL unless it validates as a Trace."""
    path = _jsonl(tmp_path / "x.jsonl", [{"id": "a", "events": [{"at": 1}], "kind": "page"}])
    with pytest.raises(UsageError):
        detect_format(path)


@pytest.mark.parametrize("dialect", ["collector", "phoenix"])
def test_one_document_per_trace_with_nested_child_spans(
    tmp_path: Path, span_writers: ModuleType, dialect: str
) -> None:
    """{"trace_id": ..., "spans": [{..., "child_spans": [...]}]}: how smolagents runs instrumented with
    OpenInference are published (TRAIL), with OTel-collector columns or Phoenix span keys."""
    spans = span_writers.openinference_otel_spans(2)
    documents = span_writers.nested_trace_documents(spans)
    if dialect == "phoenix":
        rest = {span["context"]["span_id"]: span for span in span_writers.phoenix_rest_spans(spans)}

        def as_phoenix(node: dict[str, Any]) -> dict[str, Any]:
            out = {k: v for k, v in rest[node["span_id"]].items() if k != "parent_id"}  # nesting says it
            out["child_spans"] = [as_phoenix(child) for child in node["child_spans"]]
            return out

        documents = [
            {"trace_id": d["trace_id"], "spans": [as_phoenix(s) for s in d["spans"]]} for d in documents
        ]
    paths = []
    for index, document in enumerate(documents):
        path = tmp_path / f"trace-{index}.json"
        path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
        assert detect_format(path).format == "openinference"
        paths.append(path)
    traces = [trace for path in paths for trace in read_traces(path).traces]
    _agent_trace_checks(traces)
    (tool,) = [e for t in traces for e in t.tool_events() if e.status == "error"]
    assert "TimeoutError" in (tool.error or "")
    both = tmp_path / "both.jsonl"
    both.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in documents))
    _agent_trace_checks(read_traces(both).traces)
