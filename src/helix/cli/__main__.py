"""`python -m helix.cli` runs the `helix` command."""

from . import main

main()
