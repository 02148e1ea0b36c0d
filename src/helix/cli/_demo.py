"""`helix demo`: the whole flow offline on the example support-shop subject."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import console, helix_errors

__all__ = ["register"]


@helix_errors
def demo(
    out: Annotated[
        Path, typer.Option("--out", help="Where to write traces, the run directory and the report.")
    ] = Path("helix-demo"),
) -> None:
    """Run Helix end to end offline (no key, under a minute).

    Generates the example shop agent's traces, runs the code checks, takes the LLM-criteria verdicts that
    ship with the example (written through the dispatch protocol by an LLM agent runtime), aggregates,
    and writes a scorecard and an HTML report. Then runs a small campaign of the same agent (every
    scenario x 2 repetitions, graded on the shop records it produced) into OUT/campaign with its own
    report. Exits 0 whatever the gate says: the demo agent is meant to make mistakes.
    """
    from ..examples import run_demo
    from ..scoring import Scorecard
    from ._render import print_scorecard

    result = run_demo(out)
    c = console()
    c.print(result.describe())
    print_scorecard(c, Scorecard.model_validate_json(result.scorecard_path.read_bytes()))
    c.print("")
    c.print("To judge the same packets live with a model instead of the shipped verdicts:")
    c.print(
        f"  helix evaluate {result.traces_path} --criteria {result.criteria_path} "
        f"--run {out}/live --model openai/gpt-4o-2024-08-06"
    )
    c.print(
        "  (any OpenAI-compatible server works: add --base-url http://127.0.0.1:8000/v1 for vLLM or Ollama)"
    )
    _demo_campaign(out)


def _demo_campaign(out: Path) -> None:
    """The small campaign part of the demo: produced-state grading over scenarios x repetitions."""
    from ..examples import run_demo_campaign

    c = console()
    result, report = run_demo_campaign(out)
    c.print("")
    c.print(
        f"campaign: {result.total} cells ({result.cached} cached, {result.dispatched} run), "
        "graded on the shop records the agent produced:"
    )
    for name, stat in result.aggregates.by_scorer.items():
        d = stat.distribution
        c.print(
            f"  {name:<15} mean {stat.mean:.2f} ci95 [{stat.ci95[0]:.2f}, {stat.ci95[1]:.2f}] "
            f"n {stat.n} min {d.min:.2f} p50 {d.p50:.2f} max {d.max:.2f}"
        )
    c.print(f"campaign report: {report}")
    c.print("  your own: helix campaign example-config > campaign.yaml")
    c.print("            helix campaign run campaign.yaml")


def register(app: typer.Typer) -> None:
    """Add `demo` to the root app."""
    app.command("demo")(demo)
