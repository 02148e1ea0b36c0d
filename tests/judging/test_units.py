"""Judging units and content keys: stable, blind to ids/paths/times, sensitive to judged content."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import redirect_stdout
from datetime import UTC, datetime
from io import StringIO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix import UsageError
from helix.judging import (
    CriteriaMatrix,
    Criterion,
    FewShotExample,
    build_units,
    present_trace,
)
from helix.traces import Event, Message, ToolCall, Trace


def make_trace(
    trace_id: str,
    *,
    user: str = "Where is order 42?",
    tool_output: str = '{"status": "shipped"}',
    answer: str = "Order 42 has shipped.",
    tool_status: str = "ok",
    metadata: dict[str, object] | None = None,
    start: datetime | None = None,
) -> Trace:
    return Trace(
        id=trace_id,
        input=user,
        output=answer,
        start=start,
        metadata={"channel": "chat", "_gold": "pass"} if metadata is None else metadata,
        messages=[
            Message(role="user", content=user),
            Message(
                role="assistant",
                tool_calls=[ToolCall(id="call-1", name="lookup_order", arguments={"order_id": 42})],
            ),
            Message(role="tool", content=tool_output, tool_call_id="call-1"),
            Message(role="assistant", content=answer),
        ],
        events=[
            Event(
                id="ev-1",
                kind="tool",
                name="lookup_order",
                tool_call_id="call-1",
                status=tool_status,  # type: ignore[arg-type]
                start=start,
            )
        ],
    )


def llm(cid: str, question: str = "Is the answer grounded in the tool result?", **extra: object) -> Criterion:
    return Criterion(
        id=cid,
        title=cid.replace("_", " "),
        kind="llm",
        question=question,
        pass_definition="Every claim is backed by a tool result.",
        fail_definition="A claim contradicts or goes beyond the tool results.",
        **extra,  # type: ignore[arg-type]
    )


def matrix(*criteria: Criterion) -> CriteriaMatrix:
    return CriteriaMatrix(
        subject="shop", criteria=criteria or (llm("grounded"), llm("polite", "Is it polite?"))
    )


def only_key(traces: list[Trace], m: CriteriaMatrix | None = None, **kw: object) -> str:
    units = build_units(traces, m or matrix(), **kw)  # type: ignore[arg-type]
    assert len(units) == 1
    return units[0].key


def test_identical_content_shares_one_unit_whatever_the_id_path_or_time() -> None:
    a = make_trace(
        "a",
        metadata={
            "channel": "chat",
            "_gold": "pass",
            "source_path": "/data/x.jsonl",
            "source_location": "line 3",
        },
    )
    b = make_trace(
        "b",
        metadata={"channel": "chat", "_gold": "fail", "source_path": "/other/y.jsonl"},
        start=datetime(2026, 1, 2, tzinfo=UTC),
    )
    units = build_units([a, b], matrix())
    assert len(units) == 1
    assert units[0].trace_ids == ("a", "b")
    assert units[0].criterion_ids == ("grounded", "polite")


@pytest.mark.parametrize(
    "changed",
    [
        make_trace("x", user="Where is order 43?"),
        make_trace("x", tool_output='{"status": "lost"}'),
        make_trace("x", answer="Order 42 is lost."),
        make_trace("x", tool_status="error"),
        make_trace("x", metadata={"channel": "email", "_gold": "pass"}),
    ],
)
def test_any_judged_trace_change_changes_the_key(changed: Trace) -> None:
    assert only_key([make_trace("x")]) != only_key([changed])


def test_criteria_axis_and_prompt_version_are_in_the_key() -> None:
    base = only_key([make_trace("x")])
    reworded = matrix(llm("grounded", "Is every claim grounded?"), llm("polite", "Is it polite?"))
    assert only_key([make_trace("x")], reworded) != base
    assert only_key([make_trace("x")], prompt_version="other-version") != base
    one = matrix(llm("grounded"))
    assert only_key([make_trace("x")], one, axis="matrix") != only_key(
        [make_trace("x")], one, axis="criterion"
    )


def test_criterion_axis_gives_one_unit_per_criterion_and_trajectory() -> None:
    m = matrix(
        llm("grounded"),
        llm("polite", "Is it polite?"),
        Criterion(
            id="looked_up",
            title="looked up",
            kind="code",
            check={"name": "tool_called", "args": {"tool": "t"}},
        ),  # type: ignore[arg-type]
    )
    traces = [make_trace("a"), make_trace("b", answer="No idea.")]
    units = build_units(traces, m, axis="criterion")
    assert [(u.kind, u.criterion_ids, u.trace_ids) for u in units] == [
        ("llm", ("grounded",), ("a",)),
        ("llm", ("polite",), ("a",)),
        ("llm", ("grounded",), ("b",)),
        ("llm", ("polite",), ("b",)),
        ("code", ("looked_up",), ("a",)),
        ("code", ("looked_up",), ("b",)),
    ]
    assert len({u.key for u in units}) == 6


def test_the_judge_sees_no_ground_truth_ids_or_times() -> None:
    trace = make_trace(
        "secret-id",
        metadata={"channel": "chat", "_expected": "refund"},
        start=datetime(2026, 1, 1, tzinfo=UTC),
    )
    view = present_trace(trace)
    dumped = view.model_dump_json()
    assert "secret-id" not in dumped and "_expected" not in dumped and "2026" not in dumped
    assert view.metadata == {"channel": "chat"}
    tool_entry = view.transcript[2]
    assert (tool_entry.role, tool_entry.tool, tool_entry.error) == ("tool", "lookup_order", False)
    assert view.transcript[1].tool_calls[0].arguments == {"order_id": 42}
    failed = present_trace(make_trace("y", tool_status="error"))
    assert failed.transcript[2].error is True


def test_a_trace_without_messages_is_presented_from_its_events() -> None:
    trace = Trace(
        id="spans",
        input="refund me",
        events=[
            Event(id="1", kind="user", name="user", input="refund me"),
            Event(id="2", kind="llm", name="chat", output=[{"role": "assistant", "content": "Checking."}]),
            Event(id="3", kind="agent", name="planner"),
            Event(id="4", kind="tool", name="refund", input={"amount": 5}, status="error", error="denied"),
        ],
    )
    entries = present_trace(trace).transcript
    assert [(e.index, e.role) for e in entries] == [(0, "user"), (1, "assistant"), (2, "tool")]
    assert (entries[2].tool, entries[2].arguments, entries[2].content, entries[2].error) == (
        "refund",
        {"amount": 5},
        "denied",
        True,
    )


def test_few_shot_examples_must_exist_and_are_part_of_the_key() -> None:
    shot = FewShotExample(trace_id="ex", result="fail", critique="It invented a date.")
    with_shot = matrix(llm("grounded", few_shot=(shot,)))
    with pytest.raises(UsageError, match="'ex'.*not among the traces"):
        build_units([make_trace("a")], with_shot)
    example = make_trace("ex", answer="It arrives on Monday.")
    units = build_units([make_trace("a"), example], with_shot)
    assert units[0].criteria[0].examples[0].critique == "It invented a date."
    other = make_trace("ex", answer="It arrives on Tuesday.")
    assert build_units([make_trace("a"), other], with_shot)[0].key != units[0].key


def test_bad_inputs_are_refused_with_the_fix() -> None:
    with pytest.raises(UsageError, match="appears more than once"):
        build_units([make_trace("a"), make_trace("a")], matrix())
    with pytest.raises(UsageError, match="at least one trace"):
        build_units([], matrix())
    with pytest.raises(UsageError, match="'diagonal'"):
        build_units([make_trace("a")], matrix(), axis="diagonal")  # type: ignore[arg-type]


_text = st.text(min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(user=_text, answer=_text, id_a=_text, id_b=_text)
def test_keys_are_stable_and_blind_to_ids(user: str, answer: str, id_a: str, id_b: str) -> None:
    a = make_trace("A" + id_a, user=user, answer=answer)
    b = make_trace("B" + id_b, user=user, answer=answer)
    first = build_units([a], matrix())[0].key
    assert build_units([a], matrix())[0].key == first
    assert build_units([b], matrix())[0].key == first
    assert len(first) == 20 and int(first, 16) >= 0


@settings(max_examples=60, deadline=None)
@given(answer=_text, other=_text)
def test_different_answers_give_different_keys(answer: str, other: str) -> None:
    keys = {
        u.key for u in build_units([make_trace("a", answer=answer), make_trace("b", answer=other)], matrix())
    }
    assert len(keys) == (1 if answer == other else 2)


_KEY_SCRIPT = """
from helix.judging import CriteriaMatrix, Criterion, build_units
from helix.traces import Message, Trace
t = Trace(id="p", input="hi \u00e9", metadata={"k": [1, 2.5, None]},
          messages=[Message(role="user", content="hi \u00e9"), Message(role="assistant", content="yo")])
m = CriteriaMatrix(subject="s", criteria=(Criterion(id="c", title="c", kind="llm", question="q",
                   pass_definition="p", fail_definition="f"),))
print(build_units([t], m)[0].key)
"""


def test_keys_are_the_same_in_another_process() -> None:
    exec_globals: dict[str, object] = {}
    buffer = StringIO()
    with redirect_stdout(buffer):
        exec(compile(_KEY_SCRIPT, "<key-script>", "exec"), exec_globals)
    here = buffer.getvalue().strip()
    there = subprocess.run(
        [sys.executable, "-c", _KEY_SCRIPT],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    ).stdout.strip()
    assert there == here and len(here) == 20
