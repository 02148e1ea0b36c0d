"""Phoenix / OpenInference span exports.

Read shapes:
- JSONL / REST spans: ``{"context": {"trace_id", "span_id"}, "span_kind", "parent_id", "start_time",
  "end_time", "status_code", "status_message", "attributes": {...nested or dotted...}, "events"}``,
  one per line, a JSON array of them, or REST pages ``{"data": [...], "next_cursor"}``;
- flattened rows (a DataFrame written out): ``context.span_id``, ``context.trace_id`` and one
  ``attributes.<key>`` column per attribute;
- Parquet (``TraceDataset.save``), through pyarrow (the ``parquet`` extra).

The attributes are interpreted by :mod:`helix.traces._openinference_attrs`, which the OTLP reader shares.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from .._exceptions import UsageError
from ._format import FormatSpec, Source, TraceLocated, records_sniffer
from ._json import clipped_retry, json_values, page_items
from ._openinference_attrs import openinference_event, span_error
from ._report import IntakeReport
from ._source import read_magic
from ._span_content import MessagesOf, flatten, parse_time
from ._spans import Span, SpanGrouper, SpanTraces
from ._values import BadRecord, decode_json, shown

__all__ = ["OPENINFERENCE"]

PARQUET_MAGIC = b"PAR1"


def _sniff_record(value: dict[str, Any]) -> str | None:
    context = value.get("context")
    if "context.span_id" in value or (
        isinstance(context, dict) and "span_id" in context and ("span_kind" in value or "parent_id" in value)
    ):
        return "a Phoenix / OpenInference span ('context.span_id', 'span_kind')"
    return None


def _sniff_file(magic: bytes, path: Path) -> str | None:
    if magic == PARQUET_MAGIC:  # Helix reads Phoenix span exports (TraceDataset.save)
        return "the file is Parquet (magic 'PAR1'): a Phoenix span export"
    return None


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


def _feed(
    items: Iterator[tuple[int | None, Any, str]],
    line: int | None,
    grouper: SpanGrouper,
    intake: SpanTraces,
    report: IntakeReport,
) -> Iterator[TraceLocated]:
    for record, row, at in items:
        try:
            span = clipped_retry(phoenix_span, row, line, record, grouper.history)
        except BadRecord as bad:
            report.skip(bad.reason, at + bad.detail, line=line, record=record)
            continue
        grouper.add(span)
        yield from intake.emit(grouper.ready())


def _read_parquet(fh: IO[bytes], path: Path, report: IntakeReport) -> Iterator[TraceLocated]:
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
                yield from _feed(iter([(index, row, "")]), None, grouper, intake, report)
    except (OSError, ValueError) as exc:  # pyarrow's errors derive from these
        report.skip(
            "unreadable", f"the Parquet file could not be read: {type(exc).__name__}: {exc}", record=1
        )
    yield from intake.emit(grouper.drain())
    intake.finish()


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    """Phoenix span exports: JSONL (nested or dotted attributes), JSON arrays, REST pages, or Parquet."""
    if read_magic(source.fh) == PARQUET_MAGIC:
        yield from _read_parquet(source.fh, source.path, report)
        return
    grouper, intake = SpanGrouper(), SpanTraces(report, "openinference")
    for line, record, value in json_values(source.fh, report, pages=("data",)):
        yield from _feed(page_items(value, "data", line, record, "span"), line, grouper, intake, report)
    yield from intake.emit(grouper.drain())
    intake.finish()


OPENINFERENCE = FormatSpec(
    name="openinference", sniff=records_sniffer(_sniff_record), read=_read, sniff_file=_sniff_file
)
