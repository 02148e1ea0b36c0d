"""Span formats -> canonical traces: grouping spans by trace across lines, the tree, and derivations.

Every span reader (OTLP, OpenInference, OpenAI Agents SDK) turns one source span into a :class:`Span`
holding an :class:`Event`-shaped dict, feeds it to a :class:`SpanGrouper`, and calls
:func:`build_trace` on each group the grouper releases.

Grouping rule (streaming): spans are buffered per trace id. A trace is released when it is *complete
enough*: its root (a span without a parent, or the source's trace record) has arrived and ``window``
further spans of other traces have been read since its last span. Traces never seen with a root wait
until the end of the file. Memory is bounded by the open traces of the last ``window`` spans plus
rootless ones, not by the file. The cost: a span arriving more than ``window`` spans after its trace
was released makes a second trace with the same id (the intake report lists it as a duplicate id).
"""

from __future__ import annotations

import functools
from collections import OrderedDict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from pydantic import ValidationError

from ._depth import bounded, same_items, too_deep
from ._history import HistoryMemo
from ._json import validation_summary
from ._model import Trace
from ._report import IntakeReport
from ._span_content import CANONICAL_ROLES, MessagesOf, make_message

__all__ = [
    "DEFAULT_WINDOW_SPANS",
    "Span",
    "SpanGroup",
    "SpanGrouper",
    "SpanTraces",
    "build_trace",
]

DEFAULT_WINDOW_SPANS = 5_000


# -- grouping ----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Span:
    """One source span: ids, where it was read, and its :class:`Event`-shaped dict."""

    trace_id: str
    span_id: str
    parent_id: str | None
    event: dict[str, Any]
    line: int | None = None
    record: int | None = None
    session_id: str | None = None
    scores: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class SpanGroup:
    """The spans of one trace (in arrival order) and what the source said about the trace itself."""

    trace_id: str
    spans: list[Span] = field(default_factory=list)
    line: int | None = None
    record: int | None = None
    has_root: bool = False
    last_seen: int = 0
    name: str | None = None
    session_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    input: Any = None
    output: Any = None


class SpanGrouper:
    """Buffers spans per trace id and releases whole traces under the rule in the module docstring."""

    def __init__(self, window: int | None = None) -> None:
        self.window = window if window is not None else DEFAULT_WINDOW_SPANS
        self._open: OrderedDict[str, SpanGroup] = OrderedDict()  # least recently extended first
        self._parked: dict[str, SpanGroup] = {}  # stale but rootless: wait for the end of the file
        self._tick = 0
        self._memo = HistoryMemo()

    def history(self, trace_id: str) -> MessagesOf:
        """Message decoding for a span of ``trace_id`` that reuses what its earlier spans decoded."""
        return functools.partial(self._memo.messages, trace_id)

    def group(self, trace_id: str, line: int | None = None, record: int | None = None) -> SpanGroup:
        """The open group of ``trace_id`` (created on first sight), marked as just extended."""
        found = self._open.get(trace_id)
        if found is None:
            found = self._parked.pop(trace_id, None)
            if found is None:
                found = SpanGroup(trace_id=trace_id, line=line, record=record)
            self._open[trace_id] = found
        else:
            self._open.move_to_end(trace_id)
        found.last_seen = self._tick
        return found

    def add(self, span: Span) -> SpanGroup:
        """Buffer one span; call :meth:`ready` afterwards for the traces it made releasable."""
        self._tick += 1
        found = self.group(span.trace_id, span.line, span.record)
        found.spans.append(span)
        if span.parent_id is None:
            found.has_root = True
        return found

    def ready(self) -> Iterator[SpanGroup]:
        """The groups that are complete enough to release now (rootless stale ones are parked)."""
        limit = self._tick - self.window
        while self._open:
            trace_id, oldest = next(iter(self._open.items()))
            if oldest.last_seen > limit:
                return
            del self._open[trace_id]
            self._memo.forget(trace_id)
            if oldest.has_root:
                yield oldest
            else:
                self._parked[trace_id] = oldest

    def drain(self) -> Iterator[SpanGroup]:
        """Every group still buffered, in order of first sight (at the end of the file)."""
        rest = list(self._open.values()) + list(self._parked.values())
        self._open.clear()
        self._parked.clear()
        self._memo = HistoryMemo()
        rest.sort(key=lambda g: (g.line or 0, g.record or 0))
        yield from rest


# -- building a trace --------------------------------------------------------------------------------------


def _last_text(messages: Any, role: str) -> str | None:
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == role and message.get("content"):
            text: str = message["content"]
            return text
    return None


def _side(value: Any, role: str) -> Any:
    """A root span's input or output as the trace's: the last text of ``role`` if messages, else raw."""
    if isinstance(value, list) and value and isinstance(value[0], dict) and "role" in value[0]:
        return _last_text(value, role)
    return value


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(
        a["role"] == b["role"] and a["content"] == b["content"] and a["tool_call_id"] == b["tool_call_id"]
    )


def _canonical(message: Any) -> bool:
    if not isinstance(message, dict):
        return False
    get = message.get
    role = get("role")
    if not isinstance(role, str) or role not in CANONICAL_ROLES:
        return False
    content = get("content")
    if content is not None and not isinstance(content, str):
        return False
    call_id = get("tool_call_id")
    if call_id is not None and not isinstance(call_id, str):
        return False
    calls = get("tool_calls")
    if not isinstance(calls, list):
        return False
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            return False
        call_id = call.get("id")
        if call_id is not None and not isinstance(call_id, str):
            return False
    return True


class _Messages:
    """Each event's input or output when it is a list of canonical messages (what readers put on LLM
    events), else ``[]``; computed once per event while a trace is built. Successive LLM inputs usually
    extend one another (a resent history, often the same dicts: see :class:`HistoryMemo`), so a list
    that starts with the last one found canonical has only its tail checked (and clipped, if too deeply
    nested to write: see :func:`bounded`)."""

    __slots__ = ("_cache", "_last")

    def __init__(self) -> None:
        self._cache: dict[tuple[int, str], list[dict[str, Any]]] = {}
        self._last: dict[str, list[dict[str, Any]]] = {"input": [], "output": []}

    def of(self, event: dict[str, Any], side: str) -> list[dict[str, Any]]:
        key = (id(event), side)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._canonical_list(event.get(side), side)
        return found

    def _canonical_list(self, value: Any, side: str) -> list[dict[str, Any]]:
        if not isinstance(value, list):
            return []
        last = self._last[side]
        start = len(last) if len(value) >= len(last) and same_items(value[: len(last)], last) else 0
        for index in range(start, len(value)):
            if not _canonical(value[index]):
                return []
        if start < len(value):
            bounded(value[start:])  # each message once (events share them), so the trace stays writable
        if value:
            self._last[side] = value
        return value


def _transcript(events: list[dict[str, Any]], cache: _Messages | None = None) -> list[dict[str, Any]] | None:
    """A linear transcript: each LLM call's new input messages, then its first output choice."""
    msgs = (cache or _Messages()).of
    transcript: list[dict[str, Any]] = []
    for event in events:
        if event["kind"] != "llm":
            continue
        inputs = msgs(event, "input")
        n = len(transcript)
        if (
            n
            and len(inputs) >= n
            and (same_items(inputs[:n], transcript) or all(map(_same, transcript, inputs)))
        ):
            new = inputs[n:]
        elif n:
            last_assistant = max((i for i, m in enumerate(inputs) if m["role"] == "assistant"), default=-1)
            new = [m for m in inputs[last_assistant + 1 :] if m["role"] != "system"]
        else:
            new = list(inputs)
        transcript.extend(new)
        outputs = msgs(event, "output")
        if outputs:
            transcript.append(outputs[0])
    return transcript or None


def _link_tools(
    events: list[dict[str, Any]], transcript: list[dict[str, Any]] | None, cache: _Messages | None = None
) -> None:
    """Tool events <-> the assistant tool calls that asked for them: by call id, else by name and order."""
    msgs = (cache or _Messages()).of
    by_id: dict[str, dict[str, Any]] = {}
    by_name: dict[str, deque[dict[str, Any]]] = {}
    claimed: set[int] = set()
    for event in events:
        if event["kind"] == "llm":
            for message in msgs(event, "output"):
                for call in message.get("tool_calls") or []:
                    if call.get("id"):
                        by_id.setdefault(call["id"], call)
                    by_name.setdefault(call["name"], deque()).append(call)
        elif event["kind"] == "tool":
            call_id = event.get("tool_call_id")
            call = by_id.get(call_id) if call_id else None
            if call is None and not call_id:
                queue = by_name.get(event["name"])
                while queue and id(queue[0]) in claimed:
                    queue.popleft()
                call = queue.popleft() if queue else None
            if call is None:
                continue
            claimed.add(id(call))
            if not call_id and call.get("id"):
                event["tool_call_id"] = call["id"]
            if event.get("input") is None:
                args = call["arguments"]
                event["input"] = dict(args) if isinstance(args, dict) else args
    if transcript is None:
        return
    answered = {m["tool_call_id"] for m in transcript if m["role"] == "tool" and m["tool_call_id"]}
    results = {
        e["tool_call_id"]: e
        for e in events
        if e["kind"] == "tool" and e.get("tool_call_id") and e["tool_call_id"] not in answered
    }
    if not results:
        return
    position = 0
    while position < len(transcript):
        message = transcript[position]
        position += 1
        for call in message.get("tool_calls") or []:
            event = results.pop(call.get("id") or "", None)  # type: ignore[arg-type]
            if event is not None:
                output = event.get("output")
                text = output if isinstance(output, str) or output is None else orjson.dumps(output).decode()
                transcript.insert(
                    position, make_message("tool", text, tool_call_id=call["id"], name=call["name"])
                )
                position += 1


def _sort_key(indexed: tuple[int, dict[str, Any]]) -> tuple[int, datetime, int]:
    index, event = indexed
    start = event.get("start")
    if isinstance(start, datetime):
        return (0, start, index)
    return (1, datetime.min.replace(tzinfo=UTC), index)


def build_trace(group: SpanGroup, source_format: str) -> tuple[dict[str, Any], int]:
    """A :class:`Trace`-shaped dict from one span group, and how many spans were orphans.

    An orphan (a span whose parent is not in the group) becomes a root and is counted in
    ``metadata["orphan_spans"]``. Events are ordered by start time, then arrival; a duplicated span id
    gets a ``#n`` suffix so event ids stay unique.
    """
    seen: dict[str, int] = {}
    events: list[dict[str, Any]] = []
    for span in group.spans:
        count = seen.get(span.span_id, 0) + 1
        seen[span.span_id] = count
        event = span.event
        event["id"] = span.span_id if count == 1 else f"{span.span_id}#{count}"
        event["parent_id"] = span.parent_id
        events.append(event)
    orphans = 0
    for event in events:
        parent = event["parent_id"]
        if parent is not None and (parent not in seen or parent == event["id"]):
            event["parent_id"] = None
            event.setdefault("attributes", {})["helix.orphan_parent_id"] = parent
            orphans += 1
    events = [e for _, e in sorted(enumerate(events), key=_sort_key)]
    cache = _Messages()
    _keep_writable(group, events, cache)
    transcript = _transcript(events, cache)
    _link_tools(events, transcript, cache)
    roots = [e for e in events if e["parent_id"] is None]
    root = next((e for e in roots if e["kind"] == "agent"), roots[0] if roots else None)
    trace_input, trace_output = group.input, group.output
    if trace_input is None and root is not None:
        trace_input = _side(root.get("input"), "user")
    if trace_output is None and root is not None:
        trace_output = _side(root.get("output"), "assistant")
    llms = [e for e in events if e["kind"] == "llm"]
    if trace_input is None and llms:
        trace_input = _last_text(llms[0].get("input"), "user")
    if trace_output is None and llms:
        trace_output = _last_text(llms[-1].get("output"), "assistant")
    starts = [e["start"] for e in events if isinstance(e.get("start"), datetime)]
    ends = [e["end"] for e in events if isinstance(e.get("end"), datetime)]
    status = "unset"
    if root is not None:
        status = root.get("status", "unset")
        if status == "unset" and any(e.get("status") == "error" for e in roots):
            status = "error"
    metadata: dict[str, Any] = {**group.metadata, "source_format": source_format}
    if orphans:
        metadata["orphan_spans"] = orphans
    session = group.session_id or next((s.session_id for s in group.spans if s.session_id), None)
    name = group.name or (root.get("name") if root is not None else None)
    scores = [score for span in group.spans for score in span.scores]
    fields = {
        "id": group.trace_id,
        "session_id": session,
        "name": name,
        "input": trace_input,
        "output": trace_output,
        "start": min(starts) if starts else None,
        "end": max(ends) if ends else None,
        "status": status,
        "metadata": metadata,
        "events": events,
        "messages": transcript,
        "scores": scores,
    }
    return fields, orphans


def _keep_writable(group: SpanGroup, events: list[dict[str, Any]], cache: _Messages) -> None:
    """Clip what is nested too deeply to write (see :func:`bounded`), in place, before anything derived
    from the events serializes part of them.

    Message lists are checked message by message (:class:`_Messages`); the rest is probed in one pass
    over a skeleton without them, so a history shared by many events is not serialized again for each.
    """
    skeleton_events: list[dict[str, Any]] = []
    for event in events:
        has_inputs, has_outputs = bool(cache.of(event, "input")), bool(cache.of(event, "output"))
        if has_inputs or has_outputs:
            event = dict(event)
            if has_inputs:
                event["input"] = None
            if has_outputs:
                event["output"] = None
        skeleton_events.append(event)
    trace_level = {"metadata": group.metadata, "input": group.input, "output": group.output}
    if too_deep({**trace_level, "events": skeleton_events}):
        bounded({**trace_level, "events": events})


class SpanTraces:
    """Turns released span groups into validated traces for one read, counting orphans and failures."""

    def __init__(self, report: IntakeReport, source_format: str) -> None:
        self.report = report
        self.source_format = source_format
        self.orphans = 0
        self.orphan_traces = 0

    def emit(self, groups: Iterator[SpanGroup]) -> Iterator[tuple[int | None, int | None, Trace]]:
        """``(line, record, trace)`` for each group; a group that cannot be a trace is skipped and counted."""
        for group in groups:
            fields, orphans = build_trace(group, self.source_format)
            try:
                trace = Trace.model_validate(fields)
            except ValidationError as exc:
                self.report.skip(
                    "invalid-record",
                    f"trace {group.trace_id!r} ({len(group.spans)} spans) cannot be built: "
                    f"{validation_summary(exc)}",
                    line=group.line,
                    record=group.record,
                )
                continue
            if orphans:
                self.orphans += orphans
                self.orphan_traces += 1
            yield group.line, group.record, trace

    def finish(self) -> None:
        """Note the orphans (spans whose parent is not in the file, kept as roots) in the report."""
        if self.orphans:
            self.report.notes.append(
                f"{self.orphans} span(s) in {self.orphan_traces} trace(s) name a parent span that is not in "
                "the file; they were kept as roots (metadata.orphan_spans counts them per trace)"
            )
