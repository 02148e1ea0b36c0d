"""``run_eval_campaign``: :func:`run_campaign` with capture inverted.

Instead of returning a trace, the caller's *runner* is handed pre-wired capture: a
:class:`TraceRecorder` (the cell's trace), a :class:`ProducedSink` (produced events, body in-band)
and a :class:`CallEmitter` (paid model calls, which are also written into the trace as ``llm``
events). The campaign builds the dispatch result from what was captured, so nothing the runner did
through them can be left out. Capture is sealed when the runner returns (a late write raises), a
cell whose trace captured nothing fails at the dispatch stage, and the caller's integrity checks
must all pass before the first cell is dispatched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Unpack

from pydantic import BaseModel, ConfigDict

from .._exceptions import RunError, UsageError
from ..traces import Event, EventKind, Trace, Usage
from ._model import CellContext, DispatchResult, Scenario
from ._run import CampaignOptions, CampaignResult, run_campaign
from ._scorers import Scorer, ScorerFn

__all__ = [
    "CallEmitter",
    "CaptureRecord",
    "EvalCampaignContext",
    "EvalCampaignResult",
    "EvalRunner",
    "IntegrityCheck",
    "ProducedSink",
    "TraceRecorder",
    "run_eval_campaign",
]


class _Sealable:
    _sealed: bool = False

    def _check_open(self) -> None:
        if self._sealed:
            raise RunError(
                f"{type(self).__name__} of this cell is sealed: the runner already returned. "
                "Await all work inside the runner so everything it does is captured."
            )


@dataclass(eq=False)
class TraceRecorder(_Sealable):
    """Builds the cell's canonical :class:`~helix.traces.Trace`, one event at a time."""

    trace_id: str
    input: Any = None
    events: list[Event] = field(default_factory=list)

    def event(
        self,
        kind: EventKind,
        name: str,
        *,
        input: Any = None,
        output: Any = None,
        status: str = "ok",
        error: str | None = None,
        model: str | None = None,
        usage: Usage | None = None,
        cost: float | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> Event:
        """Record one event (a tool call, a model call, an agent step...) and return it."""
        self._check_open()
        ev = Event.model_validate(
            {
                "id": f"{self.trace_id}:e{len(self.events) + 1}",
                "kind": kind,
                "name": name,
                "input": input,
                "output": output,
                "end": datetime.now(UTC),
                "status": status,
                "error": error,
                "model": model,
                "usage": usage,
                "cost": cost,
                "attributes": dict(attributes or {}),
            }
        )
        self.events.append(ev)
        return ev

    def build(self, output: Any) -> Trace:
        return Trace(id=self.trace_id, input=self.input, output=output, status="ok", events=list(self.events))


@dataclass(eq=False)
class ProducedSink(_Sealable):
    """Collects produced events: ``emit("artifact", key, content=...)`` / ``emit("proposal_created", ...)``."""

    events: list[dict[str, Any]] = field(default_factory=list)

    def emit(
        self,
        kind: str,
        key: str,
        *,
        content: str | None = None,
        title: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> None:
        self._check_open()
        event: dict[str, Any] = {"kind": kind, "key": key, "title": title, "content": content}
        event["attributes"] = dict(attributes or {})
        self.events.append(event)


@dataclass(eq=False)
class CallEmitter(_Sealable):
    """Records every paid model call of the cell (and writes it into the trace as an ``llm`` event).

    The cell's cost is the sum of the calls' costs (unknown when any call's price is unknown); its
    ``served_model`` is the served model ids in first-use order, comma-joined when there are several.
    """

    recorder: TraceRecorder
    costs: list[float | None] = field(default_factory=list)
    call_ids: list[str] = field(default_factory=list)
    served_models: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0

    def paid(
        self,
        *,
        served_model: str | None,
        cost_usd: float | None,
        call_id: str | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        name: str = "model call",
    ) -> None:
        """Record one paid call (``cost_usd`` None = unknown price)."""
        self._check_open()
        self.costs.append(cost_usd)
        if call_id is not None:
            self.call_ids.append(call_id)
        if served_model is not None and served_model not in self.served_models:
            self.served_models.append(served_model)
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.recorder.event(
            "llm",
            name,
            model=served_model,
            cost=cost_usd,
            usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
            attributes={"call_id": call_id} if call_id else None,
        )


@dataclass(frozen=True, kw_only=True)
class EvalCampaignContext:
    """What the runner is handed: the cell, and the capture it must go through."""

    cell: CellContext
    trace: TraceRecorder
    sink: ProducedSink
    emitter: CallEmitter


EvalRunner = Callable[[EvalCampaignContext], Awaitable[Any]]
IntegrityCheck = Callable[[], Iterable[str]]
"""Returns the problems found (empty when the setup is sound), e.g. "backend is a stub"."""


class CaptureRecord(BaseModel):
    """What capture recorded for one cell."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cell_id: str
    status: str
    events: int
    produced: int
    paid_calls: int


@dataclass(frozen=True, kw_only=True)
class EvalCampaignResult:
    """The campaign result and one capture record per cell (schedule order)."""

    campaign: CampaignResult
    records: tuple[CaptureRecord, ...]


def _dispatch_for(runner: EvalRunner) -> Callable[[CellContext], Awaitable[DispatchResult]]:
    async def dispatch(ctx: CellContext) -> DispatchResult:
        recorder = TraceRecorder(trace_id=ctx.cell_id, input=ctx.scenario.input)
        sink = ProducedSink()
        emitter = CallEmitter(recorder=recorder)
        try:
            output = await runner(EvalCampaignContext(cell=ctx, trace=recorder, sink=sink, emitter=emitter))
        finally:
            recorder._sealed = sink._sealed = emitter._sealed = True
        if not recorder.events:
            raise RunError(
                f"cell {ctx.cell_id!r}: the runner returned without recording a single trace event; "
                "record the agent's steps through ctx.trace (or its model calls through ctx.emitter)"
            )
        costs = emitter.costs
        return DispatchResult(
            output=output,
            produced=list(sink.events),
            trace=recorder.build(output),
            usage=Usage(input_tokens=emitter.input_tokens, output_tokens=emitter.output_tokens),
            cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
            served_model=",".join(emitter.served_models) or None,
            call_ids=tuple(emitter.call_ids),
        )

    return dispatch


async def run_eval_campaign(
    scenarios: Sequence[Scenario],
    runner: EvalRunner,
    scorers: Sequence[Scorer | ScorerFn] | Mapping[str, ScorerFn],
    *,
    run_dir: str | Path,
    commit: str,
    integrity_checks: Sequence[IntegrityCheck] = (),
    seed: int = 0,
    **options: Unpack[CampaignOptions],
) -> EvalCampaignResult:
    """Run a campaign whose runner is handed pre-wired capture; integrity checks gate the start.

    Every check in ``integrity_checks`` runs first; if any reports a problem, nothing is
    dispatched and :class:`~helix.UsageError` lists them all. The other options are those of
    :func:`run_campaign`.
    """
    problems = [
        f"{getattr(check, '__name__', repr(check))}: {p}" for check in integrity_checks for p in check()
    ]
    if problems:
        raise UsageError(
            "integrity checks failed, so no cell was dispatched:\n  "
            + "\n  ".join(problems)
            + "\nFix the setup (a real backend, full capture wired) and run again."
        )
    result = await run_campaign(
        scenarios, _dispatch_for(runner), scorers, run_dir=run_dir, commit=commit, seed=seed, **options
    )
    records = tuple(
        CaptureRecord(
            cell_id=c.cell_id,
            status=c.status,
            events=len(c.trace.events) if c.trace is not None else 0,
            produced=len(c.produced),
            paid_calls=sum(1 for e in (c.trace.events if c.trace else []) if e.kind == "llm"),
        )
        for c in result.cells
    )
    return EvalCampaignResult(campaign=result, records=records)
