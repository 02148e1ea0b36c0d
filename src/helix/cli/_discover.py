"""`helix discover ...` (error analysis to emergent criteria) and `helix criteria reconcile`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import EXIT_UNSCORED, console, helix_errors

if TYPE_CHECKING:
    from ..traces import Trace

__all__ = ["read_trace_paths", "register"]

discover_app = typer.Typer(
    help=(
        "Discover what to measure: a reader determines each trace's outcome and the first thing that went "
        "wrong (`discover prep`), groups the failures into emergent categories (`discover cluster`), and "
        "code counts rates, saturation and criteria drafts (`discover aggregate`). The reader is an agent "
        "runtime (the packet files; see `helix agents install`) or an LLM provider (`discover run`)."
    ),
    no_args_is_help=True,
)
criteria_app = typer.Typer(help="Maintain a living criteria file: it only grows.", no_args_is_help=True)

RunDir = Annotated[Path, typer.Option("--run", help="Discovery run directory (created by `discover prep`).")]


def read_trace_paths(paths: list[Path]) -> tuple[list[Trace], int]:
    """Every trace under ``paths`` (files or folders, any format Helix reads) and the records skipped."""
    from ..traces import IntakeSummary, iter_trace_files

    summary = IntakeSummary()
    traces = list(iter_trace_files(paths, summary=summary))
    return traces, summary.records_skipped + len(summary.unread)


@discover_app.command("prep")
@helix_errors
def prep(
    traces: Annotated[list[Path], typer.Argument(help="Trace files or folders (any format Helix reads).")],
    run: RunDir,
    model: Annotated[
        str | None, typer.Option("--model", help="Pin the reader model into the packets (PROVIDER/MODEL).")
    ] = None,
    subject: Annotated[
        str | None, typer.Option("--subject", help="The agent's name, for the report.")
    ] = None,
    sample: Annotated[
        int | None, typer.Option("--sample", min=1, help="Read only this many traces, chosen by --strategy.")
    ] = None,
    strategy: Annotated[
        str,
        typer.Option(
            "--strategy",
            help="With --sample: random, outlier, failure, uncertainty or stratified (pass/fail).",
        ),
    ] = "stratified",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sample.")] = 0,
    score: Annotated[
        str | None,
        typer.Option("--score", help="The trace score that says pass/fail (default: reward, success...)."),
    ] = None,
    allow_alias: Annotated[bool, typer.Option(help="Accept a floating model alias for --model.")] = False,
) -> None:
    """PREP the determiner: one packet per distinct trace, asking whether the agent attained the user's goal.

    A packet that failed must name the first thing that went wrong: the transcript index, the agent
    and an open-coded note. Identical traces share a packet. Without --model an agent runtime reads
    the packets under its own model and records it.
    """
    from ..discovery import prep_discovery, sample_traces
    from ..models import parse_model_spec

    spec = parse_model_spec(model, allow_alias=allow_alias) if model else None
    items, skipped = read_trace_paths(traces)
    picked = None
    if sample is not None:
        plan = sample_traces(items, strategy=strategy, n=sample, seed=seed, score_name=score)  # type: ignore[arg-type]
        chosen = set(plan.trace_ids)
        items = [t for t in items if t.id in chosen]
        picked = plan.describe()
    summary = prep_discovery(items, run, model=spec, subject=subject, sample=picked)
    out = console()
    out.print(f"read {len(items)} traces" + (f" ({skipped} records skipped)" if skipped else ""))
    out.print(summary.describe())
    out.print(
        f"next: have readers write the verdict files named in {run}/determine/packets/*.packet.json "
        f"(`helix judge batches --run {run}/determine`, see `helix agents install`), or "
        f"`helix discover run --run {run} --stage determine --model PROVIDER/MODEL`; then "
        f"`helix discover cluster --run {run}`"
    )


@discover_app.command("run")
@helix_errors
def run_model(
    run: RunDir,
    model: Annotated[str, typer.Option("--model", help="PROVIDER/MODEL snapshot.")],
    stage: Annotated[str, typer.Option("--stage", help="`determine` or `cluster`.")] = "determine",
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server.")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Most requests in flight.")] = 8,
    max_retries: Annotated[
        int, typer.Option("--max-retries", min=0, help="Retries of a failed request.")
    ] = 6,
    rejudge_unscored: Annotated[
        bool,
        typer.Option("--rejudge-unscored", help="Also read again packets an earlier pass left unscored."),
    ] = False,
    allow_alias: Annotated[bool, typer.Option(help="Accept a floating model alias.")] = False,
) -> None:
    """Read a stage's packets with an LLM provider, through the one judging engine (temperature 0).

    Exit codes: 0 every packet has a scored verdict, 2 bad input, 4 some ended unscored (rerun with
    --rejudge-unscored once the cause is fixed).
    """
    import anyio

    from .._exceptions import UsageError
    from ..discovery import Stage, read_stage_with_model
    from ..judging import ModelJudgeProgress, ModelJudgeSummary
    from ..models import open_model, parse_model_spec

    if stage not in ("determine", "cluster"):
        raise UsageError(f"--stage must be determine or cluster, not {stage!r}")
    chosen: Stage = "determine" if stage == "determine" else "cluster"
    spec = parse_model_spec(model, base_url=base_url, allow_alias=allow_alias)

    async def go() -> ModelJudgeSummary:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        client = open_model(spec, max_retries=max_retries)
        try:
            with Progress(
                TextColumn(f"reading ({stage})"), BarColumn(), MofNCompleteColumn(), console=console()
            ) as bar:
                task = bar.add_task(stage, total=None)

                def progress(event: ModelJudgeProgress) -> None:
                    bar.update(task, completed=event.done, total=event.total)

                return await read_stage_with_model(
                    run,
                    chosen,
                    client,
                    concurrency=concurrency,
                    on_progress=progress,
                    rejudge_unscored=rejudge_unscored,
                )
        finally:
            await client.aclose()

    summary = anyio.run(go)
    for line in summary.describe().splitlines():
        console().print(line)
    if summary.unscored_total:
        raise typer.Exit(EXIT_UNSCORED)


@discover_app.command("cluster")
@helix_errors
def cluster(
    run: RunDir,
    batch_notes: Annotated[
        int, typer.Option("--batch-notes", min=1, help="Notes per cluster packet (one reader's batch).")
    ] = 40,
) -> None:
    """PREP the clusterer: cut the failed runs' first-thing-wrong notes into batches, one packet each.

    Needs every determination (exit 3 lists the missing ones). Each packet asks for emergent binary,
    actionable categories covering its notes, each fixable or eval-worthy.
    """
    from ..discovery import prep_cluster

    summary = prep_cluster(run, batch_notes=batch_notes)
    console().print(summary.describe())
    console().print(
        f"next: readers answer {run}/cluster/packets (`helix judge batches --run {run}/cluster`), or "
        f"`helix discover run --run {run} --stage cluster --model ...`; then `helix discover aggregate --run {run}`"
    )


@discover_app.command("aggregate")
@helix_errors
def aggregate(
    run: RunDir,
    last_k: Annotated[
        int, typer.Option("--last-k", min=1, help="Stop rule: no new category in the last K traces.")
    ] = 20,
    target: Annotated[
        float, typer.Option("--target", help="Stop rule: Good–Turing coverage at least this.")
    ] = 0.95,
    merge_threshold: Annotated[
        float,
        typer.Option(
            "--merge-threshold", help="Token-Jaccard similarity that merges categories across batches."
        ),
    ] = 0.5,
) -> None:
    """AGGREGATE: failure rates per category (Wilson intervals), saturation, criteria drafts, handoff, report.

    Exit 3 lists missing verdicts. Writes RUN/aggregate/{discovery.json, criteria.draft.yaml,
    handoff.json, report.html}.
    """
    from ..discovery import aggregate_discovery

    out = aggregate_discovery(run, last_k=last_k, target=target, merge_threshold=merge_threshold)
    c = console()
    for line in out.describe().splitlines():
        c.print(line)
    for cat in out.result.categories[:20]:
        c.print(f"  {cat.failures:>4}  {cat.rate:6.1%}  {cat.routing:<11} {cat.id}: {cat.title}")


@discover_app.command("handoff")
@helix_errors
def handoff(
    run: RunDir,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Also copy the bundle here.")] = None,
) -> None:
    """The masked failure-handoff bundle of the fixable categories (after `discover aggregate`).

    Prints the bundle (JSON); its run ids, timestamps and absolute paths are masked.
    """
    from .._exceptions import UsageError
    from .._util import write_atomic

    path = run / "aggregate" / "handoff.json"
    if not path.is_file():
        raise UsageError(f"{path} does not exist; run `helix discover aggregate --run {run}` first")
    data = path.read_bytes()
    if out is not None:
        write_atomic(out, data)
    typer.echo(data.decode("utf-8"), nl=False)


@discover_app.command("score")
@helix_errors
def score(
    run: RunDir,
    outcome_score: Annotated[
        str, typer.Option("--outcome-score", help="Gold outcome score for TPR/TNR (e.g. tau2's reward).")
    ] = "reward",
    attribution: Annotated[
        bool,
        typer.Option(
            "--attribution/--no-attribution", help="Score first-thing-wrong vs mistake_agent/_step labels."
        ),
    ] = True,
) -> None:
    """Score the determinations against gold the traces carry: attribution accuracy and outcome TPR/TNR.

    Attribution (Who&When's mistake_agent and mistake_step labels): agent- and step-level accuracy
    with Wilson intervals, beside the paper's 53.5% / 14.2%. Outcome: the determiner's pass/fail
    against the gold score, TPR and TNR over decided determinations.
    """
    from .._exceptions import UsageError
    from ..discovery import score_attribution, score_outcomes

    c = console()
    if attribution:
        try:
            c.print(score_attribution(run).describe())
        except UsageError as exc:
            c.print(f"attribution: {exc}")
    c.print(f"outcome vs {outcome_score}: {score_outcomes(run, score_name=outcome_score).describe()}")


@discover_app.command("export-run")
@helix_errors
def export_run(
    run: RunDir,
    out: Annotated[Path, typer.Option("--out", help="Judging run directory to write.")],
) -> None:
    """Write the determinations as a one-criterion judging run (goal-attained), for `helix validate`."""
    from ..discovery import determinations_as_judging_run

    path = determinations_as_judging_run(run, out)
    console().print(f"wrote judging run {path} (criterion goal-attained)")
    console().print(f"next: helix validate --run {path} --labels LABELS (labels made from the gold scores)")


@criteria_app.command("reconcile")
@helix_errors
def reconcile(
    draft: Annotated[Path, typer.Argument(help="Criteria draft (e.g. RUN/aggregate/criteria.draft.yaml).")],
    into: Annotated[Path, typer.Option("--into", help="The living criteria file (created when missing).")],
) -> None:
    """Upsert the draft's criteria into a criteria file by id; never drop one.

    The file's history is appended to suites/<name>.history.jsonl beside it (check it with `helix
    audit --run RUN --suites DIR`). Refuses, exit 2, when the file lost a criterion its history
    recorded: restore it first.
    """
    from ..discovery import reconcile_criteria

    console().print(reconcile_criteria(draft, into).describe())


def register(app: typer.Typer) -> None:
    """Add `discover` and `criteria` to the root app."""
    app.add_typer(discover_app, name="discover")
    app.add_typer(criteria_app, name="criteria")
