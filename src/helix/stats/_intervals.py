"""Confidence intervals: Wilson score for a proportion, seeded percentile bootstrap for any statistic."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from .._exceptions import UsageError

__all__ = ["RowStatistic", "bootstrap_ci", "wilson_interval"]

FloatArray: TypeAlias = npt.NDArray[np.float64]
RowStatistic: TypeAlias = Callable[[FloatArray], FloatArray]
"""Maps a 2-D array (one resample per row) to a 1-D array (one statistic per row)."""

# Upper bound on resample-matrix cells held in memory at once (the bootstrap works in row chunks).
_CHUNK_CELLS = 4_000_000


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise UsageError(f"confidence must be strictly between 0 and 1, got {confidence!r}; e.g. 0.95")


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for ``successes`` out of ``n`` trials, clamped to [0, 1].

    Well behaved at 0 and ``n`` successes and for small ``n`` (unlike the normal approximation).
    ``n`` must be positive: with no trials there is no rate to bound, so callers report none.
    """
    _check_confidence(confidence)
    if n <= 0:
        raise UsageError(
            f"wilson_interval needs n > 0 trials, got n={n!r}; report no rate when nothing was decided"
        )
    if not 0 <= successes <= n:
        raise UsageError(f"successes must be in [0, n={n}], got {successes!r}")
    z = _z(confidence)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / (1.0 + z2n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    # Guard against rounding pushing the point estimate a hair outside the interval.
    return min(low, p), max(high, p)


def _row_mean(matrix: FloatArray) -> FloatArray:
    return np.asarray(matrix.mean(axis=1), dtype=np.float64)


def _row_median(matrix: FloatArray) -> FloatArray:
    return np.asarray(np.median(matrix, axis=1), dtype=np.float64)


_NAMED: dict[str, RowStatistic] = {"mean": _row_mean, "median": _row_median}


def bootstrap_ci(
    values: Sequence[float],
    stat: Literal["mean", "median"] | RowStatistic = "mean",
    *,
    n_resamples: int = 2000,
    seed: int,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """A seeded percentile-bootstrap interval for ``stat`` over ``values``.

    ``stat`` is ``"mean"``, ``"median"`` or a vectorised callable taking a 2-D array (one resample
    per row) and returning one value per row. Resampling uses ``numpy.random.default_rng(seed)``
    and the interval ends are nearest-rank quantiles of the resampled statistics, so the same
    inputs and seed always give the same interval.
    """
    _check_confidence(confidence)
    if n_resamples < 1:
        raise UsageError(f"n_resamples must be at least 1, got {n_resamples!r}; 2000 is a good default")
    data = np.asarray([float(v) for v in values], dtype=np.float64)
    if data.size == 0:
        raise UsageError(
            "bootstrap_ci of an empty series is undefined; report no interval when nothing was measured"
        )
    if not np.all(np.isfinite(data)):
        raise UsageError("bootstrap_ci needs finite numbers; drop NaN/inf values before calling it")
    fn = _NAMED.get(stat) if isinstance(stat, str) else stat
    if fn is None:
        raise UsageError(f"unknown bootstrap statistic {stat!r}; use 'mean', 'median' or a callable")
    rng = np.random.default_rng(seed)
    n = data.size
    rows_per_chunk = max(1, _CHUNK_CELLS // n)
    stats: list[FloatArray] = []
    done = 0
    while done < n_resamples:
        rows = min(rows_per_chunk, n_resamples - done)
        idx = rng.integers(0, n, size=(rows, n))
        out = np.asarray(fn(data[idx]), dtype=np.float64)
        if out.shape != (rows,):
            raise UsageError(
                f"bootstrap statistic must return one value per row: expected shape {(rows,)}, got {out.shape}"
            )
        stats.append(out)
        done += rows
    resampled = np.concatenate(stats)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(resampled, [alpha, 1.0 - alpha], method="inverted_cdf")
    return float(low), float(high)
