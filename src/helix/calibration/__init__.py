"""Calibration: trust a judge only as far as human labels show it can be trusted.

Splits labelled traces (train/dev/test), measures the judge on the test split once (ledger),
computes TPR/TNR over decided verdicts, certifies or refuses the judge, and corrects its raw pass
rate with an interval that carries the uncertainty of both the labels and the judged set.
"""

from .._exceptions import FewShotLeakError, TestSplitReusedError
from ._advice import LabelSupply, shortfall_advice, traces_to_label
from ._calibrate import CALIBRATION_FORMAT_VERSION, CriterionCalibration, ThetaStatus, calibrate
from ._consistency import CONSISTENCY_RESULTS, ConsistencyResult, fleiss_kappa, self_consistency
from ._corrected import (
    DEFAULT_DRAWS,
    MIN_DENOMINATOR,
    RG_TAIL_SCALE,
    CorrectedRate,
    corrected_rate,
    corrected_rate_intervals,
    corrected_rate_point,
    exact_fraction,
    tail_quantiles,
)
from ._coverage import COVERAGE_GRID, FLAGGED_REGIMES, CoverageGrid, coverage_warning
from ._display import theta_text
from ._ledger import LEDGER_FORMAT_VERSION, LedgerEntry, TestLedger, ledger_path, read_ledger, record_test_use
from ._measure import (
    DEFAULT_MIN_LABELS_PER_CLASS,
    DEFAULT_THRESHOLD,
    Certification,
    CertificationStatus,
    ConfusionCounts,
    certify,
    confusion_counts,
    labels_needed,
)
from ._rerun import (
    CONSISTENCY_FORMAT_VERSION,
    ConsistencyReport,
    collect_reruns,
    consistency_path,
    prepare_dispatch_reruns,
    read_consistency,
    rerun_judges,
    rerun_judges_sync,
    rerun_units,
)
from ._run import MeasuredSplit, ValidationReport, validate_run, validation_path
from ._splits import DEFAULT_FRACTIONS, SplitName, Splits, assign_splits, check_few_shot, split_sizes
from ._stratified import PS_TAIL_SCALE, StratifiedRate, Stratum, stratified_draws, stratified_rate

__all__ = [
    "CALIBRATION_FORMAT_VERSION",
    "CONSISTENCY_FORMAT_VERSION",
    "CONSISTENCY_RESULTS",
    "COVERAGE_GRID",
    "DEFAULT_DRAWS",
    "DEFAULT_FRACTIONS",
    "DEFAULT_MIN_LABELS_PER_CLASS",
    "DEFAULT_THRESHOLD",
    "FLAGGED_REGIMES",
    "LEDGER_FORMAT_VERSION",
    "MIN_DENOMINATOR",
    "PS_TAIL_SCALE",
    "RG_TAIL_SCALE",
    "Certification",
    "CertificationStatus",
    "ConfusionCounts",
    "ConsistencyReport",
    "ConsistencyResult",
    "CorrectedRate",
    "CoverageGrid",
    "CriterionCalibration",
    "FewShotLeakError",
    "LabelSupply",
    "LedgerEntry",
    "MeasuredSplit",
    "SplitName",
    "Splits",
    "StratifiedRate",
    "Stratum",
    "TestLedger",
    "TestSplitReusedError",
    "ThetaStatus",
    "ValidationReport",
    "assign_splits",
    "calibrate",
    "certify",
    "check_few_shot",
    "collect_reruns",
    "confusion_counts",
    "consistency_path",
    "corrected_rate",
    "corrected_rate_intervals",
    "corrected_rate_point",
    "coverage_warning",
    "exact_fraction",
    "fleiss_kappa",
    "labels_needed",
    "ledger_path",
    "prepare_dispatch_reruns",
    "read_consistency",
    "read_ledger",
    "record_test_use",
    "rerun_judges",
    "rerun_judges_sync",
    "rerun_units",
    "self_consistency",
    "shortfall_advice",
    "split_sizes",
    "stratified_draws",
    "stratified_rate",
    "tail_quantiles",
    "theta_text",
    "traces_to_label",
    "validate_run",
    "validation_path",
]
