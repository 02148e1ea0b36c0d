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
from typing import IO, Any

import orjson

from ._chat import BadRecord, convert_chat
from ._coerce import validate_trace
from ._depth import clipped_retry
from ._model import Trace
from ._report import IntakeReport
from ._source import file_stem, read_all, read_head, strip_bom
from ._stream import is_big, stream_items, stream_value

__all__ = ["is_tau2_simulation", "read_tau2_bench", "tau2_simulation_trace"]

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


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _usage(raw: Any) -> dict[str, int] | None:
    if not isinstance(raw, dict):
        return None
    usage = {}
    for source, target in (
        ("prompt_tokens", "input_tokens"),
        ("completion_tokens", "output_tokens"),
        ("total_tokens", "total_tokens"),
    ):
        value = raw.get(source)
        if isinstance(value, int) and not isinstance(value, bool):
            usage[target] = value
    return usage or None


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
        raise BadRecord(f"{where}.tool_calls is {_kind(raw)}; expected a list")
    return [c for c in raw if isinstance(c, dict)]


def _as_chat(message: Any, where: str) -> dict[str, Any]:
    """A tau2 message in the OpenAI shape :func:`convert_chat` reads (tool results keyed by call id)."""
    if not isinstance(message, dict):
        raise BadRecord(f"{where} is {_kind(message)}; expected a message object")
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
        usage, cost = _usage(raw.get("usage")), _number(raw.get("cost"))
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
    reward = _number(reward_info.get("reward"))
    if reward is not None:
        basis = reward_info.get("reward_basis")
        comment = f"reward basis: {', '.join(map(str, basis))}" if isinstance(basis, list) and basis else None
        scores.append({"name": "reward", "value": reward, "source": SOURCE, "comment": comment})
    breakdown = reward_info.get("reward_breakdown")
    if isinstance(breakdown, dict):
        for key, value in breakdown.items():
            number = _number(value)
            if number is not None:
                scores.append({"name": f"reward_{str(key).lower()}", "value": number, "source": SOURCE})
    return scores


def tau2_simulation_trace(sim: Any, context: dict[str, Any], *, stem: str) -> dict[str, Any]:
    """The :class:`Trace` fields of one SimulationRun; ``context`` is the results file's info and tasks.

    Raises :class:`BadRecord` when ``sim`` is not a simulation or a message is malformed.
    """
    if not isinstance(sim, dict):
        raise BadRecord(f"expected a tau2 simulation object, got a JSON {_kind(sim)}", "wrong-type")
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
    return validate_trace(tau2_simulation_trace(sim, context, stem=stem))


def _big_results(
    fh: IO[bytes], report: IntakeReport, stem: str
) -> Iterator[tuple[int | None, int | None, Trace]]:
    """A big "json" layout results file simulation by simulation (see :mod:`helix.traces._stream`)."""
    context = _context({"info": stream_value(fh, "info"), "tasks": stream_value(fh, "tasks")})
    for index, sim in stream_items(fh, "simulations.item", report):
        try:
            yield None, index, clipped_retry(_simulation, sim, context, stem)
        except BadRecord as bad:
            report.skip(bad.reason, bad.detail, record=index)


def read_tau2_bench(
    fh: IO[bytes], path: Path, report: IntakeReport
) -> Iterator[tuple[int | None, int | None, Trace]]:
    """tau2-bench results: the "json" layout, the "dir" layout (given its ``results.json``), or simulations."""
    from ._readers import _json_failure, _unreadable  # here: _readers imports this module

    stem = file_stem(path)
    on_error = _unreadable(report)
    head, single = read_head(fh, on_error)
    head = head.strip()
    if head.startswith(b"[") or (head.startswith(b"{") and not single and _is_line_value(head)):
        # JSONL of simulations (one per line) or an array of them.
        yield from _simulation_lines(fh, report, stem)
        return
    if is_big(fh) and stream_value(fh, "simulations.item") is not None:
        yield from _big_results(fh, report, stem)
        return
    content = read_all(fh, on_error)
    if content is None or not content.strip():
        return
    try:
        document = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        if head == b"{" or single:  # a pretty-printed (or one-line) document that is broken
            reason, detail = _json_failure(content, exc)
            report.skip(reason, f"the file is not one valid JSON document: {detail}", record=1)
            return
        report.notes.append(f"the file is not one valid JSON document ({exc}); it was read line by line")
        del content
        fh.seek(0)
        yield from _simulation_lines(fh, report, stem)
        return
    del content
    if is_tau2_simulation(document):
        try:
            yield None, 1, clipped_retry(_simulation, document, {}, stem)
        except BadRecord as bad:
            report.skip(bad.reason, bad.detail, record=1)
        return
    if not isinstance(document, dict):
        report.skip("wrong-type", f"expected a tau2 results object, got a JSON {_kind(document)}", record=1)
        return
    context = _context(document)
    simulations = document.get("simulations")
    if isinstance(simulations, list):
        if not simulations:
            report.notes.append("the results file has no simulations: read as zero traces")
        for index, sim in enumerate(simulations, 1):
            try:
                yield None, index, clipped_retry(_simulation, sim, context, stem)
            except BadRecord as bad:
                report.skip(bad.reason, bad.detail, record=index)
        return
    files = _simulation_files(path)
    if not files:
        report.skip(
            "invalid-record",
            f"'simulations' is {_kind(simulations)} and there is no simulations/ folder next to the file; "
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
            reason, detail = _json_failure(raw, exc)
            report.skip(reason, f"{sim_path.name}: {detail}", record=index)
            continue
        try:
            yield None, index, clipped_retry(_simulation, sim, context, stem)
        except BadRecord as bad:
            report.skip(bad.reason, f"{sim_path.name}: {bad.detail}", record=index)


def _is_line_value(head: bytes) -> bool:
    """Whether the first line is a whole JSON value by itself (JSONL, or a one-line document)."""
    try:
        orjson.loads(head)
    except orjson.JSONDecodeError:
        return False
    return True


def _simulation_lines(
    fh: IO[bytes], report: IntakeReport, stem: str
) -> Iterator[tuple[int | None, int | None, Trace]]:
    from ._readers import _iter_values

    def handle(value: Any, line: int | None, record: int | None) -> Trace:
        if isinstance(value, dict) and not is_tau2_simulation(value) and "simulations" in value:
            raise BadRecord("a tau2 results object inside a JSONL file; give it its own .json file")
        return _simulation(value, {}, stem)

    yield from _iter_values(fh, report, handle, conversation_list=False)
