"""Human review and labeled data: do decided human labels exist, and are there enough per class?

Labels come from :mod:`helix.review` (a label store or a labels JSONL file). Only the current label
per (trace, criterion, annotator) counts, only ``pass``/``fail`` are decided, and only labels of the
run's own traces and LLM criteria speak for its judges. When annotators disagree on an item, the
item counts for neither class (it needs adjudication first).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..judging import CriteriaMatrix
from ..review import HumanLabel, annotator_agreement, latest_labels
from ._findings import AuditArea, AuditStatus, AuditThresholds, Detail, Evidence, Finding, worst_status

__all__ = ["ClassCounts", "audit_agreement", "audit_labels_exist", "audit_labels_per_class", "class_counts"]


@dataclass(frozen=True, kw_only=True)
class ClassCounts:
    """Decided human labels of one criterion, one per labeled trace."""

    n_pass: int
    n_fail: int
    conflicting: int
    """Traces whose annotators disagree (counted in neither class)."""
    undecided: int
    """Traces labeled only ``defer`` or ``underdetermined``."""


def class_counts(labels: Sequence[HumanLabel], criterion_id: str, trace_ids: set[str]) -> ClassCounts:
    """Per-class counts of ``criterion_id`` over ``trace_ids`` from the current labels."""
    by_trace: dict[str, set[str]] = defaultdict(set)
    for label in latest_labels(labels):
        if label.criterion_id == criterion_id and label.trace_id in trace_ids:
            by_trace[label.trace_id].add(label.label)
    n_pass = n_fail = conflicting = undecided = 0
    for values in by_trace.values():
        decided = values & {"pass", "fail"}
        if decided == {"pass"}:
            n_pass += 1
        elif decided == {"fail"}:
            n_fail += 1
        elif decided:
            conflicting += 1
        else:
            undecided += 1
    return ClassCounts(n_pass=n_pass, n_fail=n_fail, conflicting=conflicting, undecided=undecided)


def _not_measured(area: AuditArea, check: str, what: str) -> Finding:
    return Finding(
        area=area,
        check=check,
        status="not-measured",
        summary=f"no human labels were given or found in the run, so {what} cannot be measured",
        evidence=Evidence(),
        next_step=(
            "Label a balanced sample with `helix review serve --run DIR` (or `helix review export-html` for "
            "offline work), then audit with `--labels FILE`."
        ),
    )


def _exist_next_step(unlabeled: tuple[str, ...], *, has_llm: bool, has_labels: bool, on_run: bool) -> str:
    if has_llm and has_labels and not on_run:
        return (
            "Check that the labels file belongs to this run: none of its labels name this run's traces and "
            "criteria (trace ids change when traces are regenerated)."
        )
    if unlabeled:
        return (
            f"Label {', '.join(unlabeled)} with `helix review serve --run DIR` (judge verdicts stay hidden, so "
            "labels are blind); an unlabeled judge has no validated number."
        )
    return "Keep labeling new failure modes as they appear."


def audit_labels_exist(
    labels: Sequence[HumanLabel] | None, matrix: CriteriaMatrix, trace_ids: set[str]
) -> Finding:
    """``labels-exist``: every LLM criterion has decided human labels on the run's traces."""
    if labels is None:
        return _not_measured("human-review", "labels-exist", "human review")
    current = latest_labels(labels)
    llm = [c.id for c in matrix.llm_criteria]
    known = {c.id for c in matrix.criteria}
    on_run = [x for x in current if x.trace_id in trace_ids and x.criterion_id in known]
    foreign = len(current) - len(on_run)
    annotators = sorted({x.annotator for x in on_run})
    details: list[Detail] = []
    for cid in llm:
        decided = sum(1 for x in on_run if x.criterion_id == cid and x.decided)
        other = sum(1 for x in on_run if x.criterion_id == cid and not x.decided)
        status: AuditStatus = "pass" if decided else "fail"
        details.append(
            Detail(
                subject=cid,
                status=status,
                note=f"{decided} decided label(s), {other} deferred/underdetermined",
            )
        )
    unlabeled = tuple(d.subject for d in details if d.status == "fail")
    status = worst_status(d.status for d in details)
    if not llm:
        summary = "the run has no LLM criteria: no judge needs human labels"
    elif unlabeled:
        summary = (
            f"{len(unlabeled)} of {len(llm)} LLM criteria have no decided human label on this run's traces"
        )
    else:
        summary = f"every LLM criterion has decided human labels ({len(on_run)} labels by {len(annotators)} annotator(s))"
    return Finding(
        area="human-review",
        check="labels-exist",
        status=status,
        summary=summary,
        evidence=Evidence(
            counts={
                "labels": len(current),
                "on_run": len(on_run),
                "decided_on_run": sum(x.decided for x in on_run),
                "not_on_run": foreign,
                "annotators": len(annotators),
            },
            ids={"unlabeled_criteria": unlabeled, "annotators": tuple(annotators)},
        ),
        next_step=_exist_next_step(
            unlabeled, has_llm=bool(llm), has_labels=bool(current), on_run=bool(on_run)
        ),
        details=tuple(details),
    )


def audit_labels_per_class(
    labels: Sequence[HumanLabel] | None,
    matrix: CriteriaMatrix,
    trace_ids: set[str],
    thresholds: AuditThresholds,
) -> Finding:
    """``labels-per-class``: each LLM criterion has at least the calibration minimum of decided
    labels in each class (pass and fail)."""
    if labels is None:
        return _not_measured("labeled-data", "labels-per-class", "labels per class")
    need = thresholds.min_labels_per_class
    details: list[Detail] = []
    short: list[str] = []
    more_pass = more_fail = 0
    for c in matrix.llm_criteria:
        counts = class_counts(labels, c.id, trace_ids)
        lack_p, lack_f = max(0, need - counts.n_pass), max(0, need - counts.n_fail)
        status: AuditStatus = "fail" if (lack_p or lack_f) else "pass"
        note = f"{counts.n_pass} pass / {counts.n_fail} fail (need {need} each)"
        if lack_p or lack_f:
            note += f": {lack_p} more pass, {lack_f} more fail"
            short.append(c.id)
            more_pass += lack_p
            more_fail += lack_f
        if counts.conflicting:
            note += f"; {counts.conflicting} trace(s) with disagreeing annotators"
        details.append(Detail(subject=c.id, status=status, note=note))
    status = worst_status(d.status for d in details)
    return Finding(
        area="labeled-data",
        check="labels-per-class",
        status=status,
        summary=(
            f"{len(short)} of {len(matrix.llm_criteria)} LLM criteria have fewer than {need} decided labels in a class"
            if short
            else f"every LLM criterion has at least {need} decided labels per class"
        ),
        evidence=Evidence(
            counts={
                "min_per_class": need,
                "short_criteria": len(short),
                "more_pass_needed": more_pass,
                "more_fail_needed": more_fail,
            },
            ids={"short": tuple(short)},
        ),
        next_step=(
            f"Label more traces for {', '.join(short)}: the review queue puts judge failures and disagreements "
            "first, which is where fail labels are found; calibration stays 'unvalidated' below the minimum."
            if short
            else "Nothing to do."
        ),
        details=tuple(details),
    )


def audit_agreement(labels: Sequence[HumanLabel] | None, thresholds: AuditThresholds) -> Finding:
    """``annotator-agreement``: annotators who labeled the same items agree beyond chance (Cohen's kappa)."""
    results = annotator_agreement(latest_labels(labels)) if labels is not None else []
    measured = [r for r in results if r.kappa is not None]
    details = []
    for r in results:
        if r.kappa is None:
            details.append(
                Detail(
                    subject=f"{r.annotator_a} vs {r.annotator_b}", status="not-measured", note=r.describe()
                )
            )
        else:
            ok = r.kappa >= thresholds.kappa_warn
            details.append(
                Detail(
                    subject=f"{r.annotator_a} vs {r.annotator_b}",
                    status="pass" if ok else "warn",
                    note=r.describe(),
                )
            )
    status = worst_status((d.status for d in details), empty="not-measured")
    low = tuple(d.subject for d in details if d.status == "warn")
    if not measured:
        summary = "fewer than two annotators labeled the same items, so agreement is not measured"
        next_step = "Have a second annotator label an overlapping sample (20-50 items) to check the labels themselves."
    elif low:
        summary = f"{len(low)} annotator pair(s) agree below kappa {thresholds.kappa_warn:.2f}"
        next_step = "Meet, compare the items they disagree on, and sharpen the pass/fail definitions before labeling more."
    else:
        summary = f"{len(measured)} annotator pair(s) agree at kappa >= {thresholds.kappa_warn:.2f}"
        next_step = "Nothing to do."
    return Finding(
        area="human-review",
        check="annotator-agreement",
        status=status,
        summary=summary,
        evidence=Evidence(
            counts={"pairs": len(results), "measured_pairs": len(measured), "low_pairs": len(low)},
            ids={"low_pairs": low},
        ),
        next_step=next_step,
        details=tuple(details),
    )
