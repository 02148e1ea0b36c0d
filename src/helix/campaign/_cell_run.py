"""Running one cell: dispatch, score, charge the ledger, keep the result (or the failure) durable.

Order of writes for every attempt: the ledger line first (what was paid), then the failure receipt
or the result file. A process killed between the two leaves a charged attempt whose cell runs
again on resume: the ledger then shows both payments, which is what happened.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_core import PydanticSerializationError

from .._exceptions import CampaignAbortedError, RunError
from .._util import write_atomic
from ._failures import CellFailure, CellRetry, FailureReceipt, write_failure_receipt
from ._index import ResultIndex
from ._ledger import CostLedger, LedgerEntry
from ._model import (
    CellContext,
    CellError,
    CellResult,
    Dispatch,
    DispatchResult,
    FailureStage,
    FinishedCell,
    jsonable_produced,
    unknown_fields,
)
from ._paths import CellPaths
from ._schedule import CellScheduleSlot
from ._scorers import Scorer, score_cell

__all__ = ["CampaignProgress", "CellRunner", "ProgressCallback"]


@dataclass(frozen=True, kw_only=True)
class CampaignProgress:
    """Where a running campaign stands; handed to the progress callback after every cell."""

    total: int
    done: int
    cached: int
    failed: int
    retries: int
    cost_usd: float
    cell: CellResult | None = None
    """The cell that just finished (None for the first report, after the cache was read)."""


ProgressCallback = Callable[[CampaignProgress], None]


def _now() -> datetime:
    return datetime.now(UTC)


def _add(total: float | None, part: float | None) -> float | None:
    if part is None:
        return total
    return part if total is None else total + part


@dataclass(kw_only=True)
class CellRunner:
    """Runs cells of one campaign session and keeps the progress counters."""

    run_dir: Path
    dispatch: Dispatch
    scorers: tuple[Scorer, ...]
    retry: CellRetry | None
    abort_on_cell_error: bool
    fsync: bool
    ledger: CostLedger
    index: ResultIndex
    session: str
    progress: ProgressCallback | None
    total: int
    done: int = 0
    cached: int = 0
    failed: int = 0
    retries: int = 0
    cost_usd: float = 0.0

    def report(self, cell: CellResult | None) -> None:
        if cell is not None:
            self.done += 1
            if cell.status == "failed":
                self.failed += 1
            self.retries += cell.retry_attempts
            self.cost_usd += cell.cost_usd or 0.0
        if self.progress is not None:
            self.progress(
                CampaignProgress(
                    total=self.total,
                    done=self.done,
                    cached=self.cached,
                    failed=self.failed,
                    retries=self.retries,
                    cost_usd=self.cost_usd,
                    cell=cell,
                )
            )

    async def run_cell(self, slot: CellScheduleSlot, key: str) -> CellResult:
        paths = CellPaths.of(self.run_dir, slot.cell_id, key)
        cell_dir = Path(paths.directory)
        try:  # os.mkdir, not Path.mkdir(parents=True): one syscall on the hot path
            os.mkdir(paths.directory)
            fresh = True  # a new directory holds no earlier failure to supersede
        except FileExistsError:
            fresh = False
        except FileNotFoundError:
            cell_dir.mkdir(parents=True, exist_ok=True)
            fresh = True
        started = time.perf_counter()
        max_attempts = self.retry.attempts if self.retry is not None else 1
        cost: float | None = None
        cost_complete = True
        call_ids: list[str] = []
        attempt = 0
        while True:
            attempt += 1
            ctx = CellContext(
                scenario=slot.scenario,
                rep=slot.rep,
                seed=slot.seed,
                cell_id=slot.cell_id,
                run_dir=self.run_dir,
                cell_dir=cell_dir,
                attempt=attempt,
            )
            dr: DispatchResult | None = None
            produced: list[dict[str, Any]] = []
            scores: dict[str, float] = {}
            stage: FailureStage | None = None
            error: BaseException | None = None
            attempt_cost: float | None = None
            attempt_known = False
            attempt_calls: list[str] = []
            try:
                out = await self.dispatch(ctx)
                if not isinstance(out, DispatchResult):
                    raise RunError(
                        f"dispatch returned {type(out).__name__} for cell {slot.cell_id!r}; a dispatch "
                        "must return a DispatchResult (a function that builds the dispatch is a "
                        "factory: call it, or give it `args:` in a campaign config, `args: {}` for none)"
                    )
                dr = out
                attempt_cost, attempt_known = dr.cost_usd, dr.cost_usd is not None
                attempt_calls.extend(dr.call_ids)
                produced = jsonable_produced(dr.produced)
            except Exception as exc:
                stage, error = "dispatch", exc
            if dr is not None and error is None:
                finished = FinishedCell(context=ctx, result=dr, produced=produced)
                try:
                    for scorer in self.scorers:
                        value = await score_cell(scorer, finished)
                        if value is not None:
                            scores[scorer.name] = value
                except Exception as exc:
                    stage, error = "score", exc
                for charge, call_id in finished.charges:
                    attempt_cost = _add(attempt_cost, charge)
                    attempt_known = attempt_known and charge is not None
                    if call_id is not None:
                        attempt_calls.append(call_id)
            cost = _add(cost, attempt_cost)
            cost_complete = cost_complete and attempt_known
            call_ids.extend(attempt_calls)
            result = CellResult(
                cell_id=slot.cell_id,
                scenario_id=slot.scenario.id,
                rep=slot.rep,
                seed=slot.seed,
                cache_key=key,
                status="ok" if error is None else "failed",
                stage=stage,
                error=CellError.from_exception(error) if error is not None else None,
                output=dr.output if dr is not None else None,
                produced=produced,
                trace=dr.trace if dr is not None else None,
                usage=dr.usage if dr is not None else None,
                served_model=dr.served_model if dr is not None else None,
                cost_usd=cost,
                cost_complete=cost_complete,
                call_ids=tuple(call_ids),
                scores=scores if error is None else {},
                composite=(sum(scores.values()) / len(scores)) if scores and error is None else None,
                attempts=attempt,
                retry_attempts=attempt - 1,
                duration_s=time.perf_counter() - started,
                unknown=unknown_fields(
                    served_model=dr.served_model if dr is not None else None,
                    cost_usd=cost,
                    usage=dr.usage if dr is not None else None,
                ),
            )
            try:
                payload = result.model_dump_json().encode()
            except PydanticSerializationError as exc:
                stage, error = (
                    "dispatch",
                    RunError(
                        f"cell {slot.cell_id!r}: the dispatch result cannot be stored as JSON ({exc}); return "
                        "JSON-compatible output and produced events"
                    ),
                )
                result = result.model_copy(
                    update={
                        "status": "failed",
                        "stage": stage,
                        "error": CellError.from_exception(error),
                        "output": None,
                        "produced": [],
                        "scores": {},
                        "composite": None,
                    }
                )
                produced = []
                payload = result.model_dump_json().encode()
            self.ledger.append(
                LedgerEntry(
                    session=self.session,
                    cell_id=slot.cell_id,
                    cache_key=key,
                    attempt=attempt,
                    status=result.status,
                    stage=stage,
                    served_model=dr.served_model if dr is not None else None,
                    cost_usd=attempt_cost,
                    call_ids=tuple(attempt_calls),
                    at=_now(),
                )
            )
            if error is None:
                write_atomic(paths.result, payload, fsync=self.fsync)
                self.index.append(slot.cell_id, key, payload, paths.result)
                if not fresh or attempt > 1:
                    try:
                        os.unlink(paths.failed)  # an earlier run's failure is now superseded
                    except FileNotFoundError:
                        pass
                return result
            assert stage is not None
            failure = CellFailure(cell_id=slot.cell_id, attempt=attempt, stage=stage, error=error)
            final = attempt >= max_attempts or self.retry is None or not self.retry.retryable(failure)
            receipt = write_failure_receipt(
                paths,
                FailureReceipt(
                    cell_id=slot.cell_id,
                    attempt=attempt,
                    final=final,
                    stage=stage,
                    error=result.error,
                    settled_cost_usd=cost,
                    cell=result,
                    at=_now(),
                ),
                fsync=self.fsync,
            )
            if not final:
                continue
            write_atomic(paths.failed, payload, fsync=self.fsync)
            if self.abort_on_cell_error:
                self.report(result)
                raise CampaignAbortedError(
                    f"cell {slot.cell_id!r} failed at the {stage} stage after {attempt} attempt(s) "
                    f"({type(error).__name__}: {error}); its receipt is {receipt}. Finished cells are "
                    "cached: fix the cause and run the campaign again to resume.",
                    cell=result,
                    receipt_path=receipt,
                )
            return result
