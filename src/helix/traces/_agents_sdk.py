"""OpenAI Agents SDK span exports: the ``trace.export()`` / ``span.export()`` dicts, captured as files.

Records are ``{"object": "trace", "id", "workflow_name", "group_id", "metadata"}`` and
``{"object": "trace.span", "id", "trace_id", "parent_id", "started_at", "ended_at", "span_data", "error"}``,
one per line, in a JSON array, or in ingest batches ``{"data": [...]}``. The trace record (which a
processor writes when the trace ends) marks its trace as complete; so does a span without a parent.

Mapping: ``span_data.type`` ``generation``/``response`` -> llm, ``function`` -> tool (result parsed as
JSON, else as a Python literal, else kept as text; never executed), ``agent`` -> agent, everything else
-> other. A span that ended without ``error`` is ``ok``. Function spans carry no call id: they are
linked to the preceding generation's tool calls by name and order.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from ._format import FormatSpec, Source, TraceLocated, records_sniffer
from ._json import clipped_retry, json_values, page_items
from ._report import IntakeReport
from ._span_content import MessagesOf, item_converter, messages_of, parse_time, plain_messages
from ._spans import Span, SpanGrouper, SpanTraces
from ._values import BadRecord, count, decode_json, shown, usage_with_total

__all__ = ["OPENAI_AGENTS"]

_KINDS = {"generation": "llm", "response": "llm", "function": "tool", "agent": "agent"}
_MAX_LITERAL_CHARS = 100_000
_MAX_ERROR_CHARS = 500


def _result(value: Any) -> Any:
    """A function span's output: JSON, else a Python literal (``str(dict)``), else the text as it is."""
    if not isinstance(value, str):
        return value
    parsed = decode_json(value)
    if parsed is not value or len(value) > _MAX_LITERAL_CHARS or value[:1] not in ("{", "[", "("):
        return parsed
    try:
        literal = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return value
    try:
        return orjson.loads(orjson.dumps(literal))  # only JSON-shaped literals (no sets, bytes, ...)
    except (TypeError, orjson.JSONEncodeError):
        return value


def _usage(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    details_in = raw.get("input_tokens_details")
    details_out = raw.get("output_tokens_details")
    usage = {
        "input_tokens": count(raw.get("input_tokens", raw.get("prompt_tokens"))),
        "output_tokens": count(raw.get("output_tokens", raw.get("completion_tokens"))),
        "total_tokens": count(raw.get("total_tokens")),
        "cache_read_input_tokens": count(details_in.get("cached_tokens"))
        if isinstance(details_in, dict)
        else None,
        "reasoning_tokens": count(details_out.get("reasoning_tokens"))
        if isinstance(details_out, dict)
        else None,
    }
    return usage_with_total(usage)


_AS_INPUT = item_converter("user")


def _event(data: dict[str, Any], messages: MessagesOf = plain_messages) -> dict[str, Any]:
    kind_name = data.get("type")
    kind = _KINDS.get(kind_name, "other") if isinstance(kind_name, str) else "other"
    name = data.get("name")
    event: dict[str, Any] = {"kind": kind, "name": name if isinstance(name, str) and name else str(kind_name)}
    attributes = {k: v for k, v in data.items() if k not in ("input", "output", "usage", "response")}
    if kind == "llm":
        event["input"] = messages(data.get("input"), _AS_INPUT) or data.get("input")
        output = data.get("output", data.get("response"))
        if isinstance(output, dict) and isinstance(output.get("output"), list):
            output = output["output"]  # a serialized Responses-API response
        event["output"] = messages_of(output, "assistant") or output
        model = data.get("model")
        event["model"] = model if isinstance(model, str) else None
        event["usage"] = _usage(data.get("usage"))
    elif kind == "tool":
        event["input"] = decode_json(data.get("input"))
        event["output"] = _result(data.get("output"))
    elif kind_name == "handoff":
        event["name"] = "handoff"
        event["input"], event["output"] = data.get("from_agent"), data.get("to_agent")
    elif kind_name == "custom":
        event["input"] = data.get("data")
    event["attributes"] = attributes
    return event


def _span(
    raw: dict[str, Any], line: int | None, record: int | None, history: Callable[[str], MessagesOf]
) -> Span:
    span_id, trace_id, parent = raw.get("id"), raw.get("trace_id"), raw.get("parent_id")
    for what, value in (("id", span_id), ("trace_id", trace_id)):
        if not isinstance(value, str) or not value:
            raise BadRecord(f"span {what} is {shown(value)}; expected a non-empty string")
    if parent is not None and not isinstance(parent, str):
        raise BadRecord(f"span parent_id is {shown(parent)}; expected a string or null")
    data = raw.get("span_data")
    if not isinstance(data, dict):
        raise BadRecord(f"span_data is {type(data).__name__}; expected an object")
    event = _event(data, history(str(trace_id)))
    event["start"], event["end"] = parse_time(raw.get("started_at")), parse_time(raw.get("ended_at"))
    error = raw.get("error")
    if error is not None:
        event["status"] = "error"
        message = error.get("message") if isinstance(error, dict) else error
        detail = error.get("data") if isinstance(error, dict) else None
        text = str(message) + (f" {orjson.dumps(detail, default=str).decode()}" if detail else "")
        event["error"] = text[:_MAX_ERROR_CHARS]
    else:
        event["status"] = "ok" if event["end"] is not None else "unset"
    if raw.get("metadata"):
        event["attributes"]["metadata"] = raw["metadata"]
    return Span(
        trace_id=str(trace_id),
        span_id=str(span_id),
        parent_id=parent or None,
        event=event,
        line=line,
        record=record,
    )


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    """OpenAI Agents SDK ``trace``/``trace.span`` exports (JSONL, JSON array or ingest batches)."""
    grouper, intake = SpanGrouper(), SpanTraces(report, "openai-agents")
    for line, given, value in json_values(source.fh, report, pages=("data",)):
        for record, item, where in page_items(value, "data", line, given):
            kind = item.get("object") if isinstance(item, dict) else None
            if kind == "trace" and isinstance(item, dict):
                trace_id = item.get("id")
                if not isinstance(trace_id, str) or not trace_id:
                    report.skip(
                        "invalid-record", f"{where}trace id is {shown(trace_id)}", line=line, record=record
                    )
                    continue
                group = grouper.group(trace_id, line, record)
                group.has_root = True
                name, session, metadata = (
                    item.get("workflow_name"),
                    item.get("group_id"),
                    item.get("metadata"),
                )
                group.name = name if isinstance(name, str) else group.name
                group.session_id = str(session) if isinstance(session, str | int) and session else None
                if isinstance(metadata, dict):
                    group.metadata.update(metadata)
            elif kind == "trace.span" and isinstance(item, dict):
                try:
                    span = clipped_retry(_span, item, line, record, grouper.history)
                except BadRecord as bad:
                    report.skip(bad.reason, where + bad.detail, line=line, record=record)
                    continue
                grouper.add(span)
            else:
                shape = (
                    f"keys {sorted(item)[:6]}" if isinstance(item, dict) else f"a JSON {type(item).__name__}"
                )
                report.skip(
                    "unrecognised-record" if isinstance(item, dict) else "wrong-type",
                    f'{where}expected an Agents SDK record with "object": "trace" or "trace.span", got {shape}',
                    line=line,
                    record=record,
                )
                continue
            yield from intake.emit(grouper.ready())
    yield from intake.emit(grouper.drain())
    intake.finish()


def _sniff_record(value: dict[str, Any]) -> str | None:
    kind = value.get("object")
    if (kind == "trace.span" and "span_data" in value) or (kind == "trace" and "workflow_name" in value):
        return f'an OpenAI Agents SDK export ("object": {shown(kind)})'
    return None


OPENAI_AGENTS = FormatSpec(name="openai-agents", sniff=records_sniffer(_sniff_record), read=_read)
