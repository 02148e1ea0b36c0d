"""`helix judge rerun`: re-judge a run's units N times and report each criterion's flip rate and kappa."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import EXIT_UNSCORED, console, helix_errors

if TYPE_CHECKING:
    from ..calibration import ConsistencyReport

__all__ = ["register"]


def print_consistency(report: ConsistencyReport) -> None:
    """One line per criterion: flip rate, kappa, units and reruns."""
    out = console()
    how = f"{report.model} at temperature {report.temperature:g}" if report.model else "the agent runtime"
    out.print(
        f"{len(report.units)} unit(s) × {report.times} reruns by {how} ({report.path} path); "
        f"{report.unscored} rerun(s) unscored, {report.missing} not judged yet, {report.invalid} invalid",
        markup=False,
        soft_wrap=True,
    )
    if report.invalid_example:
        out.print(
            f"  invalid rerun verdict file, e.g. {report.invalid_example}", markup=False, soft_wrap=True
        )
    for r in report.results:
        kappa = f"{r.kappa:.3f}" if r.kappa is not None else f"undefined ({r.kappa_reason})"
        flip = f"{r.flip_rate:.1%}" if r.flip_rate is not None else "n/a"
        out.print(
            f"  {r.criterion_id}: flip rate {flip} ({r.flips} of {r.units} units), Fleiss' kappa {kappa}, "
            f"{r.reruns_min}-{r.reruns_max} verdicts per unit",
            markup=False,
            soft_wrap=True,
        )


@helix_errors
def rerun(
    run: Annotated[Path, typer.Option("--run", help="Run directory (after `helix judge prep`).")],
    times: Annotated[
        int, typer.Option("--times", help="How many times to judge each unit again (at least 2).")
    ],
    sample: Annotated[
        int | None,
        typer.Option("--sample", help="Re-judge a seeded sample of this many units (default: all)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="PROVIDER/MODEL for the reruns (default: the model pinned at prep)."),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible server (vLLM, Ollama, ...).")
    ] = None,
    temperature: Annotated[
        float, typer.Option("--temperature", help="Temperature of the reruns: 0 (default) or more.")
    ] = 0.0,
    dispatch: Annotated[
        bool,
        typer.Option(
            "--dispatch",
            help="Write packet copies under RUN/reruns/ for an agent runtime instead of calling a model; run "
            "the command again once it has written the verdicts.",
        ),
    ] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of --sample.")] = 0,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Requests in flight at most.")] = 8,
    allow_alias: Annotated[
        bool, typer.Option(help="Accept a floating model alias (not reproducible).")
    ] = False,
) -> None:
    """Judge each LLM unit of a run again TIMES times and measure the judge's self-consistency.

    Per criterion: the flip rate (units whose repeated verdicts are not all equal) and Fleiss' kappa
    over the reruns. The run's own verdicts are not touched; reruns go to RUN/reruns/r<i>/ and the result
    to RUN/calibration/consistency.json, which `helix validate` shows beside TPR and TNR. Exit 4 when
    some reruns ended unscored or (dispatch) wrote an invalid verdict file.
    """
    from .._exceptions import UsageError
    from ..calibration import collect_reruns, prepare_dispatch_reruns, rerun_judges_sync
    from ..judging import open_run
    from ..models import parse_model_spec

    if dispatch:
        units, pending = prepare_dispatch_reruns(run, times=times, sample=sample, seed=seed)
        if pending:
            console().print(
                f"wrote packet copies for {len(units)} unit(s) × {times} reruns under {run / 'reruns'}; "
                f"{pending} rerun verdict(s) to write (each packet's verdict_file says where). Then run this "
                "command again.",
                markup=False,
                soft_wrap=True,
            )
            return
        report = collect_reruns(run, units, times=times, path="dispatch")
    else:
        pinned = open_run(run).manifest.pin
        ref = model or (f"{pinned.provider}/{pinned.model}" if pinned.model and pinned.provider else None)
        if ref is None:
            raise UsageError(
                "the run pins no model: pass --model PROVIDER/MODEL, or --dispatch for an agent runtime"
            )
        spec = parse_model_spec(ref, base_url=base_url, allow_alias=allow_alias)
        report = rerun_judges_sync(
            run, spec, times=times, sample=sample, seed=seed, temperature=temperature, concurrency=concurrency
        )
    print_consistency(report)
    if report.unscored or report.invalid:
        raise typer.Exit(EXIT_UNSCORED)


def register(app: typer.Typer) -> None:
    """Add `helix judge rerun` to the `judge` group."""
    from ._judge import judge_app

    judge_app.command("rerun")(rerun)
