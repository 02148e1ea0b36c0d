"""The code version of a checkout, read-only: ``git rev-parse HEAD``."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["git_commit"]


def git_commit(cwd: str | Path = ".") -> str | None:
    """``git rev-parse HEAD`` in ``cwd``, or None outside a git checkout (or without git)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None
