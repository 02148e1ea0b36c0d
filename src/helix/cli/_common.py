"""Shared CLI plumbing: one place that turns Helix errors into messages and exit codes."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TextIO, TypeVar

import typer

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "EXIT_GATE_FAILED",
    "EXIT_MISSING_VERDICTS",
    "EXIT_UNSCORED",
    "EXIT_USAGE",
    "console",
    "err_console",
    "helix_errors",
]

P = ParamSpec("P")
R = TypeVar("R")

EXIT_GATE_FAILED = 1
"""The release gate failed (or, for `judge status`, verdicts are still missing)."""
EXIT_USAGE = 2
"""Bad input or misuse: the message says what to fix."""
EXIT_MISSING_VERDICTS = 3
"""AGGREGATE refused: some judging units have no verdict yet."""
EXIT_UNSCORED = 4
"""Judging finished but some units ended unscored (provider failures or answers that never parsed):
the verdicts are incomplete. The reasons are printed; rerun with ``--rejudge-unscored``."""


_PIPE_WIDTH = 1000
"""Console width when the output is not a terminal (a pipe, a file, CI logs): tables take their
natural width and lines are not wrapped, so ids and paths are never split mid-word."""


def _width(stream: TextIO) -> int | None:
    """None (Rich measures the terminal, or honours COLUMNS) on a terminal; else a wide page."""
    isatty = getattr(stream, "isatty", None)
    if os.environ.get("COLUMNS") or (isatty is not None and isatty()):
        return None
    return _PIPE_WIDTH


def console(*, soft_wrap: bool = False) -> Console:
    """The stdout Rich console (imported lazily so `helix --help` stays fast).

    ``soft_wrap=True`` never wraps printed lines on a terminal either (long paths stay whole).
    """
    from rich.console import Console

    return Console(highlight=False, soft_wrap=soft_wrap, width=_width(sys.stdout))


def err_console() -> Console:
    """The stderr Rich console."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, width=_width(sys.stderr))


def helix_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Run a command, printing Helix errors as plain messages with a documented exit code."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from .._exceptions import HelixError, MissingVerdictsError, UsageError

        try:
            return fn(*args, **kwargs)
        except MissingVerdictsError as exc:
            _print_error(str(exc))
            raise typer.Exit(EXIT_MISSING_VERDICTS) from None
        except UsageError as exc:
            _print_error(str(exc))
            raise typer.Exit(EXIT_USAGE) from None
        except HelixError as exc:
            _print_error(str(exc))
            raise typer.Exit(EXIT_USAGE) from None
        except KeyboardInterrupt:
            _print_error("interrupted; finished work is kept on disk, rerun the same command to resume")
            raise typer.Exit(130) from None

    return wrapper


def _print_error(message: str) -> None:
    from rich.markup import escape

    err_console().print(f"[bold red]error:[/bold red] {escape(message)}")
    sys.stderr.flush()
