"""Discovery saturation: have we read enough traces to have seen the failure modes that matter?

Each trace read contributes at most one note (its first thing wrong), assigned to one category or
to none. With n the assigned notes, f_k the number of categories seen exactly k times and S_obs
the categories seen (methods.md §4):

- Good–Turing sample coverage Ĉ = 1 − f1/n: the estimated chance that the next note falls in a
  category already seen. Its standard error is Esty's (1983), se = sqrt(f1(1 − f1/n) + 2 f2) / n;
  the interval is Ĉ ± z·se, clipped to [0, 1].
- Chao1 richness Ŝ = S_obs + f1²/(2 f2) (bias-corrected S_obs + f1(f1 − 1)/2 when f2 = 0), with
  Chao's (1987) variance and log-normal interval, whose lower end is never below S_obs.
- Stop rule: at least K traces read, no new category in the last K, and Ĉ ≥ target.
- The discovery curve: categories seen after each trace read.

Pure functions over category labels; no I/O.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from .._exceptions import UsageError

__all__ = ["Saturation", "chao1", "discovery_curve", "good_turing_coverage", "saturation"]

_Z95 = 1.959963984540054


def good_turing_coverage(
    counts: Sequence[int], *, z: float = _Z95
) -> tuple[float, tuple[float, float]] | None:
    """Ĉ = 1 − f1/n and its interval from category counts (None when nothing was assigned)."""
    n = sum(counts)
    if n == 0:
        return None
    f1 = sum(1 for c in counts if c == 1)
    f2 = sum(1 for c in counts if c == 2)
    cov = 1.0 - f1 / n
    se = math.sqrt(max(f1 * (1.0 - f1 / n) + 2.0 * f2, 0.0)) / n
    return cov, (max(0.0, cov - z * se), min(1.0, cov + z * se))


def chao1(counts: Sequence[int], *, z: float = _Z95) -> tuple[float, tuple[float, float]] | None:
    """Chao1 richness and its log-normal interval from category counts (None when none was seen)."""
    positive = [c for c in counts if c > 0]
    s_obs = len(positive)
    if s_obs == 0:
        return None
    f1 = sum(1 for c in positive if c == 1)
    f2 = sum(1 for c in positive if c == 2)
    if f2 > 0:
        estimate = s_obs + f1 * f1 / (2.0 * f2)
        r = f1 / f2
        var = f2 * (r**4 / 4.0 + r**3 + r**2 / 2.0)
    else:
        estimate = s_obs + f1 * (f1 - 1) / 2.0
        var = (
            f1 * (f1 - 1) / 2.0 + f1 * (2 * f1 - 1) ** 2 / 4.0 - f1**4 / (4.0 * estimate) if estimate else 0.0
        )
    unseen = estimate - s_obs
    if unseen <= 0 or var <= 0:
        return estimate, (float(s_obs), estimate)
    k = math.exp(z * math.sqrt(math.log(1.0 + var / unseen**2)))
    return estimate, (s_obs + unseen / k, s_obs + unseen * k)


def discovery_curve(labels: Sequence[str | None]) -> list[int]:
    """Categories seen after each trace read (``labels[i]``: the category of trace i's note, or None)."""
    seen: set[str] = set()
    curve = []
    for label in labels:
        if label is not None:
            seen.add(label)
        curve.append(len(seen))
    return curve


class Saturation(BaseModel):
    """Where discovery stands after reading the traces (also the ``saturation`` of ``discovery.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    traces: int
    notes: int
    """Notes assigned to a category (n)."""
    categories: int
    singletons: int
    doubletons: int
    coverage: float | None
    coverage_ci: tuple[float, float] | None
    chao1: float | None
    chao1_ci: tuple[float, float] | None
    last_k: int
    target: float
    new_in_last_k: int
    """Categories first seen among the last ``last_k`` traces read."""
    stopped: bool
    """The stop rule holds: enough read, nothing new in the last K, coverage at target."""
    curve: tuple[int, ...]

    def describe(self) -> str:
        """One line: coverage, richness and the stop rule."""
        if self.coverage is None or self.chao1 is None:
            return f"{self.traces} traces read, no categorised note yet: saturation not measured"
        assert self.coverage_ci is not None and self.chao1_ci is not None
        rule = "stop: saturated" if self.stopped else "keep reading: not saturated"
        return (
            f"{self.categories} categories over {self.notes} notes from {self.traces} traces; coverage "
            f"{self.coverage:.2f} [{self.coverage_ci[0]:.2f}, {self.coverage_ci[1]:.2f}]; Chao1 {self.chao1:.1f} "
            f"[{self.chao1_ci[0]:.1f}, {self.chao1_ci[1]:.1f}]; {self.new_in_last_k} new in the last "
            f"{self.last_k} traces; {rule} (target coverage {self.target:.2f})"
        )


def saturation(labels: Sequence[str | None], *, last_k: int = 20, target: float = 0.95) -> Saturation:
    """Saturation of a discovery pass: ``labels`` holds each trace's note category (or None), in reading order."""
    if last_k < 1:
        raise UsageError(f"last_k must be >= 1, got {last_k!r}")
    if not 0.0 < target <= 1.0:
        raise UsageError(f"the coverage target must be in (0, 1], got {target!r}")
    counts = Counter(label for label in labels if label is not None)
    values = list(counts.values())
    cov = good_turing_coverage(values)
    rich = chao1(values)
    curve = discovery_curve(labels)
    before = curve[-last_k - 1] if len(curve) > last_k else 0
    new = (curve[-1] - before) if curve else 0
    stopped = len(labels) >= last_k and new == 0 and cov is not None and cov[0] >= target
    return Saturation(
        traces=len(labels),
        notes=sum(values),
        categories=len(values),
        singletons=sum(1 for c in values if c == 1),
        doubletons=sum(1 for c in values if c == 2),
        coverage=cov[0] if cov else None,
        coverage_ci=cov[1] if cov else None,
        chao1=rich[0] if rich else None,
        chao1_ci=rich[1] if rich else None,
        last_k=last_k,
        target=target,
        new_in_last_k=new,
        stopped=stopped,
        curve=tuple(curve),
    )
