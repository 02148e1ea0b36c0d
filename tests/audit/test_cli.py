"""`helix audit` on the command line: table, JSON, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from helix.audit import audit_json, audit_run
from helix.cli import app
from helix.judging import JudgeInfo

from .conftest import MakeRun, Plan

runner = CliRunner()


def test_json_output_is_the_report_and_exit_1_on_a_failing_finding(make_run: MakeRun) -> None:
    built = make_run(plan=Plan(judge=JudgeInfo(runtime="model", model="gpt-4o", temperature=0.0)))
    result = runner.invoke(app, ["audit", "--run", str(built.path), "--json"])
    assert result.exit_code == 1, result.output
    assert result.stdout_bytes == audit_json(audit_run(built.path))
    data = json.loads(result.stdout)
    assert data["passed"] is False and data["findings"][0]["status"] == "fail"


def test_table_and_exit_0_when_nothing_fails(make_run: MakeRun) -> None:
    built = make_run(fail={"claims-match-actions": 1})
    result = runner.invoke(app, ["audit", "--run", str(built.path), "--details"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    for check in ("determinism", "pin-envelope", "criteria-grounded", "code-check-preferred"):
        assert check in result.output
    assert "no finding fails" in result.output
    assert "identity-verified-before-action" in result.output  # a detail row (never failed)


def test_labels_and_guards_options(make_run: MakeRun, tmp_path: Path) -> None:
    built = make_run()
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps(
            {
                "trace_id": built.trace_ids[0],
                "criterion_id": "claims-match-actions",
                "label": "pass",
                "annotator": "ana",
                "created_at": "2026-01-01T00:00:00Z",
            }
        )
        + "\n"
    )
    args = ["audit", "--run", str(built.path), "--labels", str(labels), "--json"]
    data = json.loads(runner.invoke(app, [*args, "--guard", "tool-call-budget"]).stdout)
    assert data["labels_source"] == str(labels)
    grounded = next(f for f in data["findings"] if f["check"] == "criteria-grounded")
    assert "tool-call-budget" in grounded["evidence"]["ids"]["guards"]


def test_bad_input_exits_2(make_run: MakeRun, tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", "--run", str(tmp_path / "missing")], env={"COLUMNS": "300"})
    assert result.exit_code == 2 and "not a prepared run" in " ".join(result.output.split())
    built = make_run()
    result = runner.invoke(
        app, ["audit", "--run", str(built.path), "--guard", "nope"], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 2 and "guard 'nope'" in result.output


def test_help_explains_the_checks() -> None:
    result = runner.invoke(app, ["audit", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for word in ("judge-validation", "not-measured", "--labels", "--guard", "Exit code 1"):
        assert word in result.output
