"""LangSmith runs -> canonical traces.

Reads ``read_run(..., load_child_runs=True)`` trees (nested ``child_runs``; a root with its children is
a whole trace and streams out at once) and flat run lists (``list_runs``, the v2 query API, exports)
grouped by ``trace_id``, the root of ``dotted_order`` or the parent chain. Thread ids become the
session id (LangSmith's own ``session_id`` is the project); ``feedback_stats`` become scores.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._dialects import chat_messages, llm_side
from ._format import FormatSpec, Source, TraceLocated
from ._json import clipped_retry, json_values, page_items
from ._report import IntakeReport
from ._span_content import MessagesOf, parse_time, plain_messages
from ._spans import Span, SpanGroup, SpanGrouper, SpanTraces
from ._values import BadRecord, decode_json, kind_of, number, shown, text_or_none, usage_from

__all__ = ["LANGSMITH"]

_KINDS = {"llm": "llm", "tool": "tool", "retriever": "retrieval", "embedding": "retrieval"}
_RUN_SIGNALS = ("dotted_order", "parent_run_id", "child_runs", "parent_run_ids", "trace_id")
_UNWRAP = ("input", "output", "messages", "question", "answer")
_RUN_USAGE = {
    "input_tokens": ("prompt_tokens",),
    "output_tokens": ("completion_tokens",),
    "total_tokens": ("total_tokens",),
}
_META_USAGE = {
    "input_tokens": ("input_tokens", "prompt_tokens"),
    "output_tokens": ("output_tokens", "completion_tokens"),
    "total_tokens": ("total_tokens",),
}
_SESSION_KEYS = ("thread_id", "session_id", "conversation_id")


def is_run(value: Any) -> bool:
    """A LangSmith run record: ``run_type`` plus one of the tree fields."""
    return isinstance(value, dict) and "run_type" in value and any(k in value for k in _RUN_SIGNALS)


def is_langsmith_value(value: Any) -> bool:
    """Whether a parsed record (or document) holds LangSmith runs."""
    if isinstance(value, list) and value:
        return is_run(value[0])
    if isinstance(value, dict) and isinstance(value.get("runs"), list) and value["runs"]:
        return is_run(value["runs"][0])
    return is_run(value)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _unwrap(value: Any) -> Any:
    value = decode_json(value)
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        if key in _UNWRAP:
            return value[key]
    return value


def _parent(run: dict[str, Any]) -> str | None:
    parent = text_or_none(run.get("parent_run_id"))
    if parent is None and isinstance(run.get("parent_run_ids"), list) and run["parent_run_ids"]:
        parent = text_or_none(run["parent_run_ids"][-1])
    return parent or None


def _usage(run: dict[str, Any], outputs: dict[str, Any], metadata: dict[str, Any]) -> dict[str, int] | None:
    usage = usage_from(run, _RUN_USAGE)
    detail_sources = [_dict(run.get("prompt_token_details")), _dict(run.get("completion_token_details"))]
    if usage is None:
        for raw in (
            outputs.get("usage_metadata"),
            metadata.get("usage_metadata"),
            _dict(outputs.get("llm_output")).get("token_usage"),
        ):
            if isinstance(raw, dict):
                usage = usage_from(raw, _META_USAGE)
                detail_sources = [
                    _dict(raw.get("input_token_details")),
                    _dict(raw.get("output_token_details")),
                ]
                if usage is not None:
                    break
    if usage is None:
        return None
    cache = usage_from(detail_sources[0], {"read": ("cache_read",), "write": ("cache_creation",)}) or {}
    reasoning = usage_from(detail_sources[1], {"reasoning": ("reasoning",)}) or {}
    if "read" in cache:
        usage["cache_read_input_tokens"] = cache["read"]
    if "write" in cache:
        usage["cache_write_input_tokens"] = cache["write"]
    if "reasoning" in reasoning:
        usage["reasoning_tokens"] = reasoning["reasoning"]
    return usage


def _tool_output(outputs: Any) -> tuple[Any, str | None]:
    """A tool run's result and, when it is a serialised ToolMessage, the tool call id it answers."""
    value = _unwrap(outputs)
    if isinstance(value, dict):
        body = _dict(value.get("kwargs")) or value
        if "tool_call_id" in body:
            return body.get("content"), text_or_none(body.get("tool_call_id"))
    return value, None


def _event(run: dict[str, Any], *, root: bool, messages: MessagesOf = plain_messages) -> dict[str, Any]:
    """An :class:`Event`-shaped dict (without ids) for one run (``messages``: the trace's memo)."""
    run_type = str(run.get("run_type") or "").lower()
    kind = _KINDS.get(run_type, "agent" if root and run_type == "chain" else "other")
    extra = _dict(run.get("extra"))
    metadata = _dict(extra.get("metadata")) | _dict(run.get("metadata"))
    invocation = _dict(extra.get("invocation_params"))
    inputs, outputs = decode_json(run.get("inputs")), decode_json(run.get("outputs"))
    data_in: Any = _unwrap(inputs)
    data_out: Any = _unwrap(outputs)
    tool_call_id = None
    attributes: dict[str, Any] = {}
    if kind == "llm":
        prompts = _dict(inputs).get("prompts")
        first_prompt = prompts[0] if isinstance(prompts, list) and prompts else None
        messages_in = chat_messages(inputs, None, messages)  # the same whatever its default role
        if messages_in is not None:
            data_in = messages_in
        else:
            source = inputs if first_prompt is None else first_prompt
            data_in = llm_side(source, "user", attributes, "raw_input")
        data_out = llm_side(outputs, "assistant", attributes, "raw_output")
    elif kind == "tool":
        data_out, tool_call_id = _tool_output(outputs)
    error = text_or_none(run.get("error"))
    status_text = str(run.get("status") or "").lower()
    status = "error" if error or status_text == "error" else "ok" if status_text == "success" else "unset"
    model = (
        text_or_none(metadata.get("ls_model_name"))
        or text_or_none(invocation.get("model"))
        or text_or_none(invocation.get("model_name"))
        or text_or_none(_dict(_dict(outputs).get("llm_output")).get("model_name"))
    )
    attributes.update(
        {
            key: run[key]
            for key in ("run_type", "tags", "dotted_order", "reference_example_id", "first_token_time")
            if run.get(key) is not None
        }
    )
    if metadata:
        attributes["metadata"] = {k: v for k, v in metadata.items() if k != "usage_metadata"}
    if invocation:
        attributes["invocation_params"] = invocation
    return {
        "kind": kind,
        "name": text_or_none(run.get("name")) or run_type or "run",
        "input": data_in,
        "output": data_out,
        "start": parse_time(run.get("start_time")),
        "end": parse_time(run.get("end_time")),
        "status": status,
        "error": (error or "status error") if status == "error" else None,
        "model": model if kind == "llm" else None,
        "provider": text_or_none(metadata.get("ls_provider")) if kind == "llm" else None,
        "usage": _usage(run, _dict(outputs), metadata) if kind == "llm" else None,
        "cost": number(run.get("total_cost")),
        "tool_call_id": tool_call_id,
        "attributes": attributes,
    }


def _scores(run: dict[str, Any], *, root: bool) -> list[dict[str, Any]]:
    """``feedback_stats`` (averages per key) and inline ``feedback`` items as Score dicts."""
    scores: list[dict[str, Any]] = []
    where = "" if root else f" (run {text_or_none(run.get('name'))!r})"
    for key, raw_stats in _dict(run.get("feedback_stats")).items():
        stats = _dict(raw_stats)
        value: Any = number(stats.get("avg"))
        values = stats.get("values")
        if value is None and isinstance(values, dict) and values:
            value = str(max(values.items(), key=lambda kv: number(kv[1]) or 0.0)[0])
        if value is not None:
            n = stats.get("n")
            scores.append(
                {"name": str(key), "value": value, "source": "langsmith", "comment": f"n={n}{where}"}
            )
    feedback = run.get("feedback")
    for raw_item in feedback if isinstance(feedback, list) else []:
        item = _dict(raw_item)
        name = text_or_none(item.get("key"))
        value = number(item.get("score"))
        if value is None:
            value = item.get("value") if isinstance(item.get("value"), bool | str) else None
        if name and value is not None:
            scores.append(
                {
                    "name": name,
                    "value": value,
                    "source": "langsmith",
                    "comment": text_or_none(item.get("comment")),
                }
            )
    return scores


def _flatten(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The run and its ``child_runs`` (depth first, iteratively: deep trees do not hit recursion limits)."""
    runs: list[dict[str, Any]] = []
    stack: list[tuple[dict[str, Any], str | None]] = [(record, None)]
    while stack:
        run, parent = stack.pop()
        if parent is not None and not _parent(run):
            run = {**run, "parent_run_id": parent}
        runs.append(run)
        children = run.get("child_runs")
        if isinstance(children, list):
            own = text_or_none(run.get("id"))
            stack.extend((child, own) for child in reversed(children) if isinstance(child, dict))
    return runs


def _dotted_root(run: dict[str, Any]) -> str | None:
    """The root run id of a ``dotted_order`` (``<time>Z<root id>.<time>Z<child id>...``)."""
    dotted = run.get("dotted_order")
    if isinstance(dotted, str) and "Z" in dotted:
        return dotted.split(".", 1)[0].split("Z", 1)[1] or None
    return None


def _session(run: dict[str, Any]) -> str | None:
    extra_meta = _dict(_dict(run.get("extra")).get("metadata")) | _dict(run.get("metadata"))
    session = text_or_none(run.get("thread_id"))
    for key in _SESSION_KEYS:
        session = session or text_or_none(extra_meta.get(key))
    return session


def _root_fields(run: dict[str, Any], group: SpanGroup) -> None:
    """The root run's fields are the trace's own: name, thread, inputs and outputs, tags."""
    group.name = text_or_none(run.get("name"))
    group.session_id = _session(run)
    trace_in, trace_out = _unwrap(run.get("inputs")), _unwrap(run.get("outputs"))
    group.input = trace_in if trace_in not in (None, {}) else None
    group.output = trace_out if trace_out not in (None, {}) else None
    for key in ("tags", "reference_example_id"):
        if run.get(key) not in (None, []):
            group.metadata[key] = run[key]
    if text_or_none(run.get("session_id")):
        group.metadata["project_id"] = run["session_id"]  # LangSmith's session is the project


def _span(
    run: dict[str, Any],
    trace_id: str,
    index: int,
    where: tuple[int | None, int | None],
    messages: MessagesOf = plain_messages,
) -> Span:
    run_id = text_or_none(run.get("id"))
    if not run_id:
        raise BadRecord(
            f"run {index} of the record has id {shown(run.get('id'))}; expected a non-empty string"
        )
    parent = _parent(run)
    span = Span(
        trace_id=trace_id,
        span_id=run_id,
        parent_id=parent,
        event=_event(run, root=parent is None, messages=messages),
        line=where[0],
        record=where[1],
        session_id=_session(run),
    )
    span.scores.extend(_scores(run, root=parent is None))
    return span


def _runs(
    item: dict[str, Any], trace_id: str, where: tuple[int | None, int | None], messages: MessagesOf
) -> tuple[list[dict[str, Any]], list[Span]]:
    """The runs of one record (with its ``child_runs``) and their spans."""
    runs = _flatten(item)
    return runs, [_span(run, trace_id, i, where, messages) for i, run in enumerate(runs)]


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    """LangSmith runs: nested ``child_runs`` trees, or flat runs grouped by trace (streaming)."""
    grouper, intake = SpanGrouper(), SpanTraces(report, "langsmith")
    trace_of: dict[str, str] = {}  # run id -> trace id, for runs that name neither trace_id nor dotted_order
    for line, given, value in json_values(source.fh, report, pages=("runs",)):
        for record, item, at in page_items(value, "runs", line, given):
            where = {"line": line, "record": record}
            if not isinstance(item, dict):
                report.skip(
                    "wrong-type", f"{at}expected a LangSmith run object, got a JSON {kind_of(item)}", **where
                )
                continue
            if "run_type" not in item:
                report.skip(
                    "unrecognised-record",
                    f"{at}not a LangSmith run: no 'run_type' (keys {sorted(map(str, item))[:8]})",
                    **where,
                )
                continue
            parent = _parent(item)
            trace_id = (
                text_or_none(item.get("trace_id"))
                or _dotted_root(item)
                or (trace_of.get(parent) if parent else None)
                or parent
                or text_or_none(item.get("id"))
            )
            if not trace_id:
                report.skip("invalid-record", f"{at}run has no 'id', 'trace_id' or parent", **where)
                continue
            try:
                runs, spans = clipped_retry(_runs, item, trace_id, (line, record), grouper.history(trace_id))
            except BadRecord as bad:
                report.skip(bad.reason, at + bad.detail, **where)
                continue
            group = grouper.group(trace_id, line, record)
            for run, span in zip(runs, spans, strict=True):
                if span.parent_id is None:
                    _root_fields(run, group)
                if not text_or_none(run.get("trace_id")) and not _dotted_root(run):
                    trace_of[span.span_id] = trace_id
                grouper.add(span)
        yield from intake.emit(grouper.ready())
    yield from intake.emit(grouper.drain())
    intake.finish()


def _sniff(value: Any) -> str | None:
    if is_langsmith_value(value):
        return "LangSmith runs ('run_type' with 'trace_id'/'parent_run_id'/'child_runs'/...)"
    return None


LANGSMITH = FormatSpec(name="langsmith", sniff=_sniff, read=_read)
