"""Produced-state grading: grade what an agent actually produced, not what it said it did.

```
produced events ──► extract_produced_state(events) ──► ProducedState
                                                        │
                    verify_completion(task_gold, state, correctness_checker) ──► CompletionResult
                                                        │
                    produced_state_scorer(...) ──► an ordinary campaign scorer (score in [0, 1])
```

Produced events carry their body in-band: an ``artifact`` event carries the persisted body in
``content``, a ``proposal_created`` event carries the filed description in ``content``. The grader
never looks anything up elsewhere. A proposal without ``content`` (a title-only filing) is graded on
presence only and never counts as a completed deliverable; the same holds for an artifact without a
body.

Events can be :class:`ProducedEvent` models, plain dicts of the same shape, or imported
:class:`helix.traces.Event` records whose ``attributes["produced.kind"]`` (or whose ``name``) is
``artifact`` / ``proposal_created``, so the grading works over traces from any source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._exceptions import UsageError
from ..traces import Event
from ._model import FinishedCell
from ._scorers import Scorer

__all__ = [
    "PRODUCED_KIND_ATTRIBUTE",
    "CompletionResult",
    "CorrectnessChecker",
    "Deliverable",
    "DeliverableOutcome",
    "DeliverableStatus",
    "ProducedEvent",
    "ProducedKind",
    "ProducedState",
    "RequiredDeliverable",
    "TaskGold",
    "extract_produced_state",
    "produced_state_scorer",
    "task_gold_from_json",
    "verify_completion",
]

ProducedKind = Literal["artifact", "proposal_created"]
PRODUCED_KIND_ATTRIBUTE = "produced.kind"
"""The attribute that marks a :class:`helix.traces.Event` as a produced event."""
DeliverableStatus = Literal["complete", "incorrect", "presence_only", "missing", "unexpected"]


class ProducedEvent(BaseModel):
    """One thing the agent produced, with its body in-band."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ProducedKind
    key: str
    """What was produced: the artifact path, or the proposal id."""
    title: str | None = None
    content: str | None = None
    """The persisted body (artifact) or the filed description (proposal); ``None`` = not carried."""
    attributes: dict[str, Any] = Field(default_factory=dict)
    """Structured fields of the deliverable (e.g. the record an action created)."""


@dataclass(frozen=True, kw_only=True)
class Deliverable:
    """The final form of one produced thing after replaying the event stream."""

    kind: ProducedKind
    key: str
    title: str | None
    content: str | None
    attributes: Mapping[str, Any]
    events: int
    """How many events wrote it (an artifact rewritten three times has 3)."""

    @property
    def has_content(self) -> bool:
        """Whether the body was carried in-band (only then can it count as completed)."""
        return self.content is not None


@dataclass(frozen=True, kw_only=True)
class ProducedState:
    """Everything an agent produced, keyed by (kind, key); later writes of the same key win."""

    deliverables: tuple[Deliverable, ...]

    def get(self, kind: ProducedKind, key: str) -> Deliverable | None:
        """The deliverable of ``kind`` named ``key``, if produced."""
        for d in self.deliverables:
            if d.kind == kind and d.key == key:
                return d
        return None

    def of_kind(self, kind: ProducedKind) -> tuple[Deliverable, ...]:
        """All deliverables of one kind, in first-produced order."""
        return tuple(d for d in self.deliverables if d.kind == kind)


def _from_trace_event(event: Event) -> ProducedEvent | None:
    kind = event.attributes.get(PRODUCED_KIND_ATTRIBUTE, event.name)
    if kind not in ("artifact", "proposal_created"):
        return None
    attrs = {k: v for k, v in event.attributes.items() if not k.startswith("produced.")}
    key = event.attributes.get("produced.key") or event.id
    content = event.attributes.get("produced.content")
    if content is None and isinstance(event.output, str):
        content = event.output
    title = event.attributes.get("produced.title")
    return ProducedEvent(
        kind=kind,
        key=str(key),
        title=str(title) if title is not None else None,
        content=content if isinstance(content, str) else None,
        attributes=attrs,
    )


def _coerce(raw: ProducedEvent | Event | Mapping[str, Any], index: int) -> ProducedEvent | None:
    if isinstance(raw, ProducedEvent):
        return raw
    if isinstance(raw, Event):
        return _from_trace_event(raw)
    if isinstance(raw, Mapping):
        if raw.get("kind") not in ("artifact", "proposal_created"):
            return None
        try:
            return ProducedEvent.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise UsageError(
                f"produced event #{index} {dict(raw)!r}: {first['msg']} at field "
                f"{'.'.join(str(p) for p in first['loc'])}; an event needs kind, key and optionally "
                "title, content, attributes"
            ) from None
    raise UsageError(
        f"produced event #{index} is a {type(raw).__name__}; pass ProducedEvent, helix.traces.Event or dict"
    )


def extract_produced_state(events: Iterable[ProducedEvent | Event | Mapping[str, Any]]) -> ProducedState:
    """Replay a produced-event stream into the final :class:`ProducedState` (pure; ignores other events).

    A later event for the same (kind, key) replaces the body and merges its attributes; a later event
    without content does not erase a body carried earlier.
    """
    order: list[tuple[str, str]] = []
    acc: dict[tuple[str, str], Deliverable] = {}
    for index, raw in enumerate(events):
        event = _coerce(raw, index)
        if event is None:
            continue
        ident = (event.kind, event.key)
        prev = acc.get(ident)
        if prev is None:
            order.append(ident)
            acc[ident] = Deliverable(
                kind=event.kind,
                key=event.key,
                title=event.title,
                content=event.content,
                attributes=dict(event.attributes),
                events=1,
            )
        else:
            acc[ident] = Deliverable(
                kind=event.kind,
                key=event.key,
                title=event.title if event.title is not None else prev.title,
                content=event.content if event.content is not None else prev.content,
                attributes={**prev.attributes, **event.attributes},
                events=prev.events + 1,
            )
    return ProducedState(deliverables=tuple(acc[i] for i in order))


@dataclass(frozen=True, kw_only=True)
class RequiredDeliverable:
    """One deliverable the task requires; ``expected`` is handed to the correctness checker."""

    kind: ProducedKind
    key: str
    expected: Any = None


@dataclass(frozen=True, kw_only=True)
class TaskGold:
    """What a completed task has produced.

    ``allow_unexpected=False`` makes any produced deliverable outside ``required`` fail completion
    (a refusal task requires nothing, so any action it produced is a wrong action).
    """

    required: tuple[RequiredDeliverable, ...] = ()
    allow_unexpected: bool = False


class CorrectnessChecker(Protocol):
    """Decides whether a produced body is right for a requirement (called only when content exists)."""

    def __call__(self, required: RequiredDeliverable, produced: Deliverable) -> bool: ...


@dataclass(frozen=True, kw_only=True)
class DeliverableOutcome:
    """How one required (or unexpected) deliverable was graded."""

    kind: ProducedKind
    key: str
    status: DeliverableStatus
    reason: str


@dataclass(frozen=True, kw_only=True)
class CompletionResult:
    """The completion oracle's answer: ``completed`` only when every requirement is complete."""

    completed: bool
    score: float
    """Complete requirements / (requirements + unexpected deliverables); 1.0 for nothing required and
    nothing unexpected."""
    outcomes: tuple[DeliverableOutcome, ...]

    def explain(self) -> str:
        """One line per non-complete outcome (empty when completed)."""
        return "; ".join(
            f"{o.kind} {o.key!r}: {o.status} ({o.reason})" for o in self.outcomes if o.status != "complete"
        )


def verify_completion(
    task_gold: TaskGold,
    state: ProducedState,
    correctness_checker: CorrectnessChecker | Callable[[RequiredDeliverable, Deliverable], bool],
) -> CompletionResult:
    """Grade ``state`` against ``task_gold``.

    Each requirement is ``missing`` (not produced), ``presence_only`` (produced without an in-band
    body: it exists but is not a completed deliverable), ``incorrect`` (the checker rejected the body)
    or ``complete``. Produced deliverables nobody asked for are ``unexpected`` unless allowed.
    """
    outcomes: list[DeliverableOutcome] = []
    wanted = {(r.kind, r.key) for r in task_gold.required}
    for req in task_gold.required:
        got = state.get(req.kind, req.key)
        if got is None:
            outcomes.append(
                DeliverableOutcome(kind=req.kind, key=req.key, status="missing", reason="not produced")
            )
        elif not got.has_content:
            outcomes.append(
                DeliverableOutcome(
                    kind=req.kind,
                    key=req.key,
                    status="presence_only",
                    reason="produced without its body in-band (content); graded on presence only",
                )
            )
        else:
            verdict = correctness_checker(req, got)
            if not isinstance(verdict, bool):
                raise UsageError(
                    f"correctness checker returned {verdict!r} for {req.kind} {req.key!r}; it must return a bool"
                )
            outcomes.append(
                DeliverableOutcome(
                    kind=req.kind,
                    key=req.key,
                    status="complete" if verdict else "incorrect",
                    reason="body accepted by the correctness checker"
                    if verdict
                    else "body rejected by the correctness checker",
                )
            )
    if not task_gold.allow_unexpected:
        for d in state.deliverables:
            if (d.kind, d.key) not in wanted:
                outcomes.append(
                    DeliverableOutcome(
                        kind=d.kind, key=d.key, status="unexpected", reason="not required by the task"
                    )
                )
    complete = sum(1 for o in outcomes if o.status == "complete")
    total = len(outcomes)
    return CompletionResult(
        completed=complete == total,
        score=1.0 if total == 0 else complete / total,
        outcomes=tuple(outcomes),
    )


def task_gold_from_json(value: TaskGold | Mapping[str, Any]) -> TaskGold:
    """A :class:`TaskGold` from its JSON form ``{"required": [{kind, key, expected}], "allow_unexpected"}``."""
    if isinstance(value, TaskGold):
        return value
    if not isinstance(value, Mapping):
        raise UsageError(
            f"task gold {value!r} is not an object; a produced-state scenario's gold looks like "
            '{"required": [{"kind": "artifact", "key": "report.md", "expected": ...}]}'
        )
    unknown = set(value) - {"required", "allow_unexpected"}
    if unknown:
        raise UsageError(
            f"task gold has unknown field(s) {sorted(unknown)!r}; allowed: required, allow_unexpected"
        )
    required: list[RequiredDeliverable] = []
    for i, item in enumerate(value.get("required", [])):
        if not isinstance(item, Mapping) or item.get("kind") not in ("artifact", "proposal_created"):
            raise UsageError(
                f"task gold required[{i}] = {item!r}: needs kind 'artifact' or 'proposal_created' and a key"
            )
        key = item.get("key")
        if not isinstance(key, str) or not key:
            raise UsageError(f"task gold required[{i}].key = {key!r}: must be a non-empty string")
        required.append(RequiredDeliverable(kind=item["kind"], key=key, expected=item.get("expected")))
    allow = value.get("allow_unexpected", False)
    if not isinstance(allow, bool):
        raise UsageError(f"task gold allow_unexpected = {allow!r}: must be true or false")
    return TaskGold(required=tuple(required), allow_unexpected=allow)


@dataclass(frozen=True, kw_only=True)
class _ProducedStateScorer:
    checker: CorrectnessChecker | Callable[[RequiredDeliverable, Deliverable], bool]
    completed_only: bool
    name: str

    def __call__(self, cell: FinishedCell) -> float:
        state = extract_produced_state(cell.produced)
        result = verify_completion(task_gold_from_json(cell.gold), state, self.checker)
        if self.completed_only:
            return 1.0 if result.completed else 0.0
        return result.score


def produced_state_scorer(
    correctness_checker: CorrectnessChecker | Callable[[RequiredDeliverable, Deliverable], bool],
    *,
    completed_only: bool = False,
    name: str = "produced_state",
) -> Scorer:
    """An ordinary campaign scorer (it has a ``name``) grading a finished cell's produced events against the scenario's gold.

    The scenario's ``gold`` is a :class:`TaskGold` or its JSON. The score is
    :attr:`CompletionResult.score` (fraction of deliverables complete), or 1/0 for completed /
    not completed with ``completed_only=True``.
    """
    return _ProducedStateScorer(checker=correctness_checker, completed_only=completed_only, name=name)
