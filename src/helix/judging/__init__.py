"""Judging: criteria, the prompt renderer, packets and content keys, verdicts, and transports."""

from ._criteria import (
    CRITERIA_FORMAT_VERSION,
    CodeCheckSpec,
    CriteriaMatrix,
    Criterion,
    FewShotExample,
    Severity,
)
from ._results import JudgedRun, TraceCriterionResult
from ._verdict import VERDICT_FORMAT_VERSION, CriterionVerdict, JudgeInfo, Result, VerdictFile

__all__ = [
    "CRITERIA_FORMAT_VERSION",
    "VERDICT_FORMAT_VERSION",
    "CodeCheckSpec",
    "CriteriaMatrix",
    "Criterion",
    "CriterionVerdict",
    "FewShotExample",
    "JudgeInfo",
    "JudgedRun",
    "Result",
    "Severity",
    "TraceCriterionResult",
    "VerdictFile",
]
