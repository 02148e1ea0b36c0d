"""`helix judge prep|status|run`, `helix aggregate` and `helix evaluate`: the judging protocol on a run dir."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from ._common import EXIT_GATE_FAILED, EXIT_UNSCORED, console, helix_errors

if TYPE_CHECKING:
    from .._pipeline import AggregateResult
    from ..judging import ModelJudgeSummary

__all__ = ["register"]

judge_app = typer.Typer(
    help=(
        "Judge traces through the file protocol. PREP writes one packet per judging unit into RUN/packets; "
        "a judge (an agent runtime, `helix judge run` with an LLM provider, or code checks) writes "
        "RUN/verdicts/<key>.verdict.json; `helix aggregate` folds them into a scorecard."
    ),
    no_args_is_help=True,
)

RunDir = Annotated[Path, typer.Option("--run", help="Run directory (created by `judge prep`).")]
Unit = Annotated[
    str,
    typer.Option(
        "--unit",
        help="Judging unit: `matrix` = one trajectory against all its LLM criteria (one call); "
        "`criterion` = one criterion × one trajectory.",
    ),
]
Blocking = Annotated[
    str,
    typer.Option("--block", help="Comma-separated severities whose failure fails the gate."),
]


def _unit(value: str) -> Literal["matrix", "criterion"]:
    from .._exceptions import UsageError

    if value not in ("matrix", "criterion"):
        raise UsageError(f"--unit must be `matrix` or `criterion`, not {value!r}")
    return "matrix" if value == "matrix" else "criterion"


def _severities(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())


@judge_app.command("prep")
@helix_errors
def prep(
    traces: Annotated[
        Path, typer.Argument(help="Trace file (Helix JSONL, OpenAI messages, tau-bench; .gz ok).")
    ],
    criteria: Annotated[Path, typer.Option("--criteria", help="Criteria matrix YAML.")],
    run: RunDir,
    unit: Unit = "matrix",
    model: Annotated[
        str | None,
        typer.Option("--model", help="Pin the judge model into the packets (PROVIDER/MODEL snapshot)."),
    ] = None,
    allow_alias: Annotated[bool, typer.Option(help="Accept a floating model alias for --model.")] = False,
) -> None:
    """PREP: write a packet per LLM judging unit and run the code checks."""
    from ..judging import load_criteria, prep_run
    from ..models import parse_model_spec
    from ..traces import read_traces

    spec = parse_model_spec(model, allow_alias=allow_alias) if model else None
    intake = read_traces(traces)
    matrix = load_criteria(criteria)
    summary = prep_run(intake.traces, matrix, run, unit=_unit(unit), model=spec)
    out = console()
    skipped = len(intake.report.skipped)
    out.print(
        f"read {len(intake.traces)} traces from {traces}"
        + (f" ({skipped} records skipped)" if skipped else "")
    )
    out.print(summary.describe())
    out.print(
        f"next: have a judge write the verdict files named in {run}/packets/*.packet.json, "
        f"or run `helix judge run --run {run} --model PROVIDER/MODEL`; then `helix aggregate --run {run}`"
    )


@judge_app.command("status")
@helix_errors
def status(run: RunDir) -> None:
    """List judging units still missing a verdict (exit 1 while any are missing)."""
    from ..judging import run_status

    st = run_status(run)
    out = console()
    out.print(st.describe())
    if st.missing_keys:
        for key in st.missing_keys:
            out.print(f"  missing {key}")
        raise typer.Exit(EXIT_GATE_FAILED)


Concurrency = Annotated[
    int,
    typer.Option(
        "--concurrency",
        min=1,
        help="Most requests in flight. The window adapts below it (AIMD): it shrinks on HTTP 429/503/529 "
        "and waits out Retry-After, so a high value converges to what the provider accepts.",
    ),
]
Adaptive = Annotated[
    bool,
    typer.Option(
        "--adaptive/--fixed",
        help="Adapt the window to the provider's rate limits (default), or keep exactly --concurrency.",
    ),
]
MaxRetries = Annotated[
    int,
    typer.Option(
        "--max-retries",
        min=0,
        help="Retries of a failed request (429, 5xx, timeouts, refused connections) before its unit is "
        "recorded unscored; waits grow exponentially (with jitter) and honour Retry-After.",
    ),
]
RejudgeUnscored = Annotated[
    bool,
    typer.Option(
        "--rejudge-unscored",
        help="Also judge again the units an earlier pass left unscored (provider down, answers that never "
        "parsed, expired batch requests); their unscored verdict files are replaced.",
    ),
]


def _freeze_startup_heap() -> None:
    """Take what this command imported out of the garbage collector's scans (``gc.freeze``).

    The CLI owns its process, so it may do this; the library never touches process-wide collector
    state. Measured in benchmarks/bench_judge_run.py: about a tenth of the judging CPU per unit.
    """
    import gc

    gc.collect()  # freeze only what is alive, never garbage awaiting collection
    gc.freeze()


def _print_judging(summary: ModelJudgeSummary) -> None:
    out = console()
    for line in summary.describe().splitlines():
        out.print(line)


@judge_app.command("run")
@helix_errors
def run_model(
    run: RunDir,
    model: Annotated[str, typer.Option("--model", help="PROVIDER/MODEL, e.g. openai/gpt-4o-2024-08-06.")],
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible server (vLLM, Ollama, ...).")
    ] = None,
    concurrency: Concurrency = 16,
    adaptive: Adaptive = True,
    max_retries: MaxRetries = 6,
    rejudge_unscored: RejudgeUnscored = False,
    allow_alias: Annotated[
        bool, typer.Option(help="Accept a floating model alias (not reproducible).")
    ] = False,
) -> None:
    """Judge every packet that has no verdict yet with an LLM provider (temperature 0, pinned model).

    Prints why units ended unscored. Exit codes: 0 every unit has a scored verdict, 2 bad input,
    4 some units are unscored (rerun with --rejudge-unscored once the cause is fixed).
    """
    import anyio

    from ..judging import ModelJudgeProgress, judge_packets_with_model
    from ..models import open_model, parse_model_spec

    spec = parse_model_spec(model, base_url=base_url, allow_alias=allow_alias)
    _freeze_startup_heap()

    async def _go() -> ModelJudgeSummary:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        client = open_model(spec, max_retries=max_retries)
        try:
            with Progress(
                TextColumn("judging"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=console(),
            ) as bar:
                task = bar.add_task("judge", total=None)

                def progress(event: ModelJudgeProgress) -> None:
                    bar.update(task, completed=event.done, total=event.total)

                return await judge_packets_with_model(
                    run,
                    client,
                    concurrency=concurrency,
                    adaptive=adaptive,
                    on_progress=progress,
                    rejudge_unscored=rejudge_unscored,
                )
        finally:
            await client.aclose()

    summary = anyio.run(_go)
    _print_judging(summary)
    if summary.unscored_total:
        raise typer.Exit(EXIT_UNSCORED)


def _print_aggregate(result: AggregateResult) -> None:
    from ._render import print_scorecard

    out = console()
    print_scorecard(out, result.scorecard)
    out.print(f"scorecard: {result.scorecard_path}")
    out.print(f"report:    {result.report_path}")


@helix_errors
def aggregate(
    run: RunDir,
    block: Blocking = "critical,major",
    fail_on_uncertain: Annotated[
        bool, typer.Option(help="Treat an uncertain blocking criterion as a gate failure.")
    ] = False,
) -> None:
    """AGGREGATE: fold verdicts into RUN/scorecard.json and RUN/report.html.

    Exit codes: 0 gate passed, 1 gate failed, 2 bad input, 3 verdicts missing (listed).
    """
    from .._pipeline import aggregate_run

    result = aggregate_run(run, blocking=_severities(block), fail_on_uncertain=fail_on_uncertain)
    _print_aggregate(result)
    if not result.gate_passed:
        raise typer.Exit(EXIT_GATE_FAILED)


@helix_errors
def evaluate(
    traces: Annotated[Path, typer.Argument(help="Trace file.")],
    criteria: Annotated[Path, typer.Option("--criteria", help="Criteria matrix YAML.")],
    model: Annotated[str, typer.Option("--model", help="PROVIDER/MODEL snapshot for the LLM criteria.")],
    run: RunDir,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server.")] = None,
    unit: Unit = "matrix",
    concurrency: Concurrency = 16,
    adaptive: Adaptive = True,
    max_retries: MaxRetries = 6,
    rejudge_unscored: RejudgeUnscored = False,
    block: Blocking = "critical,major",
    fail_on_uncertain: Annotated[
        bool, typer.Option(help="Treat an uncertain blocking criterion as a gate failure.")
    ] = False,
    allow_alias: Annotated[bool, typer.Option(help="Accept a floating model alias.")] = False,
) -> None:
    """PREP, judge with MODEL, and AGGREGATE in one go.

    Exit codes: 0 gate passed, 1 gate failed, 2 bad input, 4 some units ended unscored (the reasons
    are printed; the scorecard is over incomplete verdicts; rerun with --rejudge-unscored).
    """
    from .._pipeline import evaluate as run_evaluate

    _freeze_startup_heap()
    result = run_evaluate(
        traces,
        criteria_path=criteria,
        run_dir=run,
        model=model,
        base_url=base_url,
        allow_alias=allow_alias,
        unit=_unit(unit),
        concurrency=concurrency,
        adaptive=adaptive,
        max_retries=max_retries,
        blocking=_severities(block),
        fail_on_uncertain=fail_on_uncertain,
        rejudge_unscored=rejudge_unscored,
    )
    _print_aggregate(result)
    if result.judging is not None:
        _print_judging(result.judging)
        if result.judging.unscored_total:
            raise typer.Exit(EXIT_UNSCORED)
    if not result.gate_passed:
        raise typer.Exit(EXIT_GATE_FAILED)


def register(app: typer.Typer) -> None:
    """Add `judge`, `aggregate` and `evaluate` to the root app."""
    app.add_typer(judge_app, name="judge")
    app.command("aggregate")(aggregate)
    app.command("evaluate")(evaluate)
