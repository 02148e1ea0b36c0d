"""HTML reports: one self-contained page per scorecard, with a per-trace drill-down.

The style sheet, the escaping helper and the transcript renderer are shared with the other pages
Helix writes (the review page, the campaign report), so every page escapes content the same way.
"""

from ._assets import STYLE
from ._html import render_report, trace_anchor, write_report
from ._transcript import esc, render_trace_content

__all__ = ["STYLE", "esc", "render_report", "render_trace_content", "trace_anchor", "write_report"]
