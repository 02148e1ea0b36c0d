"""One criterion's calibration, from (human, judge) pairs and the judged population: pure, no I/O.

:func:`calibrate` combines the pieces (confusion counts, certification, corrected rate, coverage
warning) into a :class:`CriterionCalibration`, the record ``helix validate --json`` prints and the
run's ``calibration/validation.json`` keeps. The estimator follows the label design: Rogan-Gladen
for a ``by-class`` label set (``judged_pass``/``judged_n`` are the unlabelled judged set), the
post-stratified estimator for every other design (``strata`` describe the judged population).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..scoring import AnnotatorAgreement, RateInterval, ValidationRecord
from ._advice import LabelSupply
from ._consistency import ConsistencyResult
from ._corrected import DEFAULT_DRAWS, corrected_rate
from ._coverage import coverage_warning
from ._measure import (
    DEFAULT_MIN_LABELS_PER_CLASS,
    DEFAULT_THRESHOLD,
    CertificationStatus,
    ConfusionCounts,
    JudgeRates,
    Pair,
    certify,
    confusion_counts,
)
from ._stratified import Stratum, stratified_rate

__all__ = [
    "CALIBRATION_FORMAT_VERSION",
    "CriterionCalibration",
    "Estimator",
    "Mode",
    "StratumRecord",
    "ThetaStatus",
    "calibrate",
]

CALIBRATION_FORMAT_VERSION: Literal[1] = 1
ThetaStatus = Literal["ok", "invalid", "unavailable"]
Estimator = Literal["rogan-gladen", "post-stratified"]
Mode = Literal["external", "development"]


class StratumRecord(BaseModel):
    """One stratum of a post-stratified measurement, with the inclusion probability of its labels."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    verdict: str
    judged: int
    labelled: int
    human_pass: int
    inclusion_probability: float | None
    """labelled / judged: the chance a judged item of this stratum was labelled (its weight is the inverse)."""


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
    design: str = "by-class"
    """How the labelled traces were chosen (docs/labels.md); decides the estimator."""
    design_source: str = "assumed"
    """``recorded`` (on the labels), ``given`` (--design), ``census`` (every judged trace is labelled)
    or ``assumed`` (nothing recorded: by-class, the v1 behaviour)."""
    estimator: Estimator = "rogan-gladen"
    mode: Mode | None = None
    """``external``: the judge was not developed on these labels, all of them measure it once;
    ``development``: train/dev/test splits (few-shot or dev iterations exist)."""
    strata: tuple[StratumRecord, ...] = ()
    population: str | None = None
    """Where the judged population came from (this run, or the run given with --population)."""
    consistency: ConsistencyResult | None = None
    """The judge's self-consistency from ``helix judge rerun`` (RUN/calibration/consistency.json)."""

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
            flip_rate=self.consistency.flip_rate if self.consistency else None,
            fleiss_kappa=self.consistency.kappa if self.consistency else None,
            reruns=self.consistency.reruns_max if self.consistency else None,
        )


def calibrate(
    pairs: Iterable[Pair],
    *,
    judged_pass: int = 0,
    judged_n: int = 0,
    strata: Sequence[Stratum] | None = None,
    design: str = "by-class",
    design_source: str = "given",
    mode: Mode | None = None,
    criterion_id: str = "criterion",
    split: str = "test",
    seed: int = 0,
    threshold: float = DEFAULT_THRESHOLD,
    min_labels_per_class: int = DEFAULT_MIN_LABELS_PER_CLASS,
    draws: int = DEFAULT_DRAWS,
    judge_models: tuple[str, ...] = (),
    prompt_versions: tuple[str, ...] = (),
    warnings: tuple[str, ...] = (),
    supply: LabelSupply | None = None,
    population: str | None = None,
) -> CriterionCalibration:
    """Calibrate one judge on the measured split.

    ``pairs`` are (human label, judge result or None[, blocked_by kind]). Without ``strata`` the
    label set is taken as chosen by human class (Rogan-Gladen): ``judged_pass`` of ``judged_n``
    unlabelled decided verdicts were pass. With ``strata`` (any other design) the judged population
    is post-stratified; the pairs still give the confusion counts and the abstention figures.
    """
    listed = list(pairs)
    counts = confusion_counts(listed)
    notes = list(warnings)
    theta = low = high = None
    theta_status: ThetaStatus
    theta_reason: str | None = None
    rates: JudgeRates | None = None
    records: tuple[StratumRecord, ...] = ()
    if strata is not None:
        estimator: Estimator = "post-stratified"
        records = tuple(
            StratumRecord(
                name=s.name,
                verdict=s.verdict,
                judged=s.judged,
                labelled=s.labelled,
                human_pass=s.human_pass,
                inclusion_probability=s.labelled / s.judged if s.judged else None,
            )
            for s in strata
        )
        judged_n = sum(s.judged for s in strata)
        judged_pass = sum(s.judged for s in strata if s.verdict == "pass")
        if judged_n == 0:
            theta_status, theta_reason = "unavailable", "no decided verdicts in the judged population"
        else:
            sr = stratified_rate(strata, seed=seed, draws=draws)
            theta_status, theta, (low, high) = "ok", sr.theta, sr.theta_interval
            rates = JudgeRates(
                tpr=sr.tpr,
                tpr_interval=sr.tpr_interval,
                tnr=sr.tnr,
                tnr_interval=sr.tnr_interval,
                method="posterior",
                labels=sum(s.labelled for s in strata),
            )
            empty = [s.name for s in strata if s.judged and not s.labelled]
            if empty:
                notes.append(
                    f"no labels in stratum {', '.join(empty)}: its rate is unknown, so the interval is wide; "
                    "label some of its traces"
                )
    else:
        estimator = "rogan-gladen"
        if judged_n == 0:
            theta_status, theta_reason = "unavailable", "no unlabelled decided verdicts in the judged set"
        elif counts.n_pos == 0 or counts.n_neg == 0:
            theta_status = "unavailable"
            theta_reason = (
                f"need decided labels of both classes (have {counts.n_pos} pass, {counts.n_neg} fail)"
            )
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
            if cr.incompatible:
                notes.append(
                    "the judged set's pass rate lies outside what the labels say this judge does (between 1 - TNR "
                    "and TPR): the labelled and judged traces seem to come from different populations; the "
                    "interval clips instead"
                )
    cert = certify(
        counts, threshold=threshold, min_per_class=min_labels_per_class, rates=rates, supply=supply
    )
    if theta is not None and cert.tpr is not None and cert.tnr is not None:
        warn = coverage_warning(
            design="balanced" if estimator == "rogan-gladen" else "random",
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
        p_obs=judged_pass / judged_n if judged_n else None,
        theta=theta,
        theta_interval=(low, high) if low is not None and high is not None else None,
        theta_status=theta_status,
        theta_reason=theta_reason,
        judge_models=judge_models,
        prompt_versions=prompt_versions,
        warnings=tuple(notes),
        design=design,
        design_source=design_source,
        estimator=estimator,
        mode=mode,
        strata=records,
        population=population,
    )
