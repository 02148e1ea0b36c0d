"""The command line as a whole: --version, help that reads as prose, flags without a type."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import helix
from helix.cli import app

runner = CliRunner()
WIDTH = 80  # what click formats to when the output is not a terminal


def _commands() -> list[list[str]]:
    """Every command and group path of the CLI, the root first."""
    found: list[list[str]] = []

    def walk(cmd: Any, path: list[str]) -> None:  # typer's own copy of click: duck-typed
        found.append(path)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = _commands()


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output == f"helix {helix.__version__}\n"


def test_the_walk_finds_the_command_groups() -> None:
    names = {" ".join(c) for c in COMMANDS}
    assert {"", "campaign", "campaign run", "judge prep", "attest", "traces inspect"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "helix")
def test_help_is_prose_rewrapped_and_flags_have_no_type(path: list[str]) -> None:
    result = runner.invoke(app, [*path, "--help"], terminal_width=WIDTH)
    assert result.exit_code == 0, result.output
    text = result.output
    assert "<bool>" not in text
    assert not re.search(r":(func|class|mod|meth|attr):`|``", text), "RST markup in help"
    # the description: paragraphs of two-space-indented lines before the first section
    head = text.split("\n\nArguments:")[0].split("\n\nOptions:")[0].split("\n\n", 1)[-1]
    for paragraph in head.split("\n\n"):
        lines = [ln for ln in paragraph.splitlines() if ln.strip()]
        for line, nxt in zip(lines, lines[1:], strict=False):
            room = WIDTH - 2 - len(line.rstrip())
            assert len(nxt.split()[0]) + 1 > room, (
                f"help of {' '.join(path) or 'helix'} breaks a line early (hard-wrapped text):\n{line}\n{nxt}"
            )
    # the command list shows each command's whole first sentence, never a cut-off one
    if "Commands:" in text:
        assert "..." not in text.split("Commands:")[1]
