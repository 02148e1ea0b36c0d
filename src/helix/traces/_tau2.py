"""tau2-bench results -> canonical traces (one per simulation).

Two storage layouts: "json" (one ``{timestamp, info, tasks, simulations}`` document) and "dir" (a
``results.json`` with the run's info next to a ``simulations/`` folder of one simulation per file). A
lone simulation file (or JSONL of simulations) reads too.

Messages become events through the shared chat conversion, then get what tau2 adds: timestamps, the
agent's usage and cost, the tool-error flag, and tool calls made by the simulated *user* (telecom), which
are marked ``requestor: "user"`` / ``user_side: true`` in the tool event's attributes. The task (user
scenario, gold actions, assertions) and the reward details are ground truth: they go to ``_task`` and
``_reward_info`` metadata, which no judge sees; the reward and its breakdown are :class:`Score`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from ._chat import convert_chat
from ._format import FormatSpec, Source, TraceLocated
from ._json import clipped_retry, json_failure, json_values, validated
from ._model import Trace
from ._report import IntakeReport
from ._source import file_stem, strip_bom
from ._values import BadRecord, kind_of, number, usage_from

__all__ = ["TAU2_BENCH", "tau2_simulation_trace"]

SOURCE = "tau2-bench"

# termination_reason values that mean the run broke rather than ended.
_ERROR_TERMINATIONS = frozenset(
    {
        "agent_error",
        "user_error",
        "infrastructure_error",
        "unexpected_error",
        "too_many_errors",
        "timeout",
        "context_window_exceeded",
    }
)
_DONE_TERMINATIONS = frozenset({"agent_stop", "user_stop"})
# Message fields that are either mapped to canonical fields or too bulky to copy (the raw LLM response).
_DROPPED_KEYS = frozenset({"raw_data", "timestamp", "usage", "cost", "requestor", "error", "id"})


def is_tau2_simulation(value: Any) -> bool:
    """Whether ``value`` looks like one tau2 SimulationRun (``task_id`` + ``messages`` + a tau2 field)."""
    return (
        isinstance(value, dict)
        and "task_id" in value
        and isinstance(value.get("messages"), list)
        and ("termination_reason" in value or "reward_info" in value)
    )


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


_USAGE = {
    "input_tokens": ("prompt_tokens",),
    "output_tokens": ("completion_tokens",),
    "total_tokens": ("total_tokens",),
}


def _flatten(raw_messages: list[Any]) -> list[Any]:
    """Messages with every MultiToolMessage (``{role: tool, tool_messages: [...]}``) spread out."""
    flat: list[Any] = []
    for message in raw_messages:
        if isinstance(message, dict) and isinstance(message.get("tool_messages"), list):
            flat.extend(message["tool_messages"])
        else:
            flat.append(message)
    return flat


def _calls(message: dict[str, Any], where: str) -> list[dict[str, Any]]:
    raw = message.get("tool_calls")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise BadRecord(f"{where}.tool_calls is {kind_of(raw)}; expected a list")
    return [c for c in raw if isinstance(c, dict)]


def _as_chat(message: Any, where: str) -> dict[str, Any]:
    """A tau2 message in the OpenAI shape :func:`convert_chat` reads (tool results keyed by call id)."""
    if not isinstance(message, dict):
        raise BadRecord(f"{where} is {kind_of(message)}; expected a message object")
    chat = {k: v for k, v in message.items() if k not in _DROPPED_KEYS and v is not None}
    if message.get("role") == "tool":
        call_id = message.get("id", message.get("tool_call_id"))
        chat["tool_call_id"] = str(call_id) if call_id is not None else None
        chat["error"] = message.get("error") is True
    if message.get("role") == "user":
        chat.pop("tool_calls", None)  # linked below: convert_chat only reads assistant calls
    return chat


def _convert_messages(raw_messages: list[Any], agent_model: str | None) -> tuple[dict[str, Any], Any, Any]:
    """Events and transcript of one simulation, plus its input and output."""
    messages = _flatten(raw_messages)
    converted = convert_chat([_as_chat(m, f"messages[{i}]") for i, m in enumerate(messages)])
    user_calls: dict[str, dict[str, Any]] = {}
    call_times: dict[str, datetime | None] = {}
    for i, (raw, event, msg) in enumerate(zip(messages, converted.events, converted.messages, strict=True)):
        start = _time(raw.get("timestamp"))
        event["start"] = start
        usage, cost = usage_from(raw.get("usage"), _USAGE), number(raw.get("cost"))
        role = raw.get("role")
        if role == "assistant":
            event["usage"], event["cost"], event["model"] = usage, cost, event.get("model") or agent_model
            for call in msg["tool_calls"]:
                if call["id"] is not None:
                    call_times[call["id"]] = start
        elif role == "user":
            # The simulated user's own LLM spend: kept apart so it never adds to the agent's cost.
            if usage is not None:
                event["attributes"]["user_sim_usage"] = usage
            if cost is not None:
                event["attributes"]["user_sim_cost"] = cost
            calls = []
            for j, call in enumerate(_calls(raw, f"messages[{i}]")):
                name = call.get("name")
                if not isinstance(name, str) or not name:
                    raise BadRecord(f"messages[{i}].tool_calls[{j}] has no tool name")
                arguments = call.get("arguments")
                call_id = str(call["id"]) if call.get("id") is not None else None
                shaped: dict[str, Any] = {
                    "id": call_id,
                    "name": name,
                    "arguments": arguments if isinstance(arguments, dict | str) else {},
                }
                calls.append(shaped)
                if call_id is not None:
                    user_calls[call_id] = shaped
                    call_times[call_id] = start
            msg["tool_calls"] = calls
            if calls:
                event["attributes"]["tool_calls"] = calls
        elif role == "tool":
            call_id = event.get("tool_call_id")
            requestor = raw.get("requestor")
            if isinstance(requestor, str):
                event["attributes"]["requestor"] = requestor
            linked = user_calls.get(call_id) if call_id is not None else None
            if linked is not None:
                event["name"] = linked["name"]
                arguments = linked["arguments"]
                event["input"] = dict(arguments) if isinstance(arguments, dict) else arguments
            if linked is not None or requestor == "user":
                event["attributes"]["user_side"] = True
            failed = raw.get("error") is True
            event["status"] = "error" if failed else "ok"
            event["error"] = (msg["content"] or "tool error")[:500] if failed else None
            event["end"] = start
            event["start"] = call_times.get(call_id, start) if call_id is not None else start
    return {"events": converted.events, "messages": converted.messages}, converted.input, converted.output


def _scores(reward_info: Any) -> list[dict[str, Any]]:
    if not isinstance(reward_info, dict):
        return []
    scores: list[dict[str, Any]] = []
    reward = number(reward_info.get("reward"))
    if reward is not None:
        basis = reward_info.get("reward_basis")
        comment = f"reward basis: {', '.join(map(str, basis))}" if isinstance(basis, list) and basis else None
        scores.append({"name": "reward", "value": reward, "source": SOURCE, "comment": comment})
    breakdown = reward_info.get("reward_breakdown")
    if isinstance(breakdown, dict):
        for key, value in breakdown.items():
            found = number(value)
            if found is not None:
                scores.append({"name": f"reward_{str(key).lower()}", "value": found, "source": SOURCE})
    return scores


def tau2_simulation_trace(sim: Any, context: dict[str, Any], *, stem: str) -> dict[str, Any]:
    """The :class:`Trace` fields of one SimulationRun; ``context`` is the results file's info and tasks.

    Raises :class:`BadRecord` when ``sim`` is not a simulation or a message is malformed.
    """
    if not isinstance(sim, dict):
        raise BadRecord(f"expected a tau2 simulation object, got a JSON {kind_of(sim)}", "wrong-type")
    if not isinstance(sim.get("messages"), list) or "task_id" not in sim:
        keys = ", ".join(sorted(map(str, sim))[:8])
        raise BadRecord(
            f"not a tau2 simulation: expected 'task_id' and a 'messages' list, found keys {{{keys}}}",
            "unrecognised-record",
        )
    info = context.get("info") if isinstance(context.get("info"), dict) else {}
    assert isinstance(info, dict)
    agent_info = info.get("agent_info") if isinstance(info.get("agent_info"), dict) else {}
    user_info = info.get("user_info") if isinstance(info.get("user_info"), dict) else {}
    env_info = info.get("environment_info") if isinstance(info.get("environment_info"), dict) else {}
    assert isinstance(agent_info, dict) and isinstance(user_info, dict) and isinstance(env_info, dict)
    agent_model = agent_info.get("llm") if isinstance(agent_info.get("llm"), str) else None
    body, first_user, last_assistant = _convert_messages(sim["messages"], agent_model)
    task_id, trial = sim["task_id"], sim.get("trial")
    metadata: dict[str, Any] = {"source_format": SOURCE, "task_id": task_id, "trial": trial}
    for key in ("seed", "termination_reason", "duration", "agent_cost", "user_cost", "mode"):
        if sim.get(key) is not None:
            metadata[key] = sim[key]
    for key, value in (
        ("agent_model", agent_model),
        ("user_model", user_info.get("llm")),
        ("domain", env_info.get("domain_name")),
        ("policy", env_info.get("policy")),
    ):
        if value is not None:
            metadata[key] = value
    task = context.get("tasks_by_id", {}).get(str(task_id))
    if task is not None:
        metadata["_task"] = task
    if sim.get("reward_info") is not None:
        metadata["_reward_info"] = sim["reward_info"]
    termination = sim.get("termination_reason")
    termination = termination if isinstance(termination, str) else None
    status = "unset"
    if termination in _ERROR_TERMINATIONS:
        status = "error"
    elif termination in _DONE_TERMINATIONS:
        status = "ok"
    trace_id = sim.get("id")
    if not isinstance(trace_id, str | int) or isinstance(trace_id, bool):
        trace_id = f"{stem}:{task_id}:{trial}"
    return {
        "id": str(trace_id),
        "name": f"tau2:{metadata['domain']}" if "domain" in metadata else "tau2",
        "input": first_user,
        "output": last_assistant,
        "start": _time(sim.get("start_time")),
        "end": _time(sim.get("end_time")),
        "status": status,
        "metadata": metadata,
        "scores": _scores(sim.get("reward_info")),
        **body,
    }


def _context(document: dict[str, Any]) -> dict[str, Any]:
    tasks = document.get("tasks")
    by_id: dict[str, Any] = {}
    if isinstance(tasks, list):
        for task in tasks:
            if isinstance(task, dict) and "id" in task:
                by_id[str(task["id"])] = task
    return {"info": document.get("info"), "tasks_by_id": by_id}


def _simulation_files(path: Path) -> list[Path]:
    folder = path.parent / "simulations"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _simulation(sim: Any, context: dict[str, Any], stem: str) -> Trace:
    return validated(tau2_simulation_trace(sim, context, stem=stem))


def _is_results(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and not is_tau2_simulation(value)
        and ("simulations" in value or "simulation_index" in value or "info" in value)
    )


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    """tau2-bench results: the "json" layout, the "dir" layout (given its ``results.json``), or simulations
    (one per file, one per line, or a JSON array of them)."""
    stem = file_stem(source.path)
    last: tuple[Any, Any, dict[str, Any]] | None = None  # streamed: every item shares its info and tasks
    values = json_values(
        source.fh, report, pages=("simulations",), header=("info", "tasks"), one_document=True
    )
    for line, given, value in values:
        if not _is_results(value):
            try:
                yield line, given, clipped_retry(_simulation, value, {}, stem)
            except BadRecord as bad:
                report.skip(bad.reason, bad.detail, line=line, record=given)
            continue
        info, tasks = value.get("info"), value.get("tasks")
        if last is None or last[0] is not info or last[1] is not tasks:
            last = (info, tasks, _context(value))
        context = last[2]
        simulations = value.get("simulations")
        if isinstance(simulations, list):
            if not simulations:
                report.notes.append("the results file has no simulations: read as zero traces")
            for index, sim in enumerate(simulations, given or 1):
                try:
                    yield None, index, clipped_retry(_simulation, sim, context, stem)
                except BadRecord as bad:
                    report.skip(bad.reason, bad.detail, record=index)
            continue
        yield from _dir_layout(source.path, simulations, context, stem, report)


def _dir_layout(
    path: Path, simulations: Any, context: dict[str, Any], stem: str, report: IntakeReport
) -> Iterator[TraceLocated]:
    """The "dir" layout: ``results.json`` holds the run's info, ``simulations/*.json`` one run each."""
    files = _simulation_files(path)
    if not files:
        report.skip(
            "invalid-record",
            f"'simulations' is {kind_of(simulations)} and there is no simulations/ folder next to the file; "
            "a tau2 results file holds a 'simulations' list (json layout) or sits beside simulations/*.json "
            "(dir layout)",
            record=1,
        )
        return
    report.notes.append(f"dir layout: {len(files)} simulation file(s) read from {files[0].parent}")
    for index, sim_path in enumerate(files, 1):
        try:
            raw = sim_path.read_bytes()
        except OSError as exc:
            report.skip("unreadable", f"{sim_path.name}: {exc}", record=index)
            continue
        try:
            sim = orjson.loads(strip_bom(raw))
        except orjson.JSONDecodeError as exc:
            reason, detail = json_failure(raw, exc)
            report.skip(reason, f"{sim_path.name}: {detail}", record=index)
            continue
        try:
            yield None, index, clipped_retry(_simulation, sim, context, stem)
        except BadRecord as bad:
            report.skip(bad.reason, f"{sim_path.name}: {bad.detail}", record=index)


def _evidence(value: dict[str, Any]) -> str | None:
    """Why ``value`` is tau2-bench output (a results file, its dir-layout index, one simulation), or None."""
    if isinstance(value.get("simulations"), list) and ("tasks" in value or "info" in value):
        return "tau2-bench results ('info', 'tasks', 'simulations')"
    if "simulation_index" in value and "info" in value:
        return "a tau2-bench dir-layout results.json ('info', 'simulation_index'; simulations/ beside it)"
    if is_tau2_simulation(value):
        return "one tau2-bench simulation ('task_id', 'messages', 'termination_reason'/'reward_info')"
    return None


def _sniff(value: Any) -> str | None:
    return _evidence(value) if isinstance(value, dict) else None


TAU2_BENCH = FormatSpec(name="tau2-bench", sniff=_sniff, read=_read)
