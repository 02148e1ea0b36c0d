"""Judging units and their content keys: what is judged, once, under one key.

A unit is one judge call. On the ``matrix`` axis there is one unit per trajectory covering all its
LLM criteria; on the ``criterion`` axis one unit per (LLM criterion, trajectory). Code criteria
always form one unit per (check, trace). An LLM unit's key is the hash of exactly what the judge sees
(the prompt version, the axis, the criteria as presented and the trajectory as presented), never of
trace ids, file paths or times, so identical units share a key and are judged once.

What the judge sees of a trace (:func:`present_trace`) is a compact transcript plus the trace input,
final output and metadata without ``_``-prefixed keys (where ground truth lives).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from .._exceptions import UsageError
from .._util import content_hash
from ..traces import Event, Message, Trace
from ._criteria import CriteriaMatrix, Criterion
from ._texts import PROMPT_VERSION

__all__ = [
    "CriterionView",
    "ExampleView",
    "JudgingUnit",
    "ToolCallView",
    "Trajectory",
    "TranscriptEntry",
    "UnitAxis",
    "UnitKind",
    "build_units",
    "judged_content",
    "present_criterion",
    "present_trace",
]

UnitAxis = Literal["matrix", "criterion"]
UnitKind = Literal["llm", "code"]

# Intake bookkeeping a reader may put in metadata: where the trace came from, not what it is.
_INTAKE_METADATA_KEYS = frozenset(
    {"source_path", "source_file", "source_line", "source_location", "source_format"}
)


class _View(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolCallView(_View):
    """A tool call an assistant message asked for."""

    name: str
    arguments: Any = None


class TranscriptEntry(_View):
    """One step of the compact transcript the judge reads."""

    index: int
    role: str
    """``system``, ``developer``, ``user``, ``assistant`` or ``tool``."""
    content: Any = None
    tool_calls: tuple[ToolCallView, ...] = ()
    tool: str | None = None
    """For a tool result: the tool that produced it."""
    arguments: Any = None
    """For a tool result recorded as a span (no assistant message carried the call): its arguments."""
    error: bool | None = None
    """For a tool result: whether the tool reported an error."""


class Trajectory(_View):
    """A trace as the judge sees it: no id, no times, no file paths, no ``_`` metadata."""

    input: Any = None
    output: Any = None
    metadata: dict[str, Any] = {}
    transcript: tuple[TranscriptEntry, ...] = ()


class ExampleView(_View):
    """A labelled few-shot example shown with a criterion."""

    result: Literal["pass", "fail"]
    critique: str
    trajectory: Trajectory


class CriterionView(_View):
    """An LLM criterion as the judge sees it."""

    id: str
    title: str
    question: str
    pass_definition: str
    fail_definition: str
    applies_when: str | None = None
    examples: tuple[ExampleView, ...] = ()


@dataclass(frozen=True, kw_only=True, eq=False)
class JudgingUnit:
    """One judge call: an LLM packet or a group of code checks, covering one or more traces."""

    key: str
    kind: UnitKind
    axis: UnitAxis
    criterion_ids: tuple[str, ...]
    trace_ids: tuple[str, ...]
    """Every trace whose judged content is identical (in input order); all share the verdict."""
    criteria: tuple[CriterionView, ...] = ()
    """LLM units: the criteria as presented (empty for code units)."""
    trajectory: Trajectory | None = None
    """LLM units: the trajectory as presented (None for code units)."""


def _jsonable(value: Any) -> Any:
    """A JSON-native deep copy (sorted keys; odd types as strings), so views are stable."""
    return orjson.loads(
        orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    )


def _as_message(value: Any) -> Message | None:
    if isinstance(value, Message):
        return value
    if isinstance(value, Mapping) and "role" in value:
        try:
            return Message.model_validate(value)
        except ValidationError:
            return None
    return None


def _message_content(message: Message) -> Any:
    if message.content is not None:
        return message.content
    return _jsonable(message.parts) if message.parts else None


def _tool_calls(message: Message) -> tuple[ToolCallView, ...]:
    return tuple(ToolCallView(name=c.name, arguments=_jsonable(c.arguments)) for c in message.tool_calls)


def _event_failed(event: Event) -> bool:
    return event.status == "error" or event.error is not None


def _from_messages(trace: Trace, messages: Sequence[Message]) -> list[TranscriptEntry]:
    failed = {e.tool_call_id: _event_failed(e) for e in trace.tool_events() if e.tool_call_id}
    names = {c.id: c.name for m in messages for c in m.tool_calls if c.id}
    entries = []
    for index, m in enumerate(messages):
        is_tool = m.role == "tool"
        call_id = m.tool_call_id or ""
        entries.append(
            TranscriptEntry(
                index=index,
                role=m.role,
                content=_message_content(m),
                tool_calls=_tool_calls(m),
                tool=(m.name or names.get(call_id)) if is_tool else None,
                error=failed.get(call_id, False) if is_tool else None,
            )
        )
    return entries


def _from_events(trace: Trace) -> list[TranscriptEntry]:
    entries: list[TranscriptEntry] = []

    def add(**fields: Any) -> None:
        entries.append(TranscriptEntry(index=len(entries), **fields))

    for e in trace.events:
        if e.kind == "user":
            add(role="user", content=_jsonable(e.output if e.output is not None else e.input))
        elif e.kind == "llm":
            outputs = e.output if isinstance(e.output, list) else [e.output]
            for out in outputs:
                if out is None:
                    continue
                m = _as_message(out)
                if m is None:
                    add(role="assistant", content=_jsonable(out))
                else:
                    add(role=m.role, content=_message_content(m), tool_calls=_tool_calls(m))
        elif e.kind in ("tool", "retrieval"):
            content = e.output if e.output is not None else e.error
            add(
                role="tool",
                tool=e.name,
                arguments=_jsonable(e.input),
                content=_jsonable(content),
                error=_event_failed(e),
            )
    return entries


def present_trace(trace: Trace) -> Trajectory:
    """What a judge sees of ``trace``: deterministic, and free of ids, times, paths and ``_`` metadata."""
    transcript = _from_messages(trace, trace.messages) if trace.messages else _from_events(trace)
    metadata = {
        k: v for k, v in trace.metadata.items() if not k.startswith("_") and k not in _INTAKE_METADATA_KEYS
    }
    return Trajectory(
        input=_jsonable(trace.input),
        output=_jsonable(trace.output),
        metadata=_jsonable(metadata),
        transcript=tuple(transcript),
    )


def present_criterion(criterion: Criterion, traces_by_id: Mapping[str, Trace]) -> CriterionView:
    """An LLM criterion as the judge sees it, with its few-shot examples' trajectories.

    Raises UsageError when a few-shot example names a trace that is not among the given traces.
    """
    if criterion.kind != "llm":
        raise UsageError(f"criterion {criterion.id!r} is a code criterion; only llm criteria are presented")
    examples = []
    for shot in criterion.few_shot:
        example_trace = traces_by_id.get(shot.trace_id)
        if example_trace is None:
            raise UsageError(
                f"criterion {criterion.id!r} has a few-shot example on trace {shot.trace_id!r}, which is "
                "not among the traces given; add that trace to the inputs or remove the example"
            )
        examples.append(
            ExampleView(result=shot.result, critique=shot.critique, trajectory=present_trace(example_trace))
        )
    assert criterion.question and criterion.pass_definition and criterion.fail_definition
    return CriterionView(
        id=criterion.id,
        title=criterion.title,
        question=criterion.question,
        pass_definition=criterion.pass_definition,
        fail_definition=criterion.fail_definition,
        applies_when=criterion.applies_when,
        examples=tuple(examples),
    )


def judged_content(
    *, prompt_version: str, axis: UnitAxis, criteria: Sequence[CriterionView], trajectory: Trajectory
) -> dict[str, Any]:
    """Exactly what an LLM unit's key hashes: ``content_hash(judged_content(...))`` is the key."""
    return {
        "prompt_version": prompt_version,
        "axis": axis,
        "criteria": [c.model_dump(mode="json", exclude_defaults=True) for c in criteria],
        "trajectory": trajectory.model_dump(mode="json", exclude_defaults=True),
    }


def _code_content(criterion: Criterion, trace: Trace) -> dict[str, Any]:
    # A code check reads the whole trace (ground truth in `_` metadata, timings), so everything but
    # the id and intake bookkeeping is judged content.
    body = trace.model_dump(mode="json", exclude={"id"})
    body["metadata"] = {k: v for k, v in body["metadata"].items() if k not in _INTAKE_METADATA_KEYS}
    return {
        "kind": "code",
        "criterion_id": criterion.id,
        "check": criterion.check.model_dump(mode="json") if criterion.check else None,
        "trace": _jsonable(body),
    }


def _groups(criteria: tuple[Criterion, ...], axis: UnitAxis) -> list[tuple[Criterion, ...]]:
    if not criteria:
        return []
    return [criteria] if axis == "matrix" else [(c,) for c in criteria]


def build_units(
    traces: Iterable[Trace],
    matrix: CriteriaMatrix,
    *,
    axis: UnitAxis = "matrix",
    prompt_version: str = PROMPT_VERSION,
) -> tuple[JudgingUnit, ...]:
    """Every judging unit of ``traces`` × ``matrix``, identical units merged, in input order.

    LLM units come first (by first trace, then criterion order), then code units.
    """
    if axis not in get_args(UnitAxis):
        raise UsageError(f"unknown unit axis {axis!r}; use 'matrix' or 'criterion'")
    trace_list = list(traces)
    if not trace_list:
        raise UsageError("no traces to judge; pass at least one trace")
    by_id: dict[str, Trace] = {}
    for t in trace_list:
        if t.id in by_id:
            raise UsageError(f"trace id {t.id!r} appears more than once; trace ids must be unique in a run")
        by_id[t.id] = t
    views = {c.id: present_criterion(c, by_id) for c in matrix.llm_criteria}

    found: dict[str, tuple[JudgingUnit, list[str]]] = {}

    def add(unit: JudgingUnit, trace_id: str) -> None:
        if unit.key in found:
            found[unit.key][1].append(trace_id)
        else:
            found[unit.key] = (unit, [trace_id])

    for trace in trace_list:
        trajectory = present_trace(trace)
        for group in _groups(matrix.llm_criteria, axis):
            shown = tuple(views[c.id] for c in group)
            key = content_hash(
                judged_content(
                    prompt_version=prompt_version, axis=axis, criteria=shown, trajectory=trajectory
                )
            )
            ids = tuple(c.id for c in group)
            add(
                JudgingUnit(
                    key=key,
                    kind="llm",
                    axis=axis,
                    criterion_ids=ids,
                    trace_ids=(),
                    criteria=shown,
                    trajectory=trajectory,
                ),
                trace.id,
            )
    # Code units are always one check × one trace, whatever the axis: a check that raises then
    # leaves only its own criterion unscored, never its neighbours.
    for trace in trace_list:
        for criterion in matrix.code_criteria:
            key = content_hash(_code_content(criterion, trace))
            add(
                JudgingUnit(key=key, kind="code", axis=axis, criterion_ids=(criterion.id,), trace_ids=()),
                trace.id,
            )

    return tuple(
        JudgingUnit(
            key=u.key,
            kind=u.kind,
            axis=u.axis,
            criterion_ids=u.criterion_ids,
            trace_ids=tuple(ids),
            criteria=u.criteria,
            trajectory=u.trajectory,
        )
        for u, ids in found.values()
    )
