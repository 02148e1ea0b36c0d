"""``run_agent_matrix``: the bare N-axis cartesian scheduler with concurrency control.

No cache, no scorers, no receipts: every combination of the axes' values is handed to the caller's
async function, at most ``max_concurrency`` at once, and the results come back in cartesian order
(first axis slowest). Reach for it for raw scheduling; :func:`run_campaign` is the eval surface.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .._exceptions import UsageError
from ._executor import bounded_map, run_sync

__all__ = ["AgentMatrixCell", "run_agent_matrix", "run_agent_matrix_sync"]

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class AgentMatrixCell(Generic[T]):
    """One combination: its position, its coordinates (axis name → value), and its value or error."""

    index: int
    coords: Mapping[str, Any]
    value: T | None = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


async def run_agent_matrix(
    axes: Mapping[str, Sequence[Any]],
    fn: Callable[[Mapping[str, Any]], Awaitable[T]],
    *,
    max_concurrency: int = 8,
    fail_fast: bool = False,
) -> list[AgentMatrixCell[T]]:
    """Call ``fn(coords)`` for every combination of ``axes`` and return the cells in cartesian order.

    A raising call is recorded on its cell (``error``) and the others go on; with ``fail_fast`` the
    first error cancels the rest and is raised.
    """
    if not axes:
        raise UsageError("run_agent_matrix needs at least one axis, e.g. {'model': [...], 'scenario': [...]}")
    empty = [name for name, values in axes.items() if len(values) == 0]
    if empty:
        raise UsageError(f"axis {empty[0]!r} has no values; every axis needs at least one")
    names = list(axes)
    combos = [
        dict(zip(names, values, strict=True)) for values in itertools.product(*(axes[n] for n in names))
    ]
    out: list[AgentMatrixCell[T] | None] = [None] * len(combos)

    async def one(index: int, coords: dict[str, Any]) -> None:
        try:
            out[index] = AgentMatrixCell(index=index, coords=coords, value=await fn(coords))
        except Exception as exc:
            if fail_fast:
                raise
            out[index] = AgentMatrixCell(index=index, coords=coords, error=exc)

    await bounded_map(combos, one, limit=max_concurrency)
    return [c for c in out if c is not None]


def run_agent_matrix_sync(
    axes: Mapping[str, Sequence[Any]],
    fn: Callable[[Mapping[str, Any]], Awaitable[T]],
    *,
    max_concurrency: int = 8,
    fail_fast: bool = False,
) -> list[AgentMatrixCell[T]]:
    """:func:`run_agent_matrix` for scripts."""
    return run_sync(run_agent_matrix(axes, fn, max_concurrency=max_concurrency, fail_fast=fail_fast))
