"""Judge self-consistency over a run: re-judge its LLM units N times and measure how often verdicts flip.

```
<run>/reruns/r<i>/<key>.verdict.json    rerun i of unit <key> (i = 1..N); the run's verdicts stay untouched
<run>/reruns/r<i>/<key>.packet.json     dispatch path only: the packet an agent runtime judges again
<run>/calibration/consistency.json      ConsistencyReport: flip rate and Fleiss' kappa per criterion
```

Two paths, one result:

- **model**: :func:`rerun_judges` judges each unit again through the one judging engine
  (:func:`~helix.judging.judge_packet`, the same render, strict parse and failure rule as
  ``helix judge run``), at temperature 0 by default or at a temperature above it.
- **dispatch**: :func:`prepare_dispatch_reruns` writes a copy of each sampled packet per rerun, whose
  ``verdict_file`` points into ``reruns/r<i>/``, for an agent runtime to judge as it judges any
  packet; :func:`collect_reruns` then reads what it wrote.

A rerun that ends unscored is counted and left out of the statistics (it is not a verdict). Reruns
already on disk are kept, so a killed pass resumes.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import anyio
import orjson
from pydantic import BaseModel, ConfigDict

from .._exceptions import UsageError, VerdictFileError
from .._util import read_json, write_atomic, write_json_atomic
from ..models import Model, ModelSpec
from ._consistency import ConsistencyResult, self_consistency

__all__ = [
    "CONSISTENCY_FORMAT_VERSION",
    "ConsistencyReport",
    "collect_reruns",
    "consistency_path",
    "prepare_dispatch_reruns",
    "read_consistency",
    "rerun_judges",
    "rerun_judges_sync",
    "rerun_units",
]

CONSISTENCY_FORMAT_VERSION: Literal[1] = 1


class ConsistencyReport(BaseModel):
    """The content of ``calibration/consistency.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = CONSISTENCY_FORMAT_VERSION
    path: Literal["model", "dispatch"]
    model: str | None
    temperature: float | None
    times: int
    units: tuple[str, ...]
    """The unit keys re-judged."""
    unscored: int
    """Reruns that ended unscored (left out of the statistics)."""
    missing: int = 0
    """Dispatch reruns without a verdict file yet."""
    invalid: int = 0
    """Rerun verdict files that break the verdict contract (left out; ``invalid_example`` says why)."""
    invalid_example: str | None = None
    results: tuple[ConsistencyResult, ...]

    def by_criterion(self, criterion_id: str) -> ConsistencyResult | None:
        """The result of one criterion (None when it was not re-judged)."""
        return next((r for r in self.results if r.criterion_id == criterion_id), None)


def consistency_path(run_dir: str | Path) -> Path:
    """Where a run's self-consistency report lives."""
    return Path(run_dir) / "calibration" / "consistency.json"


def read_consistency(run_dir: str | Path) -> ConsistencyReport | None:
    """The run's self-consistency report, or None when ``helix judge rerun`` has not run."""
    path = consistency_path(run_dir)
    return ConsistencyReport.model_validate(read_json(path)) if path.is_file() else None


def _rerun_dir(run_dir: Path, i: int) -> Path:
    return run_dir / "reruns" / f"r{i}"


def rerun_units(run_dir: str | Path, *, sample: int | None = None, seed: int = 0) -> tuple[str, ...]:
    """The LLM unit keys to re-judge: all, or a seeded sample of ``sample`` of them (sorted)."""
    from ..judging import open_run

    run = open_run(run_dir)
    keys = sorted({u.key for u in run.units if u.kind == "llm"})
    if not keys:
        raise UsageError(f"run {str(run_dir)!r} has no LLM units to re-judge")
    if sample is not None:
        if sample < 1:
            raise UsageError(f"--sample must be at least 1, got {sample}")
        keys = sorted(keys, key=lambda k: hashlib.sha256(f"{seed}\x00{k}".encode()).hexdigest())[:sample]
    return tuple(sorted(keys))


def _check_times(times: int) -> None:
    if times < 2:
        raise UsageError(f"--times must be at least 2 (a flip needs two judgments), got {times}")


def collect_reruns(
    run_dir: str | Path,
    units: Sequence[str],
    *,
    times: int,
    path: Literal["model", "dispatch"],
    model: str | None = None,
    temperature: float | None = None,
) -> ConsistencyReport:
    """Read every rerun verdict of ``units``, compute the statistics and write consistency.json."""
    from ..judging import parse_verdict_file, read_packet_view

    run = Path(run_dir)
    per_criterion: dict[str, dict[str, list[str]]] = {}
    unscored = missing = invalid = 0
    first_invalid: str | None = None
    for key in units:
        view = read_packet_view(run / "packets" / f"{key}.packet.json", key)
        for i in range(1, times + 1):
            file = _rerun_dir(run, i) / f"{key}.verdict.json"
            if not file.is_file():
                missing += 1
                continue
            try:
                verdict = parse_verdict_file(file, key=key, criterion_ids=view.criterion_ids)
            except VerdictFileError as exc:
                invalid += 1
                first_invalid = first_invalid or str(exc)
                continue
            if verdict.status == "unscored":
                unscored += 1
                continue
            for v in verdict.verdicts:
                per_criterion.setdefault(v.criterion_id, {}).setdefault(key, []).append(v.result)
    report = ConsistencyReport(
        path=path,
        model=model,
        temperature=temperature,
        times=times,
        units=tuple(units),
        unscored=unscored,
        missing=missing,
        invalid=invalid,
        invalid_example=first_invalid,
        results=tuple(self_consistency(cid, per_criterion[cid]) for cid in sorted(per_criterion)),
    )
    write_json_atomic(consistency_path(run), report.model_dump(mode="json"))
    return report


async def rerun_judges(
    run_dir: str | Path,
    model: Model,
    *,
    times: int,
    sample: int | None = None,
    seed: int = 0,
    concurrency: int = 8,
) -> ConsistencyReport:
    """Re-judge the run's LLM units ``times`` times with ``model`` through the judging engine.

    ``model.spec.temperature`` is the temperature of the reruns (0 unless the caller chose more).
    The caller closes ``model``.
    """
    from ..judging import JudgeInfo, TrajectoryJudging, VerdictFile, judge_packet, read_packet_view
    from ..models import AdaptiveLimiter

    _check_times(times)
    run = Path(run_dir)
    units = rerun_units(run, sample=sample, seed=seed)
    kind = TrajectoryJudging()
    spec = model.spec
    limiter = AdaptiveLimiter(concurrency)
    todo = [
        (key, i)
        for key in units
        for i in range(1, times + 1)
        if not (_rerun_dir(run, i) / f"{key}.verdict.json").is_file()
    ]

    async def one(key: str, i: int) -> None:
        view = read_packet_view(run / "packets" / f"{key}.packet.json", key)
        judgment = await judge_packet(kind, view, model, limiter=limiter, source=f"rerun {i} of unit {key}")
        judge = JudgeInfo(
            runtime="model",
            model=judgment.calls.served_model or spec.model,
            temperature=spec.temperature,
            prompt_version=view.prompt_version,
        )
        if judgment.result is not None:
            verdict = judgment.result.model_copy(update={"judge": judge})
        else:
            assert judgment.unscored is not None
            verdict = VerdictFile(key=key, status="unscored", error=judgment.unscored.error, judge=judge)
        data = orjson.dumps(verdict.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n"
        write_atomic(_rerun_dir(run, i) / f"{key}.verdict.json", data)

    queue = iter(todo)

    async def worker() -> None:
        for key, i in queue:
            await one(key, i)

    async with anyio.create_task_group() as tg:
        for _ in range(min(concurrency, len(todo))):
            tg.start_soon(worker)
    return collect_reruns(run, units, times=times, path="model", model=spec.ref, temperature=spec.temperature)


def rerun_judges_sync(
    run_dir: str | Path,
    model: ModelSpec,
    *,
    times: int,
    sample: int | None = None,
    seed: int = 0,
    temperature: float = 0.0,
    concurrency: int = 8,
    max_retries: int = 6,
) -> ConsistencyReport:
    """Blocking form of :func:`rerun_judges`: opens a client for ``model`` at ``temperature``."""
    from ..models import open_model

    if temperature < 0:
        raise UsageError(f"--temperature must be at least 0, got {temperature}")
    spec = dataclasses.replace(model, temperature=temperature)

    async def go() -> ConsistencyReport:
        client = open_model(spec, max_retries=max_retries)
        try:
            return await rerun_judges(
                run_dir, client, times=times, sample=sample, seed=seed, concurrency=concurrency
            )
        finally:
            await client.aclose()

    return anyio.run(go)


def prepare_dispatch_reruns(
    run_dir: str | Path, *, times: int, sample: int | None = None, seed: int = 0
) -> tuple[tuple[str, ...], int]:
    """Write one packet copy per unit and rerun for an agent runtime; returns (units, reruns still to judge).

    Each copy is the unit's packet with ``verdict_file`` pointing at ``reruns/r<i>/<key>.verdict.json``
    (``verdict_file`` is not judged, so the copy keeps the unit's key).
    """
    from ..judging import read_packet, write_packet

    _check_times(times)
    run = Path(run_dir)
    units = rerun_units(run, sample=sample, seed=seed)
    pending = 0
    for key in units:
        packet = read_packet(run / "packets" / f"{key}.packet.json")
        for i in range(1, times + 1):
            folder = _rerun_dir(run, i)
            verdict = folder / f"{key}.verdict.json"
            copy = packet.model_copy(update={"verdict_file": str(verdict.resolve())})
            write_packet(folder / f"{key}.packet.json", copy)
            pending += not verdict.is_file()
    return units, pending
