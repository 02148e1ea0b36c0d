"""Shared builders for the trace tests: realistic traces and chat records made through the public API."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

from helix.traces import Event, Message, Score, ToolCall, Trace, Usage


def _trace(i: int) -> Trace:
    call = ToolCall(id=f"call_{i}", name="get_order", arguments={"order_id": f"#W{i}"})
    return Trace(
        id=f"trace-{i}",
        name="support-agent",
        input=f"Where is order #W{i}?",
        output="It ships tomorrow.",
        status="ok",
        metadata={"user_id": f"u{i}", "tags": ["prod"]},
        events=[
            Event(id="e0", kind="user", name="user", input=f"Where is order #W{i}?"),
            Event(
                id="e1",
                kind="llm",
                name="chat",
                model="gpt-4o-2024-08-06",
                usage=Usage(input_tokens=120, output_tokens=15),
                output=[{"role": "assistant", "tool_calls": [call.model_dump(mode="json")]}],
            ),
            Event(
                id="e2",
                parent_id="e1",
                kind="tool",
                name="get_order",
                input={"order_id": f"#W{i}"},
                output="Error: order not found" if i % 3 == 0 else '{"status": "shipped"}',
                status="error" if i % 3 == 0 else "ok",
                tool_call_id=f"call_{i}",
            ),
            Event(id="e3", kind="llm", name="chat", output=[{"role": "assistant", "content": "Tomorrow."}]),
        ],
        messages=[
            Message(role="user", content=f"Where is order #W{i}?"),
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", content='{"status": "shipped"}', tool_call_id=f"call_{i}"),
            Message(role="assistant", content="It ships tomorrow."),
        ],
        scores=[Score(name="resolved", value=True, source="human")],
    )


def _chat(i: int, *, error: bool = False, args: str | None = None) -> list[dict[str, Any]]:
    arguments = args if args is not None else orjson.dumps({"city": f"City{i}"}).decode()
    return [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "user", "content": f"Weather in City{i}?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": arguments},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": f"call_{i}",
            "content": '{"error": "timeout"}' if error else '{"temp_c": 21}',
        },
        {"role": "assistant", "content": f"It is 21C in City{i}."},
    ]


@pytest.fixture
def make_trace() -> Callable[[int], Trace]:
    """A realistic multi-event trace (user, llm with a tool call, tool result, final llm)."""
    return _trace


@pytest.fixture
def make_chat() -> Callable[..., list[dict[str, Any]]]:
    """An OpenAI chat conversation with one tool call (``error=True`` makes the result an error)."""
    return _chat


@pytest.fixture(scope="session")
def span_writers() -> ModuleType:
    """``fixtures_spans/writers.py``: span files written by the real writers (OTel SDK, Agents SDK)."""
    path = Path(__file__).parent / "fixtures_spans" / "writers.py"
    spec = importlib.util.spec_from_file_location("span_writers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
