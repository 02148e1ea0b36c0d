"""The support-shop subject as a campaign: scenarios, a dispatch, and produced-state gold.

The shop's persisted records are its deliverables. After a conversation every record the agent
created or changed is reported as a produced event with its body in-band: changed orders and new
refunds as ``artifact`` events (``content`` = the record as canonical JSON), escalations to a human as
``proposal_created`` events (``content`` = the summary handed over, ``attributes`` = the structured
record). The gold of a scenario is the same diff taken over the hand-written gold shop, so a refusal
scenario requires nothing and any action the agent took on it is an *unexpected* deliverable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from .._exceptions import UsageError
from .._util import canonical_json
from ..campaign import (
    CellContext,
    Deliverable,
    DispatchResult,
    ProducedEvent,
    RequiredDeliverable,
    Scenario,
    TaskGold,
)
from ._catalog import base_shop
from ._episodes import run_episode
from ._mistakes import MISTAKE_KINDS, MistakeRates
from ._scenarios import SCENARIOS, ShopScenario, graded_view

__all__ = [
    "SUPPORT_SHOP_AGENT",
    "campaign_scenarios",
    "mistake_profile",
    "shop_correctness_checker",
    "shop_produced_events",
    "shop_task_gold",
    "support_shop_dispatch",
]

SUPPORT_SHOP_AGENT = "helix-examples/scripted-support-agent"
"""What the example dispatch reports as its served model (a scripted agent: no model, no cost)."""

_SECTIONS: tuple[tuple[str, str], ...] = (("orders", "artifact"), ("refunds", "artifact"))


def _changes(state: Mapping[str, Any]) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(kind, key, graded record, full record) for each record that differs from the base shop."""
    base = graded_view(base_shop())
    graded = graded_view(dict(state))
    out: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = []
    for oid, order in graded["orders"].items():
        if base["orders"].get(oid) != order:
            out.append(("artifact", f"orders/{oid}", order, dict(state["orders"][oid])))
    base_refunds = {r["id"] for r in base["refunds"]}
    for graded_row, row in zip(graded["refunds"], state["refunds"], strict=True):
        if graded_row["id"] not in base_refunds:
            out.append(("artifact", f"refunds/{graded_row['id']}", graded_row, dict(row)))
    base_esc = {e["id"] for e in base["escalations"]}
    for graded_row, row in zip(graded["escalations"], state["escalations"], strict=True):
        if graded_row["id"] not in base_esc:
            out.append(("proposal_created", f"escalations/{graded_row['id']}", graded_row, dict(row)))
    return out


def shop_produced_events(state: Mapping[str, Any]) -> list[ProducedEvent]:
    """The produced events of a finished conversation, bodies in-band (see the module docs)."""
    events: list[ProducedEvent] = []
    for kind, key, graded, full in _changes(state):
        if kind == "artifact":
            events.append(
                ProducedEvent(kind="artifact", key=key, content=canonical_json(graded).decode("utf-8"))
            )
        else:
            summary = full.get("summary")
            events.append(
                ProducedEvent(
                    kind="proposal_created",
                    key=key,
                    title=str(graded.get("category")),
                    content=summary if isinstance(summary, str) and summary.strip() else None,
                    attributes=graded,
                )
            )
    return events


def shop_task_gold(scenario: ShopScenario) -> TaskGold:
    """What a scenario requires: exactly the records its gold shop changes or adds."""
    return TaskGold(
        required=tuple(
            RequiredDeliverable(kind=kind, key=key, expected=graded)  # type: ignore[arg-type]
            for kind, key, graded, _ in _changes(scenario.gold_state)
        )
    )


def shop_correctness_checker(required: RequiredDeliverable, produced: Deliverable) -> bool:
    """A record is right when its graded fields equal the gold record (free text is not graded)."""
    if produced.kind == "artifact":
        try:
            body = orjson.loads(produced.content or "")
        except orjson.JSONDecodeError:
            return False
        matched: bool = body == required.expected
        return matched
    same: bool = dict(produced.attributes) == required.expected
    return same


def _gold_json(gold: TaskGold) -> dict[str, Any]:
    return {
        "required": [{"kind": r.kind, "key": r.key, "expected": r.expected} for r in gold.required],
        "allow_unexpected": gold.allow_unexpected,
    }


def campaign_scenarios(ids: list[str] | None = None) -> list[Scenario]:
    """The example scenarios as campaign :class:`~helix.campaign.Scenario` values (all, or ``ids``).

    ``gold`` is the produced-state task gold as JSON (read it back with ``TaskGold.from_json``).
    """
    by_id = {s.id: s for s in SCENARIOS}
    chosen = list(SCENARIOS) if ids is None else []
    for sid in ids or []:
        if sid not in by_id:
            raise UsageError(f"unknown support-shop scenario {sid!r}; choose from {', '.join(by_id)}")
        chosen.append(by_id[sid])
    return [
        Scenario(
            id=s.id,
            input=list(s.customer_messages),
            gold=_gold_json(shop_task_gold(s)),
            metadata={"subject": "support-shop", "kind": s.kind, "title": s.title, "expected": s.expected},
        )
        for s in chosen
    ]


def mistake_profile(profile: str | Mapping[str, float]) -> MistakeRates:
    """A :class:`MistakeRates` from a profile name (``default``, ``none``, a mistake kind) or a mapping."""
    if isinstance(profile, Mapping):
        try:
            return MistakeRates(**profile)
        except TypeError as exc:
            raise UsageError(
                f"bad mistake rates {dict(profile)!r}: {exc}; use MistakeRates field names"
            ) from None
    if profile == "default":
        return MistakeRates()
    if profile == "none":
        return MistakeRates.none()
    if profile in MISTAKE_KINDS:
        return MistakeRates.only(profile)
    raise UsageError(
        f"unknown mistake profile {profile!r}; use 'default', 'none', one of {', '.join(MISTAKE_KINDS)}, "
        "or a mapping of MistakeRates fields"
    )


class _ShopDispatch:
    """Plays the scripted agent for one cell (pure CPU, deterministic in the cell seed)."""

    def __init__(self, rates: MistakeRates) -> None:
        self.rates = rates
        self._by_id = {s.id: s for s in SCENARIOS}

    async def __call__(self, ctx: CellContext, /) -> DispatchResult:
        scenario = self._by_id.get(ctx.scenario.id)
        if scenario is None:
            raise UsageError(
                f"scenario {ctx.scenario.id!r} is not a support-shop scenario; "
                "build scenarios with helix.examples.campaign_scenarios()"
            )
        episode = run_episode(scenario, seed=ctx.seed, rates=self.rates)
        return DispatchResult(
            output=episode.trace.output,
            produced=shop_produced_events(episode.produced_state),
            trace=episode.trace,
            cost_usd=0.0,
            served_model=SUPPORT_SHOP_AGENT,
        )


def support_shop_dispatch(profile: str | Mapping[str, float] | MistakeRates = "default") -> _ShopDispatch:
    """The campaign dispatch of the example: ``run_episode`` with the cell seed and a mistake profile."""
    rates = profile if isinstance(profile, MistakeRates) else mistake_profile(profile)
    return _ShopDispatch(rates)
