"""Scoring code for the real-data runs, exercised on SYNTHETIC determinations (never shipped as results)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.discovery import (
    determinations_as_judging_run,
    open_discovery,
    prep_discovery,
    present_for_discovery,
    score_attribution,
    score_outcomes,
)
from helix.judging import collect_results
from helix.stats import wilson_interval
from helix.traces import Message, Score, Trace, iter_trace_files

from .conftest import PASS_BODY, fail_body, write_determination

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


def labelled(i: int) -> Trace:
    agent = "WebSurfer" if i % 2 else "Orchestrator"
    return Trace(
        id=f"log-{i}",
        input=f"question {i}",
        messages=[
            Message(role="user", content=f"question {i}"),
            Message(role="assistant", name="Orchestrator", content="plan"),
            Message(role="assistant", name="WebSurfer", content=f"searched {i}"),
            Message(role="assistant", name="Orchestrator", content="answer"),
        ],
        metadata={"subset": "hand-crafted" if i < 6 else "algorithm-generated"},
        scores=[
            Score(name="mistake_agent", value=agent),
            Score(name="mistake_step", value=str(2 if agent == "WebSurfer" else 1)),
            Score(name="reward", value=0.0 if i < 8 else 1.0),
        ],
    )


def test_agents_are_shown_per_entry_and_labels_never_are() -> None:
    shown = present_for_discovery(labelled(1))
    assert [e.get("agent") for e in shown["transcript"]] == [
        None,
        "Orchestrator",
        "WebSurfer",
        "Orchestrator",
    ]
    assert "mistake" not in str(shown) and "reward" not in str(shown)


def test_attribution_and_outcome_scores_on_synthetic_determinations(tmp_path: Path) -> None:
    traces = [labelled(i) for i in range(10)]
    prep_discovery(traces, tmp_path / "run")
    run = open_discovery(tmp_path / "run")
    by_trace = {u.trace_ids[0]: u for u in run.units}
    # SYNTHETIC answers: logs 0-3 exactly right, 4-5 right agent wrong step ("(thought)" suffix
    # ignored), 6 a pass (no attribution), 7 unscored, 8-9 (reward 1) pass and fail.
    for i in range(4):
        t = traces[i]
        agent, step = str(t.scores[0].value), int(str(t.scores[1].value))
        write_determination(run, by_trace[t.id].key, fail_body(step, agent, "synthetic"))
    for i in (4, 5):
        t = traces[i]
        write_determination(
            run, by_trace[t.id].key, fail_body(3, f"{t.scores[0].value} (thought)", "synthetic")
        )
    write_determination(run, by_trace["log-6"].key, PASS_BODY)
    write_determination(run, by_trace["log-7"].key, None, status="unscored")
    write_determination(run, by_trace["log-8"].key, PASS_BODY)
    write_determination(run, by_trace["log-9"].key, fail_body(0, "Orchestrator", "synthetic"))

    score = score_attribution(run.run_dir)
    assert score.n == 10 and score.agent_correct == 6 and score.step_correct == 4
    assert (score.not_failed, score.unscored) == (2, 1)
    acc, ci = score.accuracy("step")
    assert acc == 0.4 and ci == wilson_interval(4, 10)
    assert set(score.by_subset()) == {"hand-crafted", "algorithm-generated"}
    assert "paper" in score.describe() and "53.5%" in score.describe()

    outcome = score_outcomes(run.run_dir)
    # gold pass: log-8 (judged pass: tp), log-9 (fail: fn); gold fail: 0-5 fail (tn 6), 6 pass (fp), 7 unscored
    assert (outcome.tp, outcome.fn, outcome.fp, outcome.tn, outcome.unscored) == (1, 1, 1, 6, 1)
    assert outcome.rate("tnr") == (6 / 7, wilson_interval(6, 7))

    judging = determinations_as_judging_run(run.run_dir, tmp_path / "judging")
    rows = collect_results(judging).results
    assert len(rows) == 10
    decided = {r.trace_id: r.verdict.result for r in rows if r.verdict is not None}
    assert decided["log-8"] == "pass" and decided["log-9"] == "fail" and "log-7" not in decided


@pytest.mark.realdata
def test_who_and_when_logs_prep_with_agents_and_without_labels(tmp_path: Path) -> None:
    folder = DATA / "who-and-when" / "Who&When" / "Hand-Crafted"
    if not folder.is_dir():
        pytest.skip("shared data absent")
    traces = list(iter_trace_files([folder]))[:5]
    prep_discovery(traces, tmp_path / "ww")
    run = open_discovery(tmp_path / "ww")
    text = "".join(run.determine.packet_path(u.key).read_text() for u in run.units)
    assert '"agent": "WebSurfer"' in text or '"agent":"WebSurfer"' in text
    for t in traces:
        reason = next(s.comment for s in t.scores if s.name == "mistake_agent")
        assert reason is None or reason not in text  # the human's reason never reaches the reader
