"""What AGGREGATE hands to scoring: one row per (trace, criterion), decided, abstained or unscored."""

from __future__ import annotations

from dataclasses import dataclass

from ..traces import Trace
from ._criteria import CriteriaMatrix
from ._verdict import CriterionVerdict, JudgeInfo

__all__ = ["JudgedRun", "TraceCriterionResult"]


@dataclass(frozen=True, kw_only=True)
class TraceCriterionResult:
    """The outcome of judging one criterion on one trace.

    Exactly one of ``verdict`` and ``unscored_reason`` is set: a verdict (pass, fail or uncertain)
    or the reason the unit could not be scored (a provider answer that never parsed, a check that
    raised). Unscored rows are counted, never folded as pass or fail.
    """

    trace_id: str
    criterion_id: str
    key: str
    """Content key of the judging unit (and so of its packet and verdict files)."""
    verdict: CriterionVerdict | None
    unscored_reason: str | None = None
    judge: JudgeInfo | None = None


@dataclass(frozen=True, kw_only=True)
class JudgedRun:
    """Everything AGGREGATE read back from a run directory: the inputs and every result row."""

    run_dir: str
    traces: tuple[Trace, ...]
    matrix: CriteriaMatrix
    results: tuple[TraceCriterionResult, ...]
    unit_axis: str
    """``matrix`` (one unit per trajectory) or ``criterion`` (one per criterion × trajectory)."""
