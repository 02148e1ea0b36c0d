"""The cell schedule is pure and deterministic; the plan reads the durable cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix import UsageError
from helix.campaign import (
    CellPaths,
    DispatchResult,
    Scenario,
    build_cell_schedule,
    plan_campaign_run,
    run_campaign_sync,
)

V1_IDENTITY = "c6da2416c105eb3b6c282ee4304c75da"
"""campaign_identity(commit="c1", config={"model": "x"}, judges=["j"]) of Helix 0.1.0 (commit 25c3711)."""

ids = st.lists(st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True), min_size=1, max_size=6, unique=True)


@settings(max_examples=60, deadline=None)
@given(ids=ids, reps=st.integers(1, 5), seed=st.integers(-(2**40), 2**40))
def test_schedule_has_one_slot_per_cell_in_caller_order(ids: list[str], reps: int, seed: int) -> None:
    scenarios = [Scenario(id=i) for i in ids]
    slots = build_cell_schedule(scenarios, seed, reps)
    assert len(slots) == len(ids) * reps
    assert [s.index for s in slots] == list(range(len(slots)))
    assert [(s.scenario_id, s.rep) for s in slots] == [(i, r) for i in ids for r in range(reps)]
    assert len({s.cell_id for s in slots}) == len(slots)
    assert all(0 <= s.seed < 2**63 for s in slots)
    # Deterministic, and a cell keeps its seed when other scenarios join the design.
    again = build_cell_schedule([*scenarios, Scenario(id="zz-extra")], seed, reps)
    assert [s.seed for s in again[: len(slots)]] == [s.seed for s in slots]


@settings(max_examples=40, deadline=None)
@given(reps=st.integers(1, 6), seed=st.integers(0, 2**32))
def test_seed_groups_share_per_replicate_seeds(reps: int, seed: int) -> None:
    scenarios = [
        Scenario(id="a", seed_group="task1"),
        Scenario(id="b", seed_group="task1"),
        Scenario(id="c"),
    ]
    slots = build_cell_schedule(scenarios, seed, reps)
    by = {(s.scenario_id, s.rep): s.seed for s in slots}
    for r in range(reps):
        assert by[("a", r)] == by[("b", r)]
        assert by[("a", r)] != by[("c", r)]
    assert len({by[("a", r)] for r in range(reps)}) == reps  # replicates differ


def test_seed_changes_every_cell_seed() -> None:
    scenarios = [Scenario(id="a"), Scenario(id="b")]
    one = build_cell_schedule(scenarios, 1, 2)
    two = build_cell_schedule(scenarios, 2, 2)
    assert all(x.seed != y.seed for x, y in zip(one, two, strict=True))


def test_schedule_touches_no_filesystem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    build_cell_schedule([Scenario(id="a")], 0, 3)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("scenarios", "reps", "needle"),
    [
        ([Scenario(id="a"), Scenario(id="a")], 1, "'a' appears more than once"),
        ([Scenario(id="a")], 0, "reps must be a positive integer"),
    ],
)
def test_bad_designs_are_refused(scenarios: list[Scenario], reps: int, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        build_cell_schedule(scenarios, 0, reps)


def test_scenario_ids_must_be_safe_directory_names() -> None:
    with pytest.raises(ValueError, match="pattern"):
        Scenario(id="../escape")


def test_identity_needs_a_commit_and_keys_on_everything(tmp_path: Path) -> None:
    def identity(**kw: object) -> str:
        return plan_campaign_run(tmp_path, [Scenario(id="a")], seed=0, reps=1, **kw).identity  # type: ignore[arg-type]

    with pytest.raises(UsageError, match="commit must be a non-empty string"):
        identity(commit="")
    base = identity(commit="c1", config={"model": "x"})
    assert base == identity(commit="c1", config={"model": "x"})
    assert base != identity(commit="c2", config={"model": "x"})
    assert base != identity(commit="c1", config={"model": "y"})
    assert base != identity(commit="c1", config={"model": "x"}, dispatch_ref="v2")
    assert base != identity(commit="c1", config={"model": "x"}, scorers=["j"])


def test_identity_of_version_1_is_kept_so_old_caches_stay_valid(tmp_path: Path) -> None:
    # The identity hash of a campaign (commit "c1", config {"model": "x"}, scorer "j") as version 1
    # of Helix computed it, before judges were renamed scorers: a rerun still finds those cells.
    plan = plan_campaign_run(
        tmp_path, [Scenario(id="a")], seed=0, reps=1, commit="c1", config={"model": "x"}, scorers=["j"]
    )
    assert plan.identity == V1_IDENTITY


def test_cell_paths() -> None:
    paths = CellPaths.of("/r", "a@r0", "k1")
    assert Path(paths.directory) == Path("/r/cells/a@r0")
    assert Path(paths.result) == Path("/r/cells/a@r0/k1.result.json")
    assert Path(paths.failed) == Path("/r/cells/a@r0/k1.failed.json")
    assert Path(paths.receipt) == Path("/r/cells/a@r0/failure-receipt.json")
    assert Path(paths.attempt_receipt(2)) == Path("/r/cells/a@r0/failure-receipt.attempt-2.json")
    with pytest.raises(UsageError, match="cannot name a directory"):
        CellPaths.of("/r", "../x", "k1")


def test_plan_classifies_cached_to_run_and_blocked(tmp_path: Path) -> None:
    scenarios = [Scenario(id="ok"), Scenario(id="bad")]

    async def dispatch(ctx: object) -> DispatchResult:
        if getattr(ctx, "cell_id", "").startswith("bad"):
            raise ValueError("not today")
        return DispatchResult(output=1)

    plan = plan_campaign_run(tmp_path, scenarios, seed=3, reps=2, commit="c")
    assert (len(plan.cached), len(plan.to_run), len(plan.blocked)) == (0, 4, 0)
    run_campaign_sync(scenarios, dispatch, run_dir=tmp_path, commit="c", seed=3, reps=2)
    plan = plan_campaign_run(tmp_path, scenarios, seed=3, reps=2, commit="c")
    assert [s.cell_id for s in plan.cached] == ["ok@r0", "ok@r1"]
    assert [s.cell_id for s in plan.to_run] == ["bad@r0", "bad@r1"]  # failed cells are tried again
    held = plan_campaign_run(tmp_path, scenarios, seed=3, reps=2, commit="c", retry_failed=False)
    assert [s.cell_id for s in held.blocked] == ["bad@r0", "bad@r1"]
    assert held.to_run == ()
    for slot, key in zip(plan.slots, plan.keys, strict=True):
        if slot.scenario_id == "ok":
            assert Path(CellPaths.of(tmp_path, slot.cell_id, key).result).is_file()
    other = plan_campaign_run(tmp_path, scenarios, seed=3, reps=2, commit="c2")
    assert len(other.to_run) == 4  # a new commit is a new cache identity
