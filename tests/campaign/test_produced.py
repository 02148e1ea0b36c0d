"""Produced-state grading: extraction from events and traces, the completion oracle's rules."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from helix.campaign import (
    Deliverable,
    ProducedEvent,
    RequiredDeliverable,
    TaskGold,
    extract_produced_state,
    verify_completion,
)
from helix.traces import Event, Trace


def _exact(req: RequiredDeliverable, got: Deliverable) -> bool:
    same: bool = got.content == req.expected
    return same


def test_extract_replays_writes_last_body_wins_and_ignores_other_events() -> None:
    events: list[ProducedEvent | dict[str, Any]] = [
        {"kind": "artifact", "key": "notes.md", "content": "v1"},
        {"kind": "tool_call", "name": "search"},  # not a produced event
        ProducedEvent(kind="proposal_created", key="P-1", title="Fix the bug", content="Do X"),
        {"kind": "artifact", "key": "notes.md", "content": "v2", "attributes": {"lang": "md"}},
        {"kind": "artifact", "key": "notes.md"},  # touch without a body keeps the body
    ]
    state = extract_produced_state(events)
    art = state.get("artifact", "notes.md")
    assert art is not None and art.content == "v2" and art.events == 3 and art.attributes == {"lang": "md"}
    prop = state.get("proposal_created", "P-1")
    assert prop is not None and prop.title == "Fix the bug"
    assert [d.key for d in state.deliverables] == ["notes.md", "P-1"]


def test_complete_incorrect_missing_and_unexpected() -> None:
    gold = TaskGold(
        required=(
            RequiredDeliverable(kind="artifact", key="a.txt", expected="hello"),
            RequiredDeliverable(kind="artifact", key="b.txt", expected="world"),
            RequiredDeliverable(kind="proposal_created", key="P-1", expected="plan"),
        )
    )
    state = extract_produced_state(
        [
            {"kind": "artifact", "key": "a.txt", "content": "hello"},
            {"kind": "artifact", "key": "b.txt", "content": "WORLD"},
            {"kind": "artifact", "key": "stray.txt", "content": "oops"},
        ]
    )
    result = verify_completion(gold, state, _exact)
    statuses = {(o.key, o.status) for o in result.outcomes}
    assert statuses == {
        ("a.txt", "complete"),
        ("b.txt", "incorrect"),
        ("P-1", "missing"),
        ("stray.txt", "unexpected"),
    }
    assert not result.completed
    assert result.score == 1 / 4
    assert "stray.txt" in result.explain()
    allowed = verify_completion(TaskGold(required=gold.required, allow_unexpected=True), state, _exact)
    assert allowed.score == 1 / 3


def test_content_less_proposal_is_presence_only_and_never_completes() -> None:
    gold = TaskGold(required=(RequiredDeliverable(kind="proposal_created", key="P-7", expected=None),))
    calls: list[str] = []

    def accept_all(req: RequiredDeliverable, got: Deliverable) -> bool:
        calls.append(got.key)
        return True

    title_only = extract_produced_state([{"kind": "proposal_created", "key": "P-7", "title": "Refund"}])
    result = verify_completion(gold, title_only, accept_all)
    assert [o.status for o in result.outcomes] == ["presence_only"]
    assert not result.completed and result.score == 0.0
    assert calls == [], "the correctness checker must not be asked about a body that is not there"
    with_body = extract_produced_state(
        [{"kind": "proposal_created", "key": "P-7", "title": "Refund", "content": "Refund $20 because ..."}]
    )
    assert verify_completion(gold, with_body, accept_all).completed
    assert calls == ["P-7"]


def test_nothing_required_nothing_produced_is_complete_but_any_action_is_not() -> None:
    refusal = TaskGold()
    assert verify_completion(refusal, extract_produced_state([]), _exact).completed
    acted = extract_produced_state([{"kind": "artifact", "key": "refunds/R-1", "content": "{}"}])
    result = verify_completion(refusal, acted, _exact)
    assert not result.completed and result.score == 0.0


def test_imported_trace_events_are_graded_the_same_way() -> None:
    trace = Trace(
        id="t1",
        events=[
            Event(id="e1", kind="tool", name="write_file", input={"path": "x"}),
            Event(
                id="e2",
                kind="tool",
                name="write_file",
                output="print('hi')",
                attributes={"produced.kind": "artifact", "produced.key": "hello.py", "lang": "py"},
            ),
            Event(id="P-3", kind="other", name="proposal_created", attributes={"produced.title": "Plan"}),
        ],
    )
    state = extract_produced_state(trace.events)
    assert [(d.kind, d.key, d.content, dict(d.attributes)) for d in state.deliverables] == [
        ("artifact", "hello.py", "print('hi')", {"lang": "py"}),
        ("proposal_created", "P-3", None, {}),
    ]
    gold = TaskGold(
        required=(
            RequiredDeliverable(kind="artifact", key="hello.py", expected="print('hi')"),
            RequiredDeliverable(kind="proposal_created", key="P-3"),
        )
    )
    result = verify_completion(gold, state, _exact)
    assert [o.status for o in result.outcomes] == ["complete", "presence_only"]


@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.one_of(st.none(), st.text(max_size=3))),
        max_size=12,
    )
)
def test_extraction_keeps_the_last_carried_body(writes: list[tuple[str, str | None]]) -> None:
    state = extract_produced_state([{"kind": "artifact", "key": k, "content": c} for k, c in writes])
    for key in {k for k, _ in writes}:
        bodies = [c for k, c in writes if k == key and c is not None]
        got = state.get("artifact", key)
        assert got is not None
        assert got.content == (bodies[-1] if bodies else None)
        assert got.events == sum(1 for k, _ in writes if k == key)
