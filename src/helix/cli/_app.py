"""The root Typer app. Heavy modules are imported inside commands so `helix --help` is instant.

Each command group lives in its own module with a ``register(app)`` function, wired below.

Help is plain click formatting (``rich_markup_mode=None``): it rewraps each docstring paragraph to
the terminal, shows flags without a type, and, through :class:`_Group`, lists every command with
its whole first sentence instead of cutting it off mid-sentence.
"""

from __future__ import annotations

from typing import Any

import typer
from typer._click._textwrap import TextWrapper as _TextWrapper
from typer.core import TyperGroup

from .._version import __version__
from . import (
    _agents,
    _attest,
    _audit,
    _campaign,
    _demo,
    _discover,
    _init,
    _judge,
    _labels,
    _profile,
    _rerun,
    _review,
    _schema,
    _traces,
    _validate,
)

__all__ = ["app", "main"]

# Help text is wrapped at spaces only: names such as `openai-messages` or `--rejudge-unscored` must
# never be split across lines. Set on the wrapper class of the click copy typer ships, which only
# formats help text (this module is the CLI's entry point, so nothing else in a process sees it).
_TextWrapper.wordsep_re = _TextWrapper.wordsep_simple_re  # split at whitespace, never at hyphens


class _Group(TyperGroup):
    """A command group whose command list shows each command's whole first sentence, wrapped."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # ctx and formatter are click's Context and HelpFormatter from the copy typer ships (typer._click)
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


app = typer.Typer(
    name="helix",
    help="Evaluate LLM agents: read traces, judge them against binary criteria, gate releases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=_Group,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"helix {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print Helix's version and exit.",
    ),
) -> None:
    """Evaluate LLM agents: read traces, judge them against binary criteria, gate releases."""


for _module in (
    _traces,
    _judge,
    _rerun,
    _schema,
    _demo,
    _review,
    _labels,
    _validate,
    _audit,
    _campaign,
    _attest,
    _discover,
    _profile,
    _agents,
    _init,
):
    _module.register(app)
for _group in app.registered_groups:  # every command group lists its commands the same way
    if _group.typer_instance is not None:
        _group.typer_instance.info.cls = _Group


def main() -> None:
    """Entry point of the `helix` console script."""
    app()
