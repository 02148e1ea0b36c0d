"""Cell scorers: anything that scores a finished campaign cell in [0, 1], and two ready-made ones.

A scorer is a callable (sync or async) ``scorer(cell: FinishedCell) -> float | None`` with a
``name``. ``None`` means "not measured" (the scorer had nothing to go on): the cell gets no score
from it, never a zero. Raising is a score-stage failure of the cell. ("Judge" in Helix means one
thing: an LLM or code judge of :mod:`helix.judging`; a scorer may use one.)

* :func:`code_check_scorer` runs a helix code-check criterion on the cell's trace: pass 1.0, fail 0.0.
* :func:`llm_matrix_scorer` judges the cell's trace against the LLM criteria of a matrix through a
  :class:`~helix.models.Model`, with the judging package's own packet, prompt and verdict parser;
  the score is the share of decided criteria that passed (``uncertain`` is not decided).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast, runtime_checkable

from .._exceptions import RunError, UsageError
from ..judging import (
    PROMPT_VERSION,
    CriteriaMatrix,
    Criterion,
    PacketView,
    TrajectoryJudging,
    build_units,
    judge_packet,
    run_code_check,
)
from ..models import AdaptiveLimiter, Model
from ._model import FinishedCell

__all__ = [
    "Scorer",
    "ScorerConfig",
    "ScorerFn",
    "as_scorers",
    "code_check_scorer",
    "llm_matrix_scorer",
    "score_cell",
]

ScorerFn = Callable[[FinishedCell], "float | None | Awaitable[float | None]"]


@runtime_checkable
class Scorer(Protocol):
    """What scores a finished cell: a ``name`` and a call returning a score in [0, 1] or None."""

    @property
    def name(self) -> str: ...

    def __call__(self, cell: FinishedCell, /) -> float | None | Awaitable[float | None]: ...


@dataclass(frozen=True, kw_only=True)
class ScorerConfig:
    """A scorer given as configuration: its name and the function that scores (sync or async)."""

    name: str
    fn: ScorerFn

    def __call__(self, cell: FinishedCell, /) -> float | None | Awaitable[float | None]:
        return self.fn(cell)


def as_scorers(scorers: Sequence[Scorer | ScorerFn] | Mapping[str, ScorerFn] | None) -> tuple[Scorer, ...]:
    """Normalize scorers (objects with ``name``, plain functions, or a name → function mapping)."""
    if scorers is None:
        return ()
    items: list[Scorer] = []
    if isinstance(scorers, Mapping):
        items = [ScorerConfig(name=str(k), fn=v) for k, v in scorers.items()]
    else:
        for j in scorers:
            name = getattr(j, "name", None)
            fn_name = getattr(j, "__name__", None)
            if isinstance(name, str) and callable(j):
                items.append(cast(Scorer, j))
            elif callable(j) and isinstance(fn_name, str) and fn_name != "<lambda>":
                items.append(ScorerConfig(name=fn_name, fn=j))
            else:
                raise UsageError(
                    f"scorer {j!r:.80} has no name; give it a `name` attribute, wrap it in "
                    "ScorerConfig(name=..., fn=...), or pass scorers as a {name: function} mapping"
                )
    names = [j.name for j in items]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UsageError(f"scorer names must be unique; repeated: {dupes}; rename one of them")
    return tuple(items)


async def score_cell(scorer: Scorer, cell: FinishedCell) -> float | None:
    """Run one scorer on a cell and check its answer (a float in [0, 1], a bool, or None)."""
    value = scorer(cell)
    if inspect.isawaitable(value):
        value = await value
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if not isinstance(value, int | float) or not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise RunError(
            f"scorer {scorer.name!r} returned {value!r} for cell {cell.context.cell_id!r}; a scorer must "
            "return a number in [0, 1], a bool, or None when it could not measure the cell"
        )
    return float(value)


def code_check_scorer(criterion: Criterion, *, name: str | None = None) -> ScorerConfig:
    """A scorer running ``criterion`` (kind: code) on the cell's trace: 1.0 pass, 0.0 fail.

    A cell without a trace is not measured (None). A check that raises is a score-stage failure.
    """
    if criterion.kind != "code":
        raise UsageError(
            f"criterion {criterion.id!r} is kind {criterion.kind!r}; code_check_scorer takes kind: code "
            "criteria (use llm_matrix_scorer for llm ones)"
        )

    def score(cell: FinishedCell) -> float | None:
        if cell.trace is None:
            return None
        return 1.0 if run_code_check(criterion, cell.trace).result == "pass" else 0.0

    return ScorerConfig(name=name or criterion.id, fn=score)


def llm_matrix_scorer(matrix: CriteriaMatrix, model: Model, *, name: str = "llm_matrix") -> ScorerConfig:
    """A scorer asking ``model`` for the verdicts of ``matrix``'s LLM criteria on the cell's trace.

    Judged by the one engine (:func:`~helix.judging.judge_packet`): one call per cell, re-asked once
    when the answer does not parse; a provider failure or an answer that never parses is an unscored
    judgment, raised as :class:`~helix.judging.JudgmentUnscoredError` (a judge-stage failure of the
    cell, with the failure kind), never a score. The score is passes over decided criteria; a cell
    whose verdicts are all ``uncertain`` or that has no trace is not measured. Every answered call is
    charged to the cell (and so to the cost ledger). The cells of a campaign share one adaptive
    limiter, so together they back off when the provider says 429.
    """
    if not matrix.llm_criteria:
        raise UsageError(
            f"matrix {matrix.subject!r} has no kind: llm criteria for llm_matrix_scorer to judge"
        )
    spec = model.spec
    if spec.temperature != 0.0:
        raise UsageError(
            f"judge model {spec.ref!r} has temperature {spec.temperature!r}; judgments run at temperature 0, "
            "so pass a ModelSpec with temperature=0.0"
        )
    llm_only = CriteriaMatrix(subject=matrix.subject, criteria=matrix.llm_criteria)
    kind = TrajectoryJudging()
    limiter = AdaptiveLimiter(256)

    async def judge(cell: FinishedCell) -> float | None:
        if cell.trace is None:
            return None
        unit = build_units([cell.trace], llm_only, axis="matrix")[0]
        view = PacketView.of_unit(unit, prompt_version=PROMPT_VERSION)
        judgment = await judge_packet(
            kind, view, model, limiter=limiter, source=f"answer of {spec.ref} for cell {cell.context.cell_id}"
        )
        for cost, request_id in judgment.calls.charges:
            cell.charge(cost, request_id)
        verdict = judgment.result_or_raise()
        decided = [v for v in verdict.verdicts if v.result != "uncertain"]
        if not decided:
            return None
        return sum(v.result == "pass" for v in decided) / len(decided)

    return ScorerConfig(name=name, fn=judge)
