"""`helix audit`: the self-audit (eval-of-the-eval) of a run directory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import EXIT_GATE_FAILED, console, err_console, helix_errors

if TYPE_CHECKING:
    from rich.console import Console

    from ..audit import AuditReport

__all__ = ["register"]

_STYLE = {"fail": "bold red", "warn": "yellow", "not-measured": "dim", "pass": "green"}


def print_audit(out: Console, report: AuditReport, *, details: bool = False) -> None:
    """The findings as a table, most urgent first; with ``details`` the subjects that did not pass."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(
        title=f"self-audit of {escape(report.run_dir)} ({escape(report.subject)})",
        title_justify="left",
        caption="most urgent first; --details lists the criteria behind each finding, --json has every count and id",
        caption_justify="left",
        show_lines=True,
    )
    table.add_column("status", no_wrap=True)
    table.add_column("check (area)", no_wrap=True)
    table.add_column("finding and next step", overflow="fold", ratio=1)
    for f in report.findings:
        table.add_row(
            f"[{_STYLE[f.status]}]{f.status}[/]",
            f"{f.check}\n[dim]{f.area}[/]",
            f"{escape(f.summary)}\n[dim]next:[/] {escape(f.next_step)}",
        )
    out.print(table)
    if details:
        for f in report.findings:
            shown = [d for d in f.details if d.status != "pass"]
            if not shown:
                continue
            out.print(f"[bold]{f.check}[/]")
            for d in shown:
                out.print(f"  [{_STYLE[d.status]}]{d.status}[/] {escape(d.subject)}: {escape(d.note)}")
    counts = ", ".join(f"{n} {status}" for status, n in report.status_counts.items())
    style = "bold green" if report.passed else "bold red"
    verdict = "no finding fails" if report.passed else "at least one finding fails"
    out.print(f"[{style}]{verdict}[/] ({counts})")


@helix_errors
def audit(
    run: Annotated[Path, typer.Option("--run", help="Run directory (created by `helix judge prep`).")],
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels",
            help="Human labels: a label store (.sqlite) or labels JSONL. Default: RUN/labels.sqlite or "
            "RUN/labels.jsonl when present; without labels the label checks say `not-measured`.",
        ),
    ] = None,
    guard: Annotated[
        list[str] | None,
        typer.Option(
            "--guard",
            help="A criterion kept on purpose for a rare failure that did not occur in this run "
            "(repeat the option for several); it is not flagged as ungrounded.",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON instead of a table.")
    ] = False,
    details: Annotated[
        bool, typer.Option("--details", help="Add a row per criterion (or file) that did not pass.")
    ] = False,
    suites: Annotated[
        list[Path] | None,
        typer.Option(
            "--suites",
            help="Also check the living-suite histories of this folder (its suites/*.history.jsonl; e.g. "
            "where `helix criteria reconcile` keeps criteria.yaml). Repeat for several.",
        ),
    ] = None,
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Also the reads thresholds cannot decide: is each LLM criterion actionable, does its judge "
            "prompt target one failure mode. Writes RUN/audit-deep/packets for a reader (agent runtime or "
            "--model) and folds their verdicts in (not-measured until they exist).",
        ),
    ] = False,
    model: Annotated[
        str | None,
        typer.Option("--model", help="With --deep: read the audit packets now with this PROVIDER/MODEL."),
    ] = None,
) -> None:
    """Audit the evaluation itself: are its judges validated, its labels enough, its results reproducible?

    Checks, by area: judge-validation (each LLM judge CERTIFIED by `helix validate`; TPR and TNR at
    target), labeled-data (decided human labels per class at the calibration minimum), human-review
    (labels exist; annotators agree), pipeline-hygiene (every verdict present and valid; the stored
    scorecard re-folds byte-identically; every LLM verdict pinned to a dated model, temperature 0 and
    the run's prompt version; unscored and uncertain rates; living suites never shrank; no stale
    verdicts), error-analysis (every criterion failed at least once or is a --guard) and
    evaluator-design (LLM criteria a built-in code check could decide).

    Each finding is pass, warn, fail or not-measured (the artifact it reads is not in the run yet),
    with evidence and a next step. The report is deterministic: the same run and labels give the same
    bytes. Exit code 1 when any finding fails, 0 otherwise, 2 on bad input.
    """
    from ..audit import audit_json, audit_run

    if deep:
        _deep_reads(run, model)
    with err_console().status("auditing: reading every verdict and re-folding the scorecard ..."):
        report = audit_run(run, labels=labels, guards=guard or (), suites=suites or (), deep=deep)
    if as_json:
        sys.stdout.buffer.write(audit_json(report))
        sys.stdout.flush()
    else:
        print_audit(console(), report, details=details)
    if not report.passed:
        raise typer.Exit(EXIT_GATE_FAILED)


def _deep_reads(run: Path, model: str | None) -> None:
    """Write the deep audit's packets, and read them with ``model`` when one is given."""
    from ..audit import CriterionReading, prep_deep_audit
    from ..judging import open_run

    folder = prep_deep_audit(run, open_run(run).matrix)
    if model is None:
        return
    import anyio

    from ..judging import judge_packet_directory
    from ..models import open_model, parse_model_spec

    spec = parse_model_spec(model)

    async def go() -> None:
        client = open_model(spec)
        try:
            summary = await judge_packet_directory(folder.root, CriterionReading(), client)
        finally:
            await client.aclose()
        err_console().print(summary.describe())

    anyio.run(go)


def register(app: typer.Typer) -> None:
    """Add `audit` to the root app."""
    app.command("audit")(audit)
