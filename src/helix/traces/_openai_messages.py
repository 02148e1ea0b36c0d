"""OpenAI chat messages: a conversation per JSONL line (a message list or ``{"messages": [...]}``), or a JSON
array of them (a top-level array of messages is one conversation)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._util import content_hash
from ._chat import convert_chat
from ._format import FormatSpec, Source, TraceLocated
from ._json import json_values, record_traces, validated
from ._model import Trace
from ._report import IntakeReport
from ._source import file_stem
from ._values import BadRecord, kind_of

__all__ = ["OPENAI_MESSAGES"]


def _is_tau_record(value: dict[str, Any]) -> bool:
    return "task_id" in value and "traj" in value


def _sniff(value: Any) -> str | None:
    if isinstance(value, dict):
        return "an object with a 'messages' list" if isinstance(value.get("messages"), list) else None
    if not isinstance(value, list) or not value:
        return None
    first = value[0]
    if isinstance(first, dict):
        if "role" in first:
            return "a list of chat messages"
        if isinstance(first.get("messages"), list) and not _is_tau_record(first):  # tau-bench's, then
            return "a list of objects with a 'messages' list"
        return None
    if isinstance(first, list) and first and isinstance(first[0], dict) and "role" in first[0]:
        return "a list of conversations (lists of chat messages)"
    return None


def _is_message(first: Any) -> bool:
    return isinstance(first, dict) and "role" in first


def _converter(source: Source) -> Any:
    stem = file_stem(source.path)

    def convert(value: Any, line: int | None, record: int | None) -> Trace:
        metadata: dict[str, Any] = {}
        trace_id: Any = None
        raw_messages: Any
        if isinstance(value, list):
            raw_messages = value
        elif isinstance(value, dict):
            raw_messages = value.get("messages")
            fmt, evidence = source.classify(value, "the record")
            if fmt == "helix":
                raise BadRecord(f"{evidence}; read the file with format='helix'", "unrecognised-record")
            if not isinstance(raw_messages, list):
                hint = f"; read the file with format={fmt!r}" if fmt is not None else ""
                raise BadRecord(f"{evidence}, with no 'messages' list{hint}", "unrecognised-record")
            given = value.get("metadata")
            if given is not None and not isinstance(given, dict):
                raise BadRecord(f"'metadata' is {kind_of(given)}; expected an object")
            extra = {k: v for k, v in value.items() if k not in ("messages", "metadata", "id")}
            metadata.update(extra)
            metadata.update(given or {})
            trace_id = value.get("id", (given or {}).get("id"))
        else:
            raise BadRecord(
                f"expected a list of chat messages or an object with 'messages', got a JSON {kind_of(value)}",
                "wrong-type",
            )
        if not raw_messages:
            raise BadRecord("the conversation has no messages")
        if isinstance(trace_id, bool) or (trace_id is not None and not isinstance(trace_id, str | int)):
            raise BadRecord(f"'id' is {kind_of(trace_id)}; expected a string or an integer")
        converted = convert_chat(raw_messages)
        place = f"L{line}" if line is not None else f"R{record}"
        if trace_id is None:
            trace_id = f"{stem}:{place}:{content_hash(raw_messages, length=12)}"
        metadata["source_format"] = "openai-messages"
        metadata["source_location"] = place
        return validated(
            {
                "id": str(trace_id),
                "input": converted.input,
                "output": converted.output,
                "metadata": metadata,
                "events": converted.events,
                "messages": converted.messages,
            }
        )

    return convert


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    values = json_values(source.fh, report, keep_array=_is_message)
    return record_traces(values, report, _converter(source))


OPENAI_MESSAGES = FormatSpec(name="openai-messages", sniff=_sniff, read=_read)
