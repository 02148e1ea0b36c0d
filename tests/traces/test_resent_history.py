"""Histories resent on every LLM call are decoded once per trace; the result must not depend on it.

The oracle: a span read inside its whole trace (where earlier spans of the trace already decoded most of
its history) gives the same LLM event input and output as the same span read alone in a file of its own.
Histories grow, shrink, get edited in the middle and arrive out of order; message texts are chosen to
stress a prefix match on JSON text (brackets, commas, quotes, unicode).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helix.traces import Event, read_traces, write_traces_jsonl

TEXT = st.text(alphabet=st.sampled_from(list('ab ]}[{,:"\\é\n') + ["\u2028", "😀"]), min_size=0, max_size=12)


@st.composite
def _message(draw: st.DrawFn, index: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(["user", "assistant", "call", "tool"]))
    if kind == "call":
        return {
            "role": "assistant",
            "tool_calls": [{"id": f"c{index}", "name": "lookup", "arguments": {"q": draw(TEXT)}}],
        }
    if kind == "tool":
        return {"role": "tool", "tool_call_id": f"c{index}", "content": draw(TEXT)}
    return {"role": kind, "content": draw(TEXT)}


@st.composite
def _calls(draw: st.DrawFn) -> list[tuple[list[dict[str, Any]], dict[str, Any]]]:
    """LLM calls of one run: (input history, output), histories mostly growing, sometimes not."""
    base = [draw(_message(i)) for i in range(draw(st.integers(1, 10)))]
    calls = []
    length = 1
    for _ in range(draw(st.integers(1, 6))):
        change = draw(st.sampled_from(["grow", "grow", "same", "shrink", "edit"]))
        if change == "grow":
            length = min(len(base), length + draw(st.integers(1, 3)))
        elif change == "shrink":
            length = max(1, length - 1)
        history = [dict(m) for m in base[:length]]
        if change == "edit":
            history[draw(st.integers(0, length - 1))] = {"role": "user", "content": draw(TEXT)}
        calls.append((history, {"role": "assistant", "content": draw(TEXT)}))
    return calls


def _parts(message: dict[str, Any]) -> dict[str, Any]:
    if message["role"] == "tool":
        parts = [
            {"type": "tool_call_response", "id": message["tool_call_id"], "response": message["content"]}
        ]
    elif "tool_calls" in message:
        parts = [{"type": "tool_call", **call} for call in message["tool_calls"]]
    else:
        parts = [{"type": "text", "content": message["content"]}]
    return {"role": message["role"], "parts": parts}


def _openai(message: dict[str, Any]) -> dict[str, Any]:
    if "tool_calls" not in message:
        return message
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for c in message["tool_calls"]
        ],
    }


def _json_text(value: Any, style: int) -> str:
    """JSON text in one of the styles writers use: compact, with spaces, or indented; style 3 is broken
    (a trailing comma in a list: not JSON, so not messages, inside a trace or alone)."""
    if style == 0:
        return orjson.dumps(value).decode()
    if style == 1:
        return json.dumps(value, ensure_ascii=False)
    if style == 3 and isinstance(value, list) and value:
        return orjson.dumps(value).decode()[:-1] + ", ]"
    return json.dumps(value, indent=2) + "\n"


def otlp_line(step: int, history: list[dict[str, Any]], output: dict[str, Any], style: int) -> bytes:
    def attr(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    span = {
        "traceId": "ab" * 16,
        "spanId": f"{step + 1:016x}",
        "parentSpanId": "ff" * 8,
        "name": "chat m",
        "kind": 3,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + step),
        "attributes": [
            attr("gen_ai.operation.name", "chat"),
            attr(
                "gen_ai.system_instructions", _json_text([{"type": "text", "content": "be brief ]"}], style)
            ),
            attr("gen_ai.input.messages", _json_text([_parts(m) for m in history], style)),
            attr("gen_ai.output.messages", _json_text([_parts(output)], style)),
        ],
    }
    return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})


def agents_line(step: int, history: list[dict[str, Any]], output: dict[str, Any], style: int) -> bytes:
    del style
    return orjson.dumps(
        {
            "object": "trace.span",
            "id": f"span_{step}",
            "trace_id": "trace_1",
            "parent_id": "span_root",
            "started_at": f"2026-05-04T10:15:{step:02d}+00:00",
            "span_data": {
                "type": "generation",
                "input": [_openai(m) for m in history],
                "output": [output],
            },
        }
    )


def langfuse_line(step: int, history: list[dict[str, Any]], output: dict[str, Any], style: int) -> bytes:
    return orjson.dumps(
        {
            "id": f"obs-{step}",
            "trace_id": "lf-1",
            "parent_observation_id": "lf-root",
            "type": "GENERATION",
            "start_time": f"2026-05-04 10:15:{step:02d}.000000",
            "input": _json_text([_openai(m) for m in history], style),
            "output": _json_text(output, style),
        }
    )


def langsmith_line(step: int, history: list[dict[str, Any]], output: dict[str, Any], style: int) -> bytes:
    del style
    return orjson.dumps(
        {
            "id": f"00000000-0000-4000-8000-{step + 1:012d}",
            "trace_id": "00000000-0000-4000-8000-000000000000",
            "parent_run_id": "00000000-0000-4000-8000-000000000000",
            "run_type": "llm",
            "start_time": f"2026-05-04T10:15:{step:02d}",
            "inputs": {"messages": [_openai(m) for m in history]},
            "outputs": {"choices": [{"message": output}]},
        }
    )


def phoenix_line(step: int, history: list[dict[str, Any]], output: dict[str, Any], style: int) -> bytes:
    del style
    attrs: dict[str, Any] = {"openinference.span.kind": "LLM"}
    for n, message in enumerate(history):
        attrs[f"llm.input_messages.{n}.message.role"] = message["role"]
        if message.get("content") is not None:
            attrs[f"llm.input_messages.{n}.message.content"] = message["content"]
        for c, call in enumerate(message.get("tool_calls", [])):
            key = f"llm.input_messages.{n}.message.tool_calls.{c}.tool_call"
            attrs[f"{key}.id"] = call["id"]
            attrs[f"{key}.function.name"] = call["name"]
            attrs[f"{key}.function.arguments"] = json.dumps(call["arguments"])
    attrs["llm.output_messages.0.message.role"] = "assistant"
    attrs["llm.output_messages.0.message.content"] = output["content"]
    return orjson.dumps(
        {
            "name": "llm",
            "context": {"trace_id": "t1", "span_id": f"s{step}"},
            "parent_id": "root",
            "start_time": f"2026-05-04T10:15:{step:02d}+00:00",
            "attributes": attrs,
        }
    )


WRITERS = {
    "otlp": otlp_line,
    "openai-agents": agents_line,
    "langfuse": langfuse_line,
    "langsmith": langsmith_line,
    "openinference": phoenix_line,
}


def _llm_events(path: Path, fmt: str) -> dict[str, tuple[Any, Any]]:
    intake = read_traces(path, format=fmt)
    assert intake.report.skipped == []
    events: list[Event] = [e for trace in intake.traces for e in trace.events if e.kind == "llm"]
    return {e.id: (e.input, e.output) for e in events}


@pytest.mark.parametrize("fmt", sorted(WRITERS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    calls=_calls(),
    styles=st.lists(st.integers(0, 3), min_size=6, max_size=6),
    order=st.randoms(use_true_random=False),
)
def test_a_span_reads_the_same_inside_its_trace_as_alone(
    fmt: str,
    calls: list[tuple[list[dict[str, Any]], dict[str, Any]]],
    styles: list[int],
    order: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    directory = tmp_path_factory.mktemp(fmt)
    lines = [WRITERS[fmt](step, h, o, styles[step]) for step, (h, o) in enumerate(calls)]
    if order.random() < 0.3:
        order.shuffle(lines)  # spans may arrive in any order
    together = directory / "trace.jsonl"
    together.write_bytes(b"\n".join(lines) + b"\n")
    seen = _llm_events(together, fmt)
    alone: dict[str, tuple[Any, Any]] = {}
    for index, line in enumerate(lines):
        single = directory / f"span{index}.jsonl"
        single.write_bytes(line + b"\n")
        alone.update(_llm_events(single, fmt))
    assert seen == alone
    if 3 not in styles[: len(calls)]:
        assert all(isinstance(inputs, list) and inputs for inputs, _ in seen.values())


@pytest.mark.parametrize("fmt", ["otlp", "openai-agents", "langfuse", "langsmith"])
def test_a_growing_history_is_decoded_once_and_shared(fmt: str, tmp_path: Path) -> None:
    conversation = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} [x], {{y}}"} for i in range(12)
    ]
    calls = [(conversation[: 2 * k + 1], {"role": "assistant", "content": f"answer {k}"}) for k in range(6)]
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(WRITERS[fmt](step, h, o, 1) + b"\n" for step, (h, o) in enumerate(calls)))
    (trace,) = read_traces(path, format=fmt).traces
    inputs = [e.input for e in trace.events if e.kind == "llm"]
    system = 1 if fmt == "otlp" else 0  # the OTLP writer sends system instructions too
    assert [len(i) for i in inputs] == [system + 2 * k + 1 for k in range(6)]
    first = inputs[0][-1]
    assert all(later[len(inputs[0]) - 1] is first for later in inputs[1:])  # one dict, not six copies
    assert [m.content for m in trace.messages or []][-2:] == ["turn 10 [x], {y}", "answer 5"]


@pytest.mark.parametrize("fmt", ["openai-agents", "langsmith"])
def test_a_deeply_nested_history_item_repeated_across_spans_is_read(fmt: str, tmp_path: Path) -> None:
    """Comparing a 1,000-level item with its copy in the next span exceeds Python's recursion limit:
    the read goes on (the memo converts it afresh) and the trace is written and read back."""
    deep = b"[" * 1000 + b"]" * 1000
    history = [{"role": "user", "content": "hi", "x": "__DEEP__"}]
    lines = [WRITERS[fmt](step, history, {"role": "assistant", "content": "ok"}, 0) for step in range(3)]
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"".join(line.replace(b'"__DEEP__"', deep) + b"\n" for line in lines))
    intake = read_traces(path, format=fmt)
    assert intake.report.skipped == [] and len(intake.traces) == 1
    inputs = [e.input for e in intake.traces[0].events if e.kind == "llm"]
    assert [[m["content"] for m in i] for i in inputs] == [["hi"]] * 3
    written = write_traces_jsonl(intake.traces, tmp_path / "out.jsonl")
    assert len(read_traces(written, format="helix").traces) == 1
