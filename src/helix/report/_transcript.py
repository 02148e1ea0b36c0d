"""A trace rendered as HTML: chat bubbles when it has a transcript, else its event steps.

Everything that comes from the trace is untrusted and passes through :func:`esc` (``html.escape``
with ``quote=True``); nothing from it is ever placed in a ``<script>``, a URL or a style.
Metadata keys starting with ``_`` hold hidden ground truth and are dropped at every depth.
"""

from __future__ import annotations

import html
import json
from typing import Any

from ..traces import Event, Message, ToolCall, Trace

__all__ = ["esc", "pretty", "render_trace_content", "visible_metadata"]


def esc(value: object) -> str:
    """Escape any value for HTML text and attribute values."""
    return html.escape(str(value), quote=True)


def pretty(value: Any) -> str:
    """Pretty-print a JSON-like value (a string that holds JSON is parsed first); plain text stays."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if not isinstance(parsed, dict | list):
            return value
        value = parsed
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def visible_metadata(value: Any) -> Any:
    """``value`` without any dict key that starts with ``_`` (hidden ground truth), at any depth."""
    if isinstance(value, dict):
        return {k: visible_metadata(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, list | tuple):
        return [visible_metadata(v) for v in value]
    return value


def _text_block(text: str | None) -> str:
    return f'<div class="text">{esc(text)}</div>' if text else ""


def _parts(parts: list[Any] | None) -> str:
    if not parts:
        return ""
    out = []
    for part in parts:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(_text_block(part["text"]))
        else:
            out.append(f"<pre>{esc(pretty(part))}</pre>")
    return "".join(out)


def _tool_call(call: ToolCall) -> str:
    call_id = f' <span class="muted">{esc(call.id)}</span>' if call.id else ""
    return (
        '<details class="tool-call" open><summary>'
        f'<span class="tool-name">{esc(call.name)}</span>(…){call_id}</summary>'
        f'<pre class="tool-args">{esc(pretty(call.arguments))}</pre></details>'
    )


def _tool_error(message: Message, errors: dict[str, str]) -> str | None:
    """The error a tool result reports: from its tool event, else an ``error`` field in its JSON."""
    if message.tool_call_id and message.tool_call_id in errors:
        return errors[message.tool_call_id]
    if message.content:
        try:
            parsed = json.loads(message.content)
        except ValueError:
            return None
        if isinstance(parsed, dict) and parsed.get("error"):
            return str(parsed["error"])
    return None


def _message(message: Message, errors: dict[str, str]) -> str:
    role = message.role
    body = _text_block(message.content) + _parts(message.parts)
    label = role if not message.name else f"{role} · {message.name}"
    if role == "tool":
        error = _tool_error(message, errors)
        cls = "msg tool error" if error is not None else "msg tool"
        err = f'<div class="error-text">error: {esc(error)}</div>' if error is not None else ""
        ref = f' <span class="muted">{esc(message.tool_call_id)}</span>' if message.tool_call_id else ""
        return (
            f'<details class="{cls}" open><summary class="role">tool result{ref}</summary>'
            f"{err}<pre>{esc(pretty(message.content or ''))}</pre>{_parts(message.parts)}</details>"
        )
    calls = "".join(_tool_call(c) for c in message.tool_calls)
    if role in ("system", "developer"):
        return f'<details class="msg {role}"><summary class="role">{esc(label)}</summary>{body}</details>'
    return f'<div class="msg {role}"><div class="role">{esc(label)}</div>{body}{calls}</div>'


def _event(event: Event) -> str:
    error = event.status == "error" or event.error is not None
    cls = "step error" if error else "step"
    bits = [f'<span class="badge kind">{esc(event.kind)}</span> <code>{esc(event.name)}</code>']
    if event.model:
        bits.append(f' <span class="muted">{esc(event.model)}</span>')
    inner = []
    if error:
        inner.append(f'<div class="error-text">error: {esc(event.error or "status error")}</div>')
    if event.input is not None:
        inner.append(f'<div class="muted">input</div><pre>{esc(pretty(event.input))}</pre>')
    if event.output is not None:
        inner.append(f'<div class="muted">output</div><pre>{esc(pretty(event.output))}</pre>')
    return f'<details class="{cls}" open><summary>{"".join(bits)}</summary>{"".join(inner)}</details>'


def render_trace_content(trace: Trace) -> str:
    """The transcript of ``trace`` (chat bubbles or event steps) plus its visible metadata."""
    errors = {
        e.tool_call_id: (e.error or "tool reported an error")
        for e in trace.events
        if e.kind == "tool" and e.tool_call_id and (e.status == "error" or e.error)
    }
    if trace.messages:
        items = "".join(_message(m, errors) for m in trace.messages)
        n = f"{len(trace.messages)} messages"
    elif trace.events:
        items = "".join(_event(e) for e in trace.events)
        n = f"{len(trace.events)} events"
    else:
        items = '<p class="muted">This trace has no messages or events.</p>'
        n = "empty"
    parts = [
        f'<details class="transcript" open><summary>Transcript ({n})</summary><div class="chat">{items}</div></details>'
    ]
    if not trace.messages and (trace.input is not None or trace.output is not None):
        io = ""
        if trace.input is not None:
            io += f'<div class="muted">input</div><pre>{esc(pretty(trace.input))}</pre>'
        if trace.output is not None:
            io += f'<div class="muted">output</div><pre>{esc(pretty(trace.output))}</pre>'
        parts.append(f'<details class="trace-io"><summary>Trace input and output</summary>{io}</details>')
    meta = visible_metadata(trace.metadata)
    if meta:
        parts.append(
            f'<details class="trace-metadata"><summary>Metadata</summary><pre>{esc(pretty(meta))}</pre></details>'
        )
    return "".join(parts)
