"""Helix JSONL: one canonical :class:`Trace` per line, as ``write_traces_jsonl`` writes it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from pydantic import ValidationError

from ._format import FormatSpec, Source, TraceLocated
from ._json import json_failure, unreadable, validation_summary
from ._model import TRACE_FORMAT_VERSION, Trace
from ._report import IntakeReport, SkipReason
from ._source import iter_lines
from ._values import kind_of

__all__ = ["HELIX"]


def _sniff(value: Any) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        if "events" in value or isinstance(value.get("version"), int):
            return "a Helix trace object with 'id' and 'events'/'version'"
    return None


def _diagnose(raw: bytes, exc: ValidationError, source: Source) -> tuple[SkipReason, str]:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as bad:
        return json_failure(raw, bad)
    if not isinstance(value, dict):
        return "wrong-type", f"expected a Helix trace object, got a JSON {kind_of(value)}"
    fmt, evidence = source.classify(value, "the line")
    if fmt is not None and fmt != "helix":
        return "unrecognised-record", f"{evidence}, not a Helix trace; read the file with format={fmt!r}"
    return "invalid-record", f"not a valid Helix trace: {validation_summary(exc)}"


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    """One :class:`Trace` JSON object per line, validated straight from bytes."""
    validate = Trace.__pydantic_validator__.validate_json  # model_validate_json minus its Python wrapper
    for lineno, raw in iter_lines(source.fh, unreadable(report)):
        if not raw or raw.isspace():
            report.skip("blank-line", "blank line", line=lineno)
            continue
        try:
            trace = validate(raw)
        except ValidationError as exc:
            reason, detail = _diagnose(raw, exc, source)
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


HELIX = FormatSpec(name="helix", sniff=_sniff, read=_read)
