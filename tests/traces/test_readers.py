"""Each reader turns its format into canonical traces: events per message, linked tool calls, scores."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from helix.traces import Trace, iter_traces, read_traces, write_traces_jsonl


def test_helix_round_trip(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    traces = [make_trace(i) for i in range(5)]
    path = write_traces_jsonl(traces, tmp_path / "runs.jsonl")
    intake = read_traces(path)
    assert intake.report.format == "helix"
    assert intake.traces == traces
    assert intake.report.records_skipped == 0


def test_helix_round_trip_gz_is_compressed_and_deterministic(
    tmp_path: Path, make_trace: Callable[[int], Trace]
) -> None:
    traces = [make_trace(i) for i in range(5)]
    first = write_traces_jsonl(traces, tmp_path / "a.jsonl.gz")
    second = write_traces_jsonl(traces, tmp_path / "b.jsonl.gz")
    assert first.read_bytes()[:2] == b"\x1f\x8b"
    assert first.read_bytes() == second.read_bytes()
    assert read_traces(first, format="helix").traces == traces


def test_write_then_read_empty_list(tmp_path: Path) -> None:
    path = write_traces_jsonl([], tmp_path / "none.jsonl")
    assert path.read_bytes() == b""
    assert read_traces(path).traces == []


def test_openai_messages_events_and_links(tmp_path: Path, make_chat: Callable[..., Any]) -> None:
    path = tmp_path / "chats.jsonl"
    path.write_bytes(orjson.dumps(make_chat(7, error=True)) + b"\n")
    (trace,) = read_traces(path).traces
    assert [e.kind for e in trace.events] == ["other", "user", "llm", "tool", "llm"]
    assert trace.input == "Weather in City7?"
    assert trace.output == "It is 21C in City7."
    assert trace.messages is not None and len(trace.messages) == 5
    llm = trace.events[2]
    assert llm.output[0]["tool_calls"][0] == {
        "id": "call_7",
        "name": "get_weather",
        "arguments": {"city": "City7"},
    }
    tool = trace.events[3]
    assert tool.name == "get_weather"
    assert tool.tool_call_id == "call_7"
    assert tool.input == {"city": "City7"}
    assert tool.output == '{"error": "timeout"}'
    assert tool.status == "error"
    assert trace.metadata["source_format"] == "openai-messages"


def test_openai_object_records_keep_id_and_metadata(tmp_path: Path, make_chat: Callable[..., Any]) -> None:
    path = tmp_path / "chats.jsonl"
    records = [
        {"id": "conv-1", "model": "gpt-4o", "metadata": {"tenant": "acme"}, "messages": make_chat(1)},
        {"messages": make_chat(2)},
    ]
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in records) + b"\n")
    first, second = read_traces(path).traces
    assert first.id == "conv-1"
    assert first.metadata["tenant"] == "acme"
    assert first.metadata["model"] == "gpt-4o"
    assert second.id.startswith("chats:L2:")  # stable synthetic id: file stem, line, content hash
    assert read_traces(path).traces[1].id == second.id


def test_openai_json_array_file_and_single_conversation(
    tmp_path: Path, make_chat: Callable[..., Any]
) -> None:
    array = tmp_path / "convs.json"
    array.write_bytes(orjson.dumps([{"messages": make_chat(1)}, make_chat(2)], option=orjson.OPT_INDENT_2))
    intake = read_traces(array)
    assert [t.input for t in intake.traces] == ["Weather in City1?", "Weather in City2?"]
    single = tmp_path / "one.json"
    single.write_bytes(orjson.dumps(make_chat(3), option=orjson.OPT_INDENT_2))
    (trace,) = read_traces(single).traces
    assert len(trace.events) == 5


def test_tool_arguments_that_are_not_json_stay_strings(tmp_path: Path, make_chat: Callable[..., Any]) -> None:
    path = tmp_path / "chats.jsonl"
    path.write_bytes(orjson.dumps(make_chat(1, args="city=Paris")) + b"\n")
    (trace,) = read_traces(path).traces
    assert trace.messages is not None
    assert trace.messages[2].tool_calls[0].arguments == "city=Paris"
    assert trace.events[3].input == "city=Paris"


@pytest.mark.parametrize(
    ("content", "is_error"),
    [
        ("Error: order not found", True),
        ("error - user id missing", True),
        ('{"error": "timeout"}', True),
        ('{"error": null, "ok": true}', False),
        ("Errors found: none", False),
        ('{"status": "shipped"}', False),
        ("The order had an error last week but is fine now.", False),
    ],
)
def test_tool_error_heuristic(
    tmp_path: Path, make_chat: Callable[..., Any], content: str, is_error: bool
) -> None:
    chat = make_chat(1)
    chat[3]["content"] = content
    path = tmp_path / "chats.jsonl"
    path.write_bytes(orjson.dumps(chat) + b"\n")
    (trace,) = read_traces(path).traces
    tool = trace.tool_events()[0]
    assert (tool.status == "error") is is_error
    assert (tool.error is not None) is is_error


def test_content_parts_are_joined_and_kept(tmp_path: Path) -> None:
    parts = [{"type": "text", "text": "Look at"}, {"type": "image_url", "image_url": {"url": "x"}}]
    chat = [{"role": "user", "content": parts}, {"role": "assistant", "content": "A cat."}]
    path = tmp_path / "chats.jsonl"
    path.write_bytes(orjson.dumps(chat) + b"\n")
    (trace,) = read_traces(path).traces
    assert trace.messages is not None
    assert trace.messages[0].content == "Look at"
    assert trace.messages[0].parts == parts


def _tau_records(make_chat: Callable[..., Any]) -> list[dict[str, Any]]:
    return [
        {
            "task_id": 4,
            "trial": t,
            "reward": float(t % 2),
            "info": {
                "task": {"user_id": "mia", "instruction": "Book a flight", "actions": [], "outputs": []},
                "source": "user",
                "user_cost": 0.01,
                "reward_info": {"reward": float(t % 2), "info": {"r_actions": float(t % 2)}, "actions": []},
            },
            "traj": make_chat(t),
        }
        for t in range(2)
    ] + [{"task_id": 5, "trial": 0, "reward": 0.0, "info": {"error": "boom", "traceback": "..."}, "traj": []}]


def test_tau_bench_records(tmp_path: Path, make_chat: Callable[..., Any]) -> None:
    path = tmp_path / "tool-calling-gpt-4o.json"
    path.write_bytes(orjson.dumps(_tau_records(make_chat)))
    intake = read_traces(path)
    assert intake.report.format == "tau-bench"
    first, second, crashed = intake.traces
    assert first.id == "tool-calling-gpt-4o:4:0"
    assert [(s.name, s.value, s.source) for s in second.scores] == [
        ("reward", 1.0, "tau-bench"),
        ("r_actions", 1.0, "tau-bench"),
    ]
    assert first.metadata["_task"]["instruction"] == "Book a flight"
    assert first.input == "Weather in City0?"
    assert crashed.status == "error"
    assert crashed.metadata["error"] == "boom"
    assert crashed.events == []


@pytest.mark.parametrize("fmt", ["openai-messages", "tau-bench"])
def test_gz_for_every_format(tmp_path: Path, make_chat: Callable[..., Any], fmt: str) -> None:
    payload = (
        orjson.dumps(_tau_records(make_chat)) if fmt == "tau-bench" else orjson.dumps(make_chat(1)) + b"\n"
    )
    path = tmp_path / "data.json.gz"
    path.write_bytes(gzip.compress(payload))
    plain = tmp_path / "data.json"
    plain.write_bytes(payload)
    assert read_traces(path).traces == read_traces(plain).traces
    assert read_traces(path).report.format == fmt


def test_iter_traces_streams_and_fills_the_report(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    from helix.traces import IntakeReport

    path = write_traces_jsonl([make_trace(i) for i in range(6)], tmp_path / "runs.jsonl")
    report = IntakeReport()
    stream = iter_traces(path, report=report)
    assert next(stream).id == "trace-0"
    assert report.traces_read == 1
    rest = list(stream)
    assert len(rest) == 5
    assert report.traces_read == 6
    assert report.tools == {"get_order": 6}
    assert report.error_tool_results == 2  # traces 0 and 3
    assert report.tool_errors == {"get_order": 2}
    assert (report.turns.min, report.turns.median, report.turns.max) == (1, 1, 1)
    assert (report.events.n, report.events.median) == (6, 4)
