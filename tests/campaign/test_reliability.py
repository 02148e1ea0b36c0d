"""Reliability: a campaign killed with SIGKILL resumes without re-dispatching or losing a finished cell,
and a campaign against a flaky loopback server (503s, dropped connections, slow answers) completes
with cell_retry while the ledger counts every attempt."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from helix.campaign import (
    CellContext,
    CellResult,
    DispatchResult,
    FinishedCell,
    Scenario,
    cell_retry,
    read_ledger,
    run_campaign,
)
from helix.models import open_model
from helix.models.testing import RecordedRequest, ScriptedLLMServer, ScriptedReply

WORKER = Path(__file__).with_name("kill_worker.py")
TOTAL_CELLS = 20 * 3


def _results(run_dir: Path) -> set[str]:
    return {p.parent.name for p in (run_dir / "cells").glob("*/*.result.json")}


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_sigkill_mid_run_resumes_without_redispatch_or_loss(tmp_path: Path) -> None:
    run_dir, log = tmp_path / "run", tmp_path / "dispatches.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, str(WORKER), str(run_dir), str(log)], env=env)
    deadline = time.monotonic() + 60
    try:
        while len(_results(run_dir)) < 12:  # let some cells finish, then kill mid-run
            assert proc.poll() is None, "the worker finished or died before it could be killed"
            assert time.monotonic() < deadline, "the worker made no progress"
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    finished_before = _results(run_dir)
    assert 12 <= len(finished_before) < TOTAL_CELLS, "the kill did not land mid-run"
    dispatched_before = Counter(log.read_text().split())
    assert all(dispatched_before[c] == 1 for c in finished_before)

    resumed = subprocess.run(
        [sys.executable, str(WORKER), str(run_dir), str(log)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"cached={len(finished_before)}" in resumed.stdout

    dispatches = Counter(log.read_text().split())
    assert len(_results(run_dir)) == TOTAL_CELLS  # none lost
    for cell_id in finished_before:
        assert dispatches[cell_id] == 1, f"{cell_id} finished before the kill but was dispatched again"
    assert set(dispatches) == _results(run_dir)
    # At most the cells in flight at the kill were dispatched twice.
    assert sum(dispatches.values()) - TOTAL_CELLS <= 4

    entries, torn = read_ledger(run_dir)
    assert torn == 0
    ok = [e for e in entries if e.status == "ok"]
    assert {e.cell_id for e in ok} == _results(run_dir)
    # Every dispatch that completed was charged once; only in-flight work at the kill is uncharged.
    assert 0 <= sum(dispatches.values()) - len(entries) <= 4
    assert len({(e.session, e.cell_id, e.attempt) for e in entries}) == len(entries)
    assert len({e.session for e in entries}) == 2
    # Each durable cell is the one its latest ok ledger line paid for.
    latest = {e.cell_id: e for e in ok}
    for path in (run_dir / "cells").glob("*/*.result.json"):
        cell = CellResult.model_validate_json(path.read_bytes())
        assert cell.call_ids == latest[cell.cell_id].call_ids
        assert cell.cost_usd == latest[cell.cell_id].cost_usd


MODEL = "openai/gpt-4o-2024-08-06"


def test_flaky_server_campaign_completes_with_retry_and_ledger_counts_every_attempt(tmp_path: Path) -> None:
    rng = random.Random(20261129)
    injected: Counter[str] = Counter()

    def flaky(req: RecordedRequest) -> ScriptedReply:
        roll = rng.random()
        if roll < 0.05:
            injected["503"] += 1
            return ScriptedReply(status=503, text="overloaded")
        if roll < 0.07:
            injected["drop"] += 1
            return ScriptedReply(drop=True)
        slow = rng.random() < 0.1
        injected["slow" if slow else "ok"] += 1
        return ScriptedReply(
            text=f"answer to {req.prompt_text[-12:]}", delay_s=rng.uniform(0.05, 0.2) if slow else 0.0
        )

    scenarios = [Scenario(id=f"q{i:03d}", input=f"question {i}") for i in range(100)]

    async def go() -> tuple[object, int]:
        async with ScriptedLLMServer(flaky) as srv:
            # The client's own retries are off: every transport failure reaches the campaign,
            # which retries the cell in its slot.
            model = open_model(srv.spec(MODEL), max_retries=0, timeout_s=10)

            async def dispatch(ctx: CellContext) -> DispatchResult:
                done = await model.complete(
                    [{"role": "user", "content": f"{ctx.scenario.input} seed={ctx.seed}"}]
                )
                return DispatchResult(
                    output=done.text,
                    cost_usd=done.cost_usd,
                    served_model=done.served_model,
                    call_ids=[done.request_id or "?"],
                )

            def answered(cell: FinishedCell) -> float:
                return 1.0 if str(cell.output).startswith("answer to") else 0.0

            try:
                result = await run_campaign(
                    scenarios,
                    dispatch,
                    [answered],
                    run_dir=tmp_path,
                    commit="flaky",
                    reps=2,
                    max_concurrency=16,
                    cell_retry=cell_retry(10),
                )
            finally:
                await model.aclose()
            return result, srv.request_count

    result, requests = asyncio.run(go())
    cells = result.cells  # type: ignore[attr-defined]
    assert len(cells) == 200 and all(c.status == "ok" for c in cells)
    assert injected["503"] >= 3 and injected["drop"] >= 1 and injected["slow"] >= 5
    failures = injected["503"] + injected["drop"]
    assert sum(c.retry_attempts for c in cells) == failures
    entries, torn = read_ledger(tmp_path)
    assert torn == 0
    assert len(entries) == requests == 200 + failures  # every attempt charged, once
    assert sum(e.status == "failed" for e in entries) == failures
    assert all(e.stage == "dispatch" for e in entries if e.status == "failed")
    retried = [c for c in cells if c.retry_attempts]
    for cell in retried:
        receipts = sorted(
            p.name for p in (tmp_path / "cells" / cell.cell_id).glob("failure-receipt.attempt-*.json")
        )
        assert len(receipts) == cell.retry_attempts
    assert result.aggregates.by_scorer["answered"].mean == 1.0  # type: ignore[attr-defined]
