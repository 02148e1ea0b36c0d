"""Scorecard contents, stable order, byte-determinism and masking."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helix import UsageError
from helix.judging import Criterion, JudgedRun, JudgeInfo, TraceCriterionResult
from helix.scoring import (
    MASK_PATH,
    MASK_RUN_ID,
    MASK_TIMESTAMP,
    Scorecard,
    build_scorecard,
    mask_value,
    masked_scorecard_json,
    scorecard_json,
)

MakeCriterion = Callable[..., Criterion]
MakeRow = Callable[..., TraceCriterionResult]
MakeRun = Callable[..., JudgedRun]


@pytest.fixture
def judged(criterion: MakeCriterion, run: MakeRun) -> JudgedRun:
    grid: dict[tuple[str, str], str | None] = {}
    outcomes = {
        "refund-policy": ["pass", "fail", "pass", "uncertain"],
        "no-pii": ["pass", "pass", "pass", "pass"],
        "tool-ok": ["pass", None, "pass", "pass"],
        "tone": ["uncertain", "uncertain", None, "uncertain"],
    }
    for cid, results in outcomes.items():
        for tid, r in zip(["t-b", "t-a", "t-d", "t-c"], results, strict=True):
            grid[(tid, cid)] = r
    criteria = [
        criterion("refund-policy", "critical"),
        criterion("no-pii", "critical"),
        criterion("tool-ok", "major", "code"),
        criterion("tone", "minor"),
    ]
    return run(criteria, grid, trace_ids=["t-b", "t-a", "t-d", "t-c"])


def test_scorecard_contents(judged: JudgedRun) -> None:
    sc = build_scorecard(judged)
    assert sc.version == 1 and sc.subject == "support-shop"
    assert [c.criterion_id for c in sc.criteria] == ["refund-policy", "no-pii", "tool-ok", "tone"]
    assert [c.outcome for c in sc.criteria] == ["fail", "pass", "pass", "uncertain"]
    assert [t.trace_id for t in sc.traces] == ["t-a", "t-b", "t-c", "t-d"]
    t_a = sc.traces[0]
    assert t_a.outcome == "fail" and t_a.failed == ("refund-policy",)
    assert t_a.unscored == ("tool-ok",) and t_a.uncertain == ("tone",) and t_a.passed == ("no-pii",)
    assert sc.run.trace_count == 4 and sc.run.row_count == 16 and sc.run.unit_count == 16
    assert sc.run.unit_axis == "criterion" and sc.run.run_dir == "runs/demo"
    assert sc.run.prompt_versions == ("judge-v3",)
    assert len(sc.run.judges) == 1
    assert not sc.gate.passed
    assert sc.gate.blocking_failures == ("refund-policy",) and sc.gate.unscored_blocking == ("tool-ok",)
    t = sc.totals
    assert (t.criteria, t.criteria_pass, t.criteria_fail, t.criteria_uncertain) == (4, 2, 1, 1)
    assert (t.verdicts_pass, t.verdicts_fail, t.verdicts_uncertain, t.unscored) == (9, 1, 4, 2)
    assert (t.traces, t.traces_failing) == (4, 1)


def test_judges_are_distinct_and_sorted(criterion: MakeCriterion, row: MakeRow, judged: JudgedRun) -> None:
    other = JudgeInfo(runtime="code")
    pinned = JudgeInfo(
        runtime="model", model="claude-3-5-sonnet-20241022", temperature=0.0, prompt_version="judge-v2"
    )
    results = list(judged.results)
    results[0] = dataclasses.replace(results[0], judge=other)
    results[1] = dataclasses.replace(results[1], judge=pinned)
    results[2] = dataclasses.replace(results[2], judge=None)
    sc = build_scorecard(dataclasses.replace(judged, results=tuple(results)))
    assert [j.runtime for j in sc.run.judges] == ["code", "model", "model"]
    assert [j.model for j in sc.run.judges] == [None, "claude-3-5-sonnet-20241022", "gpt-4o-2024-08-06"]
    assert sc.run.prompt_versions == ("judge-v2", "judge-v3")


def test_same_input_gives_same_bytes_whatever_the_row_order(judged: JudgedRun) -> None:
    first = scorecard_json(build_scorecard(judged))
    assert first == scorecard_json(build_scorecard(judged))
    rows = list(judged.results)
    random.Random(5).shuffle(rows)
    traces = list(judged.traces)
    random.Random(6).shuffle(traces)
    shuffled = dataclasses.replace(judged, results=tuple(rows), traces=tuple(traces))
    assert scorecard_json(build_scorecard(shuffled)) == first
    assert first.endswith(b"\n") and b'\n  "subject"' in first


def test_scorecard_json_round_trips(judged: JudgedRun) -> None:
    sc = build_scorecard(judged)
    assert Scorecard.model_validate_json(scorecard_json(sc)) == sc


def test_masked_output_equal_across_run_dirs(judged: JudgedRun) -> None:
    dirs = [
        "/home/alice/evals/run-20261129T202803Z-1a2b",
        "/tmp/helix/3f2b8c1e-1234-4abc-9def-0123456789ab",
        "C:\\Users\\bob\\runs\\run-7",
    ]
    plain = {scorecard_json(build_scorecard(dataclasses.replace(judged, run_dir=d))) for d in dirs}
    assert len(plain) == 3  # the unmasked scorecards really differ
    masked = {masked_scorecard_json(build_scorecard(dataclasses.replace(judged, run_dir=d))) for d in dirs}
    assert len(masked) == 1
    assert json.loads(masked.pop())["run"]["run_dir"] == MASK_PATH
    rel = [f"runs/run-{n}" for n in ("20261129-a", "20261130-b")] + [
        "runs/0e8400e2-9b1d-41d4-a716-446655440000"
    ]
    masked_rel = {masked_scorecard_json(build_scorecard(dataclasses.replace(judged, run_dir=d))) for d in rel}
    assert len(masked_rel) == 1
    assert json.loads(masked_rel.pop())["run"]["run_dir"] == f"runs/{MASK_RUN_ID}"


def test_masked_output_equal_across_timestamped_prompt_versions(judged: JudgedRun) -> None:
    def stamped(ts: str) -> JudgedRun:
        judge = JudgeInfo(runtime="model", model="m-2024-08-06", temperature=0.0, prompt_version=f"v3@{ts}")
        return dataclasses.replace(
            judged, results=tuple(dataclasses.replace(r, judge=judge) for r in judged.results)
        )

    a = build_scorecard(stamped("2026-11-29T20:28:03Z"))
    b = build_scorecard(stamped("2026-11-30T08:00:00.125+02:00"))
    assert scorecard_json(a) != scorecard_json(b)
    assert masked_scorecard_json(a) == masked_scorecard_json(b)
    assert json.loads(masked_scorecard_json(a))["run"]["prompt_versions"] == [f"v3@{MASK_TIMESTAMP}"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("/home/alice/x.jsonl", MASK_PATH),
        ("wrote /var/tmp/out dir", f"wrote {MASK_PATH} dir"),
        ("~/evals/run", MASK_PATH),
        ("file:///srv/data/a.json", MASK_PATH),
        ("D:\\data\\traces.jsonl", MASK_PATH),
        ("2026-11-29T20:28:03Z", MASK_TIMESTAMP),
        ("at 2026-11-29 20:28:03.5+00:00.", f"at {MASK_TIMESTAMP}."),
        ("2026-11-29T20:28", MASK_TIMESTAMP),
        ("3F2B8C1E-1234-4ABC-9DEF-0123456789AB", MASK_RUN_ID),
        ("id=3f2b8c1e12344abc9def0123456789ab", f"id={MASK_RUN_ID}"),
        ("run-20261129-abc", MASK_RUN_ID),
        ("runs/run_42", f"runs/{MASK_RUN_ID}"),
    ],
)
def test_mask_each_kind(raw: str, expected: str) -> None:
    assert mask_value(raw) == expected


@pytest.mark.parametrize(
    "keep",
    [
        "runs/demo",
        "https://example.com/a/b",
        "pass/fail",
        "a / b",
        "2026-11-29",
        "long run-time",
        "t-a",
        "v1.2.3",
    ],
)
def test_mask_keeps_ordinary_text(keep: str) -> None:
    assert mask_value(keep) == keep


def test_mask_value_recurses_and_keeps_keys_and_non_strings() -> None:
    obj = {
        "/abs/key": ["/tmp/x", {"when": "2026-01-02T03:04:05Z", "n": 3, "ok": True, "none": None}],
        "t": ("run-1",),
    }
    assert mask_value(obj) == {
        "/abs/key": [MASK_PATH, {"when": MASK_TIMESTAMP, "n": 3, "ok": True, "none": None}],
        "t": [MASK_RUN_ID],
    }


# --- validation ------------------------------------------------------------------------------


def test_rejects_rows_for_unknown_criterion(criterion: MakeCriterion, run: MakeRun) -> None:
    with pytest.raises(UsageError, match="'ghost'"):
        build_scorecard(run([criterion("a")], {("t1", "a"): "pass", ("t1", "ghost"): "pass"}))


def test_rejects_rows_for_unknown_trace(criterion: MakeCriterion, run: MakeRun) -> None:
    with pytest.raises(UsageError, match="'t9'"):
        build_scorecard(run([criterion("a")], {("t1", "a"): "pass", ("t9", "a"): "pass"}, trace_ids=["t1"]))


def test_rejects_duplicate_rows(criterion: MakeCriterion, row: MakeRow, run: MakeRun) -> None:
    judged = run([criterion("a")], {("t1", "a"): "pass"})
    doubled = dataclasses.replace(judged, results=(*judged.results, row("t1", "a", "fail")))
    with pytest.raises(UsageError, match="more than one row"):
        build_scorecard(doubled)


def test_rejects_row_without_verdict_or_reason(criterion: MakeCriterion, run: MakeRun) -> None:
    judged = run([criterion("a")], {("t1", "a"): None})
    broken = dataclasses.replace(
        judged, results=(dataclasses.replace(judged.results[0], unscored_reason=None),)
    )
    with pytest.raises(UsageError, match="exactly one"):
        build_scorecard(broken)


def test_traces_without_rows_are_listed_as_uncertain(criterion: MakeCriterion, run: MakeRun) -> None:
    sc = build_scorecard(run([criterion("a", "minor")], {("t1", "a"): "pass"}, trace_ids=["t1", "t2"]))
    assert [(t.trace_id, t.outcome, t.passed) for t in sc.traces] == [
        ("t1", "pass", ("a",)),
        ("t2", "uncertain", ()),
    ]


def test_mask_value_accepts_a_model(judged: JudgedRun) -> None:
    sc = build_scorecard(dataclasses.replace(judged, run_dir="/srv/runs/run-20261129-x"))
    masked = mask_value(sc)
    assert masked["run"]["run_dir"] == MASK_PATH
    assert json.loads(masked_scorecard_json(sc)) == masked


_fragments = st.sampled_from(
    ["/home/a/b", "run-42x", "2026-11-29T20:28:03Z", "3f2b8c1e-1234-4abc-9def-0123456789ab", "C:\\x", "~/y",
     "file:///z", " ", "/", "-", "<", ">", "run", "text", "a/b", ":", "12"]
)  # fmt: skip


@given(st.lists(st.one_of(_fragments, st.text(max_size=6)), max_size=10).map("".join))
def test_masking_is_idempotent(text: str) -> None:
    once = mask_value(text)
    assert mask_value(once) == once
