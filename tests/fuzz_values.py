"""Odd JSON values for the readers' fuzz tests, shared by the test modules (on ``sys.path`` via pytest's
``pythonpath``): wrong types, huge strings, and placeholders that expand to very deep nesting.

orjson writes at most 255 levels but reads up to 1,024, so a deep value is written as a placeholder string
``"__DEEP_n__"`` and :func:`expand_deep` turns it into ``n`` nested lists in the raw JSON bytes.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import strategies as st

from helix.traces import IntakeReport, TraceIntake, iter_traces

__all__ = ["NOT_TEXT", "ODD", "assert_one_event_or_skip_per_line", "expand_deep", "odd_values"]

_INT = st.integers(-(2**63), 2**64 - 1)  # what JSON writers emit


def odd_values(max_depth: int = 1100) -> st.SearchStrategy[object]:
    """A value of any JSON kind a field should not hold, including huge and (after expansion) deep ones.

    Past ~1,020 levels inside a record its JSON can no longer be parsed at all: line readers skip that
    line, while a one-document file would be lost whole, so document tests keep ``max_depth`` under it.
    """
    return st.one_of(
        st.none(),
        st.booleans(),
        _INT,
        st.floats(allow_nan=True),
        st.text(max_size=20),
        st.lists(_INT, max_size=3),
        st.dictionaries(st.text(max_size=5), _INT, max_size=3),
        st.just("x" * 200_000),
        st.integers(1, max_depth).map(lambda depth: f"__DEEP_{depth}__"),
    )


ODD = odd_values()

NOT_TEXT = st.one_of(st.none(), st.booleans(), st.floats(), st.lists(_INT, max_size=2), st.just({"a": 1}))
"""A value where text (an id) belongs."""

_DEEP = re.compile(rb'"__DEEP_(\d+)__"')


def expand_deep(raw: bytes) -> bytes:
    """``raw`` JSON with each ``"__DEEP_n__"`` placeholder replaced by ``n`` nested lists."""
    return _DEEP.sub(lambda m: b"[" * int(m.group(1)) + b"]" * int(m.group(1)), raw)


def assert_one_event_or_skip_per_line(path: Path, fmt: str, lines: list[bytes]) -> set[int | None]:
    """Write ``lines`` (one span each) to ``path``, read it as ``fmt``: every line is an event of a trace
    or a skip counted with its line. Returns the skipped line numbers."""
    path.write_bytes(b"\n".join(lines) + b"\n")
    report = IntakeReport(examples_per_reason=None)  # every skip listed, to check each line's fate
    traces = list(iter_traces(path, format=fmt, report=report))
    events = sum(len(t.events) for t in traces)
    skipped = {s.line for s in report.skipped}
    assert None not in skipped
    assert events + len(skipped) == len(lines)
    return skipped


def read_every_skip(path: Path, fmt: str) -> TraceIntake:
    """``read_traces`` with every skipped record listed (a report keeps 20 examples per reason by default)."""
    report = IntakeReport(examples_per_reason=None)
    return TraceIntake(traces=list(iter_traces(path, format=fmt, report=report)), report=report)
