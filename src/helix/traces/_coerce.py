"""Tolerant field coercion and message dialects shared by the Langfuse, LangSmith and Inspect AI readers.

Exported records are loosely typed (a cost as a decimal string, counts as floats, ids as integers), so
every field goes through a coercion that returns ``None`` rather than raising: one odd field must not
lose the record. Messages come in dialects :func:`helix.traces._spans.messages_of` does not read by
itself (LangChain-serialised messages, Inspect tool calls whose ``function`` is the tool name,
Anthropic ``tool_use`` blocks, OpenAI ``choices`` and LangChain ``generations`` wrappers); they are
reshaped into OpenAI chat messages first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import ValidationError

from ._chat import BadRecord
from ._depth import bounded
from ._model import Trace
from ._span_content import MessagesOf, decode_json, item_converter, messages_of, plain_messages

__all__ = [
    "chat_messages",
    "decode_io",
    "int_like",
    "kind_of",
    "llm_side",
    "number",
    "text_or_none",
    "usage_from",
    "validate_trace",
]

_MAX_ERRORS_SHOWN = 3


def batch_items(value: Any, key: str) -> list[Any]:
    """The records of one JSON value: a page ``{key: [...]}``, a bare list, or a single record."""
    if isinstance(value, dict) and isinstance(value.get(key), list):
        return list(value[key])
    return list(value) if isinstance(value, list) else [value]


def item_prefix(index: int, line: int | None, n_items: int) -> str:
    """How a skip names one record among several on a line ("" when the line holds one)."""
    return f"item {index} of the line: " if line is not None and n_items > 1 else ""


def kind_of(value: Any) -> str:
    """A JSON-ish name for the type of ``value`` (for messages)."""
    return "null" if value is None else type(value).__name__


def text_or_none(value: Any) -> str | None:
    """A string field: strings as they are, integers as text, anything else ``None``."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def number(value: Any) -> float | None:
    """A finite float from a number or a numeric string (``"0.000275"``); ``None`` otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            result = float(value)
        except OverflowError:
            return None
    elif isinstance(value, str) and len(value) < 64:
        try:
            result = float(value)
        except ValueError:
            return None
    else:
        return None
    return result if math.isfinite(result) else None


def int_like(value: Any) -> int | None:
    """A non-negative count from an int or an integral float; ``None`` otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 2**63 else None
    if isinstance(value, float) and value.is_integer() and 0 <= value < 2**63:
        return int(value)
    return None


def usage_from(raw: Any, keys: Mapping[str, tuple[str, ...]]) -> dict[str, int] | None:
    """Token usage from ``raw`` given, per canonical :class:`Usage` field, the source keys to try in order."""
    if not isinstance(raw, dict):
        return None
    usage: dict[str, int] = {}
    for field, candidates in keys.items():
        for key in candidates:
            count = int_like(raw.get(key))
            if count is not None:
                usage[field] = count
                break
    return usage or None


def decode_io(value: Any) -> Any:
    """Exported input/output text decoded: a JSON object, array or string literal (``'"hi"'``) is parsed."""
    if isinstance(value, str) and value[:1] == '"':
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return decode_json(value)


def validate_trace(fields: dict[str, Any]) -> Trace:
    """Validate converted fields into a :class:`Trace`; a failure becomes :class:`BadRecord`."""
    fields = bounded(fields)
    try:
        return Trace.model_validate(fields)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        shown = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors[:_MAX_ERRORS_SHOWN]
        )
        raise BadRecord(f"cannot build a trace: {shown}") from None


# -- message dialects -----------------------------------------------------------------------------------

_LC_ROLES = {
    "HumanMessage": "user",
    "HumanMessageChunk": "user",
    "AIMessage": "assistant",
    "AIMessageChunk": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
}


def _lc_calls(calls: Any) -> Any:
    """LangChain tool calls ``{id, name, args}`` as OpenAI ``{id, function: {name, arguments}}``."""
    if not isinstance(calls, list):
        return calls
    return [
        {
            "id": c.get("id"),
            "function": {"name": c.get("name"), "arguments": c.get("args", c.get("arguments"))},
        }
        if isinstance(c, dict) and "function" not in c and "name" in c
        else c
        for c in calls
    ]


def _reshape(raw: Any) -> Any:
    """One message in OpenAI chat shape, whatever dialect it came in (unknown shapes unchanged)."""
    if not isinstance(raw, dict):
        return raw
    if "role" not in raw:
        if raw.get("lc") == 1 and isinstance(raw.get("id"), list) and isinstance(raw.get("kwargs"), dict):
            cls = raw["id"][-1] if raw["id"] else None
            body = dict(raw["kwargs"])
            role = _LC_ROLES.get(cls) if isinstance(cls, str) else None
        elif isinstance(raw.get("type"), str) and "content" in raw:
            body = dict(raw)
            role = _LC_ROLES.get(raw["type"])
        else:
            return raw
        if role is None:
            return raw
        body["role"] = role
        body["tool_calls"] = _lc_calls(body.get("tool_calls"))
        return body
    calls = raw.get("tool_calls")
    message = raw
    if isinstance(calls, list) and any(
        isinstance(c, dict) and isinstance(c.get("function"), str) for c in calls
    ):
        message = dict(raw)  # Inspect: {"id", "function": "<tool name>", "arguments": {...}}
        message["tool_calls"] = [
            {"id": c.get("id"), "function": {"name": c["function"], "arguments": c.get("arguments")}}
            if isinstance(c, dict) and isinstance(c.get("function"), str)
            else c
            for c in calls
        ]
    content = raw.get("content")
    if raw.get("role") == "assistant" and isinstance(content, list) and not calls:
        uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        if uses:  # Anthropic content blocks
            message = dict(message)
            message["tool_calls"] = [
                {"id": b.get("id"), "function": {"name": b.get("name"), "arguments": b.get("input")}}
                for b in uses
            ]
    return message


_RESHAPED = item_converter(None, _reshape)


def chat_messages(
    value: Any, default_role: str | None = None, messages: MessagesOf = plain_messages
) -> list[dict[str, Any]] | None:
    """Canonical :class:`Message` dicts from any message-ish value; ``None`` when it holds none.

    Accepts a message list, ``{"messages": [...]}``, LangChain's list of message lists (the first
    prompt), one message, an OpenAI completion (``choices``), LangChain ``generations`` and, with
    ``default_role``, a plain string (one message of that role). ``messages`` decodes the message list
    (a trace's memo when the reader has one).
    """
    if isinstance(value, str) and value[:1] == "[":
        found = messages(value, _RESHAPED)  # the common case, a JSON array of messages
        if found:
            return found
    value = decode_json(value)
    if isinstance(value, str):
        return messages_of([{"role": default_role, "content": value}]) if default_role and value else None
    if isinstance(value, dict):
        if isinstance(value.get("choices"), list):
            value = [c.get("message", c) if isinstance(c, dict) else c for c in value["choices"]]
        elif isinstance(value.get("generations"), list):
            flat = [
                g for batch in value["generations"] for g in (batch if isinstance(batch, list) else [batch])
            ]
            value = [
                g["message"]
                if isinstance(g, dict) and isinstance(g.get("message"), dict)
                else {"role": "assistant", "content": g.get("text")}
                if isinstance(g, dict)
                else g
                for g in flat
            ]
        elif isinstance(value.get("messages"), list):
            value = value["messages"]
        elif "role" in _reshape(value):
            value = [value]
        else:
            return None
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(batch, list) for batch in value):
        value = value[0]
        if not isinstance(value, list):
            return None
    return messages(value, _RESHAPED)


def llm_side(
    value: Any,
    default_role: str,
    attributes: dict[str, Any],
    key: str,
    messages: MessagesOf = plain_messages,
) -> Any:
    """An LLM event's input or output: canonical messages when ``value`` holds them.

    Anything else that is a list goes to ``attributes[key]`` instead (the transcript and tool linking
    read an LLM event's list as messages); other values stay as they are.
    """
    found = chat_messages(value, default_role, messages)
    if found is not None:
        return found
    value = decode_json(value)  # JSON text that held no messages
    if isinstance(value, list):
        attributes[key] = value
        return None
    return value
