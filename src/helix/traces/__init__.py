"""Agent traces: the canonical model, readers per format with auto-detection, and intake reports."""

from ._formats import TRACE_FORMATS, FormatDetection, TraceFormat, detect_format
from ._intake import TraceIntake, iter_traces, read_traces, write_traces_jsonl
from ._model import (
    TRACE_FORMAT_VERSION,
    Event,
    EventKind,
    Message,
    Role,
    Score,
    Status,
    ToolCall,
    Trace,
    Usage,
)
from ._report import CountSummary, DuplicateId, IntakeReport, SkippedRecord, SkipReason

__all__ = [
    "CountSummary",
    "DuplicateId",
    "Event",
    "EventKind",
    "FormatDetection",
    "IntakeReport",
    "Message",
    "Role",
    "Score",
    "SkipReason",
    "SkippedRecord",
    "Status",
    "TRACE_FORMATS",
    "TRACE_FORMAT_VERSION",
    "ToolCall",
    "Trace",
    "TraceFormat",
    "TraceIntake",
    "Usage",
    "detect_format",
    "iter_traces",
    "read_traces",
    "write_traces_jsonl",
]
