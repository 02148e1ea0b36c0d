"""Judge validation: is every LLM judge validated against human labels, and good enough?

``judge-validated`` reads each LLM criterion's certification status (CERTIFIED, REFUSED or
unvalidated) from the run's calibration results; ``judge-above-target`` compares the measured TPR
and TNR with the targets. A criterion the calibration never measured is ``not-measured``: the audit
reports what was measured, it does not run the (test-once) measurement itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..judging import CriteriaMatrix
from ._findings import AuditStatus, AuditThresholds, Detail, Evidence, Finding, worst_status

__all__ = ["JudgeMeasure", "audit_judge_targets", "audit_judges_validated"]

CertStatus = Literal["certified", "refused", "unvalidated"]


@dataclass(frozen=True, kw_only=True)
class JudgeMeasure:
    """What calibration measured for one LLM criterion's judge."""

    criterion_id: str
    status: CertStatus
    tpr: float | None
    tnr: float | None
    tpr_low: float | None = None
    tnr_low: float | None = None
    threshold: float | None = None
    """The lower-bound threshold certification used."""
    reason: str = ""
    """Why the status is what it is (calibration's own words)."""
    labels_pass: int = 0
    labels_fail: int = 0
    prompt_versions: tuple[str, ...] = ()
    """Prompt versions of the verdicts the judge was measured on."""
    judge_models: tuple[str, ...] = ()
    source: str = ""
    """Where the measurement was read from."""


_CERT_STATUS: dict[CertStatus, AuditStatus] = {"certified": "pass", "refused": "fail", "unvalidated": "warn"}


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _stale(m: JudgeMeasure, prompt_version: str, models: frozenset[str]) -> str | None:
    if m.prompt_versions and prompt_version not in m.prompt_versions:
        return f"measured under prompt {', '.join(m.prompt_versions)}, the run judges with {prompt_version}"
    if m.judge_models and models and not models <= set(m.judge_models):
        return f"measured on {', '.join(m.judge_models)}, the run was judged by {', '.join(sorted(models))}"
    return None


def audit_judges_validated(
    matrix: CriteriaMatrix,
    measures: Mapping[str, JudgeMeasure],
    *,
    prompt_version: str,
    judge_models: Mapping[str, frozenset[str]],
) -> Finding:
    """``judge-validated``: every LLM criterion's judge is CERTIFIED against human labels, under the
    run's own prompt version and judge model (a new prompt or model is a new judge: re-validate)."""
    details: list[Detail] = []
    buckets: dict[str, list[str]] = {
        "certified": [],
        "refused": [],
        "unvalidated": [],
        "not_measured": [],
        "stale": [],
    }
    for c in matrix.llm_criteria:
        m = measures.get(c.id)
        if m is None:
            buckets["not_measured"].append(c.id)
            details.append(
                Detail(subject=c.id, status="not-measured", note="no calibration result for this criterion")
            )
            continue
        buckets[m.status].append(c.id)
        status: AuditStatus = _CERT_STATUS[m.status]
        bounds = f"TPR {_fmt(m.tpr)} (low {_fmt(m.tpr_low)}), TNR {_fmt(m.tnr)} (low {_fmt(m.tnr_low)})"
        note = f"{m.status.upper() if m.status != 'unvalidated' else m.status}: {bounds}"
        if m.reason:
            note += f"; {m.reason}"
        if m.source:
            note += f" [{m.source}]"
        stale = _stale(m, prompt_version, judge_models.get(c.id, frozenset()))
        if stale:
            buckets["stale"].append(c.id)
            note += f"; STALE: {stale}"
            status = worst_status([status, "warn"])
        details.append(Detail(subject=c.id, status=status, note=note))
    n_llm = len(matrix.llm_criteria)
    if not n_llm:
        status = "pass"
        summary = "the run has no LLM criteria: no judge to validate"
        next_step = "Nothing to do."
    elif len(buckets["not_measured"]) == n_llm:
        status = "not-measured"
        summary = f"none of the {n_llm} LLM judges has a calibration result in this run"
        next_step = (
            "Collect human labels (`helix review serve --run DIR`), then run `helix validate --run DIR --labels FILE` "
            "for each LLM criterion; until then report raw judge rates as unvalidated."
        )
    else:
        status = worst_status(d.status for d in details)
        summary = (
            f"{len(buckets['certified'])} certified, {len(buckets['refused'])} refused, "
            f"{len(buckets['unvalidated'])} unvalidated, {len(buckets['not_measured'])} not measured of {n_llm} LLM judges"
            + (
                f"; {len(buckets['stale'])} validated under another prompt or model"
                if buckets["stale"]
                else ""
            )
        )
        todo = []
        if buckets["refused"]:
            todo.append(
                f"improve the judges of {', '.join(buckets['refused'])} (sharper pass/fail definitions, few-shot "
                "examples from the train split) or add the labels calibration asks for, then re-validate on a new test split"
            )
        if buckets["unvalidated"] or buckets["not_measured"]:
            rest = buckets["unvalidated"] + buckets["not_measured"]
            todo.append(f"label and validate {', '.join(rest)}")
        if buckets["stale"]:
            todo.append(
                f"re-validate {', '.join(buckets['stale'])} on fresh labels: the prompt or model changed since the "
                "measurement, so it no longer describes this judge"
            )
        next_step = (
            ("; ".join(todo).capitalize() + ".") if todo else "Re-validate after any prompt or model change."
        )
    return Finding(
        area="judge-validation",
        check="judge-validated",
        status=status,
        summary=summary,
        evidence=Evidence(
            counts={"llm_judges": n_llm, **{k: len(v) for k, v in buckets.items()}},
            ids={k: tuple(v) for k, v in buckets.items()},
        ),
        next_step=next_step,
        details=tuple(details),
    )


def audit_judge_targets(
    matrix: CriteriaMatrix, measures: Mapping[str, JudgeMeasure], thresholds: AuditThresholds
) -> Finding:
    """``judge-above-target``: each measured judge's TPR and TNR reach the targets."""
    details: list[Detail] = []
    below: list[str] = []
    measured = 0
    for c in matrix.llm_criteria:
        m = measures.get(c.id)
        if m is None or m.tpr is None or m.tnr is None:
            details.append(Detail(subject=c.id, status="not-measured", note="TPR/TNR not measured"))
            continue
        measured += 1
        misses = []
        if m.tpr < thresholds.target_tpr:
            misses.append(f"TPR {m.tpr:.2f} < {thresholds.target_tpr:.2f}")
        if m.tnr < thresholds.target_tnr:
            misses.append(f"TNR {m.tnr:.2f} < {thresholds.target_tnr:.2f}")
        if misses:
            below.append(c.id)
        note = "; ".join(misses) if misses else f"TPR {m.tpr:.2f}, TNR {m.tnr:.2f}"
        details.append(Detail(subject=c.id, status="fail" if misses else "pass", note=note))
    n_llm = len(matrix.llm_criteria)
    status: AuditStatus
    if not n_llm:
        status, summary = "pass", "the run has no LLM criteria"
    elif not measured:
        status, summary = (
            "not-measured",
            f"no LLM judge has a measured TPR/TNR (targets {thresholds.target_tpr:.2f}/{thresholds.target_tnr:.2f})",
        )
    else:
        status = worst_status(d.status for d in details)
        summary = (
            f"{len(below)} of {measured} measured judges fall below TPR {thresholds.target_tpr:.2f} / "
            f"TNR {thresholds.target_tnr:.2f}"
        )
    return Finding(
        area="judge-validation",
        check="judge-above-target",
        status=status,
        summary=summary,
        evidence=Evidence(
            counts={
                "llm_judges": n_llm,
                "measured": measured,
                "below_target": len(below),
                "target_tpr": thresholds.target_tpr,
                "target_tnr": thresholds.target_tnr,
            },
            ids={"below_target": tuple(below)},
        ),
        next_step=(
            f"Do not report corrected or raw rates from {', '.join(below)} as validated: a low TNR lets failures "
            "pass (the rate is overstated), a low TPR hides successes. Rewrite the judge prompt against the "
            "disagreements on the dev split, then re-validate."
            if below
            else (
                "Run `helix validate` to measure the judges."
                if status == "not-measured"
                else "Nothing to do; re-validate when the prompt or model changes."
            )
        ),
        details=tuple(details),
    )
