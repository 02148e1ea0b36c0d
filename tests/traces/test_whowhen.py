"""Who&When logs: both shapes, step events aligned with the labels, code execution as tool events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helix.judging import present_trace
from helix.traces import detect_format, read_traces

HAND_CRAFTED: dict[str, Any] = {
    "question": "Where can I take martial arts classes near the NYSE?",
    "ground_truth": "SECRET-ANSWER Renzo Gracie",
    "question_ID": "6e3be83d",
    "is_corrected": False,
    "level": 2,
    "mistake_agent": "WebSurfer",
    "mistake_step": "3",
    "mistake_reason": "WebSurfer clicks on an irrelevant website.",
    "history": [
        {"role": "human", "content": "Where can I take martial arts classes near the NYSE?"},
        {"role": "Orchestrator (thought)", "content": "Initial plan: search the web."},
        {"role": "Orchestrator (-> WebSurfer)", "content": "Please search for martial arts schools."},
        {"role": "WebSurfer", "content": "I clicked on 'Best pizza in NYC'."},
        {"role": "Orchestrator (-> ComputerTerminal)", "content": "Run:\n```python\nprint(1 + 1)\n```"},
        {"role": "ComputerTerminal", "content": "exitcode: 0 (execution succeeded)\nCode output: 2"},
        {"role": "Orchestrator (termination condition)", "content": "FINAL ANSWER: Pizza Dojo"},
    ],
}

ALGORITHM_GENERATED: dict[str, Any] = {
    "is_correct": False,
    "question": "What is the 2020 population of the island?",
    "question_ID": "3ff6b7a9",
    "level": "2",
    "ground_truth": "56000",
    "mistake_agent": "Statistics_Expert",
    "mistake_step": "2",
    "mistake_reason": "Assumed the value without checking.",
    "system_prompt": {"Statistics_Expert": "You are a statistician.", "Computer_terminal": ""},
    "history": [
        {"name": "MarineBiology_Expert", "role": "assistant", "content": "Task: find the population."},
        {
            "name": "Statistics_Expert",
            "role": "user",
            "content": "```sh\ncurl wiki\n```\n```python\nx = 1\n```",
        },
        {
            "name": "Computer_terminal",
            "role": "user",
            "content": "exitcode: 1 (execution failed)\nCode output: boom",
        },
        {"name": "Computer_terminal", "role": "user", "content": "There is no code from the last 1 message."},
        {"name": "Statistics_Expert", "role": "assistant", "content": "The answer is 57,000. TERMINATE"},
    ],
}


def _write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=4))
    return path


def test_hand_crafted_log_maps_steps_labels_and_tools(tmp_path: Path) -> None:
    path = _write(tmp_path / "Hand-Crafted" / "1.json", HAND_CRAFTED)
    assert detect_format(path).format == "who-and-when"
    intake = read_traces(path)
    assert intake.report.records_skipped == 0
    [trace] = intake.traces
    assert trace.id == "hand-crafted/1/6e3be83d"
    assert trace.input == HAND_CRAFTED["question"]
    assert trace.output == "FINAL ANSWER: Pizza Dojo"
    assert [e.id for e in trace.events] == [f"step-{i}" for i in range(7)]
    assert [e.kind for e in trace.events] == ["user", "llm", "llm", "llm", "llm", "tool", "llm"]
    scores = {s.name: s for s in trace.scores}
    assert scores["correct"].value is False
    assert scores["mistake_agent"].value == "WebSurfer"
    assert scores["mistake_agent"].comment == HAND_CRAFTED["mistake_reason"]
    assert scores["mistake_step"].value == "3"
    # The labelled step is the event of that id, spoken by the labelled agent.
    mistake = next(e for e in trace.events if e.id == f"step-{scores['mistake_step'].value}")
    assert mistake.attributes["agent"] == "WebSurfer"
    orchestrator = trace.events[2]
    assert orchestrator.name == "Orchestrator" and orchestrator.attributes["channel"] == "-> WebSurfer"
    [tool] = trace.tool_events()
    assert tool.name == "ComputerTerminal" and tool.status == "ok"
    assert tool.input == {"code": [{"language": "python", "code": "print(1 + 1)"}]}
    assert tool.attributes["requested_by"] == "step-4"


def test_algorithm_generated_log_keeps_agent_names_and_failed_executions(tmp_path: Path) -> None:
    path = _write(tmp_path / "Algorithm-Generated" / "1.json", ALGORITHM_GENERATED)
    [trace] = read_traces(path).traces
    assert trace.id == "algorithm-generated/1/3ff6b7a9"  # no clash with Hand-Crafted/1.json
    assert trace.metadata["system_prompts"]["Statistics_Expert"] == "You are a statistician."
    [tool] = trace.tool_events()
    assert tool.id == "step-2" and tool.status == "error" and tool.error == "exitcode 1"
    assert [block["language"] for block in tool.input["code"]] == ["sh", "python"]
    # A terminal message that ran nothing is not a tool result.
    assert trace.events[3].kind == "llm" and trace.events[3].name == "Computer_terminal"
    assert {s.name: s.value for s in trace.scores}["mistake_agent"] == "Statistics_Expert"
    assert trace.messages is not None and trace.messages[2].role == "tool"


def test_reference_answer_and_reason_are_hidden_from_judges(tmp_path: Path) -> None:
    [trace] = read_traces(_write(tmp_path / "1.json", HAND_CRAFTED)).traces
    assert trace.metadata["_ground_truth"] == HAND_CRAFTED["ground_truth"]
    shown = present_trace(trace).model_dump_json()
    assert "SECRET-ANSWER" not in shown and "irrelevant website" not in shown


def test_bad_logs_are_skipped_with_the_field(tmp_path: Path) -> None:
    bad = dict(HAND_CRAFTED, history=[{"role": "human", "content": 5}])
    intake = read_traces(_write(tmp_path / "bad.json", bad), format="who-and-when")
    assert intake.traces == []
    [skip] = intake.report.skipped
    assert skip.reason == "invalid-record" and "history[0].content" in skip.detail
    other = read_traces(_write(tmp_path / "other.json", {"question": "q"}), format="who-and-when")
    assert other.report.skipped[0].reason == "unrecognised-record"
