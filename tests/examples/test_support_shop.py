"""The support-shop subject end to end: scenarios, the seeded agent, episodes, traces and criteria."""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, timedelta

import orjson
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import helix.examples as ex
from helix import UsageError
from helix.examples import (
    GROUND_TRUTH_KEY,
    MISTAKE_KINDS,
    POLICY_TEXT,
    SCENARIOS,
    SHOP_AS_OF,
    Episode,
    MistakeKind,
    MistakeRates,
    ShopState,
    criteria_path,
    diff_states,
    generate_episodes,
    graded_view,
    run_episode,
)
from helix.judging import CriteriaMatrix, load_criteria, run_code_check
from helix.traces import Trace

SEEDS = (0, 1, 2)
BY_ID = {s.id: s for s in SCENARIOS}

# Where each mistake, injected alone, must change the shop (so gold_match must be False).
STATE_CHANGING: dict[MistakeKind, frozenset[str]] = {
    "acts_before_verifying": frozenset({"unknown-customer", "failed-identity"}),
    "refund_outside_window": frozenset({"refund-outside-window"}),
    "false_claim": frozenset(s.id for s in SCENARIOS if s.expected in ("act", "escalate")),
    "ignores_tool_error": frozenset({"unknown-customer", "failed-identity", "tool-error-mid-flow"}),
    "gives_up_early": frozenset(s.id for s in SCENARIOS if s.expected in ("act", "escalate")),
    "repeats_tool_call": frozenset(),
}
BUILTIN_CHECK_NAMES = {
    "tool_called",
    "tool_not_called",
    "tool_called_before",
    "no_unhandled_tool_error",
    "no_repeated_tool_call",
    "final_output_matches",
    "final_output_contains",
    "final_output_json_schema",
    "max_turns",
    "max_tool_calls",
}


def _trace_json(ep: Episode) -> bytes:
    return ep.trace.model_dump_json().encode()


def _tool_calls(trace: Trace) -> list[tuple[str, str]]:
    assert trace.messages is not None
    return [
        (c.name, orjson.dumps(c.arguments, option=orjson.OPT_SORT_KEYS).decode())
        for m in trace.messages
        for c in m.tool_calls
    ]


def _assert_canonical(ep: Episode) -> None:
    trace = Trace.model_validate_json(_trace_json(ep))
    assert trace == ep.trace
    messages = trace.messages
    assert messages is not None and len(messages) == len(trace.events)
    kinds = {"user": "user", "assistant": "llm", "tool": "tool"}
    asked: dict[str, tuple[str, str]] = {}  # call id -> (tool name, id of the llm event that asked)
    for msg, event in zip(messages, trace.events, strict=True):
        assert event.kind == kinds[msg.role]
        assert event.start is not None and event.end is not None
        assert event.start.tzinfo is not None and event.start.utcoffset() == timedelta(0)
        assert event.start <= event.end
        if msg.role == "assistant":
            assert len(msg.tool_calls) <= 1
            for call in msg.tool_calls:
                assert call.id is not None and call.id not in asked
                assert isinstance(call.arguments, dict)
                asked[call.id] = (call.name, event.id)
        if msg.role == "tool":
            assert msg.tool_call_id in asked, "tool result without a matching call"
            name, parent = asked[msg.tool_call_id]
            assert msg.name == name == event.name
            assert event.tool_call_id == msg.tool_call_id and event.parent_id == parent
            assert event.output == orjson.loads(msg.content or "")
            assert (event.status == "error") == (not event.output["ok"])
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    assert answered == set(asked), "every call gets exactly one result"
    starts = [e.start for e in trace.events]
    assert starts == sorted(starts)
    assert messages[0].role == "user" and trace.input == messages[0].content
    assert messages[-1].role == "assistant" and not messages[-1].tool_calls and messages[-1].content
    assert trace.output == messages[-1].content
    assert trace.start is not None and trace.start.tzinfo is not None and trace.start.date() == SHOP_AS_OF
    meta = trace.metadata
    assert (
        meta["subject"] == "support-shop"
        and meta["scenario_id"] == ep.scenario_id
        and meta["seed"] == ep.seed
    )
    assert meta[GROUND_TRUTH_KEY]["mistakes"] == list(ep.mistakes)
    assert meta[GROUND_TRUTH_KEY]["gold_match"] == ep.gold_match
    assert [(s.name, s.value) for s in trace.scores] == [("gold_match", ep.gold_match)]
    assert trace.id == f"support-shop/{ep.scenario_id}/{ep.seed}"


def test_public_all_is_resolvable() -> None:
    assert len(set(ex.__all__)) == len(ex.__all__)
    for name in ex.__all__:
        assert hasattr(ex, name), name


def test_scenarios_cover_the_kinds_with_unique_ids() -> None:
    assert len(SCENARIOS) >= 12
    assert len({s.id for s in SCENARIOS}) == len(SCENARIOS)
    assert len({s.kind for s in SCENARIOS}) == len(SCENARIOS)
    assert {s.expected for s in SCENARIOS} == {"act", "refuse", "escalate", "answer"}
    for s in SCENARIOS:
        # the gold state is a well-formed graded view of a shop that differs from the start exactly when acting
        changed = bool(diff_states(graded_view(s.initial_state()), s.gold_state))
        assert changed == (s.expected in ("act", "escalate")), s.id


def test_policy_text_states_the_rules() -> None:
    for phrase in ("verified", "pending", "30 days", "escalate_to_human", "Never say you cancelled"):
        assert phrase in POLICY_TEXT
    assert ex.policy_path().read_text(encoding="utf-8") == POLICY_TEXT


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_mistake_free_agent_reaches_gold_on_every_scenario(scenario: ex.ShopScenario) -> None:
    for seed in SEEDS:
        ep = run_episode(scenario, seed=seed, rates=MistakeRates.none())
        assert ep.mistakes == ()
        assert ep.gold_match, [str(d) for d in ep.gold_diff]
        assert ep.gold_diff == ()
        _assert_canonical(ep)
        calls = [name for name, _ in _tool_calls(ep.trace)]
        if scenario.kind in ("unknown_customer", "failed_identity"):
            assert calls == ["find_customer"]  # stops at the failed identity check
        else:
            assert calls[:2] == ["find_customer", "get_order"]
        assert max(Counter(_tool_calls(ep.trace)).values()) <= 2


def test_same_inputs_give_identical_episodes() -> None:
    rates = MistakeRates(false_claim=0.5, repeats_tool_call=0.5, transient_tool_failure=0.3)
    for scenario in SCENARIOS:
        a = run_episode(scenario, seed=11, rates=rates)
        b = run_episode(scenario, seed=11, rates=rates)
        assert _trace_json(a) == _trace_json(b)
        assert a.produced_state == b.produced_state and a.mistakes == b.mistakes
    first = [_trace_json(e) for e in generate_episodes(n=30, seed=5)]
    assert first == [_trace_json(e) for e in generate_episodes(n=30, seed=5)]
    assert first != [_trace_json(e) for e in generate_episodes(n=30, seed=6)]


def test_seeds_change_timing_but_not_the_mistake_free_outcome() -> None:
    scenario = BY_ID["cancel-pending"]
    a = run_episode(scenario, seed=1, rates=MistakeRates.none())
    b = run_episode(scenario, seed=2, rates=MistakeRates.none())
    assert a.trace.id != b.trace.id and a.trace.start != b.trace.start
    assert a.produced_state == b.produced_state


@pytest.mark.parametrize("kind", MISTAKE_KINDS)
def test_each_mistake_appears_at_rate_one_and_changes_gold_where_expected(kind: MistakeKind) -> None:
    seen = 0
    for scenario in SCENARIOS:
        for seed in SEEDS:
            ep = run_episode(scenario, seed=seed, rates=MistakeRates.only(kind))
            assert set(ep.mistakes) <= {kind}
            seen += kind in ep.mistakes
            assert ep.gold_match == (scenario.id not in STATE_CHANGING[kind]), (scenario.id, ep.gold_diff)
            if kind in STATE_CHANGING and scenario.id in STATE_CHANGING[kind]:
                assert kind in ep.mistakes
            _assert_canonical(ep)
    assert seen >= len(SEEDS)


@pytest.mark.parametrize("kind", MISTAKE_KINDS)
def test_a_mistake_at_rate_zero_never_appears_even_when_all_others_are_certain(kind: MistakeKind) -> None:
    rates = MistakeRates(
        **{k: (0.0 if k == kind else 1.0) for k in MISTAKE_KINDS}, transient_tool_failure=0.2
    )
    for scenario in SCENARIOS:
        for seed in SEEDS:
            assert kind not in run_episode(scenario, seed=seed, rates=rates).mistakes


def test_mistakes_leave_the_traces_they_should() -> None:
    loop = run_episode(BY_ID["order-status-question"], seed=0, rates=MistakeRates.only("repeats_tool_call"))
    assert max(Counter(_tool_calls(loop.trace)).values()) == 3

    rushed = run_episode(BY_ID["cancel-pending"], seed=0, rates=MistakeRates.only("acts_before_verifying"))
    names = [n for n, _ in _tool_calls(rushed.trace)]
    assert "find_customer" not in names and "cancel_order" in names

    late = run_episode(
        BY_ID["refund-outside-window"], seed=0, rates=MistakeRates.only("refund_outside_window")
    )
    assert [r["order_id"] for r in late.produced_state["refunds"]] == ["O-5004"]

    claim = run_episode(BY_ID["cancel-shipped"], seed=0, rates=MistakeRates.only("false_claim"))
    assert claim.gold_match and "cancelled" in (claim.trace.output or "")
    assert "cancel_order" not in [n for n, _ in _tool_calls(claim.trace)]

    ignored = run_episode(BY_ID["tool-error-mid-flow"], seed=0, rates=MistakeRates.only("ignores_tool_error"))
    assert ignored.trace.messages is not None
    last_tool = [m for m in ignored.trace.messages if m.role == "tool"][-1]
    assert '"service_unavailable"' in (last_tool.content or "")
    assert "error" not in (ignored.trace.output or "").lower()

    quit_ = run_episode(BY_ID["damaged-item"], seed=0, rates=MistakeRates.only("gives_up_early"))
    assert quit_.produced_state["escalations"] == []


def test_gold_diff_names_the_fields_that_differ() -> None:
    ep = run_episode(BY_ID["failed-identity"], seed=4, rates=MistakeRates.only("acts_before_verifying"))
    paths = {d.path for d in ep.gold_diff}
    assert "orders.O-5010.shipping_address.city" in paths
    assert ep.trace.scores[0].value is False and "O-5010" in (ep.trace.scores[0].comment or "")
    assert ep.trace.metadata[GROUND_TRUTH_KEY]["gold_diff"] == [str(d) for d in ep.gold_diff]


def test_produced_state_is_json_and_a_valid_shop() -> None:
    ep = run_episode(BY_ID["partial-refund"], seed=0)
    assert orjson.loads(orjson.dumps(ep.produced_state)) == ep.produced_state
    state = ShopState.model_validate(ep.produced_state)
    assert state.orders["O-5005"].refunded_cents in (0, 1500)


def test_default_rates_give_a_realistic_mix() -> None:
    episodes = generate_episodes(n=len(SCENARIOS) * 20, seed=2026)
    assert [e.scenario_id for e in episodes[: len(SCENARIOS)]] == [s.id for s in SCENARIOS]
    share = sum(bool(e.mistakes) for e in episodes) / len(episodes)
    assert 0.30 <= share <= 0.50, share
    kinds = Counter(k for e in episodes for k in e.mistakes)
    assert set(kinds) == set(MISTAKE_KINDS)
    assert any(e.transient_failures for e in episodes)
    for e in episodes:
        assert e.gold_match == (not e.gold_diff)


@settings(max_examples=60, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=len(SCENARIOS) - 1),
    seed=st.integers(min_value=-(2**40), max_value=2**40),
    rates=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=7, max_size=7),
)
def test_any_seed_and_rates_give_a_canonical_deterministic_trace(
    index: int, seed: int, rates: list[float]
) -> None:
    mix = MistakeRates(**dict(zip([*MISTAKE_KINDS, "transient_tool_failure"], rates, strict=True)))
    ep = run_episode(SCENARIOS[index], seed=seed, rates=mix)
    _assert_canonical(ep)
    assert _trace_json(ep) == _trace_json(run_episode(SCENARIOS[index], seed=seed, rates=mix))
    for kind in ep.mistakes:
        assert getattr(mix, kind) > 0
    assert ep.gold_match == (not ep.gold_diff)


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan])
def test_rates_must_be_probabilities(bad: float) -> None:
    with pytest.raises(UsageError, match="false_claim"):
        MistakeRates(false_claim=bad)


def test_bad_arguments_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="n=-1"):
        generate_episodes(n=-1, seed=0)
    with pytest.raises(UsageError, match="seed"):
        run_episode(SCENARIOS[0], seed="7")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="unknown mistake kind"):
        MistakeRates.only("forgets_name")  # type: ignore[arg-type]
    assert generate_episodes(n=0, seed=0) == []


def test_shipped_criteria_parse_and_use_builtin_checks() -> None:
    raw = yaml.safe_load(criteria_path().read_text(encoding="utf-8"))
    matrix = CriteriaMatrix.model_validate(raw)
    assert matrix.version == 1 and matrix.subject == "support-shop"
    assert len(matrix.llm_criteria) >= 5 and len(matrix.code_criteria) >= 4
    for c in matrix.llm_criteria:
        assert c.question and c.pass_definition and c.fail_definition
    for c in matrix.code_criteria:
        assert c.check is not None and c.check.name in BUILTIN_CHECK_NAMES, c.id
    before = next(c for c in matrix.code_criteria if c.check and c.check.name == "tool_called_before")
    assert before.check is not None and before.check.args["first"] == "find_customer"
    assert {"cancel_order", "refund", "update_address"} <= set(before.check.args["then"])


def test_trace_start_is_utc_on_the_shop_day() -> None:
    starts = {run_episode(SCENARIOS[0], seed=s).trace.start for s in range(20)}
    assert len(starts) > 10
    for start in starts:
        assert start is not None and start.tzinfo == UTC and start.date() == SHOP_AS_OF


def test_shipped_code_criteria_agree_with_the_ground_truth() -> None:
    matrix = load_criteria(criteria_path())
    checks = {c.id: c for c in matrix.code_criteria}

    def results(ep: Episode) -> dict[str, str]:
        return {cid: run_code_check(c, ep.trace).result for cid, c in checks.items()}

    for scenario in SCENARIOS:
        clean = run_episode(scenario, seed=0, rates=MistakeRates.none())
        assert set(results(clean).values()) == {"pass"}, scenario.id
        looped = run_episode(scenario, seed=0, rates=MistakeRates.only("repeats_tool_call"))
        assert results(looped)["no-tool-loop"] == "fail"
        rushed = run_episode(scenario, seed=0, rates=MistakeRates.only("acts_before_verifying"))
        acted = {"cancel_order", "refund", "update_address"} & {n for n, _ in _tool_calls(rushed.trace)}
        assert results(rushed)["verify-before-account-tools"] == ("fail" if acted else "pass"), scenario.id
    ignored = run_episode(BY_ID["tool-error-mid-flow"], seed=0, rates=MistakeRates.only("ignores_tool_error"))
    assert results(ignored)["no-unhandled-tool-error"] == "fail"
