"""The simulated shop backend: tools, realistic errors, transient failures."""

from __future__ import annotations

import random
from datetime import timedelta

import orjson

from helix.examples import (
    PROCESSOR_REFUND_LIMIT_DAYS,
    TOOL_NAMES,
    TOOL_SPECS,
    ShopBackend,
    ShopState,
    base_shop,
)


def _backend(state: ShopState | None = None, **kwargs: object) -> ShopBackend:
    return ShopBackend(state if state is not None else base_shop(), **kwargs)  # type: ignore[arg-type]


def _code(result: dict[str, object]) -> object:
    assert result["ok"] is False
    error = result["error"]
    assert isinstance(error, dict)
    return error["code"]


def test_base_shop_is_a_fresh_copy_each_time() -> None:
    a = base_shop()
    a.orders["O-5001"].status = "cancelled"
    assert base_shop().orders["O-5001"].status == "pending"


def test_state_snapshot_is_json_and_round_trips() -> None:
    state = base_shop()
    snap = state.snapshot()
    assert orjson.loads(orjson.dumps(snap)) == snap
    assert ShopState.model_validate(snap) == state


def test_tool_specs_name_the_six_tools_with_json_schemas() -> None:
    assert [s["function"]["name"] for s in TOOL_SPECS] == list(TOOL_NAMES)
    assert len(TOOL_NAMES) == 6
    refund = next(s for s in TOOL_SPECS if s["function"]["name"] == "refund")
    assert set(refund["function"]["parameters"]["required"]) == {"order_id", "amount"}


def test_find_customer_verifies_by_order_id_or_zip() -> None:
    shop = _backend()
    ok = shop.call("find_customer", {"email": "ANA.SOUZA@example.com ", "order_id": "O-5007"})
    assert ok["ok"] is True and ok["customer"]["id"] == "C-101" and ok["verified"] is True
    assert shop.call("find_customer", {"email": "ana.souza@example.com", "zip": "94110"})["ok"] is True
    # someone else's order, or the wrong zip, does not verify
    assert _code(shop.call("find_customer", {"email": "ana.souza@example.com", "order_id": "O-5002"})) == (
        "verification_failed"
    )
    assert _code(shop.call("find_customer", {"email": "ana.souza@example.com", "zip": "10027"})) == (
        "verification_failed"
    )
    assert _code(shop.call("find_customer", {"email": "nobody@example.com", "zip": "94110"})) == (
        "customer_not_found"
    )
    assert _code(shop.call("find_customer", {"email": "ana.souza@example.com"})) == "invalid_arguments"


def test_cancel_only_before_shipping() -> None:
    state = base_shop()
    shop = _backend(state)
    assert shop.call("cancel_order", {"order_id": "O-5001"})["ok"] is True
    assert state.orders["O-5001"].status == "cancelled"
    assert _code(shop.call("cancel_order", {"order_id": "O-5001"})) == "order_cancelled"
    assert _code(shop.call("cancel_order", {"order_id": "O-5002"})) == "order_already_shipped"
    assert state.orders["O-5002"].status == "shipped"
    assert _code(shop.call("cancel_order", {"order_id": "O-9999"})) == "order_not_found"


def test_address_change_only_before_shipping() -> None:
    state = base_shop()
    shop = _backend(state)
    new = {"line1": "1 Main St", "city": "Springfield", "zip": "12345"}
    assert shop.call("update_address", {"order_id": "O-5007", "address": new})["ok"] is True
    assert state.orders["O-5007"].shipping_address.city == "Springfield"
    before = state.orders["O-5008"].shipping_address
    assert (
        _code(shop.call("update_address", {"order_id": "O-5008", "address": new})) == "order_already_shipped"
    )
    assert state.orders["O-5008"].shipping_address == before


def test_refund_rules_amount_delivery_and_processor_limit() -> None:
    state = base_shop()
    shop = _backend(state)
    # O-5006: paid 88.00, 30.00 already refunded -> at most 58.00 more
    assert _code(shop.call("refund", {"order_id": "O-5006", "amount": 58.01})) == "amount_too_high"
    assert shop.call("refund", {"order_id": "O-5006", "amount": 58.0})["ok"] is True
    assert state.orders["O-5006"].refunded_cents == 8800
    assert [(r.order_id, r.amount_cents, r.id) for r in state.refunds] == [("O-5006", 5800, "R-0001")]
    assert _code(shop.call("refund", {"order_id": "O-5006", "amount": 0.01})) == "amount_too_high"
    assert _code(shop.call("refund", {"order_id": "O-5002", "amount": 10})) == "order_not_delivered"
    assert _code(shop.call("refund", {"order_id": "O-5003", "amount": -5})) == "invalid_arguments"
    # the backend accepts a 45-day-old refund (the 30-day window is policy), but not past the processor limit
    assert shop.call("refund", {"order_id": "O-5004", "amount": 1.0})["ok"] is True
    late = base_shop()
    delivered = late.orders["O-5004"].delivered_on
    assert delivered is not None
    late.as_of = delivered + timedelta(days=PROCESSOR_REFUND_LIMIT_DAYS + 1)
    assert (
        _code(_backend(late).call("refund", {"order_id": "O-5004", "amount": 1.0}))
        == "refund_window_exceeded"
    )
    assert late.refunds == []


def test_escalation_creates_a_ticket() -> None:
    state = base_shop()
    shop = _backend(state)
    res = shop.call(
        "escalate_to_human",
        {"category": "damaged_item", "summary": "vase broken", "customer_id": "C-105", "order_id": "O-5011"},
    )
    assert res == {"ok": True, "ticket_id": "E-001", "category": "damaged_item"}
    assert state.escalations[0].order_id == "O-5011"
    assert (
        _code(shop.call("escalate_to_human", {"category": "nonsense", "summary": "x"})) == "invalid_arguments"
    )
    assert _code(
        shop.call("escalate_to_human", {"category": "other", "summary": "x", "order_id": "O-1"})
    ) == ("order_not_found")


def test_unknown_tool_is_an_error_result_not_an_exception() -> None:
    assert _code(_backend().call("delete_everything", {})) == "unknown_tool"


def test_transient_failures_leave_the_state_untouched() -> None:
    state = base_shop()
    before = state.snapshot()
    shop = _backend(state, failure_rate=1.0, rng=random.Random(1))
    for name, args in [
        ("cancel_order", {"order_id": "O-5001"}),
        ("refund", {"order_id": "O-5003", "amount": 10}),
        ("get_order", {"order_id": "O-5001"}),
    ]:
        assert _code(shop.call(name, args)) == "service_unavailable"
    assert shop.transient_failures == 3
    assert state.snapshot() == before


def test_transient_failure_rate_is_seeded_and_roughly_honoured() -> None:
    def failures(seed: int) -> list[bool]:
        shop = _backend(failure_rate=0.25, rng=random.Random(seed))
        return [not shop.call("get_order", {"order_id": "O-5001"})["ok"] for _ in range(400)]

    assert failures(3) == failures(3)
    assert 0.18 < sum(failures(3)) / 400 < 0.32


def test_forced_failures_hit_exactly_the_named_calls() -> None:
    state = base_shop()
    shop = _backend(state, forced_failures={"cancel_order": (1,)})
    assert _code(shop.call("cancel_order", {"order_id": "O-5001"})) == "service_unavailable"
    assert shop.call("cancel_order", {"order_id": "O-5001"})["ok"] is True
    assert state.orders["O-5001"].status == "cancelled"
