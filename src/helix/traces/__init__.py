"""Agent traces: the canonical model, readers per format with auto-detection, and intake reports."""

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

__all__ = [
    "TRACE_FORMAT_VERSION",
    "Event",
    "EventKind",
    "Message",
    "Role",
    "Score",
    "Status",
    "ToolCall",
    "Trace",
    "Usage",
]
