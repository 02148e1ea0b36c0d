"""The public intake API: read a trace file of any supported format, stream it, or write Helix JSONL."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .._util import write_atomic
from ._format import Source, TraceFormat
from ._model import Trace
from ._registry import classify_value, detect_format, format_spec, resolve_format
from ._report import IntakeReport
from ._source import open_source

__all__ = ["TraceIntake", "iter_traces", "read_traces", "write_traces_jsonl"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceIntake:
    """The traces read from one file and the report of how the read went."""

    traces: list[Trace]
    report: IntakeReport


def _location(line: int | None, record: int | None) -> str:
    return f"line {line}" if line is not None else f"record {record}"


def _stream(path: Path, fmt: TraceFormat, report: IntakeReport) -> Iterator[Trace]:
    first_seen: dict[str, tuple[int | None, int | None]] = {}
    duplicates: dict[str, list[str]] = {}
    try:
        with open_source(path) as fh:
            source = Source(path=path, fh=fh, classify=classify_value)
            for line, record, trace in format_spec(fmt).read(source, report):
                where = first_seen.setdefault(trace.id, (line, record))
                if where != (line, record):
                    locations = duplicates.setdefault(trace.id, [_location(*where)])
                    locations.append(_location(line, record))
                report.add_trace(trace)
                yield trace
    finally:
        report.finish(duplicates)


def iter_traces(
    path: str | Path,
    *,
    format: str = "auto",
    report: IntakeReport | None = None,
) -> Iterator[Trace]:
    """Stream the traces of a file (``.gz`` read transparently), skipping and counting bad records.

    ``format`` is ``"auto"`` (sniffed, see :func:`detect_format`) or one of ``TRACE_FORMATS``. The
    format is resolved before this returns, so an unknown format raises :class:`UsageError` here, not
    on the first ``next()``. Pass an empty :class:`IntakeReport` to collect what was read and skipped;
    its summaries are filled when the iteration ends (or the iterator is closed).
    """
    p = Path(path)
    given = resolve_format(format)
    if given is None:
        detection = detect_format(p)
        fmt, reason = detection.format, detection.reason
    else:
        with open_source(p):  # a missing file is a UsageError now, not at the first next()
            pass
        fmt, reason = given, "given explicitly"
    target = report if report is not None else IntakeReport()
    target.path = str(p)
    target.format = fmt
    target.detection = reason
    return _stream(p, fmt, target)


def read_traces(path: str | Path, *, format: str = "auto") -> TraceIntake:
    """Read every trace of a file into memory, with the intake report (read, skipped and why)."""
    report = IntakeReport()
    traces = list(iter_traces(path, format=format, report=report))
    return TraceIntake(traces=traces, report=report)


def write_traces_jsonl(traces: Iterable[Trace], path: str | Path) -> Path:
    """Write traces as Helix JSONL (one trace per line), atomically; gzip it when the path ends in ``.gz``.

    The file reads back with ``read_traces(path, format="helix")`` (or ``"auto"``) to equal traces.
    Compressed output is deterministic (no timestamp in the gzip header).
    """
    target = Path(path)
    data = b"".join(trace.model_dump_json().encode() + b"\n" for trace in traces)
    if target.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    return write_atomic(target, data)
