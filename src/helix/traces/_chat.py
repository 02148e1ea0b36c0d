"""OpenAI-style chat messages -> canonical events and transcript (shared by the message-list formats).

One event per message: ``user`` -> a ``user`` event, ``system``/``developer`` -> ``other``, ``assistant``
-> ``llm`` (the message as output, tool calls kept), ``tool`` -> ``tool`` linked through ``tool_call_id``
to the assistant call that asked for it (input = the call's parsed arguments, name = the tool name).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from ._model import Role
from ._values import BadRecord, shown

__all__ = ["ChatConversion", "convert_chat", "looks_like_tool_error", "tool_arguments"]

_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",  # legacy function-calling result
}
_KNOWN_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name", "function_call"})
_TEXT_PART_KEYS = ("text", "refusal")
_ERROR_DETAIL_CHARS = 500


@dataclass(slots=True)
class ChatConversion:
    """What a message list turns into (events and messages as model-shaped dicts)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    input: str | None = None
    output: str | None = None


def _text_of(content: Any, where: str) -> tuple[str | None, list[Any] | None]:
    """Text and raw parts of a message ``content`` (a string, null, or a list of parts)."""
    if content is None or isinstance(content, str):
        return content, None
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                for key in _TEXT_PART_KEYS:
                    value = part.get(key)
                    if isinstance(value, str):
                        texts.append(value)
                        break
        return ("\n".join(texts) if texts else None), content
    raise BadRecord(
        f"{where}.content is {type(content).__name__}; expected a string, null or a list of parts"
    )


def tool_arguments(raw: Any) -> dict[str, Any] | str:
    """Parsed tool-call arguments: a JSON object string becomes a dict; anything else stays a string."""
    if isinstance(raw, dict):
        return raw
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
        return parsed if isinstance(parsed, dict) else raw
    return orjson.dumps(raw).decode()


def _copy_arguments(arguments: dict[str, Any] | str) -> dict[str, Any] | str:
    """A copy for the tool event, so editing its input never edits the assistant's call (and back)."""
    return dict(arguments) if isinstance(arguments, dict) else arguments


def _tool_calls(message: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The assistant's tool calls as :class:`ToolCall`-shaped dicts (legacy ``function_call`` included)."""
    calls: list[dict[str, Any]] = []
    raw_calls = message.get("tool_calls")
    if raw_calls is not None:
        if not isinstance(raw_calls, list):
            raise BadRecord(f"{where}.tool_calls is {type(raw_calls).__name__}; expected a list")
        for j, call in enumerate(raw_calls):
            if not isinstance(call, dict):
                raise BadRecord(f"{where}.tool_calls[{j}] is {type(call).__name__}; expected an object")
            fn = call.get("function")
            spec = fn if isinstance(fn, dict) else call  # tau2 puts name/arguments on the call itself
            name = spec.get("name")
            if not isinstance(name, str) or not name:
                raise BadRecord(f"{where}.tool_calls[{j}] has no function name")
            call_id = call.get("id")
            calls.append(
                {
                    "id": str(call_id) if call_id is not None else None,
                    "name": name,
                    "arguments": tool_arguments(spec.get("arguments")),
                }
            )
    legacy = message.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        calls.append(
            {"id": None, "name": legacy["name"], "arguments": tool_arguments(legacy.get("arguments"))}
        )
    return calls


def looks_like_tool_error(content: Any, message: dict[str, Any] | None = None) -> bool:
    """Whether a tool result clearly reports an error.

    True when the source flags it (``error: true`` or ``is_error: true`` on the message), when the text
    starts with the word "error" (``Error: order not found``), or when it is a JSON object whose
    ``error`` key holds something (``{"error": "timeout"}``).
    """
    if message is not None and (message.get("error") is True or message.get("is_error") is True):
        return True
    text = content if isinstance(content, str) else None
    if text is None:
        return False
    stripped = text.lstrip()
    head = stripped[:6].lower()
    if head.startswith("error") and (len(head) == 5 or not head[5].isalpha()):
        return True
    if stripped.startswith("{"):
        try:
            parsed = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            return False
        if isinstance(parsed, dict):
            value = parsed.get("error")
            return value not in (None, False, "", [], {})
    return False


def convert_chat(raw_messages: list[Any], *, where: str = "messages") -> ChatConversion:
    """Turn a list of chat messages into events, a transcript, the trace input and output.

    Events and messages come out as plain dicts in the shape of :class:`Event` and :class:`Message`, so
    the caller validates the whole trace in one ``Trace.model_validate`` call (fast: the models are built
    in pydantic-core, not one ``__init__`` at a time). Raises :class:`BadRecord` when a message is not an
    object or has an unknown role or a mistyped field.
    """
    out = ChatConversion()
    events, messages = out.events, out.messages
    calls_by_id: dict[str, dict[str, Any]] = {}
    for i, message in enumerate(raw_messages):
        if not isinstance(message, dict):
            raise BadRecord(f"{where}[{i}] is {type(message).__name__}; expected a message object")
        raw_role = message.get("role")
        role = _ROLES.get(raw_role) if isinstance(raw_role, str) else None
        if role is None:
            raise BadRecord(f"{where}[{i}].role is {shown(raw_role)}; expected one of {sorted(_ROLES)}")
        content = message.get("content")
        text, parts = (
            (content, None)
            if content is None or isinstance(content, str)
            else _text_of(content, f"{where}[{i}]")
        )
        name = message.get("name")
        if not isinstance(name, str):
            name = None
        raw_tcid = message.get("tool_call_id")
        tool_call_id = str(raw_tcid) if raw_tcid is not None else None
        calls = _tool_calls(message, f"{where}[{i}]") if role == "assistant" else []
        msg = {
            "role": role,
            "content": text,
            "parts": parts,
            "tool_calls": calls,
            "tool_call_id": tool_call_id,
            "name": name,
        }
        messages.append(msg)
        extra = {k: v for k, v in message.items() if k not in _KNOWN_KEYS} if len(message) > 2 else {}
        event_id = f"msg-{i}"
        if role == "assistant":
            for call in calls:
                if call["id"] is not None:
                    calls_by_id[call["id"]] = call
            if text:
                out.output = text
            model = extra.get("model")
            events.append(
                {
                    "id": event_id,
                    "kind": "llm",
                    "name": name or "assistant",
                    "output": [msg],
                    "model": model if isinstance(model, str) else None,
                    "attributes": extra,
                }
            )
        elif role == "tool":
            linked = calls_by_id.get(tool_call_id) if tool_call_id is not None else None
            is_error = looks_like_tool_error(content, message)
            events.append(
                {
                    "id": event_id,
                    "kind": "tool",
                    "name": (linked["name"] if linked is not None else None) or name or "unknown_tool",
                    "input": _copy_arguments(linked["arguments"]) if linked is not None else None,
                    "output": content,
                    "status": "error" if is_error else "unset",
                    "error": (text or "")[:_ERROR_DETAIL_CHARS] if is_error else None,
                    "tool_call_id": tool_call_id,
                    "attributes": extra,
                }
            )
        elif role == "user":
            if out.input is None and text:
                out.input = text
            events.append(
                {"id": event_id, "kind": "user", "name": "user", "input": text, "attributes": extra}
            )
        else:
            events.append({"id": event_id, "kind": "other", "name": role, "input": text, "attributes": extra})
    return out
