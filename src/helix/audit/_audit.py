"""``audit_run``: the eval-of-the-eval over one run directory, as impact-ordered findings.

It reads only what the run holds (inputs, verdicts, scorecard, calibration results, suite
histories) and the human labels it is given; it writes nothing and reads no clock, so the same run
and labels give the same report bytes (:func:`~helix.audit.audit_json`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from .._exceptions import UsageError
from ..review import HumanLabel
from ._calibration import read_judge_measures
from ._deep import DEEP_CHECKS, audit_deep
from ._design import audit_code_checks, audit_grounding
from ._determinism import audit_determinism
from ._findings import STATUS_ORDER, AuditReport, AuditThresholds, Finding, order_findings
from ._hygiene import (
    audit_judge_models,
    audit_pin,
    audit_stale_verdicts,
    audit_uncertain_rate,
    audit_unscored_rate,
    audit_verdicts_complete,
)
from ._judges import audit_judge_targets, audit_judges_validated
from ._labels import audit_agreement, audit_labels_exist, audit_labels_per_class
from ._snapshot import RunSnapshot, read_snapshot
from ._suites import audit_suites

__all__ = ["CHECKS", "DEFAULT_LABEL_FILES", "audit_run"]

CHECKS: tuple[str, ...] = (
    "judge-validated",
    "judge-above-target",
    "labels-per-class",
    "labels-exist",
    "annotator-agreement",
    "verdicts-complete",
    "determinism",
    "pin-envelope",
    "judge-model-pinned",
    "unscored-rate",
    "uncertain-rate",
    "suites-never-shrank",
    "stale-verdicts",
    "criteria-grounded",
    "code-check-preferred",
)
"""Every check the audit runs, by impact within its area (the tie-breaker of the report order); ``deep``
adds :data:`~helix.audit.DEEP_CHECKS` after them."""

DEFAULT_LABEL_FILES: tuple[str, ...] = ("labels.sqlite", "labels.jsonl")
"""Looked for inside the run directory when no labels are given."""

LabelSource = str | Path | Sequence[HumanLabel] | None


def _load_labels(labels: LabelSource, run_dir: Path) -> tuple[list[HumanLabel] | None, str | None]:
    from ..review import load_labels

    if labels is None:
        for name in DEFAULT_LABEL_FILES:
            candidate = run_dir / name
            if candidate.is_file():
                return load_labels(candidate, latest_only=False), name
        return None, None
    if isinstance(labels, str | Path):
        return load_labels(labels, latest_only=False), str(labels)
    items = list(labels)
    bad = [x for x in items if not isinstance(x, HumanLabel)]
    if bad:
        raise UsageError(
            f"labels must be HumanLabel objects or a label file path; got {type(bad[0]).__name__} {bad[0]!r}"
        )
    return items, "given"


def _judge_models(snap: RunSnapshot) -> dict[str, frozenset[str]]:
    """The judge models that decided each LLM criterion's verdicts in this run."""
    out: dict[str, set[str]] = {}
    for row in snap.llm_rows:
        if row.verdict is not None and row.judge is not None and row.judge.model:
            out.setdefault(row.criterion_id, set()).add(row.judge.model)
    return {k: frozenset(v) for k, v in out.items()}


def _check_guards(guards: Iterable[str], criterion_ids: Sequence[str]) -> tuple[str, ...]:
    out = tuple(sorted(set(guards)))
    unknown = [g for g in out if g not in criterion_ids]
    if unknown:
        raise UsageError(
            f"guard {unknown[0]!r} is not a criterion of this run; mark one of: {', '.join(criterion_ids)}"
        )
    return out


def audit_run(
    run_dir: str | Path,
    *,
    labels: LabelSource = None,
    guards: Iterable[str] = (),
    thresholds: AuditThresholds | None = None,
    suites: Iterable[str | Path] = (),
    deep: bool = False,
) -> AuditReport:
    """Audit the evaluation in ``run_dir`` and return its findings, most urgent first.

    ``labels`` is a label store / labels JSONL path, or HumanLabel objects; when None, the run
    directory's ``labels.sqlite`` or ``labels.jsonl`` is used if present. ``guards`` names criteria
    kept on purpose for failures that did not occur in this run. ``suites`` names more folders whose
    ``suites/*.history.jsonl`` living-suite histories are checked beside the run's own (e.g. the
    project folder where ``helix criteria reconcile`` keeps ``criteria.yaml``). ``deep`` adds the
    two reader-decided findings from ``<run>/audit-deep`` (:func:`prep_deep_audit` writes its
    packets; without verdicts they are not-measured). Raises :class:`~helix.UsageError`
    when ``run_dir`` is not a prepared run or a guard is not one of its criteria.
    """
    limits = thresholds or AuditThresholds()
    snap = read_snapshot(run_dir)
    run = snap.run
    matrix = run.matrix
    guard_ids = _check_guards(guards, [c.id for c in matrix.criteria])
    label_list, label_source = _load_labels(labels, run.run_dir)
    trace_ids = {t.id for t in run.traces}
    measures = read_judge_measures(run.run_dir)

    findings: list[Finding] = [
        audit_judges_validated(
            matrix, measures, prompt_version=run.manifest.prompt_version, judge_models=_judge_models(snap)
        ),
        audit_judge_targets(matrix, measures, limits),
        audit_labels_per_class(label_list, matrix, trace_ids, limits),
        audit_labels_exist(label_list, matrix, trace_ids),
        audit_agreement(label_list, limits),
        audit_verdicts_complete(snap),
        audit_determinism(snap),
        audit_pin(snap),
        audit_judge_models(snap),
        audit_unscored_rate(snap, limits),
        audit_uncertain_rate(snap, limits),
        audit_suites(run.run_dir, extra=tuple(suites)),
        audit_stale_verdicts(snap),
        audit_grounding(matrix, snap.rows, guard_ids),
        audit_code_checks(matrix, run.traces),
    ]
    if deep:
        findings += audit_deep(run.run_dir, matrix)
    ordered = order_findings(findings, {check: i for i, check in enumerate((*CHECKS, *DEEP_CHECKS))})
    counts = {status: sum(f.status == status for f in ordered) for status in STATUS_ORDER}
    return AuditReport(
        run_dir=str(run_dir),
        subject=matrix.subject,
        prompt_version=run.manifest.prompt_version,
        labels_source=label_source,
        status_counts=counts,
        passed=counts["fail"] == 0,
        findings=ordered,
    )
