"""Judge validation (read from what `helix validate` stamped) and the human-label checks."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from helix.audit import AuditThresholds, audit_run
from helix.calibration import validate_run
from helix.judging import PROMPT_VERSION, JudgeInfo
from helix.review import HumanLabel, LabelStore, write_labels_jsonl

from .conftest import BuiltRun, MakeRun, Plan

T0 = datetime(2026, 1, 1, tzinfo=UTC)
CLAIMS = "claims-match-actions"


def labels_for(
    built: BuiltRun,
    criteria: Iterable[str],
    *,
    failing: int,
    flip: int = 0,
    annotator: str = "ana",
) -> list[HumanLabel]:
    """The truth the test's judge saw: traces[:failing] fail; ``flip`` of the failures labeled pass
    by the human (a judge false-negative... as far as the human is concerned)."""
    out = []
    for cid in criteria:
        for i, tid in enumerate(built.trace_ids):
            truth = "fail" if i < failing else "pass"
            if i < flip:
                truth = "pass"
            out.append(
                HumanLabel(
                    trace_id=tid,
                    criterion_id=cid,
                    label=truth,
                    annotator=annotator,
                    created_at=T0 + timedelta(seconds=i),
                )
            )
    return out


@pytest.fixture
def judged12(make_run: MakeRun) -> BuiltRun:
    ids = make_run(n=12, aggregate=False).trace_ids
    plan = Plan(
        results={
            (t, cid): "fail"
            for t in ids[:6]
            for cid in (
                "claims-match-actions",
                "refund-within-policy",
                "identity-verified-before-action",
                "tool-errors-reported-honestly",
                "resolves-or-escalates",
            )
        }
    )
    return make_run(n=12, plan=plan)


def test_label_checks_are_not_measured_without_labels(judged12: BuiltRun) -> None:
    report = audit_run(judged12.path)
    for check in (
        "labels-exist",
        "labels-per-class",
        "annotator-agreement",
        "judge-validated",
        "judge-above-target",
    ):
        assert report.by_check(check).status == "not-measured", check
    assert report.labels_source is None


def test_certified_judges_pass(judged12: BuiltRun) -> None:
    labels = labels_for(judged12, judged12.llm_ids, failing=6)
    validate_run(judged12.path, labels, split="all", threshold=0.5, min_labels_per_class=3)
    report = audit_run(judged12.path, labels=labels, thresholds=AuditThresholds(min_labels_per_class=6))
    validated = report.by_check("judge-validated")
    assert validated.status == "pass", validated
    assert validated.evidence.ids["certified"] == judged12.llm_ids
    assert report.by_check("judge-above-target").status == "pass"
    assert report.by_check("labels-exist").status == "pass"
    assert report.by_check("labels-per-class").status == "pass"
    assert report.by_check("determinism").status == "pass"  # the stamped validation block is carried over


def test_refused_judge_fails_and_below_target_is_named(judged12: BuiltRun) -> None:
    # the human says 4 of the judge's 6 failures on CLAIMS were passes: TNR stays 1, TPR = 6/10
    labels = labels_for(judged12, [CLAIMS], failing=6, flip=4)
    validate_run(judged12.path, labels, split="all", threshold=0.5, min_labels_per_class=2)
    report = audit_run(judged12.path, labels=labels)
    validated = report.by_check("judge-validated")
    assert validated.status == "fail"
    assert validated.evidence.ids["refused"] == (CLAIMS,)
    assert validated.evidence.counts["not_measured"] == len(judged12.llm_ids) - 1
    target = report.by_check("judge-above-target")
    assert target.status == "fail" and target.evidence.ids["below_target"] == (CLAIMS,)
    assert "TPR 0.60 < 0.80" in next(d.note for d in target.details if d.subject == CLAIMS)
    assert report.findings[0].check == "judge-validated"  # the most urgent finding leads


def test_unvalidated_judge_warns_and_labels_per_class_fails(judged12: BuiltRun) -> None:
    labels = labels_for(judged12, [CLAIMS], failing=6)
    validate_run(judged12.path, labels, split="all")  # default minimum (20 per class) not met
    report = audit_run(judged12.path, labels=labels)
    validated = report.by_check("judge-validated")
    assert validated.evidence.ids["unvalidated"] == (CLAIMS,)
    assert next(d.status for d in validated.details if d.subject == CLAIMS) == "warn"
    per_class = report.by_check("labels-per-class")
    assert per_class.status == "fail"
    claims = next(d for d in per_class.details if d.subject == CLAIMS)
    assert claims.note.startswith("6 pass / 6 fail (need 20 each): 14 more pass, 14 more fail")
    exist = report.by_check("labels-exist")
    assert exist.status == "fail"  # the other four LLM criteria have no label at all
    assert CLAIMS not in exist.evidence.ids["unlabeled_criteria"]
    assert len(exist.evidence.ids["unlabeled_criteria"]) == len(judged12.llm_ids) - 1


def test_validation_under_another_prompt_is_stale(make_run: MakeRun) -> None:
    ids = make_run(n=12, aggregate=False).trace_ids
    old = JudgeInfo(
        runtime="model", model="gpt-4o-2024-08-06", temperature=0.0, prompt_version="older-prompt"
    )
    built = make_run(n=12, plan=Plan(judge=old, results={(t, CLAIMS): "fail" for t in ids[:6]}))
    labels = labels_for(built, [CLAIMS], failing=6)
    validate_run(built.path, labels, split="all", threshold=0.5, min_labels_per_class=3)
    finding = audit_run(built.path, labels=labels).by_check("judge-validated")
    assert finding.evidence.ids["stale"] == (CLAIMS,)
    note = next(d.note for d in finding.details if d.subject == CLAIMS)
    assert "STALE" in note and "older-prompt" in note and PROMPT_VERSION in note


def test_only_deferred_labels_do_not_count(judged12: BuiltRun) -> None:
    labels = [
        HumanLabel(trace_id=t, criterion_id=c, label="defer", annotator="ana", created_at=T0)
        for t in judged12.trace_ids
        for c in judged12.llm_ids
    ]
    finding = audit_run(judged12.path, labels=labels).by_check("labels-exist")
    assert finding.status == "fail"
    assert finding.evidence.counts["decided_on_run"] == 0
    assert finding.evidence.ids["unlabeled_criteria"] == judged12.llm_ids


def test_labels_of_another_run_are_reported(judged12: BuiltRun) -> None:
    stranger = [
        HumanLabel(trace_id="not-here", criterion_id=CLAIMS, label="pass", annotator="ana", created_at=T0)
    ]
    finding = audit_run(judged12.path, labels=stranger).by_check("labels-exist")
    assert finding.status == "fail" and finding.evidence.counts["not_on_run"] == 1
    assert "belongs to this run" in finding.next_step


def test_latest_label_wins_and_disagreeing_annotators_count_for_neither(judged12: BuiltRun) -> None:
    first = labels_for(judged12, [CLAIMS], failing=6)
    # ana changes her mind on trace 0 later: pass; ben labels trace 1 pass where ana said fail
    later = HumanLabel(
        trace_id=judged12.trace_ids[0],
        criterion_id=CLAIMS,
        label="pass",
        annotator="ana",
        created_at=T0 + timedelta(days=1),
    )
    ben = HumanLabel(
        trace_id=judged12.trace_ids[1], criterion_id=CLAIMS, label="pass", annotator="ben", created_at=T0
    )
    finding = audit_run(
        judged12.path, labels=[*first, later, ben], thresholds=AuditThresholds(min_labels_per_class=1)
    ).by_check("labels-per-class")
    note = next(d.note for d in finding.details if d.subject == CLAIMS)
    assert note.startswith("7 pass / 4 fail") and "1 trace(s) with disagreeing annotators" in note


def test_annotator_agreement_warns_on_low_kappa(judged12: BuiltRun) -> None:
    ana = labels_for(judged12, [CLAIMS], failing=6, annotator="ana")
    ben = labels_for(judged12, [CLAIMS], failing=6, flip=6, annotator="ben")  # ben says all pass
    agree = audit_run(judged12.path, labels=ana + labels_for(judged12, [CLAIMS], failing=6, annotator="cy"))
    assert agree.by_check("annotator-agreement").status == "pass"
    low = audit_run(judged12.path, labels=ana + ben).by_check("annotator-agreement")
    assert low.status == "warn"  # ben passes everything: kappa 0 on 12 common items
    assert low.evidence.counts["pairs"] == 1 and low.evidence.ids["low_pairs"] == ("ana vs ben",)
    assert "kappa=0.000, n=12" in low.details[0].note


def test_labels_from_files_and_the_run_directory(judged12: BuiltRun, tmp_path: Path) -> None:
    labels = labels_for(judged12, judged12.llm_ids, failing=6)
    jsonl = tmp_path / "labels.jsonl"
    write_labels_jsonl(jsonl, labels)
    from_jsonl = audit_run(judged12.path, labels=jsonl)
    assert from_jsonl.labels_source == str(jsonl)
    store = LabelStore(tmp_path / "labels.sqlite")
    store.add_many(labels)
    from_store = audit_run(judged12.path, labels=tmp_path / "labels.sqlite")
    assert from_store.by_check("labels-exist") == from_jsonl.by_check("labels-exist")
    assert from_store.by_check("labels-exist").status == "pass"
    write_labels_jsonl(judged12.path / "labels.jsonl", labels)
    found = audit_run(judged12.path)
    assert found.labels_source == "labels.jsonl"
    assert found.by_check("labels-exist") == from_jsonl.by_check("labels-exist")


def test_results_survive_a_re_aggregation(judged12: BuiltRun) -> None:
    from helix import aggregate_run

    labels = labels_for(judged12, [CLAIMS], failing=6)
    validate_run(judged12.path, labels, split="all", threshold=0.5, min_labels_per_class=3)
    aggregate_run(judged12.path)  # re-folds scorecard.json, carrying the validation block over
    assert b'"validation"' in (judged12.path / "scorecard.json").read_bytes()
    finding = audit_run(judged12.path, labels=labels).by_check("judge-validated")
    assert finding.evidence.ids["certified"] == (CLAIMS,)
    # without the scorecard's block the audit still finds the result in calibration/validation.json
    card = (judged12.path / "scorecard.json").read_bytes()
    import orjson

    doc = orjson.loads(card)
    del doc["validation"]
    (judged12.path / "scorecard.json").write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    finding = audit_run(judged12.path, labels=labels).by_check("judge-validated")
    assert finding.evidence.ids["certified"] == (CLAIMS,)
    assert "[calibration/validation.json (all split, seed 0)]" in finding.details[2].note
