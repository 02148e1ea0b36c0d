"""`validate_run` and `helix validate` over a real run directory; scorecard and report stamping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helix.calibration import TestSplitReusedError, read_ledger, validate_run, validation_path
from helix.cli import app
from helix.review import HumanLabel, write_labels_jsonl
from helix.scoring import Scorecard

from .conftest import JUDGE_MODEL, human_label, judge_result, make_labels


def _expected_counts(ids: list[str]) -> tuple[int, int, int, int]:
    tp = fn = fp = tn = 0
    for tid in ids:
        i = int(tid[1:])
        h, j = human_label(i), judge_result(i)
        if j == "uncertain":
            continue
        tp += h == "pass" and j == "pass"
        fn += h == "pass" and j == "fail"
        fp += h == "fail" and j == "pass"
        tn += h == "fail" and j == "fail"
    return tp, fn, fp, tn


def test_validate_run_measures_the_test_split_and_stamps_scorecard(judged_run: Path, tmp_path: Path) -> None:
    assert b'"validation"' not in (judged_run / "scorecard.json").read_bytes()
    assert 'id="calibration"' not in (judged_run / "report.html").read_text()
    labels_file = make_labels(tmp_path / "some.jsonl", n=150)  # t000-t149 labelled, 50 traces not
    report = validate_run(judged_run, labels_file, seed=0, split="test")
    (r,) = report.results
    assert r.criterion_id == "refund_ok" and r.split == "test" and r.mode == "development"
    assert (r.design, r.design_source, r.estimator) == ("by-class", "assumed", "rogan-gladen")
    assert any("do not record how their traces were chosen" in w for w in r.warnings)
    from helix.calibration import assign_splits

    splits = assign_splits({f"t{i:03d}": human_label(i) for i in range(150)}, seed=0)
    test_ids = list(splits.ids("test"))
    c = r.counts
    assert (c.tp, c.fn, c.fp, c.tn) == _expected_counts(test_ids)
    assert r.labels_used == len(test_ids)
    # The judged set behind p_obs is every decided verdict of a trace nobody labelled.
    decided = [judge_result(i) for i in range(150, 200) if judge_result(i) != "uncertain"]
    assert r.judged_n == len(decided) and r.judged_pass == decided.count("pass")
    assert r.theta is not None and r.theta_interval is not None
    assert r.theta_interval[0] <= r.theta <= r.theta_interval[1]
    assert r.judge_models == (JUDGE_MODEL,)
    assert report.stamped
    card = Scorecard.model_validate_json((judged_run / "scorecard.json").read_bytes())
    assert card.validation is not None
    (v,) = card.validation
    assert (v.tp, v.fn, v.fp, v.tn) == (c.tp, c.fn, c.fp, c.tn)
    assert v.theta.value == r.theta and v.status == r.status
    html = (judged_run / "report.html").read_text()
    assert 'id="calibration"' in html and 'id="calibration-refund_ok"' in html and "<svg" in html
    assert json.loads(validation_path(judged_run).read_bytes())["results"][0]["criterion_id"] == "refund_ok"


def test_an_external_judge_is_measured_once_on_every_label(judged_run: Path, labels_file: Path) -> None:
    (r,) = validate_run(judged_run, labels_file).results
    assert (r.split, r.mode, r.labels_used) == ("all", "external", 200)
    # Every decided trace is labelled: a census, post-stratified on the verdict, and θ is the labels' rate.
    assert (r.design, r.design_source, r.estimator) == ("random", "census", "post-stratified")
    assert r.theta_interval is not None and r.theta_interval[0] <= 0.5 <= r.theta_interval[1]
    decided = [i for i in range(200) if judge_result(i) != "uncertain"]
    assert r.theta == pytest.approx(sum(human_label(i) == "pass" for i in decided) / len(decided))
    assert sum(s.judged for s in r.strata) == len(decided)
    assert all(s.inclusion_probability == 1.0 for s in r.strata)
    assert [(e.split, e.test_size) for e in read_ledger(judged_run).entries] == [("all", 200)]
    with pytest.raises(TestSplitReusedError, match="set of labels"):
        validate_run(judged_run, labels_file)


def test_a_judge_iterated_on_dev_is_no_longer_external(judged_run: Path, labels_file: Path) -> None:
    (dev,) = validate_run(judged_run, labels_file, split="dev").results
    assert dev.mode == "development"
    (r,) = validate_run(judged_run, labels_file).results  # auto: the dev iteration is in the ledger
    assert (r.split, r.mode) == ("test", "development")


def test_second_test_measurement_is_refused_then_forced(judged_run: Path, labels_file: Path) -> None:
    validate_run(judged_run, labels_file, split="test")
    with pytest.raises(TestSplitReusedError):
        validate_run(judged_run, labels_file, split="test")
    validate_run(judged_run, labels_file, split="test", force=True)
    assert [e.forced for e in read_ledger(judged_run).entries] == [False, True]
    # The dev split is for iterating: it is recorded, never refused.
    validate_run(judged_run, labels_file, split="dev")
    validate_run(judged_run, labels_file, split="dev")
    assert [e.split for e in read_ledger(judged_run).entries] == ["test", "test", "dev", "dev"]


def test_too_few_labels_is_unvalidated(judged_run: Path, tmp_path: Path) -> None:
    labels = make_labels(tmp_path / "few.jsonl", n=40)
    (r,) = validate_run(judged_run, labels).results
    assert r.status == "unvalidated" and "at least 20" in r.status_reason


def test_conflicting_annotators_are_left_out_and_reported(judged_run: Path, tmp_path: Path) -> None:
    labels = [
        HumanLabel(trace_id=f"t{i:03d}", criterion_id="refund_ok", label=human_label(i), annotator="ana")  # type: ignore[arg-type]
        for i in range(200)
    ]
    labels.append(HumanLabel(trace_id="t000", criterion_id="refund_ok", label="fail", annotator="ben"))
    path = tmp_path / "two.jsonl"
    write_labels_jsonl(path, labels)
    (r,) = validate_run(judged_run, path, split="all").results
    assert any("conflicting" in w for w in r.warnings)
    assert r.counts.human_deferred == 1


def test_cli_json_has_the_documented_fields(judged_run: Path, labels_file: Path) -> None:
    result = CliRunner().invoke(
        app, ["validate", "--run", str(judged_run), "--labels", str(labels_file), "--json", "--seed", "0"]
    )
    data = json.loads(result.stdout)
    (r,) = data["results"]
    for field in (
        "tpr",
        "tnr",
        "tpr_interval",
        "tnr_interval",
        "p_obs",
        "theta",
        "theta_interval",
        "status",
        "counts",
    ):
        assert field in r
    assert result.exit_code == (0 if r["status"] == "certified" else 1)
    again = CliRunner().invoke(app, ["validate", "--run", str(judged_run), "--labels", str(labels_file)])
    assert again.exit_code == 2 and "already measured" in " ".join(again.stderr.split())


def test_cli_unknown_criterion_is_a_usage_error(judged_run: Path, labels_file: Path) -> None:
    result = CliRunner().invoke(
        app, ["validate", "--run", str(judged_run), "--labels", str(labels_file), "--criterion", "nope"]
    )
    assert result.exit_code == 2 and "'nope'" in result.stderr


def test_cli_human_output_names_status_and_corrected_rate(judged_run: Path, labels_file: Path) -> None:
    result = CliRunner().invoke(
        app, ["validate", "--run", str(judged_run), "--labels", str(labels_file), "--split", "all"]
    )
    assert "refund_ok" in result.stdout and "corrected" in result.stdout and "TPR" in result.stdout


def test_labels_from_a_sqlite_label_store(judged_run: Path, labels_file: Path, tmp_path: Path) -> None:
    from helix.review import LabelStore

    store = LabelStore(tmp_path / "labels.sqlite")
    store.import_jsonl(labels_file)
    from_store = validate_run(judged_run, tmp_path / "labels.sqlite", split="dev").results[0]
    from_file = validate_run(judged_run, labels_file, split="dev").results[0]
    assert from_store.counts == from_file.counts and from_store.theta == from_file.theta


def test_aggregating_again_keeps_the_validation_block(judged_run: Path, labels_file: Path) -> None:
    from helix import aggregate_run

    validate_run(judged_run, labels_file, seed=0)
    stamped = Scorecard.model_validate_json((judged_run / "scorecard.json").read_bytes()).validation
    assert stamped
    aggregate_run(judged_run)
    again = Scorecard.model_validate_json((judged_run / "scorecard.json").read_bytes())
    assert again.validation == stamped
    assert 'id="calibration"' in (judged_run / "report.html").read_text()


def test_annotator_agreement_reaches_scorecard_and_report(judged_run: Path, tmp_path: Path) -> None:
    ana = [
        HumanLabel(trace_id=f"t{i:03d}", criterion_id="refund_ok", label=human_label(i), annotator="ana")  # type: ignore[arg-type]
        for i in range(200)
    ]
    # ben labels the first 20 traces, disagreeing with ana on 4 of them
    ben = [
        HumanLabel(
            trace_id=f"t{i:03d}",
            criterion_id="refund_ok",
            label=("fail" if human_label(i) == "pass" else "pass") if i < 4 else human_label(i),  # type: ignore[arg-type]
            annotator="ben",
        )
        for i in range(20)
    ]
    path = tmp_path / "two.jsonl"
    write_labels_jsonl(path, ana + ben)
    (r,) = validate_run(judged_run, path, split="all").results
    (k,) = r.annotator_agreement
    assert (k.annotator_a, k.annotator_b, k.n) == ("ana", "ben", 20)
    assert k.kappa is not None and -1.0 <= k.kappa < 1.0
    card = Scorecard.model_validate_json((judged_run / "scorecard.json").read_bytes())
    assert card.validation is not None and card.validation[0].annotator_agreement == (k,)
    html = (judged_run / "report.html").read_text()
    assert "annotator agreement: ana vs ben" in html


def test_cli_for_an_uncertified_judge_leads_with_status_and_interval(
    judged_run: Path, tmp_path: Path
) -> None:
    labels = make_labels(tmp_path / "few.jsonl", n=40)
    result = CliRunner().invoke(app, ["validate", "--run", str(judged_run), "--labels", str(labels)])
    assert result.exit_code == 1
    first = result.stdout.splitlines()[0]
    assert first.startswith("refund_ok: UNVALIDATED — corrected success rate [")
    assert "(95% interval; point " in first and "judge unvalidated" in first


def test_assumption_agreement_is_reported_per_blocked_by_kind() -> None:
    from helix.calibration import calibrate

    pairs = [
        ("underdetermined", "uncertain", "normative"),
        ("underdetermined", "uncertain", None),  # no kind: missing evidence
        ("pass", "uncertain", "missing-evidence"),
        ("fail", "uncertain", "scope"),
        ("pass", "pass"),
        ("fail", "fail"),
    ]
    r = calibrate(pairs, judged_pass=5, judged_n=10, min_labels_per_class=1)
    kinds = {k.kind: (k.on_underdetermined, k.abstentions) for k in r.counts.by_kind}
    assert kinds == {
        "missing-evidence": (1, 2),
        "factual-intent": (0, 0),
        "normative": (1, 1),
        "scope": (0, 1),
    }
    assert r.assumption_agreement == pytest.approx(2 / 4)


def test_labels_chosen_by_verdict_are_post_stratified(judged_run: Path, tmp_path: Path) -> None:
    # 30 traces the judge passed and 30 it failed, as the review queue chooses them.
    passed = [i for i in range(200) if judge_result(i) == "pass"][:30]
    failed = [i for i in range(200) if judge_result(i) == "fail"][:30]
    labels = [
        HumanLabel(
            trace_id=f"t{i:03d}",
            criterion_id="refund_ok",
            label=human_label(i),  # type: ignore[arg-type]
            annotator="ana",
            design="by-verdict",
            stratum=judge_result(i),
        )
        for i in passed + failed
    ]
    path = tmp_path / "by_verdict.jsonl"
    write_labels_jsonl(path, labels)
    (r,) = validate_run(judged_run, path).results
    assert (r.design, r.design_source, r.estimator, r.split) == (
        "by-verdict",
        "recorded",
        "post-stratified",
        "all",
    )
    decided = [i for i in range(200) if judge_result(i) != "uncertain"]
    by_name = {s.name: s for s in r.strata}
    assert by_name["pass"].judged == sum(judge_result(i) == "pass" for i in decided)
    assert (by_name["pass"].labelled, by_name["fail"].labelled) == (30, 30)
    truth = sum(human_label(i) == "pass" for i in decided) / len(decided)
    assert r.theta_interval is not None and r.theta_interval[0] <= truth <= r.theta_interval[1]
    # TPR by Bayes' rule over the strata, not by counting the (verdict-balanced) pairs.
    true_tpr = sum(human_label(i) == "pass" and judge_result(i) == "pass" for i in decided) / sum(
        human_label(i) == "pass" for i in decided
    )
    assert r.tpr_interval is not None and r.tpr_interval[0] <= true_tpr <= r.tpr_interval[1]


def test_a_mix_of_recorded_designs_is_refused_and_design_can_be_given(
    judged_run: Path, tmp_path: Path
) -> None:
    from helix import UsageError

    labels = [
        HumanLabel(
            trace_id=f"t{i:03d}",
            criterion_id="refund_ok",
            label=human_label(i),  # type: ignore[arg-type]
            annotator="ana",
            design="random" if i % 2 else "by-verdict",
        )
        for i in range(60)
    ]
    path = tmp_path / "mixed.jsonl"
    write_labels_jsonl(path, labels)
    with pytest.raises(UsageError, match="several designs"):
        validate_run(judged_run, path)
    (r,) = validate_run(judged_run, path, design="random", split="dev").results
    assert (r.design, r.design_source) == ("random", "given")


def test_a_separate_population_is_the_judged_set(judged_run: Path, tmp_path: Path) -> None:
    import shutil

    other = Path(shutil.copytree(judged_run, tmp_path / "population"))
    labels = make_labels(tmp_path / "some.jsonl", n=120)
    (r,) = validate_run(judged_run, labels, population=other, split="dev").results
    # by-class: p_obs comes from the population's traces that nobody labelled (t120-t199)
    decided = [judge_result(i) for i in range(120, 200) if judge_result(i) != "uncertain"]
    assert (r.judged_n, r.judged_pass) == (len(decided), decided.count("pass"))
    assert r.population == str(other)


def test_the_report_leads_with_the_interval_for_an_uncertified_judge(
    judged_run: Path, tmp_path: Path
) -> None:
    import re

    labels = make_labels(tmp_path / "few.jsonl", n=40)
    (r,) = validate_run(judged_run, labels).results
    assert r.status == "unvalidated" and r.theta_interval is not None
    html = (judged_run / "report.html").read_text()
    cell = re.search(r'<td class="theta">(.*?)</td>', html)
    assert cell is not None
    assert (
        cell.group(1).startswith("[") and "(point " in cell.group(1) and "judge unvalidated" in cell.group(1)
    )
