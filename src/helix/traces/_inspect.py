"""Inspect AI eval logs -> canonical traces: one trace per sample and epoch.

``.eval`` logs (ZIP archives with Zstandard members, pooled ``events_data`` and ``attachment://``
references) are read through the ``inspect_ai`` library, an optional extra imported lazily. ``.json``
logs are plain JSON and read without it. Model events become ``llm`` events, tool events ``tool``
events linked by their call id, agent spans and subtasks ``agent``; sample scores are kept as
:class:`Score` (gold labels for calibration) and the sample target as ``_target`` metadata (never shown
to judges).
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .._exceptions import UsageError
from ._chat import convert_chat
from ._dialects import chat_messages, llm_side
from ._format import FormatSpec, NotThisFormat, Source, TraceLocated
from ._json import clipped_retry, json_values, validated
from ._model import Trace
from ._report import IntakeReport
from ._source import read_magic
from ._span_content import parse_time
from ._spans import Span, SpanGroup, build_trace
from ._values import BadRecord, kind_of, number, shown, text_or_none, usage_from

__all__ = ["INSPECT", "sample_to_trace"]

ZIP_MAGIC = b"PK\x03\x04"
INSTALL_HINT = "pip install 'helix-evals[inspect]'"

_USAGE = {
    "input_tokens": ("input_tokens",),
    "output_tokens": ("output_tokens",),
    "total_tokens": ("total_tokens",),
    "cache_read_input_tokens": ("input_tokens_cache_read",),
    "cache_write_input_tokens": ("input_tokens_cache_write",),
    "reasoning_tokens": ("reasoning_tokens",),
}
# Bookkeeping events that say nothing about what the agent did.
_DROPPED = frozenset({"span_end", "sample_init", "state", "store", "logger", "sandbox", "step"})
# Spans that only wrap what is already an event: setup, and the span around each tool event.
_DROPPED_SPANS = frozenset({"init", "tool"})
_ATTACHMENT = "attachment://"


def is_inspect_value(value: Any) -> bool:
    """An Inspect ``EvalLog`` document: an ``eval`` spec with ``samples`` or a ``version``."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("eval"), dict)
        and ("samples" in value or "version" in value)
    )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _resolve_attachments(value: Any, attachments: dict[str, Any]) -> Any:
    """``attachment://<hash>`` strings replaced by their content (iteratively: deep values are fine)."""
    if not attachments:
        return value
    if isinstance(value, str):
        if value.startswith(_ATTACHMENT):
            found = attachments.get(value[len(_ATTACHMENT) :])
            return found if isinstance(found, str) else value
        return value
    root: list[Any] = [value]
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        keys = range(len(node)) if isinstance(node, list) else list(node)
        for key in keys:
            item = node[key]
            if isinstance(item, str) and item.startswith(_ATTACHMENT):
                found = attachments.get(item[len(_ATTACHMENT) :])
                if isinstance(found, str):
                    node[key] = found
            elif isinstance(item, dict | list):
                stack.append(item)
    return root[0]


def _messages(raw: Any, default_role: str = "user") -> list[dict[str, Any]] | None:
    return chat_messages(raw, default_role)


def _model_input(event: dict[str, Any], pool: list[Any]) -> Any:
    raw = event.get("input")
    refs = event.get("input_refs")
    if (not raw) and isinstance(refs, list) and pool:
        resolved: list[Any] = []
        for ref in refs:
            if isinstance(ref, list) and len(ref) == 2 and all(isinstance(i, int) for i in ref):
                resolved.extend(pool[ref[0] : ref[1]])
        raw = resolved
    return raw


def _error_text(error: Any) -> str | None:
    if isinstance(error, dict):
        message = text_or_none(error.get("message"))
        kind = text_or_none(error.get("type"))
        return message or kind or "error"
    return text_or_none(error) or (None if error in (None, False) else str(error))


def _model_event(event: dict[str, Any], pool: list[Any]) -> dict[str, Any]:
    output = _dict(event.get("output"))
    raw_choices = output.get("choices")
    choices: list[Any] = raw_choices if isinstance(raw_choices, list) else []
    usage = _dict(output.get("usage"))
    error = _error_text(event.get("error")) or _error_text(output.get("error"))
    attributes = {k: event[k] for k in ("role", "tool_choice", "config", "retries", "cache") if event.get(k)}
    tools = event.get("tools")
    if isinstance(tools, list):
        attributes["tools"] = [_dict(t).get("name") for t in tools]
    stops = [_dict(c).get("stop_reason") for c in choices if _dict(c).get("stop_reason")]
    if stops:
        attributes["stop_reason"] = stops[0] if len(stops) == 1 else stops
    return {
        "kind": "llm",
        "name": text_or_none(event.get("model")) or "model",
        "input": llm_side(_model_input(event, pool), "user", attributes, "raw_input"),
        "output": llm_side([_dict(c).get("message") for c in choices], "assistant", attributes, "raw_output")
        if choices
        else None,
        "status": "error" if error else "ok",
        "error": error,
        "model": text_or_none(output.get("model")) or text_or_none(event.get("model")),
        "usage": usage_from(usage, _USAGE),
        "cost": number(usage.get("total_cost")),
        "attributes": attributes,
    }


def _tool_event(event: dict[str, Any]) -> dict[str, Any]:
    error = _error_text(event.get("error"))
    attributes = {k: event[k] for k in ("type", "agent", "truncated", "failed", "message_id") if event.get(k)}
    return {
        "kind": "tool",
        "name": text_or_none(event.get("function")) or "unknown_tool",
        "input": event.get("arguments"),
        "output": event.get("result"),
        "status": "error" if error else "ok",
        "error": error,
        "tool_call_id": text_or_none(event.get("id")),
        "attributes": attributes,
    }


def _events(sample: dict[str, Any]) -> list[dict[str, Any]]:
    pool = _dict(sample.get("events_data")).get("messages")
    pool = pool if isinstance(pool, list) else []
    given = sample.get("events")
    raw_events: list[Any] = given if isinstance(given, list) else []
    span_ends = {
        text_or_none(e.get("id")): e.get("timestamp")
        for e in raw_events
        if isinstance(e, dict) and e.get("event") == "span_end"
    }
    dropped_spans: dict[Any, str | None] = {}  # dropped span id -> the parent its children move to
    events: list[dict[str, Any]] = []
    for i, raw in enumerate(raw_events):
        if not isinstance(raw, dict):
            continue
        name = text_or_none(raw.get("event"))
        if name in _DROPPED:
            continue
        event_id = text_or_none(raw.get("uuid")) or f"ev-{i}"
        parent = text_or_none(raw.get("span_id"))
        if name == "span_begin":
            span_type = text_or_none(raw.get("type"))
            if span_type in _DROPPED_SPANS:
                dropped_spans[text_or_none(raw.get("id"))] = text_or_none(raw.get("parent_id"))
                continue
            event_id = text_or_none(raw.get("id")) or event_id
            parent = text_or_none(raw.get("parent_id"))
            fields: dict[str, Any] = {
                "kind": "agent" if span_type == "agent" else "other",
                "name": text_or_none(raw.get("name")) or span_type or "span",
                "end": parse_time(span_ends.get(text_or_none(raw.get("id")))),
                "attributes": {"span_type": span_type} if span_type else {},
            }
        elif name == "model":
            fields = _model_event(raw, pool)
        elif name == "tool":
            fields = _tool_event(raw)
        elif name == "subtask":
            fields = {"kind": "agent", "name": text_or_none(raw.get("name")) or "subtask"}
            fields |= {"input": raw.get("input"), "output": raw.get("result")}
        elif name == "error":
            fields = {"kind": "other", "name": "error", "status": "error"}
            fields["error"] = _error_text(raw.get("error")) or "error"
        elif name == "score":
            fields = {"kind": "other", "name": f"score {raw.get('scorer') or ''}".strip()}
            fields |= {
                "output": raw.get("score"),
                "attributes": {"intermediate": bool(raw.get("intermediate"))},
            }
        else:
            fields = {"kind": "other", "name": text_or_none(name) or "event"}
            fields["attributes"] = {k: v for k, v in raw.items() if k not in ("uuid", "span_id", "timestamp")}
        hops = 0
        while parent in dropped_spans and hops < len(dropped_spans):
            parent, hops = dropped_spans[parent], hops + 1
        fields["id"] = event_id
        fields["parent_id"] = parent
        fields.setdefault("start", parse_time(raw.get("timestamp")))
        fields.setdefault("end", parse_time(raw.get("completed")))
        events.append(fields)
    for event in events:
        event.setdefault("input", None)
        event.setdefault("output", None)
        event.setdefault("tool_call_id", None)
    return events


def _scores(sample: dict[str, Any]) -> list[dict[str, Any]]:
    scores: list[dict[str, Any]] = []
    for scorer, raw in _dict(sample.get("scores")).items():
        score = _dict(raw)
        comment = text_or_none(score.get("explanation"))
        value = score.get("value")
        values = value.items() if isinstance(value, dict) else [(None, value)]
        for key, item in values:
            if isinstance(item, bool | str):
                shown: Any = item
            else:
                shown = number(item)
                if shown is None:
                    continue
            name = str(scorer) if key is None else f"{scorer}.{key}"
            scores.append({"name": name, "value": shown, "source": "inspect", "comment": comment})
    return scores


def sample_to_trace(header: dict[str, Any], sample: Any) -> Trace:
    """One Inspect sample (as JSON) and its log header -> a :class:`Trace` (``BadRecord`` if impossible)."""
    if not isinstance(sample, dict):
        raise BadRecord(f"the sample is {kind_of(sample)}; expected an object", "wrong-type")
    sample_id = text_or_none(sample.get("id"))
    if sample_id is None:
        raise BadRecord(f"the sample has id {shown(sample.get('id'))}; expected a string or an integer")
    raw_epoch = sample.get("epoch")
    epoch = raw_epoch if isinstance(raw_epoch, int) and not isinstance(raw_epoch, bool) else 1
    sample = _resolve_attachments(sample, _dict(sample.get("attachments")))
    spec = _dict(header.get("eval"))
    eval_id = text_or_none(spec.get("eval_id")) or text_or_none(spec.get("run_id")) or "eval"
    trace_id = f"{eval_id}:{sample_id}:{epoch}"
    group = SpanGroup(trace_id=trace_id, has_root=True)
    for event in _events(sample):
        span_id, parent = event.pop("id"), event.pop("parent_id")
        group.spans.append(Span(trace_id=trace_id, span_id=span_id, parent_id=parent, event=event))
    fields, _ = build_trace(group, "inspect")
    raw_messages = sample.get("messages")
    if isinstance(raw_messages, list) and raw_messages:
        messages = _messages(raw_messages)
        if messages is None:
            try:  # say why the transcript could not be read
                convert_chat(raw_messages)
            except BadRecord as bad:
                raise BadRecord(f"sample {sample_id} epoch {epoch}: {bad.detail}") from None
        fields["messages"] = messages
    sample_input = sample.get("input")
    error = _error_text(sample.get("error"))
    metadata: dict[str, Any] = fields["metadata"]
    metadata.update(
        {
            "task": spec.get("task"),
            "model": spec.get("model"),
            "eval_id": spec.get("eval_id"),
            "sample_id": sample.get("id"),
            "epoch": epoch,
        }
    )
    for key, value in (("tags", spec.get("tags")), ("sample_metadata", sample.get("metadata"))):
        if value:
            metadata[key] = value
    if sample.get("target") not in (None, "", []):
        metadata["_target"] = sample["target"]  # the gold answer: never shown to judges
    if error:
        metadata["error"] = error
    fields.update(
        {
            "session_id": text_or_none(spec.get("run_id")),
            "name": text_or_none(spec.get("task")),
            "input": sample_input
            if isinstance(sample_input, str)
            else (_messages(sample_input) or sample_input),
            "output": _dict(sample.get("output")).get("completion"),
            "start": parse_time(sample.get("started_at")) or fields["start"],
            "end": parse_time(sample.get("completed_at")) or fields["end"],
            "status": "error" if error else "ok",
            "metadata": {k: v for k, v in metadata.items() if v is not None},
            "scores": _scores(sample),
        }
    )
    return validated(fields)


def _sample_trace(sample: Any, header: dict[str, Any]) -> Trace:
    return sample_to_trace(header, sample)


def _from_json(fh: IO[bytes], report: IntakeReport) -> Iterator[TraceLocated]:
    """``.json`` logs: one document (streamed sample by sample when big), or one log per line."""
    no_spec = False  # a log without an 'eval' spec (streamed: once per sample) is reported once
    for line, given, log in json_values(fh, report, pages=("samples",), header=("eval",), one_document=True):
        where = {"line": line, "record": given}
        if not is_inspect_value(log):
            if isinstance(log, dict) and "samples" in log:
                if not no_spec:
                    report.skip(
                        "wrong-type", "expected an Inspect eval log object with an 'eval' spec", **where
                    )
                no_spec = True
            else:
                report.skip(
                    "wrong-type", f"expected an Inspect eval log object, got a JSON {kind_of(log)}", **where
                )
            continue
        samples = log.get("samples")
        if samples is None:
            report.notes.append(
                f"the log has no samples (status {shown(log.get('status'))}): read as zero traces"
            )
            continue
        if not isinstance(samples, list):
            report.skip("invalid-record", f"'samples' is {kind_of(samples)}; expected a list", **where)
            continue
        first = given if given is not None else 1
        for index, sample in enumerate(samples, first):
            try:
                yield None, index, clipped_retry(_sample_trace, sample, log)
            except BadRecord as bad:
                report.skip(bad.reason, bad.detail, record=index)


def _from_eval(path: Path, report: IntakeReport) -> Iterator[TraceLocated]:
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_samples
    except ImportError:
        raise UsageError(
            f"{str(path)!r} is an Inspect AI .eval log; reading it needs the inspect_ai library: "
            f"{INSTALL_HINT} (or convert it with `inspect log convert --to json` and read the .json)."
        ) from None
    try:
        header = read_eval_log(str(path), header_only=True).model_dump(mode="json", exclude_none=True)
    except Exception as exc:  # the library raises many kinds on a damaged archive
        report.skip(
            "unreadable", f"the .eval header could not be read: {type(exc).__name__}: {exc}", record=1
        )
        return
    samples = read_eval_log_samples(str(path), all_samples_required=False, resolve_attachments=True)
    index = 0
    while True:
        index += 1
        try:
            sample = next(samples)
        except StopIteration:
            return
        except Exception as exc:
            report.skip(
                "unreadable", f"sample {index} could not be read: {type(exc).__name__}: {exc}", record=index
            )
            return
        try:
            yield None, index, sample_to_trace(header, sample.model_dump(mode="json", exclude_none=True))
        except BadRecord as bad:
            report.skip(bad.reason, bad.detail, record=index)


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    """Inspect AI eval logs: ``.eval`` archives (needs the ``inspect`` extra) or ``.json`` logs."""
    if read_magic(source.fh) == ZIP_MAGIC:
        yield from _from_eval(source.path, report)
    else:
        yield from _from_json(source.fh, report)


def _sniff(value: Any) -> str | None:
    if is_inspect_value(value):
        return "an Inspect AI eval log ('eval' spec with 'samples'/'version')"
    return None


def _sniff_file(magic: bytes, path: Path) -> str | None:
    """A ZIP archive is an Inspect AI ``.eval`` log when it holds ``header.json`` or a start journal."""
    if magic != ZIP_MAGIC:
        return None
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise NotThisFormat(f"the file is a damaged ZIP archive ({exc})") from None
    if "header.json" in names or "_journal/start.json" in names:
        return "a ZIP archive with header.json: an Inspect AI .eval log"
    members = ", ".join(sorted(names)[:5])
    raise NotThisFormat(f"the file is a ZIP archive without an Inspect header.json (members: {members})")


INSPECT = FormatSpec(name="inspect", sniff=_sniff, read=_read, sniff_file=_sniff_file)
