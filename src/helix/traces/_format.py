"""What a trace format is: a name, a sniffer and a reader, in one object (:class:`FormatSpec`).

Each format lives in its own module and defines one ``FormatSpec``; :mod:`helix.traces._registry` lists
them in detection order. A reader never imports another reader: what formats share (JSON layout,
coercions, span grouping, message dialects) lives in shared modules, and what a reader needs to know
about other formats (to say "this record is OTLP, read the file as otlp") reaches it through
:attr:`Source.classify`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from ._model import Trace
from ._report import IntakeReport

__all__ = [
    "Classify",
    "FormatSpec",
    "NotThisFormat",
    "Read",
    "Source",
    "TraceFormat",
    "TraceLocated",
    "records_sniffer",
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
"""The name of a format Helix reads, in the order messages list them (the registry holds one
:class:`FormatSpec` per name, in detection order)."""

Classify = Callable[[Any, str], "tuple[TraceFormat | None, str]"]
"""``classify(value, where)``: the format a parsed value belongs to and the evidence, or ``None`` and what
the value is (the registry's ordered sniff over every format)."""

TraceLocated = tuple[int | None, int | None, Trace]
"""``(line, record, trace)``: where a trace was read (see :data:`helix.traces._json.Located`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """An open trace file as a reader gets it."""

    path: Path
    fh: IO[bytes]  # binary, decompressed when the file is gzip
    classify: Classify


Read = Callable[[Source, IntakeReport], Iterator[TraceLocated]]
"""``read(source, report)``: the traces of the file, each bad record skipped and counted in ``report``."""


class NotThisFormat(Exception):
    """Raised by a file sniffer that recognised the file's kind but not a readable log of its format
    (a ZIP archive that is not an Inspect log): detection stops and says why."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FormatSpec:
    """One trace format: how to recognise it and how to read it.

    ``sniff(value)`` gets one parsed JSONL line or the whole document and returns the evidence that it
    is this format (a phrase such as ``"an OTLP/JSON export request ('resourceSpans')"``) or ``None``.
    ``sniff_file(magic, path)``, for binary formats, gets the first 4 bytes of the file and returns the
    evidence, ``None``, or raises :class:`NotThisFormat`.
    """

    name: TraceFormat
    sniff: Callable[[Any], str | None]
    read: Read
    sniff_file: Callable[[bytes, Path], str | None] | None = None


def records_sniffer(record: Callable[[dict[str, Any]], str | None]) -> Callable[[Any], str | None]:
    """A sniffer for a format of records (spans): one record, a batch ``{"data": [...]}`` of them, or a
    list whose first item is either; ``record`` recognises one record object."""

    def object_evidence(value: dict[str, Any]) -> str | None:
        found = record(value)
        if found is not None:
            return found
        data = value.get("data")
        if isinstance(data, list) and data and isinstance(data[0], dict):
            inner = record(data[0])
            if inner is not None:
                return f"a batch ('data') of {inner}"
        return None

    def sniff(value: Any) -> str | None:
        if isinstance(value, dict):
            return object_evidence(value)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            found = object_evidence(value[0])
            return f"a list whose first item is {found}" if found is not None else None
        return None

    return sniff
