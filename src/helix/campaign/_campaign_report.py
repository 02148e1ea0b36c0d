"""The campaign report: one self-contained HTML page of a run directory.

``helix campaign run`` writes ``campaign.json`` (a :class:`CampaignManifest`: the config, commit,
identity and every cell's cache key) before dispatching, so a report can be made of any run, even
one stopped half-way: :func:`load_campaign_run` reads each cell's durable result (finished, failed
or not run yet) and aggregates with the engine's own :func:`aggregate_cells`.

The page shows per-scorer and per-scenario distributions (mean, ci95 band, min, p50, p90, max as an
inline SVG strip on [0, 1] beside the numbers) and every failed cell with its failure receipts.
Everything that comes from the run (ids, error messages, receipts) is escaped; the page has no
script and a CSP that forbids loading anything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._exceptions import InputFileError, UsageError
from .._util import write_atomic
from .._version import __version__
from ._aggregate import AggregateStat, CampaignAggregates, aggregate_cells
from ._failures import FailureReceipt
from ._model import CellResult
from ._paths import CAMPAIGN_MANIFEST_FILE, CellPaths
from ._run import CampaignResult
from ._schedule import CampaignPlan

__all__ = [
    "CampaignManifest",
    "CampaignRun",
    "ManifestCell",
    "campaign_manifest",
    "campaign_summary",
    "load_campaign_run",
    "render_campaign_report",
    "write_campaign_report",
]

_RECEIPT_SHOWN_CHARS = 6000
SUMMARY_VERSION = 2
"""``summary.json`` version 2: aggregates ``by_scorer`` (version 1: ``by_judge``); seed, reps and the
served models recorded."""
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'"


class ManifestCell(BaseModel):
    """One cell of the design and the cache key its result is stored under."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cell_id: str
    scenario_id: str
    rep: int
    seed: int
    cache_key: str


MANIFEST_VERSION: Literal[2] = 2
"""Version 2: no paths (version 1 carried the config's ``run_dir``, not the directory used)."""


class CampaignManifest(BaseModel):
    """What a run directory was asked to run (``<run>/campaign.json``).

    It holds no path: it lives in the run directory it describes, so the same campaign run in two
    directories writes the same bytes. Version 1 manifests are read as they are.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1, 2] = MANIFEST_VERSION
    name: str
    commit: str
    dispatch_ref: str | None = None
    identity: str
    seed: int
    reps: int
    config: dict[str, Any] = Field(default_factory=dict)
    cells: list[ManifestCell]


def campaign_manifest(
    plan: CampaignPlan,
    *,
    name: str,
    commit: str,
    seed: int,
    reps: int,
    dispatch_ref: str | None = None,
    config: dict[str, Any] | None = None,
) -> CampaignManifest:
    """The manifest of a planned campaign (write it with ``write_atomic`` into the run directory).

    A ``run_dir`` in ``config`` is left out: where the run lives is where the manifest is.
    """
    return CampaignManifest(
        name=name,
        commit=commit,
        dispatch_ref=dispatch_ref,
        identity=plan.identity,
        seed=seed,
        reps=reps,
        config={k: v for k, v in (config or {}).items() if k != "run_dir"},
        cells=[
            ManifestCell(cell_id=s.cell_id, scenario_id=s.scenario.id, rep=s.rep, seed=s.seed, cache_key=k)
            for s, k in zip(plan.slots, plan.keys, strict=True)
        ],
    )


def campaign_summary(
    result: CampaignResult, *, name: str, commit: str, seed: int, reps: int
) -> dict[str, Any]:
    """The counts and aggregates of a finished ``run_campaign`` (no cell bodies): ``summary.json``.

    Small and deterministic for the same cells (the session id is left out), so it is the natural
    thing to pass to ``helix attest``, which takes the provenance it records (commit, seed, the
    served models) from it.
    """
    return {
        "version": SUMMARY_VERSION,
        "name": name,
        "commit": commit,
        "seed": seed,
        "reps": reps,
        "served_models": sorted({c.served_model for c in result.cells if c.served_model is not None}),
        "identity": result.identity,
        "total": result.total,
        "finished": result.total - result.failed,
        "failed": result.failed,
        "failed_cells": [c.cell_id for c in result.failed_cells],
        "retries": result.retries,
        "cost_usd": result.cost_usd,
        "cost_complete": result.cost_complete,
        "aggregates": result.aggregates.model_dump(mode="json"),
    }


@dataclass(frozen=True, kw_only=True)
class CampaignRun:
    """A run directory read back: its manifest, the cells that have a durable result, the aggregates."""

    run_dir: Path
    manifest: CampaignManifest
    cells: tuple[CellResult, ...]
    not_run: tuple[ManifestCell, ...]
    aggregates: CampaignAggregates
    receipts: dict[str, tuple[FailureReceipt, ...]]
    """Cell id → its failure receipts (attempt receipts first, the final one last)."""

    @property
    def failed(self) -> tuple[CellResult, ...]:
        return tuple(c for c in self.cells if c.status == "failed")


def _read_cell(path: str) -> CellResult | None:
    try:
        with open(path, "rb") as fh:
            return CellResult.model_validate_json(fh.read())
    except FileNotFoundError:
        return None
    except (OSError, ValidationError) as exc:
        raise InputFileError(
            f"unreadable cell result ({exc}); delete it to run the cell again", path=path
        ) from None


def _receipts(paths: CellPaths) -> tuple[FailureReceipt, ...]:
    found: list[tuple[int, FailureReceipt]] = []
    for path in paths.receipt_files():
        try:
            with open(path, "rb") as fh:
                receipt = FailureReceipt.model_validate_json(fh.read())
        except (OSError, ValidationError):
            continue  # a receipt from another format version: not shown rather than guessed at
        found.append((receipt.attempt + (1_000_000 if receipt.final else 0), receipt))
    return tuple(r for _, r in sorted(found, key=lambda x: x[0]))


def load_campaign_run(run_dir: str | Path, *, bootstrap_resamples: int = 2000) -> CampaignRun:
    """Read a run directory written by ``helix campaign run`` (finished or not)."""
    root = Path(run_dir)
    manifest_path = root / CAMPAIGN_MANIFEST_FILE
    try:
        manifest = CampaignManifest.model_validate_json(manifest_path.read_bytes())
    except FileNotFoundError:
        raise UsageError(
            f"{root} has no {CAMPAIGN_MANIFEST_FILE}; pass the run directory of `helix campaign run` "
            "(its run_dir setting)"
        ) from None
    except ValidationError as exc:
        raise InputFileError(
            f"not a campaign manifest: {exc.errors()[0]['msg']}", path=manifest_path
        ) from None
    cells: list[CellResult] = []
    not_run: list[ManifestCell] = []
    receipts: dict[str, tuple[FailureReceipt, ...]] = {}
    for mc in manifest.cells:
        paths = CellPaths.of(root, mc.cell_id, mc.cache_key)
        result = _read_cell(paths.result)
        if result is None:
            result = _read_cell(paths.failed)
        if result is None:
            not_run.append(mc)
            continue
        cells.append(result)
        if result.status == "failed" or result.retry_attempts:
            receipts[mc.cell_id] = _receipts(paths)
    return CampaignRun(
        run_dir=root,
        manifest=manifest,
        cells=tuple(cells),
        not_run=tuple(not_run),
        aggregates=aggregate_cells(cells, seed=manifest.seed, n_resamples=bootstrap_resamples),
        receipts=receipts,
    )


# ----------------------------------------------------------------------------- rendering


def esc(value: object) -> str:
    """Escape run content for HTML text and attributes (the report package's one escaper)."""
    from ..report import esc as report_esc

    return report_esc(value)


_W, _H, _PAD = 240, 22, 6


def _x(v: float) -> float:
    return _PAD + max(0.0, min(1.0, v)) * (_W - 2 * _PAD)


def _band_svg(stat: AggregateStat) -> str:
    """A [0, 1] strip: min–max line, ci95 band, p50 and p90 ticks, the mean as a dot."""
    d = stat.distribution
    lo, hi = stat.ci95
    mid = _H / 2
    return (
        f'<svg class="band" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" role="img" '
        f'aria-label="mean {stat.mean:.3f}, ci95 {lo:.3f} to {hi:.3f}, range {d.min:.3f} to {d.max:.3f}">'
        f'<line x1="{_x(0):.1f}" y1="{mid}" x2="{_x(1):.1f}" y2="{mid}" stroke="#d1d9e0"/>'
        f'<line class="range" x1="{_x(d.min):.1f}" y1="{mid}" x2="{_x(d.max):.1f}" y2="{mid}" '
        'stroke="#59636e" stroke-width="2"/>'
        f'<rect class="ci" x="{_x(lo):.1f}" y="{mid - 6}" width="{max(_x(hi) - _x(lo), 1.5):.1f}" height="12" '
        'fill="#0969da" fill-opacity="0.25" stroke="#0969da"/>'
        f'<line class="p50" x1="{_x(d.p50):.1f}" y1="{mid - 8}" x2="{_x(d.p50):.1f}" y2="{mid + 8}" '
        'stroke="#1f2328" stroke-width="2"/>'
        f'<line class="p90" x1="{_x(d.p90):.1f}" y1="{mid - 5}" x2="{_x(d.p90):.1f}" y2="{mid + 5}" '
        'stroke="#9a6700" stroke-width="2"/>'
        f'<circle class="mean" cx="{_x(stat.mean):.1f}" cy="{mid}" r="4" fill="#cf222e"/></svg>'
    )


def _stat_rows(stats: dict[str, AggregateStat], kind: str) -> str:
    if not stats:
        return f'<p class="muted">No {kind} has a measured score yet.</p>'
    rows = []
    for name, s in stats.items():
        d = s.distribution
        rows.append(
            f'<tr class="{kind}-row" data-name="{esc(name)}"><td><code>{esc(name)}</code></td>'
            f'<td class="num">{s.n}</td><td class="num">{s.mean:.3f}</td>'
            f'<td class="num">[{s.ci95[0]:.3f}, {s.ci95[1]:.3f}]</td>'
            f'<td class="num">{d.min:.3f}</td><td class="num">{d.p50:.3f}</td><td class="num">{d.p90:.3f}</td>'
            f'<td class="num">{d.max:.3f}</td><td>{_band_svg(s)}</td></tr>'
        )
    return (
        f'<table id="by-{kind}"><thead><tr><th>{kind}</th><th>n</th><th>mean</th><th>ci95</th><th>min</th>'
        "<th>p50</th><th>p90</th><th>max</th><th>spread on [0, 1]</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _receipt_block(receipt: FailureReceipt, paths: CellPaths) -> str:
    body = orjson.dumps(receipt.model_dump(mode="json"), option=orjson.OPT_INDENT_2).decode("utf-8")
    if len(body) > _RECEIPT_SHOWN_CHARS:
        body = (
            body[:_RECEIPT_SHOWN_CHARS]
            + f"\n… ({len(body) - _RECEIPT_SHOWN_CHARS} more characters in the file)"
        )
    name = os.path.basename(paths.receipt if receipt.final else paths.attempt_receipt(receipt.attempt))
    return (
        f"<details><summary>{esc(name)} · attempt {receipt.attempt} · stage {esc(receipt.stage)} · "
        f"{esc(receipt.error.type)}</summary><pre>{esc(body)}</pre></details>"
    )


def _failures(run: CampaignRun) -> str:
    failed = run.failed
    if not failed:
        return '<p class="muted" id="failures">No failed cells.</p>'
    items = []
    for cell in failed:
        err = cell.error
        message = f"{err.type}: {err.message}" if err is not None else "no error recorded"
        paths = CellPaths.of(run.run_dir, cell.cell_id, cell.cache_key)
        receipts = "".join(_receipt_block(r, paths) for r in run.receipts.get(cell.cell_id, ()))
        items.append(
            f'<section class="trace outcome-fail failure" data-cell="{esc(cell.cell_id)}">'
            f'<div class="trace-head"><h3>{esc(cell.cell_id)}</h3>'
            f'<span class="badge fail">{esc(cell.stage or "failed")}</span>'
            f'<span class="muted">attempts {cell.attempts} · cost {_cost(cell.cost_usd)} · '
            f"model {esc(cell.served_model or 'unknown')}</span></div>"
            f'<p class="error-text">{esc(message)}</p>{receipts or "<p class=muted>no receipt file found</p>"}'
            "</section>"
        )
    return f'<div id="failures">{"".join(items)}</div>'


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _header(run: CampaignRun) -> str:
    m = run.manifest
    ok = sum(c.status == "ok" for c in run.cells)
    known = [c.cost_usd for c in run.cells if c.cost_usd is not None]
    complete = all(c.cost_usd is not None and c.cost_complete for c in run.cells)
    cards = [
        (str(len(m.cells)), "cells"),
        (str(ok), "finished"),
        (str(len(run.failed)), "failed"),
        (str(len(run.not_run)), "not run yet"),
        (str(sum(c.retry_attempts for c in run.cells)), "retries"),
        (f"${sum(known):.4f}" + ("" if complete else "+"), "cost" + ("" if complete else " (some unknown)")),
    ]
    card_html = "".join(
        f'<div class="card"><div class="num">{esc(n)}</div><div class="lbl">{esc(lbl)}</div></div>'
        for n, lbl in cards
    )
    return (
        f"<header><h1>Campaign · {esc(m.name)}</h1>"
        f'<div class="meta"><dl><dt>Commit</dt><dd><code>{esc(m.commit)}</code></dd>'
        f"<dt>Dispatch ref</dt><dd>{esc(m.dispatch_ref or 'none')}</dd>"
        f"<dt>Identity</dt><dd><code>{esc(m.identity)}</code></dd>"
        f"<dt>Design</dt><dd>{len({c.scenario_id for c in m.cells})} scenarios × {m.reps} reps, seed {m.seed}"
        "</dd></dl></div></header>"
        f'<div class="cards" id="totals">{card_html}</div>'
    )


def render_campaign_report(run: CampaignRun) -> str:
    """The whole page for a campaign run (a pure function of ``run``: no clock)."""
    from ..report import STYLE

    legend = (
        '<p class="muted">Read the spread before the mean. Strip: grey line = min to max, blue box = '
        "bootstrap ci95 of the mean, black tick = p50, amber tick = p90, red dot = mean (nearest-rank "
        "quantiles: each is a measured score). A scorer or scenario with no measured score has no row.</p>"
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(_CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>Helix campaign · {esc(run.manifest.name)}</title>"
        f"<style>{STYLE}</style></head>\n<body><main>"
        f"{_header(run)}<h2>By scorer</h2>{legend}{_stat_rows(run.aggregates.by_scorer, 'scorer')}"
        f"<h2>By scenario (composite score)</h2>{_stat_rows(run.aggregates.by_scenario, 'scenario')}"
        f"<h2>Failed cells</h2>{_failures(run)}"
        f"<footer>Generated by Helix {esc(__version__)} · campaign manifest v{run.manifest.version}</footer>"
        "</main></body></html>\n"
    )


def write_campaign_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Read ``run_dir`` and write its report (default ``<run_dir>/report.html``); returns the path."""
    run = load_campaign_run(run_dir)
    target = Path(out) if out is not None else Path(run_dir) / "report.html"
    return write_atomic(target, render_campaign_report(run))
