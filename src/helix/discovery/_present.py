"""What a discovery reader sees of a trace: the judge's view, plus who spoke at each entry.

The transcript is :func:`~helix.judging.present_trace`'s (no ids, times, paths or ``_`` metadata,
so ground truth never reaches a reader), as JSON. Multi-agent runs name their speakers: each entry
gains an ``agent`` field when the trace records one (a message's ``name``, an event's ``agent``
attribute), so the first thing that went wrong can be attributed to an agent.
"""

from __future__ import annotations

from typing import Any

from ..judging import present_trace
from ..traces import Event, Trace

__all__ = ["present_for_discovery", "speakers"]


def _event_agent(event: Event) -> str | None:
    agent = event.attributes.get("agent")
    return agent if isinstance(agent, str) and agent else None


def _from_events(trace: Trace) -> list[str | None]:
    # One name per transcript entry, in the order present_trace builds entries from events.
    names: list[str | None] = []
    for e in trace.events:
        if e.kind == "user":
            names.append(_event_agent(e))
        elif e.kind == "llm":
            outputs = e.output if isinstance(e.output, list) else [e.output]
            for out in outputs:
                if out is None:
                    continue
                named = out.get("name") if isinstance(out, dict) else None
                names.append(named if isinstance(named, str) and named else _event_agent(e))
        elif e.kind in ("tool", "retrieval"):
            names.append(None)  # a tool result: the tool is named on the entry itself
    return names


def speakers(trace: Trace) -> list[str | None]:
    """The agent that produced each transcript entry (None where the trace does not say, and for tool results)."""
    if trace.messages:
        return [m.name if m.name and m.role != "tool" else None for m in trace.messages]
    return _from_events(trace)


def present_for_discovery(trace: Trace) -> dict[str, Any]:
    """The trajectory a determiner reads, as JSON: the judge's view with ``agent`` per entry."""
    trajectory = present_trace(trace).model_dump(mode="json", exclude_defaults=True)
    transcript: list[dict[str, Any]] = trajectory.get("transcript", [])
    names = speakers(trace)
    if len(names) == len(transcript):
        for entry, name in zip(transcript, names, strict=True):
            if name is not None:
                entry["agent"] = name
    trajectory["transcript"] = transcript
    return trajectory
