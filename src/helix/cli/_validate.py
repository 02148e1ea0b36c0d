"""`helix validate`: measure a run's LLM judges against human labels and correct their pass rates."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import console, err_console, helix_errors

if TYPE_CHECKING:
    from rich.console import Console

    from ..calibration import CriterionCalibration

__all__ = ["register"]

EXIT_NOT_CERTIFIED = 1
"""At least one judge was refused or left unvalidated."""


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f" [{ci[0]:.1%}, {ci[1]:.1%}]"


def _print_result(out: Console, r: CriterionCalibration) -> None:
    from rich.markup import escape

    style = {"certified": "bold green", "refused": "bold red", "unvalidated": "yellow"}[r.status]
    c = r.counts
    out.print(
        f"[bold]{escape(r.criterion_id)}[/bold]: [{style}]{r.status.upper()}[/] — {escape(r.status_reason)}"
    )
    out.print(
        f"  split {r.split} (seed {r.seed}): {r.labels_used} labels; decided tp={c.tp} fn={c.fn} fp={c.fp} "
        f"tn={c.tn}; judge abstained {c.abstentions} (rate {_pct(r.abstain_rate)}, assumption agreement "
        f"{_pct(r.assumption_agreement)}); {c.human_deferred} deferred, {c.unjudged} without verdict"
    )
    out.print(
        f"  TPR {_pct(r.tpr)}{_ci(r.tpr_interval)}   TNR {_pct(r.tnr)}{_ci(r.tnr_interval)}  (Wilson 95%)"
    )
    theta = (
        f"{_pct(r.theta)}{_ci(r.theta_interval)}"
        if r.theta_status == "ok"
        else f"{r.theta_status}: {r.theta_reason}"
    )
    out.print(f"  raw pass rate {_pct(r.p_obs)} of {r.judged_n} decided verdicts → corrected {escape(theta)}")
    for w in r.warnings:
        out.print(f"  [yellow]warning:[/yellow] {escape(w)}")


def register(app: typer.Typer) -> None:
    """Add `helix validate` to the root app."""

    @app.command("validate")
    @helix_errors
    def validate(
        run: Annotated[Path, typer.Option("--run", help="Run directory with verdicts (after `judge run`).")],
        labels: Annotated[
            Path,
            typer.Option("--labels", help="Human labels: a label store (.sqlite) or a labels JSONL file."),
        ],
        criterion: Annotated[
            str | None, typer.Option("--criterion", help="Validate only this criterion id.")
        ] = None,
        split: Annotated[
            str,
            typer.Option(
                "--split",
                help="Which labelled split to measure on: `test` (once; ledgered), `dev` (iterate freely) or `all`.",
            ),
        ] = "test",
        seed: Annotated[int, typer.Option("--seed", help="Seed of the split and of the interval.")] = 0,
        threshold: Annotated[
            float,
            typer.Option(
                "--threshold", help="CERTIFIED needs the lower 95% bounds of TPR and TNR at or above this."
            ),
        ] = 0.8,
        min_labels: Annotated[
            int,
            typer.Option(
                "--min-labels", help="Decided labels per class below which the judge is unvalidated."
            ),
        ] = 20,
        force: Annotated[
            bool,
            typer.Option("--force", help="Re-measure a test split already measured (recorded as forced)."),
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the machine-readable result.")] = False,
    ) -> None:
        """Calibrate each labelled LLM judge of a run against human labels.

        Splits the labelled traces into train/dev/test (deterministic, balanced per class), measures
        the judge on the test split once (a ledger in RUN/calibration refuses a second look unless
        --force), computes TPR and TNR over decided verdicts with Wilson intervals, certifies the
        judge (or refuses, saying how many more labels would be needed), and corrects the run's raw
        pass rate: θ = (p_obs + TNR − 1) / (TPR + TNR − 1) with a 95% interval carrying the label and
        judged-set uncertainty. Writes RUN/calibration/validation.json and stamps the result into
        RUN/scorecard.json and RUN/report.html. Exit 1 when any judge is not certified.
        """
        import orjson

        from .._exceptions import UsageError
        from ..calibration import validate_run

        if split not in ("test", "dev", "all"):
            raise UsageError(f"--split must be test, dev or all; got {split!r}")
        report = validate_run(
            run,
            labels,
            criterion_id=criterion,
            split=split,  # type: ignore[arg-type]
            seed=seed,
            threshold=threshold,
            min_labels_per_class=min_labels,
            force=force,
        )
        if as_json:
            typer.echo(orjson.dumps(report.model_dump(mode="json"), option=orjson.OPT_INDENT_2).decode())
        else:
            out = console()
            for r in report.results:
                _print_result(out, r)
            where = "scorecard.json and report.html updated" if report.stamped else "run not aggregated yet"
            out.print(f"wrote {run / 'calibration' / 'validation.json'} ({where})")
        if as_json:  # warnings (e.g. a regime with measured coverage < 94%) also go to stderr
            from rich.markup import escape

            for r in report.results:
                for w in r.warnings:
                    err_console().print(f"[yellow]warning:[/yellow] {escape(r.criterion_id)}: {escape(w)}")
        if any(r.status != "certified" for r in report.results):
            raise typer.Exit(EXIT_NOT_CERTIFIED)
