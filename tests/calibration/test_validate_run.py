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


def test_validate_run_measures_the_test_split_and_stamps_scorecard(
    judged_run: Path, labels_file: Path
) -> None:
    assert b'"validation"' not in (judged_run / "scorecard.json").read_bytes()
    assert 'id="calibration"' not in (judged_run / "report.html").read_text()
    report = validate_run(judged_run, labels_file, seed=0)
    (r,) = report.results
    assert r.criterion_id == "refund_ok" and r.split == "test"
    from helix.calibration import assign_splits

    splits = assign_splits({f"t{i:03d}": human_label(i) for i in range(200)}, seed=0)
    test_ids = list(splits.ids("test"))
    c = r.counts
    assert (c.tp, c.fn, c.fp, c.tn) == _expected_counts(test_ids)
    assert r.labels_used == len(test_ids) == 86
    # The judged set is every decided verdict of the run.
    decided = [judge_result(i) for i in range(200) if judge_result(i) != "uncertain"]
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


def test_second_test_measurement_is_refused_then_forced(judged_run: Path, labels_file: Path) -> None:
    validate_run(judged_run, labels_file)
    with pytest.raises(TestSplitReusedError):
        validate_run(judged_run, labels_file)
    validate_run(judged_run, labels_file, force=True)
    assert [e.forced for e in read_ledger(judged_run).entries] == [False, True]
    # The dev split is for iterating: it never touches the ledger.
    validate_run(judged_run, labels_file, split="dev")
    validate_run(judged_run, labels_file, split="dev")
    assert len(read_ledger(judged_run).entries) == 2


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
    assert again.exit_code == 2 and "already measured" in again.stderr


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
