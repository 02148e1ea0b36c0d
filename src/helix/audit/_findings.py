"""The self-audit's vocabulary: statuses, areas, findings, the report, and their impact order.

A finding is data, not prose: an area, a check id, a status, counts and ids as evidence, a one-line
summary and a concrete next step. Per-subject details (one per criterion, suite or verdict file)
say which part of the run earned the status. Nothing here reads a clock or draws a random number,
so the same run gives the same report bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict

from ..calibration import DEFAULT_MIN_LABELS_PER_CLASS, DEFAULT_THRESHOLD

__all__ = [
    "AREAS",
    "AUDIT_FORMAT_VERSION",
    "STATUS_ORDER",
    "AuditArea",
    "AuditReport",
    "AuditStatus",
    "AuditThresholds",
    "Detail",
    "Evidence",
    "Finding",
    "audit_json",
    "order_findings",
    "worst_status",
]

AUDIT_FORMAT_VERSION = 1

AuditStatus = Literal["fail", "warn", "not-measured", "pass"]
"""``fail``: the eval cannot be trusted as it stands; ``warn``: a weakness to fix; ``not-measured``:
the artifact the check reads does not exist in this run yet; ``pass``: the check holds."""

STATUS_ORDER: tuple[AuditStatus, ...] = ("fail", "warn", "not-measured", "pass")
"""Most to least urgent; findings are ordered by this first."""

AuditArea = Literal[
    "judge-validation",
    "labeled-data",
    "human-review",
    "pipeline-hygiene",
    "error-analysis",
    "evaluator-design",
]

AREAS: tuple[AuditArea, ...] = (
    "judge-validation",
    "labeled-data",
    "human-review",
    "pipeline-hygiene",
    "error-analysis",
    "evaluator-design",
)
"""The six areas of the eval-of-the-eval, by impact: an unvalidated judge makes every number
suspect; a missing label makes validation impossible; hygiene and grounding follow."""


@dataclass(frozen=True, kw_only=True)
class AuditThresholds:
    """The numbers the checks compare against (the defaults are what Helix recommends)."""

    target_tpr: float = DEFAULT_THRESHOLD
    """A judge's true-positive rate must reach this (point estimate) to pass ``judge-above-target``."""
    target_tnr: float = DEFAULT_THRESHOLD
    """Likewise for the true-negative rate."""
    min_labels_per_class: int = DEFAULT_MIN_LABELS_PER_CLASS
    """Decided human labels needed per class (pass and fail) for each LLM criterion: the minimum
    below which calibration leaves a judge unvalidated."""
    unscored_warn: float = 0.0
    """Unscored (trace, criterion) rows above this share warn ..."""
    unscored_fail: float = 0.10
    """... and above this share fail."""
    uncertain_warn: float = 0.10
    """Uncertain verdicts above this share of scored rows warn ..."""
    uncertain_fail: float = 0.30
    """... and above this share fail."""
    kappa_warn: float = 0.60
    """Cohen's kappa between two annotators below this warns (their labels disagree too often)."""

    def __post_init__(self) -> None:
        from .._exceptions import UsageError

        rates = (
            "target_tpr",
            "target_tnr",
            "unscored_warn",
            "unscored_fail",
            "uncertain_warn",
            "uncertain_fail",
        )
        for name in rates:
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise UsageError(f"AuditThresholds.{name} must lie in [0, 1], got {value!r}")
        if not -1.0 <= self.kappa_warn <= 1.0:
            raise UsageError(f"AuditThresholds.kappa_warn must lie in [-1, 1], got {self.kappa_warn!r}")
        if self.min_labels_per_class < 1:
            raise UsageError(
                f"AuditThresholds.min_labels_per_class must be at least 1, got {self.min_labels_per_class!r}"
            )


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Evidence(_Frozen):
    """What a finding rests on: named counts (or rates) and named lists of ids, in a fixed order."""

    counts: dict[str, int | float] = {}
    ids: dict[str, tuple[str, ...]] = {}


class Detail(_Frozen):
    """One subject of a finding (a criterion, a suite, a verdict file) and how it fared."""

    subject: str
    status: AuditStatus
    note: str


class Finding(_Frozen):
    """One check's result over the run."""

    area: AuditArea
    check: str
    """Stable id of the check, e.g. ``judge-validated``."""
    status: AuditStatus
    summary: str
    evidence: Evidence
    next_step: str
    """What to do about it (for ``pass``, what keeps it that way)."""
    details: tuple[Detail, ...] = ()


class AuditReport(_Frozen):
    """The self-audit of one run: impact-ordered findings and a count per status (``version`` 1)."""

    version: int = AUDIT_FORMAT_VERSION
    run_dir: str
    subject: str
    prompt_version: str
    labels_source: str | None
    """Where the human labels came from (a file, ``given``) or None when there were none."""
    status_counts: dict[str, int]
    passed: bool
    """False when any finding has status ``fail``."""
    findings: tuple[Finding, ...]

    def by_check(self, check: str) -> Finding:
        """The finding of ``check`` (KeyError when the audit has no such check)."""
        for f in self.findings:
            if f.check == check:
                return f
        raise KeyError(check)


def worst_status(statuses: Iterable[AuditStatus], *, empty: AuditStatus = "pass") -> AuditStatus:
    """The most urgent status among ``statuses`` (``empty`` when there are none)."""
    seen = set(statuses)
    for status in STATUS_ORDER:
        if status in seen:
            return status
    return empty


def order_findings(findings: Sequence[Finding], check_order: Mapping[str, int]) -> tuple[Finding, ...]:
    """Impact order: status (fail, warn, not-measured, pass), then area impact, then check order."""
    return tuple(
        sorted(
            findings,
            key=lambda f: (
                STATUS_ORDER.index(f.status),
                AREAS.index(f.area),
                check_order.get(f.check, len(check_order)),
                f.check,
            ),
        )
    )


def audit_json(report: AuditReport) -> bytes:
    """The report as indented JSON with a trailing newline (field order fixed, so byte-stable)."""
    return orjson.dumps(report.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n"
