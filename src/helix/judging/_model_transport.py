"""The model transport: judge a prepared run's packets with an LLM provider, live.

For every LLM packet in ``<run>/packets/`` that has no ``<run>/verdicts/<key>.verdict.json`` yet:
read the packet and check it against its key, judge it through the one engine
(:func:`~helix.judging.judge_packet`: render, pinned call, strict parse, one re-ask, the one failure
rule), write the verdict (or an unscored record naming the failure kind) and append a receipt to
``<run>/receipts.jsonl``. Each HTTP attempt is recorded in the receipt log *before* it is sent, so
a killed pass leaves a record of every request a server saw.

Concurrency is adaptive: ``concurrency`` is the ceiling, and an AIMD limiter
(:class:`~helix.models.AdaptiveLimiter`) shrinks the window on 429/503/529 and waits out
``Retry-After``, so a high ceiling converges to what the provider accepts. A later pass skips units
that have a verdict file, unscored ones included, unless ``rejudge_unscored=True``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import anyio

from .._exceptions import UsageError
from ..models import (
    RECEIPTS_FILE,
    AdaptiveLimiter,
    Limiter,
    Model,
    ModelSpec,
    ReceiptLog,
    price_table_hash,
    read_receipt_log,
)
from ._engine import judge_packet
from ._kind import TrajectoryJudging, read_packet_view
from ._run import open_run
from ._transport import (
    ModelJudgeProgress,
    ModelJudgeSummary,
    PassTally,
    VerdictWriter,
    check_pin,
    pending_units,
    receipt_line,
    report,
    verdict_bytes,
)

__all__ = ["judge_packets_with_model", "judge_packets_with_model_sync", "unsettled_attempt_count"]


def unsettled_attempt_count(run_dir: Path) -> int:
    """Requests an earlier pass sent and never settled with a receipt (it died with them in flight)."""
    if not (run_dir / RECEIPTS_FILE).is_file():
        return 0
    return len(read_receipt_log(run_dir).unsettled)


async def judge_packets_with_model(
    run_dir: str | Path,
    model: Model,
    *,
    concurrency: int = 16,
    adaptive: bool = True,
    on_progress: Callable[[ModelJudgeProgress], None] | None = None,
    rejudge_unscored: bool = False,
    limiter: Limiter | None = None,
) -> ModelJudgeSummary:
    """Judge every LLM packet of a prepared run that has no verdict yet, with ``model``.

    ``concurrency`` is the most requests in flight; with ``adaptive`` (the default) the window
    adapts below it to the provider's rate limits (``adaptive=False``: a fixed window). A ``limiter``
    shared with other callers of the same provider replaces both. ``rejudge_unscored`` also judges
    units whose verdict file is ``unscored`` (a provider outage or answers that never parsed in an
    earlier pass), replacing those files.

    The run's pin must match ``model.spec`` (when the run was prepared with a model). Returns a
    summary (:meth:`~ModelJudgeSummary.describe` says why units ended unscored); per-unit details
    are in ``<run>/receipts.jsonl``. The caller closes ``model``.
    """
    if concurrency < 1:
        raise UsageError(f"concurrency must be >= 1, got {concurrency!r}")
    t0 = time.perf_counter()
    run = open_run(run_dir)
    spec = model.spec
    check_pin(run, spec)
    pending = pending_units(run, rejudge_unscored=rejudge_unscored)
    unsettled = unsettled_attempt_count(run.run_dir)
    run.verdict_dir.mkdir(parents=True, exist_ok=True)
    log = ReceiptLog(run.run_dir)
    writer = VerdictWriter(log)
    gate = limiter if limiter is not None else AdaptiveLimiter(concurrency, adaptive=adaptive)
    kind = TrajectoryJudging()
    prices = price_table_hash()
    prompt_version = run.manifest.prompt_version
    tally = PassTally()
    total = len(pending.keys)
    packet_dir = f"{run.packet_dir}{os.sep}"
    verdict_dir = f"{run.verdict_dir}{os.sep}"
    run_dir = run.run_dir
    # The re-derived traces and units are not needed past this point: let them go before the
    # pass, so the garbage collector does not re-scan them while requests allocate.
    del run

    async def unit(key: str) -> None:
        started = datetime.now(UTC)
        # Checked against its key: an edited packet raises InputFileError and ends the pass
        # (verdicts already written stay; fix the packet or re-run prep, then run again).
        view = read_packet_view(f"{packet_dir}{key}.packet.json", key)

        def attempt(call: int, n: int) -> None:
            log.record_attempt(key, call, n)

        judgment = await judge_packet(kind, view, model, limiter=gate, on_attempt=attempt)
        unscored = judgment.unscored
        line = receipt_line(
            key=key,
            spec=spec,
            calls=judgment.calls,
            started_at=started,
            failure=unscored.failure if unscored else None,
            error=unscored.error if unscored else None,
            prices=prices,
        )
        writer.submit(line, f"{verdict_dir}{key}.verdict.json", verdict_bytes(judgment, spec, prompt_version))
        tally.add(judgment, judgment.calls.known_cost)
        report(on_progress, tally, key, judgment.status, total)

    queue = iter(pending.keys)

    async def worker() -> None:
        for key in queue:  # one shared iterator: each key goes to exactly one worker
            await unit(key)

    try:
        async with anyio.create_task_group() as tg:
            for _ in range(min(concurrency, total)):
                tg.start_soon(worker)
    finally:
        try:
            writer.close()
        finally:
            log.close()
    stats = gate.rules.stats() if isinstance(gate, AdaptiveLimiter) else None
    return tally.summary(
        run_dir=run_dir,
        spec=spec,
        pending=pending,
        wall_s=time.perf_counter() - t0,
        unsettled=unsettled,
        mode="live",
        limiter=stats,
    )


def judge_packets_with_model_sync(
    run_dir: str | Path,
    model: Model | ModelSpec,
    *,
    concurrency: int = 16,
    adaptive: bool = True,
    on_progress: Callable[[ModelJudgeProgress], None] | None = None,
    rejudge_unscored: bool = False,
    max_retries: int = 6,
    timeout_s: float = 120.0,
) -> ModelJudgeSummary:
    """Blocking form of :func:`judge_packets_with_model` for scripts.

    Given a :class:`ModelSpec`, opens the client (``max_retries``, ``timeout_s``) for the duration of
    the call. Given an open :class:`Model`, closes it at the end, because its connections belong to
    the event loop this function runs and ends.
    """
    from ..models import open_model

    async def go() -> ModelJudgeSummary:
        client = (
            open_model(model, max_retries=max_retries, timeout_s=timeout_s)
            if isinstance(model, ModelSpec)
            else model
        )
        try:
            return await judge_packets_with_model(
                run_dir,
                client,
                concurrency=concurrency,
                adaptive=adaptive,
                on_progress=on_progress,
                rejudge_unscored=rejudge_unscored,
            )
        finally:
            await client.aclose()

    return anyio.run(go)
