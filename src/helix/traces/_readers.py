"""One reader per format: raw lines or records in, canonical traces out, every skip counted.

A reader takes an open binary stream and the report to fill, and yields ``(line, record, trace)``:
``line`` is the 1-based line of a JSONL file, ``record`` the 1-based index in a JSON-array file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import ValidationError

from .._util import content_hash
from ._agents_sdk import read_agents_sdk
from ._chat import BadRecord, convert_chat
from ._coerce import validate_trace
from ._depth import clipped_retry
from ._formats import TraceFormat, classify_value
from ._inspect import read_inspect
from ._langfuse import read_langfuse
from ._langsmith import read_langsmith
from ._miniswe import read_mini_swe_agent
from ._model import TRACE_FORMAT_VERSION, Trace
from ._openinference import read_openinference
from ._otlp import read_otlp
from ._report import IntakeReport, SkipReason
from ._source import file_stem, iter_lines, read_all, read_head
from ._stream import big_array, stream_items, stream_value
from ._tau2 import read_tau2_bench
from ._whowhen import read_who_and_when

__all__ = ["READERS", "Located"]

Located = tuple[int | None, int | None, Trace]
Reader = Callable[[IO[bytes], Path, IntakeReport], Iterator[Located]]

_MAX_ERRORS_SHOWN = 3


def _unreadable(report: IntakeReport) -> Callable[[int, str], None]:
    def on_error(line: int, message: str) -> None:
        report.skip("unreadable", f"the rest of the file could not be read: {message}", line=line)

    return on_error


def _json_failure(raw: bytes, exc: Exception) -> tuple[SkipReason, str]:
    """Why a line is not JSON: bad UTF-8 (with the byte offset) or a JSON syntax error."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return "invalid-utf8", f"byte {raw[bad.start : bad.start + 1]!r} at offset {bad.start} is not UTF-8"
    return "invalid-json", f"not valid JSON: {exc}"


def _kind_of(value: Any) -> str:
    return "null" if value is None else type(value).__name__


# -- helix ---------------------------------------------------------------------------------------------


def _diagnose_helix(raw: bytes, exc: ValidationError) -> tuple[SkipReason, str]:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as bad:
        return _json_failure(raw, bad)
    if not isinstance(value, dict):
        return "wrong-type", f"expected a Helix trace object, got a JSON {_kind_of(value)}"
    fmt, evidence = classify_value(value, "the line")
    if fmt is not None and fmt != "helix":
        return "unrecognised-record", f"{evidence}, not a Helix trace; read the file with format={fmt!r}"
    errors = exc.errors(include_url=False, include_input=False)
    shown = "; ".join(
        f"{'.'.join(str(part) for part in err['loc']) or '(record)'}: {err['msg']}"
        for err in errors[:_MAX_ERRORS_SHOWN]
    )
    more = f" (+{len(errors) - _MAX_ERRORS_SHOWN} more)" if len(errors) > _MAX_ERRORS_SHOWN else ""
    return "invalid-record", f"not a valid Helix trace: {shown}{more}"


def read_helix(fh: IO[bytes], path: Path, report: IntakeReport) -> Iterator[Located]:
    """Helix JSONL: one :class:`Trace` JSON object per line (validated straight from bytes)."""
    validate = Trace.__pydantic_validator__.validate_json  # model_validate_json minus its Python wrapper
    for lineno, raw in iter_lines(fh, _unreadable(report)):
        if not raw or raw.isspace():
            report.skip("blank-line", "blank line", line=lineno)
            continue
        try:
            trace = validate(raw)
        except ValidationError as exc:
            reason, detail = _diagnose_helix(raw, exc)
            report.skip(reason, detail, line=lineno)
            continue
        if trace.version > TRACE_FORMAT_VERSION:
            report.skip(
                "unsupported-version",
                f"trace version {trace.version} is newer than this Helix reads ({TRACE_FORMAT_VERSION}); "
                "upgrade Helix",
                line=lineno,
            )
            continue
        yield lineno, None, trace


# -- JSON values, line by line or as one document ---------------------------------------------------------

ValueHandler = Callable[[Any, int | None, int | None], Trace]


def _iter_values(
    fh: IO[bytes], report: IntakeReport, handle: ValueHandler, *, conversation_list: bool
) -> Iterator[Located]:
    """Parse JSONL lines, or a JSON-array document (pretty-printed or on one line), into traces.

    ``conversation_list``: a top-level array of chat messages is one conversation (openai-messages).
    """
    on_error = _unreadable(report)
    if big_array(fh):
        first = stream_value(fh, "item")
        if not (conversation_list and isinstance(first, dict) and "role" in first):  # else one conversation
            yield from _records(stream_items(fh, "item", report), report, handle)  # one at a time
            return
    head, single_line = read_head(fh, on_error)
    head = head.strip()
    document = False
    if head.startswith(b"["):
        if single_line:
            document = True
        else:
            try:
                orjson.loads(head)
            except orjson.JSONDecodeError:
                document = True  # the first line is not a value by itself: a pretty-printed document
    if document:
        content = read_all(fh, on_error)
        if content is None:
            return
        try:
            value = orjson.loads(content)
        except orjson.JSONDecodeError as exc:
            if single_line:
                reason, detail = _json_failure(content, exc)
                report.skip(reason, detail, line=1)
                return
            report.notes.append(f"the file is not one valid JSON document ({exc}); it was read line by line")
            fh.seek(0)
        else:
            yield from _document_records(value, report, handle, conversation_list=conversation_list)
            return
    for lineno, raw in iter_lines(fh, on_error):
        if not raw or raw.isspace():
            report.skip("blank-line", "blank line", line=lineno)
            continue
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            reason, detail = _json_failure(raw, exc)
            report.skip(reason, detail, line=lineno)
            continue
        try:
            trace = clipped_retry(handle, value, lineno, None)
        except BadRecord as bad:
            report.skip(bad.reason, bad.detail, line=lineno)
            continue
        yield lineno, None, trace


def _records(
    numbered: Iterable[tuple[int, Any]], report: IntakeReport, handle: ValueHandler
) -> Iterator[Located]:
    """A trace from each ``(record number, value)``, or a counted skip."""
    for index, item in numbered:
        try:
            trace = clipped_retry(handle, item, None, index)
        except BadRecord as bad:
            report.skip(bad.reason, bad.detail, record=index)
            continue
        yield None, index, trace


def _document_records(
    value: Any, report: IntakeReport, handle: ValueHandler, *, conversation_list: bool
) -> Iterator[Located]:
    if isinstance(value, dict) or (
        conversation_list
        and isinstance(value, list)
        and value
        and isinstance(value[0], dict)
        and "role" in value[0]
    ):
        items: list[Any] = [value]
    elif isinstance(value, list):
        items = value
    else:
        report.skip(
            "wrong-type", f"the file is a JSON {_kind_of(value)}; expected a list of records", record=1
        )
        return
    if not items:
        report.notes.append("the file is an empty JSON list: read as zero traces")
    yield from _records(enumerate(items, 1), report, handle)


def _iter_documents(fh: IO[bytes], report: IntakeReport, handle: ValueHandler) -> Iterator[Located]:
    """One JSON object per file (pretty-printed or not), or JSONL / a JSON array of such objects."""
    on_error = _unreadable(report)
    head, single_line = read_head(fh, on_error)
    head = head.strip()
    if head.startswith(b"{") and not single_line:
        try:
            orjson.loads(head)
        except orjson.JSONDecodeError:  # the first line is not a value by itself: one pretty document
            content = read_all(fh, on_error)
            if content is None:
                return
            try:
                value = orjson.loads(content)
            except orjson.JSONDecodeError as exc:
                if head == b"{":  # a bracket alone on the first line: a pretty-printed document, broken
                    reason, detail = _json_failure(content, exc)
                    report.skip(reason, f"the file is not one valid JSON document: {detail}", record=1)
                    return
                report.notes.append(
                    f"the file is not one valid JSON document ({exc}); it was read line by line"
                )
                fh.seek(0)
            else:
                yield from _document_records(value, report, handle, conversation_list=False)
                return
    yield from _iter_values(fh, report, handle, conversation_list=False)


# -- openai-messages ---------------------------------------------------------------------------------------


def _openai_record(stem: str) -> ValueHandler:
    def handle(value: Any, line: int | None, record: int | None) -> Trace:
        metadata: dict[str, Any] = {}
        trace_id: Any = None
        raw_messages: Any
        if isinstance(value, list):
            raw_messages = value
        elif isinstance(value, dict):
            raw_messages = value.get("messages")
            fmt, evidence = classify_value(value, "the record")
            if fmt == "helix":
                raise BadRecord(f"{evidence}; read the file with format='helix'", "unrecognised-record")
            if not isinstance(raw_messages, list):
                hint = f"; read the file with format={fmt!r}" if fmt is not None else ""
                raise BadRecord(f"{evidence}, with no 'messages' list{hint}", "unrecognised-record")
            given = value.get("metadata")
            if given is not None and not isinstance(given, dict):
                raise BadRecord(f"'metadata' is {_kind_of(given)}; expected an object")
            extra = {k: v for k, v in value.items() if k not in ("messages", "metadata", "id")}
            metadata.update(extra)
            metadata.update(given or {})
            trace_id = value.get("id", (given or {}).get("id"))
        else:
            raise BadRecord(
                f"expected a list of chat messages or an object with 'messages', got a JSON {_kind_of(value)}",
                "wrong-type",
            )
        if not raw_messages:
            raise BadRecord("the conversation has no messages")
        if isinstance(trace_id, bool) or (trace_id is not None and not isinstance(trace_id, str | int)):
            raise BadRecord(f"'id' is {_kind_of(trace_id)}; expected a string or an integer")
        converted = convert_chat(raw_messages)
        place = f"L{line}" if line is not None else f"R{record}"
        if trace_id is None:
            trace_id = f"{stem}:{place}:{content_hash(raw_messages, length=12)}"
        metadata["source_format"] = "openai-messages"
        metadata["source_location"] = place
        return validate_trace(
            {
                "id": str(trace_id),
                "input": converted.input,
                "output": converted.output,
                "metadata": metadata,
                "events": converted.events,
                "messages": converted.messages,
            }
        )

    return handle


def read_openai_messages(fh: IO[bytes], path: Path, report: IntakeReport) -> Iterator[Located]:
    """OpenAI chat messages: JSONL of message lists or ``{"messages": [...]}`` objects, or a JSON array."""
    return _iter_values(fh, report, _openai_record(file_stem(path)), conversation_list=True)


# -- tau-bench ---------------------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _tau_record(stem: str) -> ValueHandler:
    def handle(value: Any, line: int | None, record: int | None) -> Trace:
        if not isinstance(value, dict):
            raise BadRecord(f"expected a tau-bench record object, got a JSON {_kind_of(value)}", "wrong-type")
        missing = [key for key in ("task_id", "trial", "traj") if key not in value]
        if missing:
            fmt, evidence = classify_value(value, "the record")
            hint = f"; read the file with format={fmt!r}" if fmt not in (None, "tau-bench") else ""
            raise BadRecord(f"{evidence}, missing {missing}{hint}", "unrecognised-record")
        traj, info = value["traj"], value.get("info") or {}
        if not isinstance(traj, list):
            raise BadRecord(f"'traj' is {_kind_of(traj)}; expected a list of chat messages")
        if not isinstance(info, dict):
            raise BadRecord(f"'info' is {_kind_of(info)}; expected an object")
        converted = convert_chat(traj, where="traj")
        metadata: dict[str, Any] = {
            "source_format": "tau-bench",
            "task_id": value["task_id"],
            "trial": value["trial"],
        }
        for key in ("source", "user_cost"):
            if key in info:
                metadata[key] = info[key]
        # The task (the user simulator's goal, the gold actions) and the reward breakdown are ground
        # truth: "_"-prefixed metadata is never shown to judges.
        for key in ("task", "reward_info"):
            if key in info:
                metadata[f"_{key}"] = info[key]
        status = "unset"
        if "error" in info:
            status = "error"
            metadata["error"] = info["error"]
        scores: list[dict[str, Any]] = []
        reward = _number(value.get("reward"))
        if reward is not None:
            scores.append({"name": "reward", "value": reward, "source": "tau-bench"})
        reward_info = info.get("reward_info")
        sub = reward_info.get("info") if isinstance(reward_info, dict) else None
        if isinstance(sub, dict):
            for key in ("r_actions", "r_outputs"):
                number = _number(sub.get(key))
                if number is not None:
                    scores.append({"name": key, "value": number, "source": "tau-bench"})
        return validate_trace(
            {
                "id": f"{stem}:{value['task_id']}:{value['trial']}",
                "input": converted.input,
                "output": converted.output,
                "status": status,
                "metadata": metadata,
                "events": converted.events,
                "messages": converted.messages,
                "scores": scores,
            }
        )

    return handle


def read_tau_bench(fh: IO[bytes], path: Path, report: IntakeReport) -> Iterator[Located]:
    """tau-bench results: a JSON array of ``{task_id, trial, reward, info, traj}`` (or one per line)."""
    return _iter_values(fh, report, _tau_record(file_stem(path)), conversation_list=False)


READERS: dict[TraceFormat, Reader] = {
    "helix": read_helix,
    "openai-messages": read_openai_messages,
    "tau-bench": read_tau_bench,
    "tau2-bench": read_tau2_bench,
    "mini-swe-agent": read_mini_swe_agent,
    "who-and-when": read_who_and_when,
    "otlp": read_otlp,
    "openinference": read_openinference,
    "openai-agents": read_agents_sdk,
    "langfuse": read_langfuse,
    "langsmith": read_langsmith,
    "inspect": read_inspect,
}
