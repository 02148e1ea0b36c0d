"""The registry of trace formats, in detection order, and detecting a file's format from its first records.

Adding a format is one module defining a :class:`~helix.traces._format.FormatSpec` and one line in
``FORMATS`` below, plus its name in :data:`~helix.traces._format.TraceFormat` (the order messages list
formats in; ``TRACE_FORMATS`` is that list). The order of ``FORMATS`` matters: the
first format whose sniffer claims a value wins, so the exports whose records also carry ``id`` and
``events`` (Inspect, LangSmith, Langfuse) come before Helix's own traces, span formats before the
message formats, and the loosest rule (any ``messages`` list) near the end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, get_args

import orjson

from .._exceptions import UsageError
from ._agents_sdk import OPENAI_AGENTS
from ._format import FormatSpec, NotThisFormat, TraceFormat
from ._helix import HELIX
from ._inspect import INSPECT
from ._json import layout
from ._langfuse import LANGFUSE
from ._langsmith import LANGSMITH
from ._miniswe import MINI_SWE_AGENT
from ._openai_messages import OPENAI_MESSAGES
from ._openinference import OPENINFERENCE
from ._otlp import OTLP
from ._source import READ_ERRORS, open_source, read_magic, strip_bom
from ._tau2 import TAU2_BENCH
from ._tau_bench import TAU_BENCH
from ._whowhen import WHO_AND_WHEN

__all__ = [
    "FORMATS",
    "TRACE_FORMATS",
    "FormatDetection",
    "classify_value",
    "detect_format",
    "format_spec",
    "resolve_format",
]

FORMATS: tuple[FormatSpec, ...] = (
    INSPECT,
    LANGSMITH,
    LANGFUSE,
    HELIX,
    OTLP,
    OPENAI_AGENTS,
    OPENINFERENCE,
    TAU2_BENCH,
    MINI_SWE_AGENT,
    WHO_AND_WHEN,
    OPENAI_MESSAGES,
    TAU_BENCH,
)
TRACE_FORMATS: tuple[TraceFormat, ...] = get_args(TraceFormat)
_BY_NAME: dict[str, FormatSpec] = {spec.name: spec for spec in FORMATS}
if sorted(_BY_NAME) != sorted(TRACE_FORMATS) or len(_BY_NAME) != len(FORMATS):  # pragma: no cover
    raise AssertionError("every TraceFormat name needs exactly one FormatSpec in FORMATS, and back")

_MAX_SNIFF_LINES = 200
_MAX_SNIFF_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class FormatDetection:
    """The sniffed format of a file and the evidence for it."""

    format: TraceFormat
    reason: str


def format_spec(name: TraceFormat) -> FormatSpec:
    """The registered format called ``name``."""
    return _BY_NAME[name]


def resolve_format(name: str) -> TraceFormat | None:
    """``None`` for ``"auto"``, the format for a known name; a :class:`UsageError` otherwise."""
    if name == "auto":
        return None
    spec = _BY_NAME.get(name)
    if spec is None:
        raise UsageError(f"Unknown trace format {name!r}; use 'auto' or one of: {', '.join(TRACE_FORMATS)}.")
    return spec.name


def _keys(obj: dict[str, Any]) -> str:
    keys = sorted(obj)
    shown = ", ".join(repr(k) for k in keys[:8])
    return "{" + shown + (", ..." if len(keys) > 8 else "") + "}"


def _describe(value: Any) -> str:
    """What a value no format claims is, for the message that lists the formats Helix reads."""
    if isinstance(value, dict):
        if "resourceLogs" in value or "resource_logs" in value:
            return (
                "an OTLP/JSON logs batch ('resourceLogs'); read the traces file instead: a logs "
                "file next to it (traces.jsonl -> logs.jsonl, run.jsonl -> run.logs.jsonl) is joined to it"
            )
        if "role" in value:
            return "a single chat message; put a conversation's messages in one list per line"
        return f"a JSON object with keys {_keys(value)}"
    if isinstance(value, list):
        if not value:
            return "an empty list"
        if isinstance(value[0], dict):
            return f"a list of objects with keys {_keys(value[0])}"
        return f"a list of {type(value[0]).__name__}"
    return f"a JSON {type(value).__name__}"


def classify_value(value: Any, where: str) -> tuple[TraceFormat | None, str]:
    """The format ``value`` (one parsed line or the whole document) belongs to, with the evidence.

    Returns ``(None, description)`` when no format claims it: the description is shown to the user.
    """
    for spec in FORMATS:
        evidence = spec.sniff(value)
        if evidence is not None:
            return spec.name, f"{where} is {evidence}"
    return None, f"{where} is {_describe(value)}"


def _unknown(path: Path, sniffed: str) -> UsageError:
    return UsageError(
        f"Cannot tell the trace format of {str(path)!r}: {sniffed}. Helix reads: {', '.join(TRACE_FORMATS)}. "
        "Convert the file to one of them, or pass the format explicitly (--format / format=...)."
    )


def detect_format(path: str | Path) -> FormatDetection:
    """Sniff the format of a trace file (``.gz`` or not) from its first parseable records.

    Binary formats are told by their first bytes. A JSON document (see :func:`helix.traces._json.layout`)
    is classified whole; JSONL by its first lines. An empty file is reported as ``helix`` (it reads as
    zero traces in any format). A file no reader recognises raises :class:`UsageError` naming the formats
    Helix reads and what was sniffed.
    """
    p = Path(path)
    sniffed: str | None = None
    first_bad: str | None = None

    def ignore(line: int, message: str) -> None:
        nonlocal first_bad
        first_bad = first_bad or f"the file is unreadable at line {line} ({message})"

    with open_source(p) as fh:
        magic = read_magic(fh)
        for spec in FORMATS:
            if spec.sniff_file is not None:
                try:
                    evidence = spec.sniff_file(magic, p)
                except NotThisFormat as exc:
                    raise _unknown(p, str(exc)) from None
                if evidence is not None:
                    return FormatDetection(format=spec.name, reason=evidence)
        shape = layout(fh, ignore)
        if shape.document:
            try:
                document = orjson.loads(strip_bom(fh.read()))
            except (orjson.JSONDecodeError, *READ_ERRORS):
                fh.seek(0)
            else:
                fmt, evidence = classify_value(
                    document, "line 1" if shape.single_line else "the JSON document"
                )
                if fmt is not None:
                    return FormatDetection(format=fmt, reason=evidence)
                raise _unknown(p, evidence)
        found = _sniff_lines(fh, ignore)
        if isinstance(found, FormatDetection):
            return found
        sniffed, nonblank, bad_line = found
        first_bad = first_bad or bad_line
        if nonblank == 0 and first_bad is None:
            return FormatDetection(format="helix", reason="the file is empty; it reads as zero traces")
    raise _unknown(p, sniffed or first_bad or "no record could be parsed")


def _sniff_lines(
    fh: IO[bytes], ignore: Callable[[int, str], None]
) -> FormatDetection | tuple[str | None, int, str | None]:
    """The format of the first line that one claims, else ``(first evidence, non-blank lines, first bad)``."""
    sniffed: str | None = None
    first_bad: str | None = None
    scanned = nonblank = lineno = 0
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
                    break  # an opening bracket alone: a pretty-printed document that did not parse
                continue
            fmt, evidence = classify_value(value, f"line {lineno}")
            if fmt is not None:
                return FormatDetection(format=fmt, reason=evidence)
            sniffed = sniffed or evidence
    except READ_ERRORS as exc:
        ignore(lineno + 1, f"{type(exc).__name__}: {exc}")
    return sniffed, nonblank, first_bad
