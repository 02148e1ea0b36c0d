"""The real trajectory folders read end to end, counts and labels as published in each SOURCE.md.

Skipped when ``<repo>/../shared/data`` is absent. Every record is read, nothing is skipped, rewards and
labels arrive as scores, and every tool result is linked to the call that asked for it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from helix.traces import IntakeSummary, Trace, iter_trace_files, read_traces

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
TAU2_GYM = DATA / "tau2-bench-gym-results"
TAU2_CLAUDE = DATA / "tau2-bench-submission-claude-sonnet-4-5"
SWEBENCH = DATA / "swebench-verified-minisweagent-gemini3pro"
WHO_AND_WHEN = DATA / "who-and-when"
TAU_HISTORICAL = DATA / "tau-bench-historical-trajectories"

pytestmark = pytest.mark.realdata


def _folder(path: Path) -> Path:
    if not path.is_dir():
        pytest.skip(f"real data not present: {path}")
    return path


def _calls_by_id(trace: Trace) -> dict[str, str]:
    """Tool call id -> tool name, over every message that made calls (agent or simulated user)."""
    return {c.id: c.name for m in trace.messages or [] for c in m.tool_calls if c.id is not None}


def _assert_tools_linked(traces: list[Trace]) -> int:
    linked = 0
    for trace in traces:
        calls = _calls_by_id(trace)
        for event in trace.tool_events():
            assert event.tool_call_id is not None, (trace.id, event.id)
            assert calls[event.tool_call_id] == event.name, (trace.id, event.id)
            linked += 1
    return linked


def _rewards(traces: list[Trace]) -> Counter[object]:
    return Counter(s.value for t in traces for s in t.scores if s.name == "reward")


@pytest.mark.parametrize(
    ("name", "n", "rewards", "domain"),
    [
        ("gpt-4.1_airline_default_gpt-4.1_1trials.json", 20, {1.0: 10, 0.0: 10}, "airline"),
        ("gpt-4.1_retail_defautl_gpt-4.1_1trials.json", 40, {1.0: 34, 0.0: 6}, "retail"),
        ("gpt-4.1_telecom_default_gpt-4.1_1trials.json", 40, {1.0: 18, 0.0: 22}, "telecom"),
        ("qwen2.5_7b_airline_default_gpt-4.1-2025-04-14_1trials.json", 50, {1.0: 9, 0.0: 41}, "airline"),
    ],
)
def test_tau2_gym_results(name: str, n: int, rewards: dict[float, int], domain: str) -> None:
    intake = read_traces(_folder(TAU2_GYM) / name)
    assert intake.report.format == "tau2-bench"
    assert intake.report.records_skipped == 0
    assert len(intake.traces) == n and len({t.id for t in intake.traces}) == n
    assert _rewards(intake.traces) == rewards
    assert {t.metadata["domain"] for t in intake.traces} == {domain}
    assert all("_task" in t.metadata and "_reward_info" in t.metadata for t in intake.traces)
    linked = _assert_tools_linked(intake.traces)
    assert linked == sum(len(t.tool_events()) for t in intake.traces) > 0


def test_tau2_telecom_user_side_tool_calls() -> None:
    intake = read_traces(_folder(TAU2_GYM) / "gpt-4.1_telecom_default_gpt-4.1_1trials.json")
    sides = Counter(
        "user" if e.attributes.get("user_side") else "agent" for t in intake.traces for e in t.tool_events()
    )
    assert sides == {"user": 482, "agent": 207}  # SOURCE.md
    basis = Counter(tuple(t.metadata["_reward_info"]["reward_basis"]) for t in intake.traces)
    assert basis == {("ENV_ASSERTION",): 28, ("ENV_ASSERTION", "ACTION"): 12}


def test_tau2_qwen_run_marks_broken_terminations() -> None:
    intake = read_traces(_folder(TAU2_GYM) / "qwen2.5_7b_airline_default_gpt-4.1-2025-04-14_1trials.json")
    reasons = Counter(t.metadata["termination_reason"] for t in intake.traces)
    assert reasons == {"user_stop": 40, "agent_error": 9, "too_many_errors": 1}
    assert Counter(t.status for t in intake.traces) == {"ok": 40, "error": 10}


def test_tau2_claude_submission() -> None:
    intake = read_traces(_folder(TAU2_CLAUDE) / "claude-sonnet-4-5_airline_default_gpt4.1_1trials.json")
    assert intake.report.records_skipped == 0 and len(intake.traces) == 50
    assert _rewards(intake.traces) == {1.0: 36, 0.0: 14}
    kinds = Counter(e.kind for t in intake.traces for e in t.events)
    assert (kinds["llm"], kinds["tool"], kinds["user"]) == (517, 371, 300)  # messages per role, SOURCE.md
    assert _assert_tools_linked(intake.traces) == 371
    assert {t.metadata["agent_model"] for t in intake.traces} == {"claude-sonnet-4-5"}


def test_swebench_minisweagent_trajectories_with_resolved_labels() -> None:
    root = _folder(SWEBENCH)
    summary = IntakeSummary()
    traces = list(iter_trace_files([root / "trajs"], summary=summary))
    assert summary.by_format["mini-swe-agent"].files == 80 and summary.records_skipped == 0
    assert not summary.unread and len(traces) == 80
    published = {
        row["instance_id"]: row["resolved"]
        for row in orjson.loads((root / "results_summary.json").read_bytes())["instances"]
    }
    resolved = {t.id: s.value for t in traces for s in t.scores if s.name == "resolved"}
    assert len(resolved) == 80
    assert Counter(resolved.values()) == {True: 40, False: 40}
    assert all(published[instance] == value for instance, value in resolved.items())
    assert {t.metadata["exit_status"] for t in traces} == {"Submitted"}
    assert all(isinstance(t.output, str) and t.output.startswith("diff --git") for t in traces)
    assert _assert_tools_linked(traces) > 3000
    lengths = [len(t.messages or []) for t in traces]
    assert (min(lengths), max(lengths)) == (38, 292)  # messages per trajectory, SOURCE.md


def test_who_and_when_logs_with_failure_attribution() -> None:
    root = _folder(WHO_AND_WHEN)
    summary = IntakeSummary()
    traces = list(iter_trace_files([root], summary=summary))
    assert len(traces) == 184 and summary.records_skipped == 0 and not summary.unread
    assert len({t.id for t in traces}) == 184
    subsets = Counter(t.metadata["subset"] for t in traces)
    assert subsets == {"hand-crafted": 58, "algorithm-generated": 126}
    scores = [{s.name: s.value for s in t.scores} for t in traces]
    assert all(s["correct"] is False for s in scores)  # every run failed
    hand = Counter(s["mistake_agent"] for t, s in zip(traces, scores, strict=True) if "hand" in t.id)
    assert hand == {"WebSurfer": 33, "Orchestrator": 18, "Assistant": 4, "FileSurfer": 3}
    for trace, labels in zip(traces, scores, strict=True):
        ids = {e.id for e in trace.events}
        assert f"step-{labels['mistake_step']}" in ids  # the labelled step is an event
        assert "_ground_truth" in trace.metadata


def test_all_trajectory_folders_together_have_no_unexplained_skips() -> None:
    folders = [_folder(p) for p in (TAU2_GYM, TAU2_CLAUDE, SWEBENCH, WHO_AND_WHEN, TAU_HISTORICAL)]
    summary = IntakeSummary()
    traces = list(iter_trace_files(folders, summary=summary))
    counts = {fmt: c.traces_read for fmt, c in summary.by_format.items()}
    assert counts == {"tau2-bench": 200, "tau-bench": 200, "mini-swe-agent": 80, "who-and-when": 184}
    assert len(traces) == 664 and summary.records_skipped == 0
    assert _rewards(traces) == {1.0: 71 + 36 + 84, 0.0: 79 + 14 + 116}
    # The only files not read are the label and metadata files beside the trajectories.
    unread = sorted(Path(u.path).name for u in summary.unread)
    known = {"results_summary.json", "sb-cli-report.json", "sample_instance_ids.json", "submission.json"}
    known |= {"tools-data.json"}
    assert all(name in known or name.endswith(".report.json") for name in unread), unread
    assert sum(name.endswith(".report.json") for name in unread) == 80
    assert all(
        u.kind == "unknown-shape" and u.reason.startswith(("line 1 is", "the JSON document is"))
        for u in summary.unread
    )
