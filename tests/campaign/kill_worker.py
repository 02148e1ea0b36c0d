"""A campaign run in its own process by test_reliability.py, which kills it with SIGKILL mid-run.

Usage: python kill_worker.py RUN_DIR DISPATCH_LOG. Each dispatch appends its cell id to
DISPATCH_LOG (one O_APPEND write per line) before it does its work, so the test can count
dispatches across the killed run and the resumed one.
"""

from __future__ import annotations

import asyncio
import os
import sys

from helix.campaign import CellContext, DispatchResult, FinishedCell, Scenario, run_campaign_sync

SCENARIOS = [Scenario(id=f"task-{i:02d}", input=i, gold=i % 2) for i in range(20)]
REPS = 3
CONCURRENCY = 4


def main() -> None:
    run_dir, log_path = sys.argv[1], sys.argv[2]
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    async def dispatch(ctx: CellContext) -> DispatchResult:
        os.write(fd, f"{ctx.cell_id}\n".encode())
        await asyncio.sleep(0.02 + (ctx.seed % 5) * 0.01)
        return DispatchResult(
            output=ctx.scenario.input * 3 + ctx.rep,
            cost_usd=0.002,
            served_model="agent-2026-01-01",
            call_ids=[f"call-{ctx.cell_id}-{os.getpid()}"],
        )

    def parity(cell: FinishedCell) -> float:
        return 1.0 if cell.output % 2 == cell.gold else 0.0

    result = run_campaign_sync(
        SCENARIOS,
        dispatch,
        [parity],
        run_dir=run_dir,
        commit="kill-test",
        reps=REPS,
        max_concurrency=CONCURRENCY,
    )
    print(f"done total={result.total} cached={result.cached} dispatched={result.dispatched}")


if __name__ == "__main__":
    main()
