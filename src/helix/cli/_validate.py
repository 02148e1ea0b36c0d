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

    from ..calibration import theta_text

    style = {"certified": "bold green", "refused": "bold red", "unvalidated": "yellow"}[r.status]
    c = r.counts
    # Status and interval lead; for a judge that is not certified the point estimate never stands alone.
    out.print(
        f"[bold]{escape(r.criterion_id)}[/bold]: [{style}]{r.status.upper()}[/] — corrected success rate "
        f"{escape(theta_text(r))}",
        soft_wrap=True,
    )
    out.print(f"  {escape(r.status_reason)}", soft_wrap=True)
    mode = f"{r.mode} judge, " if r.mode else ""
    out.print(
        f"  {mode}split {r.split} (seed {r.seed}): {r.labels_used} labels; design {escape(r.design)} "
        f"({r.design_source}), {r.estimator}"
        + (f"; population {escape(r.population)}" if r.population else ""),
        soft_wrap=True,
    )
    kinds = ", ".join(f"{k.kind} {k.on_underdetermined}/{k.abstentions}" for k in c.by_kind if k.abstentions)
    out.print(
        f"  decided tp={c.tp} fn={c.fn} fp={c.fp} tn={c.tn}; judge abstained {c.abstentions} (rate "
        f"{_pct(r.abstain_rate)}, assumption agreement {_pct(r.assumption_agreement)}"
        + (f": {escape(kinds)}" if kinds else "")
        + f"); {c.human_deferred} deferred, {c.unjudged} without verdict",
        soft_wrap=True,
    )
    how = "Wilson 95%" if r.estimator == "rogan-gladen" else "posterior 95%"
    out.print(f"  TPR {_pct(r.tpr)}{_ci(r.tpr_interval)}   TNR {_pct(r.tnr)}{_ci(r.tnr_interval)}  ({how})")
    out.print(f"  raw pass rate {_pct(r.p_obs)} of {r.judged_n} decided verdicts ({r.estimator})")
    s = r.consistency
    if s is not None:
        kappa = f"{s.kappa:.3f}" if s.kappa is not None else "undefined (nothing varied)"
        out.print(
            f"  self-consistency: flip rate {_pct(s.flip_rate)} ({s.flips} of {s.units} units), Fleiss' kappa "
            f"{kappa}, {s.reruns_max} reruns (helix judge rerun)",
            soft_wrap=True,
        )
    for w in r.warnings:
        out.print(f"  [yellow]warning:[/yellow] {escape(w)}", soft_wrap=True)


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
                help="`auto` (default): every label, once, for an external judge (no few-shot from these labels, "
                "no dev or test measurement recorded), else the test split. `test` and `all` are measured once "
                "(ledgered); `dev` is for iterating (recorded, never refused).",
            ),
        ] = "auto",
        design: Annotated[
            str | None,
            typer.Option(
                "--design",
                help="How the labelled traces were chosen, when the labels do not record it: by-class, random, "
                "by-verdict, active or stratified:KEY (docs/labels.md). It decides the estimator.",
            ),
        ] = None,
        population: Annotated[
            Path | None,
            typer.Option(
                "--population",
                help="Another run directory whose decided verdicts are the judged population (default: this run).",
            ),
        ] = None,
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

        An external judge (developed without these labels) is measured once on every label; a judge
        under development on the test split of a deterministic train/dev/test split (a ledger in
        RUN/calibration refuses a second look unless --force). TPR and TNR are measured over decided
        verdicts, the judge is certified when both lower 95% bounds reach --threshold (or refused,
        saying how many traces to label, or to improve the judge), and the run's raw pass rate is
        corrected with a 95% interval carrying the label and judged-set uncertainty, by the estimator
        that fits how the labels were chosen (Rogan-Gladen for labels chosen by human class,
        post-stratification for random or verdict-driven ones; docs/calibration.md). Writes
        RUN/calibration/validation.json and stamps RUN/scorecard.json and RUN/report.html. Exit 1 when
        any judge is not certified.
        """
        import orjson

        from .._exceptions import UsageError
        from ..calibration import validate_run

        if split not in ("auto", "test", "dev", "all"):
            raise UsageError(f"--split must be auto, test, dev or all; got {split!r}")
        report = validate_run(
            run,
            labels,
            criterion_id=criterion,
            split=split,  # type: ignore[arg-type]
            design=design,
            population=population,
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
