"""Fold one criterion's verdicts across every trajectory of a run into one outcome and its counts.

The rule: any ``fail`` makes the criterion fail; otherwise at least one ``pass`` makes it pass;
otherwise (only ``uncertain`` verdicts, only unscored rows, or no rows at all) it is ``uncertain``.
Uncertain verdicts are never coerced to pass or fail, and unscored rows never count as either: the
pass rate is over decided verdicts only.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from ..judging import Criterion, Result, Severity, TraceCriterionResult
from ..stats import wilson_interval

__all__ = ["CriterionScore", "Interval", "fold_criterion", "fold_outcome"]

PASS_RATE_CONFIDENCE = 0.95


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Interval(_Frozen):
    """A two-sided confidence interval."""

    low: float
    high: float
    confidence: float
    method: str


class CriterionScore(_Frozen):
    """One criterion folded across all trajectories of a run."""

    criterion_id: str
    title: str
    severity: Severity
    kind: str
    outcome: Result
    n_pass: int
    n_fail: int
    n_uncertain: int
    n_unscored: int
    n_decided: int
    """``n_pass + n_fail``: the denominator of ``pass_rate``."""
    pass_rate: float | None
    """``n_pass / n_decided``; ``None`` when no verdict was decided."""
    pass_rate_interval: Interval | None
    failing_trace_ids: tuple[str, ...]
    uncertain_trace_ids: tuple[str, ...]
    unscored_trace_ids: tuple[str, ...]


def fold_outcome(results: Iterable[Result | None]) -> Result:
    """Fold per-trajectory results (``None`` = unscored) into one outcome: fail > pass > uncertain."""
    seen = set(results)
    if "fail" in seen:
        return "fail"
    if "pass" in seen:
        return "pass"
    return "uncertain"


def fold_criterion(criterion: Criterion, rows: Iterable[TraceCriterionResult]) -> CriterionScore:
    """Fold the result rows of ``criterion`` (rows of other criteria are ignored)."""
    passed: list[str] = []
    failed: list[str] = []
    uncertain: list[str] = []
    unscored: list[str] = []
    for row in rows:
        if row.criterion_id != criterion.id:
            continue
        if row.verdict is None:
            unscored.append(row.trace_id)
        elif row.verdict.result == "pass":
            passed.append(row.trace_id)
        elif row.verdict.result == "fail":
            failed.append(row.trace_id)
        else:
            uncertain.append(row.trace_id)
    decided = len(passed) + len(failed)
    interval = None
    rate = None
    if decided:
        rate = len(passed) / decided
        low, high = wilson_interval(len(passed), decided, confidence=PASS_RATE_CONFIDENCE)
        interval = Interval(low=low, high=high, confidence=PASS_RATE_CONFIDENCE, method="wilson")
    outcome: Result = "fail" if failed else ("pass" if passed else "uncertain")
    return CriterionScore(
        criterion_id=criterion.id,
        title=criterion.title,
        severity=criterion.severity,
        kind=criterion.kind,
        outcome=outcome,
        n_pass=len(passed),
        n_fail=len(failed),
        n_uncertain=len(uncertain),
        n_unscored=len(unscored),
        n_decided=decided,
        pass_rate=rate,
        pass_rate_interval=interval,
        failing_trace_ids=tuple(sorted(failed)),
        uncertain_trace_ids=tuple(sorted(uncertain)),
        unscored_trace_ids=tuple(sorted(unscored)),
    )
