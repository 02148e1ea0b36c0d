"""What a code check sees of a trace: its outcome type, and a flat, ordered view of the agent's steps.

A check's view of a trace is its transcript (``Trace.messages``) when the trace has one, else its
events. Either way it becomes one ordered list of :class:`Step`: assistant text, tool calls and tool
results, each carrying the index of the message (or event) it came from, so an explanation can
point at ``message 7`` or ``event 12``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import orjson

from ..traces import Event, Message, Trace

__all__ = [
    "CheckOutcome",
    "CodeCheck",
    "Step",
    "TraceView",
    "final_output",
    "parse_arguments",
    "text_of",
    "trace_view",
]


@dataclass(frozen=True, kw_only=True)
class CheckOutcome:
    """What a code check decided about one trace.

    ``explanation`` becomes the verdict's critique, so it names the tool, the message (or event)
    index and the argument that decided it. ``evidence`` holds those message (or event) indices.
    """

    passed: bool
    explanation: str
    evidence: tuple[int, ...] = ()


class CodeCheck(Protocol):
    """A deterministic check: called with the trace and the criterion's ``args`` as keywords.

    User checks are referenced from a criteria file as ``package.module:function``; they may return
    a :class:`CheckOutcome` or a plain ``bool``. They must not execute anything found in the trace.
    """

    def __call__(self, trace: Trace, /, **args: Any) -> CheckOutcome | bool: ...


StepKind = Literal["text", "call", "result"]


@dataclass(frozen=True, kw_only=True)
class Step:
    """One step of the agent run, in order.

    ``text``: assistant text; ``call``: a tool call (``tool``, ``arguments`` parsed from JSON when
    possible); ``result``: a tool result (``error`` holds the problem when the tool failed).
    """

    kind: StepKind
    index: int
    """Index into ``Trace.messages`` (message view) or ``Trace.events`` (event view)."""
    tool: str | None = None
    arguments: Any = None
    call_id: str | None = None
    text: str = ""
    error: str | None = None
    with_calls: bool = False
    """For ``text``: the same assistant turn also requested tool calls."""


@dataclass(frozen=True, kw_only=True)
class TraceView:
    """The ordered steps of a trace and whether indices point at messages or at events."""

    unit: Literal["message", "event"]
    steps: tuple[Step, ...]
    turns: tuple[int, ...]
    """Indices of the assistant turns: assistant messages, or LLM events in the event view."""

    @property
    def calls(self) -> tuple[Step, ...]:
        """The tool calls, in order."""
        return tuple(s for s in self.steps if s.kind == "call")

    def at(self, index: int) -> str:
        """How an explanation names a location: ``message 3`` or ``event 3``."""
        return f"{self.unit} {index}"

    def at_all(self, indices: Sequence[int]) -> str:
        """``message 3`` / ``messages 3, 7``."""
        if len(indices) == 1:
            return self.at(indices[0])
        return f"{self.unit}s {', '.join(str(i) for i in indices)}"


def parse_arguments(arguments: Any) -> Any:
    """Tool arguments as data: a JSON string is parsed; any other string stays text."""
    if isinstance(arguments, str):
        try:
            return orjson.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def text_of(value: Any) -> str:
    """The human-readable text in a message content, event output or content-block list."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Message):
        return value.content or text_of(value.parts)
    if isinstance(value, dict):
        for key in ("content", "text", "output", "completion", "message"):
            if key in value:
                return text_of(value[key])
        return ""
    if isinstance(value, list | tuple):
        return "\n".join(t for t in (text_of(v) for v in value) if t)
    return str(value)


_ERROR_PREFIX = re.compile(r"^\s*(error|exception|traceback|failed|failure)\b", re.IGNORECASE)


def _error_in_content(content: str | None, parts: list[Any] | None) -> str | None:
    """The problem a tool message reports, judged from its content alone (None when it looks fine)."""
    for part in parts or ():
        if isinstance(part, dict) and part.get("is_error") is True:
            return text_of(part.get("content")) or "tool result marked is_error"
    if not content:
        return None
    parsed = parse_arguments(content) if content.lstrip().startswith("{") else content
    if isinstance(parsed, dict):
        for key in ("error", "error_message", "exception"):
            if parsed.get(key):
                return text_of(parsed[key]) or str(parsed[key])
        if parsed.get("is_error") is True or str(parsed.get("status", "")).lower() in {"error", "failed"}:
            return content
        return None
    if isinstance(parsed, str) and _ERROR_PREFIX.match(parsed):
        return parsed
    return None


def _event_error(event: Event) -> str | None:
    if event.status == "error" or event.error:
        return event.error or text_of(event.output) or "tool event has status error"
    return None


def _message_view(trace: Trace, messages: list[Message]) -> TraceView:
    tool_events = {e.tool_call_id: e for e in trace.events if e.kind == "tool" and e.tool_call_id}
    steps: list[Step] = []
    turns: list[int] = []
    names_by_call: dict[str, str] = {}
    for i, msg in enumerate(messages):
        if msg.role == "assistant":
            turns.append(i)
            text = msg.content or text_of([p for p in msg.parts or () if _is_text_part(p)])
            if text.strip():
                steps.append(Step(kind="text", index=i, text=text, with_calls=bool(msg.tool_calls)))
            for call in msg.tool_calls:
                if call.id:
                    names_by_call[call.id] = call.name
                steps.append(
                    Step(
                        kind="call",
                        index=i,
                        tool=call.name,
                        arguments=parse_arguments(call.arguments),
                        call_id=call.id,
                    )
                )
        elif msg.role == "tool":
            event = tool_events.get(msg.tool_call_id) if msg.tool_call_id else None
            error = (_event_error(event) if event else None) or _error_in_content(msg.content, msg.parts)
            tool = msg.name or names_by_call.get(msg.tool_call_id or "")
            steps.append(
                Step(
                    kind="result",
                    index=i,
                    tool=tool,
                    call_id=msg.tool_call_id,
                    text=msg.content or "",
                    error=error,
                )
            )
    return TraceView(unit="message", steps=tuple(steps), turns=tuple(turns))


def _is_text_part(part: Any) -> bool:
    return isinstance(part, str) or (isinstance(part, dict) and part.get("type") in {"text", "output_text"})


def _llm_output(output: Any) -> tuple[str, bool]:
    """(assistant text, whether it requested tool calls) of an LLM event's output."""
    if isinstance(output, list) and output and all(isinstance(o, dict) and "role" in o for o in output):
        output = output[-1]
    if isinstance(output, Message):
        return output.content or "", bool(output.tool_calls)
    if isinstance(output, dict):
        has_calls = bool(output.get("tool_calls"))
        content = output.get("content")
        if isinstance(content, list):
            has_calls = has_calls or any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)
            content = [b for b in content if _is_text_part(b)]
        return text_of(content if content is not None else output.get("text")), has_calls
    if isinstance(output, list):
        has_calls = any(
            isinstance(b, dict) and b.get("type") in {"tool_use", "function_call"} for b in output
        )
        return text_of([b for b in output if _is_text_part(b)]), has_calls
    return text_of(output), False


def _event_view(trace: Trace) -> TraceView:
    steps: list[Step] = []
    turns: list[int] = []
    for i, event in enumerate(trace.events):
        if event.kind == "tool":
            steps.append(
                Step(
                    kind="call",
                    index=i,
                    tool=event.name,
                    arguments=parse_arguments(event.input),
                    call_id=event.tool_call_id,
                )
            )
            steps.append(
                Step(
                    kind="result",
                    index=i,
                    tool=event.name,
                    call_id=event.tool_call_id,
                    text=text_of(event.output),
                    error=_event_error(event),
                )
            )
        elif event.kind == "llm":
            turns.append(i)
            text, with_calls = _llm_output(event.output)
            if text.strip():
                steps.append(Step(kind="text", index=i, text=text, with_calls=with_calls))
    return TraceView(unit="event", steps=tuple(steps), turns=tuple(turns))


def trace_view(trace: Trace) -> TraceView:
    """The check's view of ``trace``: its messages when present, else its events."""
    if trace.messages:
        return _message_view(trace, trace.messages)
    return _event_view(trace)


def final_output(trace: Trace) -> tuple[str | None, Any, tuple[int, ...], str]:
    """The agent's final output: ``(text, data, evidence, where)``.

    The last assistant message with text (message view), else ``Trace.output``, else the text of the
    last LLM event. ``data`` is the structured value when ``Trace.output`` is not a string. ``text``
    is None when the run produced no output at all.
    """
    if trace.messages:
        for i in range(len(trace.messages) - 1, -1, -1):
            msg = trace.messages[i]
            if msg.role == "assistant":
                text = msg.content or text_of([p for p in msg.parts or () if _is_text_part(p)])
                if text.strip():
                    return text, None, (i,), f"message {i}"
    if trace.output is not None:
        if isinstance(trace.output, str):
            return trace.output, None, (), "the trace output"
        return text_of(trace.output) or json.dumps(trace.output), trace.output, (), "the trace output"
    for i in range(len(trace.events) - 1, -1, -1):
        event = trace.events[i]
        if event.kind == "llm":
            text, _ = _llm_output(event.output)
            if text.strip():
                return text, None, (i,), f"event {i}"
    return None, None, (), "nowhere"
