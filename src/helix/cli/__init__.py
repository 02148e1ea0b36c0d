"""The `helix` command line (thin Typer commands over the public API)."""

from ._app import app, main

__all__ = ["app", "main"]
