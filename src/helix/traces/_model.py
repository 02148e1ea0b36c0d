"""The canonical trace model every reader produces and every judge, check and report consumes.

One :class:`Trace` is one agent run: a flat list of :class:`Event` (tree through ``parent_id``), an
optional linear transcript of :class:`Message`, and any :class:`Score` the source already carried
(tau rewards, human labels, ...). Written to disk as one JSON object per line (``version`` = 1).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "TRACE_FORMAT_VERSION",
    "Event",
    "EventKind",
    "Message",
    "Role",
    "Score",
    "Status",
    "ToolCall",
    "Trace",
    "Usage",
]

# Bump when a field changes meaning or is removed (adding optional fields does not need a bump).
TRACE_FORMAT_VERSION = 1

Role = Literal["system", "developer", "user", "assistant", "tool"]
EventKind = Literal["llm", "tool", "agent", "user", "retrieval", "other"]
Status = Literal["ok", "error", "unset"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class Usage(_Model):
    """Token counts, each optional (sources report different subsets)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_write_input_tokens: int | None = None
    reasoning_tokens: int | None = None


class ToolCall(_Model):
    """A tool call requested by an assistant message. ``arguments`` stays a string if it was not valid JSON."""

    id: str | None = None
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class Message(_Model):
    """One chat message of the linear transcript."""

    role: Role
    content: str | None = None
    parts: list[Any] | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None


class Event(_Model):
    """One step of an agent run: an LLM call, a tool call, an agent span, a user turn, ...

    An LLM event's ``input`` holds the messages sent (canonical :class:`Message`-shaped dicts). Span
    readers decode a history resent on every call once per trace, so the LLM events of one trace share
    those dicts: treat them as read-only (copy before editing one).
    """

    id: str
    parent_id: str | None = None
    kind: EventKind
    name: str
    input: Any = None
    output: Any = None
    start: datetime | None = None
    end: datetime | None = None
    status: Status = "unset"
    error: str | None = None
    model: str | None = None
    provider: str | None = None
    usage: Usage | None = None
    cost: float | None = None
    tool_call_id: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)


class Score(_Model):
    """A score the source already attached to the run (a benchmark reward, a human label, ...)."""

    name: str
    value: float | bool | str
    source: str | None = None
    comment: str | None = None


class Trace(_Model):
    """One agent run in Helix's canonical form."""

    version: int = TRACE_FORMAT_VERSION
    id: str
    session_id: str | None = None
    name: str | None = None
    input: Any = None
    output: Any = None
    start: datetime | None = None
    end: datetime | None = None
    status: Status = "unset"
    metadata: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    messages: list[Message] | None = None
    scores: list[Score] = Field(default_factory=list)

    def tool_events(self) -> list[Event]:
        """The tool events, in order."""
        return [e for e in self.events if e.kind == "tool"]
