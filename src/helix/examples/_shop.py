"""The simulated shop backend: customers, orders, refunds and escalations, and the six support tools.

Everything is in memory and deterministic. Money is kept in integer cents; tool arguments and results
are plain JSON values (amounts in the arguments are decimal currency units, as a model would write
them). A tool never raises for a bad request: it returns ``{"ok": false, "error": {"code", "message"}}``
the way a real API answers, so the agent (and the trace) sees realistic failures.

The backend enforces hard business rules only (an order that shipped cannot be cancelled, a refund
cannot exceed what was paid, the payment processor refuses refunds more than
:data:`PROCESSOR_REFUND_LIMIT_DAYS` after delivery). The stricter support *policy* (identity checks,
the 30-day refund window, when to escalate) is the agent's job and is what the criteria judge.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "PROCESSOR_REFUND_LIMIT_DAYS",
    "SHOP_STATE_VERSION",
    "TOOL_NAMES",
    "TOOL_SPECS",
    "Address",
    "Customer",
    "Escalation",
    "EscalationCategory",
    "Order",
    "OrderItem",
    "OrderStatus",
    "Refund",
    "ShopBackend",
    "ShopState",
    "ToolErrorCode",
    "ToolName",
]

SHOP_STATE_VERSION = 1
PROCESSOR_REFUND_LIMIT_DAYS = 90
"""The payment processor rejects refunds later than this after delivery (the policy window is shorter)."""

OrderStatus = Literal["pending", "processing", "shipped", "delivered", "cancelled"]
EscalationCategory = Literal["damaged_item", "billing_dispute", "outside_policy", "other"]
ToolName = Literal[
    "find_customer", "get_order", "cancel_order", "refund", "update_address", "escalate_to_human"
]
TOOL_NAMES: tuple[ToolName, ...] = (
    "find_customer",
    "get_order",
    "cancel_order",
    "refund",
    "update_address",
    "escalate_to_human",
)
ToolErrorCode = Literal[
    "customer_not_found",
    "verification_failed",
    "order_not_found",
    "order_already_shipped",
    "order_cancelled",
    "order_not_delivered",
    "refund_window_exceeded",
    "amount_too_high",
    "invalid_arguments",
    "unknown_tool",
    "service_unavailable",
]
_OPEN_STATUSES: frozenset[str] = frozenset({"pending", "processing"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Address(_Model):
    """A shipping address."""

    line1: str
    city: str
    zip: str
    country: str = "US"


class OrderItem(_Model):
    """One line of an order."""

    sku: str
    name: str
    quantity: int = Field(ge=1)
    unit_price_cents: int = Field(ge=0)


class Customer(_Model):
    """A shop customer. ``zip`` is the billing zip used as an identity check."""

    id: str
    name: str
    email: str
    zip: str


class Order(_Model):
    """An order with its lifecycle dates and money."""

    id: str
    customer_id: str
    status: OrderStatus
    placed_on: date
    shipped_on: date | None = None
    delivered_on: date | None = None
    items: tuple[OrderItem, ...]
    total_cents: int = Field(ge=0)
    refunded_cents: int = Field(default=0, ge=0)
    shipping_address: Address


class Refund(_Model):
    """A refund issued through the ``refund`` tool."""

    id: str
    order_id: str
    amount_cents: int
    reason: str


class Escalation(_Model):
    """A hand-off to a human agent created through ``escalate_to_human``."""

    id: str
    customer_id: str | None
    order_id: str | None
    category: EscalationCategory
    summary: str


class ShopState(_Model):
    """The whole backend: the JSON of this model is an episode's produced state."""

    version: int = SHOP_STATE_VERSION
    as_of: date
    """The shop's "today": refund windows are counted up to this date."""
    customers: dict[str, Customer]
    orders: dict[str, Order]
    refunds: list[Refund] = Field(default_factory=list)
    escalations: list[Escalation] = Field(default_factory=list)

    def snapshot(self) -> dict[str, Any]:
        """The state as a JSON-able dict."""
        return self.model_dump(mode="json")


# --- tool argument models (what a call must carry) ---------------------------------------------------


class _FindCustomerArgs(_Model):
    email: str
    order_id: str | None = None
    zip: str | None = None


class _OrderArgs(_Model):
    order_id: str


class _CancelArgs(_Model):
    order_id: str
    reason: str = ""


class _RefundArgs(_Model):
    order_id: str
    amount: float = Field(gt=0)
    reason: str = ""


class _AddressArgs(_Model):
    order_id: str
    address: Address


class _EscalateArgs(_Model):
    category: EscalationCategory
    summary: str = Field(min_length=1)
    customer_id: str | None = None
    order_id: str | None = None


_ARG_MODELS: dict[str, type[_Model]] = {
    "find_customer": _FindCustomerArgs,
    "get_order": _OrderArgs,
    "cancel_order": _CancelArgs,
    "refund": _RefundArgs,
    "update_address": _AddressArgs,
    "escalate_to_human": _EscalateArgs,
}

_DESCRIPTIONS: dict[str, str] = {
    "find_customer": "Look up a customer by email and verify them with an order id or billing zip.",
    "get_order": "Read an order: status, dates, items, amounts and shipping address.",
    "cancel_order": "Cancel an order that has not shipped yet.",
    "refund": "Refund part or all of a delivered order's paid amount (amount in dollars).",
    "update_address": "Change the shipping address of an order that has not shipped yet.",
    "escalate_to_human": "Hand the case to a human agent with a category and a summary.",
}

TOOL_SPECS: tuple[dict[str, Any], ...] = tuple(
    {
        "type": "function",
        "function": {
            "name": name,
            "description": _DESCRIPTIONS[name],
            "parameters": _ARG_MODELS[name].model_json_schema(),
        },
    }
    for name in TOOL_NAMES
)
"""OpenAI-style function specs of the six tools, for driving the shop with a real model."""


def _error(code: ToolErrorCode, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}


def _cents(amount: float) -> int:
    return round(amount * 100)


class ShopBackend:
    """Executes tool calls against a :class:`ShopState`, mutating it.

    ``failure_rate`` is the probability that any call fails transiently (``service_unavailable``,
    state untouched) and ``rng`` draws those failures; ``forced_failures`` maps a tool name to the
    1-based call numbers that fail transiently no matter what (a scenario's scripted outage).
    """

    def __init__(
        self,
        state: ShopState,
        *,
        failure_rate: float = 0.0,
        rng: random.Random | None = None,
        forced_failures: Mapping[str, tuple[int, ...]] | None = None,
    ) -> None:
        self.state = state
        self._failure_rate = failure_rate
        self._rng = rng if rng is not None else random.Random(0)
        self._forced = dict(forced_failures or {})
        self._calls: dict[str, int] = {}
        self.transient_failures = 0
        self._handlers: dict[str, Callable[[Any], dict[str, Any]]] = {
            "find_customer": self._find_customer,
            "get_order": self._get_order,
            "cancel_order": self._cancel_order,
            "refund": self._refund,
            "update_address": self._update_address,
            "escalate_to_human": self._escalate,
        }

    def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Run one tool call and return its JSON result (never raises for a bad request)."""
        if name not in self._handlers:
            return _error("unknown_tool", f"no tool named {name!r}; available: {', '.join(TOOL_NAMES)}")
        count = self._calls[name] = self._calls.get(name, 0) + 1
        draw = self._rng.random()  # always drawn, so the failure stream does not depend on outcomes
        if count in self._forced.get(name, ()) or draw < self._failure_rate:
            self.transient_failures += 1
            return _error("service_unavailable", f"{name} timed out upstream; nothing was changed, retry")
        try:
            args = _ARG_MODELS[name].model_validate(dict(arguments))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            return _error("invalid_arguments", f"{name}: {problems}")
        return self._handlers[name](args)

    # --- handlers -------------------------------------------------------------------------------------

    def _order(self, order_id: str) -> Order | None:
        return self.state.orders.get(order_id.strip().upper())

    def _find_customer(self, args: _FindCustomerArgs) -> dict[str, Any]:
        email = args.email.strip().lower()
        customer = next((c for c in self.state.customers.values() if c.email == email), None)
        if customer is None:
            return _error("customer_not_found", f"no customer with email {args.email!r}")
        if args.order_id is None and args.zip is None:
            return _error("invalid_arguments", "give order_id or zip to verify the customer")
        order = self._order(args.order_id) if args.order_id is not None else None
        by_order = order is not None and order.customer_id == customer.id
        by_zip = args.zip is not None and args.zip.strip() == customer.zip
        if not (by_order or by_zip):
            return _error("verification_failed", "the order id or zip does not match this customer")
        order_ids = sorted(o.id for o in self.state.orders.values() if o.customer_id == customer.id)
        return {
            "ok": True,
            "verified": True,
            "customer": {"id": customer.id, "name": customer.name, "email": customer.email},
            "order_ids": order_ids,
        }

    def _get_order(self, args: _OrderArgs) -> dict[str, Any]:
        order = self._order(args.order_id)
        if order is None:
            return _error("order_not_found", f"no order {args.order_id!r}")
        return {"ok": True, "as_of": self.state.as_of.isoformat(), "order": order.model_dump(mode="json")}

    def _cancel_order(self, args: _CancelArgs) -> dict[str, Any]:
        order = self._order(args.order_id)
        if order is None:
            return _error("order_not_found", f"no order {args.order_id!r}")
        if order.status == "cancelled":
            return _error("order_cancelled", f"order {order.id} is already cancelled")
        if order.status not in _OPEN_STATUSES:
            return _error(
                "order_already_shipped", f"order {order.id} is {order.status}; it cannot be cancelled"
            )
        order.status = "cancelled"
        return {"ok": True, "order_id": order.id, "status": order.status}

    def _refund(self, args: _RefundArgs) -> dict[str, Any]:
        order = self._order(args.order_id)
        if order is None:
            return _error("order_not_found", f"no order {args.order_id!r}")
        if order.status != "delivered" or order.delivered_on is None:
            return _error("order_not_delivered", f"order {order.id} is {order.status}; only delivered orders")
        days = (self.state.as_of - order.delivered_on).days
        if days > PROCESSOR_REFUND_LIMIT_DAYS:
            return _error(
                "refund_window_exceeded",
                f"delivered {days} days ago; the processor accepts refunds up to "
                f"{PROCESSOR_REFUND_LIMIT_DAYS} days",
            )
        amount = _cents(args.amount)
        remaining = order.total_cents - order.refunded_cents
        if amount > remaining:
            return _error(
                "amount_too_high",
                f"requested {amount / 100:.2f} but only {remaining / 100:.2f} of the payment is refundable",
            )
        refund = Refund(
            id=f"R-{len(self.state.refunds) + 1:04d}",
            order_id=order.id,
            amount_cents=amount,
            reason=args.reason,
        )
        self.state.refunds.append(refund)
        order.refunded_cents += amount
        return {"ok": True, "refund_id": refund.id, "order_id": order.id, "amount": amount / 100}

    def _update_address(self, args: _AddressArgs) -> dict[str, Any]:
        order = self._order(args.order_id)
        if order is None:
            return _error("order_not_found", f"no order {args.order_id!r}")
        if order.status == "cancelled":
            return _error("order_cancelled", f"order {order.id} is cancelled")
        if order.status not in _OPEN_STATUSES:
            return _error("order_already_shipped", f"order {order.id} is {order.status}; address is final")
        order.shipping_address = args.address
        return {"ok": True, "order_id": order.id, "shipping_address": args.address.model_dump()}

    def _escalate(self, args: _EscalateArgs) -> dict[str, Any]:
        if args.order_id is not None and self._order(args.order_id) is None:
            return _error("order_not_found", f"no order {args.order_id!r}")
        ticket = Escalation(
            id=f"E-{len(self.state.escalations) + 1:03d}",
            customer_id=args.customer_id,
            order_id=args.order_id,
            category=args.category,
            summary=args.summary,
        )
        self.state.escalations.append(ticket)
        return {"ok": True, "ticket_id": ticket.id, "category": ticket.category}
