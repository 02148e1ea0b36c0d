"""The root Typer app. Heavy modules are imported inside commands so `helix --help` is instant.

Each command group lives in its own module with a ``register(app)`` function, wired below.
"""

from __future__ import annotations

import typer

from . import _attest, _audit, _campaign, _demo, _judge, _labels, _review, _schema, _traces, _validate

__all__ = ["app", "main"]

app = typer.Typer(
    name="helix",
    help="Evaluate LLM agents: read traces, judge them against binary criteria, gate releases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Evaluate LLM agents: read traces, judge them against binary criteria, gate releases."""


for _module in (_traces, _judge, _schema, _demo, _review, _labels, _validate, _audit, _campaign, _attest):
    _module.register(app)


def main() -> None:
    """Entry point of the `helix` console script."""
    app()
