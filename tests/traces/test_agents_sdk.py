"""OpenAI Agents SDK span exports, produced offline by the SDK itself (``Span.export()``)."""

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


@pytest.fixture(scope="module")
def agents_file(tmp_path_factory: pytest.TempPathFactory, span_writers: ModuleType) -> Path:
    return Path(span_writers.write_agents_sdk(tmp_path_factory.mktemp("agents") / "agents.jsonl", runs=3))


def _records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_sdk_export_is_detected_and_builds_one_trace_per_run(agents_file: Path) -> None:
    records = _records(agents_file)
    assert records[0]["object"] == "trace.span" and records[-1]["object"] == "trace"
    assert detect_format(agents_file).format == "openai-agents"
    intake = read_traces(agents_file)
    assert intake.report.skipped == [] and intake.report.traces_read == 3
    trace = intake.traces[0]
    assert trace.id.startswith("trace_")
    assert trace.name == "Weather workflow" and trace.session_id == "conv_0"
    assert trace.metadata["user"] == "u0" and trace.metadata["source_format"] == "openai-agents"
    assert [e.kind for e in trace.events] == ["agent", "llm", "tool", "llm", "other"]
    assert trace.input == "Weather in City0?" and trace.output == "Done for City0."
    assert trace.status == "ok"


def test_generation_usage_tool_link_and_python_repr_output(agents_file: Path) -> None:
    traces = read_traces(agents_file).traces
    llm = traces[0].events[1]
    assert llm.model == "gpt-4o"
    assert llm.usage is not None and (llm.usage.input_tokens, llm.usage.total_tokens) == (42, 59)
    tool = traces[0].tool_events()[0]
    assert tool.tool_call_id == "call_0"  # function spans have no call id: linked by name and order
    assert tool.input == {"city": "City0"}
    assert tool.output == {"temp_c": 21, "city": "City0"}  # str(dict) read as a literal, not executed
    failed = traces[1].tool_events()[0]
    assert failed.status == "error" and failed.error is not None and "timeout" in failed.error
    handoff = traces[0].events[-1]
    assert (handoff.name, handoff.input, handoff.output) == ("handoff", "WeatherBot", "Escalation")
    assert traces[0].messages is not None
    assert [(m.role, m.tool_call_id) for m in traces[0].messages] == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("tool", "call_0"),
        ("assistant", None),
    ]


def test_ingest_batches_json_arrays_and_gzip(agents_file: Path, tmp_path: Path) -> None:
    expected = read_traces(agents_file).traces
    batch = tmp_path / "ingest.json"
    batch.write_text(json.dumps({"data": _records(agents_file)}, indent=1))
    assert detect_format(batch).format == "openai-agents"
    assert read_traces(batch).traces == expected
    array = tmp_path / "array.json"
    array.write_bytes(orjson.dumps(_records(agents_file)))
    assert read_traces(array).traces == expected
    assert read_traces(write_traces_jsonl(expected, tmp_path / "c.jsonl.gz")).traces == expected


def test_spans_without_their_parent_are_roots_and_bad_records_are_counted(
    agents_file: Path, tmp_path: Path
) -> None:
    records = _records(agents_file)
    agent_ids = {r["id"] for r in records if r.get("span_data", {}).get("type") == "agent"}
    kept = [r for r in records if r.get("id") not in agent_ids]
    kept.insert(1, {"object": "trace.span", "id": 7, "trace_id": "t", "span_data": {}})
    kept.insert(2, {"object": "response"})
    path = tmp_path / "orphans.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in kept) + b"not json\n")
    intake = read_traces(path)
    assert all(t.metadata["orphan_spans"] == 4 for t in intake.traces)
    assert [(s.line, s.reason) for s in intake.report.skipped] == [
        (2, "invalid-record"),
        (3, "unrecognised-record"),
        (len(kept) + 1, "invalid-json"),
    ]


@st.composite
def _fuzzed(draw: st.DrawFn, records: list[dict[str, Any]]) -> list[bytes]:
    spans = [r for r in records if r["object"] == "trace.span"]
    out: list[bytes] = []
    for record in draw(st.lists(st.sampled_from(spans), min_size=1, max_size=8)):
        choice = draw(st.integers(0, 5))
        record = json.loads(json.dumps(record))
        if choice == 1:
            key = draw(st.sampled_from(sorted(record)))
            record[key] = draw(st.sampled_from([None, 3, "x", [], {}, {"type": 5}]))
        elif choice == 2:
            data = record["span_data"]
            key = draw(st.sampled_from(sorted(data)))
            data[key] = draw(
                st.sampled_from([None, 3, "(" * 5000, "{'a': " * 400, "z" * 200_000, [[[]]], {"k": []}])
            )
        line = orjson.dumps(record)
        if choice == 3:
            depth = draw(st.integers(5, 1000))
            line = line.replace(
                b'"span_data":{', b'"span_data":{"deep":' + b"[" * depth + b"]" * depth + b",", 1
            )
        if choice == 4:
            line = line[: draw(st.integers(0, len(line) - 1))]
        elif choice == 5:
            line = line[:3] + b"\xc0\xaf" + line[3:]
        out.append(line)
    return out


def test_fuzzed_exports_never_crash_and_every_span_is_read_or_skipped(
    agents_file: Path, tmp_path: Path
) -> None:
    records = _records(agents_file)
    path = tmp_path / "fuzz.jsonl"

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(_fuzzed(records))
    def check(lines: list[bytes]) -> None:
        assert_one_event_or_skip_per_line(path, "openai-agents", lines)

    check()


def test_a_runner_trace_takes_its_input_from_the_user_not_the_task_span(
    tmp_path: Path, span_writers: ModuleType
) -> None:
    """A real Runner.run (Chat Completions model, loopback server): the SDK wraps the run in a custom
    'task' span whose data dict was taken as the trace input."""
    from helix.models.testing import ScriptedLLMServer

    question = "What's the weather in Paris?"
    with ScriptedLLMServer.running_in_thread(script=["It is sunny in Paris."]) as server:
        path = span_writers.write_agents_runner(tmp_path / "run.jsonl", server.base_url, question)
    (trace,) = read_traces(path).traces
    assert trace.input == question and trace.output == "It is sunny in Paris."
    assert trace.name == "Agent workflow"
    root = next(event for event in trace.events if event.parent_id is None)
    assert root.kind == "agent" and root.input is None and "usage" in root.attributes
    assert [event.kind for event in trace.events] == ["agent", "agent", "other", "llm"]


def test_a_response_span_keeps_the_model_snapshot_that_answered(tmp_path: Path) -> None:
    """A processor that keeps the Responses-API response (the SDK's ResponseSpanData.response) records
    the served snapshot; the llm event carries it, the requested alias stays in the attributes."""
    from openai.types.responses import Response, ResponseOutputMessage, ResponseOutputText

    response = Response(
        id="resp_1",
        created_at=0,
        model="gpt-4o-2024-08-06",
        object="response",
        output=[
            ResponseOutputMessage(
                id="msg_1",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text="Sunny.", annotations=[])],
            )
        ],
        parallel_tool_calls=False,
        tool_choice="auto",
        tools=[],
    )
    span = {
        "object": "trace.span",
        "id": "span_1",
        "trace_id": "trace_1",
        "parent_id": None,
        "started_at": "2026-05-04T10:15:00+00:00",
        "ended_at": "2026-05-04T10:15:01+00:00",
        "span_data": {
            "type": "response",
            "model": "gpt-4o",
            "response_id": "resp_1",
            "response": response.model_dump(mode="json"),
        },
        "error": None,
    }
    path = tmp_path / "spans.jsonl"
    path.write_bytes(orjson.dumps(span) + b"\n")
    (trace,) = read_traces(path).traces
    (llm,) = trace.events
    assert llm.model == "gpt-4o-2024-08-06" and llm.attributes["requested_model"] == "gpt-4o"
    assert llm.output[0]["content"] == "Sunny."
