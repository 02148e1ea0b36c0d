"""Aggregates match a hand computation; quantiles are measured values; unmeasured means absent."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix.campaign import (
    CampaignResult,
    CellContext,
    DispatchResult,
    FinishedCell,
    Scenario,
    run_campaign_sync,
)

# Hand-chosen scores per (scenario, rep) for two scorers; "never" measures nothing.
ACC = {("a", 0): 1.0, ("a", 1): 0.0, ("a", 2): 1.0, ("b", 0): 0.5, ("b", 1): 0.5, ("b", 2): 0.25}
TONE = {("a", 0): 0.5, ("a", 1): 0.5, ("a", 2): None, ("b", 0): 1.0, ("b", 1): 0.0, ("b", 2): 1.0}


async def dispatch(ctx: CellContext) -> DispatchResult:
    return DispatchResult(output=(ctx.scenario.id, ctx.rep), cost_usd=0.01, served_model="m-1")


def accuracy(cell: FinishedCell) -> float | None:
    return ACC[cell.output]


def tone(cell: FinishedCell) -> float | None:
    return TONE[cell.output]


def never(cell: FinishedCell) -> float | None:
    return None


def _hand_campaign(run_dir: Path) -> CampaignResult:
    return run_campaign_sync(
        [Scenario(id="a"), Scenario(id="b")],
        dispatch,
        [accuracy, tone, never],
        run_dir=run_dir,
        commit="c",
        reps=3,
        seed=11,
    )


def test_small_campaign_matches_hand_computation(tmp_path: Path) -> None:
    result = _hand_campaign(tmp_path)
    agg = result.aggregates
    assert set(agg.by_scorer) == {"accuracy", "tone"}  # the scorer that measured nothing has no entry

    acc = agg.by_scorer["accuracy"]
    assert acc.n == 6
    assert acc.mean == pytest.approx(3.25 / 6)
    d = acc.distribution
    # sorted: 0, .25, .5, .5, 1, 1 -> nearest rank p50 = 3rd value, p90 = ceil(5.4) = 6th value
    assert (d.n, d.min, d.p50, d.p90, d.max, d.sum) == (6, 0.0, 0.5, 1.0, 1.0, 3.25)
    assert acc.ci95[0] <= acc.mean <= acc.ci95[1]

    t = agg.by_scorer["tone"]
    assert t.n == 5 and t.mean == pytest.approx(3.0 / 5)
    assert (t.distribution.p50, t.distribution.p90) == (0.5, 1.0)

    # Composites: the mean of the scorers that measured the cell.
    comps = {c.cell_id: c.composite for c in result.cells}
    assert comps["a@r0"] == pytest.approx(0.75)
    assert comps["a@r2"] == pytest.approx(1.0)  # only accuracy measured it
    assert comps["b@r2"] == pytest.approx(0.625)
    a = agg.by_scenario["a"]
    assert a.n == 3 and a.mean == pytest.approx((0.75 + 0.25 + 1.0) / 3)
    assert (a.distribution.min, a.distribution.p50, a.distribution.max) == (0.25, 0.75, 1.0)
    b = agg.by_scenario["b"]
    assert b.mean == pytest.approx((0.75 + 0.25 + 0.625) / 3)

    # Seeded: the same cells give the same intervals, also when a rerun reads them from the cache.
    again = _hand_campaign(tmp_path)
    assert again.cached == 6 and again.aggregates == agg


def _series(values: list[float], run_dir: Path, *, seed: int = 0, resamples: int = 2000) -> CampaignResult:
    """A campaign of one scenario whose rep ``i`` scores ``values[i]`` (scorer ``j``)."""

    async def plain(ctx: CellContext) -> DispatchResult:
        return DispatchResult(output=values[ctx.rep], cost_usd=0.0, served_model="m")

    def j(cell: FinishedCell) -> float:
        return float(cell.output)

    return run_campaign_sync(
        [Scenario(id="s")],
        plain,
        [j],
        run_dir=run_dir,
        commit="c",
        reps=len(values),
        seed=seed,
        bootstrap_resamples=resamples,
    )


def test_ci_is_the_seeded_bootstrap_of_the_series(tmp_path: Path) -> None:
    agg = _series([0.0, 0.0, 1.0, 1.0, 1.0, 0.2], tmp_path / "a", seed=5, resamples=500).aggregates
    low, high = agg.by_scorer["j"].ci95
    assert 0.0 <= low < agg.by_scorer["j"].mean < high <= 1.0
    # Each band is reproducible: the same cells in another run directory give the same one.
    assert _series([0.0, 0.0, 1.0, 1.0, 1.0, 0.2], tmp_path / "b", seed=5, resamples=500).aggregates == agg


def test_failed_cells_and_empty_campaigns_have_no_aggregates(tmp_path: Path) -> None:
    async def broken(ctx: CellContext) -> DispatchResult:
        raise RuntimeError("down")

    result = run_campaign_sync([Scenario(id="s")], broken, [never], run_dir=tmp_path, commit="c")
    assert result.failed == 1
    assert result.aggregates.by_scorer == {} and result.aggregates.by_scenario == {}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=30))
def test_quantiles_are_measured_scores(scores: list[float]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        stat = _series(scores, Path(tmp), resamples=200).aggregates.by_scorer["j"]
    d = stat.distribution
    for q in (d.min, d.p50, d.p90, d.max):
        assert q in scores
    assert d.n == stat.n == len(scores)
    assert stat.mean == pytest.approx(float(np.mean(scores)))
    assert stat.ci95[0] <= stat.mean + 1e-12 and stat.mean - 1e-12 <= stat.ci95[1]
    if len(set(scores)) == 1:
        assert stat.ci95 == (scores[0], scores[0])
