"""`helix review serve|export-html|import|export|agreement`: human labels for judge calibration."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import console, err_console, helix_errors

__all__ = ["register"]

review_app = typer.Typer(
    help=(
        "Label traces by hand so the judges can be calibrated. `serve` opens a local labeling page backed by a "
        "SQLite label store; `export-html` writes one self-contained page for offline labeling whose exported "
        "JSONL `import` merges into a store. The judge's verdict stays hidden until you reveal it (blind labeling)."
    ),
    no_args_is_help=True,
)

RunDir = Annotated[Path, typer.Option("--run", help="Run directory (created by `helix judge prep`).")]
LabelsDb = Annotated[Path, typer.Option("--labels", help="SQLite label store (created when absent).")]
Criteria = Annotated[
    list[str] | None,
    typer.Option(
        "--criterion", help="Only label this criterion id (repeatable). Default: every LLM criterion."
    ),
]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the balanced queue order.")]


@review_app.command("serve")
@helix_errors
def serve(
    run: RunDir,
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels", help="SQLite label store (created when absent). Default: RUN/labels.sqlite."
        ),
    ] = None,
    annotator: Annotated[
        str, typer.Option("--annotator", help="Your name, stored with every label (`?annotator=` overrides).")
    ] = "annotator",
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Interface to bind. Anything but loopback needs a strong access token (one is generated and "
            "printed when --token is not given).",
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0 = any free port).")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="HELIX_REVIEW_TOKEN",
            help="Access token required on every request (open the page with ?token=...); at least 16 "
            "characters for a non-loopback host.",
        ),
    ] = None,
    criterion: Criteria = None,
    seed: Seed = 0,
    queue: Annotated[
        str,
        typer.Option(
            "--queue",
            help="Item order: `balanced` (interleaved by the judge's verdict) or `active` (the labels that shrink "
            "the corrected-rate interval most come first: unsure verdicts, the strata the interval needs).",
        ),
    ] = "balanced",
) -> None:
    """Serve the review page for a run on a local web server; labels go to the SQLite store.

    Keys on the page: p pass, f fail, d defer, x underdetermined, j/k next/previous, u undo,
    v reveal the judge's verdict. Stop with Ctrl-C; every label is already committed.
    """
    from ..review import LabelStore, ReviewServer, check_bind, create_review_app, generate_token, is_loopback

    if not is_loopback(host) and not token:
        token = generate_token()
    check_bind(host, token)
    labels = labels if labels is not None else run / "labels.sqlite"
    store = LabelStore(labels)
    app = create_review_app(
        run,
        store,
        annotator=annotator,
        token=token,
        loopback_only=is_loopback(host),
        criterion_ids=criterion,
        seed=seed,
        queue=queue,  # type: ignore[arg-type]
    )
    server = ReviewServer(app, host=host, port=port, token=token)
    url = server.url + (f"?token={token}" if token else "")
    console().print(
        f"reviewing {run} as {annotator!r}; labels -> {labels}\nopen {url}  (Ctrl-C to stop)",
        markup=False,
        soft_wrap=True,
    )
    server.run()


@review_app.command("export-html")
@helix_errors
def export_html(
    run: RunDir,
    out: Annotated[
        Path, typer.Option("--out", help="Where to write the page (one self-contained HTML file).")
    ],
    annotator: Annotated[
        str, typer.Option("--annotator", help="Default annotator name on the page.")
    ] = "annotator",
    criterion: Criteria = None,
    seed: Seed = 0,
    blind: Annotated[
        bool,
        typer.Option(
            "--blind",
            help="Leave every judge verdict and critique out of the file (they cannot be revealed).",
        ),
    ] = False,
) -> None:
    """Write one self-contained review page for offline labeling.

    Labels autosave to the browser's localStorage; the page's "Export labels" button downloads a JSONL file
    that `helix review import FILE --labels DB` merges into a label store. Without --blind the verdicts are
    in the file (hidden on screen until revealed); with --blind they are not in it at all.
    """
    from ..review import write_review_html

    path = write_review_html(run, out, annotator=annotator, criterion_ids=criterion, seed=seed, blind=blind)
    console().print(f"wrote {path}", markup=False, soft_wrap=True)


@review_app.command("import")
@helix_errors
def import_labels(
    file: Annotated[
        Path, typer.Argument(help="Labels JSONL (from the offline page or `helix review export`).")
    ],
    labels: LabelsDb,
) -> None:
    """Merge a labels JSONL file into a label store. Identical labels are kept once (importing twice changes
    nothing); bad lines are skipped and listed with their line numbers (exit 1 when there were any)."""
    from ..review import LabelStore

    summary = LabelStore(labels).import_jsonl(file)
    console().print(summary.describe().splitlines()[0], markup=False, soft_wrap=True)
    for bad in summary.bad_lines:
        err_console().print(f"  {file}:{bad.line}: {bad.reason}", markup=False, soft_wrap=True)
    if summary.bad_lines:
        raise typer.Exit(1)


@review_app.command("export")
@helix_errors
def export_labels(
    labels: Annotated[Path, typer.Option("--labels", help="SQLite label store to read (must exist).")],
    out: Annotated[Path, typer.Option("--out", help="Labels JSONL to write.")],
    latest: Annotated[
        bool, typer.Option("--latest/--all", help="Only the current label per trace × criterion × annotator.")
    ] = False,
) -> None:
    """Write a label store's labels as JSONL (DuckDB and Polars read it directly)."""
    from ..review import LabelStore

    n = LabelStore(labels, create=False).export_jsonl(out, latest_only=latest)
    console().print(f"wrote {n} label(s) to {out}", markup=False, soft_wrap=True)


@review_app.command("agreement")
@helix_errors
def agreement(
    labels: Annotated[
        Path, typer.Option("--labels", help="Label store or labels JSONL to read (must exist).")
    ],
) -> None:
    """Cohen's kappa between every pair of annotators, on the items both labeled pass or fail."""
    from ..review import annotator_agreement, load_labels

    results = annotator_agreement(load_labels(labels))
    if not results:
        console().print("fewer than two annotators: no agreement to compute")
    for r in results:
        console().print(r.describe(), markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add `helix review ...` to the root app."""
    app.add_typer(review_app, name="review")
