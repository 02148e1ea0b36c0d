"""`helix traces ...`: look at trace files before judging them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from helix.traces import IntakeReport, IntakeSummary

__all__ = ["register"]

_EXAMPLES_PER_REASON = 3
_TOOLS_SHOWN = 15
_FILES_SHOWN = 10
_FORMAT_HELP = (
    "auto (sniffed per file) or a format name: helix, openai-messages, tau-bench, tau2-bench, "
    "mini-swe-agent, who-and-when, ... (an unknown name lists every format Helix reads)."
)


def _render(report: IntakeReport) -> None:
    """Print the intake summary. Tool names and skip details come from the file: escape them for Rich."""
    from rich.markup import escape
    from rich.table import Table

    from ._common import console as make_console

    console = make_console(soft_wrap=True)  # paths and details unbroken
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


def _render_summary(summary: IntakeSummary) -> None:
    """Per-format counts, then one line per file, then the files no reader took (with the reason)."""
    from rich.markup import escape
    from rich.table import Table

    from ._common import console as make_console

    console = make_console(soft_wrap=True)  # paths and details unbroken
    table = Table(title="formats", title_justify="left")
    table.add_column("format")
    table.add_column("files", justify="right")
    table.add_column("traces", justify="right")
    table.add_column("skipped", justify="right")
    for fmt, count in sorted(summary.by_format.items()):
        table.add_row(escape(fmt), str(count.files), str(count.traces_read), str(count.records_skipped))
    if summary.unread:
        table.add_row("(unknown)", str(len(summary.unread)), "-", "-")
    console.print(table)
    console.print(
        f"  {len(summary.files)} file(s) read: {summary.traces_read} trace(s), "
        f"{summary.records_skipped} record(s) skipped; {len(summary.unread)} file(s) not read"
    )
    with_skips = [report for report in summary.files if report.records_skipped]
    for report in with_skips[:_FILES_SHOWN]:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(report.skipped_by_reason.items()))
        console.print(
            f"  {escape(report.path)} ({escape(report.format or '?')}): {report.traces_read} trace(s), "
            f"skipped {escape(reasons)}"
        )
    if len(with_skips) > _FILES_SHOWN:
        console.print(f"  ... and {len(with_skips) - _FILES_SHOWN} more file(s) with skips (see --json)")
    for unread in summary.unread[:_FILES_SHOWN]:
        console.print(f"  [yellow]not read[/yellow] {escape(unread.path)}: {escape(unread.reason)}")
    if len(summary.unread) > _FILES_SHOWN:
        console.print(f"  ... and {len(summary.unread) - _FILES_SHOWN} more file(s) not read (see --json)")


def _progress() -> tuple[Any, Callable[[Path, int, int], None]]:
    """A Rich progress bar over files (on stderr) and the ``on_file`` callback that advances it."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = progress.add_task("reading", total=None)

    def on_file(path: Path, index: int, total: int) -> None:
        progress.update(task, total=total, completed=index, description=f"reading {path.name[:40]}")

    return progress, on_file


def register(app: typer.Typer) -> None:
    """Add the ``traces`` command group to the root app."""
    traces_app = typer.Typer(
        name="traces",
        help="Read, inspect and convert agent trace files.",
        no_args_is_help=True,
        add_completion=False,
    )

    @traces_app.command("inspect")
    def inspect(
        paths: Annotated[
            list[Path],
            typer.Argument(
                help="Trace files or folders (.jsonl, .json, optionally .gz; folders are walked).",
            ),
        ],
        format: Annotated[str, typer.Option("--format", "-f", help=_FORMAT_HELP)] = "auto",
        as_json: Annotated[bool, typer.Option("--json", help="Print the intake report as JSON.")] = False,
    ) -> None:
        """Read PATHS and summarise them: traces read, lines skipped and why, tools seen, turns.

        One file gets the full report. A folder or several files get counts per format, a line per
        file that had skipped records, and the files no reader recognised with the reason (which
        formats Helix reads and what the file looked like).
        """
        from helix._exceptions import UsageError
        from helix.traces import (
            IntakeReport,
            IntakeSummary,
            expand_trace_paths,
            iter_trace_files,
            iter_traces,
        )

        try:
            files = expand_trace_paths(paths)
            single = len(paths) == 1 and len(files) == 1 and not paths[0].is_dir()
            if single:
                report = IntakeReport()
                for _ in iter_traces(files[0], format=format, report=report):
                    pass
            else:
                summary = IntakeSummary()
                progress, on_file = _progress()
                with progress:
                    for _ in iter_trace_files(files, format=format, summary=summary, on_file=on_file):
                        pass
        except UsageError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        if single:
            if as_json:
                typer.echo(report.model_dump_json(indent=2))
            else:
                _render(report)
        elif as_json:
            typer.echo(summary.model_dump_json(indent=2))
        else:
            _render_summary(summary)

    @traces_app.command("convert")
    def convert(
        paths: Annotated[
            list[Path], typer.Argument(help="Trace files or folders to read (any format Helix reads).")
        ],
        to: Annotated[
            Path,
            typer.Option(
                "--to",
                "-o",
                help="Output file: .jsonl (or .jsonl.gz) for Helix JSONL, .parquet for Parquet (needs pyarrow).",
            ),
        ],
        format: Annotated[str, typer.Option("--format", "-f", help=_FORMAT_HELP)] = "auto",
        as_json: Annotated[bool, typer.Option("--json", help="Print the intake summary as JSON.")] = False,
    ) -> None:
        """Convert PATHS to canonical traces in one file that DuckDB, Polars and `helix` read.

        .jsonl holds one Helix trace per line (read back with any `helix` command). .parquet holds one
        row per trace: id, session_id, name, status, source_format, n_events, n_tool_events,
        n_tool_errors, a score_<name> column per score, and the whole trace as JSON in trace_json.
        Skipped records and unreadable files are counted and listed, never dropped silently.
        """
        from helix._exceptions import UsageError
        from helix.traces import convert_traces

        try:
            progress, on_file = _progress()
            with progress:
                summary = convert_traces(paths, to, format=format, on_file=on_file)
        except UsageError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        if as_json:
            typer.echo(summary.model_dump_json(indent=2))
            return
        typer.echo(f"wrote {summary.traces_read} trace(s) to {to}")
        _render_summary(summary)

    app.add_typer(traces_app, name="traces")
