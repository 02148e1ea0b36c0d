"""Message dialects of exports, shared by the Langfuse, LangSmith and Inspect AI readers.

Messages come in dialects :func:`helix.traces._span_content.messages_of` does not read by
itself (LangChain-serialised messages, Inspect tool calls whose ``function`` is the tool name,
Anthropic ``tool_use`` blocks, OpenAI ``choices`` and LangChain ``generations`` wrappers); they are
reshaped into OpenAI chat messages first.
"""

from __future__ import annotations

from typing import Any

from ._span_content import MessagesOf, item_converter, messages_of, plain_messages
from ._values import decode_json

__all__ = ["chat_messages", "llm_side"]

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
