"""Campaign aggregates: per scorer and per scenario, the mean, a seeded bootstrap ci95, n and the spread.

``by_scorer`` has one entry per scorer that produced at least one score; ``by_scenario`` one per
scenario with at least one composite. A scorer or scenario that measured nothing has no entry:
absence is the honest record, a row of zeros would read as a measured all-zero series. The
distribution is :func:`helix.stats.summarize_number_series` over exactly the scores the mean was
taken over, with nearest-rank quantiles (every quantile is a measured score).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from ..stats import SeriesDistribution, bootstrap_ci, summarize_number_series
from ._model import CellResult

__all__ = ["AggregateStat", "CampaignAggregates", "aggregate_cells", "aggregate_series"]


class AggregateStat(BaseModel):
    """Mean, seeded bootstrap ci95 of the mean, n, and the distribution of one score series."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mean: float
    ci95: tuple[float, float]
    n: int
    distribution: SeriesDistribution


class CampaignAggregates(BaseModel):
    """``by_scorer`` (scorer name → stat) and ``by_scenario`` (scenario id → stat over composites)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    by_scorer: dict[str, AggregateStat]
    by_scenario: dict[str, AggregateStat]


def _series_seed(seed: int, kind: str, name: str) -> int:
    # A stable per-series seed (zlib.crc32 is the same on every platform and run, unlike hash()).
    return (seed * 1_000_003 + zlib.crc32(f"{kind}\x00{name}".encode())) & 0xFFFFFFFF


def aggregate_series(values: list[float], *, seed: int, n_resamples: int = 2000) -> AggregateStat | None:
    """The stat of one series; None when it is empty (nothing was measured)."""
    dist = summarize_number_series(values)
    if dist is None:
        return None
    if dist.min == dist.max:
        low, high = dist.min, dist.max  # every resample is the same series: the interval is the point
    else:
        low, high = bootstrap_ci(values, "mean", n_resamples=n_resamples, seed=seed)
    return AggregateStat(mean=dist.mean, ci95=(low, high), n=dist.n, distribution=dist)


def aggregate_cells(
    cells: Iterable[CellResult], *, seed: int = 0, n_resamples: int = 2000
) -> CampaignAggregates:
    """Aggregate finished cells (failed cells contribute nothing: they have no scores).

    Keys appear in first-seen order of the cells. The bootstrap of each series is seeded from
    ``seed`` and the series' name, so the same cells always give the same intervals.
    """
    scorer_scores: dict[str, list[float]] = {}
    scenario_scores: dict[str, list[float]] = {}
    for cell in cells:
        if cell.status != "ok":
            continue
        for name, value in cell.scores.items():
            scorer_scores.setdefault(name, []).append(value)
        if cell.composite is not None and math.isfinite(cell.composite):
            scenario_scores.setdefault(cell.scenario_id, []).append(cell.composite)
    by_scorer: dict[str, AggregateStat] = {}
    for name, values in scorer_scores.items():
        # The salt "judge" predates the rename to scorers; kept so the same cells keep their intervals.
        stat = aggregate_series(values, seed=_series_seed(seed, "judge", name), n_resamples=n_resamples)
        if stat is not None:
            by_scorer[name] = stat
    by_scenario: dict[str, AggregateStat] = {}
    for sid, values in scenario_scores.items():
        stat = aggregate_series(values, seed=_series_seed(seed, "scenario", sid), n_resamples=n_resamples)
        if stat is not None:
            by_scenario[sid] = stat
    return CampaignAggregates(by_scorer=by_scorer, by_scenario=by_scenario)
