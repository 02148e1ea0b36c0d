"""OpenInference spans (Arize Phoenix): the attribute conventions, and Phoenix's span exports.

The attribute interpreter (:func:`openinference_event`) is shared with the OTLP reader, which meets the
same attributes on ordinary OTel spans. The reader here takes Phoenix's own export shapes:
- JSONL / REST spans: ``{"context": {"trace_id", "span_id"}, "span_kind", "parent_id", "start_time",
  "end_time", "status_code", "status_message", "attributes": {...nested or dotted...}, "events"}``,
  one per line, a JSON array of them, or REST pages ``{"data": [...], "next_cursor"}``;
- flattened rows (a DataFrame written out): ``context.span_id``, ``context.trace_id`` and one
  ``attributes.<key>`` column per attribute;
- Parquet (``TraceDataset.save``), through pyarrow (the ``parquet`` extra).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from .._exceptions import UsageError
from ._chat import BadRecord, shown
from ._depth import clipped_retry
from ._report import IntakeReport
from ._span_content import (
    Convert,
    MessagesOf,
    decode_json,
    flatten,
    item_converter,
    nest_fields,
    parse_time,
    plain_messages,
)
from ._spans import Span, SpanGrouper, SpanTraces, iter_json_values

__all__ = ["PARQUET_MAGIC", "number", "openinference_event", "read_openinference", "span_error"]

PARQUET_MAGIC = b"PAR1"
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


def number(value: Any, kind: type[int] | type[float] = int) -> Any:
    """``value`` as an int (or float) when it is a number or a numeric string, else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return kind(value)
    if isinstance(value, str):
        try:
            return kind(float(value)) if kind is int else float(value)
        except (ValueError, OverflowError):
            return None
    return None


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
        "input_tokens": number(flat.get("llm.token_count.prompt")),
        "output_tokens": number(flat.get("llm.token_count.completion")),
        "total_tokens": number(flat.get("llm.token_count.total")),
        "cache_read_input_tokens": number(flat.get("llm.token_count.prompt_details.cache_read")),
        "cache_write_input_tokens": number(flat.get("llm.token_count.prompt_details.cache_write")),
        "reasoning_tokens": number(flat.get("llm.token_count.completion_details.reasoning")),
    }
    return usage if any(v is not None for v in usage.values()) else None


def _cost(flat: dict[str, Any]) -> float | None:
    total = number(flat.get("llm.cost.total"), float)
    if total is not None:
        return float(total)
    parts = [number(flat.get(key), float) for key in ("llm.cost.prompt", "llm.cost.completion")]
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


# -- Phoenix rows ------------------------------------------------------------------------------------------


def _text_id(value: Any, what: str) -> str:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise BadRecord(f"{what} is {shown(value)}; expected a non-empty string id")


def _events(raw: Any) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            attrs = item.get("attributes")
            out.append((item["name"], flatten(attrs) if isinstance(attrs, dict) else {}))
    return out


def phoenix_span(
    row: Any, line: int | None, record: int | None, history: Callable[[str], MessagesOf]
) -> Span:
    """One Phoenix span (JSONL/REST, or a flattened DataFrame/Parquet row) as a :class:`Span`.

    ``history`` gives the message decoding of a trace id (:meth:`SpanGrouper.history`).
    """
    if not isinstance(row, dict):
        raise BadRecord(f"expected a Phoenix span object, got a JSON {type(row).__name__}", "wrong-type")
    context = row.get("context")
    context = context if isinstance(context, dict) else {}
    trace_id = _text_id(context.get("trace_id", row.get("context.trace_id")), "context.trace_id")
    span_id = _text_id(context.get("span_id", row.get("context.span_id")), "context.span_id")
    parent = row.get("parent_id")
    parent_id = _text_id(parent, "parent_id") if parent not in (None, "") else None
    flat: dict[str, Any] = {}
    attributes = row.get("attributes")
    if isinstance(attributes, dict):
        flatten(attributes, "", flat)
    elif attributes is not None:
        raise BadRecord(f"'attributes' is {type(attributes).__name__}; expected an object")
    for key, value in row.items():
        if key.startswith("attributes.") and value is not None:
            flatten(value, key[len("attributes.") :], flat)
    if isinstance(flat.get("metadata"), str):
        flatten(decode_json(flat.pop("metadata")), "metadata", flat)
    events = _events(row.get("events"))
    status_code = row.get("status_code")
    status = "unset"
    if isinstance(status_code, str):
        status = {"OK": "ok", "ERROR": "error"}.get(status_code.upper(), "unset")
    name = row.get("name")
    event: dict[str, Any] = {
        "name": name if isinstance(name, str) and name else "span",
        "start": parse_time(row.get("start_time")),
        "end": parse_time(row.get("end_time")),
        "status": status,
        "error": span_error(row.get("status_message"), events) if status == "error" else None,
    }
    session = openinference_event(flat, event, row.get("span_kind"), history(trace_id))
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=parent_id,
        event=event,
        line=line,
        record=record,
        session_id=session,
    )


def _rows_of(value: Any) -> list[Any]:
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        return list(value["data"])  # a REST page
    return value if isinstance(value, list) else [value]


def _feed(
    rows: list[Any],
    line: int | None,
    record: int | None,
    grouper: SpanGrouper,
    intake: SpanTraces,
    report: IntakeReport,
) -> Iterator[tuple[int | None, int | None, Any]]:
    for index, row in enumerate(rows):
        rec = record if record is not None else (index + 1 if line is None else None)
        try:
            span = clipped_retry(phoenix_span, row, line, rec, grouper.history)
        except BadRecord as bad:
            where = f"span {index + 1} of the line: " if line is not None and len(rows) > 1 else ""
            report.skip(bad.reason, where + bad.detail, line=line, record=rec)
            continue
        grouper.add(span)
        yield from intake.emit(grouper.ready())


def _read_parquet(fh: IO[bytes], path: Path, report: IntakeReport) -> Iterator[tuple[Any, Any, Any]]:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:
        raise UsageError(
            f"{str(path)!r} is a Parquet file; reading it needs pyarrow: install the 'parquet' extra "
            "(pip install 'helix-evals[parquet]')."
        ) from None
    grouper, intake = SpanGrouper(), SpanTraces(report, "openinference")
    try:
        parquet = pq.ParquetFile(fh)
        missing = [c for c in ("context.span_id", "context.trace_id") if c not in parquet.schema_arrow.names]
        if missing:
            report.skip(
                "unrecognised-record",
                f"the Parquet file has no {missing} column(s): not a Phoenix span export "
                f"(columns: {parquet.schema_arrow.names[:8]})",
                record=1,
            )
            return
        index = 0
        for batch in parquet.iter_batches(batch_size=2048):
            for row in batch.to_pylist():
                index += 1
                yield from _feed([row], None, index, grouper, intake, report)
    except (OSError, ValueError) as exc:  # pyarrow's errors derive from these
        report.skip(
            "unreadable", f"the Parquet file could not be read: {type(exc).__name__}: {exc}", record=1
        )
    yield from intake.emit(grouper.drain())
    intake.finish()


def read_openinference(fh: IO[bytes], path: Path, report: IntakeReport) -> Iterator[tuple[Any, Any, Any]]:
    """Phoenix span exports: JSONL (nested or dotted attributes), JSON arrays, REST pages, or Parquet."""
    try:
        magic = fh.read(4)
        fh.seek(0)
    except (OSError, EOFError, zlib.error):
        magic = b""  # a damaged stream: iter_json_values reports it
    if magic == PARQUET_MAGIC:
        yield from _read_parquet(fh, path, report)
        return
    grouper, intake = SpanGrouper(), SpanTraces(report, "openinference")

    for line, record, value in iter_json_values(fh, report, ("data",)):
        yield from _feed(_rows_of(value), line, record, grouper, intake, report)
    yield from intake.emit(grouper.drain())
    intake.finish()
