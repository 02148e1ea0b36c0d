"""Static CSS and JS of the scorecard report. Neither ever contains run content."""

from __future__ import annotations

import base64
import hashlib

__all__ = ["CSP", "SCRIPT", "STYLE"]

STYLE = """
:root {
  --fg: #1f2328; --muted: #59636e; --bg: #f6f8fa; --card: #ffffff; --line: #d1d9e0;
  --pass: #1a7f37; --pass-bg: #dafbe1; --fail: #cf222e; --fail-bg: #ffebe9;
  --unc: #9a6700; --unc-bg: #fff8c5; --uns: #59636e; --uns-bg: #eaeef2;
  --accent: #0969da; --user: #ddf4ff; --assistant: #ffffff; --tool: #f6f8fa;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, monospace;
}
* { box-sizing: border-box; }
html { font-size: 15px; }
body {
  margin: 0; color: var(--fg); background: var(--bg); line-height: 1.5;
  font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
}
main { max-width: 1280px; margin: 0 auto; padding: 24px 20px 64px; }
h1 { font-size: 1.6rem; margin: 0 0 4px; }
h2 { font-size: 1.2rem; margin: 32px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 0; font-family: var(--mono); word-break: break-all; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre { font-family: var(--mono); font-size: 0.85rem; }
pre { margin: 6px 0 0; padding: 8px 10px; background: var(--bg); border: 1px solid var(--line);
  border-radius: 6px; white-space: pre-wrap; word-break: break-word; max-height: 420px; overflow: auto; }
.meta { color: var(--muted); font-size: 0.9rem; }
.meta dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0 0; }
.meta dt { font-weight: 600; } .meta dd { margin: 0; word-break: break-all; }
.gate { margin: 20px 0; padding: 16px 20px; border-radius: 8px; border: 2px solid; }
.gate-pass { border-color: var(--pass); background: var(--pass-bg); }
.gate-fail { border-color: var(--fail); background: var(--fail-bg); }
.gate .verdict-word { font-size: 1.4rem; font-weight: 700; letter-spacing: 0.04em; }
.gate-pass .verdict-word { color: var(--pass); } .gate-fail .verdict-word { color: var(--fail); }
.gate ul { margin: 6px 0 0; padding-left: 20px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 12px 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; min-width: 130px; }
.card .num { font-size: 1.3rem; font-weight: 700; } .card .lbl { color: var(--muted); font-size: 0.8rem; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line);
  border-radius: 8px; overflow: hidden; font-size: 0.9rem; }
th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--bg); font-weight: 600; white-space: nowrap; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 0.78rem; font-weight: 600;
  border: 1px solid transparent; white-space: nowrap; }
.badge.pass { color: var(--pass); background: var(--pass-bg); border-color: var(--pass); }
.badge.fail { color: var(--fail); background: var(--fail-bg); border-color: var(--fail); }
.badge.uncertain { color: var(--unc); background: var(--unc-bg); border-color: var(--unc); }
.badge.unscored, .badge.missing { color: var(--uns); background: var(--uns-bg); border-color: var(--uns); }
.badge.sev-critical { color: #fff; background: var(--fail); }
.badge.sev-major { color: var(--fail); background: var(--fail-bg); }
.badge.sev-minor { color: var(--muted); background: var(--uns-bg); }
.badge.kind { color: var(--muted); background: var(--bg); border-color: var(--line); }
.trace-links a { font-family: var(--mono); font-size: 0.8rem; margin-right: 6px; word-break: break-all; }
#controls { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0; }
#controls button { font: inherit; font-size: 0.85rem; padding: 4px 10px; border-radius: 6px;
  border: 1px solid var(--line); background: var(--card); cursor: pointer; }
#controls button[aria-pressed="true"] { background: var(--accent); color: #fff; border-color: var(--accent); }
.trace { background: var(--card); border: 1px solid var(--line); border-radius: 8px; margin: 16px 0; padding: 14px 16px; }
.trace.outcome-fail { border-left: 5px solid var(--fail); }
.trace.outcome-pass { border-left: 5px solid var(--pass); }
.trace.outcome-uncertain { border-left: 5px solid var(--unc); }
.trace-head { display: flex; flex-wrap: wrap; align-items: center; gap: 10px; margin-bottom: 10px; }
.trace-body { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 16px; }
@media (max-width: 900px) { .trace-body { grid-template-columns: 1fr; } }
details > summary { cursor: pointer; color: var(--muted); font-size: 0.88rem; }
.chat { display: flex; flex-direction: column; gap: 8px; margin-top: 8px; }
.msg { border: 1px solid var(--line); border-radius: 10px; padding: 8px 12px; max-width: 92%; }
.msg .role { font-size: 0.72rem; font-weight: 700; text-transform: uppercase; color: var(--muted); letter-spacing: 0.05em; }
.msg .text { white-space: pre-wrap; word-break: break-word; }
.msg.user { background: var(--user); align-self: flex-end; }
.msg.assistant { background: var(--assistant); align-self: flex-start; }
.msg.tool { background: var(--tool); align-self: flex-start; margin-left: 24px; }
.msg.system, .msg.developer { background: var(--bg); align-self: stretch; max-width: 100%; }
.msg.tool.error, .step.error { border-color: var(--fail); background: var(--fail-bg); }
.tool-call { margin-top: 6px; border-left: 3px solid var(--accent); padding-left: 8px; }
.tool-call summary { color: var(--fg); font-family: var(--mono); }
.error-text { color: var(--fail); font-weight: 600; }
.step { border: 1px solid var(--line); border-radius: 8px; padding: 6px 10px; }
.verdicts { display: flex; flex-direction: column; gap: 8px; }
.verdict { border: 1px solid var(--line); border-radius: 8px; padding: 8px 10px; }
.verdict.result-fail { border-left: 4px solid var(--fail); }
.verdict.result-pass { border-left: 4px solid var(--pass); }
.verdict.result-uncertain { border-left: 4px solid var(--unc); }
.verdict.result-unscored, .verdict.result-missing { border-left: 4px solid var(--uns); }
.verdict-head { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.verdict .critique { white-space: pre-wrap; word-break: break-word; margin: 4px 0 0; font-size: 0.9rem; }
.verdict .blocked, .verdict .reason { font-size: 0.85rem; margin: 4px 0 0; }
.muted { color: var(--muted); font-size: 0.85rem; }
footer { margin-top: 40px; color: var(--muted); font-size: 0.8rem; }
""".strip()

# Progressive enhancement only: the page reads fully without it. It reads element classes and
# data attributes the renderer wrote, and never evaluates anything from the page as code.
SCRIPT = """
(function () {
  "use strict";
  var controls = document.getElementById("controls");
  if (!controls) { return; }
  controls.hidden = false;
  var rows = document.querySelectorAll("tr.criterion-row");
  var traces = document.querySelectorAll("section.trace");
  function show(outcome) {
    rows.forEach(function (row) {
      row.hidden = outcome !== "all" && row.getAttribute("data-outcome") !== outcome;
    });
    traces.forEach(function (sec) {
      sec.hidden = outcome !== "all" && sec.getAttribute("data-outcome") !== outcome;
    });
    controls.querySelectorAll("button[data-filter]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-filter") === outcome));
    });
  }
  controls.addEventListener("click", function (ev) {
    var b = ev.target.closest("button");
    if (!b) { return; }
    if (b.hasAttribute("data-filter")) { show(b.getAttribute("data-filter")); }
    if (b.hasAttribute("data-expand")) {
      var open = b.getAttribute("data-expand") === "open";
      document.querySelectorAll("section.trace details").forEach(function (d) { d.open = open; });
    }
  });
  show("all");
})();
""".strip()


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# Defence in depth: no network, no plugins, and only our own script (by hash) may run, so even an
# escaping bug could not execute an injected script or event-handler attribute.
CSP = (
    "default-src 'none'; "
    f"script-src '{_sha256(SCRIPT)}'; "
    "style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'"
)
