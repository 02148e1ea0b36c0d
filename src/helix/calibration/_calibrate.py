"""One criterion's calibration, from (human, judge) pairs and the judged set: pure, no I/O.

:func:`calibrate` combines the pieces (confusion counts, certification, corrected rate, coverage
warning) into a :class:`CriterionCalibration`, the record ``helix validate --json`` prints and the
run's ``calibration/validation.json`` keeps.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..scoring import AnnotatorAgreement, RateInterval, ValidationRecord
from ._corrected import DEFAULT_DRAWS, corrected_rate
from ._coverage import coverage_warning
from ._measure import (
    DEFAULT_MIN_LABELS_PER_CLASS,
    DEFAULT_THRESHOLD,
    CertificationStatus,
    ConfusionCounts,
    certify,
    confusion_counts,
)

__all__ = ["CALIBRATION_FORMAT_VERSION", "CriterionCalibration", "ThetaStatus", "calibrate"]

CALIBRATION_FORMAT_VERSION: Literal[1] = 1
ThetaStatus = Literal["ok", "invalid", "unavailable"]


class CriterionCalibration(BaseModel):
    """Everything measured about one criterion's judge against human labels."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = CALIBRATION_FORMAT_VERSION
    criterion_id: str
    status: CertificationStatus
    status_reason: str
    threshold: float
    min_labels_per_class: int
    split: str
    seed: int
    labels_used: int
    counts: ConfusionCounts
    tpr: float | None
    tpr_interval: tuple[float, float] | None
    tnr: float | None
    tnr_interval: tuple[float, float] | None
    more_pass_labels: int | None
    more_fail_labels: int | None
    abstain_rate: float | None
    assumption_agreement: float | None
    judged_pass: int
    judged_n: int
    p_obs: float | None
    theta: float | None
    theta_interval: tuple[float, float] | None
    theta_status: ThetaStatus
    theta_reason: str | None
    judge_models: tuple[str, ...] = ()
    prompt_versions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    annotator_agreement: tuple[AnnotatorAgreement, ...] = ()

    def record(self) -> ValidationRecord:
        """The provenance block stamped into the scorecard."""

        def rate(value: float | None, ci: tuple[float, float] | None) -> RateInterval:
            return RateInterval(value=value, low=ci[0] if ci else None, high=ci[1] if ci else None)

        c = self.counts
        return ValidationRecord(
            criterion_id=self.criterion_id,
            status=self.status,
            status_reason=self.status_reason,
            split=self.split,
            split_seed=self.seed,
            threshold=self.threshold,
            labels_used=self.labels_used,
            labels_pass=c.n_pos,
            labels_fail=c.n_neg,
            tp=c.tp,
            fn=c.fn,
            fp=c.fp,
            tn=c.tn,
            abstain_rate=self.abstain_rate,
            judge_models=self.judge_models,
            prompt_versions=self.prompt_versions,
            tpr=rate(self.tpr, self.tpr_interval),
            tnr=rate(self.tnr, self.tnr_interval),
            p_obs=self.p_obs,
            judged_n=self.judged_n,
            theta=rate(self.theta, self.theta_interval),
            theta_status=self.theta_status,
            warnings=self.warnings,
            annotator_agreement=self.annotator_agreement,
        )


def calibrate(
    pairs: Iterable[tuple[str, str | None]],
    *,
    judged_pass: int,
    judged_n: int,
    criterion_id: str = "criterion",
    split: str = "test",
    seed: int = 0,
    threshold: float = DEFAULT_THRESHOLD,
    min_labels_per_class: int = DEFAULT_MIN_LABELS_PER_CLASS,
    draws: int = DEFAULT_DRAWS,
    judge_models: tuple[str, ...] = (),
    prompt_versions: tuple[str, ...] = (),
    warnings: tuple[str, ...] = (),
) -> CriterionCalibration:
    """Calibrate one judge: ``pairs`` are (human label, judge result or None) on the measured split;
    ``judged_pass`` of ``judged_n`` decided verdicts on the population were pass."""
    listed = list(pairs)
    counts = confusion_counts(listed)
    cert = certify(counts, threshold=threshold, min_per_class=min_labels_per_class)
    notes = list(warnings)
    theta = low = high = None
    theta_status: ThetaStatus
    theta_reason: str | None
    p_obs = judged_pass / judged_n if judged_n else None
    if judged_n == 0:
        theta_status, theta_reason = "unavailable", "no decided verdicts in the judged set"
    elif counts.n_pos == 0 or counts.n_neg == 0:
        theta_status = "unavailable"
        theta_reason = f"need decided labels of both classes (have {counts.n_pos} pass, {counts.n_neg} fail)"
    else:
        cr = corrected_rate(
            tp=counts.tp,
            n_pos=counts.n_pos,
            tn=counts.tn,
            n_neg=counts.n_neg,
            judged_pass=judged_pass,
            judged=judged_n,
            seed=seed,
            draws=draws,
        )
        theta_status, theta_reason = cr.status, cr.reason
        theta, low, high = cr.theta, cr.low, cr.high
        if theta is not None and cert.tpr is not None and cert.tnr is not None:
            warn = coverage_warning(
                labels_pass=counts.n_pos,
                labels_fail=counts.n_neg,
                tpr=cert.tpr,
                tnr=cert.tnr,
                theta=theta,
                judged_n=judged_n,
            )
            if warn:
                notes.append(warn)
    return CriterionCalibration(
        criterion_id=criterion_id,
        status=cert.status,
        status_reason=cert.reason,
        threshold=threshold,
        min_labels_per_class=min_labels_per_class,
        split=split,
        seed=seed,
        labels_used=len(listed),
        counts=counts,
        tpr=cert.tpr,
        tpr_interval=cert.tpr_interval,
        tnr=cert.tnr,
        tnr_interval=cert.tnr_interval,
        more_pass_labels=cert.more_pass_labels,
        more_fail_labels=cert.more_fail_labels,
        abstain_rate=counts.abstain_rate,
        assumption_agreement=counts.assumption_agreement,
        judged_pass=judged_pass,
        judged_n=judged_n,
        p_obs=p_obs,
        theta=theta,
        theta_interval=(low, high) if low is not None and high is not None else None,
        theta_status=theta_status,
        theta_reason=theta_reason,
        judge_models=judge_models,
        prompt_versions=prompt_versions,
        warnings=tuple(notes),
    )
