"""The subject profile: what an agent does, read off its traces (never hand-written).

:func:`profile_subject` counts the tool inventory (calls, error rate, argument keys), the event
taxonomy (kind and name), the agents and the hand-offs between them (consecutive transcript
entries by different agents), the typical tool order as an expected flow (tool-to-next-tool edges
with counts, and the most common first-use order), and the distributions of turns, transcript
length, tool calls and cost. Pure: traces in, a versioned :class:`SubjectProfile` out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..stats import SeriesDistribution, summarize_number_series
from ..traces import Trace
from ._present import speakers

__all__ = [
    "PROFILE_FORMAT_VERSION",
    "AgentProfile",
    "EventCount",
    "FlowEdge",
    "Handoff",
    "SubjectProfile",
    "ToolProfile",
    "profile_subject",
    "tool_sequence",
]

PROFILE_FORMAT_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolProfile(_Model):
    """One tool of the inventory."""

    name: str
    calls: int
    errors: int
    error_rate: float
    traces: int
    """Traces that called it at least once."""
    argument_keys: dict[str, int]
    """Argument name → calls that passed it."""


class EventCount(_Model):
    """One (kind, name) of the event taxonomy."""

    kind: str
    name: str
    count: int


class AgentProfile(_Model):
    """An agent (or sub-agent) that speaks in the transcripts."""

    name: str
    entries: int
    traces: int


class Handoff(_Model):
    """Control passing from one agent to another (consecutive entries), and how often."""

    source: str
    target: str
    count: int


class FlowEdge(_Model):
    """One tool followed by another in the same trace."""

    source: str
    target: str
    count: int
    traces: int


class SubjectProfile(_Model):
    """The content of ``profile.yaml``."""

    version: int = PROFILE_FORMAT_VERSION
    subject: str | None = None
    traces: int
    formats: dict[str, int]
    tools: tuple[ToolProfile, ...]
    events: tuple[EventCount, ...]
    agents: tuple[AgentProfile, ...]
    handoffs: tuple[Handoff, ...]
    expected_flow: tuple[FlowEdge, ...]
    """Tool-to-next-tool edges, most frequent first: the typical order as a flow the agent follows."""
    typical_order: tuple[str, ...]
    """The most common order in which tools are first used in a trace."""
    typical_order_share: float
    """Share of tool-using traces whose first-use order is exactly ``typical_order``."""
    turns: SeriesDistribution | None
    """User turns per trace."""
    length: SeriesDistribution | None
    """Transcript entries per trace."""
    tool_calls: SeriesDistribution | None
    cost_usd: SeriesDistribution | None
    """Summed event cost per trace, over the traces that record one."""


def _calls(trace: Trace) -> list[tuple[str, Any, bool]]:
    """(tool, arguments, failed) of each tool call, from tool events or, without them, the messages."""
    events = trace.tool_events()
    if events:
        return [(e.name, e.input, e.status == "error" or e.error is not None) for e in events]
    calls: list[tuple[str, Any, bool]] = []
    for m in trace.messages or ():
        for c in m.tool_calls:
            calls.append((c.name, c.arguments, False))
    return calls


def tool_sequence(trace: Trace) -> list[str]:
    """The tools a trace called, in order."""
    return [name for name, _, _ in _calls(trace)]


def _cost(trace: Trace) -> float | None:
    costs = [e.cost for e in trace.events if e.cost is not None]
    return float(sum(costs)) if costs else None


def _turns(trace: Trace) -> int:
    if trace.messages:
        return sum(m.role == "user" for m in trace.messages)
    return sum(e.kind == "user" for e in trace.events)


def _length(trace: Trace) -> int:
    return len(trace.messages) if trace.messages else len(trace.events)


def _series(values: Sequence[float]) -> SeriesDistribution | None:
    return summarize_number_series(values)


def profile_subject(
    traces: Iterable[Trace], *, subject: str | None = None, top_events: int = 100
) -> SubjectProfile:
    """Profile the agent behind ``traces`` (see the module docstring)."""
    trace_list = list(traces)
    formats: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    using: Counter[str] = Counter()
    arg_keys: dict[str, Counter[str]] = {}
    events: Counter[tuple[str, str]] = Counter()
    agent_entries: Counter[str] = Counter()
    agent_traces: Counter[str] = Counter()
    handoffs: Counter[tuple[str, str]] = Counter()
    edges: Counter[tuple[str, str]] = Counter()
    edge_traces: Counter[tuple[str, str]] = Counter()
    orders: Counter[tuple[str, ...]] = Counter()
    costs: list[float] = []
    for t in trace_list:
        formats[str(t.metadata.get("source_format", "helix"))] += 1
        seq = _calls(t)
        for name, args, failed in seq:
            calls[name] += 1
            errors[name] += failed
            if isinstance(args, dict):
                arg_keys.setdefault(name, Counter()).update(str(k) for k in args)
            else:
                arg_keys.setdefault(name, Counter())
        for name in {n for n, _, _ in seq}:
            using[name] += 1
        names = [n for n, _, _ in seq]
        pairs = list(zip(names, names[1:], strict=False))
        edges.update(pairs)
        edge_traces.update(set(pairs))
        if names:
            orders[tuple(dict.fromkeys(names))] += 1
        for e in t.events:
            events[(e.kind, e.name)] += 1
        who = [s for s in speakers(t) if s]
        agent_entries.update(who)
        agent_traces.update(set(who))
        handoffs.update((a, b) for a, b in zip(who, who[1:], strict=False) if a != b)
        cost = _cost(t)
        if cost is not None:
            costs.append(cost)
    typical: tuple[str, ...] = ()
    share = 0.0
    if orders:
        typical, count = sorted(orders.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        share = count / sum(orders.values())
    return SubjectProfile(
        subject=subject,
        traces=len(trace_list),
        formats=dict(sorted(formats.items())),
        tools=tuple(
            ToolProfile(
                name=name,
                calls=n,
                errors=errors[name],
                error_rate=errors[name] / n,
                traces=using[name],
                argument_keys=dict(
                    sorted(arg_keys.get(name, Counter()).items(), key=lambda kv: (-kv[1], kv[0]))
                ),
            )
            for name, n in sorted(calls.items(), key=lambda kv: (-kv[1], kv[0]))
        ),
        events=tuple(
            EventCount(kind=k, name=nm, count=c)
            for (k, nm), c in sorted(events.items(), key=lambda kv: (-kv[1], kv[0]))[:top_events]
        ),
        agents=tuple(
            AgentProfile(name=a, entries=c, traces=agent_traces[a])
            for a, c in sorted(agent_entries.items(), key=lambda kv: (-kv[1], kv[0]))
        ),
        handoffs=tuple(
            Handoff(source=a, target=b, count=c)
            for (a, b), c in sorted(handoffs.items(), key=lambda kv: (-kv[1], kv[0]))
        ),
        expected_flow=tuple(
            FlowEdge(source=a, target=b, count=c, traces=edge_traces[(a, b)])
            for (a, b), c in sorted(edges.items(), key=lambda kv: (-kv[1], kv[0]))
        ),
        typical_order=typical,
        typical_order_share=share,
        turns=_series([_turns(t) for t in trace_list]),
        length=_series([_length(t) for t in trace_list]),
        tool_calls=_series([len(_calls(t)) for t in trace_list]),
        cost_usd=_series(costs),
    )
