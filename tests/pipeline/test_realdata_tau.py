"""Real data: code checks over tau-bench airline trajectories, end to end through the run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helix import aggregate_run
from helix.judging import collect_results, load_criteria, prep_run, run_status
from helix.traces import read_traces

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
TAU = DATA / "tau-bench-historical-trajectories" / "gpt-4o-airline.json"
CRITERIA = Path(__file__).with_name("tau_code_checks.yaml")

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def tau_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not TAU.exists():
        pytest.skip(f"real data not present at {TAU}")
    intake = read_traces(TAU)
    run = tmp_path_factory.mktemp("tau") / "run"
    prep_run(intake.traces, load_criteria(CRITERIA), run)
    return run


def test_code_checks_decide_every_unit_without_an_llm(tau_run: Path) -> None:
    status = run_status(tau_run)
    assert status.missing_keys == ()
    judged = collect_results(tau_run)
    assert len(judged.traces) == 200
    assert len(judged.results) == 200 * 4
    unscored = [r for r in judged.results if r.verdict is None]
    assert unscored == []


def test_scorecard_reflects_the_checks(tau_run: Path) -> None:
    result = aggregate_run(tau_run)
    card = json.loads(result.scorecard_path.read_text())
    by_id = {c["criterion_id"]: c for c in card["criteria"]}
    assert set(by_id) == {
        "no-unhandled-tool-error",
        "no-tool-loop",
        "user-looked-up-before-booking",
        "tool-budget",
    }
    for crit in by_id.values():
        assert crit["n_pass"] + crit["n_fail"] + crit["n_uncertain"] + crit["n_unscored"] == 200
    # the error-acknowledgement check flags exactly the one run in which gpt-4o talks past a tool error
    assert by_id["no-unhandled-tool-error"]["n_fail"] == 1
    assert result.report_path.read_text().startswith("<!DOCTYPE html>")


def test_failing_checks_line_up_with_reward(tau_run: Path) -> None:
    """Runs that book without looking the user up first never earn the reward."""
    judged = collect_results(tau_run)
    reward = {t.id: next(s.value for s in t.scores if s.name == "reward") for t in judged.traces}
    failed = [
        r.trace_id
        for r in judged.results
        if r.criterion_id == "user-looked-up-before-booking" and r.verdict and r.verdict.result == "fail"
    ]
    assert all(reward[t] == 0.0 for t in failed)
