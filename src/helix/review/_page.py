"""The review page: one trace per screen, label by keyboard, judge verdict hidden until revealed.

One renderer serves both modes: ``server`` (labels go to the local review server and its SQLite
store) and ``offline`` (one self-contained file; labels autosave to the browser's localStorage and
export as a labels JSONL that ``helix review import`` reads back).

Untrusted content: transcripts are rendered by :mod:`helix.report`'s escaping renderer; everything
else (ids, critiques, criteria text) travels in one ``<script type="application/json">`` block,
escaped by :func:`json_for_script`, and the page script writes it with ``textContent`` only. A
Content-Security-Policy lets only the page's own script and style run (by hash) and loads nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from .._util import write_atomic
from ..report import STYLE, esc, render_trace_content
from ._items import ReviewItem, ReviewSet, load_review_set, order_queue
from ._labels import HumanLabel
from ._page_assets import REVIEW_SCRIPT, REVIEW_STYLE

__all__ = [
    "PageMode",
    "json_for_script",
    "render_review_page",
    "render_trace_panes",
    "review_csp",
    "verdict_data",
    "write_review_html",
]

PageMode = Literal["server", "offline"]

_PAGE_STYLE = STYLE + "\n" + REVIEW_STYLE
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _hash_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def review_csp(mode: PageMode) -> str:
    """The page's Content-Security-Policy: our script and style by hash, no inline handlers, no loads.

    ``server`` mode may talk to its own origin (``connect-src 'self'``); ``offline`` to nothing.
    """
    connect = "'self'" if mode == "server" else "'none'"
    return (
        "default-src 'none'; "
        f"script-src {_hash_source(REVIEW_SCRIPT)}; "
        f"style-src {_hash_source(_PAGE_STYLE)}; "
        f"connect-src {connect}; img-src 'none'; font-src 'none'; object-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )


def json_for_script(value: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: ``< > &`` and U+2028/9 escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def verdict_data(item: ReviewItem) -> dict[str, Any]:
    """What the judge said about an item, as the page shows it on reveal."""
    return {
        "judge_result": item.judge_result,
        "critique": item.critique,
        "confidence": item.confidence,
        "blocked_by": item.blocked_by,
        "judge": item.judge,
    }


def _item_data(item: ReviewItem, trace_index: int, *, hidden: bool) -> dict[str, Any]:
    base: dict[str, Any] = {
        "trace_id": item.trace_id,
        "criterion_id": item.criterion_id,
        "trace_index": trace_index,
    }
    if hidden:
        return base | {"hidden": True}
    return base | verdict_data(item)


def render_trace_panes(review: ReviewSet) -> str:
    """One hidden ``section.trace-pane#pane-<i>`` per trace (escaped transcript HTML)."""
    return "".join(
        f'<section class="trace-pane" id="pane-{i}" hidden><h3>{esc(t.id)}</h3>{render_trace_content(t)}</section>'
        for i, t in enumerate(review.traces)
    )


def render_review_page(
    review: ReviewSet,
    *,
    mode: PageMode,
    annotator: str,
    labels: Iterable[HumanLabel] = (),
    seed: int = 0,
    panes_html: str | None = None,
    blind: bool = False,
    queue: Sequence[ReviewItem] | None = None,
    design: str | None = "by-verdict",
) -> str:
    """The review page's HTML.

    ``labels`` are this annotator's current labels (shown, and used for the disagreement-first
    queue order). ``panes_html`` lets a server render the transcripts once and reuse them.
    ``blind`` leaves the judge's verdicts and critiques out of the page: the server sends an item's
    verdict when it is revealed or labelled (items this annotator labelled already carry theirs); an
    offline page has none at all. ``queue`` is the item order (default: :func:`order_queue`);
    ``design`` is what labels made on an offline page record (its queue is chosen by verdict).
    """
    current = [x for x in labels if x.annotator == annotator]
    index = {t.id: i for i, t in enumerate(review.traces)}
    ordered = list(queue) if queue is not None else order_queue(review.items, current, seed=seed)
    seen = {(x.trace_id, x.criterion_id) for x in current}
    data = {
        "mode": mode,
        "blind": blind,
        "design": design,
        "run_id": review.run_id,
        "annotator": annotator,
        "criteria": {
            c.id: {
                "title": c.title,
                "severity": c.severity,
                "question": c.question or (f"code check {c.check.name}" if c.check else ""),
                "pass_definition": c.pass_definition or "",
                "fail_definition": c.fail_definition or "",
            }
            for c in review.criteria
        },
        "items": [
            _item_data(
                item,
                index[item.trace_id],
                hidden=blind and not (mode == "server" and (item.trace_id, item.criterion_id) in seen),
            )
            for item in ordered
        ],
        "labels": [x.model_dump(mode="json") for x in current] if mode == "server" else [],
    }
    verdict_options = "".join(
        f'<option value="{v}">{label}</option>'
        for v, label in (
            ("", "any verdict"),
            ("pass", "judge: pass"),
            ("fail", "judge: fail"),
            ("uncertain", "judge: uncertain"),
            ("unscored", "judge: unscored"),
            ("none", "no verdict"),
        )
    )
    csp = review_csp(mode)  # the server adds frame-ancestors in its header (ignored in a <meta>)
    panes = panes_html if panes_html is not None else render_trace_panes(review)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Helix review · {esc(review.run_dir.name)}</title>
<style>{_PAGE_STYLE}</style></head>
<body data-mode="{mode}">
<div class="review-bar">
  <span id="progress" data-labeled="0">Labeled 0 of {len(review.items)}</span>
  <label>annotator <input id="annotator" size="12" autocomplete="off"></label>
  <label>criterion <select id="filter-criterion"><option value="">all criteria</option></select></label>
  <label>verdict <select id="filter-verdict">{verdict_options}</select></label>
  <label><input type="checkbox" id="filter-disagree"> judge–human disagreements</label>
  <label><input type="checkbox" id="filter-unlabeled"> unlabeled only</label>
  <button id="export" type="button">Export labels (JSONL)</button>
  <span id="save-status" data-pending="0"></span>
</div>
<main>
<noscript><p class="error-text">The review page needs JavaScript to record labels.</p></noscript>
<p id="empty" class="empty" hidden>No item matches the filters.</p>
<section id="item" class="item-card" hidden>
  <div class="trace-head"><span id="item-pos" class="muted"></span>
    <span class="muted">trace</span> <code id="item-trace"></code>
    <span class="badge kind" id="item-severity"></span> <span id="item-disagree" class="error-text"></span></div>
  <div class="item-grid">
    <div id="trace-panes">{panes}</div>
    <div>
      <h2 id="item-criterion"></h2>
      <p id="crit-question" class="criterion-text"></p>
      <dl class="defs"><dt>Pass when</dt><dd id="crit-pass"></dd><dt>Fail when</dt><dd id="crit-fail"></dd></dl>
      <div>Your label: <strong id="human-label" data-label="">not labeled</strong></div>
      <div class="label-buttons">
        <button id="btn-pass" type="button">Pass <kbd>p</kbd></button>
        <button id="btn-fail" type="button">Fail <kbd>f</kbd></button>
        <button id="btn-defer" type="button">Defer <kbd>d</kbd></button>
        <button id="btn-under" type="button">Underdetermined <kbd>x</kbd></button>
      </div>
      <label for="note" class="muted">Note (saved with the next label; <kbd>n</kbd> to type, <kbd>Esc</kbd> to leave)</label>
      <textarea id="note"></textarea>
      <div class="nav label-buttons">
        <button id="prev" type="button">Previous <kbd>k</kbd></button>
        <button id="next" type="button">Next <kbd>j</kbd></button>
        <button id="undo" type="button">Undo <kbd>u</kbd></button>
      </div>
      <button id="reveal" type="button" aria-expanded="false">Reveal judge verdict (v)</button>
      <div id="judge-panel" hidden>
        <div>Judge: <span id="judge-result" class="badge"></span> <span id="judge-meta" class="muted"></span></div>
        <div id="judge-critique"></div>
      </div>
      <p class="keys">Keys: <kbd>p</kbd> pass, <kbd>f</kbd> fail, <kbd>d</kbd> defer, <kbd>x</kbd> underdetermined,
        <kbd>j</kbd>/<kbd>k</kbd> next/previous, <kbd>u</kbd> undo, <kbd>v</kbd> reveal the judge's verdict.</p>
    </div>
  </div>
</section>
</main>
<script type="application/json" id="review-data">{json_for_script(data)}</script>
<script>{REVIEW_SCRIPT}</script>
</body></html>
"""


def write_review_html(
    run_dir: str | Path,
    out: str | Path,
    *,
    annotator: str = "annotator",
    criterion_ids: Sequence[str] | None = None,
    seed: int = 0,
    blind: bool = False,
) -> Path:
    """Write the self-contained offline review page of a run; returns its path.

    ``blind`` leaves every verdict and critique out of the file (labelling without ever seeing them).
    """
    review = load_review_set(run_dir, criterion_ids=criterion_ids)
    page = render_review_page(review, mode="offline", annotator=annotator, seed=seed, blind=blind)
    return write_atomic(out, page)
