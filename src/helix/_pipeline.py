"""The end-to-end flow over one run directory: PREP → judge → AGGREGATE (scorecard + report)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ._util import write_atomic

if TYPE_CHECKING:
    from .judging import CriteriaMatrix, ModelJudgeProgress, ModelJudgeSummary, Severity
    from .scoring import Scorecard

__all__ = ["AggregateResult", "aggregate_run", "evaluate", "evaluate_async"]


@dataclass(frozen=True, kw_only=True)
class AggregateResult:
    """What AGGREGATE wrote: the scorecard (with its gate) and where the files are."""

    scorecard: Scorecard
    scorecard_path: Path
    report_path: Path
    gate_passed: bool
    judging: ModelJudgeSummary | None = None
    """What the model pass did (``evaluate`` only): counts, cost, and why units ended unscored."""


def _severities(values: Sequence[str]) -> tuple[Severity, ...]:
    from ._exceptions import UsageError

    allowed: tuple[Severity, ...] = ("critical", "major", "minor")
    out = tuple(s for s in allowed if s in values)
    unknown = [v for v in values if v not in allowed]
    if unknown:
        raise UsageError(f"blocking severities must be among critical, major, minor; got {unknown!r}")
    return out


def _with_validation(run: Path, scorecard: Scorecard, matrix: CriteriaMatrix) -> Scorecard:
    """Carry the run's last ``helix validate`` result into a re-folded scorecard.

    Each record names the judge models and prompt versions it measured, so a reader (and
    ``helix audit``) can tell when a later re-judging made it stale.
    """
    from .calibration import ValidationReport, validation_path

    path = validation_path(run)
    if not path.is_file():
        return scorecard
    report = ValidationReport.model_validate_json(path.read_bytes())
    order = {c.id: i for i, c in enumerate(matrix.criteria)}
    known = [r for r in report.results if r.criterion_id in order]
    if not known:
        return scorecard
    records = tuple(r.record() for r in sorted(known, key=lambda r: order[r.criterion_id]))
    return scorecard.model_copy(update={"validation": records})


def aggregate_run(
    run_dir: str | Path,
    *,
    blocking: Sequence[str] = ("critical", "major"),
    fail_on_uncertain: bool = False,
) -> AggregateResult:
    """Fold every verdict of a run into ``scorecard.json`` and ``report.html`` inside the run directory.

    Raises ``MissingVerdictsError`` (listing every key) when a judging unit has no verdict yet, and
    ``VerdictFileError`` when a verdict file breaks the contract.
    """
    from .judging import collect_results
    from .report import render_report
    from .scoring import GateConfig, build_scorecard, scorecard_json

    run = Path(run_dir)
    judged = collect_results(run)
    gate = GateConfig(blocking=_severities(blocking), fail_on_uncertain=fail_on_uncertain)
    scorecard = _with_validation(run, build_scorecard(judged, gate=gate), judged.matrix)
    scorecard_path = write_atomic(run / "scorecard.json", scorecard_json(scorecard))
    report_path = write_atomic(run / "report.html", render_report(judged, scorecard))
    return AggregateResult(
        scorecard=scorecard,
        scorecard_path=scorecard_path,
        report_path=report_path,
        gate_passed=scorecard.gate.passed,
    )


async def evaluate_async(
    traces_path: str | Path,
    *,
    criteria_path: str | Path,
    run_dir: str | Path,
    model: str,
    base_url: str | None = None,
    allow_alias: bool = False,
    unit: Literal["matrix", "criterion"] = "matrix",
    concurrency: int = 16,
    adaptive: bool = True,
    max_retries: int = 6,
    blocking: Sequence[str] = ("critical", "major"),
    fail_on_uncertain: bool = False,
    rejudge_unscored: bool = False,
    on_progress: Callable[[ModelJudgeProgress], None] | None = None,
) -> AggregateResult:
    """Read traces, PREP the run, judge every packet with ``model``, then AGGREGATE.

    The model client is opened (and its API key found) before anything is written, so a missing key
    leaves no half-made run directory. ``concurrency`` is the ceiling of the adaptive window
    (``adaptive=False``: fixed); ``max_retries`` bounds the retries of each request;
    ``rejudge_unscored`` retries units an earlier pass left unscored;
    ``blocking`` and ``fail_on_uncertain`` configure the gate as in :func:`aggregate_run`. The
    result's ``judging`` says what the model pass did, including why units ended unscored.
    """
    from .judging import judge_packets_with_model, load_criteria, prep_run
    from .models import open_model, parse_model_spec
    from .traces import read_traces

    spec = parse_model_spec(model, base_url=base_url, allow_alias=allow_alias)
    client = open_model(spec, max_retries=max_retries)
    try:
        intake = read_traces(traces_path)
        matrix = load_criteria(criteria_path)
        prep_run(intake.traces, matrix, run_dir, unit=unit, model=spec)
        summary = await judge_packets_with_model(
            run_dir,
            client,
            concurrency=concurrency,
            adaptive=adaptive,
            on_progress=on_progress,
            rejudge_unscored=rejudge_unscored,
        )
    finally:
        await client.aclose()
    result = aggregate_run(run_dir, blocking=blocking, fail_on_uncertain=fail_on_uncertain)
    return dataclasses.replace(result, judging=summary)


def evaluate(
    traces_path: str | Path,
    *,
    criteria_path: str | Path,
    run_dir: str | Path,
    model: str,
    base_url: str | None = None,
    allow_alias: bool = False,
    unit: Literal["matrix", "criterion"] = "matrix",
    concurrency: int = 16,
    adaptive: bool = True,
    max_retries: int = 6,
    blocking: Sequence[str] = ("critical", "major"),
    fail_on_uncertain: bool = False,
    rejudge_unscored: bool = False,
    on_progress: Callable[[ModelJudgeProgress], None] | None = None,
) -> AggregateResult:
    """Synchronous :func:`evaluate_async`."""
    import anyio

    async def _go() -> AggregateResult:
        return await evaluate_async(
            traces_path,
            criteria_path=criteria_path,
            run_dir=run_dir,
            model=model,
            base_url=base_url,
            allow_alias=allow_alias,
            unit=unit,
            concurrency=concurrency,
            adaptive=adaptive,
            max_retries=max_retries,
            blocking=blocking,
            fail_on_uncertain=fail_on_uncertain,
            rejudge_unscored=rejudge_unscored,
            on_progress=on_progress,
        )

    return anyio.run(_go)
