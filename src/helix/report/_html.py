"""The scorecard report: one self-contained HTML page (inline CSS, a little inline JS, no URLs).

Layout, with stable hooks for browser tests: ``#gate`` (banner, ``data-passed``), ``#criteria``
(one ``tr.criterion-row#criterion-<id>`` per criterion, ``data-outcome``), ``#traces`` (one
``section.trace#<trace_anchor(id)>`` per trace, ``data-outcome``, each with ``.transcript`` and
``.verdicts``), and, once ``helix validate`` stamped the scorecard, ``#calibration`` (one
``section.calibration-item#calibration-<id>`` per criterion, ``data-status``). Output is a pure function of its inputs (no clock), so equal inputs give equal pages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from .._exceptions import UsageError
from .._util import content_hash, write_atomic
from .._version import __version__
from ..judging import JudgedRun, JudgeInfo, TraceCriterionResult
from ..scoring import CriterionScore, GateResult, RateInterval, Scorecard, ValidationRecord
from ._assets import CSP, SCRIPT, STYLE
from ._transcript import esc, render_trace_content

__all__ = ["render_report", "trace_anchor", "write_report"]

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]+")


def trace_anchor(trace_id: str) -> str:
    """The HTML id of a trace's section: ``trace-<slug>-<hash>`` (unique and safe for any id)."""
    slug = _UNSAFE_ID.sub("-", trace_id).strip("-")[:48] or "x"
    return f"trace-{slug}-{content_hash(trace_id, length=8)}"


def _pct(x: float) -> str:
    return f"{100.0 * x:.1f}%"


def _badge(kind: str, text: str | None = None) -> str:
    return f'<span class="badge {esc(kind)}">{esc(text or kind)}</span>'


def _trace_links(ids: Sequence[str], limit: int = 20) -> str:
    links = "".join(f'<a href="#{trace_anchor(t)}">{esc(t)}</a>' for t in ids[:limit])
    more = f'<span class="muted">+{len(ids) - limit} more</span>' if len(ids) > limit else ""
    return links + more


def _judge_label(j: JudgeInfo) -> str:
    bits = [j.runtime]
    if j.model:
        bits.append(j.model)
    if j.temperature is not None:
        bits.append(f"T={j.temperature:g}")
    if j.prompt_version:
        bits.append(f"prompt {j.prompt_version}")
    return " · ".join(bits)


def _gate(gate: GateResult) -> str:
    state = "pass" if gate.passed else "fail"
    items = []
    if gate.blocking_failures:
        items.append(f"<li>Failed: {', '.join(_crit_link(c) for c in gate.blocking_failures)}</li>")
    if gate.uncertain_blocking:
        gating = "gating" if gate.fail_on_uncertain else "not gating"
        links = ", ".join(_crit_link(c) for c in gate.uncertain_blocking)
        items.append(f"<li>With uncertain verdicts ({gating}): {links}</li>")
    if gate.unscored_blocking:
        gating = "gating" if gate.fail_on_unscored else "not gating"
        links = ", ".join(_crit_link(c) for c in gate.unscored_blocking)
        items.append(f"<li>Not fully scored ({gating}): {links}</li>")
    sev = ", ".join(gate.blocking_severities) or "none"
    return (
        f'<section id="gate" class="gate gate-{state}" data-passed="{str(gate.passed).lower()}">'
        f'<div class="verdict-word">GATE {state.upper()}</div>'
        f'<div class="gate-reason">{esc(gate.reason)}</div>'
        f'<div class="muted">Blocking severities: {esc(sev)}; fail on uncertain: '
        f"{'yes' if gate.fail_on_uncertain else 'no'}; fail on unscored: "
        f"{'yes' if gate.fail_on_unscored else 'no'}</div>"
        f"{'<ul>' + ''.join(items) + '</ul>' if items else ''}</section>"
    )


def _crit_link(cid: str) -> str:
    return f'<a href="#criterion-{esc(cid)}"><code>{esc(cid)}</code></a>'


def _criterion_row(s: CriterionScore) -> str:
    if s.pass_rate is None or s.pass_rate_interval is None:
        rate = '<span class="muted">no decided verdicts</span>'
    else:
        ci = s.pass_rate_interval
        rate = (
            f'{_pct(s.pass_rate)} <span class="muted">[{_pct(ci.low)}, {_pct(ci.high)}]</span>'
            f'<div class="muted">{s.n_pass}/{s.n_decided} decided</div>'
        )
    counts = (
        f"{_badge('pass', str(s.n_pass))} {_badge('fail', str(s.n_fail))} "
        f"{_badge('uncertain', str(s.n_uncertain))} {_badge('unscored', str(s.n_unscored))}"
    )
    failing = _trace_links(s.failing_trace_ids) or '<span class="muted">none</span>'
    extra = ""
    if s.uncertain_trace_ids:
        extra += f'<div class="muted">uncertain:</div>{_trace_links(s.uncertain_trace_ids)}'
    if s.unscored_trace_ids:
        extra += f'<div class="muted">unscored:</div>{_trace_links(s.unscored_trace_ids)}'
    return (
        f'<tr class="criterion-row outcome-{s.outcome}" id="criterion-{esc(s.criterion_id)}" '
        f'data-criterion-id="{esc(s.criterion_id)}" data-outcome="{s.outcome}">'
        f"<td><code>{esc(s.criterion_id)}</code><div>{esc(s.title)}</div></td>"
        f"<td>{_badge('sev-' + s.severity, s.severity)}</td>"
        f"<td>{_badge('kind', s.kind)}</td>"
        f"<td>{_badge(s.outcome)}</td>"
        f'<td class="num">{rate}</td>'
        f'<td class="num">{counts}</td>'
        f'<td class="trace-links">{failing}{extra}</td></tr>'
    )


def _criteria_table(scores: Sequence[CriterionScore]) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "Criterion",
            "Severity",
            "Kind",
            "Outcome",
            "Pass rate [95% CI]",
            "Pass / fail / unc. / unsc.",
            "Failing traces",
        )
    )
    rows = "".join(_criterion_row(s) for s in scores)
    return f'<table id="criteria"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _verdict(judged: JudgedRun, row: TraceCriterionResult | None, cid: str) -> str:
    crit = judged.matrix.by_id(cid)
    head = f'<div class="verdict-head"><code>{esc(cid)}</code>{_badge("sev-" + crit.severity, crit.severity)}'
    if row is None:
        return (
            f'<div class="verdict result-missing" data-criterion-id="{esc(cid)}" data-result="missing">'
            f'{head}{_badge("missing", "no result")}</div><div class="muted">{esc(crit.title)}</div>'
            '<p class="reason muted">No result row for this criterion on this trace.</p></div>'
        )
    judge = f'<div class="muted">{esc(_judge_label(row.judge))}</div>' if row.judge else ""
    if row.verdict is None:
        return (
            f'<div class="verdict result-unscored" data-criterion-id="{esc(cid)}" data-result="unscored">'
            f'{head}{_badge("unscored")}</div><div class="muted">{esc(crit.title)}</div>'
            f'<p class="reason"><strong>Unscored:</strong> {esc(row.unscored_reason)}</p>{judge}</div>'
        )
    v = row.verdict
    blocked = (
        f'<p class="blocked"><strong>Blocked by:</strong> {esc(v.blocked_by)}</p>'
        if v.result == "uncertain" and v.blocked_by
        else ""
    )
    return (
        f'<div class="verdict result-{v.result}" data-criterion-id="{esc(cid)}" data-result="{v.result}">'
        f'{head}{_badge(v.result)}<span class="muted">confidence {v.confidence:.2f}</span></div>'
        f'<div class="muted">{esc(crit.title)}</div>'
        f'<p class="critique">{esc(v.critique)}</p>{blocked}{judge}</div>'
    )


def _traces(judged: JudgedRun, scorecard: Scorecard) -> str:
    by_id = {t.id: t for t in judged.traces}
    rows = {(r.trace_id, r.criterion_id): r for r in judged.results}
    sections = []
    for summary in scorecard.traces:
        trace = by_id.get(summary.trace_id)
        if trace is None:
            raise UsageError(
                f"scorecard lists trace {summary.trace_id!r} that the judged run lacks; "
                "build the scorecard from this same JudgedRun"
            )
        verdicts = "".join(_verdict(judged, rows.get((trace.id, c.id)), c.id) for c in judged.matrix.criteria)
        counts = (
            f"{_badge('fail', f'{len(summary.failed)} failed')} "
            f"{_badge('uncertain', f'{len(summary.uncertain)} uncertain')} "
            f"{_badge('unscored', f'{len(summary.unscored)} unscored')} "
            f"{_badge('pass', f'{len(summary.passed)} passed')}"
        )
        name = f'<span class="muted">{esc(trace.name)}</span>' if trace.name else ""
        sections.append(
            f'<section class="trace outcome-{summary.outcome}" id="{trace_anchor(trace.id)}" '
            f'data-trace-id="{esc(trace.id)}" data-outcome="{summary.outcome}">'
            f'<div class="trace-head"><h3>{esc(trace.id)}</h3>{name}{_badge(summary.outcome)}{counts}</div>'
            f'<div class="trace-body"><div class="trace-content">{render_trace_content(trace)}</div>'
            f'<div class="verdicts">{verdicts}</div></div></section>'
        )
    return "".join(sections)


def _header(scorecard: Scorecard) -> str:
    run = scorecard.run
    judges = "<br>".join(esc(_judge_label(j)) for j in run.judges) or "none recorded"
    prompts = esc(", ".join(run.prompt_versions)) or "none recorded"
    t = scorecard.totals
    cards = [
        (t.traces, "traces"),
        (t.criteria, "criteria"),
        (t.criteria_fail, "criteria failing"),
        (t.traces_failing, "traces failing"),
        (t.verdicts_uncertain, "uncertain verdicts"),
        (t.unscored, "unscored rows"),
    ]
    card_html = "".join(
        f'<div class="card"><div class="num">{n}</div><div class="lbl">{lbl}</div></div>' for n, lbl in cards
    )
    return (
        f"<header><h1>Scorecard · {esc(scorecard.subject)}</h1>"
        f'<div class="meta"><dl><dt>Run</dt><dd><code>{esc(run.run_dir)}</code></dd>'
        f"<dt>Unit axis</dt><dd>{esc(run.unit_axis)} ({run.unit_count} units, {run.row_count} results)</dd>"
        f"<dt>Judges</dt><dd>{judges}</dd><dt>Prompt versions</dt><dd>{prompts}</dd></dl></div></header>"
        f'<div class="cards" id="totals">{card_html}</div>'
    )


_CAL_STYLE = (
    "<style>.calibration-item{background:var(--card);border:1px solid var(--line);border-radius:8px;"
    "padding:12px 16px;margin:12px 0}.calibration-grid{display:flex;flex-wrap:wrap;gap:16px;"
    "align-items:flex-start}.calibration-grid table{width:auto}.cal-chart{max-width:100%}</style>"
)
_WARN_OPEN = '<ul class="warnings">'
_CAL_BADGE = {"certified": "pass", "refused": "fail", "unvalidated": "uncertain"}


def _rate_text(r: RateInterval) -> str:
    if r.value is None:
        return '<span class="muted">n/a</span>'
    ci = (
        f' <span class="muted">[{_pct(r.low)}, {_pct(r.high)}]</span>'
        if r.low is not None and r.high is not None
        else ""
    )
    return f"{_pct(r.value)}{ci}"


def _cal_chart(v: ValidationRecord) -> str:
    """A small inline SVG: TPR, TNR, raw and corrected rate on one 0-100% axis, with 95% intervals."""
    width, left, right, row_h = 420, 110, 20, 26
    rows: list[tuple[str, float | None, float | None, float | None]] = [
        ("TPR", v.tpr.value, v.tpr.low, v.tpr.high),
        ("TNR", v.tnr.value, v.tnr.low, v.tnr.high),
        ("raw pass rate", v.p_obs, None, None),
        ("corrected rate", v.theta.value, v.theta.low, v.theta.high),
    ]
    span = width - left - right

    def x(value: float) -> float:
        return left + span * min(1.0, max(0.0, value))

    height = row_h * len(rows) + 24
    parts = [
        f'<svg class="cal-chart" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>Judge rates and corrected success rate with 95% intervals</title>'
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{x(tick):.1f}" y1="4" x2="{x(tick):.1f}" y2="{height - 18}" stroke="#d1d9e0"/>'
            f'<text x="{x(tick):.1f}" y="{height - 4}" font-size="10" text-anchor="middle" fill="#59636e">'
            f"{tick:.0%}</text>"
        )
    parts.append(
        f'<line x1="{x(v.threshold):.1f}" y1="4" x2="{x(v.threshold):.1f}" y2="{height - 18}" '
        'stroke="#9a6700" stroke-dasharray="3,3"><title>certification threshold</title></line>'
    )
    for i, (name, value, low, high) in enumerate(rows):
        y = 16 + i * row_h
        parts.append(f'<text x="4" y="{y + 4}" font-size="11" fill="#1f2328">{esc(name)}</text>')
        if low is not None and high is not None:
            parts.append(
                f'<line class="ci" x1="{x(low):.1f}" y1="{y}" x2="{x(high):.1f}" y2="{y}" stroke="#0969da" '
                f'stroke-width="3"/>'
            )
        if value is not None:
            fill = "#cf222e" if name == "raw pass rate" else "#0969da"
            parts.append(f'<circle cx="{x(value):.1f}" cy="{y}" r="4" fill="{fill}"/>')
        else:
            parts.append(f'<text x="{left}" y="{y + 4}" font-size="10" fill="#59636e">not available</text>')
    parts.append("</svg>")
    return "".join(parts)


def _calibration_item(v: ValidationRecord) -> str:
    confusion = (
        '<table class="confusion"><thead><tr><th></th><th>judge pass</th><th>judge fail</th></tr></thead><tbody>'
        f'<tr><th>human pass</th><td class="num tp">{v.tp}</td><td class="num fn">{v.fn}</td></tr>'
        f'<tr><th>human fail</th><td class="num fp">{v.fp}</td><td class="num tn">{v.tn}</td></tr>'
        "</tbody></table>"
    )
    abstain = "n/a" if v.abstain_rate is None else _pct(v.abstain_rate)
    raw = "n/a" if v.p_obs is None else _pct(v.p_obs)
    theta = (
        _rate_text(v.theta) if v.theta_status == "ok" else f'<span class="muted">{esc(v.theta_status)}</span>'
    )
    if (
        v.theta_status == "ok"
        and v.status != "certified"
        and v.theta.value is not None
        and v.theta.low is not None
        and v.theta.high is not None
    ):
        # Not certified: the interval leads and the point estimate never stands alone.
        theta = (
            f"[{_pct(v.theta.low)}, {_pct(v.theta.high)}] "
            f'<span class="muted">(point {_pct(v.theta.value)}; judge {esc(v.status)})</span>'
        )
    rates = (
        '<table class="rates"><tbody>'
        f"<tr><th>TPR [95% CI]</th><td>{_rate_text(v.tpr)}</td></tr>"
        f"<tr><th>TNR [95% CI]</th><td>{_rate_text(v.tnr)}</td></tr>"
        f"<tr><th>Judge abstain rate</th><td>{abstain}</td></tr>"
        f'<tr><th>Raw pass rate (judge)</th><td>{raw} <span class="muted">of {v.judged_n} decided</span></td></tr>'
        f'<tr><th>Corrected success rate [95% CI]</th><td class="theta">{theta}</td></tr>'
        "</tbody></table>"
    )
    judges = esc(", ".join(v.judge_models)) or "none recorded"
    prompts = esc(", ".join(v.prompt_versions)) or "none recorded"
    warnings = "".join(f"<li>{esc(w)}</li>" for w in v.warnings)
    kappas = "; ".join(
        f"{esc(a.annotator_a)} vs {esc(a.annotator_b)}: "
        + (f"κ = {a.kappa:.2f}" if a.kappa is not None else "κ undefined")
        + f" on {a.n} shared"
        for a in v.annotator_agreement
    )
    agreement = (
        f'<div class="muted annotator-agreement">annotator agreement: {kappas}</div>' if kappas else ""
    )
    if v.reruns is not None:
        kappa = f"κ = {v.fleiss_kappa:.2f}" if v.fleiss_kappa is not None else "κ undefined (nothing varied)"
        flip = "n/a" if v.flip_rate is None else _pct(v.flip_rate)
        agreement += (
            f'<div class="muted self-consistency">self-consistency over {v.reruns} reruns: flip rate {flip}, '
            f"Fleiss {kappa}</div>"
        )
    return (
        f'<section class="calibration-item" id="calibration-{esc(v.criterion_id)}" '
        f'data-criterion-id="{esc(v.criterion_id)}" data-status="{esc(v.status)}">'
        f"<h3>{_crit_link(v.criterion_id)} {_badge(_CAL_BADGE.get(v.status, 'unscored'), v.status.upper())}</h3>"
        f'<p class="status-reason">{esc(v.status_reason)}</p>'
        f'<div class="muted">split {esc(v.split)} (seed {v.split_seed}), {v.labels_used} labels used '
        f"({v.labels_pass} pass, {v.labels_fail} fail decided); threshold {v.threshold:g}; "
        f"judge {judges}; prompt {prompts}</div>"
        f"{agreement}"
        f'<div class="calibration-grid">{confusion}{rates}{_cal_chart(v)}</div>'
        f"{_WARN_OPEN + warnings + '</ul>' if warnings else ''}</section>"
    )


def _calibration(scorecard: Scorecard) -> str:
    if not scorecard.validation:
        return ""
    items = "".join(_calibration_item(v) for v in scorecard.validation)
    return (
        f'<h2>Calibration</h2>{_CAL_STYLE}<div id="calibration"><p class="muted">Each judge measured against '
        "human labels: confusion matrix over decided verdicts, TPR/TNR with Wilson 95% intervals, and the "
        "judge's raw pass rate corrected for its errors, with an interval that carries the uncertainty of "
        f"both the labels and the judged set.</p>{items}</div>"
    )


_CONTROLS = (
    '<div id="controls" hidden>'
    '<button type="button" data-filter="all">All</button>'
    '<button type="button" data-filter="fail">Failing</button>'
    '<button type="button" data-filter="uncertain">Uncertain</button>'
    '<button type="button" data-filter="pass">Passing</button>'
    '<button type="button" data-expand="open">Expand all</button>'
    '<button type="button" data-expand="close">Collapse all</button></div>'
)


def render_report(judged: JudgedRun, scorecard: Scorecard) -> str:
    """The whole report page for ``scorecard`` and the traces and verdicts of ``judged``."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>Helix scorecard · {esc(scorecard.subject)}</title>"
        f"<style>{STYLE}</style></head>\n<body><main>"
        f"{_header(scorecard)}{_gate(scorecard.gate)}"
        f"<h2>Criteria</h2>{_CONTROLS}{_criteria_table(scorecard.criteria)}"
        f"{_calibration(scorecard)}"
        f'<h2>Traces</h2><div id="traces">{_traces(judged, scorecard)}</div>'
        f"<footer>Generated by Helix {esc(__version__)} · scorecard format v{scorecard.version}</footer>"
        f"</main><script>{SCRIPT}</script></body></html>\n"
    )


def write_report(path: str | Path, html: str) -> Path:
    """Write the page atomically (temp file, fsync, rename); returns the path written."""
    return write_atomic(path, html)
