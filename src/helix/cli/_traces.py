"""`helix traces ...`: look at trace files before judging them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from helix.traces import IntakeReport

__all__ = ["register"]

_EXAMPLES_PER_REASON = 3
_TOOLS_SHOWN = 15


def _render(report: IntakeReport) -> None:
    """Print the intake summary. Tool names and skip details come from the file: escape them for Rich."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(highlight=False)
    console.print(f"[bold]{escape(report.path)}[/bold]")
    console.print(f"  format      {escape(report.format or '?')} ({escape(report.detection or '')})")
    console.print(f"  traces read {report.traces_read}")
    console.print(f"  skipped     {report.records_skipped}")
    for reason, count in sorted(report.skipped_by_reason.items(), key=lambda kv: (-kv[1], kv[0])):
        console.print(f"    {escape(reason)}: {count}")
        examples = [s for s in report.skipped if s.reason == reason][:_EXAMPLES_PER_REASON]
        for example in examples:
            console.print(f"      {escape(example.location())}: {escape(example.detail[:160])}")
    if report.traces_read:
        t, e = report.turns, report.events
        console.print(
            f"  turns       min {t.min} / median {t.median} / max {t.max} (user messages per trace)"
        )
        console.print(f"  events      min {e.min} / median {e.median} / max {e.max} per trace")
    if report.tools:
        table = Table(title="tools seen", title_justify="left")
        table.add_column("tool")
        table.add_column("calls", justify="right")
        table.add_column("error results", justify="right")
        for name, calls in list(report.tools.items())[:_TOOLS_SHOWN]:
            table.add_row(escape(name), str(calls), str(report.tool_errors.get(name, 0)))
        console.print(table)
        hidden = len(report.tools) - _TOOLS_SHOWN
        if hidden > 0:
            console.print(f"  ... and {hidden} more tool(s) (see --json)")
    console.print(f"  error tool results {report.error_tool_results}")
    for dup in report.duplicate_ids[:_EXAMPLES_PER_REASON]:
        console.print(f"  duplicate id '{escape(dup.id)}' at {escape(', '.join(dup.locations[:5]))}")
    for note in report.notes:
        console.print(f"  note: {escape(note)}")


def register(app: typer.Typer) -> None:
    """Add the ``traces`` command group to the root app."""
    traces_app = typer.Typer(
        name="traces",
        help="Read and inspect agent trace files.",
        no_args_is_help=True,
        add_completion=False,
    )

    @traces_app.command("inspect")
    def inspect(
        file: Annotated[Path, typer.Argument(help="Trace file (.jsonl, .json, optionally .gz).")],
        format: Annotated[
            str,
            typer.Option("--format", "-f", help="auto, helix, openai-messages or tau-bench."),
        ] = "auto",
        as_json: Annotated[bool, typer.Option("--json", help="Print the intake report as JSON.")] = False,
    ) -> None:
        """Read FILE and summarise it: traces read, lines skipped and why, tools seen, turns."""
        from helix._exceptions import UsageError
        from helix.traces import IntakeReport, iter_traces

        report = IntakeReport()
        try:
            for _ in iter_traces(file, format=format, report=report):
                pass
        except UsageError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        if as_json:
            typer.echo(report.model_dump_json(indent=2))
        else:
            _render(report)

    app.add_typer(traces_app, name="traces")
