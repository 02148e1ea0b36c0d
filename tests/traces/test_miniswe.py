"""mini-SWE-agent trajectories: bash actions as linked tool events, feedback, and resolved labels found nearby."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helix.judging import present_trace
from helix.traces import detect_format, read_traces

INSTANCE = "astropy__astropy-12907"


def _reply(thought: str, *commands: str) -> dict[str, Any]:
    blocks = "".join(f"\n\n```bash\n{c}\n```" for c in commands)
    return {
        "role": "assistant",
        "content": f"THOUGHT: {thought}{blocks}",
        "extra": {
            "response": {
                "id": "gen-1",
                "model": "google/gemini-3-pro-preview",
                "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050},
                "choices": [{"message": {"reasoning": "long hidden reasoning"}}],
            }
        },
    }


def _trajectory(instance: str = INSTANCE) -> dict[str, Any]:
    return {
        "instance_id": instance,
        "trajectory_format": "mini-swe-agent-1",
        "info": {
            "exit_status": "Submitted",
            "submission": "diff --git a/x.py b/x.py\n+fixed\n",
            "model_stats": {"instance_cost": 0.23, "api_calls": 6},
            "mini_version": "1.15.0",
            "config": {"model": {"model_name": "openrouter/google/gemini-3-pro-preview"}},
        },
        "messages": [
            {"role": "system", "content": "You are a helpful assistant that can interact with a shell."},
            {
                "role": "user",
                "content": "<pr_description>\nConsider the following PR description:\nseparability_matrix is wrong"
                "\n</pr_description>\n\n<instructions>Do it.</instructions>",
            },
            _reply("Look around.", "ls -R astropy/modeling"),
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\nseparable.py\n</output>"},
            _reply("Search.", "grep -n nothing separable.py"),
            {"role": "user", "content": "<returncode>1</returncode>\n<output>\n</output>"},
            _reply("Two at once.", "ls", "pwd"),
            {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks."},
            _reply("Slow.", "sleep 1000"),
            {
                "role": "user",
                "content": "The last command <command>sleep 1000</command> timed out and has been killed.",
            },
            _reply("Submit.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"),
            {"role": "user", "content": "diff --git a/x.py b/x.py\n+fixed\n"},
        ],
    }


def _write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2))
    return path


def test_a_trajectory_is_one_trace_with_bash_tool_events(tmp_path: Path) -> None:
    path = _write(tmp_path / f"{INSTANCE}.traj.json", _trajectory())
    detection = detect_format(path)
    assert detection.format == "mini-swe-agent"  # not openai-messages, though it has a 'messages' list
    intake = read_traces(path)
    assert intake.report.records_skipped == 0
    [trace] = intake.traces
    assert trace.id == INSTANCE
    assert trace.input == "separability_matrix is wrong"
    assert trace.output == "diff --git a/x.py b/x.py\n+fixed\n"
    assert trace.status == "ok"
    assert trace.metadata["agent_cost"] == 0.23 and trace.metadata["exit_status"] == "Submitted"
    tools = trace.tool_events()
    assert [(e.input, e.status, e.error) for e in tools] == [
        ({"command": "ls -R astropy/modeling"}, "ok", None),
        ({"command": "grep -n nothing separable.py"}, "error", "returncode 1"),
        ({"command": "sleep 1000"}, "error", "timed out"),
        ({"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"}, "ok", None),
    ]
    assert all(e.name == "bash" for e in tools)
    # Each result is linked to the assistant call that asked for it.
    calls = {c.id: c for m in trace.messages or [] for c in m.tool_calls}
    for event in tools:
        assert event.tool_call_id is not None and calls[event.tool_call_id].arguments == event.input
    # The reply with two blocks made no call; the harness's complaint is feedback, not a tool result.
    feedback = [e for e in trace.events if e.name == "feedback"]
    assert len(feedback) == 1 and "EXACTLY ONE" in str(feedback[0].input)
    llm = [e for e in trace.events if e.kind == "llm"]
    assert llm[0].model == "google/gemini-3-pro-preview"
    assert llm[0].usage is not None and llm[0].usage.input_tokens == 1000
    assert "long hidden reasoning" not in trace.model_dump_json()  # the raw response is not copied


@pytest.mark.parametrize("layout", ["flat-report", "harness-report", "summary", "sb-cli"])
def test_the_resolved_label_is_found_next_to_the_trajectory(tmp_path: Path, layout: str) -> None:
    traj = _write(tmp_path / "trajs" / f"{INSTANCE}.traj.json", _trajectory())
    report = {"patch_successfully_applied": True, "resolved": True, "tests_status": {"FAIL_TO_PASS": {}}}
    if layout == "flat-report":
        _write(tmp_path / "logs" / f"{INSTANCE}.report.json", report)
    elif layout == "harness-report":
        _write(tmp_path / "logs" / INSTANCE / "report.json", {INSTANCE: report})
    elif layout == "summary":
        _write(
            tmp_path / "results_summary.json", {"instances": [{"instance_id": INSTANCE, "resolved": True}]}
        )
    else:
        _write(tmp_path / "sb-cli-report.json", {"resolved_ids": [INSTANCE], "unresolved_ids": ["other"]})
    [trace] = read_traces(traj).traces
    [score] = trace.scores
    assert (score.name, score.value, score.source) == ("resolved", True, "swebench")
    if layout.endswith("report"):
        assert trace.metadata["_swebench_report"]["tests_status"] == {"FAIL_TO_PASS": {}}
        assert "FAIL_TO_PASS" not in present_trace(trace).model_dump_json()


def test_no_label_file_means_no_score(tmp_path: Path) -> None:
    traj = _write(tmp_path / "x.traj.json", _trajectory())
    _write(tmp_path / "sb-cli-report.json", {"resolved_ids": ["someone-else"], "unresolved_ids": []})
    assert read_traces(traj).traces[0].scores == []


def test_malformed_trajectories_are_skipped_with_a_reason(tmp_path: Path) -> None:
    bad = _trajectory()
    bad["messages"][3] = {"role": "wizard", "content": "?"}
    path = _write(tmp_path / "bad.traj.json", bad)
    intake = read_traces(path, format="mini-swe-agent")
    assert intake.traces == []
    [skip] = intake.report.skipped
    assert skip.reason == "invalid-record" and "messages[3].role" in skip.detail
    broken = tmp_path / "broken.traj.json"
    broken.write_text(json.dumps(_trajectory(), indent=2)[:-40])
    intake = read_traces(broken, format="mini-swe-agent")
    assert intake.traces == [] and intake.report.skipped[0].reason == "invalid-json"


def test_jsonl_of_trajectories_reads_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "all.jsonl"
    path.write_text(
        json.dumps(_trajectory("a__a-1")) + "\n[1, 2]\n" + json.dumps(_trajectory("b__b-2")) + "\n"
    )
    intake = read_traces(path, format="mini-swe-agent")
    assert [t.id for t in intake.traces] == ["a__a-1", "b__b-2"]
    assert [(s.line, s.reason) for s in intake.report.skipped] == [(2, "wrong-type")]
