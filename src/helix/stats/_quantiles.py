"""Nearest-rank quantiles and the five-number-plus-sum summary of a number series.

Nearest-rank means every quantile is a value that was actually measured (no interpolation), so a
reported p90 latency is a latency some run really had, and the same data always gives the same
answer on every platform.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from .._exceptions import UsageError

__all__ = ["SeriesDistribution", "nearest_rank_quantile", "summarize_number_series"]


def _checked(values: Iterable[float], what: str) -> list[float]:
    out = [float(v) for v in values]
    bad = [v for v in out if not math.isfinite(v)]
    if bad:
        raise UsageError(
            f"{what} needs finite numbers, got {bad[0]!r}; drop NaN/inf values before calling it"
        )
    return out


def nearest_rank_quantile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile of ``values`` by the nearest-rank method: always one of ``values``.

    The rank is ``ceil(q * n)`` (at least 1) in ascending order; ``q=0`` gives the minimum and
    ``q=1`` the maximum. Raises :class:`UsageError` for an empty series or ``q`` outside [0, 1].
    """
    if not 0.0 <= q <= 1.0 or math.isnan(q):
        raise UsageError(f"quantile q must be in [0, 1], got {q!r}; pass e.g. 0.5 for the median")
    data = sorted(_checked(values, "nearest_rank_quantile"))
    if not data:
        raise UsageError("nearest_rank_quantile of an empty series is undefined; check len(values) first")
    rank = max(1, math.ceil(q * len(data)))
    return data[rank - 1]


class SeriesDistribution(BaseModel):
    """How a number series is spread: count, extremes, nearest-rank p50/p90, sum and mean."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n: int
    min: float
    p50: float
    p90: float
    max: float
    sum: float
    mean: float


def summarize_number_series(values: Iterable[float]) -> SeriesDistribution | None:
    """Summarize ``values``; ``None`` for an empty series (never a row of zeros that was not measured)."""
    data = sorted(_checked(values, "summarize_number_series"))
    if not data:
        return None
    total = math.fsum(data)
    return SeriesDistribution(
        n=len(data),
        min=data[0],
        p50=nearest_rank_quantile(data, 0.5),
        p90=nearest_rank_quantile(data, 0.9),
        max=data[-1],
        sum=total,
        mean=total / len(data),
    )
