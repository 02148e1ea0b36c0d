"""Type-level checks of the public API, run by ``./run mypy`` (this directory is in its ``files``).

Not a pytest module: nothing here runs. Each deliberately wrong call carries a ``type: ignore`` for
the error it must raise; with ``warn_unused_ignores`` a wrapper that lost its signature (``*args:
Any``) would leave that ignore unused, and mypy would fail.
"""

from __future__ import annotations

from typing import assert_type

from helix.campaign import (
    CampaignResult,
    CellContext,
    DispatchResult,
    EvalCampaignContext,
    Scenario,
    run_agent_matrix_sync,
    run_campaign_sync,
    run_eval_campaign,
    run_eval_sync,
)


async def dispatch(ctx: CellContext) -> DispatchResult:
    return DispatchResult(output=ctx.scenario.input)


async def square(coords: object) -> int:
    return 4


def sync_wrappers_keep_their_signatures() -> None:
    scenarios = [Scenario(id="a")]
    assert_type(run_campaign_sync(scenarios, dispatch, run_dir="r", commit="c", reps=2), CampaignResult)
    assert_type(run_eval_sync(scenarios, dispatch, {}, run_dir="r", commit="c"), CampaignResult)
    run_campaign_sync(scenarios, dispatch, run_dir="r", commit=3)  # type: ignore[arg-type]
    run_campaign_sync(scenarios, dispatch, run_dir="r", commit="c", reps="2")  # type: ignore[arg-type]
    run_campaign_sync(scenarios, dispatch, run_dir="r", comit="c")  # type: ignore[call-arg]
    run_eval_sync(scenarios, dispatch, {}, run_dir="r", commit="c", reps=2)  # type: ignore[call-arg]
    run_eval_sync(scenarios, dispatch, {}, run_dir="r", commit="c", max_concurrency="8")  # type: ignore[arg-type]
    cells = run_agent_matrix_sync({"x": [1, 2]}, square)
    assert_type(cells[0].value, int | None)


async def runner(ctx: EvalCampaignContext) -> str:
    return "done"


async def eval_campaign_options_are_checked() -> None:
    await run_eval_campaign([Scenario(id="a")], runner, {}, run_dir="r", commit="c", reps=2, fsync=True)
    await run_eval_campaign([Scenario(id="a")], runner, {}, run_dir="r", commit="c", rep=2)  # type: ignore[call-arg]
