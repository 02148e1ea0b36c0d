"""The corrected success rate for labels chosen at random or by what the judge said (post-stratified).

When the labelled items are a uniform random sample of the judged set, or were chosen *within*
strata the judge's side defines (its verdict, its verdict × a confidence bin, a user key × verdict:
the ``random``, ``by-verdict``, ``stratified`` and ``active`` designs), the labels measure
P(human pass | stratum), and the judged set tells how big each stratum is. Post-stratifying:

    θ = Σ_s W_s · p_s        W_s = N_s / N (stratum share of every judged item), p_s = P(pass | s)

For a binary judge with the verdict as the only stratifier this is the fully efficient estimator;
prediction-powered inference with power tuning (PPI++) is asymptotically the same thing, and
stratified PPI is this with more strata. It stays valid however the labels were allocated across
strata (Neyman allocation, active labeling), because within a stratum the labelled items are a
random sample; the inclusion probability of an item of stratum s is n_s / N_s.

The interval: W ~ Dirichlet(N_s + ½) (the stratum shares of the population the judged items were
drawn from), p_s ~ Beta(y_s + ½, n_s − y_s + ½) (Jeffreys), independent; θ per joint draw; the
equal-tailed interval with :data:`PS_TAIL_SCALE` times the nominal tail mass, the value the coverage
simulation chose. TPR and TNR follow from the same draws by Bayes' rule
(TPR = Σ_{pass strata} W_s p_s / θ, TNR = Σ_{fail strata} W_s (1 − p_s) / (1 − θ)), so a label set
balanced by verdict still measures the judge correctly (counting its pairs would not: it
over-represents one verdict). A stratum without labels keeps the flat prior: a wide, honest interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from .._exceptions import UsageError
from ._corrected import DEFAULT_DRAWS, PRIOR, tail_quantiles

__all__ = ["PS_TAIL_SCALE", "StratifiedRate", "Stratum", "stratified_draws", "stratified_rate"]

FloatArray: TypeAlias = npt.NDArray[np.float64]

PS_TAIL_SCALE = 0.7
"""Posterior tail mass used per nominal tail mass for these designs (chosen by the coverage simulation)."""


@dataclass(frozen=True, kw_only=True)
class Stratum:
    """One stratum of the judged population: how many items it holds and what the labels found."""

    name: str
    verdict: str
    """The judge's verdict on the stratum's items (``pass`` or ``fail``)."""
    judged: int
    """Decided items of the population in this stratum (labelled ones included)."""
    labelled: int
    human_pass: int
    """Labelled items of this stratum the human passed."""


@dataclass(frozen=True, kw_only=True)
class StratifiedRate:
    """θ, TPR and TNR with intervals from a post-stratified label set."""

    theta: float
    theta_interval: tuple[float, float]
    tpr: float | None
    tpr_interval: tuple[float, float] | None
    tnr: float | None
    tnr_interval: tuple[float, float] | None
    p_obs: float


def stratified_draws(
    judged: npt.ArrayLike,
    labelled: npt.ArrayLike,
    human_pass: npt.ArrayLike,
    passing: npt.ArrayLike,
    *,
    rng: np.random.Generator,
    draws: int,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Posterior draws of (θ, TPR, TNR), shape (problems, draws), for arrays of stratum counts.

    ``judged``, ``labelled`` and ``human_pass`` have shape (problems, strata) (or (strata,));
    ``passing`` (strata,) marks the strata whose verdict is pass. TPR (TNR) is NaN in draws where
    θ is 0 (1).
    """
    big_n = np.atleast_2d(np.asarray(judged, dtype=np.float64))
    n = np.atleast_2d(np.asarray(labelled, dtype=np.float64))
    y = np.atleast_2d(np.asarray(human_pass, dtype=np.float64))
    is_pass = np.asarray(passing, dtype=bool)
    problems, strata = big_n.shape
    gam = rng.standard_gamma((big_n + PRIOR)[:, :, None], size=(problems, strata, draws))
    weights = gam / gam.sum(axis=1, keepdims=True)
    rate = rng.beta((y + PRIOR)[:, :, None], (n - y + PRIOR)[:, :, None], size=(problems, strata, draws))
    mass = weights * rate
    theta = mass.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = mass[:, is_pass, :].sum(axis=1) / theta
        tnr = (weights * (1.0 - rate))[:, ~is_pass, :].sum(axis=1) / (1.0 - theta)
    return theta, tpr, tnr


def _interval(values: FloatArray, alpha: float) -> tuple[float, float] | None:
    keep = np.isfinite(values)
    if not keep.any():
        return None
    none = np.zeros_like(keep)
    low, high = tail_quantiles(np.where(keep, values, 0.0), keep, none, none, alpha)
    return float(low[0]), float(high[0])


def stratified_rate(
    strata: Sequence[Stratum],
    *,
    seed: int = 0,
    draws: int = DEFAULT_DRAWS,
    confidence: float = 0.95,
    tail_scale: float = PS_TAIL_SCALE,
) -> StratifiedRate:
    """θ, TPR and TNR with intervals, post-stratified over ``strata`` (see the module docstring)."""
    if not strata:
        raise UsageError("no strata: the judged set is empty")
    for s in strata:
        if s.verdict not in ("pass", "fail"):
            raise UsageError(f"stratum {s.name!r}: verdict must be pass or fail, got {s.verdict!r}")
        if not 0 <= s.human_pass <= s.labelled or s.judged < 0:
            raise UsageError(
                f"stratum {s.name!r}: need 0 <= human_pass <= labelled and judged >= 0 "
                f"(got {s.human_pass}, {s.labelled}, {s.judged})"
            )
    total = sum(s.judged for s in strata)
    if total == 0:
        raise UsageError("the judged set is empty: judge at least one item to estimate a success rate")
    rng = np.random.default_rng(seed)
    theta, tpr, tnr = stratified_draws(
        [s.judged for s in strata],
        [s.labelled for s in strata],
        [s.human_pass for s in strata],
        [s.verdict == "pass" for s in strata],
        rng=rng,
        draws=draws,
    )
    alpha = tail_scale * (1.0 - confidence) / 2.0

    def share(s: Stratum) -> float:
        return s.judged / total

    def rate(s: Stratum) -> float:
        return s.human_pass / s.labelled if s.labelled else 0.5

    point = sum(share(s) * rate(s) for s in strata)
    tp_mass = sum(share(s) * rate(s) for s in strata if s.verdict == "pass")
    tn_mass = sum(share(s) * (1.0 - rate(s)) for s in strata if s.verdict == "fail")
    theta_ci = _interval(theta, alpha)
    assert theta_ci is not None
    return StratifiedRate(
        theta=point,
        theta_interval=(min(theta_ci[0], point), max(theta_ci[1], point)),
        tpr=tp_mass / point if point > 0 else None,
        tpr_interval=_interval(tpr, alpha),
        tnr=tn_mass / (1.0 - point) if point < 1 else None,
        tnr_interval=_interval(tnr, alpha),
        p_obs=sum(s.judged for s in strata if s.verdict == "pass") / total,
    )
