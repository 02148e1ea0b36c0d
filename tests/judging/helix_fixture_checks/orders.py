"""Tiny user checks: the shape a user writes and references as ``package.module:function``."""

from __future__ import annotations

from typing import Any

from helix.judging import CheckOutcome
from helix.traces import Trace


def refund_within_limit(trace: Trace, *, limit: float) -> CheckOutcome:
    """Every refund_order call asks for at most ``limit``."""
    for i, msg in enumerate(trace.messages or []):
        for call in msg.tool_calls:
            if call.name == "refund_order" and isinstance(call.arguments, dict):
                amount = float(call.arguments.get("amount", 0))
                if amount > limit:
                    return CheckOutcome(
                        passed=False,
                        explanation=f"refund_order at message {i} asks for {amount}, above {limit}",
                        evidence=(i,),
                    )
    return CheckOutcome(passed=True, explanation=f"no refund above {limit}")


def has_messages(trace: Trace) -> bool:
    """A check that returns a plain bool."""
    return bool(trace.messages)


def explodes(trace: Trace, **args: Any) -> bool:
    """A broken check: it raises."""
    raise ZeroDivisionError("user check bug")


def returns_nothing(trace: Trace) -> None:
    """A broken check: it returns neither an outcome nor a bool."""


NOT_CALLABLE = 3
