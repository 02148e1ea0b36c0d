"""Constructed runs for the self-audit: example-shop traces, PREP, verdict files written by the test."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest

from helix import aggregate_run
from helix.examples import criteria_path, generate_episodes
from helix.judging import (
    PROMPT_VERSION,
    CriterionVerdict,
    JudgeInfo,
    Result,
    VerdictFile,
    load_criteria,
    open_run,
    prep_run,
)

PINNED = JudgeInfo(runtime="model", model="gpt-4o-2024-08-06", temperature=0.0, prompt_version=PROMPT_VERSION)


@dataclass(kw_only=True)
class Plan:
    """How the test's judge answers: a result per (trace id, criterion id), ``pass`` by default."""

    results: dict[tuple[str, str], Result] = field(default_factory=dict)
    judge: JudgeInfo | None = PINNED
    unscored_traces: set[str] = field(default_factory=set)
    judges_by_trace: dict[str, JudgeInfo | None] = field(default_factory=dict)


def write_llm_verdicts(run_dir: Path, plan: Plan) -> int:
    """Write a verdict file for every LLM unit of the run; returns how many."""
    run = open_run(run_dir)
    written = 0
    for unit in run.units:
        if unit.kind != "llm":
            continue
        tid = unit.trace_ids[0]
        judge = plan.judges_by_trace.get(tid, plan.judge)
        if tid in plan.unscored_traces:
            verdict = VerdictFile(key=unit.key, status="unscored", error="answer never parsed", judge=judge)
        else:
            entries = []
            for cid in unit.criterion_ids:
                result = plan.results.get((tid, cid), "pass")
                entries.append(
                    CriterionVerdict(
                        criterion_id=cid,
                        critique=f"read the trace for {cid}",
                        result=result,
                        confidence=0.9,
                        blocked_by="the final state is not in the trace" if result == "uncertain" else None,
                    )
                )
            verdict = VerdictFile(key=unit.key, verdicts=tuple(entries), judge=judge)
        run.verdict_path(unit.key).write_bytes(orjson.dumps(verdict.model_dump(mode="json")))
        written += 1
    return written


@dataclass(frozen=True, kw_only=True)
class BuiltRun:
    path: Path
    trace_ids: tuple[str, ...]
    llm_ids: tuple[str, ...]
    code_ids: tuple[str, ...]


MakeRun = Callable[..., BuiltRun]


@pytest.fixture(scope="session")
def prepped_runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int, int, Path], Path]:
    """PREP each (n, seed, criteria) once per session; tests work on copies (PREP fsyncs every file)."""
    cache: dict[tuple[int, int, Path], Path] = {}

    def get(n: int, seed: int, matrix_path: Path) -> Path:
        key = (n, seed, matrix_path)
        if key not in cache:
            base = tmp_path_factory.mktemp("prepped") / "run"
            traces = [e.trace for e in generate_episodes(n=n, seed=seed)]
            prep_run(traces, load_criteria(matrix_path), base)
            cache[key] = base
        return cache[key]

    return get


@pytest.fixture
def make_run(tmp_path: Path, prepped_runs: Callable[[int, int, Path], Path]) -> MakeRun:
    """Build a judged, aggregated run of ``n`` example-shop traces under a fresh directory."""
    counter = [0]

    def build(
        *,
        n: int = 6,
        seed: int = 11,
        plan: Plan | None = None,
        fail: dict[str, int] | None = None,
        aggregate: bool = True,
        matrix_path: Path | None = None,
    ) -> BuiltRun:
        counter[0] += 1
        run_dir = tmp_path / f"run{counter[0]}"
        shutil.copytree(prepped_runs(n, seed, matrix_path or criteria_path()), run_dir)
        run = open_run(run_dir)
        traces, matrix = run.traces, run.matrix
        p = plan or Plan()
        # `fail`: criterion id -> how many of the first traces fail it
        for cid, count in (fail or {}).items():
            for t in traces[:count]:
                p.results.setdefault((t.id, cid), "fail")
        write_llm_verdicts(run_dir, p)
        if aggregate:
            aggregate_run(run_dir)
        return BuiltRun(
            path=run_dir,
            trace_ids=tuple(t.id for t in traces),
            llm_ids=tuple(c.id for c in matrix.llm_criteria),
            code_ids=tuple(c.id for c in matrix.code_criteria),
        )

    return build
