"""run_agent_matrix (the bare scheduler) and run_eval_campaign (capture handed to the runner)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from helix import RunError, UsageError
from helix.campaign import (
    EvalCampaignContext,
    FinishedCell,
    Scenario,
    run_agent_matrix,
    run_agent_matrix_sync,
    run_eval_campaign,
)


def test_agent_matrix_is_cartesian_ordered_and_bounded() -> None:
    state = {"now": 0, "peak": 0}

    async def fn(coords: Mapping[str, Any]) -> str:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.001 * (3 - coords["rep"]))  # later cells finish first
        state["now"] -= 1
        if coords["model"] == "b" and coords["rep"] == 1:
            raise ValueError("cell failed")
        return f"{coords['model']}-{coords['prompt']}-{coords['rep']}"

    axes = {"model": ["a", "b"], "prompt": ["p", "q"], "rep": [0, 1, 2]}
    cells = run_agent_matrix_sync(axes, fn, max_concurrency=4)
    assert len(cells) == 12 and state["peak"] == 4
    assert [c.index for c in cells] == list(range(12))
    assert cells[0].value == "a-p-0" and cells[5].value == "a-q-2"
    failed = [c for c in cells if not c.ok]
    assert [dict(c.coords) for c in failed] == [
        {"model": "b", "prompt": "p", "rep": 1},
        {"model": "b", "prompt": "q", "rep": 1},
    ]
    with pytest.raises(ValueError, match="cell failed"):
        run_agent_matrix_sync(axes, fn, max_concurrency=2, fail_fast=True)
    with pytest.raises(UsageError, match="no values"):
        asyncio.run(run_agent_matrix({"model": []}, fn))


SCENARIOS = [
    Scenario(id="write-report", input="write it", gold="report.md"),
    Scenario(id="idle", input="nothing"),
]


async def runner(ctx: EvalCampaignContext) -> str:
    ctx.trace.event("agent", "plan", input=ctx.cell.scenario.input)
    ctx.emitter.paid(
        served_model="agent-2026-01-01", cost_usd=0.125, call_id=f"call-{ctx.cell.cell_id}", input_tokens=10
    )
    if ctx.cell.scenario.gold:
        ctx.sink.emit("artifact", "report.md", content="# Report\nall good")
    return "finished"


def produced_report(cell: FinishedCell) -> float | None:
    if cell.gold is None:
        return None
    return 1.0 if any(p["key"] == cell.gold and p["content"] for p in cell.produced) else 0.0


def test_eval_campaign_builds_the_dispatch_result_from_capture(tmp_path: Path) -> None:
    out = asyncio.run(
        run_eval_campaign(SCENARIOS, runner, [produced_report], run_dir=tmp_path, commit="c", reps=2)
    )
    cells = out.campaign.cells
    assert all(c.status == "ok" for c in cells)
    first = cells[0]
    assert first.trace is not None and [e.kind for e in first.trace.events] == ["agent", "llm"]
    assert first.trace.events[1].cost == 0.125 and first.served_model == "agent-2026-01-01"
    assert first.cost_usd == 0.125 and first.call_ids == ("call-write-report@r0",)
    assert first.produced[0]["content"].startswith("# Report")
    assert out.campaign.aggregates.by_scorer["produced_report"].n == 2  # idle scenario unmeasured
    assert [(r.cell_id, r.events, r.produced, r.paid_calls) for r in out.records][:2] == [
        ("write-report@r0", 2, 1, 1),
        ("write-report@r1", 2, 1, 1),
    ]


def test_integrity_checks_gate_the_start(tmp_path: Path) -> None:
    calls: list[str] = []

    async def counting(ctx: EvalCampaignContext) -> str:
        calls.append(ctx.cell.cell_id)
        return await runner(ctx)

    def backend_is_real() -> list[str]:
        return ["backend points at a stub, not the real service"]

    with pytest.raises(UsageError, match="backend_is_real: backend points at a stub"):
        asyncio.run(
            run_eval_campaign(
                SCENARIOS,
                counting,
                [produced_report],
                run_dir=tmp_path,
                commit="c",
                integrity_checks=[backend_is_real],
            )
        )
    assert calls == [] and not (tmp_path / "cells").exists()


def test_capture_is_sealed_and_an_empty_trace_fails_the_cell(tmp_path: Path) -> None:
    leaked: list[EvalCampaignContext] = []

    async def silent(ctx: EvalCampaignContext) -> str:
        leaked.append(ctx)
        return "did nothing visible"

    out = asyncio.run(
        run_eval_campaign(SCENARIOS[:1], silent, [produced_report], run_dir=tmp_path, commit="c")
    )
    cell = out.campaign.cells[0]
    assert cell.status == "failed" and cell.stage == "dispatch"
    assert cell.error is not None and "without recording a single trace event" in cell.error.message
    with pytest.raises(RunError, match="sealed"):
        leaked[0].trace.event("tool", "late")
