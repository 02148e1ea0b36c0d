"""Langfuse exports -> canonical traces.

Two data-model generations are read:

- legacy trace objects (``GET /api/public/traces/{id}``, the UI's JSON export): one object per trace
  with ``observations`` and ``scores``;
- v4 observation rows (the ``/api/public/v2/observations`` response in camelCase, blob-storage
  exports in snake_case) grouped into traces by ``traceId``/``trace_id``. Score rows in the same file
  (``dataType``/``data_type`` with a trace id) are joined onto their trace.

Scores become :class:`Score` so they can serve as gold labels. Tool observations are linked to the
generation that asked for them (by id when the row carries ``tool_calls``, else by name and order).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from ._depth import bounded
from ._dialects import llm_side
from ._format import FormatSpec, Source, TraceLocated
from ._history import HistoryMemo
from ._json import clipped_retry, json_values, page_items
from ._model import Score
from ._report import IntakeReport
from ._span_content import MessagesOf, parse_time, plain_messages
from ._spans import Span, SpanGroup, SpanGrouper, SpanTraces
from ._values import BadRecord, decode_io, decode_json, kind_of, number, shown, text_or_none, usage_from

__all__ = ["LANGFUSE"]

_KINDS = {
    "GENERATION": "llm",
    "TOOL": "tool",
    "AGENT": "agent",
    "RETRIEVER": "retrieval",
    "EMBEDDING": "retrieval",
}
_PARENT_KEYS = ("parentObservationId", "parent_observation_id")
_MAPPED = frozenset(
    {
        "id",
        "traceId",
        "trace_id",
        "parentObservationId",
        "parent_observation_id",
        "type",
        "name",
        "input",
        "output",
        "startTime",
        "start_time",
        "endTime",
        "end_time",
        "level",
        "statusMessage",
        "status_message",
        "model",
        "providedModelName",
        "provided_model_name",
        "usageDetails",
        "usage_details",
        "usage",
        "costDetails",
        "cost_details",
        "calculatedTotalCost",
        "totalCost",
        "total_cost",
        # trace attributes copied onto every v4 row
        "userId",
        "user_id",
        "sessionId",
        "session_id",
        "traceName",
        "trace_name",
        "tags",
        "release",
        "environment",
    }
)
_USAGE_KEYS = {
    "input_tokens": ("input", "promptTokens", "prompt_tokens", "input_tokens"),
    "output_tokens": ("output", "completionTokens", "completion_tokens", "output_tokens"),
    "total_tokens": ("total", "totalTokens", "total_tokens"),
    "cache_read_input_tokens": ("input_cached_tokens", "cache_read_input_tokens", "input_cache_read"),
    "cache_write_input_tokens": ("cache_creation_input_tokens", "input_cache_creation"),
    "reasoning_tokens": ("output_reasoning_tokens", "reasoning_tokens", "output_reasoning"),
}


def _get(obj: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in obj and obj[key] is not None:
            return obj[key]
    return None


def is_observation_row(value: Any) -> bool:
    """A v4 observation row (camelCase or snake_case)."""
    return isinstance(value, dict) and any(key in value for key in _PARENT_KEYS)


def _is_score_row(value: dict[str, Any]) -> bool:
    return ("dataType" in value or "data_type" in value) and "name" in value and "value" in value


def is_langfuse_value(value: Any) -> bool:
    """Whether a parsed record (or document) is Langfuse data: a legacy trace, rows, or an API page."""
    if isinstance(value, dict):
        if isinstance(value.get("observations"), list) and ("scores" in value or "htmlPath" in value):
            return True
        if is_observation_row(value):
            return True
        data = value.get("data")
        return isinstance(data, list) and bool(data) and is_observation_row(data[0])
    if isinstance(value, list) and value:
        return is_langfuse_value(value[0])
    return False


# -- observations -> events ------------------------------------------------------------------------------


def _score(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise BadRecord(f"{where} is {kind_of(raw)}; expected a score object")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise BadRecord(f"{where}.name is {shown(name)}; expected a non-empty string")
    data_type = str(_get(raw, "dataType", "data_type") or "NUMERIC").upper()
    value: Any = raw.get("value")
    text = _get(raw, "stringValue", "string_value")
    if data_type == "BOOLEAN":
        flag = number(value)
        value = bool(flag) if flag is not None else value if isinstance(value, bool) else text
    elif data_type in ("CATEGORICAL", "TEXT"):
        value = text if isinstance(text, str) else value
    else:
        value = number(value)
    if not isinstance(value, bool | int | float | str):
        raise BadRecord(f"{where}.value is {shown(raw.get('value'))}; expected a number, boolean or string")
    source = text_or_none(raw.get("source"))
    comment = text_or_none(raw.get("comment"))
    observation = _get(raw, "observationId", "observation_id")
    if observation is not None:
        comment = f"{comment} (observation {observation})" if comment else f"observation {observation}"
    return {
        "name": name,
        "value": value,
        "source": f"langfuse:{source.lower()}" if source else "langfuse",
        "comment": comment,
    }


def _tool_calls_of_row(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_calls`` column of a v4 row (JSON strings or objects) as OpenAI-shaped tool calls."""
    raw = decode_json(_get(row, "tool_calls", "toolCalls"))
    if not isinstance(raw, list):
        return []
    calls = [decode_json(item) for item in raw]
    return [call for call in calls if isinstance(call, dict)]


def _event(obs: dict[str, Any], messages: MessagesOf = plain_messages) -> dict[str, Any]:
    """An :class:`Event`-shaped dict (without ids) for one observation (``messages``: the trace's memo)."""
    raw_type = obs.get("type")
    obs_type = raw_type.upper() if isinstance(raw_type, str) else "SPAN"
    kind = _KINDS.get(obs_type, "other")
    data_in, data_out = decode_io(obs.get("input")), decode_io(obs.get("output"))
    attributes = {k: v for k, v in obs.items() if k not in _MAPPED}
    if kind == "llm":
        raw_in = obs.get("input")
        # A JSON array stays text: the trace's memo then parses only what earlier rows did not have.
        text_in = isinstance(raw_in, str) and raw_in[:1] == "["
        data_in = llm_side(raw_in if text_in else data_in, "user", attributes, "raw_input", messages)
        row_calls = _tool_calls_of_row(obs)
        if row_calls and isinstance(data_out, dict | type(None)) and not _get(data_out or {}, "tool_calls"):
            data_out = {**(data_out or {"role": "assistant", "content": None}), "tool_calls": row_calls}
        data_out = llm_side(data_out, "assistant", attributes, "raw_output")
    level = obs.get("level")
    status_message = text_or_none(_get(obs, "statusMessage", "status_message"))
    error = level == "ERROR"
    cost = number(_get(obs, "calculatedTotalCost", "totalCost", "total_cost"))
    if cost is None:
        details = decode_json(_get(obs, "costDetails", "cost_details"))
        cost = number(details.get("total")) if isinstance(details, dict) else None
    if level not in (None, "DEFAULT", "ERROR"):
        attributes["level"] = level
    if status_message and not error:
        attributes["status_message"] = status_message
    return {
        "kind": kind,
        "name": text_or_none(obs.get("name")) or obs_type.lower(),
        "input": data_in,
        "output": data_out,
        "start": parse_time(_get(obs, "startTime", "start_time")),
        "end": parse_time(_get(obs, "endTime", "end_time")),
        "status": "error" if error else "unset",
        "error": (status_message or "level ERROR") if error else None,
        "model": text_or_none(_get(obs, "providedModelName", "provided_model_name", "model")),
        "usage": usage_from(decode_json(_get(obs, "usageDetails", "usage_details", "usage")), _USAGE_KEYS),
        "cost": cost,
        "tool_call_id": None,
        "attributes": attributes,
    }


def _span(
    obs: Any,
    index: int,
    trace_id: str,
    line: int | None,
    record: int | None,
    messages: MessagesOf = plain_messages,
) -> Span:
    if not isinstance(obs, dict):
        raise BadRecord(f"observation {index} is {kind_of(obs)}; expected an object", "wrong-type")
    event_id = text_or_none(obs.get("id"))
    if not event_id:
        raise BadRecord(f"observation {index} has id {shown(obs.get('id'))}; expected a non-empty string")
    return Span(
        trace_id=trace_id,
        span_id=event_id,
        parent_id=text_or_none(_get(obs, *_PARENT_KEYS)) or None,  # v4 exports write "" for roots
        event=_event(obs, messages),
        line=line,
        record=record,
        session_id=text_or_none(_get(obs, "sessionId", "session_id")),
    )


def _retyped(groups: Iterator[SpanGroup]) -> Iterator[SpanGroup]:
    """Older SDKs had no TOOL type: a SPAN/EVENT named like a requested tool call is that tool's run."""
    for group in groups:
        requested = {
            call.get("name")
            for span in group.spans
            if span.event["kind"] == "llm" and isinstance(span.event["output"], list)
            for message in span.event["output"]
            for call in message.get("tool_calls") or []
        }
        for span in group.spans:
            if span.event["kind"] == "other" and span.event["name"] in requested:
                span.event["kind"] = "tool"
        yield group


def _legacy_group(
    value: dict[str, Any], line: int | None, record: int | None, report: IntakeReport
) -> SpanGroup:
    trace_id = text_or_none(value.get("id"))
    if not trace_id:
        raise BadRecord(f"the Langfuse trace has id {shown(value.get('id'))}; expected a non-empty string")
    metadata = {
        key: value[key]
        for key in ("userId", "tags", "release", "version", "environment", "metadata", "htmlPath", "latency")
        if value.get(key) not in (None, "", [], {})
    }
    total = number(value.get("totalCost"))
    if total is not None:
        metadata["total_cost"] = total
    group = SpanGroup(
        trace_id=trace_id,
        line=line,
        record=record,
        has_root=True,
        name=text_or_none(value.get("name")),
        session_id=text_or_none(value.get("sessionId")),
        metadata=metadata,
        input=decode_io(value.get("input")),
        output=decode_io(value.get("output")),
    )
    messages = functools.partial(HistoryMemo().messages, trace_id)  # one trace: its memo dies with it
    for index, obs in enumerate(value["observations"]):
        try:
            group.spans.append(_span(obs, index, trace_id, line, record, messages))
        except BadRecord as bad:
            report.skip(bad.reason, f"trace {trace_id}: {bad.detail}", line=line, record=record)
    return group


def _scores_of(raw_scores: Any, trace_id: str, report: IntakeReport, where: dict[str, Any]) -> list[Score]:
    if raw_scores is None:
        return []
    if not isinstance(raw_scores, list):
        report.skip("invalid-record", f"trace {trace_id}: 'scores' is {kind_of(raw_scores)}", **where)
        return []
    scores: list[Score] = []
    for index, raw in enumerate(raw_scores):
        try:
            scores.append(Score.model_validate(_score(raw, f"scores[{index}]")))
        except BadRecord as bad:
            report.skip(bad.reason, f"trace {trace_id}: {bad.detail}", **where)
    return scores


def _row_group(
    grouper: SpanGrouper, row: dict[str, Any], trace_id: str, line: int | None, record: int | None
) -> SpanGroup:
    group = grouper.group(trace_id, line, record)
    if not group.metadata:
        for key, names in (
            ("user_id", ("userId", "user_id")),
            ("tags", ("tags",)),
            ("release", ("release",)),
            ("environment", ("environment",)),
        ):
            found = _get(row, *names)
            if found not in (None, "", []):
                group.metadata[key] = found
    group.name = group.name or text_or_none(_get(row, "traceName", "trace_name"))
    return group


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    """Langfuse: legacy trace objects (one trace each) or v4 observation and score rows (grouped by trace)."""
    grouper, intake = SpanGrouper(), SpanTraces(report, "langfuse")
    pending: dict[str, list[Score]] = {}

    def scored(
        located: Iterator[TraceLocated],
    ) -> Iterator[TraceLocated]:
        for line, record, trace in located:
            trace.scores.extend(pending.pop(trace.id, []))
            yield line, record, trace

    for line, given, value in json_values(
        source.fh, report, pages=("data",)
    ):  # "data": one page of the v2 observations API
        for index, (record, item, at) in enumerate(page_items(value, "data", line, given), 1):
            where = {"line": line, "record": record}
            if not isinstance(item, dict):
                report.skip(
                    "wrong-type", f"{at}expected a Langfuse object, got a JSON {kind_of(item)}", **where
                )
                continue
            if isinstance(item.get("observations"), list):
                try:
                    # clipped first if too deep: a retry would report the observations' skips twice
                    group = _legacy_group(bounded(item), line, record, report)
                except BadRecord as bad:
                    report.skip(bad.reason, at + bad.detail, **where)
                    continue
                scores = _scores_of(item.get("scores"), group.trace_id, report, where)
                for located in intake.emit(_retyped(iter([group]))):
                    located[2].scores.extend(scores)
                    yield located
                continue
            trace_id = text_or_none(_get(item, "traceId", "trace_id"))
            if is_observation_row(item) or (trace_id and "type" in item and "id" in item):
                if not trace_id:
                    report.skip(
                        "invalid-record", f"{at}observation row without 'traceId'/'trace_id'", **where
                    )
                    continue
                try:
                    span = clipped_retry(
                        _span, item, index, trace_id, line, record, grouper.history(trace_id)
                    )
                except BadRecord as bad:
                    report.skip(bad.reason, at + bad.detail, **where)
                    continue
                _row_group(grouper, item, trace_id, line, record)
                grouper.add(span)
            elif trace_id and _is_score_row(item):
                try:
                    score = clipped_retry(_score, item, "the score")
                    pending.setdefault(trace_id, []).append(Score.model_validate(score))
                except BadRecord as bad:
                    report.skip(bad.reason, at + bad.detail, **where)
            else:
                report.skip(
                    "unrecognised-record",
                    f"{at}not a Langfuse trace, observation or score (keys {sorted(map(str, item))[:8]})",
                    **where,
                )
        yield from scored(intake.emit(_retyped(grouper.ready())))
    yield from scored(intake.emit(_retyped(grouper.drain())))
    intake.finish()
    orphaned = sum(len(scores) for scores in pending.values())
    if orphaned:
        report.notes.append(
            f"{orphaned} score row(s) name traces with no observations in the file (or read before the "
            f"score): {', '.join(sorted(pending)[:5])}"
        )


def _sniff(value: Any) -> str | None:
    if is_langfuse_value(value):
        return "Langfuse data (a trace with 'observations', or observation rows with a parent id)"
    return None


LANGFUSE = FormatSpec(name="langfuse", sniff=_sniff, read=_read)
