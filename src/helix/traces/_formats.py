"""The trace formats Helix reads, and sniffing a file's format from its first records."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import orjson

from .._exceptions import UsageError
from ._source import open_source, strip_bom

__all__ = [
    "TRACE_FORMATS",
    "FormatDetection",
    "TraceFormat",
    "classify_value",
    "detect_format",
    "resolve_format",
]

TraceFormat = Literal["helix", "openai-messages", "tau-bench"]
TRACE_FORMATS: tuple[TraceFormat, ...] = get_args(TraceFormat)

_MAX_SNIFF_LINES = 200
_MAX_SNIFF_BYTES = 64 * 1024 * 1024

# Formats we recognise but do not read (yet): the sniffed signal -> what it is.
_KNOWN_OTHER: tuple[tuple[tuple[str, ...], str], ...] = (
    (("resourceSpans",), "OTLP/JSON traces (OpenTelemetry)"),
    (("resource_spans",), "OTLP/JSON traces (OpenTelemetry)"),
    (("resourceLogs",), "OTLP/JSON logs (OpenTelemetry GenAI events)"),
    (("eval", "samples"), "an Inspect AI eval log"),
    (("run_type",), "LangSmith runs"),
    (("span_data",), "OpenAI Agents SDK spans"),
    (("observations",), "a Langfuse trace export"),
    (("parentObservationId",), "Langfuse observations"),
    (("parent_observation_id",), "Langfuse observations"),
    (("span_kind",), "Phoenix / OpenInference spans"),
    (("simulations", "tasks"), "tau2-bench results"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class FormatDetection:
    """The sniffed format of a file and the evidence for it."""

    format: TraceFormat
    reason: str


def resolve_format(name: str) -> TraceFormat | None:
    """``None`` for ``"auto"``, the format for a known name; a :class:`UsageError` otherwise."""
    if name == "auto":
        return None
    for fmt in TRACE_FORMATS:
        if name == fmt:
            return fmt
    raise UsageError(f"Unknown trace format {name!r}; use 'auto' or one of: {', '.join(TRACE_FORMATS)}.")


def _keys(obj: dict[str, Any]) -> str:
    keys = sorted(obj)
    shown = ", ".join(repr(k) for k in keys[:8])
    return "{" + shown + (", ..." if len(keys) > 8 else "") + "}"


def classify_value(value: Any, where: str) -> tuple[TraceFormat | None, str]:
    """The format ``value`` (one parsed line or the whole document) belongs to, with the evidence.

    Returns ``(None, description)`` when the value says what it is not: the description is shown to the
    user when no format matches.
    """
    if isinstance(value, dict):
        if isinstance(value.get("id"), str) and ("events" in value or isinstance(value.get("version"), int)):
            return "helix", f"{where} is a Helix trace object with 'id' and 'events'/'version'"
        if "messages" in value and isinstance(value["messages"], list):
            return "openai-messages", f"{where} is an object with a 'messages' list"
        if "task_id" in value and "traj" in value:
            return "tau-bench", f"{where} is a tau-bench record with 'task_id' and 'traj'"
        for signal, what in _KNOWN_OTHER:
            if all(key in value for key in signal):
                return None, f"{where} looks like {what} (keys {_keys(value)}), which Helix does not read yet"
        if "role" in value:
            return (
                None,
                f"{where} is a single chat message; put a conversation's messages in one list per line",
            )
        return None, f"{where} is a JSON object with keys {_keys(value)}"
    if isinstance(value, list):
        if not value:
            return None, f"{where} is an empty list"
        first = value[0]
        if isinstance(first, dict):
            if "role" in first:
                return "openai-messages", f"{where} is a list of chat messages"
            if "task_id" in first and "traj" in first:
                return "tau-bench", f"{where} is a list of tau-bench records ('task_id', 'traj', ...)"
            if isinstance(first.get("messages"), list):
                return "openai-messages", f"{where} is a list of objects with a 'messages' list"
            return None, f"{where} is a list of objects with keys {_keys(first)}"
        if isinstance(first, list) and first and isinstance(first[0], dict) and "role" in first[0]:
            return "openai-messages", f"{where} is a list of conversations (lists of chat messages)"
        return None, f"{where} is a list of {type(first).__name__}"
    return None, f"{where} is a JSON {type(value).__name__}"


def _unknown(path: Path, sniffed: str) -> UsageError:
    return UsageError(
        f"Cannot tell the trace format of {str(path)!r}: {sniffed}. Helix reads: {', '.join(TRACE_FORMATS)}. "
        "Convert the file to one of them, or pass the format explicitly (--format / format=...)."
    )


def detect_format(path: str | Path) -> FormatDetection:
    """Sniff the format of a trace file (``.gz`` or not) from its first parseable records.

    An empty file is reported as ``helix`` (it reads as zero traces in any format). A file no reader
    recognises raises :class:`UsageError` naming the formats Helix reads and what was sniffed.
    """
    p = Path(path)
    sniffed: str | None = None
    first_bad: str | None = None
    scanned = 0
    nonblank = 0
    lineno = 0

    def _ignore(line: int, message: str) -> None:
        nonlocal first_bad
        first_bad = first_bad or f"the file is unreadable at line {line} ({message})"

    with open_source(p) as fh:
        try:
            for raw in fh:
                lineno += 1
                if lineno > _MAX_SNIFF_LINES or scanned > _MAX_SNIFF_BYTES:
                    break
                scanned += len(raw)
                line = (strip_bom(raw) if lineno == 1 else raw).strip()
                if not line:
                    continue
                nonblank += 1
                try:
                    value = orjson.loads(line)
                except orjson.JSONDecodeError:
                    first_bad = first_bad or f"line {lineno} is not JSON (starts {line[:40]!r})"
                    continue
                fmt, evidence = classify_value(value, f"line {lineno}")
                if fmt is not None:
                    return FormatDetection(format=fmt, reason=evidence)
                sniffed = sniffed or evidence
        except (OSError, EOFError, zlib.error) as exc:
            _ignore(lineno + 1, f"{type(exc).__name__}: {exc}")
        if nonblank == 0 and first_bad is None:
            return FormatDetection(format="helix", reason="the file is empty; it reads as zero traces")
        if sniffed is None:
            # Not line-delimited (a pretty-printed JSON document, say): parse the whole document.
            try:
                fh.seek(0)
                document = orjson.loads(strip_bom(fh.read()))
            except (orjson.JSONDecodeError, OSError, EOFError, zlib.error):
                pass
            else:
                fmt, evidence = classify_value(document, "the JSON document")
                if fmt is not None:
                    return FormatDetection(format=fmt, reason=evidence)
                sniffed = evidence
    raise _unknown(p, sniffed or first_bad or "no record could be parsed")
