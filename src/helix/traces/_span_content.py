"""Decoding span content: JSON-in-strings, times, dotted keys, and messages of every dialect -> canonical.

Shared by the span readers (OTLP, OpenInference, OpenAI Agents SDK). Messages come out as plain dicts in
the shape of :class:`Message`, so a reader validates a whole trace in one call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from ._chat import tool_arguments
from ._depth import bounded
from ._values import decode_json

__all__ = [
    "CANONICAL_ROLES",
    "Convert",
    "MessagesOf",
    "flatten",
    "from_unix_nanos",
    "item_converter",
    "make_message",
    "message_items",
    "messages_of",
    "nest",
    "nest_fields",
    "parse_time",
    "plain_messages",
    "to_messages",
]

_MAX_DEPTH = 48  # deeper values are kept as they are instead of being walked (fuzzed or hostile input)
_ROLES = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
}
CANONICAL_ROLES = frozenset(_ROLES.values())

Convert = Callable[[Any], list[dict[str, Any]]]
"""One source item of a message list -> its canonical message dicts (zero, one or more)."""


# -- small decoders ----------------------------------------------------------------------------------------


def from_unix_nanos(value: Any) -> datetime | None:
    """A UTC datetime from nanoseconds since the epoch (an int or a decimal string); ``None`` if not one."""
    if isinstance(value, str):
        if not value.isdigit():
            return None
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return None
    try:
        return datetime.fromtimestamp(value / 1e9, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def parse_time(value: Any) -> datetime | None:
    """A tz-aware datetime from an ISO string (no zone = UTC), a datetime, or epoch nanoseconds."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value[:1].isdigit() and not value.isdigit():
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    return from_unix_nanos(value)


def _flat_already(value: dict[Any, Any]) -> bool:
    """Whether ``value`` has only string keys and no object or list values (type checks run in C)."""
    return set(map(type, value)) <= {str} and not _CONTAINERS & set(map(type, value.values()))


_CONTAINERS = {dict, list}


def flatten(
    value: Any, prefix: str = "", out: dict[str, Any] | None = None, depth: int = 0
) -> dict[str, Any]:
    """Dotted keys for nested objects (lists of objects get numeric segments); scalars and lists kept."""
    flat: dict[str, Any] = {} if out is None else out
    if isinstance(value, dict) and depth < _MAX_DEPTH:
        if not prefix and "" not in value and _flat_already(value):
            flat.update(value)  # dotted already (an OpenInference REST export): copied in C
            return flat
        for key, item in value.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(item, dict | list):
                flatten(item, name, flat, depth + 1)
            elif name:  # a scalar: what the recursion would do, without the call
                flat[name] = item
    elif (
        isinstance(value, list)
        and value
        and prefix
        and depth < _MAX_DEPTH
        and all(isinstance(item, dict) for item in value)
    ):
        for index, item in enumerate(value):
            flatten(item, f"{prefix}.{index}", flat, depth + 1)
    elif prefix:
        flat[prefix] = value
    return flat


def nest(flat: dict[str, Any], prefix: str) -> Any:
    """The value under ``prefix`` rebuilt from dotted keys; numeric segments become list positions."""
    dotted = prefix + "."
    start = len(dotted)
    return nest_fields({key[start:]: value for key, value in flat.items() if key.startswith(dotted)})


def nest_fields(fields: dict[str, Any]) -> Any:
    """``fields`` (dotted keys) rebuilt as one value; numeric segments become list positions."""
    root: dict[str, Any] = {}
    for key, value in fields.items():
        node = root
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return _listify(root, 0) if root else None


def _listify(node: Any, depth: int) -> Any:
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return node
    if node:
        for key in node:
            if not key.isdigit():
                break
        else:
            return [_listify(node[key], depth + 1) for key in sorted(node, key=int)]
    return {key: _listify(item, depth + 1) for key, item in node.items()}


# -- messages ----------------------------------------------------------------------------------------------


def _text(content: Any) -> tuple[str | None, list[Any] | None]:
    if content is None or isinstance(content, str):
        return content, None
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                part = part.get("message_content", part)  # OpenInference contents
                if isinstance(part, dict):
                    for key in ("text", "content", "refusal"):
                        text = part.get(key)
                        if isinstance(text, str) and part.get("type") not in ("reasoning", "thinking"):
                            texts.append(text)
                            break
        return ("\n".join(texts) if texts else None), content
    return orjson.dumps(bounded(content), default=str).decode(), None


def _call(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    if "tool_call" in raw:  # OpenInference nests the call under "tool_call"
        raw = raw["tool_call"]
        if not isinstance(raw, dict):
            return None
    fn = raw.get("function")
    spec = fn if isinstance(fn, dict) else raw
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        return None
    call_id = raw["id"] if "id" in raw else raw.get("call_id")
    if isinstance(call_id, str):
        pass
    elif isinstance(call_id, int):
        call_id = str(call_id)
    else:
        call_id = None
    arguments = spec.get("arguments")
    return {
        "id": call_id,
        "name": name,
        "arguments": arguments if isinstance(arguments, dict) else tool_arguments(arguments),
    }


def make_message(role: str, content: Any = None, **extra: Any) -> dict[str, Any]:
    text, parts = _text(content)
    return {
        "role": role,
        "content": text,
        "parts": parts,
        "tool_calls": extra.get("tool_calls", []),
        "tool_call_id": extra.get("tool_call_id"),
        "name": extra.get("name"),
    }


def to_messages(raw: Any, default_role: str | None = None) -> list[dict[str, Any]]:
    """Canonical :class:`Message` dicts from one source message, whatever its dialect.

    Reads OpenAI chat messages, Responses-API items (``function_call``/``function_call_output``), GenAI
    semconv messages (``parts`` of text/tool_call/tool_call_response) and OpenInference messages
    (``message.role``, ``message.tool_calls``...). Unknown shapes give no message.
    """
    if not isinstance(raw, dict):
        return [make_message(default_role, raw)] if default_role and isinstance(raw, str) else []
    inner = raw.get("message")
    if isinstance(inner, dict) and "role" in inner:
        raw = inner
    item_type = raw.get("type")
    if item_type == "function_call":
        call = _call(raw)
        return [make_message("assistant", None, tool_calls=[call])] if call else []
    if item_type == "function_call_output":
        call_id = raw.get("call_id")
        output = raw.get("output")
        return [make_message("tool", output, tool_call_id=str(call_id) if call_id is not None else None)]
    role_value = raw.get("role", default_role)
    role = _ROLES.get(role_value) if isinstance(role_value, str) else None
    if role is None:
        return []
    name = raw.get("name")
    if not isinstance(name, str):
        name = None
    parts = raw.get("parts")
    if isinstance(parts, list):
        return _from_parts(role, parts, name)
    raw_calls = raw.get("tool_calls")
    calls = (
        [c for c in (_call(tc) for tc in raw_calls) if c is not None] if isinstance(raw_calls, list) else []
    )
    content = raw["content"] if "content" in raw else raw.get("contents")
    if "tool_call_id" in raw:
        tool_call_id = raw["tool_call_id"]
    else:
        tool_call_id = raw.get("id") if role == "tool" else None
    text, content_parts = (content, None) if content is None or isinstance(content, str) else _text(content)
    return [
        {
            "role": role,
            "content": text,
            "parts": content_parts,
            "tool_calls": calls,
            "tool_call_id": str(tool_call_id) if isinstance(tool_call_id, str | int) else None,
            "name": name,
        }
    ]


def _from_parts(role: str, parts: list[Any], name: str | None) -> list[dict[str, Any]]:
    """A GenAI semconv message: text parts joined, tool calls collected, each tool response its own message."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    responses: list[dict[str, Any]] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            text = part.get("content")
            if isinstance(text, str):
                texts.append(text)
        elif kind == "tool_call":
            call = _call(part)
            if call is not None:
                calls.append(call)
        elif kind == "tool_call_response":
            result = part.get("response", part.get("result"))
            call_id = part.get("id")
            responses.append(
                make_message(
                    "tool",
                    result if isinstance(result, str) or result is None else orjson.dumps(result).decode(),
                    tool_call_id=str(call_id) if isinstance(call_id, str | int) else None,
                    name=name,
                )
            )
    if responses and not texts and not calls:
        return responses
    message = {
        "role": role,
        "content": "\n".join(texts) if texts else None,
        "parts": parts,
        "tool_calls": calls,
        "tool_call_id": None,
        "name": name,
    }
    return [message, *responses]


def item_converter(
    default_role: str | None = None,
    reshape: Callable[[Any], Any] | None = None,
    role: str | None = None,
) -> Convert:
    """The per-item conversion of a message list: ``reshape`` first, :func:`to_messages`, then ``role``.

    Cached, so equal arguments give the same function (the :class:`HistoryMemo` key of a conversion).
    """
    return _converter(default_role, reshape, role)


@functools.cache  # positional arguments only, so equal calls of item_converter share one cache entry
def _converter(default_role: str | None, reshape: Callable[[Any], Any] | None, role: str | None) -> Convert:
    def convert(item: Any) -> list[dict[str, Any]]:
        messages = to_messages(reshape(item) if reshape is not None else item, default_role)
        if role is not None:
            for message in messages:
                message["role"] = role
        return messages

    return convert


def message_items(value: Any) -> Any:
    """The item list of a message-list value: ``value`` decoded, a ``{"messages": [...]}`` object's list,
    or one message object as a list of one; anything else unchanged (not a list: no messages)."""
    value = decode_json(value)
    if isinstance(value, dict):
        inner = value.get("messages")
        return inner if isinstance(inner, list) else [value]
    return value


def messages_of(
    value: Any, default_role: str | None = None, convert: Convert | None = None
) -> list[dict[str, Any]] | None:
    """A message list from a list (or a ``{"messages": [...]}`` object, or one message); ``None`` if none.

    Each item goes through ``convert`` (default: :func:`to_messages` with ``default_role``).
    """
    items = message_items(value)
    if not isinstance(items, list):
        return None
    one = convert if convert is not None else _converter(default_role, None, None)
    out: list[dict[str, Any]] = []
    for item in items:
        out.extend(one(item))
    return out or None


MessagesOf = Callable[[Any, Convert], "list[dict[str, Any]] | None"]
"""How a reader turns a message-list value into messages with a conversion: :func:`plain_messages`, or
:meth:`HistoryMemo.messages` bound to a trace (see :meth:`helix.traces._spans.SpanGrouper.history`)."""


def plain_messages(value: Any, convert: Convert) -> list[dict[str, Any]] | None:
    """:func:`messages_of` with a conversion, no memory across spans."""
    return messages_of(value, convert=convert)
