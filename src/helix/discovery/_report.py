"""The discovery report page: the discovery curve and the emergent categories, escaped.

One self-contained HTML file over the report kit (its style sheet and escaping helper): a line
chart (inline SVG) of categories seen against traces read, the saturation numbers, and a table of
categories with their failure rates, routing and definitions. Everything that came from a reader
(category names, definitions, trace ids) is untrusted and escaped with :func:`~helix.report.esc`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .._util import write_atomic
from ..report import STYLE, esc

if TYPE_CHECKING:
    from ._result import DiscoveryResult

__all__ = ["render_discovery_report", "write_discovery_report"]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'"


def curve_svg(curve: tuple[int, ...], *, width: int = 560, height: int = 220) -> str:
    """The discovery curve as an inline SVG line chart."""
    if not curve:
        return "<p>No trace read yet.</p>"
    pad = 36
    top = max(max(curve), 1)
    n = len(curve)

    def x(i: int) -> float:
        return pad + (width - 2 * pad) * (i / max(n - 1, 1))

    def y(v: int) -> float:
        return height - pad - (height - 2 * pad) * (v / top)

    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(curve))
    return (
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="categories seen against traces read">'
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#59636e"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#59636e"/>'
        f'<polyline fill="none" stroke="#0969da" stroke-width="2" points="{points}"/>'
        f'<text x="{width / 2:.0f}" y="{height - 6}" text-anchor="middle" font-size="12">traces read ({n})</text>'
        f'<text x="12" y="{height / 2:.0f}" transform="rotate(-90 12 {height / 2:.0f})" text-anchor="middle" '
        f'font-size="12">categories seen ({curve[-1]})</text></svg>'
    )


def render_discovery_report(result: DiscoveryResult) -> str:
    """The page as HTML text."""
    s = result.saturation
    d = result.determinations
    if (
        s.coverage is not None
        and s.coverage_ci is not None
        and s.chao1 is not None
        and s.chao1_ci is not None
    ):
        sat = (
            f"Good–Turing coverage {s.coverage:.2f} (95% CI {s.coverage_ci[0]:.2f}–{s.coverage_ci[1]:.2f}); "
            f"Chao1 richness {s.chao1:.1f} (95% CI {s.chao1_ci[0]:.1f}–{s.chao1_ci[1]:.1f}) against "
            f"{s.categories} seen; {s.new_in_last_k} new in the last {s.last_k} traces: "
            + ("<strong>saturated</strong>" if s.stopped else "<strong>not saturated</strong>, keep reading")
        )
    else:
        sat = "No categorised note yet: saturation not measured."
    rows = []
    for c in result.categories:
        agents = ", ".join(f"{esc(a)} {k}" for a, k in c.agents.items())
        shown = ", ".join(esc(t) for t in c.trace_ids[:8]) + (" …" if len(c.trace_ids) > 8 else "")
        rows.append(
            "<tr>"
            f"<td><code>{esc(c.id)}</code><br>{esc(c.title)}</td>"
            f"<td>{c.failures}</td><td>{c.rate:.1%}<br><small>{c.ci95[0]:.1%}–{c.ci95[1]:.1%}</small></td>"
            f"<td>{esc(c.routing)}<br><small>{esc(c.routing_reason)}</small></td>"
            f"<td>{esc(c.definition)}<br><small>Q: {esc(c.question)}<br>fail: {esc(c.fail_definition)}</small></td>"
            f"<td><small>{agents}</small></td><td><small>{shown}</small></td>"
            "</tr>"
        )
    table = (
        "<table><thead><tr><th>category</th><th>failures</th><th>rate (95% CI)</th><th>routing</th>"
        "<th>definition</th><th>agents</th><th>traces</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        if rows
        else "<p>No category yet.</p>"
    )
    readers = ", ".join(esc(r) for r in result.readers) or "none recorded"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(_CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>Discovery: {esc(result.subject or 'traces')}</title><style>{STYLE}</style></head><body><main>"
        f"<h1>Discovery: {esc(result.subject or 'traces')}</h1>"
        f"<p>{result.traces} traces read: {d.passed} pass, {d.failed} fail, {d.uncertain} uncertain, "
        f"{d.unscored} unscored. {result.notes} first-thing-wrong notes in {len(result.categories)} categories, "
        f"{result.unassigned} unassigned. Readers: {readers}. Prompt {esc(result.prompt_version)}.</p>"
        f"<h2>Discovery curve</h2>{curve_svg(s.curve)}<p>{sat}</p>"
        f"<h2>Categories</h2><p>Rates are over the {result.decided} traces with a decided outcome.</p>{table}"
        "</main></body></html>\n"
    )


def write_discovery_report(result: DiscoveryResult, path: str | Path) -> Path:
    """Write the page atomically."""
    return write_atomic(path, render_discovery_report(result))
