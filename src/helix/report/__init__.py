"""HTML reports: one self-contained page per scorecard, with a per-trace drill-down."""

from ._html import render_report, trace_anchor, write_report

__all__ = ["render_report", "trace_anchor", "write_report"]
