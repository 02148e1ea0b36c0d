"""The corrected success rate (Rogan-Gladen) and its interval, vectorised over counts.

A judge with true positive rate TPR and true negative rate TNR reports "pass" on a fraction
``p_obs = θ·TPR + (1 − θ)·(1 − TNR)`` of a population whose true success rate is θ. Inverting:

    θ = (p_obs + TNR − 1) / (TPR + TNR − 1)

The point estimate plugs in the observed rates and is clipped to [0, 1]; it is *invalid* when the
denominator is at most :data:`MIN_DENOMINATOR` (the judge is no better than a coin, or worse).

The interval carries all three sources of sampling error: the human-pass labels (TPR), the
human-fail labels (TNR) and the judged set (p_obs). Each rate gets an independent Beta posterior
under a Jeffreys prior, Beta(x + ½, n − x + ½); θ is computed per posterior draw and the interval
is the equal-tailed percentile interval of the clipped draws. Draws whose denominator is not
positive have no θ at all: they count as 0 for the lower end and as 1 for the upper end, so a judge
that is plausibly no better than chance gets a wide interval rather than a narrow wrong one.
Percentile intervals of this posterior cover a little under their nominal level in frequentist
terms (93-94% at 95%, measured), so the posterior level is widened: the tails hold
:data:`TAIL_SCALE` times the nominal tail mass (97% credibility for a 95% interval), which brought
the measured coverage to >= 94% in every regime the docs do not flag.
The work is ``draws`` Beta variates per rate, independent of how many items were judged, so 100k
judged items cost the same as 100; many problems at once pass arrays (the coverage simulation).
``benchmarks/bench_calibration.py`` measures the real coverage; ``_coverage.py`` holds the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from .._exceptions import UsageError

__all__ = [
    "DEFAULT_DRAWS",
    "MIN_DENOMINATOR",
    "TAIL_SCALE",
    "CorrectedRate",
    "corrected_rate",
    "corrected_rate_intervals",
    "corrected_rate_point",
]

IntArray: TypeAlias = npt.NDArray[np.int64]
FloatArray: TypeAlias = npt.NDArray[np.float64]

MIN_DENOMINATOR = 0.05
"""TPR + TNR − 1 at or below this: the judge barely separates the classes; θ is reported invalid."""
DEFAULT_DRAWS = 20_000
_PRIOR = 0.5  # Jeffreys
TAIL_SCALE = 0.6
"""Posterior tail mass used per nominal tail mass (chosen by the coverage simulation)."""


def corrected_rate_point(p_obs: float, tpr: float, tnr: float) -> float | None:
    """θ = (p_obs + TNR − 1) / (TPR + TNR − 1) clipped to [0, 1]; ``None`` when invalid."""
    for name, value in (("p_obs", p_obs), ("tpr", tpr), ("tnr", tnr)):
        if not 0.0 <= value <= 1.0:
            raise UsageError(f"{name} must be a rate in [0, 1], got {value!r}")
    denominator = tpr + tnr - 1.0
    if denominator <= MIN_DENOMINATOR:
        return None
    return float(min(1.0, max(0.0, (p_obs + tnr - 1.0) / denominator)))


def _as_counts(name: str, value: npt.ArrayLike) -> IntArray:
    arr = np.asarray(value, dtype=np.int64)
    if np.any(arr < 0):
        raise UsageError(f"{name} must be non-negative counts, got {value!r}")
    return np.atleast_1d(arr)


def corrected_rate_intervals(
    tp: npt.ArrayLike,
    n_pos: npt.ArrayLike,
    tn: npt.ArrayLike,
    n_neg: npt.ArrayLike,
    judged_pass: npt.ArrayLike,
    judged: npt.ArrayLike,
    *,
    seed: int,
    draws: int = DEFAULT_DRAWS,
    confidence: float = 0.95,
) -> tuple[FloatArray, FloatArray]:
    """Interval ends for θ, one per problem; every argument is a count or an array of counts.

    ``tp`` of ``n_pos`` human-pass labels were judged pass, ``tn`` of ``n_neg`` human-fail labels
    were judged fail, and ``judged_pass`` of ``judged`` (unlabeled) items were judged pass. Arrays
    broadcast together; the result is two float arrays of that shape (lower, upper). Seeded.
    """
    if not 0.0 < confidence < 1.0:
        raise UsageError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if draws < 100:
        raise UsageError(f"draws must be at least 100 for a stable interval, got {draws!r}")
    counts = np.broadcast_arrays(
        _as_counts("tp", tp),
        _as_counts("n_pos", n_pos),
        _as_counts("tn", tn),
        _as_counts("n_neg", n_neg),
        _as_counts("judged_pass", judged_pass),
        _as_counts("judged", judged),
    )
    a, na, b, nb, k, n = (c.reshape(-1) for c in counts)
    if np.any(a > na) or np.any(b > nb) or np.any(k > n):
        raise UsageError("successes exceed trials: need tp <= n_pos, tn <= n_neg, judged_pass <= judged")
    if np.any(na == 0) or np.any(nb == 0) or np.any(n == 0):
        raise UsageError("every problem needs at least one human-pass, one human-fail and one judged item")
    rng = np.random.default_rng(seed)
    shape = (a.size, draws)
    tpr = rng.beta((a + _PRIOR)[:, None], (na - a + _PRIOR)[:, None], size=shape)
    tnr = rng.beta((b + _PRIOR)[:, None], (nb - b + _PRIOR)[:, None], size=shape)
    p = rng.beta((k + _PRIOR)[:, None], (n - k + _PRIOR)[:, None], size=shape)
    denominator = tpr + tnr - 1.0
    ok = denominator > 0.0
    theta = np.clip((p + tnr - 1.0) / np.where(ok, denominator, 1.0), 0.0, 1.0)
    alpha = TAIL_SCALE * (1.0 - confidence) / 2.0
    # A draw without a θ widens both ends: 0 for the lower quantile, 1 for the upper one.
    low = np.quantile(np.where(ok, theta, 0.0), alpha, axis=1, method="inverted_cdf")
    high = np.quantile(np.where(ok, theta, 1.0), 1.0 - alpha, axis=1, method="inverted_cdf")
    out_shape = counts[0].shape
    return np.asarray(low, dtype=np.float64).reshape(out_shape), np.asarray(high, dtype=np.float64).reshape(
        out_shape
    )


CorrectedStatus = Literal["ok", "invalid"]


@dataclass(frozen=True, kw_only=True)
class CorrectedRate:
    """θ for one criterion: the point estimate, its interval and what went into them."""

    status: CorrectedStatus
    p_obs: float
    theta: float | None
    """``None`` when ``status`` is ``invalid`` (TPR + TNR − 1 <= MIN_DENOMINATOR)."""
    low: float | None
    high: float | None
    reason: str | None = None


def corrected_rate(
    *,
    tp: int,
    n_pos: int,
    tn: int,
    n_neg: int,
    judged_pass: int,
    judged: int,
    seed: int = 0,
    draws: int = DEFAULT_DRAWS,
    confidence: float = 0.95,
) -> CorrectedRate:
    """The corrected success rate with its interval, from the four confusion counts and the judged set."""
    if judged <= 0:
        raise UsageError("the judged set is empty: judge at least one item to estimate a success rate")
    if n_pos <= 0 or n_neg <= 0:
        raise UsageError(
            f"need human labels of both classes (got {n_pos} pass, {n_neg} fail); label more traces"
        )
    p_obs = judged_pass / judged
    tpr, tnr = tp / n_pos, tn / n_neg
    theta = corrected_rate_point(p_obs, tpr, tnr)
    if theta is None:
        return CorrectedRate(
            status="invalid",
            p_obs=p_obs,
            theta=None,
            low=None,
            high=None,
            reason=(
                f"TPR + TNR - 1 = {tpr + tnr - 1.0:.3f} <= {MIN_DENOMINATOR}: the judge does not separate "
                "pass from fail, so its pass rate cannot be corrected; improve the judge first"
            ),
        )
    low, high = corrected_rate_intervals(
        tp, n_pos, tn, n_neg, judged_pass, judged, seed=seed, draws=draws, confidence=confidence
    )
    lo, hi = float(low[0]), float(high[0])
    return CorrectedRate(status="ok", p_obs=p_obs, theta=theta, low=min(lo, theta), high=max(hi, theta))
