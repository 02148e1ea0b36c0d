"""Terminal rendering of a scorecard (the CLI's one view of a result)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from ..scoring import Scorecard

__all__ = ["print_scorecard"]

_STYLE = {"pass": "green", "fail": "bold red", "uncertain": "yellow"}


def print_scorecard(out: Console, card: Scorecard) -> None:
    """A criteria table and the gate line."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(
        title=f"{escape(card.subject)}: {card.run.trace_count} traces",
        title_justify="left",
        caption="pass rate over decided verdicts, Wilson 95% interval; p/f/u/x = pass, fail, uncertain, unscored",
        caption_justify="left",
    )
    table.add_column("criterion", no_wrap=True)  # an id split over two lines is no longer an id
    table.add_column("severity")
    table.add_column("kind")
    table.add_column("outcome")
    table.add_column("pass rate", justify="right", no_wrap=True)
    table.add_column("p/f/u/x", justify="right", no_wrap=True)
    for c in card.criteria:
        if c.pass_rate is None:
            rate = "—"
        else:
            ci = c.pass_rate_interval
            rate = f"{c.pass_rate:.0%}" + (f" [{ci.low:.0%}, {ci.high:.0%}]" if ci else "")
        table.add_row(
            escape(c.criterion_id),
            c.severity,
            c.kind,
            f"[{_STYLE[c.outcome]}]{c.outcome}[/]",
            escape(rate),
            f"{c.n_pass}/{c.n_fail}/{c.n_uncertain}/{c.n_unscored}",
        )
    out.print(table)
    style = "bold green" if card.gate.passed else "bold red"
    out.print(f"gate [{style}]{escape(card.gate.reason)}[/]")
