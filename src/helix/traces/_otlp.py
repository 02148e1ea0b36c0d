"""OTLP/JSON trace files (OpenTelemetry) read through the GenAI semantic conventions.

A file holds ``{"resourceSpans": [...]}`` export requests, one per line (the collector's and the Python
``opentelemetry-exporter-otlp-json-file`` format) or as one JSON document. Read liberally: hex or base64
ids, lowerCamelCase or snake_case keys, int64 as strings, enum numbers or names, and attributes from
every GenAI semconv era (``gen_ai.system`` / ``gen_ai.provider.name``, ``prompt_tokens`` /
``input_tokens``, content as attributes, span events or OpenLLMetry's flattened ``gen_ai.prompt.N``).
Spans carrying ``openinference.span.kind`` are read with the OpenInference conventions.

Message events logged as OTel log records live in a separate ``resourceLogs`` file. It is found next
to the traces file by name (:func:`sibling_logs`) and joined onto spans by ``(traceId, spanId)``; the
logs file is indexed in memory (its size, not the traces file's, bounds that part).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ._format import FormatSpec, Source, TraceLocated, records_sniffer
from ._json import clipped_retry, json_values, page_items
from ._openinference_attrs import openinference_event, span_error
from ._report import IntakeReport
from ._source import open_source
from ._span_content import (
    MessagesOf,
    flatten,
    from_unix_nanos,
    item_converter,
    messages_of,
    nest,
    plain_messages,
)
from ._spans import Span, SpanGrouper, SpanTraces
from ._values import BadRecord, count, decode_json, integer, number, shown, usage_with_total

__all__ = ["OTLP", "any_value", "sibling_logs"]

_MAX_DEPTH = 48
_OPERATIONS = {
    "chat": "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    "execute_tool": "tool",
    "invoke_agent": "agent",
    "create_agent": "agent",
    "invoke_workflow": "agent",
    "plan": "agent",
    "retrieval": "retrieval",
    "search_memory": "retrieval",
    "embeddings": "retrieval",
}
_TRACELOOP_KINDS = {"workflow": "agent", "agent": "agent", "tool": "tool", "task": "other"}
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_CONTENT_KEYS = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "traceloop.entity.input",
    "traceloop.entity.output",
)
_CLIENT = 3


def _get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def any_value(value: Any, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` (camelCase or snake_case) as a Python value; ints arrive as strings."""
    if not isinstance(value, dict) or depth > _MAX_DEPTH:
        return value
    for key, item in value.items():
        if key in ("stringValue", "string_value", "boolValue", "bool_value", "doubleValue", "double_value"):
            return item
        if key in ("intValue", "int_value"):
            parsed = integer(item)
            return parsed if parsed is not None else item
        if key in ("arrayValue", "array_value"):
            values = item.get("values") if isinstance(item, dict) else None
            return [any_value(v, depth + 1) for v in values] if isinstance(values, list) else []
        if key in ("kvlistValue", "kvlist_value"):
            values = item.get("values") if isinstance(item, dict) else None
            return _attributes(values, depth + 1)
        if key in ("bytesValue", "bytes_value"):
            return item
    return None


def _attributes(raw: Any, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(raw, list):
        for item in raw:
            if type(item) is dict:
                key, value = item.get("key"), item.get("value")
                if type(key) is str:
                    # Fast path for the common case, a plain string value.
                    if type(value) is dict and len(value) == 1 and "stringValue" in value:
                        out[key] = value["stringValue"]
                    else:
                        out[key] = any_value(value, depth)
    return out


def _hex_id(value: Any, size: int, what: str) -> str:
    """A lower-case hex id from hex or base64 text (``size`` bytes); a :class:`BadRecord` otherwise."""
    if not isinstance(value, str) or not value:
        raise BadRecord(f"{what} is {shown(value)}; expected a {size * 2}-digit hex id")
    if len(value) == size * 2:
        try:
            int(value, 16)
        except ValueError:
            pass
        else:
            return value.lower()
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        decoded = b""
    if len(decoded) == size:
        return decoded.hex()
    raise BadRecord(f"{what} is {shown(value)}; expected {size * 2} hex digits or the base64 of {size} bytes")


def _enum(value: Any, names: dict[str, int]) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        return names.get(value.upper().rsplit("_", 1)[-1], 0)
    return 0


_STATUS = {"UNSET": 0, "OK": 1, "ERROR": 2}
_KIND = {"UNSPECIFIED": 0, "INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}


# -- GenAI semantic conventions ----------------------------------------------------------------------------


def _int(flat: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        found = count(flat.get(key))
        if found is not None:
            return found
    return None


_USAGE_KEYS = frozenset(
    {
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "gen_ai.usage.total_tokens",
        "llm.usage.total_tokens",
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_read_input_tokens",
        "gen_ai.usage.cache_creation.input_tokens",
        "gen_ai.usage.cache_creation_input_tokens",
        "gen_ai.usage.reasoning.output_tokens",
    }
)


def _usage(flat: dict[str, Any]) -> dict[str, Any] | None:
    if _USAGE_KEYS.isdisjoint(flat):
        return None
    usage = {
        "input_tokens": _int(flat, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
        "output_tokens": _int(flat, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
        "total_tokens": _int(flat, "gen_ai.usage.total_tokens", "llm.usage.total_tokens"),
        "cache_read_input_tokens": _int(
            flat, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens"
        ),
        "cache_write_input_tokens": _int(
            flat, "gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_creation_input_tokens"
        ),
        "reasoning_tokens": _int(flat, "gen_ai.usage.reasoning.output_tokens"),
    }
    return usage_with_total(usage)


def _kind(flat: dict[str, Any], span_kind: int) -> str:
    operation = flat.get("gen_ai.operation.name")
    if isinstance(operation, str) and operation in _OPERATIONS:
        return _OPERATIONS[operation]
    loop_kind = flat.get("traceloop.span.kind")
    if isinstance(loop_kind, str) and loop_kind in _TRACELOOP_KINDS:
        return _TRACELOOP_KINDS[loop_kind]
    if "llm.request.type" in flat or (span_kind == _CLIENT and "gen_ai.request.model" in flat):
        return "llm"
    if "gen_ai.tool.name" in flat:
        return "tool"
    return "other"


def _event_messages(
    events: list[tuple[str, dict[str, Any], Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """Input and output messages from message events (span events or log records), and detail attributes."""
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    details: dict[str, Any] = {}
    for name, attrs, body in events:
        body = decode_json(body)
        role = _MESSAGE_EVENTS.get(name)
        if role is not None:
            inputs.extend(messages_of(body if isinstance(body, dict) else {"content": body}, role) or [])
        elif name == "gen_ai.choice":
            message = body.get("message", body) if isinstance(body, dict) else {"content": body}
            outputs.extend(messages_of(message, "assistant") or [])
        elif name == "gen_ai.content.prompt":
            inputs.extend(messages_of(attrs.get("gen_ai.prompt"), "user") or [])
        elif name == "gen_ai.content.completion":
            outputs.extend(messages_of(attrs.get("gen_ai.completion"), "assistant") or [])
        elif name == "gen_ai.client.inference.operation.details":
            details.update(attrs)
            if isinstance(body, dict):
                details.update(body)
    return inputs, outputs, details


def _scores(events: list[tuple[str, dict[str, Any], Any]]) -> list[dict[str, Any]]:
    scores: list[dict[str, Any]] = []
    for name, attrs, body in events:
        if name != "gen_ai.evaluation.result":
            continue
        merged = {**attrs, **(body if isinstance(body, dict) else {})}
        score_name = merged.get("gen_ai.evaluation.name")
        value = merged.get("gen_ai.evaluation.score.value")
        value = number(value) if not isinstance(value, bool) else value
        if value is None:
            value = merged.get("gen_ai.evaluation.score.label")
        if isinstance(score_name, str) and isinstance(value, float | bool | str):
            comment = merged.get("gen_ai.evaluation.explanation")
            scores.append(
                {
                    "name": score_name,
                    "value": value,
                    "source": "otel",
                    "comment": comment if isinstance(comment, str) else None,
                }
            )
    return scores


_AS_SYSTEM = item_converter("system", role="system")
_AS_INPUT = item_converter()


def genai_event(
    flat: dict[str, Any],
    events: list[tuple[str, dict[str, Any], Any]],
    event: dict[str, Any],
    span_kind: int,
    messages: MessagesOf = plain_messages,
) -> str | None:
    """Fill ``event`` from GenAI semconv attributes and message events; returns the session id.

    ``messages`` decodes message lists (a trace's memo when the reader has one).
    """
    kind = _kind(flat, span_kind)
    event["kind"] = kind
    if kind == "tool":
        name, call_id = flat.get("gen_ai.tool.name"), flat.get("gen_ai.tool.call.id")
        if isinstance(name, str) and name:
            event["name"] = name
        event["tool_call_id"] = str(call_id) if isinstance(call_id, str | int) and call_id else None
        args = flat.get("gen_ai.tool.call.arguments", flat.get("traceloop.entity.input"))
        event["input"] = decode_json(args)
        event["output"] = decode_json(
            flat.get("gen_ai.tool.call.result", flat.get("traceloop.entity.output"))
        )
    else:
        ev_inputs, ev_outputs, details = _event_messages(events) if events else ([], [], None)
        source = {**details, **flat} if details else flat
        system = messages(source.get("gen_ai.system_instructions"), _AS_SYSTEM)
        inputs = messages(source.get("gen_ai.input.messages"), _AS_INPUT)
        inputs = inputs or messages(nest(flat, "gen_ai.prompt"), _AS_INPUT)
        outputs = messages_of(source.get("gen_ai.output.messages"), "assistant")
        outputs = outputs or messages_of(nest(flat, "gen_ai.completion"), "assistant")
        inputs = (system or []) + (inputs or ev_inputs)
        outputs = outputs or ev_outputs
        event["input"] = inputs or decode_json(flat.get("traceloop.entity.input"))
        event["output"] = outputs or decode_json(flat.get("traceloop.entity.output"))
    model = flat.get("gen_ai.response.model") or flat.get("gen_ai.request.model")
    provider = flat.get("gen_ai.provider.name") or flat.get("gen_ai.system")
    event["model"] = model if isinstance(model, str) else None
    event["provider"] = provider if isinstance(provider, str) else None
    event["usage"] = _usage(flat)
    if event["status"] != "error" and flat.get("error.type"):
        event["status"] = "error"
    if event["status"] == "error" and event.get("error") is None:
        event["error"] = span_error(None, [(n, a) for n, a, _ in events], flat.get("error.type"))
    event["attributes"] = {
        k: v
        for k, v in flat.items()
        if k not in _CONTENT_KEYS and not k.startswith(("gen_ai.prompt.", "gen_ai.completion."))
    }
    session = flat.get("gen_ai.conversation.id") or flat.get("session.id")
    return str(session) if isinstance(session, str | int) and session else None


# -- spans -------------------------------------------------------------------------------------------------

LogIndex = dict[tuple[str, str], list[tuple[str, dict[str, Any], Any]]]


def _span(
    raw: Any, logs: LogIndex, line: int | None, record: int | None, history: Callable[[str], MessagesOf]
) -> Span:
    if not isinstance(raw, dict):
        raise BadRecord(f"a span is a JSON {type(raw).__name__}; expected an object", "wrong-type")
    trace_id = _hex_id(_get(raw, "traceId", "trace_id"), 16, "traceId")
    span_id = _hex_id(_get(raw, "spanId", "span_id"), 8, "spanId")
    parent = _get(raw, "parentSpanId", "parent_span_id")
    parent_id = _hex_id(parent, 8, "parentSpanId") if parent not in (None, "") else None
    flat = _attributes(raw.get("attributes"))
    events: list[tuple[str, dict[str, Any], Any]] = []
    for item in _as_list(raw.get("events")):
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            events.append((item["name"], _attributes(item.get("attributes")), None))
    events.extend(logs.pop((trace_id, span_id), ()))
    status = raw.get("status")
    status = status if isinstance(status, dict) else {}
    code = _enum(status.get("code"), _STATUS)
    name = raw.get("name")
    event: dict[str, Any] = {
        "name": name if isinstance(name, str) and name else "span",
        "start": from_unix_nanos(_get(raw, "startTimeUnixNano", "start_time_unix_nano")),
        "end": from_unix_nanos(_get(raw, "endTimeUnixNano", "end_time_unix_nano")),
        "status": {1: "ok", 2: "error"}.get(code, "unset"),
        "error": None,
    }
    if code == 2:
        event["error"] = span_error(
            status.get("message"), [(n, a) for n, a, _ in events], flat.get("error.type")
        )
    if "openinference.span.kind" in flat:
        flat = flatten(flat)
        session = openinference_event(flat, event, messages=history(trace_id))
    else:
        session = genai_event(flat, events, event, _enum(raw.get("kind"), _KIND), history(trace_id))
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=parent_id,
        event=event,
        line=line,
        record=record,
        session_id=session,
        scores=_scores(events),
    )


def _batches(value: Any, plural: tuple[str, str], scoped: tuple[str, str], items: tuple[str, str]) -> Any:
    """``(resource, scope, item)`` for each span or log record of an export request (raw objects)."""
    for resource_block in _as_list(_get(value, *plural)):
        if not isinstance(resource_block, dict):
            yield None, None, resource_block
            continue
        resource = resource_block.get("resource")
        resource = resource if isinstance(resource, dict) else None
        for scope_block in _as_list(_get(resource_block, *scoped)):
            if not isinstance(scope_block, dict):
                yield resource, None, scope_block
                continue
            scope = scope_block.get("scope")
            for item in _as_list(_get(scope_block, *items)):
                yield resource, scope if isinstance(scope, dict) else None, item


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# -- logs --------------------------------------------------------------------------------------------------


def sibling_logs(path: Path) -> Path | None:
    """The OTLP logs file that goes with a traces file, if one exists next to it.

    Tried in order, with or without ``.gz``: ``<name>`` with ``traces``/``trace``/``spans`` replaced
    by ``logs`` (``traces.jsonl`` -> ``logs.jsonl``, ``run.spans.json`` -> ``run.logs.json``), then
    ``<stem>.logs<suffix>`` (``run.jsonl`` -> ``run.logs.jsonl``).
    """
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    candidates: list[str] = []
    for word in ("traces", "trace", "spans"):
        if word in name:
            candidates.append(name.replace(word, "logs"))
    stem, dot, suffix = name.partition(".")
    candidates.append(f"{stem}.logs{dot}{suffix}" if dot else f"{name}.logs")
    for candidate in candidates:
        for variant in (candidate, candidate + ".gz"):
            found = path.with_name(variant)
            if found != path and found.is_file():
                return found
    return None


def _load_logs(path: Path, report: IntakeReport) -> LogIndex:
    index: LogIndex = {}
    loose = 0
    sub = IntakeReport(path=str(path))
    with open_source(path) as fh:
        for _line, _, value in json_values(fh, sub):
            if not isinstance(value, dict):
                continue
            for _, _, record in _batches(
                value,
                ("resourceLogs", "resource_logs"),
                ("scopeLogs", "scope_logs"),
                ("logRecords", "log_records"),
            ):
                if not isinstance(record, dict):
                    continue
                attrs = _attributes(record.get("attributes"))
                name = _get(record, "eventName", "event_name") or attrs.get("event.name")
                try:
                    trace_id = _hex_id(_get(record, "traceId", "trace_id"), 16, "traceId")
                    span_id = _hex_id(_get(record, "spanId", "span_id"), 8, "spanId")
                except BadRecord:
                    loose += 1
                    continue
                if isinstance(name, str):
                    index.setdefault((trace_id, span_id), []).append(
                        (name, attrs, any_value(record.get("body")))
                    )
    report.notes.append(f"message events were joined from the OTLP logs file {str(path)!r}")
    if sub.skipped:
        report.notes.append(f"{len(sub.skipped)} line(s) of the logs file could not be read")
    if loose:
        report.notes.append(f"{loose} log record(s) have no trace/span id and were not joined to a span")
    return index


# -- the reader --------------------------------------------------------------------------------------------


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    """OTLP/JSON ``resourceSpans`` (JSONL or one document), with a sibling logs file when present."""
    logs_path = sibling_logs(source.path)
    logs = _load_logs(logs_path, report) if logs_path is not None else {}
    grouper, intake = SpanGrouper(), SpanTraces(report, "otlp")
    for line, given, value in json_values(source.fh, report, pages=("resourceSpans", "resource_spans")):
        for record, request, _ in page_items(value, None, line, given):
            if not isinstance(request, dict) or _get(request, "resourceSpans", "resource_spans") is None:
                what = sorted(request)[:6] if isinstance(request, dict) else type(request).__name__
                hint = (
                    " (an OTLP logs batch: put logs in a sibling file, see sibling_logs)"
                    if isinstance(request, dict)
                    and _get(request, "resourceLogs", "resource_logs") is not None
                    else ""
                )
                report.skip(
                    "unrecognised-record",
                    f"expected an OTLP export request with 'resourceSpans', got {what}{hint}",
                    line=line,
                    record=record,
                )
                continue
            for position, (resource, scope, raw) in enumerate(
                _batches(
                    request,
                    ("resourceSpans", "resource_spans"),
                    ("scopeSpans", "scope_spans"),
                    ("spans", "spans"),
                ),
                1,
            ):
                try:
                    span = clipped_retry(_span, raw, logs, line, record, grouper.history)
                except BadRecord as bad:
                    report.skip(
                        bad.reason, f"span {position} of the request: {bad.detail}", line=line, record=record
                    )
                    continue
                if scope and isinstance(scope.get("name"), str):
                    span.event["attributes"]["otel.scope.name"] = scope["name"]
                group = grouper.add(span)
                if resource is not None and "resource" not in group.metadata:
                    attrs = _attributes(resource.get("attributes"))
                    if attrs:
                        group.metadata["resource"] = attrs
                yield from intake.emit(grouper.ready())
    yield from intake.emit(grouper.drain())
    intake.finish()
    if logs:
        unmatched = sum(len(v) for v in logs.values())
        report.notes.append(f"{unmatched} log record(s) match no span of the traces file")


def _sniff_record(value: dict[str, Any]) -> str | None:
    if "resourceSpans" in value or "resource_spans" in value:
        return "an OTLP/JSON export request ('resourceSpans')"
    return None


OTLP = FormatSpec(name="otlp", sniff=records_sniffer(_sniff_record), read=_read)
