"""`helix campaign plan|run|report`: run an agent over scenarios × seeds × repetitions from a config file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import console, helix_errors

if TYPE_CHECKING:
    from rich.console import Console

    from ..campaign import CampaignResult

__all__ = ["register"]

_PROBLEMS_SHOWN = 10
EXIT_CELLS_FAILED = 1
"""Some cells failed (their receipts are in the run directory; a rerun tries them again)."""

campaign_app = typer.Typer(
    name="campaign",
    help=(
        "Run an agent over scenarios x seeds x repetitions with a durable cache, failure receipts, "
        "retries and aggregates (mean, ci95 and the spread). A campaign is described by a YAML config "
        "(version 2): scenarios, dispatch, scorers, seed, reps, max_concurrency, retry, commit, "
        "dispatch_ref, run_dir; scenarios, dispatch and scorers are named by module:function. "
        "`helix campaign example-config` prints the support-shop example's config."
    ),
    no_args_is_help=True,
)

ConfigArg = Annotated[Path, typer.Argument(help="The campaign config (YAML, version 1).", show_default=False)]
RunDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--run-dir", help="Run directory (overrides the config's run_dir; relative to the current directory)."
    ),
]


@helix_errors
def plan_cmd(config: ConfigArg, run_dir: RunDirOpt = None) -> None:
    """Show how the run directory stands against the config: cells cached, to run, and blocked.

    Touches nothing on disk. Cached cells (same commit, config, dispatch_ref, scorers, scenario, rep and
    seed) will not be dispatched again by `helix campaign run`.
    """
    from ..campaign import load_campaign_config, resolve_campaign

    resolved = resolve_campaign(load_campaign_config(config), run_dir=run_dir)
    cfg, plan = resolved.config, resolved.plan()
    c = console()
    c.print(
        f"campaign {cfg.name!r}: {len(resolved.scenarios)} scenarios x {cfg.reps} reps = {plan.total} cells"
    )
    c.print(f"run dir:  {resolved.run_dir}")
    c.print(
        f"commit:   {resolved.commit}" + (f"   dispatch_ref: {cfg.dispatch_ref}" if cfg.dispatch_ref else "")
    )
    c.print(f"scorers:  {', '.join(s.name for s in resolved.scorers)}")
    c.print(f"cached {len(plan.cached)} · to run {len(plan.to_run)} · blocked {len(plan.blocked)}")
    _print_cache_problems(c, plan.cache_problems)
    shown = plan.to_run[:10]
    if shown:
        c.print(
            "next to run: " + ", ".join(s.cell_id for s in shown) + (" ..." if len(plan.to_run) > 10 else "")
        )


def _print_cache_problems(c: Console, problems: Sequence[str]) -> None:
    """What the cache check found (the cell files decide; the index only caches them)."""
    from rich.markup import escape

    if not problems:
        return
    c.print(f"[yellow]cache: {len(problems)} cell(s) did not match the cache index[/yellow]")
    for line in problems[:_PROBLEMS_SHOWN]:
        c.print(f"  {escape(line)}")
    if len(problems) > _PROBLEMS_SHOWN:
        c.print(f"  ... and {len(problems) - _PROBLEMS_SHOWN} more")


def _print_aggregates(c: Console, result: CampaignResult) -> None:
    from rich.table import Table

    aggregates = result.aggregates
    for title, stats in (("scorer", aggregates.by_scorer), ("scenario", aggregates.by_scenario)):
        table = Table(title=f"by {title}", title_justify="left")
        for col in (title, "n", "mean", "ci95", "min", "p50", "p90", "max"):
            table.add_column(col, justify="left" if col == title else "right")
        for name, s in stats.items():
            d = s.distribution
            table.add_row(
                name,
                str(s.n),
                f"{s.mean:.3f}",
                f"[{s.ci95[0]:.3f}, {s.ci95[1]:.3f}]",
                f"{d.min:.3f}",
                f"{d.p50:.3f}",
                f"{d.p90:.3f}",
                f"{d.max:.3f}",
            )
        c.print(table)


@helix_errors
def run_cmd(
    config: ConfigArg,
    run_dir: RunDirOpt = None,
    max_concurrency: Annotated[
        int | None, typer.Option("--max-concurrency", min=1, help="Override the config's max_concurrency.")
    ] = None,
    report: Annotated[
        bool, typer.Option("--report/--no-report", help="Write <run>/report.html at the end.")
    ] = True,
    fsync: Annotated[
        bool, typer.Option("--fsync", help="Flush every cell result to disk (survives power loss, slower).")
    ] = False,
) -> None:
    """Run the campaign: dispatch every cell not already cached, score it, aggregate.

    Shows progress (done, cached, failed, retries, cost). Every finished cell is durable at once, so
    Ctrl-C (or a crash) leaves a resumable run: the same command again dispatches only what is not
    cached. Writes <run>/campaign.json (the design), <run>/summary.json (counts and aggregates) and
    <run>/report.html. Exit 0 when every cell finished, 1 when some failed (see their receipts).
    """
    import asyncio

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..campaign import CampaignProgress, load_campaign_config, resolve_campaign, write_campaign_report

    resolved = resolve_campaign(load_campaign_config(config), run_dir=run_dir)
    cfg, plan = resolved.config, resolved.plan()
    root = resolved.run_dir
    c = console()
    c.print(
        f"campaign {cfg.name!r}: {plan.total} cells ({len(plan.cached)} cached, {len(plan.to_run)} to run) -> {root}"
    )
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[stats]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=c, transient=False) as progress:
        task = progress.add_task("cells", total=plan.total, stats="")

        def on_progress(p: CampaignProgress) -> None:
            progress.update(
                task,
                completed=p.done,
                stats=f"cached {p.cached} · failed {p.failed} · retries {p.retries} · ${p.cost_usd:.4f}",
            )

        result = asyncio.run(resolved.run(max_concurrency=max_concurrency, progress=on_progress, fsync=fsync))
    c.print(
        f"done: {result.total} cells · {result.cached} cached · {result.dispatched} dispatched · "
        f"{result.failed} failed · {result.retries} retries · "
        f"cost ${result.cost_usd:.4f}{'' if result.cost_complete else ' (some costs unknown)'}"
    )
    _print_cache_problems(c, result.cache_problems)
    _print_aggregates(c, result)
    if report:
        c.print(f"report: {write_campaign_report(root)}")
    if result.failed:
        c.print(
            f"[red]{result.failed} cell(s) failed[/red]: receipts in {root}/cells/<cell>/failure-receipt.json"
        )
        raise typer.Exit(EXIT_CELLS_FAILED)


@helix_errors
def report_cmd(
    run: Annotated[
        Path, typer.Argument(help="The run directory of `helix campaign run`.", show_default=False)
    ],
    out: Annotated[
        Path | None, typer.Option("--out", help="Where to write the page (default <run>/report.html).")
    ] = None,
) -> None:
    """Write the campaign's HTML report: one self-contained page.

    Per-scorer and per-scenario distributions (mean, ci95 band, min, p50, p90, max) and every failed
    cell with its failure receipts. Works on a run stopped half-way (cells not run yet are counted).
    """
    from ..campaign import write_campaign_report

    path = write_campaign_report(run, out)
    console().print(f"report: {path}")


@helix_errors
def example_config_cmd() -> None:
    """Print the example campaign config (the support-shop subject with produced-state grading)."""
    from ..examples import campaign_config_path

    typer.echo(campaign_config_path().read_text(encoding="utf-8"), nl=False)


campaign_app.command("plan")(plan_cmd)
campaign_app.command("run")(run_cmd)
campaign_app.command("report")(report_cmd)
campaign_app.command("example-config")(example_config_cmd)


def register(app: typer.Typer) -> None:
    """Add the `campaign` command group to the root app."""
    app.add_typer(campaign_app, name="campaign")
