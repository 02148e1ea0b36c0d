"""The trace formats Helix reads, and sniffing a file's format from its first records."""

from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import orjson

from .._exceptions import UsageError
from ._chat import shown
from ._inspect import ZIP_MAGIC, is_inspect_value
from ._langfuse import is_langfuse_value
from ._langsmith import is_langsmith_value
from ._miniswe import is_miniswe_trajectory
from ._source import open_source, strip_bom
from ._tau2 import is_tau2_simulation
from ._whowhen import is_who_and_when

__all__ = [
    "TRACE_FORMATS",
    "FormatDetection",
    "TraceFormat",
    "classify_value",
    "detect_format",
    "resolve_format",
]

TraceFormat = Literal[
    "helix",
    "openai-messages",
    "tau-bench",
    "tau2-bench",
    "mini-swe-agent",
    "who-and-when",
    "otlp",
    "openinference",
    "openai-agents",
    "langfuse",
    "langsmith",
    "inspect",
]
TRACE_FORMATS: tuple[TraceFormat, ...] = get_args(TraceFormat)

_MAX_SNIFF_LINES = 200
_MAX_SNIFF_BYTES = 64 * 1024 * 1024

# Formats we recognise but do not read (yet): the sniffed signal -> what it is.
_KNOWN_OTHER: tuple[tuple[tuple[str, ...], str], ...] = ()


def _export_evidence(value: Any) -> tuple[TraceFormat, str] | None:
    """Langfuse, LangSmith or Inspect AI data (checked first: their records carry 'id' and 'events' too)."""
    if is_inspect_value(value):
        return "inspect", "an Inspect AI eval log ('eval' spec with 'samples'/'version')"
    if is_langsmith_value(value):
        return "langsmith", "LangSmith runs ('run_type' with 'trace_id'/'parent_run_id'/'child_runs'/...)"
    if is_langfuse_value(value):
        return "langfuse", "Langfuse data (a trace with 'observations', or observation rows with a parent id)"
    return None


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


def _tau2_evidence(value: dict[str, Any]) -> str | None:
    """Why ``value`` is tau2-bench output (a results file, its dir-layout index, one simulation), or None."""
    if isinstance(value.get("simulations"), list) and ("tasks" in value or "info" in value):
        return "tau2-bench results ('info', 'tasks', 'simulations')"
    if "simulation_index" in value and "info" in value:
        return "a tau2-bench dir-layout results.json ('info', 'simulation_index'; simulations/ beside it)"
    if is_tau2_simulation(value):
        return "one tau2-bench simulation ('task_id', 'messages', 'termination_reason'/'reward_info')"
    return None


def _span_evidence(value: dict[str, Any]) -> tuple[TraceFormat, str] | None:
    """The span format (OTLP, OpenInference/Phoenix, OpenAI Agents SDK) of one object, or None."""
    if "resourceSpans" in value or "resource_spans" in value:
        return "otlp", "an OTLP/JSON export request ('resourceSpans')"
    kind = value.get("object")
    if (kind == "trace.span" and "span_data" in value) or (kind == "trace" and "workflow_name" in value):
        return "openai-agents", f'an OpenAI Agents SDK export ("object": {shown(kind)})'
    context = value.get("context")
    if "context.span_id" in value or (
        isinstance(context, dict) and "span_id" in context and ("span_kind" in value or "parent_id" in value)
    ):
        return "openinference", "a Phoenix / OpenInference span ('context.span_id', 'span_kind')"
    data = value.get("data")
    if isinstance(data, list) and data and isinstance(data[0], dict):
        inner = _span_evidence(data[0])
        if inner is not None:
            return inner[0], f"a batch ('data') of {inner[1]}"
    return None


def classify_value(value: Any, where: str) -> tuple[TraceFormat | None, str]:
    """The format ``value`` (one parsed line or the whole document) belongs to, with the evidence.

    Returns ``(None, description)`` when the value says what it is not: the description is shown to the
    user when no format matches.
    """
    export = _export_evidence(value)
    if export is not None:
        return export[0], f"{where} is {export[1]}"
    if isinstance(value, dict):
        if isinstance(value.get("id"), str) and ("events" in value or isinstance(value.get("version"), int)):
            return "helix", f"{where} is a Helix trace object with 'id' and 'events'/'version'"
        spans = _span_evidence(value)
        if spans is not None:
            return spans[0], f"{where} is {spans[1]}"
        if "resourceLogs" in value or "resource_logs" in value:
            return None, (
                f"{where} is an OTLP/JSON logs batch ('resourceLogs'); read the traces file instead: a logs "
                "file next to it (traces.jsonl -> logs.jsonl, run.jsonl -> run.logs.jsonl) is joined to it"
            )
        # Before the generic 'messages' rule: these formats carry a 'messages' list too.
        tau2 = _tau2_evidence(value)
        if tau2 is not None:
            return "tau2-bench", f"{where} is {tau2}"
        if is_miniswe_trajectory(value):
            return (
                "mini-swe-agent",
                f"{where} is a mini-SWE-agent trajectory ('instance_id', 'info', 'messages')",
            )
        if is_who_and_when(value):
            return "who-and-when", f"{where} is a Who&When log ('history' with 'question'/'mistake_agent')"
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
            spans = _span_evidence(first)
            if spans is not None:
                return spans[0], f"{where} is a list whose first item is {spans[1]}"
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


def _zip_format(path: Path) -> FormatDetection:
    """A ZIP archive: an Inspect AI ``.eval`` log when it holds ``header.json`` or a start journal."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise _unknown(path, f"the file is a damaged ZIP archive ({exc})") from None
    if "header.json" in names or "_journal/start.json" in names:
        return FormatDetection(
            format="inspect", reason="a ZIP archive with header.json: an Inspect AI .eval log"
        )
    shown = ", ".join(sorted(names)[:5])
    raise _unknown(path, f"the file is a ZIP archive without an Inspect header.json (members: {shown})")


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
            magic = fh.read(4)
        except (OSError, EOFError, zlib.error):
            magic = b""  # a damaged stream: the line loop below reports where it breaks
        if magic == ZIP_MAGIC:
            return _zip_format(p)
        if magic == b"PAR1":  # Parquet: Helix reads Phoenix span exports (TraceDataset.save)
            return FormatDetection(
                format="openinference", reason="the file is Parquet (magic 'PAR1'): a Phoenix span export"
            )
        fh.seek(0)
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
                    if nonblank == 1 and line[:1] in (b"{", b"["):
                        break  # an opening bracket alone: a pretty-printed document, parsed whole below
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
