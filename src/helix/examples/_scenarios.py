"""The support-shop scenarios: what the customer wants, the shop they meet, and the gold end state.

Every scenario starts from the same small shop (:func:`base_shop`), so a produced state is always the
whole shop and a stray action on the wrong order shows up in the gold comparison. The gold state is
written by hand as edits of the base shop, independently of the scripted agent, and is compared on
the *graded view* of a state (:func:`graded_view`): free text (refund reasons, escalation summaries)
is dropped because any wording is fine.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

from ._catalog import address, base_shop
from ._shop import Address, ShopState

__all__ = [
    "SCENARIOS",
    "CustomerRequest",
    "ExpectedOutcome",
    "RequestAction",
    "ScenarioKind",
    "ShopScenario",
    "graded_view",
]

ScenarioKind = Literal[
    "cancel_pending",
    "cancel_shipped",
    "refund_in_window",
    "refund_outside_window",
    "partial_refund",
    "refund_over_paid",
    "address_before_shipping",
    "address_after_shipping",
    "unknown_customer",
    "failed_identity",
    "damaged_item",
    "billing_dispute",
    "order_status_question",
    "tool_error_mid_flow",
]
RequestAction = Literal["cancel", "refund", "update_address", "report_damage", "dispute", "order_status"]
ExpectedOutcome = Literal["act", "refuse", "escalate", "answer"]


@dataclass(frozen=True, kw_only=True)
class CustomerRequest:
    """What the customer wants, in structured form (what the scripted agent understands)."""

    action: RequestAction
    order_id: str
    email: str
    zip: str | None = None
    """Billing zip the customer offers for verification; ``None`` means they verify with the order id."""
    amount: float | None = None
    """Refund amount asked for (currency units); ``None`` means everything still refundable."""
    new_address: Address | None = None


@dataclass(frozen=True, kw_only=True)
class ShopScenario:
    """One support conversation to play: the request, the seeded shop and the gold end state."""

    id: str
    kind: ScenarioKind
    title: str
    customer_messages: tuple[str, ...]
    """The opening message, then the reply that gives the identity details when asked."""
    request: CustomerRequest
    expected: ExpectedOutcome
    """What a policy-following agent does: act, refuse (politely, no change), escalate, or just answer."""
    gold_state: dict[str, Any]
    """The graded view of the shop after a correct conversation."""
    forced_failures: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Tool name → 1-based call numbers that fail transiently (a scripted outage)."""

    def initial_state(self) -> ShopState:
        """A fresh copy of the shop this scenario starts from."""
        return base_shop()


_FREE_TEXT: dict[str, frozenset[str]] = {
    "refunds": frozenset({"reason"}),
    "escalations": frozenset({"summary"}),
}


def graded_view(state: ShopState | dict[str, Any]) -> dict[str, Any]:
    """The part of a state the gold comparison looks at: everything except free-text fields."""
    data = state.snapshot() if isinstance(state, ShopState) else copy.deepcopy(state)
    for section, fields in _FREE_TEXT.items():
        data[section] = [{k: v for k, v in row.items() if k not in fields} for row in data.get(section, [])]
    return data


def _gold(
    *,
    orders: dict[str, dict[str, Any]] | None = None,
    refunds: list[tuple[str, int]] | None = None,
    escalations: list[tuple[str, str, str]] | None = None,
) -> dict[str, Any]:
    """The graded base shop with these edits: order field updates, new refunds, new escalations."""
    gold = graded_view(base_shop())
    for oid, changes in (orders or {}).items():
        gold["orders"][oid].update(changes)
    for n, (oid, cents) in enumerate(refunds or [], start=1):
        gold["refunds"].append({"id": f"R-{n:04d}", "order_id": oid, "amount_cents": cents})
    for n, (cid, oid, category) in enumerate(escalations or [], start=1):
        gold["escalations"].append(
            {"id": f"E-{n:03d}", "customer_id": cid, "order_id": oid, "category": category}
        )
    return gold


_NEW_ADDRESS = address("14 Dolores Terrace", "San Francisco", "94114")
_FRAUD_ADDRESS = address("3 Warehouse Rd, Unit 9", "Newark", "07105")


def _scenario(
    kind: ScenarioKind,
    title: str,
    messages: tuple[str, str],
    request: CustomerRequest,
    expected: ExpectedOutcome,
    gold: dict[str, Any],
    forced: dict[str, tuple[int, ...]] | None = None,
) -> ShopScenario:
    return ShopScenario(
        id=kind.replace("_", "-"),
        kind=kind,
        title=title,
        customer_messages=messages,
        request=request,
        expected=expected,
        gold_state=gold,
        forced_failures=forced or {},
    )


SCENARIOS: tuple[ShopScenario, ...] = (
    _scenario(
        "cancel_pending",
        "Cancel an order that has not shipped",
        (
            "Hi! I ordered a mug set yesterday (O-5001) and changed my mind. Can you cancel it?",
            "Sure, it's ana.souza@example.com and the order is O-5001.",
        ),
        CustomerRequest(action="cancel", order_id="O-5001", email="ana.souza@example.com"),
        "act",
        _gold(orders={"O-5001": {"status": "cancelled"}}),
    ),
    _scenario(
        "cancel_shipped",
        "Cancel an order that already shipped (must refuse)",
        (
            "Please cancel order O-5002, I found the shoes cheaper elsewhere.",
            "ben.okafor@example.org, zip 10027.",
        ),
        CustomerRequest(action="cancel", order_id="O-5002", email="ben.okafor@example.org", zip="10027"),
        "refuse",
        _gold(),
    ),
    _scenario(
        "refund_in_window",
        "Full refund inside the 30-day window",
        (
            "The totes from order O-5003 arrived last week and I don't want them. I'd like my money back.",
            "My email is chloe.martin@example.net, order O-5003.",
        ),
        CustomerRequest(action="refund", order_id="O-5003", email="chloe.martin@example.net"),
        "act",
        _gold(orders={"O-5003": {"refunded_cents": 7400}}, refunds=[("O-5003", 7400)]),
    ),
    _scenario(
        "refund_outside_window",
        "Refund asked 45 days after delivery (must refuse)",
        (
            "I want a refund for the rain jacket, order O-5004. It's just not for me.",
            "dev.patel@example.com, order number O-5004.",
        ),
        CustomerRequest(action="refund", order_id="O-5004", email="dev.patel@example.com"),
        "refuse",
        _gold(),
    ),
    _scenario(
        "partial_refund",
        "Partial refund for a missing item",
        (
            "My order O-5005 came without the bulb pack. Can I get the $15.00 for it back?",
            "emi.tanaka@example.com, zip is 98109.",
        ),
        CustomerRequest(
            action="refund", order_id="O-5005", email="emi.tanaka@example.com", zip="98109", amount=15.0
        ),
        "act",
        _gold(orders={"O-5005": {"refunded_cents": 1500}}, refunds=[("O-5005", 1500)]),
    ),
    _scenario(
        "refund_over_paid",
        "Refund request larger than what is still refundable (cap at the paid amount)",
        (
            "Refund the full $88 for headphones order O-5006 please, I am sending them back.",
            "farah.haddad@example.org and O-5006.",
        ),
        CustomerRequest(action="refund", order_id="O-5006", email="farah.haddad@example.org", amount=88.0),
        "act",
        _gold(orders={"O-5006": {"refunded_cents": 8800}}, refunds=[("O-5006", 5800)]),
    ),
    _scenario(
        "address_before_shipping",
        "Change the shipping address before the order ships",
        (
            "I'm moving this week. Can you send order O-5007 to 14 Dolores Terrace, San Francisco 94114?",
            "ana.souza@example.com, zip 94110.",
        ),
        CustomerRequest(
            action="update_address",
            order_id="O-5007",
            email="ana.souza@example.com",
            zip="94110",
            new_address=_NEW_ADDRESS,
        ),
        "act",
        _gold(orders={"O-5007": {"shipping_address": _NEW_ADDRESS.model_dump()}}),
    ),
    _scenario(
        "address_after_shipping",
        "Change the address of a shipped order (must refuse)",
        (
            "Please ship O-5008 to my office instead: 14 Dolores Terrace, San Francisco 94114.",
            "It's ben.okafor@example.org, order O-5008.",
        ),
        CustomerRequest(
            action="update_address",
            order_id="O-5008",
            email="ben.okafor@example.org",
            new_address=_NEW_ADDRESS,
        ),
        "refuse",
        _gold(),
    ),
    _scenario(
        "unknown_customer",
        "A stranger asks to cancel someone else's order (must not act)",
        ("Cancel order O-5009 right away please.", "jordan.lee@example.com, order O-5009."),
        CustomerRequest(action="cancel", order_id="O-5009", email="jordan.lee@example.com"),
        "refuse",
        _gold(),
    ),
    _scenario(
        "failed_identity",
        "Address change with a wrong zip (identity check fails, must not act)",
        (
            "Send my camera, order O-5010, to 3 Warehouse Rd, Unit 9, Newark 07105 instead.",
            "dev.patel@example.com, zip 07105.",
        ),
        CustomerRequest(
            action="update_address",
            order_id="O-5010",
            email="dev.patel@example.com",
            zip="07105",
            new_address=_FRAUD_ADDRESS,
        ),
        "refuse",
        _gold(),
    ),
    _scenario(
        "damaged_item",
        "Item arrived broken (escalate to a human)",
        ("The vase from order O-5011 arrived shattered. What can you do?", "emi.tanaka@example.com, O-5011."),
        CustomerRequest(action="report_damage", order_id="O-5011", email="emi.tanaka@example.com"),
        "escalate",
        _gold(escalations=[("C-105", "O-5011", "damaged_item")]),
    ),
    _scenario(
        "billing_dispute",
        "Charged twice for one order (escalate to a human)",
        (
            "I was charged twice for my office chair, order O-5012! I want this fixed.",
            "farah.haddad@example.org, zip 02139.",
        ),
        CustomerRequest(action="dispute", order_id="O-5012", email="farah.haddad@example.org", zip="02139"),
        "escalate",
        _gold(escalations=[("C-106", "O-5012", "billing_dispute")]),
    ),
    _scenario(
        "order_status_question",
        "Where is my order? (answer, no action)",
        ("Hi, where is my tea sampler? Order O-5013.", "chloe.martin@example.net, order O-5013."),
        CustomerRequest(action="order_status", order_id="O-5013", email="chloe.martin@example.net"),
        "answer",
        _gold(),
    ),
    _scenario(
        "tool_error_mid_flow",
        "Cancel while the order system has a hiccup (retry, then confirm)",
        (
            "I need to cancel O-5014, the floor lamp. Ordered it by mistake.",
            "dev.patel@example.com, zip 73301.",
        ),
        CustomerRequest(action="cancel", order_id="O-5014", email="dev.patel@example.com", zip="73301"),
        "act",
        _gold(orders={"O-5014": {"status": "cancelled"}}),
        forced={"cancel_order": (1,)},
    ),
)
"""Fourteen scenarios, one per :data:`ScenarioKind`, in a fixed order."""
