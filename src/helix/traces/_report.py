"""The intake report: what a read produced, what it skipped and why, and the shape of what it read.

Reading is tolerant, never silent: every line or record that did not become a trace is listed with its
file, line (or record number for JSON-array files) and a reason, so a user can fix the source.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ._model import Trace

__all__ = [
    "EXAMPLES_PER_REASON",
    "INTAKE_REPORT_VERSION",
    "CountSummary",
    "DuplicateId",
    "FormatCount",
    "IntakeReport",
    "IntakeSummary",
    "SkipReason",
    "SkippedRecord",
    "UnreadFile",
    "UnreadKind",
]

INTAKE_REPORT_VERSION = 1

SkipReason = Literal[
    "blank-line",  # an empty or whitespace-only line in a JSONL file
    "invalid-utf8",  # bytes that are not UTF-8
    "invalid-json",  # not parseable JSON (truncated, garbage, ...)
    "wrong-type",  # valid JSON of the wrong shape (a number or string where a record belongs)
    "invalid-record",  # the right kind of record with missing or mistyped fields
    "unrecognised-record",  # a JSON object this format does not describe
    "unsupported-version",  # a Helix trace written by a newer Helix
    "unreadable",  # the file could not be read from here on (truncated or corrupt gzip, ...)
    "too-large",  # a line or a record past the size Helix holds in memory at once
]

EXAMPLES_PER_REASON = 20
"""How many skipped records an :class:`IntakeReport` keeps as examples per reason (all are counted)."""
MAX_NOTES = 50
MAX_TOOL_NAMES = 1000
OTHER_TOOLS = "(other tools)"
_MAX_DETAIL_CHARS = 500


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SkippedRecord(_Model):
    """One line or record that did not become a trace."""

    path: str
    line: int | None = None
    record: int | None = None
    reason: SkipReason
    detail: str

    def location(self) -> str:
        """``path:line`` (JSONL) or ``path record N`` (JSON arrays), for messages."""
        if self.line is not None:
            return f"{self.path}:{self.line}"
        if self.record is not None:
            return f"{self.path} record {self.record}"
        return self.path


class CountSummary(_Model):
    """min / nearest-rank median / max of a per-trace count (``None`` when no trace was read)."""

    n: int = 0
    min: int | None = None
    median: int | None = None
    max: int | None = None

    @classmethod
    def from_histogram(cls, histogram: dict[int, int]) -> CountSummary:
        """Summarise ``{value: how many traces}``; the median is the nearest-rank 50th percentile."""
        n = sum(histogram.values())
        if n == 0:
            return cls()
        values = sorted(histogram)
        rank = math.ceil(0.5 * n)
        seen = 0
        median = values[-1]
        for value in values:
            seen += histogram[value]
            if seen >= rank:
                median = value
                break
        return cls(n=n, min=values[0], median=median, max=values[-1])


class DuplicateId(_Model):
    """A trace id that occurs more than once in one file (all copies are kept)."""

    id: str
    locations: list[str]


class IntakeReport(_Model):
    """What one read of a trace file produced. Build an empty one and pass it to ``iter_traces``.

    Every skipped line or record is counted in ``skipped_by_reason``; ``skipped`` keeps the first
    ``examples_per_reason`` of each reason as examples (``None``: all of them), so a file of millions of
    bad lines reads in bounded memory. ``turns`` counts user messages per trace (each user message opens
    a turn; the transcript's, else the user events); ``events`` counts events per trace; ``tools`` counts
    tool events by tool name (the first ``MAX_TOOL_NAMES`` names, the rest together under
    ``"(other tools)"``); ``error_tool_results`` counts tool events whose status is ``error``.
    """

    version: int = INTAKE_REPORT_VERSION
    path: str = ""
    format: str | None = None
    detection: str | None = None
    traces_read: int = 0
    examples_per_reason: int | None = EXAMPLES_PER_REASON
    skipped: list[SkippedRecord] = Field(default_factory=list)
    skipped_by_reason: dict[str, int] = Field(default_factory=dict)
    tools: dict[str, int] = Field(default_factory=dict)
    tool_errors: dict[str, int] = Field(default_factory=dict)
    error_tool_results: int = 0
    turns: CountSummary = Field(default_factory=CountSummary)
    events: CountSummary = Field(default_factory=CountSummary)
    turn_histogram: dict[int, int] = Field(default_factory=dict)
    event_histogram: dict[int, int] = Field(default_factory=dict)
    duplicate_ids: list[DuplicateId] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def records_skipped(self) -> int:
        """How many lines or records were skipped (``skipped`` holds examples of them)."""
        return sum(self.skipped_by_reason.values())

    # -- building (used by the readers) ------------------------------------------------------------

    def skip(
        self, reason: SkipReason, detail: str, *, line: int | None = None, record: int | None = None
    ) -> None:
        """Count one line or record that did not become a trace (kept as an example while there are few)."""
        counted = self.skipped_by_reason.get(reason, 0) + 1
        self.skipped_by_reason[reason] = counted
        limit = self.examples_per_reason
        if limit is None or counted <= limit:
            if len(detail) > _MAX_DETAIL_CHARS:
                detail = detail[: _MAX_DETAIL_CHARS - 3] + "..."
            self.skipped.append(
                SkippedRecord(path=self.path, line=line, record=record, reason=reason, detail=detail)
            )

    def note(self, text: str) -> None:
        """Add a note for the user, once (at most ``MAX_NOTES`` notes)."""
        if text not in self.notes and len(self.notes) < MAX_NOTES:
            self.notes.append(text)

    def add_trace(self, trace: Trace) -> None:
        """Count one trace that was read."""
        self.traces_read += 1
        user_events = 0
        tools = self.tools
        for event in trace.events:
            kind = event.kind
            if kind == "user":
                user_events += 1
            elif kind == "tool":
                name = event.name if event.name in tools or len(tools) < MAX_TOOL_NAMES else OTHER_TOOLS
                tools[name] = tools.get(name, 0) + 1
                if event.status == "error":
                    self.error_tool_results += 1
                    self.tool_errors[name] = self.tool_errors.get(name, 0) + 1
        messages = trace.messages
        turns = sum(m.role == "user" for m in messages) if messages else user_events
        self.turn_histogram[turns] = self.turn_histogram.get(turns, 0) + 1
        n_events = len(trace.events)
        self.event_histogram[n_events] = self.event_histogram.get(n_events, 0) + 1

    def finish(self, duplicates: dict[str, list[str]]) -> None:
        """Fill the summaries once the file has been read (safe to call again)."""
        self.turns = CountSummary.from_histogram(self.turn_histogram)
        self.events = CountSummary.from_histogram(self.event_histogram)
        self.tools = dict(sorted(self.tools.items(), key=lambda kv: (-kv[1], kv[0])))
        self.tool_errors = dict(sorted(self.tool_errors.items(), key=lambda kv: (-kv[1], kv[0])))
        self.duplicate_ids = [
            DuplicateId(id=trace_id, locations=locations) for trace_id, locations in duplicates.items()
        ]
        if self.traces_read == 0 and not self.skipped_by_reason and not any("empty" in n for n in self.notes):
            self.note("the file holds no records: read as zero traces")
        if self.duplicate_ids:
            self.note(f"{len(self.duplicate_ids)} trace id(s) occur more than once; every copy was kept")
        if len(self.skipped) < self.records_skipped:
            self.note(
                f"{self.records_skipped} line(s) or record(s) were skipped; the first {self.examples_per_reason} "
                "of each reason are listed"
            )


class FormatCount(_Model):
    """How many files of one format were read, and the traces and skips they produced."""

    files: int = 0
    traces_read: int = 0
    records_skipped: int = 0


UnreadKind = Literal["damaged", "not-json", "unknown-shape", "not-read"]
"""Why a file was not read: it is damaged (a corrupt ``.gz`` or ZIP), not JSON, JSON no format matches, or
it could not be read for another reason (given in the reason)."""


class UnreadFile(_Model):
    """A file that was not read at all (no format matched, or it could not be opened), and why."""

    path: str
    reason: str
    kind: UnreadKind = "not-read"


class IntakeSummary(_Model):
    """The intake of several files (a directory, a glob): one report per file and counts per format."""

    version: int = INTAKE_REPORT_VERSION
    files: list[IntakeReport] = Field(default_factory=list)
    unread: list[UnreadFile] = Field(default_factory=list)
    by_format: dict[str, FormatCount] = Field(default_factory=dict)

    @property
    def traces_read(self) -> int:
        """Traces read over all files."""
        return sum(report.traces_read for report in self.files)

    @property
    def records_skipped(self) -> int:
        """Lines or records skipped over all files."""
        return sum(report.records_skipped for report in self.files)

    def add(self, report: IntakeReport) -> None:
        """Count one file once it has been read."""
        self.files.append(report)
        count = self.by_format.setdefault(report.format or "?", FormatCount())
        count.files += 1
        count.traces_read += report.traces_read
        count.records_skipped += report.records_skipped

    def add_unread(self, path: str, reason: str, kind: UnreadKind = "not-read") -> None:
        """Count one file that no reader could take."""
        self.unread.append(UnreadFile(path=path, reason=reason, kind=kind))
