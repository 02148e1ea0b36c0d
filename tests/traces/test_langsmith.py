"""LangSmith runs: ``read_run(load_child_runs=True)`` trees and flat ``list_runs`` exports, both serialised
by the langsmith SDK's own ``Run`` model; LangChain-serialised messages, thread ids, feedback, fuzzing."""

from __future__ import annotations

import os
import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_values import NOT_TEXT, ODD, expand_deep, read_every_skip
from helix.traces import detect_format, read_traces, write_traces_jsonl

FUZZ_RECORDS = int(os.environ.get("HELIX_FUZZ_RECORDS", "1500"))
T0 = datetime(2026, 5, 4, 10, 15, 2, 123000, tzinfo=UTC)


def _dotted(*parts: tuple[datetime, uuid.UUID]) -> str:
    return ".".join(f"{t.strftime('%Y%m%dT%H%M%S%fZ')}{rid}" for t, rid in parts)


def run_tree(i: int) -> dict[str, Any]:
    """One agent run with an LLM call (OpenAI messages) asking for a tool and the tool failing."""
    from langsmith.schemas import Run

    root_id, llm_id, tool_id = (uuid.UUID(int=i * 10 + k) for k in (1, 2, 3))
    t_llm, t_tool = T0 + timedelta(milliseconds=20), T0 + timedelta(seconds=1, milliseconds=200)
    llm = Run(
        id=llm_id,
        trace_id=root_id,
        parent_run_id=root_id,
        dotted_order=_dotted((T0, root_id), (t_llm, llm_id)),
        name="ChatOpenAI",
        run_type="llm",
        status="success",
        start_time=t_llm,
        end_time=t_llm + timedelta(seconds=1),
        inputs={"messages": [{"role": "user", "content": f"Weather in City{i}?"}], "model": "gpt-4o"},
        outputs={
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"call_{i}",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
            "usage_metadata": {"input_tokens": 42, "output_tokens": 17, "total_tokens": 59},
        },
        extra={
            "metadata": {"ls_provider": "openai", "ls_model_name": "gpt-4o"},
            "invocation_params": {"model": "gpt-4o", "temperature": 0},
        },
        prompt_tokens=42,
        completion_tokens=17,
        total_tokens=59,
        total_cost="0.000275",
        child_runs=[],
    )
    tool = Run(
        id=tool_id,
        trace_id=root_id,
        parent_run_id=root_id,
        dotted_order=_dotted((T0, root_id), (t_tool, tool_id)),
        name="get_weather",
        run_type="tool",
        status="error",
        start_time=t_tool,
        end_time=t_tool + timedelta(milliseconds=860),
        inputs={"city": "Paris"},
        outputs=None,
        error="TimeoutError('upstream timed out')",
        child_runs=[],
    )
    root = Run(
        id=root_id,
        trace_id=root_id,
        dotted_order=_dotted((T0, root_id)),
        name="WeatherAgent",
        run_type="chain",
        status="success",
        start_time=T0,
        end_time=T0 + timedelta(seconds=2, milliseconds=207),
        inputs={"messages": [{"role": "user", "content": f"Weather in City{i}?"}]},
        outputs={"output": "I could not reach the weather service."},
        extra={"metadata": {"thread_id": f"conv-{i}"}},
        tags=["prod"],
        session_id=uuid.UUID(int=999),  # the project, not the conversation
        feedback_stats={
            "correctness": {"n": 2, "avg": 0.5},
            "vibe": {"n": 1, "avg": None, "values": {"meh": 1}},
        },
        child_runs=[tool, llm],
    )
    record: dict[str, Any] = orjson.loads(root.model_dump_json())
    return record


def _flat(tree: dict[str, Any]) -> list[dict[str, Any]]:
    runs, stack = [], [tree]
    while stack:
        run = stack.pop()
        stack.extend(run.get("child_runs") or [])
        runs.append({**run, "child_runs": None})
    return runs


def _check_tree_trace(trace: Any, i: int) -> None:
    root_id = str(uuid.UUID(int=i * 10 + 1))
    assert trace.id == root_id and trace.name == "WeatherAgent"
    assert trace.session_id == f"conv-{i}"
    assert trace.metadata["project_id"] == str(uuid.UUID(int=999))
    assert trace.input == [{"role": "user", "content": f"Weather in City{i}?"}]
    assert trace.output == "I could not reach the weather service."
    assert trace.status == "ok" and trace.start is not None and trace.start.tzinfo is not None
    assert [e.kind for e in trace.events] == ["agent", "llm", "tool"]
    llm, tool = trace.events[1], trace.events[2]
    assert llm.model == "gpt-4o" and llm.provider == "openai" and llm.cost == pytest.approx(0.000275)
    assert llm.usage is not None and (llm.usage.input_tokens, llm.usage.output_tokens) == (42, 17)
    assert llm.input[0]["content"] == f"Weather in City{i}?"
    assert tool.tool_call_id == f"call_{i}" and tool.status == "error" and "upstream" in (tool.error or "")
    assert tool.input == {"city": "Paris"} and tool.parent_id == root_id
    assert sorted((s.name, s.value) for s in trace.scores) == [("correctness", 0.5), ("vibe", "meh")]


def test_nested_child_runs_from_the_sdk_model(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(run_tree(i)) for i in range(3)))
    assert detect_format(path).format == "langsmith"
    intake = read_traces(path)
    assert intake.report.records_skipped == 0 and len(intake.traces) == 3
    for i, trace in enumerate(intake.traces):
        _check_tree_trace(trace, i)
    assert intake.report.tools == {"get_weather": 3} and intake.report.error_tool_results == 3


def test_flat_runs_children_first_and_interleaved(tmp_path: Path) -> None:
    runs = [run for i in range(2) for run in _flat(run_tree(i))]
    random.Random(3).shuffle(runs)
    path = tmp_path / "runs.json"
    path.write_bytes(orjson.dumps(runs))  # a JSON array, as list_runs exports are saved
    intake = read_traces(path)
    assert intake.report.format == "langsmith" and intake.report.records_skipped == 0
    by_id = {t.id: t for t in intake.traces}
    for i in range(2):
        _check_tree_trace(by_id[str(uuid.UUID(int=i * 10 + 1))], i)


def test_langchain_messages_v2_shape_and_orphans(tmp_path: Path) -> None:
    root, llm, tool = "r-1", "l-1", "t-1"
    records = [
        {
            "id": llm,
            "run_type": "LLM",  # the v2 query API upper-cases run types and statuses
            "parent_run_ids": [root],
            "trace_id": root,
            "name": "ChatAnthropic",
            "status": "SUCCESS",
            "start_time": "2026-05-04T10:15:03",
            "inputs": {
                "messages": [
                    [
                        {
                            "lc": 1,
                            "type": "constructor",
                            "id": ["langchain", "schema", "messages", "SystemMessage"],
                            "kwargs": {"content": "Be brief."},
                        },
                        {
                            "lc": 1,
                            "type": "constructor",
                            "id": ["langchain", "schema", "messages", "HumanMessage"],
                            "kwargs": {"content": "Refund order 7"},
                        },
                    ]
                ]
            },
            "outputs": {
                "generations": [
                    [
                        {
                            "text": "",
                            "message": {
                                "lc": 1,
                                "type": "constructor",
                                "id": ["langchain", "schema", "messages", "AIMessage"],
                                "kwargs": {
                                    "content": "",
                                    "tool_calls": [{"id": "tc-9", "name": "refund", "args": {"order": 7}}],
                                },
                            },
                        }
                    ]
                ],
                "llm_output": {
                    "token_usage": {"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15},
                    "model_name": "claude-x",
                },
            },
        },
        {
            "id": tool,
            "run_type": "tool",
            "parent_run_id": llm,
            "trace_id": root,
            "name": "refund",
            "start_time": "2026-05-04T10:15:04",
            "inputs": {"input": "{'order': 7}"},
            "outputs": {
                "output": {
                    "lc": 1,
                    "type": "constructor",
                    "id": ["ToolMessage"],
                    "kwargs": {"content": "refunded", "tool_call_id": "tc-9"},
                }
            },
        },
        {
            "id": "o-1",
            "run_type": "chain",
            "parent_run_id": "never-exported",
            "trace_id": root,
            "name": "memory",
            "start_time": "2026-05-04T10:15:05",
        },
        {
            "id": root,
            "run_type": "chain",
            "trace_id": root,
            "thread_id": "thread-7",
            "is_root": True,
            "name": "Agent",
            "status": "SUCCESS",
            "start_time": "2026-05-04T10:15:02",
            "inputs": {"input": "Refund order 7"},
            "outputs": {"output": "Done."},
        },
    ]
    path = tmp_path / "v2.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in records))
    intake = read_traces(path)
    (trace,) = intake.traces
    assert trace.session_id == "thread-7" and trace.input == "Refund order 7" and trace.output == "Done."
    assert trace.metadata["orphan_spans"] == 1
    llm_event = next(e for e in trace.events if e.kind == "llm")
    assert [m["role"] for m in llm_event.input] == ["system", "user"]
    assert llm_event.output[0]["tool_calls"] == [{"id": "tc-9", "name": "refund", "arguments": {"order": 7}}]
    assert (
        llm_event.model == "claude-x" and llm_event.usage is not None and llm_event.usage.total_tokens == 15
    )
    tool_event = trace.tool_events()[0]
    assert tool_event.tool_call_id == "tc-9" and tool_event.output == "refunded"
    assert tool_event.parent_id == llm


def test_round_trip_to_canonical_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(run_tree(i)) for i in range(3)))
    intake = read_traces(path)
    again = read_traces(write_traces_jsonl(intake.traces, tmp_path / "out.jsonl.gz"))
    assert [t.model_dump() for t in again.traces] == [t.model_dump() for t in intake.traces]


def test_bad_records_are_counted_with_their_line(tmp_path: Path) -> None:
    good = orjson.dumps(run_tree(1))
    lines = [
        good,  # 1
        good[:100],  # 2 truncated
        b"3",  # 3
        b'{"name": "no run type"}',  # 4
        b'{"run_type": "llm", "id": null, "trace_id": null}',  # 5 no id anywhere
        b"",  # 6 blank
        b'{"run_type": "chain", "id": "x", "child_runs": [{"run_type": "llm", "id": 5.5}]}',  # 7 bad child id
    ]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines))
    intake = read_traces(path, format="langsmith")
    assert [t.id for t in intake.traces] == [str(uuid.UUID(int=11))]
    assert [(s.line, s.reason) for s in intake.report.skipped] == [
        (2, "invalid-json"),
        (3, "wrong-type"),
        (4, "unrecognised-record"),
        (5, "invalid-record"),
        (6, "blank-line"),
        (7, "invalid-record"),
    ]


# -- fuzzing -------------------------------------------------------------------------------------------------

_RUN_KEYS = (
    "inputs",
    "outputs",
    "extra",
    "error",
    "status",
    "start_time",
    "total_cost",
    "prompt_tokens",
    "feedback_stats",
    "name",
    "run_type",
    "tags",
)


def _fuzzed_line(i: int, rng: random.Random, odd: Any, not_text: Any) -> bytes:
    record = run_tree(i)
    where = rng.random()
    if where < 0.15:
        record[rng.choice(["id", "trace_id", "dotted_order"])] = not_text  # one id source stays intact
    elif where < 0.5:
        record[rng.choice(_RUN_KEYS)] = odd
    else:
        child = rng.choice(record["child_runs"])
        child[rng.choice((*_RUN_KEYS, "id", "parent_run_id"))] = odd
    raw = expand_deep(orjson.dumps(record))
    cut = rng.random()
    if cut < 0.1:
        raw = raw[: rng.randrange(1, len(raw))]
    elif cut < 0.2:
        at = rng.randrange(len(raw))
        raw = raw[:at] + b"\xed\xa0\x80" + raw[at:]  # a UTF-8-encoded surrogate: invalid UTF-8
    return raw


def _check_accounted(path: Path, n: int) -> None:
    intake = read_every_skip(path, "langsmith")
    ids = {t.id for t in intake.traces}
    skipped = {s.line for s in intake.report.skipped}
    for i in range(n):
        assert (i + 1) in skipped or str(uuid.UUID(int=i * 10 + 1)) in ids, i
    for trace in intake.traces:
        trace.model_dump_json()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), odd=st.lists(st.tuples(ODD, NOT_TEXT), min_size=1, max_size=10))
def test_fuzzed_runs_never_crash_and_are_all_counted(
    tmp_path: Path, seed: int, odd: list[tuple[Any, Any]]
) -> None:
    rng = random.Random(seed)
    lines = [_fuzzed_line(i, rng, value, not_text) for i, (value, not_text) in enumerate(odd)]
    path = tmp_path / f"fuzz-{seed}.jsonl"
    path.write_bytes(b"\n".join(lines))
    _check_accounted(path, len(lines))


def test_bulk_fuzzed_runs(tmp_path: Path) -> None:
    rng = random.Random(9)
    oddities: list[Any] = [
        None,
        False,
        4,
        0.5,
        "",
        "q",
        [2],
        {"k": 2},
        "w" * 3_000,
        "__DEEP_700__",
        "__DEEP_1100__",
    ]
    lines = [
        _fuzzed_line(i, rng, rng.choice(oddities), rng.choice([None, 2.5, [1]])) for i in range(FUZZ_RECORDS)
    ]
    path = tmp_path / "bulk.jsonl"
    path.write_bytes(b"\n".join(lines))
    _check_accounted(path, FUZZ_RECORDS)


def test_an_llm_run_keeps_the_snapshot_that_answered(tmp_path: Path) -> None:
    """wrap_openai records the completion as the run's outputs (its 'model' is the served snapshot) and
    the requested alias as ls_model_name; the llm event took the alias."""
    import openai
    from langsmith.schemas import Run

    from helix.models.testing import ScriptedLLMServer, ScriptedReply

    reply = ScriptedReply(text="Sunny.", served_model="gpt-4o-2024-08-06")
    with ScriptedLLMServer.running_in_thread(script=[reply]) as server:
        with openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0) as client:
            completion = client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "Weather?"}]
            )
    outputs = completion.model_dump()  # what wrap_openai keeps (usage moved to usage_metadata)
    usage = outputs.pop("usage")
    outputs["usage_metadata"] = {
        "input_tokens": usage["prompt_tokens"],
        "output_tokens": usage["completion_tokens"],
        "total_tokens": usage["total_tokens"],
    }
    run_id = uuid.UUID(int=7)
    run = Run(
        id=run_id,
        trace_id=run_id,
        dotted_order=_dotted((T0, run_id)),
        name="ChatOpenAI",
        run_type="llm",
        start_time=T0,
        end_time=T0 + timedelta(seconds=1),
        inputs={"messages": [{"role": "user", "content": "Weather?"}], "model": "gpt-4o"},
        outputs=outputs,
        extra={"metadata": {"ls_provider": "openai", "ls_model_type": "chat", "ls_model_name": "gpt-4o"}},
    )
    path = tmp_path / "runs.jsonl"
    path.write_bytes(run.model_dump_json().encode() + b"\n")
    (trace,) = read_traces(path).traces
    (llm,) = trace.events
    assert llm.model == "gpt-4o-2024-08-06" and llm.attributes["requested_model"] == "gpt-4o"
    assert (
        llm.provider == "openai" and llm.usage is not None and llm.usage.total_tokens == usage["total_tokens"]
    )
