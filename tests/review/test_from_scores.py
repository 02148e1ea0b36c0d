"""Gold labels from scores the traces carry: the rule, provenance, what gets no label, and the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helix import UsageError
from helix.cli import app
from helix.judging import CriteriaMatrix, Criterion, prep_run
from helix.review import labels_from_scores, load_labels, parse_pass_rule
from helix.traces import Message, Score, Trace

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
AT = datetime(2026, 1, 1, tzinfo=UTC)


def _trace(tid: str, *scores: Score) -> Trace:
    return Trace(id=tid, messages=[Message(role="user", content="hi")], scores=list(scores))


def test_rules_compare_numbers_booleans_and_text() -> None:
    assert parse_pass_rule(">=1").passes(1.0) is True and parse_pass_rule(">=1").passes(0.0) is False
    assert parse_pass_rule(">0.5").passes("0.7") is True
    assert (
        parse_pass_rule("==true").passes(True) is True and parse_pass_rule("==true").passes("false") is False
    )
    assert parse_pass_rule("=C").passes("C") is True and parse_pass_rule("=C").passes("I") is False
    assert parse_pass_rule(">=1").passes("correct") is None
    for bad in ("1", ">=", "~1", ">abc"):
        with pytest.raises(UsageError, match="--pass"):
            parse_pass_rule(bad)


def test_each_trace_with_the_score_gets_one_label_with_provenance() -> None:
    traces = [
        _trace("a", Score(name="reward", value=1.0, source="tau2")),
        _trace("b", Score(name="reward", value=0.0, source="tau2")),
        _trace("c"),
        _trace(
            "d", Score(name="reward", value=1.0, source="tau2"), Score(name="reward", value=0.0, source="x")
        ),
        _trace("e", Score(name="reward", value="n/a", source="tau2")),
    ]
    made = labels_from_scores(traces, score="reward", rule=">=1", criterion_id="task_done", clock=lambda: AT)
    assert [(x.trace_id, x.label, x.annotator, x.design) for x in made.labels] == [
        ("a", "pass", "tau2:reward", "random"),
        ("b", "fail", "tau2:reward", "random"),
    ]
    assert "reward=1.0" in made.labels[0].note and ">=1" in made.labels[0].note
    assert (made.missing, made.ambiguous, made.incomparable) == (("c",), ("d",), ("e",))
    picked = labels_from_scores(traces, score="reward", rule=">=1", criterion_id="t", source="x")
    assert [(x.trace_id, x.label, x.annotator) for x in picked.labels] == [("d", "fail", "x:reward")]


def test_cli_from_scores_writes_labels_validate_reads(tmp_path: Path) -> None:
    traces = [_trace(f"t{i}", Score(name="reward", value=float(i % 3 == 0), source="tau2")) for i in range(9)]
    matrix = CriteriaMatrix(
        subject="s",
        criteria=(
            Criterion(
                id="done",
                title="Done",
                kind="llm",
                question="Was the task done?",
                pass_definition="It was.",
                fail_definition="It was not.",
            ),
        ),
    )
    prep_run(traces, matrix, tmp_path / "run")
    store = tmp_path / "labels.sqlite"
    result = CliRunner().invoke(
        app,
        [
            "labels",
            "from-scores",
            str(tmp_path / "run"),
            "--score",
            "reward",
            "--pass",
            ">=1",
            "--labels",
            str(store),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "9 label(s): 3 pass, 6 fail" in result.output and "tau2:reward" in result.output
    written = load_labels(tmp_path / "run" / "labels-reward.jsonl")
    assert len(written) == 9 and {x.annotator for x in written} == {"tau2:reward"}
    assert len(load_labels(store)) == 9
    none = CliRunner().invoke(
        app, ["labels", "from-scores", str(tmp_path / "run"), "--score", "nope", "--pass", ">=1"]
    )
    assert none.exit_code == 2 and "without the score" in none.output


def test_schema_labels_is_the_label_line() -> None:
    result = CliRunner().invoke(app, ["schema", "labels"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert {"trace_id", "criterion_id", "label", "annotator", "design", "stratum"} <= set(doc["properties"])


@pytest.mark.realdata
def test_tau2_rewards_become_labels(tmp_path: Path) -> None:
    source = (
        DATA
        / "tau2-bench-submission-claude-sonnet-4-5"
        / "claude-sonnet-4-5_airline_default_gpt4.1_1trials.json"
    )
    if not source.exists():
        pytest.skip(f"real data not present: {source}")
    from helix.traces import read_traces

    traces = read_traces(source).traces
    made = labels_from_scores(traces, score="reward", rule=">=1", criterion_id="task_done")
    passed = sum(x.label == "pass" for x in made.labels)
    assert (len(made.labels), passed) == (50, 36)  # SOURCE.md: 36 success / 14 failure
    assert {x.annotator for x in made.labels} == {"tau2-bench:reward"}  # the reader's score source
