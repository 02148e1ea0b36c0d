"""`helix labels from-scores`: gold labels from scores the traces already carry."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import console, helix_errors

__all__ = ["register"]

labels_app = typer.Typer(
    help=(
        "Label files without hand labelling: `from-scores` turns a score the traces already carry (a tau2 "
        "reward, an Inspect score, Langfuse scores, LangSmith feedback) into labels `helix validate` reads. "
        "The label format: `helix schema labels` and docs/labels.md."
    ),
    no_args_is_help=True,
)


@labels_app.command("from-scores")
@helix_errors
def from_scores(
    run: Annotated[
        Path, typer.Argument(help="Run directory (from `helix judge prep`) whose traces carry the score.")
    ],
    score: Annotated[str, typer.Option("--score", help="Score name on the traces, e.g. reward.")],
    pass_rule: Annotated[
        str,
        typer.Option(
            "--pass", help="When the score means pass: OP VALUE, e.g. '>=1', '>0.5', '==true', '=C'."
        ),
    ],
    criterion: Annotated[
        str | None,
        typer.Option(
            "--criterion", help="Criterion the labels are for (default: the run's only LLM criterion)."
        ),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option("--source", help="Only scores from this source (e.g. tau2), when traces carry several."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Labels JSONL to write (default: RUN/labels-<score>.jsonl).")
    ] = None,
    store: Annotated[
        Path | None, typer.Option("--labels", help="Also merge the labels into this label store (.sqlite).")
    ] = None,
) -> None:
    """Turn a score every trace carries into one label per trace, with provenance.

    The annotator of each label is the score's source and name (tau2:reward), the note keeps the value
    and the rule, and the labels record the design `random` (every trace that carries the score was
    labelled). Traces without the score, with conflicting values, or with a value the rule cannot
    compare get no label and are counted. Then: `helix validate --run RUN --labels OUT`.
    """
    from .._exceptions import UsageError
    from ..judging import open_run
    from ..review import LabelStore, labels_from_scores, write_labels_jsonl

    judging = open_run(run)
    if criterion is None:
        llm = judging.matrix.llm_criteria or tuple(judging.matrix.criteria)
        if len(llm) != 1:
            names = ", ".join(c.id for c in llm)
            raise UsageError(f"the run has several criteria ({names}); say which with --criterion")
        criterion = llm[0].id
    else:
        try:
            judging.matrix.by_id(criterion)
        except KeyError:
            names = ", ".join(c.id for c in judging.matrix.criteria)
            raise UsageError(f"--criterion {criterion!r} is not in the run's criteria ({names})") from None
    made = labels_from_scores(
        judging.traces, score=score, rule=pass_rule, criterion_id=criterion, source=source
    )
    if not made.labels:
        raise UsageError(f"no trace of {run} yields a label: {made.describe()}; check --score and --source")
    target = out if out is not None else run / f"labels-{score}.jsonl"
    write_labels_jsonl(target, made.labels)
    where = str(target)
    if store is not None:
        summary = LabelStore(store).add_many(made.labels)
        where += f" and {store} ({summary.added} added)"
    console().print(
        f"{made.describe()} for criterion {criterion!r} (annotator {', '.join(made.sources)}); wrote {where}",
        markup=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    """Add `helix labels ...` to the root app."""
    app.add_typer(labels_app, name="labels")
