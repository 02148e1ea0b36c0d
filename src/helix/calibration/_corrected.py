"""The corrected success rate for labels chosen by human class (Rogan-Gladen), with its interval.

A judge with true positive rate TPR and true negative rate TNR reports "pass" on a fraction
``p_obs = θ·TPR + (1 − θ)·(1 − TNR)`` of a population whose true success rate is θ. Inverting:

    θ = (p_obs + TNR − 1) / (TPR + TNR − 1)

This is the estimator for a label set chosen *within each human class* (the ``by-class`` design:
"label 30-50 passing and 30-50 failing traces"): such a set measures P(verdict | human class), i.e.
TPR and TNR, and nothing about P(human class | verdict). The point estimate plugs in the observed
rates and is clipped to [0, 1]; it is *invalid* when TPR + TNR − 1 is at most
:data:`MIN_DENOMINATOR` (the judge is no better than a coin, or worse). That boundary is decided on
exact fractions of the counts, never on floating point.

The interval carries the three sources of sampling error: the human-pass labels (TPR), the
human-fail labels (TNR) and the unlabelled judged set (p_obs). Each rate gets a Beta posterior
under a Jeffreys prior, Beta(x + ½, n − x + ½). A joint draw is only *possible* when its judged
pass rate lies between the judge's false-pass rate and its true-pass rate (1 − TNR ≤ p ≤ TPR, so
that θ lies in [0, 1]); impossible draws are dropped, which makes the draws a proper posterior of
the model (the v1 interval clipped them to 0 or 1 instead, piling mass on the ends, and then
widened the tails to make up for it). Draws where TPR + TNR − 1 ≤ 0 have no θ at all: they count as
0 for the lower end and as 1 for the upper end, so a judge that is plausibly no better than chance
gets a wide interval rather than a narrow wrong one. The interval is the equal-tailed interval of
the kept draws with :data:`RG_TAIL_SCALE` times the nominal tail mass, the value the coverage
simulation (``benchmarks/bench_calibration.py``) chose. When almost no draw is possible (the
judged pass rate is far outside what the labels say the judge does: the labelled and judged sets
differ), the interval falls back to the clipped draws and says so.

The work is ``draws`` Beta variates per rate, independent of how many items were judged; many
problems at once pass arrays (the coverage simulation).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from .._exceptions import UsageError

__all__ = [
    "DEFAULT_DRAWS",
    "MIN_DENOMINATOR",
    "RG_TAIL_SCALE",
    "CorrectedRate",
    "corrected_rate",
    "corrected_rate_intervals",
    "corrected_rate_point",
    "exact_fraction",
    "tail_quantiles",
]

IntArray: TypeAlias = npt.NDArray[np.int64]
FloatArray: TypeAlias = npt.NDArray[np.float64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]

MIN_DENOMINATOR = 0.05
"""TPR + TNR − 1 at or below this: the judge barely separates the classes; θ is reported invalid."""
DEFAULT_DRAWS = 20_000
PRIOR = 0.5  # Jeffreys
RG_TAIL_SCALE = 0.95
"""Posterior tail mass used per nominal tail mass for this design (chosen by the coverage simulation)."""
_MIN_POSSIBLE_SHARE = 0.01
"""Below this share of possible draws the interval falls back to clipping (see the module docstring)."""


def exact_fraction(value: float | int | Fraction) -> Fraction:
    """``value`` as the fraction its decimal text says (0.05 -> 1/20, not the binary float's 0.05000000000000000277)."""
    if isinstance(value, Fraction | int):
        return Fraction(value)
    return Fraction(repr(float(value)))


def _check_rate(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"{name} must be a rate in [0, 1], got {value!r}")


def corrected_rate_point(
    p_obs: float | Fraction, tpr: float | Fraction, tnr: float | Fraction
) -> float | None:
    """θ = (p_obs + TNR − 1) / (TPR + TNR − 1) clipped to [0, 1]; ``None`` when invalid.

    Pass :class:`~fractions.Fraction` values of the counts (``Fraction(tp, n_pos)``) to decide the
    boundary exactly; floats are read as the decimal they print as.
    """
    for name, value in (("p_obs", p_obs), ("tpr", tpr), ("tnr", tnr)):
        _check_rate(name, float(value))
    p, a, b = exact_fraction(p_obs), exact_fraction(tpr), exact_fraction(tnr)
    denominator = a + b - 1
    if denominator <= exact_fraction(MIN_DENOMINATOR):
        return None
    return float(min(Fraction(1), max(Fraction(0), (p + b - 1) / denominator)))


def _as_counts(name: str, value: npt.ArrayLike) -> IntArray:
    arr = np.asarray(value, dtype=np.int64)
    if np.any(arr < 0):
        raise UsageError(f"{name} must be non-negative counts, got {value!r}")
    return np.atleast_1d(arr)


def tail_quantiles(
    values: FloatArray, keep: BoolArray, low_floor: BoolArray, high_ceiling: BoolArray, alpha: float
) -> tuple[FloatArray, FloatArray]:
    """Per row, the ``alpha`` and ``1 − alpha`` quantiles (inverted CDF) of the kept draws.

    ``values`` are draws (rows = problems); ``keep`` marks the draws that count; among those,
    ``low_floor`` draws count as 0 for the lower quantile and ``high_ceiling`` draws as 1 for the
    upper one (draws with no value). Rows with nothing kept get [0, 1].
    """
    plain = keep & ~low_floor & ~high_ceiling
    unknown = keep & (low_floor | high_ceiling)
    ordered = np.sort(np.where(plain, values, np.inf), axis=1)
    kept = keep.sum(axis=1)
    n_plain = plain.sum(axis=1)
    n_unknown = unknown.sum(axis=1)
    rows = np.arange(values.shape[0])
    last = values.shape[1] - 1
    # Lower: the unknown draws sort first (as 0); upper: they sort last (as 1).
    r_low = np.maximum(np.ceil(alpha * kept).astype(np.int64) - 1, 0)
    r_high = np.maximum(np.ceil((1.0 - alpha) * kept).astype(np.int64) - 1, 0)
    low_index = np.clip(r_low - n_unknown, 0, last)
    low = np.where(r_low < n_unknown, 0.0, ordered[rows, low_index])
    high = np.where(r_high >= n_plain, 1.0, ordered[rows, np.clip(r_high, 0, last)])
    empty = kept == 0
    return np.where(empty, 0.0, low), np.where(empty, 1.0, high)


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
    tail_scale: float = RG_TAIL_SCALE,
) -> tuple[FloatArray, FloatArray, BoolArray]:
    """Interval ends for θ, one per problem; every argument is a count or an array of counts.

    ``tp`` of ``n_pos`` human-pass labels were judged pass, ``tn`` of ``n_neg`` human-fail labels
    were judged fail, and ``judged_pass`` of ``judged`` unlabelled items were judged pass. Arrays
    broadcast together; the result is (lower, upper, fell_back), arrays of that shape, where
    ``fell_back`` marks problems whose judged set was incompatible with the labels (see the module
    docstring). Seeded.
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
    tpr = rng.beta((a + PRIOR)[:, None], (na - a + PRIOR)[:, None], size=shape)
    tnr = rng.beta((b + PRIOR)[:, None], (nb - b + PRIOR)[:, None], size=shape)
    p = rng.beta((k + PRIOR)[:, None], (n - k + PRIOR)[:, None], size=shape)
    denominator = tpr + tnr - 1.0
    ok = denominator > 0.0
    theta = (p + tnr - 1.0) / np.where(ok, denominator, 1.0)
    possible = ok & (theta >= 0.0) & (theta <= 1.0)
    chance = ~ok
    alpha = tail_scale * (1.0 - confidence) / 2.0
    keep = possible | chance
    fell_back = keep.sum(axis=1) < _MIN_POSSIBLE_SHARE * draws
    keep = np.where(fell_back[:, None], True, keep)
    low, high = tail_quantiles(np.clip(theta, 0.0, 1.0), keep, chance, chance, alpha)
    out_shape = counts[0].shape
    return low.reshape(out_shape), high.reshape(out_shape), fell_back.reshape(out_shape)


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
    incompatible: bool = False
    """The judged set's pass rate is outside what the labels allow (the interval clips instead)."""


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
        raise UsageError(
            "the judged set is empty: judge at least one unlabelled item to estimate a success rate"
        )
    if n_pos <= 0 or n_neg <= 0:
        raise UsageError(
            f"need human labels of both classes (got {n_pos} pass, {n_neg} fail); label more traces"
        )
    p_obs = Fraction(judged_pass, judged)
    tpr, tnr = Fraction(tp, n_pos), Fraction(tn, n_neg)
    theta = corrected_rate_point(p_obs, tpr, tnr)
    if theta is None:
        return CorrectedRate(
            status="invalid",
            p_obs=float(p_obs),
            theta=None,
            low=None,
            high=None,
            reason=(
                f"TPR + TNR - 1 = {tp}/{n_pos} + {tn}/{n_neg} - 1 = {float(tpr + tnr - 1):.3f}, at or below "
                f"{MIN_DENOMINATOR}: the judge does not separate pass from fail, so its pass rate cannot be "
                "corrected; improve the judge first"
            ),
        )
    low, high, fell_back = corrected_rate_intervals(
        tp, n_pos, tn, n_neg, judged_pass, judged, seed=seed, draws=draws, confidence=confidence
    )
    lo, hi = float(low[0]), float(high[0])
    return CorrectedRate(
        status="ok",
        p_obs=float(p_obs),
        theta=theta,
        low=min(lo, theta),
        high=max(hi, theta),
        incompatible=bool(fell_back[0]),
    )
