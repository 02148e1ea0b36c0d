"""Agent traces: the canonical model, readers per format with auto-detection, and intake reports."""

from ._convert import (
    TRACE_FILE_SUFFIXES,
    convert_traces,
    expand_trace_paths,
    iter_trace_files,
    write_traces_parquet,
)
from ._format import TraceFormat
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
from ._registry import TRACE_FORMATS, FormatDetection, detect_format
from ._report import (
    CountSummary,
    DuplicateId,
    FormatCount,
    IntakeReport,
    IntakeSummary,
    SkippedRecord,
    SkipReason,
    UnreadFile,
)

__all__ = [
    "CountSummary",
    "DuplicateId",
    "Event",
    "EventKind",
    "FormatCount",
    "FormatDetection",
    "IntakeReport",
    "IntakeSummary",
    "Message",
    "Role",
    "Score",
    "SkipReason",
    "SkippedRecord",
    "Status",
    "TRACE_FILE_SUFFIXES",
    "TRACE_FORMATS",
    "TRACE_FORMAT_VERSION",
    "ToolCall",
    "Trace",
    "TraceFormat",
    "TraceIntake",
    "UnreadFile",
    "Usage",
    "convert_traces",
    "detect_format",
    "expand_trace_paths",
    "iter_trace_files",
    "iter_traces",
    "read_traces",
    "write_traces_jsonl",
    "write_traces_parquet",
]
