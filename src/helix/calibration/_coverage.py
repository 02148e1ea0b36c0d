"""Where the corrected-rate interval is known to cover less than it claims, or was not measured.

``benchmarks/bench_calibration.py coverage`` simulates both intervals over :data:`COVERAGE_GRID`
(``balanced``: labels chosen by human class, Rogan-Gladen; ``random``: a random label set,
post-stratified) and lists the regimes whose measured coverage of a 95% interval fell below 94%;
they are pasted into :data:`FLAGGED_REGIMES` (and the table into docs/calibration.md).
:func:`coverage_warning` maps a result to its nearest grid regime and says when that regime is
flagged or the result lies outside the grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

__all__ = ["COVERAGE_GRID", "FLAGGED_REGIMES", "CoverageDesign", "CoverageGrid", "coverage_warning"]

CoverageDesign = Literal["balanced", "random"]


@dataclass(frozen=True, kw_only=True)
class CoverageGrid:
    """The regimes the simulation measured (labels per class: m of each class, or 2m random labels)."""

    labels_per_class: tuple[int, ...]
    tpr: tuple[float, ...]
    tnr: tuple[float, ...]
    prevalence: tuple[float, ...]
    judged_n: tuple[int, ...]


COVERAGE_GRID = CoverageGrid(
    labels_per_class=(20, 30, 50, 100),
    tpr=(0.7, 0.8, 0.9, 0.95),
    tnr=(0.7, 0.8, 0.9, 0.95),
    prevalence=(0.1, 0.5, 0.9),
    judged_n=(100, 1_000, 10_000),
)

# (design, labels per class, TPR, TNR, prevalence, judged n) with measured coverage < 94%
# (benchmarks/bench_calibration.py coverage; see docs/calibration.md for the run).
FLAGGED_REGIMES: frozenset[tuple[CoverageDesign, int, float, float, float, int]] = frozenset(
    {
        # FLAGGED-BEGIN
        ("balanced", 50, 0.9, 0.8, 0.5, 1000),  # 0.939 (4000 data sets)
        # FLAGGED-END
    }
)


def _nearest(value: float, grid: tuple[float, ...] | tuple[int, ...], *, log: bool = False) -> float:
    key = (lambda g: abs(math.log(g) - math.log(value))) if log else (lambda g: abs(g - value))
    return min(grid, key=key)


def coverage_warning(
    *,
    design: CoverageDesign = "balanced",
    labels_pass: int,
    labels_fail: int,
    tpr: float,
    tnr: float,
    theta: float,
    judged_n: int,
) -> str | None:
    """A warning when the nearest simulated regime covered < 94%, or the result lies outside the grid."""
    g = COVERAGE_GRID
    m = min(labels_pass, labels_fail) if design == "balanced" else (labels_pass + labels_fail) // 2
    outside = []
    if m < min(g.labels_per_class):
        what = "labels in the smaller class" if design == "balanced" else "labels / 2"
        outside.append(f"{m} {what} (< {min(g.labels_per_class)})")
    if tpr < min(g.tpr):
        outside.append(f"TPR {tpr:.2f} (< {min(g.tpr)})")
    if tnr < min(g.tnr):
        outside.append(f"TNR {tnr:.2f} (< {min(g.tnr)})")
    if judged_n < min(g.judged_n):
        outside.append(f"{judged_n} judged items (< {min(g.judged_n)})")
    if outside:
        return (
            "the interval's coverage was not measured in this regime: "
            + ", ".join(outside)
            + "; treat the interval as approximate (docs/calibration.md)"
        )
    regime = (
        design,
        int(_nearest(max(m, 1), g.labels_per_class, log=True)),
        _nearest(tpr, g.tpr),
        _nearest(tnr, g.tnr),
        _nearest(theta, g.prevalence),
        int(_nearest(max(judged_n, 1), g.judged_n, log=True)),
    )
    if regime in FLAGGED_REGIMES:
        return (
            f"the nearest simulated regime {regime[1:]} (labels/class, TPR, TNR, prevalence, judged n) of the "
            f"{design} design covered the true rate less than 94% of the time; the interval may be too narrow "
            "(docs/calibration.md)"
        )
    return None
