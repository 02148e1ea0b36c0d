"""What the scripted agent can get wrong, and how often: the mistake kinds and their per-run rates."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Literal

from .._exceptions import UsageError

__all__ = ["MISTAKE_KINDS", "MistakeKind", "MistakeRates"]

MistakeKind = Literal[
    "acts_before_verifying",
    "refund_outside_window",
    "false_claim",
    "ignores_tool_error",
    "gives_up_early",
    "repeats_tool_call",
]
MISTAKE_KINDS: tuple[MistakeKind, ...] = (
    "acts_before_verifying",
    "refund_outside_window",
    "false_claim",
    "ignores_tool_error",
    "gives_up_early",
    "repeats_tool_call",
)


@dataclass(frozen=True, kw_only=True)
class MistakeRates:
    """Per-run probabilities of each mistake, plus the backend's transient failure rate per tool call.

    The defaults give a realistic mix: roughly 40% of runs over the fourteen scenarios contain at least
    one mistake. :meth:`none` is the policy-perfect agent on a healthy backend.
    """

    acts_before_verifying: float = 0.12
    """Skips the identity check and goes straight to the order."""
    refund_outside_window: float = 0.5
    """Refunds although delivery was more than 30 days ago (only reachable in that situation)."""
    false_claim: float = 0.12
    """Says it cancelled / refunded / changed / escalated without making the tool call."""
    ignores_tool_error: float = 0.4
    """Treats a failed tool call as a success and carries on (only reachable when a call fails)."""
    gives_up_early: float = 0.08
    """Stops before resolving or escalating and sends the customer elsewhere."""
    repeats_tool_call: float = 0.08
    """Repeats its first lookup twice more with identical arguments (a loop)."""
    transient_tool_failure: float = 0.03
    """Not an agent mistake: the chance that any tool call fails with ``service_unavailable``."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int | float) or math.isnan(value) or not 0.0 <= value <= 1.0:
                raise UsageError(
                    f"MistakeRates.{f.name}={value!r} is not a probability; use a number in [0, 1]"
                )

    @classmethod
    def none(cls) -> MistakeRates:
        """No mistakes and no transient failures: the agent follows the policy exactly."""
        return cls(**{f.name: 0.0 for f in fields(cls)})

    @classmethod
    def only(cls, kind: MistakeKind, rate: float = 1.0) -> MistakeRates:
        """Just one mistake kind at ``rate``; everything else (transient failures too) off."""
        if kind not in MISTAKE_KINDS:
            raise UsageError(f"unknown mistake kind {kind!r}; use one of {', '.join(MISTAKE_KINDS)}")
        return cls(**{**{f.name: 0.0 for f in fields(cls)}, kind: rate})
