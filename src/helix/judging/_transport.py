"""What the model and batch transports share over a run directory.

Which units are still to judge, the pin check, the background writer of verdicts and receipts, the
per-pass tally, and the pass summary (with why units ended unscored).

Durability: verdicts are written atomically (temp file and rename) but without fsync, and each unit
receipt is handed to the OS before its verdict is renamed into place, so a verdict on disk always
has its receipt. A crashed process loses nothing that was renamed into place; a power loss may drop
the last few files, and a lost verdict is simply judged again on the next run (with a new receipt).
The writes happen on one background thread, in order: creating a file is the costliest system call
on this path and releases the GIL, so it overlaps with the event loop instead of stalling it.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import orjson

from .._exceptions import InputFileError, RunError, UsageError
from .._util import write_atomic
from ..models import LimiterStats, ModelSpec, ReceiptLog
from ._engine import CallTally, Judgment
from ._prompt import LAYOUT_REVISION
from ._run import JudgingRun
from ._verdict import JudgeInfo, VerdictFile

__all__ = [
    "ModelJudgeProgress",
    "ModelJudgeSummary",
    "PassTally",
    "Pending",
    "VerdictWriter",
    "check_pin",
    "pending_units",
    "receipt_line",
    "report",
    "verdict_bytes",
]

UnitStatus = Literal["scored", "unscored"]


@dataclass(frozen=True, kw_only=True)
class ModelJudgeProgress:
    """Reported after each unit: which one, how it ended, and how far the run is."""

    key: str
    status: UnitStatus
    done: int
    total: int


@dataclass(frozen=True, kw_only=True)
class ModelJudgeSummary:
    """What one model-transport (or batch) pass did."""

    run_dir: Path
    model: str
    """The pinned ``provider/model`` that was called."""
    pending: int
    """LLM units without a verdict (or, with ``rejudge_unscored``, unscored) when the pass started."""
    judged: int
    """Units that got a scored verdict."""
    unscored: int
    """Units recorded unscored in this pass (answers that never parsed, or the provider failed)."""
    retried_parse: int
    """Units whose first answer did not parse and were asked again."""
    provider_errors: int
    skipped_existing: int
    """LLM units that already had a verdict file (not called again)."""
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """Sum over units with a known price; None when no unit's price was known."""
    units_without_cost: int
    wall_s: float
    cached_input_tokens: int = 0
    unscored_reasons: dict[str, int] = field(default_factory=dict)
    """Failure kind → how many units of this pass ended unscored for it."""
    unscored_examples: dict[str, str] = field(default_factory=dict)
    """Failure kind → the full message of one of them."""
    still_unscored: int = 0
    """Units already unscored before this pass and not re-judged (``rejudge_unscored`` retries them)."""
    unsettled_attempts: int = 0
    """Requests of earlier passes with no receipt: in flight when a process died (they may be billed)."""
    mode: Literal["live", "batch"] = "live"
    limiter: LimiterStats | None = None

    @property
    def unscored_total(self) -> int:
        """Units of the run whose verdict is unscored after this pass."""
        return self.unscored + self.still_unscored

    def describe(self) -> str:
        """A human summary: one line of counts, then why units ended unscored and what to do."""
        cost = "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        if self.cost_usd is not None and self.units_without_cost:
            cost += f" (+{self.units_without_cost} units of unknown price)"
        cached = f" ({self.cached_input_tokens} input cached)" if self.cached_input_tokens else ""
        lines = [
            f"{self.model}{' (batch)' if self.mode == 'batch' else ''}: {self.judged} judged, "
            f"{self.unscored} unscored ({self.provider_errors} provider errors), {self.retried_parse} re-asked "
            f"after a bad answer, {self.skipped_existing} already had verdicts; {self.input_tokens}+"
            f"{self.output_tokens} tokens{cached}, cost {cost}, {self.wall_s:.1f}s"
        ]
        if self.unscored_reasons:
            lines.append(f"why {self.unscored} unit(s) ended unscored:")
            for kind, n in sorted(self.unscored_reasons.items(), key=lambda kv: (-kv[1], kv[0])):
                lines.append(f"  {n} {kind}: e.g. {self.unscored_examples.get(kind, '')[:400]}")
        if self.still_unscored:
            lines.append(f"{self.still_unscored} unit(s) were already unscored and were not retried")
        if self.unscored_total:
            lines.append("retry the unscored units with --rejudge-unscored (rejudge_unscored=True)")
        if self.unsettled_attempts:
            lines.append(
                f"{self.unsettled_attempts} request(s) of an earlier pass have no receipt: the process died "
                "while they were in flight (the provider may have billed them)"
            )
        return "\n".join(lines)


def check_pin(run: JudgingRun, spec: ModelSpec) -> None:
    """Refuse a model the run was not prepared for, and any temperature but 0."""
    pin = run.manifest.pin
    if pin.model is not None and (
        pin.model != spec.model or (pin.provider or spec.provider) != spec.provider
    ):
        raise UsageError(
            f"run {run.run_dir} was prepared for model {(pin.provider or '?')}/{pin.model}, "
            f"not {spec.ref!r}; judge it with the pinned model, or re-run prep with the new model"
        )
    if spec.temperature != 0.0:
        raise UsageError(
            f"model {spec.ref!r} has temperature {spec.temperature!r}; every judgment runs at temperature 0"
        )


def _is_unscored(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            data = orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError):  # a broken verdict file is AGGREGATE's to report
        return False
    return isinstance(data, dict) and data.get("status") == "unscored"


def _names(directory: Path) -> set[str]:
    try:
        return {entry.name for entry in os.scandir(directory)}
    except FileNotFoundError:
        return set()


@dataclass(frozen=True, kw_only=True)
class Pending:
    """The LLM units a pass will judge, and what it leaves alone."""

    keys: list[str]
    existing: int
    """Units with a verdict file that are not judged again."""
    still_unscored: int
    """Of ``existing``: unscored verdicts left as they are (no ``rejudge_unscored``)."""


def pending_units(run: JudgingRun, *, rejudge_unscored: bool) -> Pending:
    """Keys of the LLM units still to judge; a missing packet fails the pass before any call."""
    verdicts = _names(run.verdict_dir)
    packets = _names(run.packet_dir)
    verdict_dir = f"{run.verdict_dir}{os.sep}"
    keys: list[str] = []
    existing = still_unscored = 0
    for unit in run.units:
        if unit.kind != "llm":
            continue
        name = f"{unit.key}.verdict.json"
        if name in verdicts:
            unscored = _is_unscored(verdict_dir + name)
            if not (rejudge_unscored and unscored):
                existing += 1
                still_unscored += unscored
                continue
        if f"{unit.key}.packet.json" not in packets:
            raise InputFileError(
                "packet file is missing; re-run prep to rewrite it", path=run.packet_path(unit.key)
            )
        keys.append(unit.key)
    return Pending(keys=keys, existing=existing, still_unscored=still_unscored)


def _now() -> datetime:
    return datetime.now(UTC)


def receipt_line(
    *,
    key: str,
    spec: ModelSpec,
    calls: CallTally,
    started_at: datetime,
    failure: str | None,
    error: str | None,
    prices: str,
    mode: Literal["live", "batch"] = "live",
    batch_id: str | None = None,
    cost_usd: float | None = None,
) -> bytes:
    """One unit receipt as a JSON line (the fields of :class:`~helix.models.CallReceipt`, in order).

    Built as a plain dict: this runs once per unit on the hot path, and the reader validates it.
    ``cost_usd`` overrides the tally's (the batch transport prices at the batch discount).
    """
    record: dict[str, Any] = {
        "version": 2,
        "record": "unit",
        "key": key,
        "provider": spec.provider,
        "requested_model": spec.model,
        "served_model": calls.served_model,
        "mode": mode,
        "calls": calls.calls,
        "attempts": calls.attempts,
        "input_tokens": calls.input_tokens,
        "output_tokens": calls.output_tokens,
        "cached_input_tokens": calls.cached_input_tokens,
        "cache_write_tokens": calls.cache_write_tokens,
        "cost_usd": cost_usd if mode == "batch" else calls.known_cost,
        "price_table_hash": prices,
        "latency_s": calls.latency_s,
        "started_at": started_at,
        "ended_at": _now(),
        "status": "error" if failure not in (None, "unparseable") else "ok",
        "error": error,
        "failure": failure,
        "request_ids": calls.request_ids,
        "batch_id": batch_id,
        "prompt_layout": LAYOUT_REVISION,
    }
    return orjson.dumps(record, option=orjson.OPT_UTC_Z) + b"\n"


def verdict_bytes(judgment: Judgment[VerdictFile], spec: ModelSpec, prompt_version: str) -> bytes:
    """The verdict file of a judgment: the scored verdict, or an unscored record naming the failure."""
    if judgment.result is not None:
        verdict = judgment.result
    else:
        assert judgment.unscored is not None
        verdict = VerdictFile(
            key=judgment.key,
            status="unscored",
            error=judgment.unscored.error,
            judge=JudgeInfo(
                runtime="model",
                model=judgment.calls.served_model or spec.model,
                temperature=spec.temperature,
                prompt_version=prompt_version,
            ),
        )
    return orjson.dumps(verdict.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n"


class VerdictWriter:
    """Appends unit receipts and writes verdict files on one background thread, in submission order.

    Submissions made during one turn of the event loop are handed over together, so the thread
    wakes once per turn rather than once per unit.
    """

    def __init__(self, receipts: ReceiptLog) -> None:
        self._receipts = receipts
        self._queue: queue.SimpleQueue[list[tuple[bytes, str, bytes]] | None] = queue.SimpleQueue()
        self._batch: list[tuple[bytes, str, bytes]] = []
        self._flush_scheduled = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="helix-verdict-writer", daemon=True)
        self._thread.start()

    def submit(self, receipt: bytes, verdict_path: str, verdict: bytes) -> None:
        """Queue one unit's receipt line and verdict file (call from the event loop)."""
        if self._error is not None:
            raise RunError(f"writing verdicts failed: {self._error}") from self._error
        self._batch.append((receipt, verdict_path, verdict))
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._batch:
            self._queue.put(self._batch)
            self._batch = []

    def _run(self) -> None:
        while (batch := self._queue.get()) is not None:
            for receipt, path, data in batch:
                if self._error is not None:
                    break  # drain; the first error is reported by submit/close
                try:
                    self._receipts.append_raw(receipt)  # the receipt is on record before its verdict
                    write_atomic(path, data, fsync=False)
                except BaseException as exc:  # surfaced on the event loop by submit/close
                    self._error = exc

    def close(self) -> None:
        """Wait for every queued write; raise if any failed."""
        self._flush()
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise RunError(f"writing verdicts failed: {self._error}") from self._error


@dataclass
class PassTally:
    """Counts of one pass, summed as units end."""

    judged: int = 0
    unscored: int = 0
    retried_parse: int = 0
    provider_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost_usd: float = 0.0
    cost_known: int = 0
    units_without_cost: int = 0
    done: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def add(self, judgment: Judgment[Any], cost: float | None) -> None:
        """Count one finished unit (``cost``: what its receipt says it cost)."""
        calls = judgment.calls
        if judgment.unscored is None:
            self.judged += 1
        else:
            self.unscored += 1
            self.reasons[judgment.unscored.failure] += 1
            self.examples.setdefault(judgment.unscored.failure, judgment.unscored.message)
        self.retried_parse += judgment.reasked
        self.provider_errors += judgment.provider_failed
        self.input_tokens += calls.input_tokens
        self.output_tokens += calls.output_tokens
        self.cached_input_tokens += calls.cached_input_tokens
        if cost is None:
            self.units_without_cost += calls.calls > 0
        else:
            self.cost_usd += cost
            self.cost_known += 1
        self.done += 1

    def summary(
        self,
        *,
        run_dir: Path,
        spec: ModelSpec,
        pending: Pending,
        wall_s: float,
        unsettled: int,
        mode: Literal["live", "batch"],
        limiter: LimiterStats | None = None,
    ) -> ModelJudgeSummary:
        """The pass summary."""
        return ModelJudgeSummary(
            run_dir=run_dir,
            model=spec.ref,
            pending=len(pending.keys),
            judged=self.judged,
            unscored=self.unscored,
            retried_parse=self.retried_parse,
            provider_errors=self.provider_errors,
            skipped_existing=pending.existing,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cached_input_tokens=self.cached_input_tokens,
            cost_usd=self.cost_usd if self.cost_known else None,
            units_without_cost=self.units_without_cost,
            wall_s=wall_s,
            unscored_reasons=dict(self.reasons),
            unscored_examples=dict(self.examples),
            still_unscored=pending.still_unscored,
            unsettled_attempts=unsettled,
            mode=mode,
            limiter=limiter,
        )


ProgressFn = Callable[[ModelJudgeProgress], None]


def report(
    on_progress: ProgressFn | None, tally: PassTally, key: str, status: UnitStatus, total: int
) -> None:
    """Tell the caller one more unit ended."""
    if on_progress is not None:
        on_progress(ModelJudgeProgress(key=key, status=status, done=tally.done, total=total))
