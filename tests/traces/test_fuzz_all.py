"""Every registered reader survives fuzzed input: no crash, and every skipped record counted with a place.

For each format in ``TRACE_FORMATS`` (whoever added it), 10,000 records are derived from valid seed
records of every format by a seeded mutation generator (truncated JSON, wrong types, dropped keys,
nulls, huge strings, deep nesting, invalid UTF-8, junk bytes, whole foreign records), written one per
line, and read with that format forced. A smaller set of pretty-printed whole-file documents covers the
readers' document mode. Deterministic: the generator is seeded per format.
"""

from __future__ import annotations

import copy
import random
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import orjson
import pytest

from helix.traces import TRACE_FORMATS, IntakeReport, SkipReason, iter_traces, write_traces_jsonl
from helix.traces import _stream as stream

RECORDS_PER_READER = 10_000
DOCUMENTS_PER_READER = 60
HUGE = 200_000
_REASONS = set(get_args(SkipReason))
# Readers where one line is one record: every line becomes a trace or a counted skip.
LINE_FORMATS = {"helix", "openai-messages", "tau-bench", "tau2-bench", "mini-swe-agent", "who-and-when"}


def _chat() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "Where is #W1?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": '{"id": "#W1"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "get_order", "content": "Error: not found"},
        {"role": "assistant", "content": "Not found."},
    ]


def _otlp_span(span_id: str, parent: str, op: str) -> dict[str, Any]:
    return {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": span_id,
        "parentSpanId": parent,
        "name": f"{op} gpt-4o",
        "kind": 3,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": op}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}},
        ],
        "status": {"code": 1},
    }


SEEDS: dict[str, list[Any]] = {
    "helix": [
        {
            "version": 1,
            "id": "t1",
            "input": "hi",
            "events": [
                {"id": "e1", "kind": "user", "name": "user", "input": "hi"},
                {"id": "e2", "kind": "tool", "name": "get_order", "input": {"id": 1}, "status": "error"},
            ],
            "scores": [{"name": "reward", "value": 1.0}],
        }
    ],
    "openai-messages": [{"messages": _chat(), "id": "m1"}, _chat()],
    "tau-bench": [
        {
            "task_id": 3,
            "trial": 0,
            "reward": 1.0,
            "info": {"task": {"user_id": "u"}, "reward_info": {"reward": 1.0, "info": {"r_actions": 1.0}}},
            "traj": _chat(),
        }
    ],
    "tau2-bench": [
        {
            "id": "s1",
            "task_id": "7",
            "trial": 0,
            "termination_reason": "user_stop",
            "start_time": "2025-08-01T16:23:24.895557",
            "reward_info": {"reward": 1.0, "reward_breakdown": {"DB": 1.0}},
            "messages": [
                {"role": "assistant", "content": "Hi!", "timestamp": "2025-08-01T16:23:25"},
                {"role": "user", "content": "help", "usage": {"prompt_tokens": 3, "completion_tokens": 1}},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c", "name": "f", "arguments": {"a": 1}, "requestor": "assistant"}],
                },
                {
                    "role": "tool",
                    "tool_messages": [{"role": "tool", "id": "c", "content": "{}", "error": False}],
                },
                {
                    "role": "user",
                    "tool_calls": [{"id": "u", "name": "g", "arguments": {}, "requestor": "user"}],
                },
                {"role": "tool", "id": "u", "requestor": "user", "content": "ok", "error": True},
            ],
        }
    ],
    "mini-swe-agent": [
        {
            "instance_id": "a__a-1",
            "trajectory_format": "mini-swe-agent-1",
            "info": {"exit_status": "Submitted", "submission": "diff", "model_stats": {"instance_cost": 0.1}},
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "<pr_description>\nfix it\n</pr_description>"},
                {"role": "assistant", "content": "THOUGHT: x\n\n```bash\nls\n```", "extra": {"response": {}}},
                {"role": "user", "content": "<returncode>2</returncode>\n<output>\nno\n</output>"},
            ],
        }
    ],
    "who-and-when": [
        {
            "question": "q?",
            "question_ID": "id1",
            "is_correct": False,
            "mistake_agent": "B_Expert",
            "mistake_step": "1",
            "mistake_reason": "r",
            "system_prompt": {"B_Expert": "p"},
            "history": [
                {"name": "A_Expert", "role": "assistant", "content": "```python\nprint(1)\n```"},
                {"name": "Computer_terminal", "role": "user", "content": "exitcode: 1 (execution failed)"},
                {"role": "human", "content": "hello"},
            ],
        }
    ],
    "otlp": [
        {
            "resourceSpans": [
                {
                    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "agent"}}]},
                    "scopeSpans": [
                        {
                            "scope": {"name": "s"},
                            "spans": [
                                _otlp_span("aaaaaaaaaaaaaaaa", "", "invoke_agent"),
                                _otlp_span("bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa", "chat"),
                                _otlp_span("cccccccccccccccc", "aaaaaaaaaaaaaaaa", "execute_tool"),
                            ],
                        }
                    ],
                }
            ]
        }
    ],
    "openinference": [
        {
            "name": "llm",
            "span_kind": "LLM",
            "context": {"trace_id": "t1", "span_id": "s1"},
            "parent_id": None,
            "start_time": "2025-01-01T00:00:00Z",
            "end_time": "2025-01-01T00:00:01Z",
            "status_code": "OK",
            "attributes": {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o",
                "input.value": "hi",
                "output.value": "hello",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "hi",
            },
        }
    ],
    "openai-agents": [
        {
            "object": "trace.span",
            "id": "span_1",
            "trace_id": "trace_1",
            "parent_id": None,
            "started_at": "2025-01-01T00:00:00+00:00",
            "ended_at": "2025-01-01T00:00:01+00:00",
            "span_data": {
                "type": "function",
                "name": "get_weather",
                "input": '{"city": "x"}',
                "output": "sunny",
            },
            "error": None,
        }
    ],
    "langfuse": [
        {
            "id": "tr1",
            "name": "agent",
            "input": "hi",
            "output": "hello",
            "observations": [
                {
                    "id": "o1",
                    "traceId": "tr1",
                    "type": "GENERATION",
                    "name": "chat",
                    "model": "gpt-4o",
                    "parentObservationId": None,
                    "input": [{"role": "user", "content": "hi"}],
                    "output": "hello",
                },
                {
                    "id": "o2",
                    "traceId": "tr1",
                    "type": "TOOL",
                    "name": "search",
                    "parentObservationId": "o1",
                    "level": "ERROR",
                    "statusMessage": "boom",
                },
            ],
            "scores": [{"name": "correct", "value": 1, "dataType": "NUMERIC"}],
            "htmlPath": "/project/p/traces/tr1",
        }
    ],  # fmt: skip
    "langsmith": [
        {
            "id": "r1",
            "name": "agent",
            "run_type": "chain",
            "trace_id": "r1",
            "dotted_order": "20250101T000000000000Zr1",
            "inputs": {"question": "hi"},
            "outputs": {"answer": "hello"},
            "child_runs": [
                {
                    "id": "r2",
                    "name": "chat",
                    "run_type": "llm",
                    "parent_run_id": "r1",
                    "inputs": {},
                    "outputs": {},
                },
                {"id": "r3", "name": "search", "run_type": "tool", "parent_run_id": "r1", "error": "boom"},
            ],
            "feedback_stats": {"correctness": {"n": 1, "avg": 1.0}},
        }
    ],
    "inspect": [
        {
            "version": 2,
            "status": "success",
            "eval": {"task": "t", "model": "mockllm/model", "created": "2025-01-01T00:00:00+00:00"},
            "samples": [
                {
                    "id": 1,
                    "epoch": 1,
                    "input": "hi",
                    "target": "hello",
                    "messages": [
                        {"role": "user", "content": "hi"},
                        {"role": "assistant", "content": "hello"},
                    ],
                    "output": {"model": "mockllm/model", "choices": []},
                    "scores": {"match": {"value": "C"}},
                }
            ],
        }
    ],
}
ALL_SEEDS = [seed for seeds in SEEDS.values() for seed in seeds]
_OTHER_VALUES: list[Any] = [None, True, 0, -1, 2**63, 1.5, "", "x", [], {}, [None], {"": None}]
_BAD_UTF8 = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf0\x28\x8c\x28", b"\x80"]


def _slots(value: Any, limit: int = 400) -> list[tuple[Any, Any]]:
    """(container, key) pairs of ``value``'s nested values, breadth-first, at most ``limit``."""
    found: list[tuple[Any, Any]] = []
    queue = [value]
    while queue and len(found) < limit:
        node = queue.pop(0)
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            found.append((node, key))
            if isinstance(child, dict | list):
                queue.append(child)
    return found


def _structural(rng: random.Random, value: Any) -> Any:
    """One change to a copy of ``value``: a wrong type, a dropped key, a null, a huge string, nesting."""
    value = copy.deepcopy(value)
    slots = _slots(value)
    if not slots:
        return rng.choice(_OTHER_VALUES)
    container, key = rng.choice(slots)
    op = rng.randrange(6)
    if op == 0:
        container[key] = rng.choice(_OTHER_VALUES)
    elif op == 1 and isinstance(container, dict):
        del container[key]
    elif op == 2:
        container[key] = None
    elif op == 3:
        container[key] = "A" * (HUGE if rng.random() < 0.05 else rng.randrange(1, 5000))
    elif op == 4:
        nested: Any = container[key]
        for _ in range(rng.randrange(2, 60)):  # orjson writes at most 255 levels; deeper is op 6 below
            nested = [nested] if rng.random() < 0.5 else {"k": nested}
        container[key] = nested
    else:
        child = container[key]
        container[key] = list(child.values()) if isinstance(child, dict) else {"0": child}
    return value


def _mutate(rng: random.Random, seed: Any) -> bytes:
    """One fuzzed line (never containing a newline)."""
    op = rng.randrange(11)
    if op == 0:
        data = orjson.dumps(seed)
    elif op in (1, 2, 3):
        value = seed
        for _ in range(rng.randrange(1, 4)):
            value = _structural(rng, value)
        data = orjson.dumps(value)
    elif op == 4:  # truncated JSON
        full = orjson.dumps(_structural(rng, seed) if rng.random() < 0.5 else seed)
        data = full[: rng.randrange(len(full))]
    elif op == 5:  # invalid UTF-8 somewhere (often inside a string)
        full = orjson.dumps(seed)
        at = rng.randrange(len(full))
        data = full[:at] + rng.choice(_BAD_UTF8) + full[at:]
    elif op == 6:  # nesting deeper than parsers allow
        depth = rng.choice([300, 1100, 5000])
        data = b"[" * depth + orjson.dumps(seed) + b"]" * depth
    elif op == 7:  # junk bytes
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
    elif op == 8:  # a scalar, an empty container or an empty line
        data = orjson.dumps(rng.choice(_OTHER_VALUES)) if rng.random() < 0.8 else b""
    elif op == 9:  # a valid record of another format
        data = orjson.dumps(rng.choice(ALL_SEEDS))
    else:
        data = _with_deep_value(rng, seed)
    return data.replace(b"\n", b" ").replace(b"\r", b" ")


def _with_deep_value(rng: random.Random, seed: Any, option: int = 0) -> bytes:
    """``seed`` as JSON with one value inside nested deeper than a trace can be written (orjson reads
    1,024 levels, writes 255; pydantic reads 200)."""
    value = copy.deepcopy(seed)
    slots = _slots(value)
    if slots:
        container, key = rng.choice(slots)
        container[key] = "__DEEP__"
    depth = rng.randrange(150, 1000)
    opening, closing = (b"[", b"]") if rng.random() < 0.5 else (b'{"k":', b"}")
    deep = opening * depth + b"1" + closing * depth
    return orjson.dumps(value, option=option).replace(b'"__DEEP__"', deep, 1)


def _records(fmt: str, n: int) -> Iterator[bytes]:
    rng = random.Random(zlib.crc32(fmt.encode()))
    own = SEEDS.get(fmt) or ALL_SEEDS
    for _ in range(n):
        yield _mutate(rng, rng.choice(own) if rng.random() < 0.8 else rng.choice(ALL_SEEDS))


def _check(report: IntakeReport) -> None:
    assert report.records_skipped == len(report.skipped) == sum(report.skipped_by_reason.values())
    for skip in report.skipped:
        assert skip.reason in _REASONS
        assert skip.line is not None or skip.record is not None, skip
        assert skip.detail


@pytest.mark.parametrize("fmt", TRACE_FORMATS)
def test_fuzzed_lines_never_crash_a_reader(fmt: str, tmp_path: Path) -> None:
    lines = list(_records(fmt, RECORDS_PER_READER))
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    report = IntakeReport(examples_per_reason=None)
    traces = list(iter_traces(path, format=fmt, report=report))
    _check(report)
    assert report.traces_read == len(traces)
    if fmt in LINE_FORMATS:
        assert report.traces_read + report.records_skipped == RECORDS_PER_READER
        assert report.traces_read > 0 and report.records_skipped > 0
    _assert_round_trips(traces, tmp_path)


def _assert_round_trips(traces: list[Any], tmp_path: Path) -> None:
    """Whatever was read can be written as Helix JSONL and read back whole (deep values are clipped)."""
    written = write_traces_jsonl(traces, tmp_path / "out.jsonl")
    back = IntakeReport(examples_per_reason=None)
    assert [t.id for t in iter_traces(written, format="helix", report=back)] == [t.id for t in traces]
    assert back.skipped == []


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("fmt", TRACE_FORMATS)
def test_fuzzed_documents_never_crash_a_reader(
    fmt: str, streamed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Documents read whole, and read record by record as big ones are (the streaming size lowered to 0)."""
    if streamed:
        monkeypatch.setattr(stream, "STREAM_DOCUMENT_BYTES", 0)
        monkeypatch.setattr(stream, "FIRST_LINE_BYTES", 64)  # one-line documents count as big too
    rng = random.Random(zlib.crc32(b"doc:" + fmt.encode()))
    own = SEEDS.get(fmt) or ALL_SEEDS
    for i in range(DOCUMENTS_PER_READER):
        seed = rng.choice(own)
        value = _structural(rng, seed) if rng.random() < 0.7 else seed
        if rng.random() < 0.2:
            data = _with_deep_value(rng, value, orjson.OPT_INDENT_2)
        else:
            data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
        if rng.random() < 0.3:
            data = data[: rng.randrange(len(data))]
        if rng.random() < 0.1:
            at = rng.randrange(len(data))
            data = data[:at] + rng.choice(_BAD_UTF8) + data[at:]
        path = tmp_path / f"doc{i}.json"
        path.write_bytes(data)
        report = IntakeReport(examples_per_reason=None)
        traces = list(iter_traces(path, format=fmt, report=report))
        _check(report)
        assert report.traces_read == len(traces)
        _assert_round_trips(traces, tmp_path)
