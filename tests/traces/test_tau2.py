"""tau2-bench results: json and dir layouts, lone simulations, user-side tools, scores, hidden ground truth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from helix.judging import present_trace
from helix.traces import detect_format, iter_trace_files, read_traces

INFO = {
    "git_commit": "abc123",
    "num_trials": 1,
    "max_steps": 200,
    "max_errors": 10,
    "seed": 300,
    "agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1", "llm_args": {"temperature": 0}},
    "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1-mini", "llm_args": {}},
    "environment_info": {"domain_name": "telecom", "policy": "# Telecom policy\nBe nice.", "tool_defs": None},
}
TASK = {
    "id": "7",
    "description": {"purpose": "airplane mode on"},
    "user_scenario": {"instructions": {"reason_for_call": "SECRET-GOAL: your data is slow"}},
    "evaluation_criteria": {
        "actions": [
            {"action_id": "7_0", "requestor": "user", "name": "toggle_airplane_mode", "arguments": {}}
        ],
        "reward_basis": ["ENV_ASSERTION", "ACTION"],
    },
}


def _simulation(
    sim_id: str = "sim-1", *, termination: str = "user_stop", reward: float = 1.0
) -> dict[str, Any]:
    return {
        "id": sim_id,
        "task_id": "7",
        "trial": 0,
        "seed": 42,
        "timestamp": "2025-08-01T16:24:03.637547",
        "start_time": "2025-08-01T16:23:24.895557",
        "end_time": "2025-08-01T16:24:03.637501",
        "duration": 38.7,
        "termination_reason": termination,
        "agent_cost": 0.05,
        "user_cost": 0.04,
        "reward_info": {
            "reward": reward,
            "db_check": {"db_match": True, "db_reward": 1.0},
            "action_checks": [{"action": {"name": "toggle_airplane_mode"}, "action_match": True}],
            "nl_assertions": [],
            "reward_basis": ["ENV_ASSERTION", "ACTION"],
            "reward_breakdown": {"ENV_ASSERTION": reward, "ACTION": 1.0},
        },
        "messages": [
            {"role": "assistant", "content": "Hi! How can I help you today?", "turn_idx": 0,
             "timestamp": "2025-08-01T16:23:24.913644", "cost": 0.0, "usage": None, "raw_data": {"big": "x"}},
            {"role": "user", "content": "My mobile data is slow.", "turn_idx": 1,
             "timestamp": "2025-08-01T16:23:26.436923", "cost": 0.0054,
             "usage": {"completion_tokens": 63, "prompt_tokens": 2442}},
            {"role": "assistant", "content": None, "turn_idx": 2, "timestamp": "2025-08-01T16:23:29.369276",
             "cost": 0.0035, "usage": {"completion_tokens": 22, "prompt_tokens": 6450},
             "tool_calls": [{"id": "call_a", "name": "get_customer_by_phone",
                             "arguments": {"phone_number": "555-123-2002"}, "requestor": "assistant"}]},
            {"role": "tool", "id": "call_a", "requestor": "assistant", "error": False, "turn_idx": 3,
             "timestamp": "2025-08-01T16:23:29.500000", "content": "{\"customer_id\": \"C1001\"}"},
            {"role": "assistant", "content": "Please check your status bar.", "turn_idx": 4,
             "timestamp": "2025-08-01T16:23:30.6"},
            {"role": "user", "content": None, "turn_idx": 5, "timestamp": "2025-08-01T16:23:35.692768",
             "tool_calls": [{"id": "call_u", "name": "check_status_bar", "arguments": {}, "requestor": "user"}]},
            {"role": "tool", "id": "call_u", "requestor": "user", "error": False, "turn_idx": 6,
             "timestamp": "2025-08-01T16:23:35.692965", "content": "Status Bar: Airplane Mode"},
            {"role": "assistant", "content": None, "turn_idx": 7, "timestamp": "2025-08-01T16:23:36",
             "tool_calls": [{"id": "call_b", "name": "refuel_data", "arguments": {"gb": 2}, "requestor": "assistant"},
                            {"id": "call_c", "name": "get_line", "arguments": {"id": "L1"}, "requestor": "assistant"}]},
            {"role": "tool", "tool_messages": [
                {"role": "tool", "id": "call_b", "requestor": "assistant", "error": True,
                 "content": "Error: line is suspended", "timestamp": "2025-08-01T16:23:36.5"},
                {"role": "tool", "id": "call_c", "requestor": "assistant", "error": False,
                 "content": "{\"status\": \"active\"}", "timestamp": "2025-08-01T16:23:36.6"},
            ]},
            {"role": "assistant", "content": "Turn airplane mode off, please.", "turn_idx": 9},
            {"role": "user", "content": "###STOP###", "turn_idx": 10},
        ],
    }  # fmt: skip


def _results(*sims: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2025-08-01T16:23:24", "info": INFO, "tasks": [TASK], "simulations": list(sims)}


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=4))  # tau2 writes indented JSON
    return path


def test_json_layout_reads_every_simulation_with_scores(tmp_path: Path) -> None:
    path = _write(tmp_path / "gpt-4.1_telecom.json", _results(_simulation("a"), _simulation("b", reward=0.0)))
    assert detect_format(path).format == "tau2-bench"
    intake = read_traces(path)
    assert intake.report.records_skipped == 0
    assert [t.id for t in intake.traces] == ["a", "b"]
    first = intake.traces[0]
    scores = {s.name: s.value for s in first.scores}
    assert scores == {"reward": 1.0, "reward_env_assertion": 1.0, "reward_action": 1.0}
    assert {s.name: s.value for s in intake.traces[1].scores}["reward"] == 0.0
    assert first.input == "My mobile data is slow."
    assert first.output == "Turn airplane mode off, please."
    assert first.status == "ok"
    assert first.metadata["agent_model"] == "gpt-4.1" and first.metadata["domain"] == "telecom"
    assert first.metadata["agent_cost"] == 0.05 and first.metadata["user_cost"] == 0.04
    assert first.start is not None and first.end is not None and first.start < first.end


def test_tool_calls_are_linked_and_multi_tool_messages_flattened(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.json", _results(_simulation()))
    trace = read_traces(path).traces[0]
    tools = trace.tool_events()
    assert [(e.name, e.tool_call_id, e.status) for e in tools] == [
        ("get_customer_by_phone", "call_a", "ok"),
        ("check_status_bar", "call_u", "ok"),
        ("refuel_data", "call_b", "error"),
        ("get_line", "call_c", "ok"),
    ]
    assert tools[0].input == {"phone_number": "555-123-2002"}
    assert tools[2].input == {"gb": 2} and tools[2].error == "Error: line is suspended"
    # The user's own tool call (telecom) is marked as user-side; the agent's are not.
    assert tools[1].attributes["user_side"] is True and tools[1].attributes["requestor"] == "user"
    assert "user_side" not in tools[0].attributes
    # The tool event spans from the call to its result.
    assert tools[0].start is not None and tools[0].end is not None and tools[0].start < tools[0].end
    # The transcript shows the user's call on the user message.
    assert trace.messages is not None
    user_calls = [m for m in trace.messages if m.role == "user" and m.tool_calls]
    assert [c.name for c in user_calls[0].tool_calls] == ["check_status_bar"]


def test_agent_usage_and_cost_stay_apart_from_the_user_simulator(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.json", _results(_simulation()))
    trace = read_traces(path).traces[0]
    llm = [e for e in trace.events if e.kind == "llm" and e.usage is not None]
    assert llm[0].usage is not None and llm[0].usage.input_tokens == 6450 and llm[0].cost == 0.0035
    assert all(e.model == "gpt-4.1" for e in trace.events if e.kind == "llm")
    user = [e for e in trace.events if e.kind == "user"][0]
    assert user.cost is None and user.usage is None
    assert user.attributes["user_sim_cost"] == 0.0054
    assert "raw_data" not in orjson.dumps([e.attributes for e in trace.events]).decode()


def test_ground_truth_is_underscored_and_never_shown_to_judges(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.json", _results(_simulation()))
    trace = read_traces(path).traces[0]
    assert trace.metadata["_task"]["id"] == "7"
    assert trace.metadata["_reward_info"]["action_checks"][0]["action_match"] is True
    shown = present_trace(trace).model_dump_json()
    assert "SECRET-GOAL" not in shown
    assert "action_checks" not in shown and "toggle_airplane_mode" not in shown
    assert "Telecom policy" in shown  # the agent's policy is fair game for a judge


def test_error_terminations_mark_the_trace(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.json", _results(_simulation("x", termination="agent_error")))
    assert read_traces(path).traces[0].status == "error"


def test_dir_layout_reads_the_simulations_folder_and_counts_bad_files(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "simulations").mkdir(parents=True)
    _write(
        run / "results.json",
        {"timestamp": "t", "info": INFO, "tasks": [TASK], "simulation_index": ["a", "b"]},
    )
    _write(run / "simulations" / "a.json", _simulation("a"))
    _write(run / "simulations" / "b.json", _simulation("b"))
    (run / "simulations" / "c.json").write_bytes(b'{"id": "c", "task_id": ')  # truncated
    assert detect_format(run / "results.json").format == "tau2-bench"
    intake = read_traces(run / "results.json")
    assert [t.id for t in intake.traces] == ["a", "b"]
    assert intake.traces[0].metadata["_task"]["id"] == "7"  # tasks come from results.json
    [skip] = intake.report.skipped
    assert skip.reason == "invalid-json" and skip.record == 3 and "c.json" in skip.detail
    # A folder walk reads the run once, through results.json.
    traces = list(iter_trace_files([tmp_path]))
    assert sorted(t.id for t in traces) == ["a", "b"]


def test_results_without_simulations_say_what_is_missing(tmp_path: Path) -> None:
    path = _write(tmp_path / "results.json", {"timestamp": "t", "info": INFO, "simulation_index": []})
    intake = read_traces(path)
    assert intake.traces == []
    assert "simulations/" in intake.report.skipped[0].detail


def test_a_lone_simulation_and_jsonl_of_simulations_read(tmp_path: Path) -> None:
    lone = _write(tmp_path / "one.json", _simulation("solo"))
    assert detect_format(lone).format == "tau2-bench"
    assert [t.id for t in read_traces(lone).traces] == ["solo"]
    lines = tmp_path / "many.jsonl"
    lines.write_bytes(
        orjson.dumps(_simulation("p"))
        + b"\n"
        + b'{"task_id": 1, "messages": 5}\n'
        + orjson.dumps(_simulation("q"))
        + b"\n"
    )
    intake = read_traces(lines, format="tau2-bench")
    assert [t.id for t in intake.traces] == ["p", "q"]
    assert [(s.line, s.reason) for s in intake.report.skipped] == [(2, "unrecognised-record")]


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda s: s.update(messages=[{"role": "robot"}]), "invalid-record"),
        (lambda s: s.update(messages=[5]), "invalid-record"),
        (lambda s: s["messages"][2].update(tool_calls="nope"), "invalid-record"),
    ],
)
def test_malformed_simulations_are_skipped_with_the_field(tmp_path: Path, mutate: Any, reason: str) -> None:
    bad = _simulation("bad")
    mutate(bad)
    path = _write(tmp_path / "run.json", _results(_simulation("good"), bad))
    intake = read_traces(path)
    assert [t.id for t in intake.traces] == ["good"]
    [skip] = intake.report.skipped
    assert skip.reason == reason and skip.record == 2 and "messages" in skip.detail
