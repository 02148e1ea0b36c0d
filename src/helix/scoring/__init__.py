"""Scoring: fold verdicts per criterion, decide the severity gate, build and mask the scorecard."""

from ._fold import CriterionScore, Interval, fold_criterion, fold_outcome
from ._gate import GateConfig, GateResult, evaluate_gate
from ._mask import MASK_PATH, MASK_RUN_ID, MASK_TIMESTAMP, mask_text, mask_value, masked_scorecard_json
from ._scorecard import (
    SCORECARD_FORMAT_VERSION,
    AnnotatorAgreement,
    RateInterval,
    RunInfo,
    Scorecard,
    ScorecardTotals,
    TraceSummary,
    ValidationRecord,
    build_scorecard,
    scorecard_json,
)

__all__ = [
    "MASK_PATH",
    "MASK_RUN_ID",
    "MASK_TIMESTAMP",
    "SCORECARD_FORMAT_VERSION",
    "AnnotatorAgreement",
    "CriterionScore",
    "GateConfig",
    "GateResult",
    "Interval",
    "RateInterval",
    "RunInfo",
    "Scorecard",
    "ScorecardTotals",
    "TraceSummary",
    "ValidationRecord",
    "build_scorecard",
    "evaluate_gate",
    "fold_criterion",
    "fold_outcome",
    "mask_text",
    "mask_value",
    "masked_scorecard_json",
    "scorecard_json",
]
