"""``run_campaign``: dispatch every uncached cell, score it, keep it durable, aggregate, in caller order.

Durability contract and the fsync choice: a cell's result is written with an atomic rename before
the cell counts as done, and every attempt's ledger line is written (one ``write``) before its
result or receipt. A killed process (SIGKILL, Ctrl-C, OOM) therefore loses nothing that finished:
the data is in the OS page cache and the rename is atomic. By default there is no per-cell
``fsync`` (it would cost a disk flush per cell on the hot path); a power cut can then lose the
last few results, which a rerun dispatches again, but never leaves a half-written one. Pass
``fsync=True`` to flush every result and receipt to disk as well.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, Unpack

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._aggregate import CampaignAggregates, aggregate_cells
from ._cell_run import CampaignProgress, CellRunner, ProgressCallback
from ._executor import bounded_map, check_concurrency, sync_version
from ._failures import CellRetry
from ._index import ResultIndex
from ._ledger import CostLedger
from ._model import CellResult, Dispatch, Scenario
from ._paths import CellPaths
from ._schedule import CampaignPlan, CellScheduleSlot, plan_campaign_run
from ._scorers import Scorer, ScorerFn, as_scorers

__all__ = [
    "CAMPAIGN_RESULT_VERSION",
    "CampaignProgress",
    "CampaignResult",
    "ProgressCallback",
    "run_campaign",
    "run_campaign_sync",
    "run_eval",
    "run_eval_sync",
]

CAMPAIGN_RESULT_VERSION = 2
"""Version 2: aggregates ``by_scorer`` (was ``by_judge``)."""


class CampaignResult(BaseModel):
    """A campaign's cells in schedule order (the caller's scenario order × reps) and their aggregates."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = CAMPAIGN_RESULT_VERSION
    run_dir: str
    session: str
    identity: str
    cells: list[CellResult]
    aggregates: CampaignAggregates
    total: int
    cached: int
    dispatched: int
    failed: int
    blocked: int
    retries: int
    cost_usd: float
    """Known cost of the cells in this result (cached cells included: what the results cost)."""
    cost_complete: bool
    cache_problems: list[str] = Field(default_factory=list)
    """What the cache check found: result files gone, unreadable, or changed since the cache index
    recorded them. A gone or unreadable file's cell ran again; a changed file was used as it is."""

    @property
    def failed_cells(self) -> list[CellResult]:
        return [c for c in self.cells if c.status == "failed"]


def _load(path: str) -> tuple[CellResult, bytes] | None:
    """A durable result and its bytes; None when unreadable (then it is not cached: run it again)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        return CellResult.model_validate_json(raw), raw
    except (OSError, ValidationError):
        return None


def _load_cached(
    plan: CampaignPlan, slot: CellScheduleSlot, index: ResultIndex, problems: list[str]
) -> CellResult | None:
    """A cached cell's result: the index's bytes while they vouch for the file, else the file itself.

    None (the cell runs again) when the file is unreadable or holds another cell; a file that
    differs from what the index recorded is used and reported.
    """
    key = plan.keys[slot.index]
    line = plan.indexed.get((slot.cell_id, key))
    if line is not None:
        try:
            return CellResult.model_validate_json(line)
        except ValidationError:
            pass  # indexed by a Helix whose format this one does not read: the file decides
    path = CellPaths.of(plan.run_dir, slot.cell_id, key).result
    loaded = _load(path)
    if loaded is None or (loaded[0].cell_id, loaded[0].cache_key) != (slot.cell_id, key):
        problems.append(
            f"cell {slot.cell_id}: its result file is unreadable or not its own ({path}); it runs again"
        )
        return None
    cached, raw = loaded
    recorded = plan.index_hashes.get((slot.cell_id, key))
    if recorded is not None and recorded != hashlib.sha256(raw).hexdigest():
        problems.append(
            f"cell {slot.cell_id}: its result file changed after the cache index recorded it; "
            "the file is used as it is (delete it to run the cell again)"
        )
    index.append(slot.cell_id, key, raw, path)  # index it, so the next rerun reads one file
    return cached


async def run_campaign(
    scenarios: Sequence[Scenario],
    dispatch: Dispatch,
    scorers: Sequence[Scorer | ScorerFn] | Mapping[str, ScorerFn] | None = None,
    *,
    run_dir: str | Path,
    commit: str,
    seed: int = 0,
    reps: int = 1,
    config: Mapping[str, Any] | None = None,
    dispatch_ref: str | None = None,
    max_concurrency: int = 8,
    abort_on_cell_error: bool = False,
    cell_retry: CellRetry | None = None,
    retry_failed: bool = True,
    progress: ProgressCallback | None = None,
    fsync: bool = False,
    bootstrap_resamples: int = 2000,
) -> CampaignResult:
    """Run ``dispatch`` over ``scenarios`` × ``reps``, score each cell with ``scorers``, aggregate.

    Cells already in the durable cache of ``run_dir`` (same commit, config, ``dispatch_ref``,
    scorers, scenario content, repetition and seed) are not dispatched again. Cells whose last
    run failed are tried again unless ``retry_failed=False`` (then they are *blocked* and returned
    as they failed). At most ``max_concurrency`` cells run at once; the returned cells are in
    schedule order whatever order they finished in. A failed cell leaves a failure receipt and a
    durable failed result; ``abort_on_cell_error`` raises :class:`~helix.CampaignAbortedError` at
    the first cell whose final attempt failed, otherwise the campaign goes on and returns it.
    ``cell_retry`` retries failed attempts the predicate accepts, in the same slot.
    ``progress`` is called after every cell. See the module doc for ``fsync``.
    """
    check_concurrency(max_concurrency)
    scorer_list = as_scorers(scorers)
    root = Path(run_dir)
    plan: CampaignPlan = plan_campaign_run(
        root,
        scenarios,
        seed=seed,
        reps=reps,
        commit=commit,
        config=config,
        dispatch_ref=dispatch_ref,
        scorers=[s.name for s in scorer_list],
        retry_failed=retry_failed,
    )
    results: list[CellResult | None] = [None] * plan.total
    to_run: list[CellScheduleSlot] = list(plan.to_run)
    loaded_cached = 0
    problems = list(plan.cache_problems)
    index = ResultIndex(root, plan.identity)
    for slot in plan.cached:
        cached = _load_cached(plan, slot, index, problems)
        if cached is None:
            to_run.append(slot)
        else:
            results[slot.index] = cached
            loaded_cached += 1
    for slot in plan.blocked:
        failed = _load(CellPaths.of(root, slot.cell_id, plan.keys[slot.index]).failed)
        if failed is None:
            to_run.append(slot)
        else:
            results[slot.index] = failed[0]
    to_run.sort(key=lambda s: s.index)
    runner = CellRunner(
        run_dir=root,
        dispatch=dispatch,
        scorers=scorer_list,
        retry=cell_retry,
        abort_on_cell_error=abort_on_cell_error,
        fsync=fsync,
        ledger=CostLedger(root),
        index=index,
        session=uuid.uuid4().hex,
        progress=progress,
        total=plan.total,
        cached=loaded_cached,
        done=plan.total - len(to_run),
    )
    for r in results:
        if r is not None:
            runner.cost_usd += r.cost_usd or 0.0
            if r.status == "failed":
                runner.failed += 1
    runner.report(None)

    async def one(_: int, slot: CellScheduleSlot) -> None:
        result = await runner.run_cell(slot, plan.keys[slot.index])
        results[slot.index] = result
        runner.report(result)

    root.mkdir(parents=True, exist_ok=True)
    try:
        await bounded_map(to_run, one, limit=max_concurrency)
    finally:
        runner.ledger.close()
        runner.index.close()
    cells = [r for r in results if r is not None]
    known = [c.cost_usd for c in cells if c.cost_usd is not None]
    blocked_ids = {s.cell_id for s in plan.blocked}
    return CampaignResult(
        run_dir=str(root),
        session=runner.session,
        identity=plan.identity,
        cells=cells,
        aggregates=aggregate_cells(cells, seed=seed, n_resamples=bootstrap_resamples),
        total=plan.total,
        cached=loaded_cached,
        dispatched=len(to_run),
        failed=sum(c.status == "failed" for c in cells),
        blocked=sum(c.cell_id in blocked_ids and c.status == "failed" for c in cells),
        retries=sum(c.retry_attempts for c in cells),
        cost_usd=sum(known),
        cost_complete=all(c.cost_complete and c.cost_usd is not None for c in cells),
        cache_problems=problems,
    )


class EvalOptions(TypedDict, total=False):
    """The keyword options of :func:`run_campaign` other than the design (``seed``, ``reps``).

    Written once, so :func:`run_eval` and ``run_eval_campaign`` pass them through typed: a type
    checker checks each keyword against this, and the defaults are :func:`run_campaign`'s.
    """

    config: Mapping[str, Any] | None
    dispatch_ref: str | None
    max_concurrency: int
    abort_on_cell_error: bool
    cell_retry: CellRetry | None
    retry_failed: bool
    progress: ProgressCallback | None
    fsync: bool
    bootstrap_resamples: int


class CampaignOptions(EvalOptions, total=False):
    """:class:`EvalOptions` and the repetitions."""

    reps: int


async def run_eval(
    scenarios: Sequence[Scenario],
    dispatch: Dispatch,
    scorers: Sequence[Scorer | ScorerFn] | Mapping[str, ScorerFn],
    *,
    run_dir: str | Path,
    commit: str,
    seed: int = 0,
    **options: Unpack[EvalOptions],
) -> CampaignResult:
    """Just score: one run per scenario, scored and aggregated (no loop, no gate).

    The simplest preset over :func:`run_campaign` (``reps=1``); the other options are its own.
    """
    return await run_campaign(
        scenarios, dispatch, scorers, run_dir=run_dir, commit=commit, seed=seed, reps=1, **options
    )


run_campaign_sync = sync_version(run_campaign)
run_eval_sync = sync_version(run_eval)
