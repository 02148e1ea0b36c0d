"""Judge self-consistency: how often a judge changes its mind when it judges the same unit again.

For one criterion, each unit (trace) was judged several times (reruns at temperature 0, or above).

- **Flip rate**: the share of units whose repeated results are not all equal (``pass``, ``fail`` and
  ``uncertain`` are three different results; an abstention on one rerun and a pass on another is a flip).
- **Fleiss' kappa** over the repeated results, the reruns as raters: with n_ij the reruns of unit i
  that gave result j, P_i = (Σ_j n_ij² − n_i) / (n_i (n_i − 1)), P̄ the mean of P_i, p_j the share of
  all results that are j and P_e = Σ_j p_j², κ = (P̄ − P_e) / (1 − P_e). Units may have different numbers
  of reruns (each P_i uses its own n_i); units with fewer than two are left out. κ is undefined when
  every result of every unit is the same (P_e = 1): nothing varies, there is nothing to agree on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from .._exceptions import UsageError

__all__ = ["CONSISTENCY_RESULTS", "ConsistencyResult", "fleiss_kappa", "self_consistency"]

CONSISTENCY_RESULTS: tuple[str, ...] = ("pass", "fail", "uncertain")


class ConsistencyResult(BaseModel):
    """One criterion's self-consistency over repeated judgments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    criterion_id: str
    units: int
    """Units with at least two results."""
    reruns_min: int
    reruns_max: int
    flips: int
    flip_rate: float | None
    kappa: float | None
    kappa_reason: str | None = None
    results: dict[str, int]
    """How many results of each kind, over every rerun of every unit."""


def fleiss_kappa(ratings: Sequence[Sequence[str]]) -> float | None:
    """Fleiss' kappa of repeated categorical ratings (one list per unit); None when undefined."""
    rows = [r for r in ratings if len(r) >= 2]
    if not rows:
        return None
    totals: Counter[str] = Counter()
    agreement = 0.0
    for r in rows:
        counts = Counter(r)
        totals.update(counts)
        n = len(r)
        agreement += (sum(c * c for c in counts.values()) - n) / (n * (n - 1))
    p_bar = agreement / len(rows)
    all_ratings = sum(totals.values())
    p_e = sum((c / all_ratings) ** 2 for c in totals.values())
    if p_e >= 1.0:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


def self_consistency(
    criterion_id: str, reruns: Mapping[str, Sequence[str]] | Iterable[Sequence[str]]
) -> ConsistencyResult:
    """Flip rate and Fleiss' kappa of one criterion; ``reruns`` maps unit -> its results (or is a list)."""
    lists = [list(v) for v in (reruns.values() if isinstance(reruns, Mapping) else reruns)]
    for r in lists:
        bad = sorted(set(r) - set(CONSISTENCY_RESULTS))
        if bad:
            raise UsageError(
                f"criterion {criterion_id!r}: results must be pass, fail or uncertain, got {bad!r}"
            )
    rows = [r for r in lists if len(r) >= 2]
    flips = sum(len(set(r)) > 1 for r in rows)
    kappa = fleiss_kappa(rows)
    reason = None
    if not rows:
        reason = "no unit was judged twice"
    elif kappa is None:
        reason = "every rerun of every unit gave the same result: nothing varies"
    counts = Counter(x for r in rows for x in r)
    return ConsistencyResult(
        criterion_id=criterion_id,
        units=len(rows),
        reruns_min=min((len(r) for r in rows), default=0),
        reruns_max=max((len(r) for r in rows), default=0),
        flips=flips,
        flip_rate=flips / len(rows) if rows else None,
        kappa=kappa,
        kappa_reason=reason,
        results={k: counts.get(k, 0) for k in CONSISTENCY_RESULTS},
    )
