"""The model transport: judge a prepared run's packets with an LLM provider.

For every LLM packet in ``<run>/packets/`` that has no ``<run>/verdicts/<key>.verdict.json`` yet:
render the one prompt, call the pinned model (at most ``concurrency`` units at a time), parse the
answer strictly, write the verdict, and append a receipt line to ``<run>/receipts.jsonl``.

An answer that does not parse is asked again once, with the parse error and the required shape fed
back; if it still does not parse, the unit is recorded ``unscored`` with the error, never as a pass
or a fail. A provider that keeps failing after the client's retries also ends as ``unscored`` (and
the receipt says why). A later pass skips units that have a verdict file, unscored ones included,
unless ``rejudge_unscored=True`` asks it to try the unscored ones again.

Durability: verdicts are written atomically (temp file and rename) but without fsync, and each
receipt line is flushed before its verdict is renamed into place, so a verdict on disk always has
its receipt. A crashed process loses nothing that was renamed into place; a power loss may drop the
last few files, and a lost verdict is simply judged again on the next run (with a new receipt line).
The writes happen on one background thread, in order: creating a file is the costliest system call
on this path and releases the GIL, so it overlaps with the event loop instead of stalling it. The
pass returns only after every queued write is on disk.
"""

from __future__ import annotations

import gc
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import anyio
import orjson

from .._exceptions import InputFileError, ModelError, RunError, UsageError, VerdictFileError
from .._util import write_atomic
from ..models import CallReceipt, ChatMessage, Completion, Model, ModelSpec, ReceiptLog, price_table_hash
from ._packets import Packet, read_packet
from ._parse import parse_verdict_text
from ._prompt import render_prompt
from ._run import JudgingRun, open_run
from ._verdict import JudgeInfo, VerdictFile

__all__ = [
    "ModelJudgeProgress",
    "ModelJudgeSummary",
    "judge_packets_with_model",
    "judge_packets_with_model_sync",
    "parse_feedback_message",
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
    """What one model-transport pass did."""

    run_dir: Path
    model: str
    """The pinned ``provider/model`` that was called."""
    pending: int
    """LLM units without a verdict when the pass started."""
    judged: int
    """Units that got a scored verdict."""
    unscored: int
    """Units recorded unscored (answer never parsed, or the provider failed)."""
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

    def describe(self) -> str:
        """A one-line human summary."""
        cost = "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        if self.cost_usd is not None and self.units_without_cost:
            cost += f" (+{self.units_without_cost} units of unknown price)"
        return (
            f"{self.model}: {self.judged} judged, {self.unscored} unscored "
            f"({self.provider_errors} provider errors), {self.retried_parse} re-asked after a bad answer, "
            f"{self.skipped_existing} already had verdicts; {self.input_tokens}+{self.output_tokens} "
            f"tokens, cost {cost}, {self.wall_s:.1f}s"
        )


def parse_feedback_message(error: str, criterion_ids: Sequence[str]) -> ChatMessage:
    """The user message that asks the model again after an answer that did not parse."""
    skeleton = orjson.dumps(
        {
            "verdicts": [
                {
                    "criterion_id": cid,
                    "critique": "...",
                    "result": "pass | fail | uncertain",
                    "confidence": 0.9,
                    "blocked_by": None,
                }
                for cid in criterion_ids
            ]
        }
    ).decode()
    return ChatMessage(
        role="user",
        content=(
            "Your answer could not be used. The parser reported:\n"
            f"{error}\n\n"
            "Answer again with one JSON object and nothing else, of exactly this shape, one entry per "
            "criterion id, keys in this order (critique before result; blocked_by is text only when "
            f"the result is uncertain, else null):\n{skeleton}"
        ),
    )


@dataclass
class _Tally:
    judged: int = 0
    unscored: int = 0
    retried_parse: int = 0
    provider_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_known: int = 0
    units_without_cost: int = 0
    done: int = 0


@dataclass
class _Calls:
    """What the provider calls of one unit added up to."""

    calls: int = 0
    completions: int = 0
    """Calls that got an answer (a failed call has no usage, so its cost is unknown)."""
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    latency_s: float = 0.0
    served_model: str | None = None

    def add(self, c: Completion) -> None:
        self.calls += 1
        self.completions += 1
        self.attempts += c.attempts
        self.input_tokens += c.usage.input_tokens
        self.output_tokens += c.usage.output_tokens
        self.cost_usd = None if (self.cost_usd is None or c.cost_usd is None) else self.cost_usd + c.cost_usd
        self.latency_s += c.latency_s
        self.served_model = c.served_model or self.served_model


def _now() -> datetime:
    return datetime.now(UTC)


def _check_pin(run: JudgingRun, spec: ModelSpec) -> None:
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


class _DiskWriter:
    """Appends receipts and writes verdict files on one background thread, in submission order."""

    def __init__(self, receipts: ReceiptLog) -> None:
        self._receipts = receipts
        self._queue: queue.SimpleQueue[tuple[CallReceipt, Path, bytes] | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="helix-verdict-writer", daemon=True)
        self._thread.start()

    def submit(self, receipt: CallReceipt, verdict_path: Path, verdict: bytes) -> None:
        if self._error is not None:
            raise RunError(f"writing verdicts failed: {self._error}") from self._error
        self._queue.put((receipt, verdict_path, verdict))

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is not None:
                continue  # drain; the first error is reported by submit/close
            receipt, path, data = item
            try:
                self._receipts.append(receipt)  # the receipt is on record before its verdict
                write_atomic(path, data, fsync=False)
            except BaseException as exc:  # surfaced on the event loop by submit/close
                self._error = exc

    def close(self) -> None:
        """Wait for every queued write; raise if any failed."""
        self._queue.put(None)
        self._thread.join()
        self._receipts.close()
        if self._error is not None:
            raise RunError(f"writing verdicts failed: {self._error}") from self._error


def _is_unscored(path: Path) -> bool:
    try:
        return VerdictFile.model_validate_json(path.read_bytes()).status == "unscored"
    except ValueError:  # a broken verdict file is AGGREGATE's to report, not ours to overwrite
        return False


def _pending_keys(run: JudgingRun, *, rejudge_unscored: bool) -> tuple[list[str], int]:
    """Keys of the LLM units still to judge; a missing packet fails the pass before any call."""
    pending: list[str] = []
    existing = 0
    for unit in run.units:
        if unit.kind != "llm":
            continue
        verdict_path = run.verdict_path(unit.key)
        if verdict_path.is_file() and not (rejudge_unscored and _is_unscored(verdict_path)):
            existing += 1
            continue
        path = run.packet_path(unit.key)
        if not path.is_file():
            raise InputFileError("packet file is missing; re-run prep to rewrite it", path=path)
        pending.append(unit.key)
    return pending, existing


async def _judge_one(
    packet: Packet, model: Model, calls: _Calls, tally: _Tally
) -> tuple[VerdictFile, str | None]:
    """Judge one packet. Returns the verdict and, for a provider failure, the error text."""
    spec = model.spec
    messages = render_prompt(packet)
    source = f"answer of {spec.ref} for unit {packet.key}"

    def judge_info() -> JudgeInfo:
        return JudgeInfo(
            runtime="model",
            model=calls.served_model or spec.model,
            temperature=spec.temperature,
            prompt_version=packet.pin.prompt_version,
        )

    try:
        first = await model.complete(messages)
        calls.add(first)
        try:
            verdict = parse_verdict_text(
                first.text,
                key=packet.key,
                criterion_ids=packet.criterion_ids,
                source=source,
                judge=judge_info(),
            )
            return verdict, None
        except VerdictFileError as exc:
            first_error = str(exc)
        tally.retried_parse += 1
        retry = [
            *messages,
            ChatMessage(role="assistant", content=first.text),
            parse_feedback_message(first_error, packet.criterion_ids),
        ]
        second = await model.complete(retry)
        calls.add(second)
        try:
            verdict = parse_verdict_text(
                second.text,
                key=packet.key,
                criterion_ids=packet.criterion_ids,
                source=source + " (second try)",
                judge=judge_info(),
            )
            return verdict, None
        except VerdictFileError as exc:
            error = f"the answer did not parse, twice; last error: {exc}"
            return VerdictFile(key=packet.key, status="unscored", error=error, judge=judge_info()), None
    except ModelError as exc:
        calls.calls += 1
        calls.attempts += exc.attempts or 1
        error = f"provider call failed: {exc}"
        return VerdictFile(key=packet.key, status="unscored", error=error, judge=judge_info()), error


async def judge_packets_with_model(
    run_dir: str | Path,
    model: Model,
    *,
    concurrency: int = 16,
    on_progress: Callable[[ModelJudgeProgress], None] | None = None,
    rejudge_unscored: bool = False,
) -> ModelJudgeSummary:
    """Judge every LLM packet of a prepared run that has no verdict yet, with ``model``.

    ``rejudge_unscored`` also judges units whose verdict file is ``unscored`` (a provider outage or
    answers that never parsed in an earlier pass), replacing those files.

    The run's pin must match ``model.spec`` (when the run was prepared with a model). Returns a
    summary; per-unit details are in ``<run>/receipts.jsonl``. The caller closes ``model``.
    """
    if concurrency < 1:
        raise UsageError(f"concurrency must be >= 1, got {concurrency!r}")
    t0 = time.perf_counter()
    run = open_run(run_dir)
    spec = model.spec
    _check_pin(run, spec)
    pending, existing = _pending_keys(run, rejudge_unscored=rejudge_unscored)
    writer = _DiskWriter(ReceiptLog(run.run_dir))
    # The run's units and packets stay alive for the whole pass; without this, every full garbage
    # collection re-scans them while the SDK allocates per request (measured: ~30% of the pass's
    # CPU at concurrency 512). Frozen objects are only exempt from the cyclic collector; they
    # return to it when the pass ends.
    gc.freeze()
    run.verdict_dir.mkdir(parents=True, exist_ok=True)
    prices = price_table_hash()
    tally = _Tally()
    limit = anyio.Semaphore(concurrency)

    async def unit(key: str) -> None:
        async with limit:
            started = _now()
            calls = _Calls()
            # Checked against its key: an edited packet raises InputFileError and ends the pass
            # (verdicts already written stay; fix the packet or re-run prep, then run again).
            packet = read_packet(run.packet_path(key))
            verdict, provider_error = await _judge_one(packet, model, calls, tally)
            receipt = CallReceipt(
                key=key,
                provider=spec.provider,
                requested_model=spec.model,
                served_model=calls.served_model,
                calls=calls.calls,
                attempts=calls.attempts,
                input_tokens=calls.input_tokens,
                output_tokens=calls.output_tokens,
                cost_usd=calls.cost_usd if calls.completions else None,
                price_table_hash=prices,
                latency_s=calls.latency_s,
                started_at=started,
                ended_at=_now(),
                status="error" if provider_error else "ok",
                error=provider_error or verdict.error,
            )
            writer.submit(receipt, run.verdict_path(key), _dump(verdict.model_dump(mode="json")))
        if verdict.status == "scored":
            tally.judged += 1
        else:
            tally.unscored += 1
        tally.provider_errors += provider_error is not None
        tally.input_tokens += calls.input_tokens
        tally.output_tokens += calls.output_tokens
        if receipt.cost_usd is None:
            tally.units_without_cost += calls.calls > 0
        else:
            tally.cost_usd += receipt.cost_usd
            tally.cost_known += 1
        tally.done += 1
        if on_progress is not None:
            on_progress(
                ModelJudgeProgress(key=key, status=verdict.status, done=tally.done, total=len(pending))
            )

    try:
        async with anyio.create_task_group() as tg:
            for key in pending:
                tg.start_soon(unit, key)
    finally:
        gc.unfreeze()
        writer.close()

    return ModelJudgeSummary(
        run_dir=run.run_dir,
        model=spec.ref,
        pending=len(pending),
        judged=tally.judged,
        unscored=tally.unscored,
        retried_parse=tally.retried_parse,
        provider_errors=tally.provider_errors,
        skipped_existing=existing,
        input_tokens=tally.input_tokens,
        output_tokens=tally.output_tokens,
        cost_usd=tally.cost_usd if tally.cost_known else None,
        units_without_cost=tally.units_without_cost,
        wall_s=time.perf_counter() - t0,
    )


def _dump(obj: object) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n"


def judge_packets_with_model_sync(
    run_dir: str | Path,
    model: Model | ModelSpec,
    *,
    concurrency: int = 16,
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
                on_progress=on_progress,
                rejudge_unscored=rejudge_unscored,
            )
        finally:
            await client.aclose()

    return anyio.run(go)
