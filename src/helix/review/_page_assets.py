"""Static CSS and JS of the review page. Neither ever contains run content.

The script reads the page's data from ``<script type="application/json" id="review-data">`` with
``JSON.parse`` and writes every piece of it with ``textContent``; it never uses ``innerHTML``,
``eval`` or a string as code. Trace transcripts are rendered (escaped) on the server side.
"""

from __future__ import annotations

__all__ = ["REVIEW_SCRIPT", "REVIEW_STYLE"]

REVIEW_STYLE = """
.review-bar { position: sticky; top: 0; z-index: 2; background: var(--card); border-bottom: 1px solid var(--line);
  padding: 10px 20px; display: flex; flex-wrap: wrap; gap: 12px; align-items: center; }
.review-bar label { font-size: 0.85rem; color: var(--muted); }
.review-bar select, .review-bar input { font: inherit; font-size: 0.85rem; }
#progress { font-weight: 600; }
#save-status { font-size: 0.8rem; color: var(--muted); }
#save-status.error, #error { color: var(--fail); font-weight: 600; }
.item-card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 16px 0; }
.item-grid { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 16px; }
@media (max-width: 900px) { .item-grid { grid-template-columns: 1fr; } }
.criterion-text { white-space: pre-wrap; margin: 4px 0; }
.defs dt { font-weight: 600; font-size: 0.85rem; } .defs dd { margin: 0 0 6px; white-space: pre-wrap; font-size: 0.9rem; }
.label-buttons { display: flex; flex-wrap: wrap; gap: 8px; margin: 10px 0; }
.label-buttons button, .nav button, #reveal, #export { font: inherit; font-size: 0.9rem; padding: 5px 12px;
  border-radius: 6px; border: 1px solid var(--line); background: var(--card); cursor: pointer; }
#btn-pass { border-color: var(--pass); color: var(--pass); }
#btn-fail { border-color: var(--fail); color: var(--fail); }
#human-label[data-label="pass"] { color: var(--pass); } #human-label[data-label="fail"] { color: var(--fail); }
#note { width: 100%; min-height: 60px; font: inherit; font-size: 0.9rem; }
#judge-panel { border: 1px dashed var(--line); border-radius: 8px; padding: 8px 10px; margin-top: 10px; }
#judge-critique { white-space: pre-wrap; word-break: break-word; font-size: 0.9rem; }
.keys { font-size: 0.8rem; color: var(--muted); }
kbd { font-family: var(--mono); border: 1px solid var(--line); border-radius: 4px; padding: 0 4px; background: var(--bg); }
.empty { padding: 40px; text-align: center; color: var(--muted); }
""".strip()

REVIEW_SCRIPT = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("review-data").textContent);
  var SEP = "\u0000";
  var $ = function (id) { return document.getElementById(id); };
  var items = data.items;
  var annotator = data.annotator;
  var labels = {};      // key -> current label object
  var history = {};     // offline: key -> labels made for the item, oldest first
  var undoStack = [];   // keys labeled in this session, newest last
  var view = [];        // indices into items
  var pos = 0;
  var revealed = false;
  var pending = 0;
  var chain = Promise.resolve();
  var storePrefix = "helix-review:v1:" + data.run_id + ":";

  function keyOf(item) { return item.trace_id + SEP + item.criterion_id; }
  function human(item) { var l = labels[keyOf(item)]; return l ? l.label : null; }
  function decided(x) { return x === "pass" || x === "fail"; }
  function disagrees(item) {
    if (item.hidden) { return false; }
    var h = human(item);
    return decided(h) && decided(item.judge_result) && h !== item.judge_result;
  }
  function setText(id, text) { $(id).textContent = text == null ? "" : String(text); }

  // -- persistence ----------------------------------------------------------------------------
  function storageKey(key) { return storePrefix + annotator + ":" + key; }
  function readHistory(key) {
    // Always re-read before a change: another tab of this page may have labeled the item meanwhile.
    var raw = null;
    try { raw = window.localStorage.getItem(storageKey(key)); } catch (e) { raw = null; }
    if (!raw) { return []; }
    try {
      var list = JSON.parse(raw);
      return Array.isArray(list) ? list : [];
    } catch (e) { return []; /* a corrupt entry is ignored, never executed */ }
  }
  function loadOffline() {
    labels = {}; history = {};
    items.forEach(function (item) {
      var key = keyOf(item), list = readHistory(key);
      if (list.length) { history[key] = list; labels[key] = list[list.length - 1]; }
    });
  }
  function saveOffline(key) {
    var list = history[key] || [];
    try {
      if (list.length) { window.localStorage.setItem(storageKey(key), JSON.stringify(list)); }
      else { window.localStorage.removeItem(storageKey(key)); }
      status("saved in this browser", false);
    } catch (e) { status("could not save to localStorage: " + e, true); }
  }
  function status(text, isError) {
    var el = $("save-status");
    el.textContent = text;
    el.className = isError ? "error" : "";
    el.setAttribute("data-pending", String(pending));
  }
  function send(path, makeBody, onDone) {
    pending += 1; status("saving…", false);
    chain = chain.then(function () {
      return fetch(path, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-Helix-Review": "1" },
        body: JSON.stringify(makeBody())
      }).then(function (r) {
        if (!r.ok) { return r.text().then(function (t) { throw new Error(r.status + " " + t); }); }
        return r.json();
      }).then(function (payload) {
        pending -= 1; onDone(payload); status(pending ? "saving…" : "saved", false);
      }).catch(function (e) {
        pending -= 1; status("NOT SAVED: " + e.message, true);
      });
    });
  }

  // Blind review: a hidden item's verdict comes from the server on reveal, or once it is labelled.
  function fetchVerdict(item, then) {
    if (!item.hidden || data.mode !== "server") { if (then) { then(); } return; }
    var q = "api/verdict?trace_id=" + encodeURIComponent(item.trace_id) +
      "&criterion_id=" + encodeURIComponent(item.criterion_id);
    fetch(q, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) { return r.text().then(function (t) { throw new Error(r.status + " " + t); }); }
      return r.json();
    }).then(function (v) {
      ["judge_result", "critique", "confidence", "blocked_by", "judge"].forEach(function (f) { item[f] = v[f]; });
      delete item.hidden;
      if (then) { then(); } else { render(); }
    }).catch(function (e) { status("could not load the verdict: " + e.message, true); });
  }
  function toggleReveal() {
    var item = current();
    if (!item) { return; }
    if (revealed) { revealed = false; render(); return; }
    if (item.hidden && data.mode !== "server") {
      status("blind page: the judge's verdicts are not in this file", false);
      return;
    }
    fetchVerdict(item, function () { revealed = true; render(); });
  }

  // -- actions --------------------------------------------------------------------------------
  function current() { return view.length ? items[view[pos]] : null; }
  function applyLabel(value) {
    var item = current();
    if (!item) { return; }
    var key = keyOf(item);
    var note = $("note").value;
    var made = {
      version: 2, trace_id: item.trace_id, criterion_id: item.criterion_id, label: value,
      note: note, annotator: annotator, created_at: new Date().toISOString(), design: data.design || null
    };
    labels[key] = made;
    var entry = { key: key, made: made, stored: null };
    undoStack.push(entry);
    if (data.mode === "server") {
      send("api/labels", function () { return made; }, function (stored) {
        if (stored && stored.label) { entry.stored = stored; labels[key] = stored; render(); }
        fetchVerdict(item, null);
      });
    } else {
      history[key] = readHistory(key).concat([made]);
      saveOffline(key);
    }
    if (pos < view.length - 1) { pos += 1; revealed = false; }
    render();
  }
  function undo() {
    var entry = undoStack.pop();
    if (entry === undefined) { status("nothing to undo", false); return; }
    var key = entry.key;
    var at = -1;
    view.forEach(function (idx, p) { if (keyOf(items[idx]) === key) { at = p; } });
    if (data.mode === "server") {
      delete labels[key];
      // Built when sent (after the label's own request finished), so it names the stored row.
      send("api/undo", function () {
        return {
          trace_id: entry.made.trace_id, criterion_id: entry.made.criterion_id, annotator: annotator,
          created_at: entry.stored ? entry.stored.created_at : null
        };
      }, function (now) { if (now && now.label) { labels[key] = now; } else { delete labels[key]; } render(); });
    } else {
      // Remove only this tab's own label: another tab's later label on the item survives.
      var list = readHistory(key).filter(function (l) {
        return !(l.created_at === entry.made.created_at && l.label === entry.made.label && l.note === entry.made.note);
      });
      history[key] = list;
      if (list.length) { labels[key] = list[list.length - 1]; } else { delete labels[key]; }
      saveOffline(key);
    }
    if (at >= 0) { pos = at; revealed = false; }
    render();
  }
  function move(delta) {
    if (!view.length) { return; }
    pos = Math.max(0, Math.min(view.length - 1, pos + delta));
    revealed = false;
    render();
  }
  function firstUnlabeled() {
    for (var p = 0; p < view.length; p += 1) { if (!labels[keyOf(items[view[p]])]) { return p; } }
    return 0;
  }
  function applyFilters(keepItem) {
    var c = $("filter-criterion").value, v = $("filter-verdict").value;
    var dis = $("filter-disagree").checked, unl = $("filter-unlabeled").checked;
    var keep = keepItem ? current() : null;
    view = [];
    items.forEach(function (item, idx) {
      if (c && item.criterion_id !== c) { return; }
      if (v && item.judge_result !== v) { return; }
      if (dis && !disagrees(item)) { return; }
      if (unl && labels[keyOf(item)]) { return; }
      view.push(idx);
    });
    pos = 0;
    if (keep) { var at = view.indexOf(items.indexOf(keep)); if (at >= 0) { pos = at; } }
  }

  // -- rendering ------------------------------------------------------------------------------
  function render() {
    var total = items.length, done = 0;
    items.forEach(function (item) { if (labels[keyOf(item)]) { done += 1; } });
    var prog = $("progress");
    prog.textContent = "Labeled " + done + " of " + total;
    prog.setAttribute("data-labeled", String(done));
    var panes = document.querySelectorAll("section.trace-pane");
    var item = current();
    $("empty").hidden = !!item;
    $("item").hidden = !item;
    panes.forEach(function (p) { p.hidden = true; });
    if (!item) { setText("item-pos", "0 of 0"); return; }
    var pane = $("pane-" + item.trace_index);
    if (pane) { pane.hidden = false; }
    var crit = data.criteria[item.criterion_id] || {};
    setText("item-pos", "Item " + (pos + 1) + " of " + view.length + (view.length < total ? " (filtered)" : ""));
    setText("item-trace", item.trace_id);
    setText("item-criterion", item.criterion_id + (crit.title ? " — " + crit.title : ""));
    setText("item-severity", crit.severity || "");
    setText("crit-question", crit.question || "");
    setText("crit-pass", crit.pass_definition || "");
    setText("crit-fail", crit.fail_definition || "");
    var card = $("item");
    card.setAttribute("data-trace-id", item.trace_id);
    card.setAttribute("data-criterion-id", item.criterion_id);
    var h = labels[keyOf(item)];
    var hl = $("human-label");
    hl.textContent = h ? h.label : "not labeled";
    hl.setAttribute("data-label", h ? h.label : "");
    if (document.activeElement !== $("note")) { $("note").value = h ? (h.note || "") : ""; }
    $("judge-panel").hidden = !revealed;
    $("reveal").textContent = revealed ? "Hide judge verdict (v)" :
      (data.blind && data.mode !== "server" ? "Blind page: no judge verdicts" : "Reveal judge verdict (v)");
    $("reveal").setAttribute("aria-expanded", String(revealed));
    var jr = $("judge-result");
    var shown = item.hidden ? "hidden" : item.judge_result;
    jr.textContent = shown === "none" ? "no verdict" : shown;
    jr.className = "badge " + (shown === "none" || shown === "hidden" ? "missing" : shown);
    setText("judge-critique", item.critique || "");
    setText("judge-meta", [
      item.confidence == null ? "" : "confidence " + item.confidence,
      item.blocked_by ? "blocked by: " + item.blocked_by : "",
      item.judge || ""
    ].filter(Boolean).join(" · "));
    setText("item-disagree", disagrees(item) ? "judge and human disagree" : "");
  }

  // -- wiring ---------------------------------------------------------------------------------
  var sel = $("filter-criterion");
  Object.keys(data.criteria).forEach(function (cid) {
    var o = document.createElement("option"); o.value = cid; o.textContent = cid; sel.appendChild(o);
  });
  if (data.mode === "server") {
    (data.labels || []).forEach(function (l) { labels[l.trace_id + SEP + l.criterion_id] = l; });
    $("annotator").value = annotator; $("annotator").readOnly = true;
    $("export").hidden = true;
  } else {
    var saved = null;
    try { saved = window.localStorage.getItem(storePrefix + "annotator"); } catch (e) { saved = null; }
    if (saved) { annotator = saved; }
    $("annotator").value = annotator;
    loadOffline();
    $("annotator").addEventListener("change", function () {
      var name = $("annotator").value.trim();
      if (!name) { $("annotator").value = annotator; return; }
      annotator = name;
      try { window.localStorage.setItem(storePrefix + "annotator", name); } catch (e) { /* ignore */ }
      undoStack = []; loadOffline(); applyFilters(true); render();
    });
    window.addEventListener("storage", function (ev) {
      if (ev.key === null || ev.key.indexOf(storePrefix + annotator + ":") === 0) { loadOffline(); render(); }
    });
  }
  function exportLabels() {
    var lines = [];
    items.forEach(function (item) {
      (history[keyOf(item)] || []).forEach(function (l) { lines.push(JSON.stringify(l)); });
    });
    var blob = new Blob([lines.join("\n") + (lines.length ? "\n" : "")], { type: "application/x-ndjson" });
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "labels-" + annotator.replace(/[^A-Za-z0-9_.-]+/g, "_") + ".jsonl";
    document.body.appendChild(a); a.click(); a.remove();
    status("exported " + lines.length + " label(s)", false);
  }
  $("btn-pass").addEventListener("click", function () { applyLabel("pass"); });
  $("btn-fail").addEventListener("click", function () { applyLabel("fail"); });
  $("btn-defer").addEventListener("click", function () { applyLabel("defer"); });
  $("btn-under").addEventListener("click", function () { applyLabel("underdetermined"); });
  $("undo").addEventListener("click", undo);
  $("prev").addEventListener("click", function () { move(-1); });
  $("next").addEventListener("click", function () { move(1); });
  $("reveal").addEventListener("click", toggleReveal);
  if (data.blind) {
    $("filter-verdict").disabled = true;
    $("filter-verdict").title = "blind review: verdicts are sent when revealed";
    if (data.mode !== "server") { $("reveal").disabled = true; $("reveal").title = "blind page: no verdicts in this file"; }
  }
  $("export").addEventListener("click", exportLabels);
  ["filter-criterion", "filter-verdict", "filter-disagree", "filter-unlabeled"].forEach(function (id) {
    $(id).addEventListener("change", function () { applyFilters(true); revealed = false; render(); });
  });
  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT")) {
      if (ev.key === "Escape") { t.blur(); }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var actions = {
      p: function () { applyLabel("pass"); }, f: function () { applyLabel("fail"); },
      d: function () { applyLabel("defer"); }, x: function () { applyLabel("underdetermined"); },
      j: function () { move(1); }, k: function () { move(-1); }, u: undo,
      v: toggleReveal,
      n: function () { $("note").focus(); }
    };
    var act = actions[ev.key];
    if (act) { ev.preventDefault(); act(); }
  });
  applyFilters(false);
  pos = firstUnlabeled();
  status(data.mode === "server" ? "connected" : "labels autosave in this browser", false);
  render();
  document.body.setAttribute("data-ready", "true");
})();
""".strip()
