"""The OpenInference attribute conventions (Arize Phoenix), read from flat dotted attributes.

Shared by the OpenInference reader (Phoenix's own span exports) and the OTLP reader, which meets the same
attributes on ordinary OTel spans (``openinference.span.kind`` set).
"""

from __future__ import annotations

from typing import Any

from ._span_content import Convert, MessagesOf, item_converter, nest_fields, plain_messages
from ._values import count, decode_json, number

__all__ = ["openinference_event", "span_error"]

_KINDS = {
    "LLM": "llm",
    "TOOL": "tool",
    "AGENT": "agent",
    "RETRIEVER": "retrieval",
    "EMBEDDING": "retrieval",
    "RERANKER": "retrieval",
}
_DROPPED_PREFIXES = ("llm.input_messages.", "llm.output_messages.")
_DROPPED_KEYS = frozenset({"input.value", "output.value", "llm.input_messages", "llm.output_messages"})
_MAX_ERROR_CHARS = 500


def span_error(status_message: Any, events: list[tuple[str, dict[str, Any]]], fallback: Any = None) -> str:
    """The error text of a failed span: the status message, else the exception event, else ``fallback``."""
    if isinstance(status_message, str) and status_message:
        return status_message[:_MAX_ERROR_CHARS]
    for name, attrs in events:
        if name == "exception":
            kind, message = attrs.get("exception.type"), attrs.get("exception.message")
            text = ": ".join(str(part) for part in (kind, message) if part)
            if text:
                return text[:_MAX_ERROR_CHARS]
    return str(fallback)[:_MAX_ERROR_CHARS] if fallback else "error"


def _usage(flat: dict[str, Any]) -> dict[str, Any] | None:
    usage = {
        "input_tokens": count(flat.get("llm.token_count.prompt")),
        "output_tokens": count(flat.get("llm.token_count.completion")),
        "total_tokens": count(flat.get("llm.token_count.total")),
        "cache_read_input_tokens": count(flat.get("llm.token_count.prompt_details.cache_read")),
        "cache_write_input_tokens": count(flat.get("llm.token_count.prompt_details.cache_write")),
        "reasoning_tokens": count(flat.get("llm.token_count.completion_details.reasoning")),
    }
    return usage if any(v is not None for v in usage.values()) else None


def _cost(flat: dict[str, Any]) -> float | None:
    total = number(flat.get("llm.cost.total"))
    if total is not None:
        return total
    parts = [number(flat.get(key)) for key in ("llm.cost.prompt", "llm.cost.completion")]
    return float(sum(p for p in parts if p is not None)) if any(p is not None for p in parts) else None


_SIMPLE = {"message.role": "role", "message.content": "content", "message.name": "name"}


_AS_INPUT = item_converter()
_AS_OUTPUT = item_converter("assistant")
_SIMPLE_KEYS = _SIMPLE.keys()
_SIDES = {"llm.input_messages": 0, "llm.output_messages": 1}


def _message_fields(flat: dict[str, Any]) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]]]:
    """The ``llm.input_messages.N.*`` and ``llm.output_messages.N.*`` fields by side and N (one pass)."""
    sides: tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]]] = ({}, {})
    for key, value in flat.items():
        if key.startswith(_DROPPED_PREFIXES):
            side, position, rest = key.split(".", 3)[1:] if key.count(".") >= 3 else ("", "", "")
            if position.isdigit():
                sides[_SIDES["llm." + side]].setdefault(int(position), {})[rest] = value
    return sides


def _messages(
    by_index: dict[int, dict[str, Any]], convert: Convert, messages: MessagesOf
) -> list[dict[str, Any]] | None:
    """One side's fields by message position as canonical messages (plain ones without re-nesting)."""
    if not by_index:
        return None
    raw: list[Any] = []
    for index in sorted(by_index):
        fields = by_index[index]
        if fields.keys() <= _SIMPLE_KEYS:
            raw.append({_SIMPLE[key]: value for key, value in fields.items()})
        else:
            raw.append(nest_fields(fields))
    return messages(raw, convert)


def _value(flat: dict[str, Any], key: str) -> Any:
    value = flat.get(key)
    if isinstance(value, str) and flat.get(f"{key.split('.')[0]}.mime_type") != "text/plain":
        return decode_json(value)
    return value


def openinference_event(
    flat: dict[str, Any], event: dict[str, Any], span_kind: Any = None, messages: MessagesOf = plain_messages
) -> str | None:
    """Fill ``event`` (name/start/end/status already set) from OpenInference attributes; the session id.

    ``messages`` decodes message lists (a trace's memo when the reader has one).
    """
    raw_kind = flat.get("openinference.span.kind", span_kind)
    kind = _KINDS.get(raw_kind.upper(), "other") if isinstance(raw_kind, str) else "other"
    event["kind"] = kind
    if kind == "llm":
        input_fields, output_fields = _message_fields(flat)
        inputs = _messages(input_fields, _AS_INPUT, messages)
        outputs = _messages(output_fields, _AS_OUTPUT, plain_messages)
        event["input"] = inputs if inputs is not None else _value(flat, "input.value")
        event["output"] = outputs if outputs is not None else _value(flat, "output.value")
        model = flat.get("llm.response.model_name") or flat.get("llm.model_name")
        model = model or flat.get("llm.request.model_name")
        provider = flat.get("llm.system") or flat.get("llm.provider")
        event["model"] = model if isinstance(model, str) else None
        event["provider"] = provider if isinstance(provider, str) else None
        event["usage"] = _usage(flat)
        event["cost"] = _cost(flat)
    else:
        event["input"] = _value(flat, "input.value")
        event["output"] = _value(flat, "output.value")
        if kind == "tool":
            name, call_id = flat.get("tool.name"), flat.get("tool.id")
            if isinstance(name, str) and name:
                event["name"] = name
            event["tool_call_id"] = str(call_id) if isinstance(call_id, str | int) and call_id else None
    event["attributes"] = {
        k: v for k, v in flat.items() if k not in _DROPPED_KEYS and not k.startswith(_DROPPED_PREFIXES)
    }
    session = flat.get("session.id")
    return str(session) if isinstance(session, str | int) and session else None
