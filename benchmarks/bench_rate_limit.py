"""Adaptive concurrency against a rate-limited provider (run by hand).

    uv run python benchmarks/bench_rate_limit.py [--rates 50 500] [--seconds 20] [--latency-ms 100]
                                                 [--concurrency 512] [--burst-s 1.0]

A ScriptedLLMServer in its own process enforces a token bucket of R requests per second (``burst``
one second's worth, full at the start) and answers 429 with ``Retry-After`` when it is empty, as
the providers do. For each R, one prepared run of ``R x seconds`` units is judged twice with
``--concurrency`` 512, each time against a fresh server:

* ``adaptive`` (the default): the AIMD limiter of ``helix.models``;
* ``fixed`` (the baseline, same run): a fixed window of 512 that only honours ``Retry-After``.

Printed per row: goodput (requests the bucket admitted per second, from the first to the last,
measured by the server) as a share of R, the share of all
requests the server answered 429, units judged / unscored, and the limiter's final window. Targets
(issue 9): goodput >= 90% of R and <= 5% of requests answered 429, every unit judged or explicitly
unscored.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import shutil
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_judge_run import MODEL, _answer, _free_port, make_run
from helix.judging import judge_packets_with_model
from helix.models import RECEIPTS_FILE, ModelSpec, open_model
from helix.models.testing import RateLimit, RecordedRequest, ScriptedLLMServer


def _serve(port: int, latency_s: float, rate: float, burst: float, conn: Connection) -> None:
    answered: list[float] = []

    def answer(req: RecordedRequest) -> str:
        answered.append(time.monotonic())  # admitted by the bucket: it will be answered 200
        return _answer(req)

    async def main() -> None:
        srv = ScriptedLLMServer(
            answer, latency_s=latency_s, record=False, port=port, rate_limit=RateLimit(rate=rate, burst=burst)
        )
        await srv.start()
        conn.send(srv.port)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, conn.recv)  # any message: report and stop
        span = (answered[-1] - answered[0]) if len(answered) > 1 else 0.0
        conn.send((srv.request_count, dict(srv.statuses), len(answered), span))
        await srv.stop()

    asyncio.run(main())


def _pass(spec: ModelSpec, run_dir: Path, concurrency: int, adaptive: bool) -> tuple[float, object]:
    async def go() -> object:
        model = open_model(spec, max_retries=10)
        try:
            return await judge_packets_with_model(run_dir, model, concurrency=concurrency, adaptive=adaptive)
        finally:
            await model.aclose()

    t0 = time.perf_counter()
    summary = asyncio.run(go())
    return time.perf_counter() - t0, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", type=float, nargs="+", default=[50.0, 500.0])
    ap.add_argument("--seconds", type=float, default=20.0, help="units = rate x seconds")
    ap.add_argument("--latency-ms", type=float, default=100.0)
    ap.add_argument("--concurrency", type=int, default=512)
    ap.add_argument("--burst-s", type=float, default=1.0, help="bucket depth in seconds of rate")
    args = ap.parse_args()
    ctx = mp.get_context("spawn")
    print(
        f"token bucket: burst {args.burst_s:g} s of rate, latency {args.latency_ms:.0f} ms, "
        f"--concurrency {args.concurrency}, python {sys.version.split()[0]}"
    )
    print(
        f"{'R':>6} {'mode':<9}{'units':>7}{'wall s':>8}{'goodput/R':>11}{'429 share':>11}{'judged':>8}{'unscored':>9}{'window':>8}"
    )
    for rate in args.rates:
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = make_run(Path(tmp), int(rate * args.seconds))
            for adaptive in (True, False):
                shutil.rmtree(run_dir / "verdicts", ignore_errors=True)
                (run_dir / RECEIPTS_FILE).unlink(missing_ok=True)
                port = _free_port()
                parent, child = ctx.Pipe()
                proc = ctx.Process(
                    target=_serve,
                    args=(port, args.latency_ms / 1000, rate, max(1.0, rate * args.burst_s), child),
                    daemon=True,
                )
                proc.start()
                parent.recv()
                spec = ModelSpec(provider="openai", model=MODEL, base_url=f"http://127.0.0.1:{port}/v1")
                wall, summary = _pass(spec, run_dir, args.concurrency, adaptive)
                parent.send("stop")
                requests, statuses, admitted, span = parent.recv()
                proc.join(timeout=10)
                s = summary  # ModelJudgeSummary
                window = f"{s.limiter.window:.1f}" if s.limiter is not None else "-"  # type: ignore[attr-defined]
                share_429 = statuses.get(429, 0) / max(1, requests)
                print(
                    f"{rate:>6.0f} {'adaptive' if adaptive else 'fixed':<9}{s.pending:>7}{wall:>8.1f}"  # type: ignore[attr-defined]
                    f"{admitted / max(span, 1e-9) / rate:>11.2f}{share_429:>11.3f}{s.judged:>8}{s.unscored:>9}{window:>8}"  # type: ignore[attr-defined]
                )


if __name__ == "__main__":
    main()
