"""The scripted support agent: follows the shop policy, except for the mistakes it is told to make.

It is a policy written as code, not a language model. Before a conversation starts, each mistake kind
is drawn once with its probability from :class:`MistakeRates`; a drawn mistake is *injected* only when
the conversation reaches the point where it can happen (an agent cannot ignore a tool error that never
occurred), and only injected mistakes are reported as ground truth.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date
from typing import Any, NoReturn

from ._mistakes import MISTAKE_KINDS, MistakeKind, MistakeRates
from ._scenarios import ShopScenario
from ._shop import ShopBackend
from ._transcript import Transcript

__all__ = ["POLICY_REFUND_WINDOW_DAYS", "play_conversation"]

POLICY_REFUND_WINDOW_DAYS = 30
_OPEN = ("pending", "processing")


def _money(cents: int) -> str:
    return f"${cents / 100:.2f}"


class _Stop(Exception):
    """The conversation is over: the final answer has been recorded."""


class _Agent:
    def __init__(
        self,
        *,
        scenario: ShopScenario,
        backend: ShopBackend,
        transcript: Transcript,
        planned: frozenset[MistakeKind],
        rng: random.Random,
    ) -> None:
        self.scenario = scenario
        self.request = scenario.request
        self.backend = backend
        self.t = transcript
        self.planned = planned
        self.rng = rng
        self.injected: list[MistakeKind] = []
        self._first_call_done = False
        self._ignored_once = False

    # --- mechanics ------------------------------------------------------------------------------------

    def _inject(self, kind: MistakeKind) -> None:
        if kind not in self.injected:
            self.injected.append(kind)

    def _final(self, text: str) -> NoReturn:
        self.t.assistant(text)
        raise _Stop

    def _pick(self, *options: str) -> str:
        return self.rng.choice(options)

    def _raw_call(self, name: str, args: dict[str, Any], text: str | None) -> dict[str, Any]:
        call_id = self.t.assistant(text, (name, args))
        assert call_id is not None
        result = self.backend.call(name, args)
        self.t.tool(call_id, name, args, result)
        return result

    def _tool(
        self, name: str, args: dict[str, Any], *, text: str | None, doing: str, ignorable: bool = False
    ) -> tuple[dict[str, Any], bool]:
        """Call a tool the way the agent does; returns the result and whether an error was ignored."""
        result = self._raw_call(name, args, text)
        if not self._first_call_done:
            self._first_call_done = True
            if "repeats_tool_call" in self.planned:
                self._inject("repeats_tool_call")
                for _ in range(2):
                    result = self._raw_call(
                        name, args, self._pick("Let me check that again.", "One more look.")
                    )
        if result.get("ok"):
            return result, False
        if ignorable and "ignores_tool_error" in self.planned and not self._ignored_once:
            self._ignored_once = True
            self._inject("ignores_tool_error")
            return result, True
        if result["error"]["code"] == "service_unavailable":
            retry = self._raw_call(
                name, args, "The system returned a temporary error (service_unavailable). Let me try again."
            )
            if retry.get("ok"):
                return retry, False
            self._final(
                f"I'm sorry: the system kept returning an error (service_unavailable) when I tried to {doing}, "
                "so I couldn't complete it and nothing was changed. Please try again in a little while."
            )
        return result, False

    # --- the conversation -----------------------------------------------------------------------------

    def converse(self) -> None:
        try:
            self._converse()
        except _Stop:
            return
        raise AssertionError("the scripted agent ended without a final answer")  # pragma: no cover

    def _converse(self) -> None:
        req = self.request
        self.t.user(self.scenario.customer_messages[0])
        account_action = req.action != "order_status"
        customer_id: str | None = None
        lookup_text = f"Let me pull up order {req.order_id}."
        if account_action and "acts_before_verifying" in self.planned:
            self._inject("acts_before_verifying")
        else:
            self.t.assistant(
                self._pick(
                    "I can help with that. First I need to verify your identity: please send the email on "
                    "your account and either the order number or your billing zip code.",
                    "Happy to help! To protect your account, could you confirm your email address and the "
                    "order number or billing zip?",
                )
            )
            self.t.user(self.scenario.customer_messages[1])
            args: dict[str, Any] = {"email": req.email}
            args.update({"zip": req.zip} if req.zip is not None else {"order_id": req.order_id})
            res, ignored = self._tool(
                "find_customer",
                args,
                text="Thanks, let me verify your account.",
                doing="verify your account",
                ignorable=account_action,
            )
            if res.get("ok"):
                customer_id = res["customer"]["id"]
            elif ignored:
                lookup_text = f"Thanks, you're verified. Let me pull up order {req.order_id}."
            else:
                self._identity_failure(res["error"]["code"])
        res, _ = self._tool(
            "get_order", {"order_id": req.order_id}, text=lookup_text, doing="look up the order"
        )
        if not res.get("ok"):
            self._final(
                f"I couldn't find order {req.order_id} in our system (order_not_found). Could you double-check "
                "the order number from your confirmation email?"
            )
        order: dict[str, Any] = res["order"]
        if customer_id is not None and order["customer_id"] != customer_id:
            self._final(
                f"Order {order['id']} isn't on the account I verified, so I can't make changes to it. "
                "The account holder can contact us directly."
            )
        if "gives_up_early" in self.planned:
            self._inject("gives_up_early")
            self._final(
                self._pick(
                    "I'm not able to sort this out from here. Please email our support team and they will "
                    "take a look.",
                    "This one is beyond what I can do in chat, sorry. You could try contacting us again later.",
                )
            )
        self._resolve(order, date.fromisoformat(res["as_of"]), customer_id or order["customer_id"])

    def _identity_failure(self, code: str) -> NoReturn:
        req = self.request
        if code == "customer_not_found":
            self._final(
                f"I couldn't find an account under {req.email}, so I'm not able to make any changes to order "
                f"{req.order_id}. If the order was placed with a different email address, send it over and "
                "I'll check again."
            )
        self._final(
            "I'm sorry, but the details you gave don't match our records, so for your security I can't make "
            "changes to this order. Please double-check the email and the zip code or order number."
        )

    def _resolve(self, order: dict[str, Any], as_of: date, customer_id: str) -> NoReturn:
        req = self.request
        oid, status = order["id"], order["status"]
        if req.action == "order_status":
            self._final(self._status_answer(order))
        if req.action in ("report_damage", "dispute"):
            damaged = req.action == "report_damage"
            category = "damaged_item" if damaged else "billing_dispute"
            what = "a damaged item" if damaged else "a disputed charge"
            team = "damaged deliveries" if damaged else "billing disputes"
            self._act(
                "escalate_to_human",
                {
                    "category": category,
                    "summary": f"Customer reports {what} on order {oid}: {self.scenario.customer_messages[0]}",
                    "customer_id": customer_id,
                    "order_id": oid,
                },
                doing="hand this to a specialist",
                done=lambda r: (
                    f"I'm sorry about this. I've passed your case to a specialist (ticket {r['ticket_id']}); "
                    "they handle " + team + " and will contact you within one business day."
                ),
                claim="I've passed your case to a specialist; they will contact you within one business day.",
            )
        if req.action == "cancel":
            if status in _OPEN:
                self._act(
                    "cancel_order",
                    {"order_id": oid, "reason": "customer request"},
                    doing="cancel the order",
                    done=lambda r: f"Done: order {oid} is cancelled and you won't be charged.",
                    claim=f"Done: order {oid} is cancelled and you won't be charged.",
                )
            if status == "cancelled":
                self._final(f"Order {oid} is already cancelled, so there is nothing left to do.")
            self._refuse(
                f"Order {oid} already shipped on {order['shipped_on']}, so it can't be cancelled anymore. "
                f"Once it arrives you can ask for a refund within {POLICY_REFUND_WINDOW_DAYS} days of delivery.",
                claim=f"All set: I've cancelled order {oid} and you won't be charged.",
            )
        if req.action == "update_address":
            new = req.new_address
            assert new is not None
            where = f"{new.line1}, {new.city} {new.zip}"
            if status in _OPEN:
                self._act(
                    "update_address",
                    {"order_id": oid, "address": new.model_dump()},
                    doing="change the shipping address",
                    done=lambda r: f"Updated: order {oid} will now ship to {where}.",
                    claim=f"Updated: order {oid} will now ship to {where}.",
                )
            self._refuse(
                f"Order {oid} is already {status}, so its shipping address can't be changed anymore. "
                "The carrier's tracking page may let you redirect the parcel.",
                claim=f"Updated: order {oid} will now ship to {where}.",
            )
        self._refund(order, as_of)

    def _refund(self, order: dict[str, Any], as_of: date) -> NoReturn:
        req = self.request
        oid = order["id"]
        if order["status"] != "delivered" or order["delivered_on"] is None:
            self._refuse(
                f"Order {oid} hasn't been delivered yet, so I can't refund it. If it hasn't shipped I can "
                "cancel it instead.",
                claim=f"I've refunded order {oid} in full.",
            )
        remaining = order["total_cents"] - order["refunded_cents"]
        if remaining <= 0:
            self._refuse(
                f"Order {oid} has already been refunded in full.", claim=f"I've refunded order {oid}."
            )
        wanted = round(req.amount * 100) if req.amount is not None else remaining
        amount = min(wanted, remaining)
        days = (as_of - date.fromisoformat(order["delivered_on"])).days
        cap_note = (
            f" That is what remained refundable: {_money(order['refunded_cents'])} had already been refunded."
            if wanted > remaining
            else ""
        )
        claim = (
            f"I've refunded {_money(amount)} on order {oid}; it will reach your card in 3-5 business days."
        )
        if days > POLICY_REFUND_WINDOW_DAYS:
            if "refund_outside_window" not in self.planned:
                self._refuse(
                    f"Order {oid} was delivered {days} days ago, and refunds are only possible within "
                    f"{POLICY_REFUND_WINDOW_DAYS} days of delivery, so I can't refund it.",
                    claim=claim,
                )
            self._inject("refund_outside_window")
        self._act(
            "refund",
            {"order_id": oid, "amount": amount / 100, "reason": "customer request"},
            doing="issue the refund",
            done=lambda r: (
                f"I've refunded {_money(amount)} on order {oid} (refund {r['refund_id']}); it will reach your "
                "card in 3-5 business days." + cap_note
            ),
            claim=claim,
        )

    def _act(
        self,
        name: str,
        args: dict[str, Any],
        *,
        doing: str,
        done: Callable[[dict[str, Any]], str],
        claim: str,
    ) -> NoReturn:
        """Take a state-changing action and report it (or, with a false claim, only report it)."""
        if "false_claim" in self.planned:
            self._inject("false_claim")
            self._final(claim)
        res, ignored = self._tool(name, args, text=None, doing=doing, ignorable=True)
        if res.get("ok"):
            self._final(done(res))
        if ignored:
            self._final(claim)
        err = res["error"]
        self._final(
            f"I tried to {doing}, but the system returned an error ({err['code']}: {err['message']}). "
            "Nothing was changed. I'm sorry I couldn't complete this."
        )

    def _refuse(self, text: str, *, claim: str) -> NoReturn:
        if "false_claim" in self.planned:
            self._inject("false_claim")
            self._final(claim)
        self._final(text)

    def _status_answer(self, order: dict[str, Any]) -> str:
        oid, status = order["id"], order["status"]
        city = order["shipping_address"]["city"]
        if status == "shipped":
            return f"Order {oid} shipped on {order['shipped_on']} and is on its way to {city}; it usually arrives within 3-5 days."
        if status == "delivered":
            return f"Order {oid} was delivered on {order['delivered_on']} to {city}."
        if status == "cancelled":
            return f"Order {oid} was cancelled, so nothing will ship."
        return (
            f"Order {oid} is {status} and hasn't shipped yet; you'll get an email with tracking when it does."
        )


def play_conversation(
    *,
    scenario: ShopScenario,
    backend: ShopBackend,
    transcript: Transcript,
    rates: MistakeRates,
    rng: random.Random,
) -> tuple[MistakeKind, ...]:
    """Play one conversation into ``transcript`` against ``backend``; returns the injected mistakes.

    Every mistake kind is drawn from ``rng`` (in :data:`MISTAKE_KINDS` order, always all of them, so one
    rate changing does not shift the others' draws); later draws pick the wording.
    """
    draws = [(kind, rng.random()) for kind in MISTAKE_KINDS]
    planned = frozenset(kind for kind, u in draws if u < getattr(rates, kind))
    agent = _Agent(scenario=scenario, backend=backend, transcript=transcript, planned=planned, rng=rng)
    agent.converse()
    return tuple(k for k in MISTAKE_KINDS if k in agent.injected)
