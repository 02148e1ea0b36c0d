"""Records a conversation as canonical trace messages and events, with seeded timestamps."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

import orjson

from ..traces import Event, Message, ToolCall

__all__ = ["AGENT_MODEL", "AGENT_PROVIDER", "Transcript"]

AGENT_MODEL = "support-shop-scripted-agent-v1"
AGENT_PROVIDER = "helix.examples"


class Transcript:
    """Appends OpenAI-style chat messages and one :class:`Event` per message.

    Customer turns are ``user`` events, assistant turns ``llm`` events (``output`` = the message), tool
    results ``tool`` events whose ``tool_call_id`` matches the assistant's call and whose parent is the
    ``llm`` event that asked for it. Time advances by seeded, plausible durations from ``start``.
    """

    def __init__(self, *, start: datetime, rng: random.Random) -> None:
        self.start = start
        self._now = start
        self._rng = rng
        self.messages: list[Message] = []
        self.events: list[Event] = []
        self._calls = 0
        self._parents: dict[str, str] = {}

    def _advance(self, low_ms: int, high_ms: int) -> tuple[datetime, datetime]:
        begin = self._now
        self._now = begin + timedelta(milliseconds=self._rng.randint(low_ms, high_ms))
        return begin, self._now

    def _event_id(self) -> str:
        return f"ev-{len(self.events) + 1:02d}"

    def user(self, text: str) -> None:
        """A customer turn."""
        begin, end = self._advance(3_000, 40_000)
        self.messages.append(Message(role="user", content=text))
        self.events.append(
            Event(
                id=self._event_id(),
                kind="user",
                name="customer",
                output=text,
                start=begin,
                end=end,
                status="ok",
            )
        )

    def assistant(self, text: str | None, call: tuple[str, dict[str, Any]] | None = None) -> str | None:
        """An assistant turn with optional text and at most one tool call; returns the call id."""
        begin, end = self._advance(600, 3_200)
        calls: list[ToolCall] = []
        call_id: str | None = None
        if call is not None:
            self._calls += 1
            call_id = f"call_{self._calls:02d}"
            calls.append(ToolCall(id=call_id, name=call[0], arguments=dict(call[1])))
        message = Message(role="assistant", content=text, tool_calls=calls)
        previous = self.messages[-1].model_dump(mode="json", exclude_defaults=True) if self.messages else None
        self.messages.append(message)
        event_id = self._event_id()
        if call_id is not None:
            self._parents[call_id] = event_id
        self.events.append(
            Event(
                id=event_id,
                kind="llm",
                name="assistant",
                input=previous,
                output=message.model_dump(mode="json", exclude_defaults=True),
                start=begin,
                end=end,
                status="ok",
                model=AGENT_MODEL,
                provider=AGENT_PROVIDER,
            )
        )
        return call_id

    def tool(self, call_id: str, name: str, arguments: dict[str, Any], result: dict[str, Any]) -> None:
        """The result of the tool call ``call_id``."""
        begin, end = self._advance(40, 700)
        error = result.get("error") if not result.get("ok", False) else None
        self.messages.append(
            Message(
                role="tool",
                content=orjson.dumps(result, option=orjson.OPT_SORT_KEYS).decode(),
                tool_call_id=call_id,
                name=name,
            )
        )
        self.events.append(
            Event(
                id=self._event_id(),
                parent_id=self._parents[call_id],
                kind="tool",
                name=name,
                input=dict(arguments),
                output=result,
                start=begin,
                end=end,
                status="error" if error else "ok",
                error=f"{error['code']}: {error['message']}" if isinstance(error, dict) else None,
                tool_call_id=call_id,
            )
        )

    @property
    def now(self) -> datetime:
        """The time of the end of the last recorded step."""
        return self._now
