"""Benchmark campaigns (run by hand; prints ratios measured in the same run).

    uv run python benchmarks/bench_campaign.py [--calls 2000] [--latency-ms 100] [--servers 2]
                                               [--concurrency 32 128 512] [--cached-cells 100000]
                                               [--skip-inspect] [--skip-cached]

1. **run_campaign vs Inspect AI.** The same N model calls (one per cell / sample) against
   ScriptedLLMServer answering after ``--latency-ms``, the server running in ``--servers`` separate
   processes sharing one port (SO_REUSEPORT), so its CPU is not counted against the client. Each
   measurement runs in a fresh child process (imports excluded from the timing):

   * ``run_campaign``: a dispatch calling ``helix.models`` (the OpenAI-compatible client) once per
     cell, a code scorer scoring the answer; durable per-cell results, the cost ledger and receipts on
     (a fresh run directory each time, so nothing is cached).
   * ``inspect_ai``: a Task of N samples, solver ``generate()``, scorer ``match()``, model
     ``openai/<model>`` with ``model_base_url`` pointed at the loopback server, ``max_connections``
     and ``max_samples`` = concurrency, logs written to a temp dir (Inspect AI as installed in this
     project's dev environment).

   Printed per concurrency: wall seconds, cells/s, client CPU ms per cell, and the ratio
   inspect wall / campaign wall (> 1 means run_campaign is faster).

2. **A 100,000-cell fully cached campaign.** Populates a run directory once (a no-network
   dispatch), then in a fresh child process times ``plan_campaign_run`` alone and a full
   ``run_campaign`` rerun (plan, load every cached result, aggregate; nothing dispatched) and reports
   the child's peak RSS beside its RSS before the work (the baseline in the same process).

Findings (2-vCPU VM shared with other jobs, 2026-11-29, 2,000 calls, 100 ms, Inspect AI 0.3.285 from
the project's dev environment): wall ratio inspect/campaign 15.8x at 32, 33.1x at 128, 11.1x at 512
(a second run at 512 on a quieter machine: 7.6 s vs 76.6 s, 10.1x);
client CPU 1.4-1.8 ms per cell for run_campaign against 25.7-27.2 ms per sample for Inspect AI.
100,000 cached cells: plan 2.6 s, full cached rerun (plan + load + aggregate) 25.4 s, peak RSS
567 MB; the rerun is dominated by the per-scenario bootstrap of 10,001 series in aggregate_cells.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import resource
import shutil
import socket
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

MODEL = "gpt-4o-2024-08-06"
ANSWER = "The order has shipped."


# ------------------------------------------------------------------ server processes


def _serve(port: int, latency_s: float, conn: Connection) -> None:
    from helix.models.testing import ScriptedLLMServer

    async def main() -> None:
        srv = ScriptedLLMServer(
            lambda _req: ANSWER, latency_s=latency_s, record=False, port=port, reuse_port=True
        )
        await srv.start()
        conn.send(srv.port)
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # any message means stop
        await srv.stop()

    asyncio.run(main())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_servers(n: int, latency_s: float) -> tuple[str, list[tuple[mp.Process, Connection]]]:
    port = _free_port()
    procs = []
    for _ in range(n):
        parent, child = mp.Pipe()
        p = mp.Process(target=_serve, args=(port, latency_s, child), daemon=True)
        p.start()
        parent.recv()
        procs.append((p, parent))
    return f"http://127.0.0.1:{port}/v1", procs


def stop_servers(procs: list[tuple[mp.Process, Connection]]) -> None:
    for _, conn in procs:
        conn.send("stop")
    for p, _ in procs:
        p.join(timeout=5)


# ------------------------------------------------------------------ the two clients (in children)


def _child_campaign(base_url: str, calls: int, concurrency: int, conn: Connection) -> None:
    from helix.campaign import CellContext, DispatchResult, FinishedCell, Scenario, read_ledger, run_campaign
    from helix.models import ModelSpec, open_model

    async def main() -> dict[str, float]:
        model = open_model(ModelSpec(provider="openai", model=MODEL, base_url=base_url))
        scenarios = [Scenario(id=f"s{i}", input=f"Where is order {i}?", gold=ANSWER) for i in range(calls)]

        async def dispatch(ctx: CellContext) -> DispatchResult:
            reply = await model.complete([{"role": "user", "content": str(ctx.scenario.input)}])
            return DispatchResult(
                output=reply.text,
                usage=None,
                cost_usd=reply.cost_usd,
                served_model=reply.served_model,
                call_ids=(reply.request_id,) if reply.request_id else (),
            )

        def exact(cell: FinishedCell) -> float:
            return 1.0 if cell.output == cell.gold else 0.0

        root = Path(tempfile.mkdtemp(prefix="helix-bench-campaign-"))
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            result = await run_campaign(
                scenarios,
                dispatch,
                {"exact": exact},
                run_dir=root,
                commit="bench",
                max_concurrency=concurrency,
            )
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            entries, _ = read_ledger(root)
            if result.failed or result.dispatched != calls or len(entries) != calls:
                raise SystemExit(f"campaign went wrong: {result.failed} failed, {len(entries)} ledger lines")
            if result.aggregates.by_scorer["exact"].mean != 1.0:
                raise SystemExit("campaign scorer did not see the scripted answer")
        finally:
            await model.aclose()
            shutil.rmtree(root, ignore_errors=True)
        return {"wall": wall, "cpu": cpu}

    conn.send(asyncio.run(main()))


def _child_inspect(base_url: str, calls: int, concurrency: int, conn: Connection) -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-loopback")
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    task = Task(
        dataset=[Sample(input=f"Where is order {i}?", target=ANSWER, id=i) for i in range(calls)],
        solver=generate(),
        scorer=match(location="exact"),
    )
    log_dir = tempfile.mkdtemp(prefix="helix-bench-inspect-")
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        logs = eval(
            task,
            model=f"openai/{MODEL}",
            model_base_url=base_url,
            max_connections=concurrency,
            max_samples=concurrency,
            log_dir=log_dir,
            display="none",
            temperature=0.0,
        )
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        log = logs[0]
        if log.status != "success" or log.results is None or log.results.completed_samples != calls:
            raise SystemExit(f"inspect run went wrong: {log.status} {log.error}")
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    conn.send({"wall": wall, "cpu": cpu})


def in_child(target: Any, *args: Any) -> dict[str, float]:
    parent, child = mp.Pipe()
    p = mp.Process(target=target, args=(*args, child))
    p.start()
    p.join()
    if p.exitcode != 0 or not parent.poll():
        raise SystemExit(f"{target.__name__} failed (exit code {p.exitcode})")
    result: dict[str, float] = parent.recv()
    return result


# ------------------------------------------------------------------ 100k cached cells


def _populate(root: Path, cells: int) -> float:
    from helix.campaign import CellContext, DispatchResult, Scenario, run_campaign_sync

    async def dispatch(ctx: CellContext) -> DispatchResult:
        return DispatchResult(output=ctx.seed % 2, cost_usd=0.0, served_model="none")

    scenarios = [Scenario(id=f"s{i}") for i in range(cells // 10)]
    t0 = time.perf_counter()
    result = run_campaign_sync(
        scenarios,
        dispatch,
        {"parity": lambda c: float(c.output)},
        run_dir=root,
        commit="bench",
        reps=10,
        max_concurrency=256,
        bootstrap_resamples=200,
    )
    if result.dispatched != cells or result.failed:
        raise SystemExit("populating the cache went wrong")
    return time.perf_counter() - t0


def _child_cached(root: str, cells: int, conn: Connection) -> None:
    from helix.campaign import CellContext, DispatchResult, Scenario, plan_campaign_run, run_campaign_sync

    def rss_mb() -> float:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    async def never(ctx: CellContext) -> DispatchResult:
        raise AssertionError("a cached cell was dispatched")

    scenarios = [Scenario(id=f"s{i}") for i in range(cells // 10)]
    scorers = {"parity": lambda c: float(c.output)}
    baseline = rss_mb()
    t0 = time.perf_counter()
    plan = plan_campaign_run(root, scenarios, seed=0, reps=10, commit="bench", scorers=["parity"])
    plan_s = time.perf_counter() - t0
    if len(plan.cached) != cells:
        raise SystemExit(f"expected {cells} cached cells, plan found {len(plan.cached)}")
    t0 = time.perf_counter()
    result = run_campaign_sync(scenarios, never, scorers, run_dir=root, commit="bench", reps=10)
    rerun_s = time.perf_counter() - t0
    if result.cached != cells or result.dispatched:
        raise SystemExit("the cached rerun dispatched something")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    conn.send({"plan_s": plan_s, "rerun_s": rerun_s, "baseline_mb": baseline, "peak_mb": peak})


# ------------------------------------------------------------------ main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--latency-ms", type=float, default=100.0)
    ap.add_argument("--servers", type=int, default=2)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[32, 128, 512])
    ap.add_argument("--cached-cells", type=int, default=100_000)
    ap.add_argument("--skip-inspect", action="store_true")
    ap.add_argument("--skip-cached", action="store_true")
    args = ap.parse_args()
    mp.set_start_method("spawn")
    print(
        f"python {sys.version.split()[0]} · {os.cpu_count()} CPUs · {args.calls} calls · {args.latency_ms:g} ms latency"
    )

    base_url, procs = start_servers(args.servers, args.latency_ms / 1000)
    try:
        header = f"{'concurrency':>11} {'client':<13} {'wall s':>8} {'cells/s':>8} {'CPU ms/cell':>12} {'floor s':>8}"
        print(header)
        for conc in args.concurrency:
            floor = args.calls * args.latency_ms / 1000 / conc
            camp = in_child(_child_campaign, base_url, args.calls, conc)
            rows = [("run_campaign", camp)]
            if not args.skip_inspect:
                rows.append(("inspect_ai", in_child(_child_inspect, base_url, args.calls, conc)))
            for name, r in rows:
                print(
                    f"{conc:>11} {name:<13} {r['wall']:>8.2f} {args.calls / r['wall']:>8.0f} "
                    f"{1000 * r['cpu'] / args.calls:>12.2f} {floor:>8.2f}"
                )
            if len(rows) == 2:
                insp = rows[1][1]
                print(
                    f"{'':>11} ratio inspect/campaign: wall {insp['wall'] / camp['wall']:.1f}x, "
                    f"CPU per cell {insp['cpu'] / camp['cpu']:.1f}x"
                )
    finally:
        stop_servers(procs)

    if not args.skip_cached:
        root = Path(tempfile.mkdtemp(prefix="helix-bench-cached-"))
        try:
            populate_s = _populate(root, args.cached_cells)
            r = in_child(_child_cached, str(root), args.cached_cells)
            print(
                f"cached campaign of {args.cached_cells} cells (populated in {populate_s:.1f} s): "
                f"plan {r['plan_s']:.2f} s; plan + load + aggregate (full cached rerun) {r['rerun_s']:.2f} s; "
                f"peak RSS {r['peak_mb']:.0f} MB (baseline {r['baseline_mb']:.0f} MB after imports)"
            )
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
