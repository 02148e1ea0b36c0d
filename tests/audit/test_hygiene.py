"""Pipeline hygiene on constructed runs: completeness, determinism, the pin, rates, stale files."""

from __future__ import annotations

import json
import shutil

import pytest

from helix import UsageError
from helix.audit import AREAS, CHECKS, STATUS_ORDER, audit_json, audit_run
from helix.judging import JudgeInfo, open_run

from .conftest import PINNED, MakeRun, Plan


def test_a_clean_pinned_run_has_no_failing_finding(make_run: MakeRun) -> None:
    built = make_run(fail={cid: 1 for cid in ("refund-within-policy", "claims-match-actions")})
    report = audit_run(built.path)
    assert report.passed, [f for f in report.findings if f.status == "fail"]
    assert [f.check for f in report.findings if f.status == "pass"][:2]  # some checks pass
    for check in ("verdicts-complete", "determinism", "pin-envelope", "judge-model-pinned", "stale-verdicts"):
        assert report.by_check(check).status == "pass", check
    assert report.by_check("unscored-rate").evidence.counts["unscored"] == 0


def test_every_check_reports_once_in_impact_order(make_run: MakeRun) -> None:
    built = make_run(plan=Plan(judge=JudgeInfo(runtime="model", model="gpt-4o", temperature=0.0)))
    report = audit_run(built.path)
    assert sorted(f.check for f in report.findings) == sorted(CHECKS)
    ranks = [(STATUS_ORDER.index(f.status), AREAS.index(f.area)) for f in report.findings]
    assert ranks == sorted(ranks)
    assert report.findings[0].status == "fail"
    assert report.status_counts == {s: sum(f.status == s for f in report.findings) for s in STATUS_ORDER}
    assert not report.passed


def test_report_bytes_are_identical_for_the_same_run(make_run: MakeRun, tmp_path: object) -> None:
    built = make_run(plan=Plan(judge=JudgeInfo(runtime="model", model="gpt-4o", temperature=0.0)))
    first = audit_json(audit_run(built.path))
    assert first == audit_json(audit_run(built.path))
    copy = built.path.parent / "copy-of-run"
    shutil.copytree(built.path, copy)
    other = json.loads(audit_json(audit_run(copy)))
    mine = json.loads(first)
    other.pop("run_dir"), mine.pop("run_dir")
    assert other == mine  # the report depends on the run's content, not where it lies


def test_missing_and_invalid_verdicts_fail_completeness_and_determinism(make_run: MakeRun) -> None:
    built = make_run()
    run = open_run(built.path)
    llm_keys = [u.key for u in run.units if u.kind == "llm"]
    run.verdict_path(llm_keys[0]).unlink()
    run.verdict_path(llm_keys[1]).write_text('{"version": 1, "key": "wrong"}')
    report = audit_run(built.path)
    complete = report.by_check("verdicts-complete")
    assert complete.status == "fail"
    assert complete.evidence.counts["missing"] == 1 and complete.evidence.counts["invalid"] == 1
    assert complete.evidence.ids["missing"] == (llm_keys[0],)
    assert report.by_check("determinism").status == "fail"
    assert not report.passed


def test_determinism_catches_an_edited_scorecard(make_run: MakeRun) -> None:
    built = make_run(fail={"claims-match-actions": 2})
    path = built.path / "scorecard.json"
    data = json.loads(path.read_text())
    data["criteria"][2]["n_fail"] += 1
    path.write_text(json.dumps(data, indent=2) + "\n")
    finding = audit_run(built.path).by_check("determinism")
    assert finding.status == "fail"
    assert "$.criteria[2].n_fail" in finding.evidence.ids["paths"]


def test_determinism_catches_a_verdict_changed_after_aggregation(make_run: MakeRun) -> None:
    built = make_run()
    run = open_run(built.path)
    key = next(u.key for u in run.units if u.kind == "llm")
    data = json.loads(run.verdict_path(key).read_text())
    data["verdicts"][0]["result"] = "fail"
    run.verdict_path(key).write_text(json.dumps(data))
    finding = audit_run(built.path).by_check("determinism")
    assert finding.status == "fail" and finding.evidence.counts["differences"] > 0


def test_determinism_not_measured_without_a_scorecard(make_run: MakeRun) -> None:
    built = make_run(aggregate=False)
    assert audit_run(built.path).by_check("determinism").status == "not-measured"


def test_determinism_holds_under_a_non_default_gate(make_run: MakeRun) -> None:
    from helix import aggregate_run

    built = make_run(fail={"claims-match-actions": 1})
    aggregate_run(built.path, blocking=("critical",), fail_on_uncertain=True)
    assert audit_run(built.path).by_check("determinism").status == "pass"


@pytest.mark.parametrize(
    ("judge", "check", "fragment"),
    [
        (
            JudgeInfo(
                runtime="model",
                model="gpt-4o-2024-08-06",
                temperature=0.7,
                prompt_version=PINNED.prompt_version,
            ),
            "pin-envelope",
            "temperature 0.7",
        ),
        (
            JudgeInfo(
                runtime="model", model="gpt-4o-2024-08-06", temperature=0.0, prompt_version="old-prompt"
            ),
            "pin-envelope",
            "prompt version 'old-prompt'",
        ),
        (JudgeInfo(runtime="model", model="gpt-4o-2024-08-06"), "pin-envelope", "temperature not recorded"),
        (
            JudgeInfo(runtime="model", model="gpt-4o", temperature=0.0, prompt_version=PINNED.prompt_version),
            "judge-model-pinned",
            "floating alias",
        ),
        (
            JudgeInfo(
                runtime="model",
                model="claude-sonnet-latest",
                temperature=0.0,
                prompt_version=PINNED.prompt_version,
            ),
            "judge-model-pinned",
            "floating alias",
        ),
    ],
)
def test_off_pin_verdicts_fail(make_run: MakeRun, judge: JudgeInfo | None, check: str, fragment: str) -> None:
    built = make_run(plan=Plan(judges_by_trace={}, judge=judge))
    finding = audit_run(built.path).by_check(check)
    assert finding.status == "fail"
    assert any(fragment in d.note for d in finding.details), finding.details


def test_a_verdict_without_judge_breaks_the_contract(make_run: MakeRun) -> None:
    built = make_run(plan=Plan(judge=None), aggregate=False)
    finding = audit_run(built.path).by_check("verdicts-complete")
    assert finding.status == "fail" and finding.evidence.counts["invalid"] == 6
    assert all("no 'judge'" in d.note for d in finding.details)


def test_one_off_pin_verdict_is_named(make_run: MakeRun) -> None:
    traces = make_run(aggregate=False).trace_ids
    odd = JudgeInfo(
        runtime="model", model="gpt-4o-2024-08-06", temperature=1.0, prompt_version=PINNED.prompt_version
    )
    built = make_run(plan=Plan(judges_by_trace={traces[3]: odd}))
    finding = audit_run(built.path).by_check("pin-envelope")
    assert finding.status == "fail" and finding.evidence.counts["off_pin"] == 1
    run = open_run(built.path)
    key = next(u.key for u in run.units if u.kind == "llm" and traces[3] in u.trace_ids)
    assert finding.evidence.ids["off_pin"] == (key,)
    assert audit_run(built.path).by_check("judge-model-pinned").status == "pass"


def test_unscored_rate_warns_then_fails(make_run: MakeRun) -> None:
    ids = make_run(aggregate=False).trace_ids
    one = audit_run(make_run(plan=Plan(unscored_traces={ids[0]})).path).by_check("unscored-rate")
    # 5 of 54 rows (6 traces x 9 criteria) is 9.3%: above 0 (warn), not above 10% (fail)
    assert one.status == "warn" and one.evidence.counts["unscored"] == 5
    two = audit_run(make_run(plan=Plan(unscored_traces=set(ids[:2]))).path).by_check("unscored-rate")
    assert two.status == "fail" and two.evidence.counts["unscored"] == 10


def test_uncertain_rate_is_per_criterion(make_run: MakeRun) -> None:
    ids = make_run(aggregate=False).trace_ids
    plan = Plan(results={(t, "resolves-or-escalates"): "uncertain" for t in ids[:2]})
    finding = audit_run(make_run(plan=plan).path).by_check("uncertain-rate")
    assert finding.status == "fail"  # 2 of 6 = 33% > 30%
    assert finding.evidence.ids["high_uncertain"] == ("resolves-or-escalates",)
    plan = Plan(results={(ids[0], "resolves-or-escalates"): "uncertain"})
    finding = audit_run(make_run(plan=plan).path).by_check("uncertain-rate")
    assert finding.status == "warn"  # 1 of 6 = 17% > 10%


def test_stale_verdict_files_warn(make_run: MakeRun) -> None:
    built = make_run()
    (built.path / "verdicts" / "deadbeefdeadbeef0000.verdict.json").write_text("{}")
    finding = audit_run(built.path).by_check("stale-verdicts")
    assert finding.status == "warn" and finding.evidence.ids["stale"] == ("deadbeefdeadbeef0000",)


def test_not_a_run_is_a_usage_error(tmp_path: object) -> None:
    from pathlib import Path

    with pytest.raises(UsageError, match="not a prepared run"):
        audit_run(Path(str(tmp_path)) / "nowhere")


def test_thresholds_are_checked_and_applied(make_run: MakeRun) -> None:
    from helix.audit import AuditThresholds

    with pytest.raises(UsageError, match=r"unscored_fail must lie in \[0, 1\], got 1.5"):
        AuditThresholds(unscored_fail=1.5)
    with pytest.raises(UsageError, match="min_labels_per_class must be at least 1"):
        AuditThresholds(min_labels_per_class=0)
    ids = make_run(aggregate=False).trace_ids
    built = make_run(plan=Plan(unscored_traces={ids[0]}))
    lenient = AuditThresholds(unscored_warn=0.2, unscored_fail=0.5)
    assert audit_run(built.path, thresholds=lenient).by_check("unscored-rate").status == "pass"
    strict = AuditThresholds(unscored_fail=0.05)
    assert audit_run(built.path, thresholds=strict).by_check("unscored-rate").status == "fail"
