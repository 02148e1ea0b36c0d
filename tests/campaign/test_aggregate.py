"""Aggregates match a hand computation; quantiles are measured values; unmeasured means absent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix.campaign import (
    CellContext,
    DispatchResult,
    FinishedCell,
    Scenario,
    aggregate_cells,
    run_campaign_sync,
)

# Hand-chosen scores per (scenario, rep) for two judges; "never" measures nothing.
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


def test_small_campaign_matches_hand_computation(tmp_path: Path) -> None:
    result = run_campaign_sync(
        [Scenario(id="a"), Scenario(id="b")],
        dispatch,
        [accuracy, tone, never],
        run_dir=tmp_path,
        commit="c",
        reps=3,
        seed=11,
    )
    agg = result.aggregates
    assert set(agg.by_judge) == {"accuracy", "tone"}  # the judge that measured nothing has no entry

    acc = agg.by_judge["accuracy"]
    assert acc.n == 6
    assert acc.mean == pytest.approx(3.25 / 6)
    d = acc.distribution
    # sorted: 0, .25, .5, .5, 1, 1 -> nearest rank p50 = 3rd value, p90 = ceil(5.4) = 6th value
    assert (d.n, d.min, d.p50, d.p90, d.max, d.sum) == (6, 0.0, 0.5, 1.0, 1.0, 3.25)
    assert acc.ci95[0] <= acc.mean <= acc.ci95[1]

    t = agg.by_judge["tone"]
    assert t.n == 5 and t.mean == pytest.approx(3.0 / 5)
    assert (t.distribution.p50, t.distribution.p90) == (0.5, 1.0)

    # Composites: the mean of the judges that measured the cell.
    comps = {c.cell_id: c.composite for c in result.cells}
    assert comps["a@r0"] == pytest.approx(0.75)
    assert comps["a@r2"] == pytest.approx(1.0)  # only accuracy measured it
    assert comps["b@r2"] == pytest.approx(0.625)
    a = agg.by_scenario["a"]
    assert a.n == 3 and a.mean == pytest.approx((0.75 + 0.25 + 1.0) / 3)
    assert (a.distribution.min, a.distribution.p50, a.distribution.max) == (0.25, 0.75, 1.0)
    b = agg.by_scenario["b"]
    assert b.mean == pytest.approx((0.75 + 0.25 + 0.625) / 3)

    # Seeded: the same cells give the same intervals.
    again = aggregate_cells(result.cells, seed=11)
    assert again == agg


def test_ci_is_the_seeded_bootstrap_of_the_series() -> None:
    from helix.campaign import CellResult

    cells = [
        CellResult(
            cell_id=f"s@r{i}",
            scenario_id="s",
            rep=i,
            seed=i,
            cache_key="k",
            status="ok",
            scores={"j": v},
            composite=v,
        )
        for i, v in enumerate([0.0, 0.0, 1.0, 1.0, 1.0, 0.2])
    ]
    agg = aggregate_cells(cells, seed=5, n_resamples=500)
    low, high = agg.by_judge["j"].ci95
    assert 0.0 <= low < agg.by_judge["j"].mean < high <= 1.0
    # Different seeds may move the bands, but each is reproducible.
    assert aggregate_cells(cells, seed=5, n_resamples=500) == agg


def test_failed_cells_and_empty_campaigns_have_no_aggregates() -> None:
    from helix.campaign import CellResult

    failed = CellResult(
        cell_id="s@r0", scenario_id="s", rep=0, seed=0, cache_key="k", status="failed", stage="dispatch"
    )
    agg = aggregate_cells([failed])
    assert agg.by_judge == {} and agg.by_scenario == {}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=40))
def test_quantiles_are_measured_scores(scores: list[float]) -> None:
    from helix.campaign import CellResult

    cells = [
        CellResult(
            cell_id=f"s@r{i}",
            scenario_id="s",
            rep=i,
            seed=i,
            cache_key="k",
            status="ok",
            scores={"j": v},
            composite=v,
        )
        for i, v in enumerate(scores)
    ]
    stat = aggregate_cells(cells, n_resamples=200).by_judge["j"]
    d = stat.distribution
    for q in (d.min, d.p50, d.p90, d.max):
        assert q in scores
    assert d.n == stat.n == len(scores)
    assert stat.mean == pytest.approx(float(np.mean(scores)))
    assert stat.ci95[0] <= stat.mean + 1e-12 and stat.mean - 1e-12 <= stat.ci95[1]
    if len(set(scores)) == 1:
        assert stat.ci95 == (scores[0], scores[0])
