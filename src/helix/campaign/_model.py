"""What a campaign is made of: scenarios, the cell a dispatch runs in, and the durable cell result.

A *cell* is one (scenario, repetition) pair with its own seed. The caller's *dispatch* runs the
agent for a cell and returns a :class:`DispatchResult`; scorers then score the finished cell; the
outcome is one :class:`CellResult`, written to disk so a rerun never pays for it again.

``None`` in ``served_model``, ``cost_usd`` or ``usage`` of a result means *unknown* (a failed
dispatch that never said what it called or spent), never "free" or "none";
:attr:`CellResult.unknown` lists those fields explicitly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..traces import Trace, Usage

__all__ = [
    "CELL_FORMAT_VERSION",
    "CellContext",
    "CellError",
    "CellResult",
    "CellStatus",
    "Dispatch",
    "DispatchResult",
    "FailureStage",
    "FinishedCell",
    "Scenario",
]

CELL_FORMAT_VERSION = 2
"""Version 2 renamed the ``judge`` failure stage to ``score``; version 1 files are read and upgraded."""

CellStatus = Literal["ok", "failed"]
FailureStage = Literal["dispatch", "score"]

SCENARIO_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$"
"""Scenario ids name directories, so they are restricted to letters, digits, ``_``, ``.`` and ``-``."""


class Scenario(BaseModel):
    """One task the agent is run on: what it is given (``input``) and what a correct run reaches (``gold``).

    Scenarios sharing a ``seed_group`` get the same per-replicate seeds (common randomness), so
    variants of one task can be compared pair by pair. ``metadata`` is free-form and part of the
    cache identity like every other field.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=SCENARIO_ID_PATTERN)
    input: Any = None
    gold: Any = None
    seed_group: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CellContext:
    """Everything a dispatch needs to run one cell.

    ``cell_dir`` is the cell's own directory (created before dispatch): put files the agent produces
    there. ``attempt`` counts from 1 and grows when ``cell_retry`` dispatches the same slot again
    (same ``cell_id`` and ``seed``).
    """

    scenario: Scenario
    rep: int
    seed: int
    cell_id: str
    run_dir: Path
    cell_dir: Path
    attempt: int = 1


@dataclass(frozen=True, kw_only=True)
class DispatchResult:
    """What a dispatch returns for one cell.

    ``produced`` holds the produced events (artifacts, proposals: JSON objects or pydantic models,
    body in-band in ``content``). ``cost_usd``/``served_model``/``usage`` are None when unknown.
    ``call_ids`` are the provider request ids the dispatch paid for (they key the cost ledger).
    """

    output: Any = None
    produced: Sequence[Any] = ()
    trace: Trace | None = None
    usage: Usage | None = None
    cost_usd: float | None = None
    served_model: str | None = None
    call_ids: Sequence[str] = ()


class Dispatch(Protocol):
    """The caller's agent runner: ``async def dispatch(ctx: CellContext) -> DispatchResult``."""

    def __call__(self, ctx: CellContext, /) -> Awaitable[DispatchResult]: ...


@dataclass(kw_only=True, eq=False)
class FinishedCell:
    """A dispatched cell as scorers see it: its context and what the dispatch returned.

    Scorers that pay for model calls (the LLM scorer) report them with :meth:`charge`, so the cell's
    cost and the ledger cover scoring as well as dispatch.
    """

    context: CellContext
    result: DispatchResult
    produced: list[dict[str, Any]]
    charges: list[tuple[float | None, str | None]] = field(default_factory=list)

    @property
    def scenario(self) -> Scenario:
        return self.context.scenario

    @property
    def gold(self) -> Any:
        return self.context.scenario.gold

    @property
    def output(self) -> Any:
        return self.result.output

    @property
    def trace(self) -> Trace | None:
        return self.result.trace

    def charge(self, cost_usd: float | None, call_id: str | None = None) -> None:
        """Record a paid call made while judging this cell (``cost_usd`` None = unknown price)."""
        self.charges.append((cost_usd, call_id))


class CellError(BaseModel):
    """A serialized exception: its type, message and the chain of causes (outermost first)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    message: str
    status_code: int | None = None
    causes: tuple[str, ...] = ()

    @classmethod
    def from_exception(cls, exc: BaseException) -> CellError:
        causes: list[str] = []
        seen = {id(exc)}
        inner = exc.__cause__ or exc.__context__
        while inner is not None and id(inner) not in seen and len(causes) < 8:
            seen.add(id(inner))
            causes.append(f"{type(inner).__module__}.{type(inner).__qualname__}: {inner}")
            inner = inner.__cause__ or inner.__context__
        status = getattr(exc, "status_code", None)
        return cls(
            type=f"{type(exc).__module__}.{type(exc).__qualname__}",
            message=str(exc),
            status_code=status if isinstance(status, int) else None,
            causes=tuple(causes),
        )


class CellResult(BaseModel):
    """The durable record of one cell (``<cell>/<cache_key>.result.json``; failed: ``.failed.json``).

    ``scores`` holds one entry per scorer that measured the cell (a scorer that returned None has no
    entry); ``composite`` is their mean, None when no scorer measured. ``cost_usd`` and
    ``call_ids`` cover every attempt, dispatch and scoring; ``cost_complete`` is False when some
    attempt's cost is unknown (then ``cost_usd`` sums only the known part, or is None if none is).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = CELL_FORMAT_VERSION
    cell_id: str
    scenario_id: str
    rep: int
    seed: int
    cache_key: str
    status: CellStatus
    stage: FailureStage | None = None
    error: CellError | None = None
    output: Any = None
    produced: list[dict[str, Any]] = Field(default_factory=list)
    trace: Trace | None = None
    usage: Usage | None = None
    served_model: str | None = None
    cost_usd: float | None = None
    cost_complete: bool = True
    call_ids: tuple[str, ...] = ()
    scores: dict[str, float] = Field(default_factory=dict)
    composite: float | None = None
    attempts: int = 1
    retry_attempts: int = 0
    duration_s: float = 0.0

    unknown: tuple[str, ...] = ()
    """Which of served_model, cost_usd and usage are unknown (see :func:`unknown_fields`)."""

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        return upgrade_stage_record(data, current=CELL_FORMAT_VERSION, what="cell result")


def upgrade_stage_record(data: Any, *, current: int, what: str) -> Any:
    """Read a version 1 record (cell result, receipt, ledger line) as the current version.

    Version 1 called the scoring stage ``judge``; that is the only difference. A version newer than
    ``current`` is refused, never guessed at.
    """
    if not isinstance(data, dict):
        return data
    version = data.get("version", current)
    if version == current:
        return data
    if version == 1:
        upgraded = {**data, "version": current}
        if upgraded.get("stage") == "judge":
            upgraded["stage"] = "score"
        return upgraded
    raise ValueError(
        f"{what} format version {version!r} is not one this Helix reads (1 to {current}); "
        "read it with the Helix version that wrote it, or delete it to run the cell again"
    )


def unknown_fields(
    *, served_model: str | None, cost_usd: float | None, usage: Usage | None
) -> tuple[str, ...]:
    """The names of the cell fields whose value is unknown (None), for :attr:`CellResult.unknown`."""
    return tuple(
        name
        for name, value in (("served_model", served_model), ("cost_usd", cost_usd), ("usage", usage))
        if value is None
    )


def jsonable_produced(events: Sequence[Any]) -> list[dict[str, Any]]:
    """Produced events as plain JSON objects (pydantic models are dumped)."""
    out: list[dict[str, Any]] = []
    for ev in events:
        if isinstance(ev, BaseModel):
            out.append(ev.model_dump(mode="json"))
        elif isinstance(ev, Mapping):
            out.append(dict(ev))
        else:
            raise TypeError(
                f"a produced event must be a JSON object or a pydantic model, got {type(ev).__name__}: "
                f"{ev!r:.80}; return dicts like {{'kind': 'artifact', 'key': ..., 'content': ...}}"
            )
    return out
