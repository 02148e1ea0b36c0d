"""run_campaign: order, concurrency, the durable cache, failures and receipts, retry, the cost ledger."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import orjson
import pytest

from helix import AdmissionRejectedError, CampaignAbortedError, ModelHTTPError, UsageError
from helix.campaign import (
    CampaignProgress,
    CampaignResult,
    CellContext,
    CellPaths,
    CellResult,
    DispatchResult,
    FinishedCell,
    Scenario,
    ScorerConfig,
    cell_retry,
    read_ledger,
    run_campaign,
    run_campaign_sync,
    run_eval_sync,
)

SCENARIOS = [Scenario(id=f"s{i}", input=i, gold=i % 3) for i in range(6)]


class Counting:
    """A dispatch that counts calls per cell and finishes in a random order."""

    def __init__(self, fail: dict[str, list[BaseException]] | None = None, seed: int = 0) -> None:
        self.calls: dict[str, int] = {}
        self.fail = fail or {}
        self.in_flight = 0
        self.peak = 0
        self.rng = random.Random(seed)

    async def __call__(self, ctx: CellContext) -> DispatchResult:
        self.calls[ctx.cell_id] = self.calls.get(ctx.cell_id, 0) + 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.rng.random() * 0.005)
            errors = self.fail.get(ctx.cell_id)
            if errors:
                raise errors.pop(0)
            return DispatchResult(
                output=ctx.scenario.input,
                cost_usd=0.25,
                served_model="agent-2026-01-01",
                call_ids=[f"{ctx.cell_id}:{ctx.attempt}"],
            )
        finally:
            self.in_flight -= 1


def correct(cell: FinishedCell) -> float:
    return 1.0 if cell.output % 3 == cell.gold else 0.0


def run(tmp_path: Path, dispatch: Counting, **kw: object) -> object:
    return run_campaign_sync(SCENARIOS, dispatch, [correct], run_dir=tmp_path, commit="c1", reps=3, **kw)


def test_results_come_back_in_caller_order_with_bounded_concurrency(tmp_path: Path) -> None:
    dispatch = Counting(seed=4)
    result = run_campaign_sync(
        SCENARIOS, dispatch, [correct], run_dir=tmp_path, commit="c1", reps=3, max_concurrency=3
    )
    assert [c.cell_id for c in result.cells] == [f"s{i}@r{r}" for i in range(6) for r in range(3)]
    assert dispatch.peak == 3
    assert all(c.status == "ok" and c.scores == {"correct": 1.0} for c in result.cells)
    assert result.cost_usd == pytest.approx(18 * 0.25)
    assert (result.total, result.cached, result.dispatched, result.failed) == (18, 0, 18, 0)


def test_rerun_dispatches_nothing_cached_and_identity_changes_rerun(tmp_path: Path) -> None:
    first = Counting()
    run(tmp_path, first)
    again = Counting()
    result = run_campaign_sync(SCENARIOS, again, [correct], run_dir=tmp_path, commit="c1", reps=3)
    assert again.calls == {}
    assert result.cached == 18 and result.dispatched == 0
    assert [c.cell_id for c in result.cells][:2] == ["s0@r0", "s0@r1"]
    # More reps: only the new cells run.
    more = Counting()
    run_campaign_sync(SCENARIOS, more, [correct], run_dir=tmp_path, commit="c1", reps=4)
    assert sorted(more.calls) == sorted(f"s{i}@r3" for i in range(6))
    # A new commit, config or dispatch_ref is a new identity: everything runs again.
    for kw in (
        {"commit": "c2"},
        {"commit": "c1", "config": {"t": 1}},
        {"commit": "c1", "dispatch_ref": "p2"},
    ):
        fresh = Counting()
        run_campaign_sync(SCENARIOS[:1], fresh, [correct], run_dir=tmp_path, reps=1, **kw)  # type: ignore[arg-type]
        assert fresh.calls == {"s0@r0": 1}, kw


def test_progress_reports_every_cell(tmp_path: Path) -> None:
    seen: list[CampaignProgress] = []
    run(tmp_path, Counting(), progress=seen.append)
    assert seen[0].done == 0 and seen[0].cell is None
    assert [p.done for p in seen[1:]] == list(range(1, 19))
    assert seen[-1].cost_usd == pytest.approx(18 * 0.25)
    cached: list[CampaignProgress] = []
    run(tmp_path, Counting(), progress=cached.append)
    assert len(cached) == 1 and cached[0].cached == 18 and cached[0].done == 18


def test_failed_dispatch_is_durable_with_receipt_and_unknown_fields(tmp_path: Path) -> None:
    dispatch = Counting(fail={"s1@r0": [ValueError("agent crashed on purpose")]})
    result = run(tmp_path, dispatch)
    failed = result.failed_cells  # type: ignore[attr-defined]
    assert [c.cell_id for c in failed] == ["s1@r0"]
    cell: CellResult = failed[0]
    assert cell.stage == "dispatch" and cell.error is not None
    assert cell.error.type == "builtins.ValueError" and "on purpose" in cell.error.message
    assert cell.served_model is None and cell.cost_usd is None and cell.usage is None
    assert cell.unknown == ("served_model", "cost_usd", "usage")
    paths = CellPaths.of(tmp_path, "s1@r0", cell.cache_key)
    receipt = orjson.loads(Path(paths.receipt).read_bytes())
    assert receipt["stage"] == "dispatch" and receipt["final"] and receipt["settled_cost_usd"] is None
    assert CellResult.model_validate(receipt["cell"]) == cell
    assert b'"served_model":null' in Path(paths.failed).read_bytes()
    assert sum(c.status == "ok" for c in result.cells) == 17  # type: ignore[attr-defined]
    # The next run tries the failed cell again (and only it).
    retry_run = Counting()
    fixed = run(tmp_path, retry_run)
    assert retry_run.calls == {"s1@r0": 1}
    assert fixed.failed == 0  # type: ignore[attr-defined]
    assert not Path(paths.failed).exists()


def test_scorer_failure_keeps_the_dispatch_cost(tmp_path: Path) -> None:
    def flaky(cell: FinishedCell) -> float:
        if cell.context.cell_id == "s0@r1":
            raise KeyError("scorer bug")
        return 1.0

    def out_of_range(cell: FinishedCell) -> float:
        return 2.0 if cell.context.cell_id == "s2@r0" else 0.5

    result = run_campaign_sync(
        SCENARIOS[:3],
        Counting(),
        [flaky, out_of_range],
        run_dir=tmp_path,
        commit="c",
        reps=2,
        cell_retry=cell_retry(3),  # score failures are never retried by the transient predicate
    )
    by = {c.cell_id: c for c in result.cells}
    assert by["s0@r1"].stage == "score" and by["s0@r1"].attempts == 1
    assert by["s0@r1"].cost_usd == 0.25 and by["s0@r1"].served_model == "agent-2026-01-01"
    assert by["s2@r0"].stage == "score" and "must return a number in [0, 1]" in by["s2@r0"].error.message  # type: ignore[union-attr]
    receipt = orjson.loads(Path(CellPaths.of(tmp_path, "s0@r1", by["s0@r1"].cache_key).receipt).read_bytes())
    assert receipt["settled_cost_usd"] == 0.25 and receipt["stage"] == "score"


def test_abort_on_cell_error_writes_the_receipt_first(tmp_path: Path) -> None:
    dispatch = Counting(fail={"s0@r1": [RuntimeError("fatal")]})
    with pytest.raises(CampaignAbortedError, match="s0@r1") as info:
        run_campaign_sync(
            SCENARIOS,
            dispatch,
            [correct],
            run_dir=tmp_path,
            commit="c",
            reps=3,
            abort_on_cell_error=True,
            max_concurrency=1,
        )
    assert Path(info.value.receipt_path).is_file()
    assert isinstance(info.value.cell, CellResult) and info.value.cell.status == "failed"
    assert set(dispatch.calls) == {"s0@r0", "s0@r1"}  # it stopped at the first failed cell


def test_retry_redispatches_the_same_slot_and_charges_every_attempt(tmp_path: Path) -> None:
    def http(status: int) -> ModelHTTPError:
        return ModelHTTPError("scripted", model="m", status_code=status)

    dispatch = Counting(
        fail={
            "s0@r0": [http(503), ConnectionResetError("dropped")],
            "s1@r0": [AdmissionRejectedError("queue full"), http(502), http(504)],
            "s2@r0": [http(400)],
        }
    )
    seeds: dict[str, set[int]] = {}
    inner = dispatch.__call__

    async def tracking(ctx: CellContext) -> DispatchResult:
        seeds.setdefault(ctx.cell_id, set()).add(ctx.seed)
        return await inner(ctx)

    result = run_campaign_sync(
        SCENARIOS[:3], tracking, [correct], run_dir=tmp_path, commit="c", reps=1, cell_retry=cell_retry(3)
    )
    by = {c.cell_id: c for c in result.cells}
    assert by["s0@r0"].status == "ok" and by["s0@r0"].retry_attempts == 2 and by["s0@r0"].attempts == 3
    assert len(seeds["s0@r0"]) == 1  # same slot, same seed
    assert by["s1@r0"].status == "failed" and by["s1@r0"].retry_attempts == 2  # attempts exhausted
    assert by["s2@r0"].status == "failed" and by["s2@r0"].attempts == 1  # 400 is not transient
    d0 = Path(CellPaths.of(tmp_path, "s0@r0", by["s0@r0"].cache_key).directory)
    assert sorted(p.name for p in d0.glob("failure-receipt*")) == [
        "failure-receipt.attempt-1.json",
        "failure-receipt.attempt-2.json",
    ]
    d1 = CellPaths.of(tmp_path, "s1@r0", by["s1@r0"].cache_key)
    assert [Path(p).name for p in d1.receipt_files()] == [
        "failure-receipt.attempt-1.json",
        "failure-receipt.attempt-2.json",
        "failure-receipt.json",
    ]
    entries, skipped = read_ledger(tmp_path)
    assert skipped == 0
    assert len(entries) == sum(dispatch.calls.values()) == 3 + 3 + 1 + 0
    assert [e.attempt for e in entries if e.cell_id == "s0@r0"] == [1, 2, 3]
    ok = [e for e in entries if e.status == "ok"]
    assert {e.cell_id for e in ok} == {"s0@r0"}
    assert by["s0@r0"].cost_usd == 0.25 and not by["s0@r0"].cost_complete  # failed attempts: unknown cost
    assert by["s0@r0"].call_ids == ("s0@r0:3",)


def test_only_transient_dispatch_failures_are_retried(tmp_path: Path) -> None:
    wrapped = RuntimeError("agent step failed")
    wrapped.__cause__ = ConnectionAbortedError()
    dispatch = Counting(
        fail={
            "s0@r0": [ModelHTTPError("x", model="m", status_code=429)],
            "s1@r0": [ModelHTTPError("x", model="m", status_code=401)],
            "s2@r0": [wrapped],
            "s3@r0": [ValueError("bug")],
        }
    )

    def score(cell: FinishedCell) -> float:
        if cell.context.cell_id == "s4@r0":
            raise ModelHTTPError("x", model="m", status_code=503)  # a scorer's outage is not retried
        return 1.0

    result = run_campaign_sync(
        SCENARIOS[:5], dispatch, [score], run_dir=tmp_path, commit="c", cell_retry=cell_retry(2)
    )
    attempts = {c.cell_id: (c.status, c.attempts) for c in result.cells}
    assert attempts == {
        "s0@r0": ("ok", 2),
        "s1@r0": ("failed", 1),
        "s2@r0": ("ok", 2),
        "s3@r0": ("failed", 1),
        "s4@r0": ("failed", 1),
    }


def test_cost_ledger_lines_match_the_cells(tmp_path: Path) -> None:
    dispatch = Counting()
    result = run(tmp_path, dispatch)
    entries, _ = read_ledger(tmp_path)
    assert len(entries) == 18
    assert sum(e.cost_usd or 0.0 for e in entries) == pytest.approx(result.cost_usd)  # type: ignore[attr-defined]
    assert {e.session for e in entries} == {result.session}  # type: ignore[attr-defined]
    lines = (tmp_path / "cost-ledger.jsonl").read_bytes().splitlines()
    assert all(orjson.loads(line)["version"] == 2 for line in lines)


def test_llm_style_scorer_charges_are_added_to_the_cell(tmp_path: Path) -> None:
    async def paid(cell: FinishedCell) -> float:
        cell.charge(0.5, "judge-call-1")
        return 1.0

    result = run_campaign_sync(
        SCENARIOS[:1], Counting(), [ScorerConfig(name="paid", fn=paid)], run_dir=tmp_path, commit="c"
    )
    cell = result.cells[0]
    assert cell.cost_usd == pytest.approx(0.75)
    assert cell.call_ids == ("s0@r0:1", "judge-call-1")


def test_misuse_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="max_concurrency"):
        run(tmp_path, Counting(), max_concurrency=0)
    with pytest.raises(UsageError, match="has no name"):
        run_campaign_sync(SCENARIOS, Counting(), [lambda c: 1.0], run_dir=tmp_path, commit="c")
    with pytest.raises(UsageError, match="unique"):
        run_campaign_sync(SCENARIOS, Counting(), [correct, correct], run_dir=tmp_path, commit="c")
    with pytest.raises(UsageError, match="attempts"):
        cell_retry(0)

    async def wrong(ctx: CellContext) -> DispatchResult:
        return "text"  # type: ignore[return-value]

    result = run_campaign_sync(SCENARIOS[:1], wrong, run_dir=tmp_path, commit="c")
    assert (
        result.cells[0].status == "failed" and "must return a DispatchResult" in result.cells[0].error.message
    )  # type: ignore[union-attr]


def test_run_eval_scores_each_scenario_once(tmp_path: Path) -> None:
    result = run_eval_sync(SCENARIOS, Counting(), [correct], run_dir=tmp_path, commit="c")
    assert [c.cell_id for c in result.cells] == [f"s{i}@r0" for i in range(6)]
    assert result.aggregates.by_scorer["correct"].n == 6


def test_async_api_in_a_running_loop(tmp_path: Path) -> None:
    async def go() -> int:
        result = await run_campaign(
            SCENARIOS[:2], Counting(), {"correct": correct}, run_dir=tmp_path, commit="c"
        )
        return len(result.cells)

    assert asyncio.run(go()) == 2


def test_output_that_cannot_be_stored_fails_the_cell_not_the_campaign(tmp_path: Path) -> None:
    async def odd(ctx: CellContext) -> DispatchResult:
        return DispatchResult(output=object() if ctx.rep == 0 else "fine")

    result = run_campaign_sync(SCENARIOS[:1], odd, run_dir=tmp_path, commit="c", reps=2)
    bad, good = result.cells
    assert bad.status == "failed" and bad.stage == "dispatch" and bad.output is None
    assert bad.error is not None and "cannot be stored as JSON" in bad.error.message
    assert good.status == "ok" and good.output == "fine"
    entries, _ = read_ledger(tmp_path)
    assert sorted(e.status for e in entries) == ["failed", "ok"]


def test_result_index_and_cell_files_each_suffice_for_the_cache(tmp_path: Path) -> None:
    first = run(tmp_path, Counting())
    index_files = list((tmp_path / "cache-index").glob("*.jsonl"))
    assert len(index_files) == 1 and len(index_files[0].read_bytes().splitlines()) == 18
    # Without the index the per-cell files still serve every cell.
    index_files[0].unlink()
    again = Counting()
    second = run(tmp_path, again)
    assert again.calls == {} and second.cells == first.cells  # type: ignore[attr-defined]
    assert len(index_files[0].read_bytes().splitlines()) == 18  # the index was rebuilt from the files
    # A torn index line falls back to the cell's own file.
    rebuilt = Counting()
    (tmp_path / "cache-index" / index_files[0].name).write_bytes(b'{"cell_id": "s0@r0", "cache_')
    third = run(tmp_path, rebuilt)
    assert rebuilt.calls == {} and third.cells == first.cells  # type: ignore[attr-defined]


def test_files_of_version_1_are_read_with_the_judge_stage_renamed(tmp_path: Path) -> None:
    # Helix 0.1.0 wrote format version 1, whose scoring stage was called "judge".
    def flaky(cell: FinishedCell) -> float:
        raise KeyError("scorer bug")

    first = run_campaign_sync(SCENARIOS[:1], Counting(), [flaky], run_dir=tmp_path, commit="c")
    cell = first.cells[0]
    paths = CellPaths.of(tmp_path, cell.cell_id, cell.cache_key)
    for path in (paths.failed, paths.receipt):
        data = orjson.loads(Path(path).read_bytes())
        data.update(version=1, stage="judge")
        if "cell" in data:
            data["cell"].update(version=1, stage="judge")
        Path(path).write_bytes(orjson.dumps(data))
    ledger = tmp_path / "cost-ledger.jsonl"
    line = orjson.loads(ledger.read_bytes().splitlines()[0])
    line.update(version=1, stage="judge")
    ledger.write_bytes(orjson.dumps(line) + b"\n")

    held = run_campaign_sync(
        SCENARIOS[:1], Counting(), [flaky], run_dir=tmp_path, commit="c", retry_failed=False
    )
    assert held.blocked == 1 and held.cells[0].stage == "score" and held.cells[0].version == 2
    entries, skipped = read_ledger(tmp_path)
    assert skipped == 0 and entries[0].stage == "score"
    # a version this Helix does not know is not guessed at: the cell is not served from it
    data = orjson.loads(Path(paths.failed).read_bytes())
    Path(paths.failed).write_bytes(orjson.dumps({**data, "version": 99}))
    with pytest.raises(Exception, match="format version 99"):
        CellResult.model_validate_json(Path(paths.failed).read_bytes())


def test_the_cell_file_is_the_source_of_truth_and_the_index_never_overrides_it(tmp_path: Path) -> None:
    first: CampaignResult = run(tmp_path, Counting())  # type: ignore[assignment]
    by = {c.cell_id: c for c in first.cells}

    def result_file(cell_id: str) -> Path:
        return Path(CellPaths.of(tmp_path, cell_id, by[cell_id].cache_key).result)

    result_file("s0@r0").unlink()  # deleted
    result_file("s1@r1").write_bytes(result_file("s1@r1").read_bytes()[:40])  # truncated
    edited = orjson.loads(result_file("s2@r2").read_bytes())
    edited.update(scores={"correct": 0.0}, composite=0.0)  # edited by hand
    result_file("s2@r2").write_bytes(orjson.dumps(edited))

    again = Counting()
    second: CampaignResult = run(tmp_path, again)  # type: ignore[assignment]
    assert again.calls == {"s0@r0": 1, "s1@r1": 1}, "a missing or corrupt cell file runs that cell again"
    cells = {c.cell_id: c for c in second.cells}
    assert cells["s2@r2"].scores == {"correct": 0.0}, "the edited file is what counts, not the index"
    problems = "\n".join(second.cache_problems)
    assert len(second.cache_problems) == 3, problems
    assert "s0@r0: its result file is gone" in problems
    assert "s1@r1: its result file is unreadable" in problems
    assert "s2@r2: its result file changed after the cache index recorded it" in problems

    # the index was brought up to date: the next rerun finds nothing wrong and runs nothing
    third_dispatch = Counting()
    third: CampaignResult = run(tmp_path, third_dispatch)  # type: ignore[assignment]
    assert third_dispatch.calls == {} and third.cache_problems == []
    assert {c.cell_id: c.scores for c in third.cells} == {c.cell_id: c.scores for c in second.cells}
