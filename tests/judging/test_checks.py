"""Built-in code checks on small hand-made traces, user checks, and turning outcomes into verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helix import RunError, UsageError
from helix.judging import (
    BUILTIN_CHECKS,
    CheckOutcome,
    CodeCheckError,
    CodeCheckSpec,
    Criterion,
    resolve_check,
    run_code_check,
    validate_check_spec,
)
from helix.traces import Event, Message, ToolCall, Trace

# ----------------------------------------------------------------------------- trace builders


def user(text: str) -> Message:
    return Message(role="user", content=text)


def say(text: str, *calls: ToolCall) -> Message:
    return Message(role="assistant", content=text or None, tool_calls=list(calls))


def call(name: str, args: dict[str, Any] | str, call_id: str) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=args)


def result(call_id: str, content: str, name: str | None = None) -> Message:
    return Message(role="tool", tool_call_id=call_id, content=content, name=name)


def chat(*messages: Message, events: list[Event] | None = None, output: Any = None) -> Trace:
    return Trace(id="t1", messages=list(messages), events=events or [], output=output)


def check(name: str, trace: Trace, **args: Any) -> CheckOutcome:
    outcome = BUILTIN_CHECKS[name](trace, **args)
    assert isinstance(outcome, CheckOutcome)
    return outcome


REFUND_FLOW = chat(
    user("Please refund order A1, it arrived broken."),  # 0
    say("Let me look that up.", call("lookup_order", {"order_id": "A1"}, "c1")),  # 1
    result("c1", '{"order_id": "A1", "total": 40}'),  # 2
    say("", call("refund_order", {"order_id": "A1", "amount": 40, "reason": "damaged item"}, "c2")),  # 3
    result("c2", '{"ok": true}'),  # 4
    say("Done: 40.00 refunded to your card."),  # 5
)


# ----------------------------------------------------------------------------- tool_called / tool_not_called


def test_tool_called_passes_and_names_where_it_happened() -> None:
    out = check("tool_called", REFUND_FLOW, tool="refund_order", where={"order_id": "A1"})
    assert out.passed
    assert out.evidence == (3,)
    assert "'refund_order'" in out.explanation and "message 3" in out.explanation


def test_tool_called_fails_when_never_called() -> None:
    out = check("tool_called", REFUND_FLOW, tool="cancel_order")
    assert not out.passed
    assert "'cancel_order' was never called" in out.explanation


def test_tool_called_where_mismatch_shows_the_actual_arguments() -> None:
    out = check("tool_called", REFUND_FLOW, tool="refund_order", where={"order_id": "B7"})
    assert not out.passed
    assert out.evidence == (3,)
    assert "order_id == 'B7'" in out.explanation and '"A1"' in out.explanation


def test_tool_called_min_times() -> None:
    out = check("tool_called", REFUND_FLOW, tool="lookup_order", min_times=2)
    assert not out.passed and "only 1 time(s)" in out.explanation and "at least 2" in out.explanation


def test_where_regex_and_dotted_paths_and_text_comparison() -> None:
    trace = chat(
        say("", call("refund_order", {"order": {"id": 123}, "amount": "40", "reason": "Damaged box"}, "c1")),
        result("c1", "ok"),
    )
    assert check("tool_called", trace, tool="refund_order", where_regex={"reason": "(?i)damag"}).passed
    assert check("tool_called", trace, tool="refund_order", where={"order.id": 123}).passed
    # a string argument compares as text: "40" equals 40
    assert check("tool_called", trace, tool="refund_order", where={"amount": 40}).passed
    assert not check("tool_called", trace, tool="refund_order", where={"amount": 41}).passed
    assert not check("tool_called", trace, tool="refund_order", where={"missing": 1}).passed
    # booleans do not equal 1
    flag = chat(say("", call("set_flag", {"on": 1}, "c1")))
    assert not check("tool_called", flag, tool="set_flag", where={"on": True}).passed


def test_json_string_arguments_are_parsed_and_non_json_compare_as_text() -> None:
    trace = chat(
        say("", call("search", '{"query": "red shoes", "limit": 5}', "c1")),
        say("", call("shell", "ls -la", "c2")),
    )
    assert check("tool_called", trace, tool="search", where={"limit": 5}).passed
    assert check("tool_called", trace, tool="shell", where_regex={"cmd": r"^ls\b"}).passed
    assert check("tool_called", trace, tool="shell", where={"cmd": "ls -la"}).passed
    assert not check("tool_called", trace, tool="shell", where={"cmd": "rm -rf /"}).passed


def test_tool_not_called() -> None:
    ok = check("tool_not_called", REFUND_FLOW, tool="delete_account")
    assert ok.passed and "never called" in ok.explanation
    bad = check("tool_not_called", REFUND_FLOW, tool="refund_order", where_regex={"reason": "damag"})
    assert not bad.passed
    assert bad.evidence == (3,) and "message 3" in bad.explanation and "damaged item" in bad.explanation
    other_args = check("tool_not_called", REFUND_FLOW, tool="refund_order", where={"order_id": "Z9"})
    assert other_args.passed and "never with order_id == 'Z9'" in other_args.explanation


# ----------------------------------------------------------------------------- tool_called_before


def test_tool_called_before_passes_in_order() -> None:
    out = check("tool_called_before", REFUND_FLOW, first="lookup_order", then=["refund_order"])
    assert out.passed and "message 1" in out.explanation


def test_tool_called_before_not_acting_is_a_pass() -> None:
    trace = chat(user("Refund A1"), say("I can't refund that order: it is past the return window."))
    out = check("tool_called_before", trace, first="lookup_order", then=["refund_order", "cancel_order"])
    assert out.passed and "not acting passes" in out.explanation


def test_tool_called_before_fails_when_acting_first() -> None:
    trace = chat(
        say("", call("refund_order", {"order_id": "A1"}, "c1")),  # 0
        result("c1", "ok"),
        say("", call("lookup_order", {"order_id": "A1"}, "c2")),  # 2
        result("c2", "ok"),
    )
    out = check("tool_called_before", trace, first="lookup_order", then="refund_order")
    assert not out.passed
    assert out.evidence == (0,) and "before any call to 'lookup_order'" in out.explanation


def test_tool_called_before_same_turn_is_not_after() -> None:
    trace = chat(say("", call("lookup_order", {}, "c1"), call("refund_order", {}, "c2")))
    out = check("tool_called_before", trace, first="lookup_order", then=["refund_order"])
    assert not out.passed and "same turn" in out.explanation


def test_tool_called_before_first_never_called() -> None:
    trace = chat(say("", call("refund_order", {}, "c1")))
    out = check("tool_called_before", trace, first="lookup_order", then=["refund_order"])
    assert not out.passed and "'lookup_order' was never called" in out.explanation


# ----------------------------------------------------------------------------- no_unhandled_tool_error


def test_tool_error_acknowledged_passes() -> None:
    trace = chat(
        say("", call("lookup_order", {"order_id": "A9"}, "c1")),
        result("c1", '{"error": "order A9 not found"}'),  # 1
        say("Sorry, I couldn't find order A9. Could you check the number?"),  # 2
    )
    out = check("no_unhandled_tool_error", trace)
    assert out.passed and "acknowledged at message 2" in out.explanation


def test_tool_error_retried_passes() -> None:
    trace = chat(
        say("", call("lookup_order", {"order_id": "a9"}, "c1")),
        result("c1", "Error: order id must be upper case"),  # 1
        say("", call("lookup_order", {"order_id": "A9"}, "c2")),  # 2
        result("c2", '{"order_id": "A9"}'),
        say("Found it: order A9 ships tomorrow."),
    )
    out = check("no_unhandled_tool_error", trace)
    assert out.passed and "'lookup_order' at message 2" in out.explanation


def test_tool_error_talked_past_fails() -> None:
    trace = chat(
        say("", call("refund_order", {"order_id": "A1"}, "c1")),
        result("c1", '{"error": "payment gateway timeout"}', name="refund_order"),  # 1
        say("Your refund has been processed, you will see it in 3 days!"),  # 2
    )
    out = check("no_unhandled_tool_error", trace)
    assert not out.passed
    assert out.evidence == (1, 2)
    assert "'refund_order' result at message 1" in out.explanation and "talks past it" in out.explanation


@pytest.mark.parametrize(
    "reply",
    [
        "It seems there are not enough seats available on flight HAT229. Another date?",
        "It seems the gift card doesn't have enough balance to cover the $348.",
        "Flight HAT030 is no longer available on May 13.",
        "About the gift card balance below the fare: shall I split the payment?",  # echoes the error
    ],
)
def test_acknowledgement_phrasings_pass(reply: str) -> None:
    trace = chat(
        say("", call("book", {}, "c1")),
        result("c1", "Error: gift card balance below fare for flight HAT229"),
        say(reply),
    )
    assert check("no_unhandled_tool_error", trace).passed


def test_echoing_one_word_of_the_error_is_not_an_acknowledgement() -> None:
    trace = chat(
        say("", call("refund_order", {"order_id": "A1"}, "c1")),
        result("c1", "Error: order A1 locked by fraud review"),
        say("Your order A1 has been refunded."),
    )
    assert not check("no_unhandled_tool_error", trace).passed


def test_tool_error_ending_the_run_silently_fails() -> None:
    trace = chat(
        say("", call("refund_order", {}, "c1")), result("c1", "Traceback (most recent call last): ...")
    )
    out = check("no_unhandled_tool_error", trace)
    assert not out.passed and "run ended" in out.explanation


def test_tool_error_flag_comes_from_the_linked_event_or_content_parts() -> None:
    event = Event(
        id="e1", kind="tool", name="refund_order", status="error", error="card declined", tool_call_id="c1"
    )
    trace = chat(
        say("", call("refund_order", {}, "c1")),
        result("c1", "declined"),
        say("All set!"),
        events=[event],
    )
    out = check("no_unhandled_tool_error", trace)
    assert not out.passed and "card declined" in out.explanation
    parts = Message(
        role="tool", tool_call_id="c1", parts=[{"type": "tool_result", "is_error": True, "content": "boom"}]
    )
    trace2 = chat(say("", call("x", {}, "c1")), parts, say("Great, done."))
    assert not check("no_unhandled_tool_error", trace2).passed


def test_no_tool_errors_passes() -> None:
    out = check("no_unhandled_tool_error", REFUND_FLOW)
    assert out.passed and out.explanation == "no tool result reported an error."


def test_event_view_when_there_are_no_messages() -> None:
    events = [
        Event(
            id="e0",
            kind="llm",
            name="chat",
            output={"role": "assistant", "content": None, "tool_calls": [{}]},
        ),
        Event(
            id="e1",
            kind="tool",
            name="lookup_order",
            input={"order_id": "A1"},
            status="error",
            error="timeout",
        ),
        Event(id="e2", kind="llm", name="chat", output="Everything is fine, your order is on its way."),
    ]
    trace = Trace(id="t2", events=events)
    out = check("no_unhandled_tool_error", trace)
    assert not out.passed and "event 1" in out.explanation and "event 2" in out.explanation
    assert check("tool_called", trace, tool="lookup_order", where={"order_id": "A1"}).evidence == (1,)
    turns = check("max_turns", trace, limit=1)
    assert not turns.passed and "LLM events" in turns.explanation and turns.evidence == (2,)


# ----------------------------------------------------------------------------- loops and limits


def test_no_repeated_tool_call() -> None:
    loop = chat(*[say("", call("search", {"q": "shoes"}, f"c{i}")) for i in range(3)])
    bad = check("no_repeated_tool_call", loop)
    assert not bad.passed and bad.evidence == (0, 1, 2) and "3 times" in bad.explanation
    assert check("no_repeated_tool_call", loop, max_repeats=3).passed
    varied = chat(*[say("", call("search", {"q": f"shoes {i}"}, f"c{i}")) for i in range(3)])
    assert check("no_repeated_tool_call", varied).passed


def test_max_turns_and_max_tool_calls() -> None:
    assert check("max_turns", REFUND_FLOW, limit=3).passed
    over = check("max_turns", REFUND_FLOW, limit=2)
    assert not over.passed and over.evidence == (5,) and "3 turns" in over.explanation
    assert check("max_tool_calls", REFUND_FLOW, limit=2).passed
    capped = check("max_tool_calls", REFUND_FLOW, limit=0, tool="refund_order")
    assert not capped.passed and capped.evidence == (3,) and "'refund_order'" in capped.explanation


# ----------------------------------------------------------------------------- final output


def test_final_output_matches_and_contains() -> None:
    assert check("final_output_matches", REFUND_FLOW, pattern=r"\d+\.\d\d refunded").passed
    assert not check("final_output_matches", REFUND_FLOW, pattern=r"^done").passed
    assert check("final_output_matches", REFUND_FLOW, pattern=r"^done", flags="i").passed
    assert check("final_output_contains", REFUND_FLOW, text="REFUNDED").passed
    miss = check("final_output_contains", REFUND_FLOW, text="REFUNDED", case_sensitive=True)
    assert not miss.passed and miss.evidence == (5,) and "Done: 40.00" in miss.explanation


def test_final_output_falls_back_to_trace_output_and_fails_when_absent() -> None:
    trace = Trace(id="t3", output="Order shipped.")
    assert check("final_output_contains", trace, text="shipped").passed
    empty = check("final_output_contains", Trace(id="t4"), text="x")
    assert not empty.passed and "no final output" in empty.explanation


SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "refund": {"type": "number"}},
    "required": ["order_id", "refund"],
}


def test_final_output_json_schema() -> None:
    good = chat(say('```json\n{"order_id": "A1", "refund": 40}\n```'))
    assert check("final_output_json_schema", good, schema=SCHEMA).passed
    wrong = chat(say('{"order_id": "A1", "refund": "forty"}'))
    out = check("final_output_json_schema", wrong, schema=SCHEMA)
    assert not out.passed and "$.refund" in out.explanation and "'forty'" in out.explanation
    prose = check("final_output_json_schema", chat(say("I refunded it.")), schema=SCHEMA)
    assert not prose.passed and "is not JSON" in prose.explanation
    structured = Trace(id="t5", output={"order_id": "A1", "refund": 1.5})
    assert check("final_output_json_schema", structured, schema=SCHEMA).passed


# ----------------------------------------------------------------------------- specs, user checks, verdicts


def test_validate_check_spec_names_the_problem() -> None:
    with pytest.raises(
        UsageError, match=r"unknown built-in check 'tool_caled'; built-ins are: .*tool_called"
    ):
        validate_check_spec(CodeCheckSpec(name="tool_caled"))
    with pytest.raises(UsageError, match=r"check.args.tool: tool_called needs argument 'tool'"):
        validate_check_spec(CodeCheckSpec(name="tool_called", args={}))
    with pytest.raises(UsageError, match=r"takes no argument 'tools'"):
        validate_check_spec(CodeCheckSpec(name="tool_called", args={"tools": "x", "tool": "y"}))
    with pytest.raises(UsageError, match=r"argument 'flags'.*unknown regex flag"):
        validate_check_spec(CodeCheckSpec(name="final_output_matches", args={"pattern": "a", "flags": "q"}))
    with pytest.raises(UsageError, match=r"not a valid JSON Schema"):
        validate_check_spec(CodeCheckSpec(name="final_output_json_schema", args={"schema": {"type": "nope"}}))
    with pytest.raises(UsageError, match=r"cannot import module 'no_such_pkg.mod'"):
        validate_check_spec(CodeCheckSpec(name="no_such_pkg.mod:fn"))


@pytest.fixture
def fixture_checks_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make tests/judging importable so helix_fixture_checks.orders resolves by dotted path."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))


def _code(check_name: str, **args: Any) -> Criterion:
    return Criterion(id="c1", title="t", kind="code", check=CodeCheckSpec(name=check_name, args=args))


def test_user_check_by_dotted_path(fixture_checks_on_path: None) -> None:
    criterion = _code("helix_fixture_checks.orders:refund_within_limit", limit=30)
    verdict = run_code_check(criterion, REFUND_FLOW)
    assert verdict.result == "fail" and verdict.confidence == 1.0
    assert verdict.critique == "refund_order at message 3 asks for 40.0, above 30"
    assert (
        run_code_check(_code("helix_fixture_checks.orders:refund_within_limit", limit=50), REFUND_FLOW).result
        == "pass"
    )
    boolean = run_code_check(_code("helix_fixture_checks.orders:has_messages"), REFUND_FLOW)
    assert boolean.result == "pass" and "returned True" in boolean.critique


def test_user_check_problems_are_named(fixture_checks_on_path: None) -> None:
    with pytest.raises(UsageError, match=r"needs argument 'limit'"):
        resolve_check(CodeCheckSpec(name="helix_fixture_checks.orders:refund_within_limit"))
    with pytest.raises(UsageError, match=r"takes no argument 'cap'; it accepts: limit"):
        resolve_check(
            CodeCheckSpec(name="helix_fixture_checks.orders:refund_within_limit", args={"cap": 1, "limit": 2})
        )
    with pytest.raises(UsageError, match=r"has no attribute 'nope'"):
        resolve_check(CodeCheckSpec(name="helix_fixture_checks.orders:nope"))
    with pytest.raises(UsageError, match=r"is not callable"):
        resolve_check(CodeCheckSpec(name="helix_fixture_checks.orders:NOT_CALLABLE"))


def test_a_check_that_raises_becomes_a_code_check_error(fixture_checks_on_path: None) -> None:
    with pytest.raises(CodeCheckError) as info:
        run_code_check(_code("helix_fixture_checks.orders:explodes"), REFUND_FLOW)
    err = info.value
    assert isinstance(err, RunError)
    assert (err.criterion_id, err.trace_id) == ("c1", "t1")
    assert "ZeroDivisionError: user check bug" in str(err)
    with pytest.raises(CodeCheckError, match=r"returned None; a check must return a CheckOutcome or a bool"):
        run_code_check(_code("helix_fixture_checks.orders:returns_nothing"), REFUND_FLOW)


def test_run_code_check_builtin_verdict_and_misuse() -> None:
    verdict = run_code_check(_code("tool_called", tool="lookup_order"), REFUND_FLOW)
    assert verdict.criterion_id == "c1" and verdict.result == "pass" and verdict.confidence == 1.0
    assert "'lookup_order' was called 1 time(s) (message 1)" in verdict.critique
    llm = Criterion(id="q", title="t", kind="llm", question="q?", pass_definition="p", fail_definition="f")
    with pytest.raises(UsageError, match="only kind: code"):
        run_code_check(llm, REFUND_FLOW)
    with pytest.raises(UsageError, match="unknown built-in"):
        run_code_check(_code("tool_caled", tool="x"), REFUND_FLOW)


def test_builtin_checks_are_the_agreed_set() -> None:
    assert sorted(BUILTIN_CHECKS) == [
        "final_output_contains",
        "final_output_json_schema",
        "final_output_matches",
        "max_tool_calls",
        "max_turns",
        "no_repeated_tool_call",
        "no_unhandled_tool_error",
        "tool_called",
        "tool_called_before",
        "tool_not_called",
    ]


@pytest.mark.realdata
def test_builtins_on_real_tau_bench_traces() -> None:
    data = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    path = data / "tau-bench-historical-trajectories" / "gpt-4o-airline.json"
    if not path.exists():
        pytest.skip("shared data absent")
    from helix.traces import read_traces

    traces = read_traces(path).traces
    assert len(traces) == 200
    criteria = [
        _code("no_unhandled_tool_error"),
        _code("no_repeated_tool_call"),
        _code(
            "tool_called_before", first="get_user_details", then=["book_reservation", "cancel_reservation"]
        ),
        _code("max_tool_calls", limit=15),
        _code("final_output_matches", pattern=r"\w"),
    ]
    verdicts = [run_code_check(c, t) for t in traces for c in criteria]
    assert len(verdicts) == 1000 and all(v.critique for v in verdicts)
    unhandled = [v.critique for v in verdicts[0::5] if v.result == "fail"]
    # the agent mostly says "not enough seats" / "not available": only real talk-pasts are flagged
    assert 1 <= len(unhandled) <= 5
    assert any("'calculate' result" in c for c in unhandled)
