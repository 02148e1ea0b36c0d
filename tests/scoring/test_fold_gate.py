"""Folding verdicts per criterion and the severity gate."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helix import UsageError
from helix.judging import Criterion, JudgedRun, TraceCriterionResult
from helix.scoring import (
    CriterionScore,
    GateConfig,
    build_scorecard,
    evaluate_gate,
    fold_criterion,
    fold_outcome,
)
from helix.stats import wilson_interval

MakeCriterion = Callable[..., Criterion]
MakeRow = Callable[..., TraceCriterionResult]
MakeRun = Callable[..., JudgedRun]


def _fold(criterion: MakeCriterion, row: MakeRow, results: list[str | None]) -> CriterionScore:
    c = criterion("c1")
    return fold_criterion(c, [row(f"t{i}", "c1", r) for i, r in enumerate(results)])


# --- fold ------------------------------------------------------------------------------------


def test_all_uncertain_folds_to_uncertain(criterion: MakeCriterion, row: MakeRow) -> None:
    s = _fold(criterion, row, ["uncertain", "uncertain", "uncertain"])
    assert s.outcome == "uncertain"
    assert (s.n_pass, s.n_fail, s.n_uncertain, s.n_unscored, s.n_decided) == (0, 0, 3, 0, 0)
    assert s.pass_rate is None and s.pass_rate_interval is None
    assert s.uncertain_trace_ids == ("t0", "t1", "t2")


def test_pass_and_uncertain_folds_to_pass(criterion: MakeCriterion, row: MakeRow) -> None:
    s = _fold(criterion, row, ["uncertain", "pass", "uncertain"])
    assert s.outcome == "pass"
    # Uncertain verdicts are not coerced: the rate is over the one decided verdict.
    assert s.n_decided == 1 and s.pass_rate == 1.0
    assert s.n_uncertain == 2


def test_one_fail_anywhere_folds_to_fail(criterion: MakeCriterion, row: MakeRow) -> None:
    s = _fold(criterion, row, ["pass", "pass", "uncertain", None, "fail", "pass"])
    assert s.outcome == "fail"
    assert s.failing_trace_ids == ("t4",)
    assert (s.n_pass, s.n_fail, s.n_uncertain, s.n_unscored) == (3, 1, 1, 1)


def test_unscored_is_counted_apart(criterion: MakeCriterion, row: MakeRow) -> None:
    only_unscored = _fold(criterion, row, [None, None])
    assert only_unscored.outcome == "uncertain"
    assert only_unscored.n_unscored == 2 and only_unscored.n_decided == 0
    assert only_unscored.pass_rate is None
    assert only_unscored.unscored_trace_ids == ("t0", "t1")
    mixed = _fold(criterion, row, ["pass", None, "fail", None])
    assert mixed.n_decided == 2 and mixed.pass_rate == 0.5
    assert mixed.n_unscored == 2


def test_no_rows_folds_to_uncertain(criterion: MakeCriterion) -> None:
    s = fold_criterion(criterion("c1"), [])
    assert s.outcome == "uncertain"
    assert s.n_decided == s.n_uncertain == s.n_unscored == 0


def test_rows_of_other_criteria_are_ignored(criterion: MakeCriterion, row: MakeRow) -> None:
    s = fold_criterion(criterion("c1"), [row("t1", "c2", "fail"), row("t2", "c1", "pass")])
    assert s.outcome == "pass" and s.n_fail == 0


def test_pass_rate_interval_is_wilson_over_decided(criterion: MakeCriterion, row: MakeRow) -> None:
    s = _fold(criterion, row, ["pass"] * 7 + ["fail"] * 3 + ["uncertain"] * 5 + [None] * 4)
    assert s.pass_rate == pytest.approx(0.7)
    assert s.pass_rate_interval is not None
    assert (s.pass_rate_interval.low, s.pass_rate_interval.high) == wilson_interval(7, 10)
    assert s.pass_rate_interval.method == "wilson" and s.pass_rate_interval.confidence == 0.95


def test_failing_trace_ids_are_sorted(criterion: MakeCriterion, row: MakeRow) -> None:
    c = criterion("c1")
    s = fold_criterion(c, [row(t, "c1", "fail") for t in ["zeta", "alpha", "mid"]])
    assert s.failing_trace_ids == ("alpha", "mid", "zeta")


outcomes = st.lists(st.sampled_from(["pass", "fail", "uncertain", None]), max_size=12)


@given(outcomes)
def test_fold_outcome_rule(results: list[str | None]) -> None:
    got = fold_outcome(results)  # type: ignore[arg-type]
    if "fail" in results:
        assert got == "fail"
    elif "pass" in results:
        assert got == "pass"
    else:
        assert got == "uncertain"


@given(results=outcomes)
def test_fold_counts_add_up(criterion: MakeCriterion, row: MakeRow, results: list[str | None]) -> None:
    s = fold_criterion(criterion("c1"), [row(f"t{i}", "c1", r) for i, r in enumerate(results)])
    assert s.n_pass + s.n_fail + s.n_uncertain + s.n_unscored == len(results)
    assert s.outcome == fold_outcome(results)  # type: ignore[arg-type]


# --- gate ------------------------------------------------------------------------------------


def _scores(
    criterion: MakeCriterion, row: MakeRow, spec: dict[str, tuple[str, list[str | None]]]
) -> list[CriterionScore]:
    return [
        fold_criterion(criterion(cid, sev), [row(f"t{i}", cid, r) for i, r in enumerate(results)])
        for cid, (sev, results) in spec.items()
    ]


def test_gate_passes_when_only_minor_fails(criterion: MakeCriterion, row: MakeRow) -> None:
    scores = _scores(criterion, row, {"a": ("critical", ["pass"]), "b": ("minor", ["fail", "pass"])})
    g = evaluate_gate(scores)
    assert g.passed
    assert g.blocking_criteria == ("a",) and g.blocking_failures == ()
    assert g.reason.startswith("PASS")


def test_gate_fails_on_blocking_failure(criterion: MakeCriterion, row: MakeRow) -> None:
    scores = _scores(
        criterion,
        row,
        {"a": ("critical", ["pass", "fail"]), "b": ("major", ["fail"]), "c": ("minor", ["fail"])},
    )
    g = evaluate_gate(scores)
    assert not g.passed
    assert g.blocking_failures == ("a", "b")
    assert g.reason == "FAIL: 2 blocking criteria failed (a, b)"


def test_gate_uncertain_blocks_only_when_asked(criterion: MakeCriterion, row: MakeRow) -> None:
    scores = _scores(criterion, row, {"a": ("major", ["pass", "uncertain"]), "b": ("major", ["uncertain"])})
    lenient = evaluate_gate(scores)
    assert lenient.passed and lenient.uncertain_blocking == ("a", "b")
    assert "uncertain" in lenient.reason
    strict = evaluate_gate(scores, config=GateConfig(fail_on_uncertain=True))
    assert not strict.passed and strict.uncertain_blocking == ("a", "b")
    assert strict.blocking_failures == ()


def test_gate_unscored_blocks_by_default(criterion: MakeCriterion, row: MakeRow) -> None:
    scores = _scores(criterion, row, {"a": ("critical", ["pass", None]), "m": ("minor", [None])})
    default = evaluate_gate(scores)
    assert not default.passed
    assert default.unscored_blocking == ("a",)
    assert default.reason == "FAIL: 1 blocking criterion not fully scored (a)"
    relaxed = evaluate_gate(scores, config=GateConfig(fail_on_unscored=False))
    assert relaxed.passed and relaxed.unscored_blocking == ("a",)


def test_gate_treats_an_unjudged_blocking_criterion_as_unscored(criterion: MakeCriterion) -> None:
    g = evaluate_gate([fold_criterion(criterion("a", "critical"), [])])
    assert not g.passed and g.unscored_blocking == ("a",)


def test_gate_blocking_severities_are_configurable(criterion: MakeCriterion, row: MakeRow) -> None:
    scores = _scores(criterion, row, {"a": ("major", ["fail"]), "b": ("minor", ["fail"])})
    assert evaluate_gate(scores, config=GateConfig(blocking=("critical",))).passed
    everything = evaluate_gate(scores, config=GateConfig(blocking=("critical", "major", "minor")))
    assert everything.blocking_failures == ("a", "b")


def test_gate_config_rejects_unknown_severity() -> None:
    with pytest.raises(UsageError, match="'blocker'"):
        GateConfig(blocking=("blocker",))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="string"):
        GateConfig(blocking="critical")  # type: ignore[arg-type]


def test_gate_config_accepts_any_sequence_as_a_tuple() -> None:
    cfg = GateConfig(blocking=["critical"])  # type: ignore[arg-type]
    assert cfg.blocking == ("critical",)
    assert hash(cfg) == hash(GateConfig(blocking=("critical",)))


def test_build_scorecard_applies_gate_config(criterion: MakeCriterion, run: MakeRun) -> None:
    judged = run([criterion("a", "major")], {("t1", "a"): "uncertain"})
    assert build_scorecard(judged).gate.passed
    assert not build_scorecard(judged, gate=GateConfig(fail_on_uncertain=True)).gate.passed
