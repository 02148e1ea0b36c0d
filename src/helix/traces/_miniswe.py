"""mini-SWE-agent trajectories (``*.traj.json``, trajectory_format "mini-swe-agent-1") -> one trace each.

The agent has one tool, bash, written as a fenced ```` ```bash ```` block in its reply; the environment
answers in the next ``user`` message (``<returncode>N</returncode><output>...``). A reply with exactly
one block is an action (the rule mini-SWE-agent applies): it becomes an assistant tool call ``bash`` and
the answer a linked tool event (status ``error`` on a non-zero return code or a timeout). Any other
``user`` message after the task is the harness's feedback (format errors) and stays a plain message.

Whether the patch resolved the issue is not in the trajectory: it is looked up next to it, in the
SWE-bench harness's per-instance ``report.json`` (``logs/<id>.report.json`` or ``logs/<id>/report.json``),
an ``sb-cli`` report or a ``results_summary.json``, and carried as the ``resolved`` score. The test-level
report is ground truth (``_swebench_report``, never shown to judges).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from ._format import FormatSpec, Source, TraceLocated
from ._json import json_values, record_traces, validated
from ._model import Trace
from ._report import IntakeReport
from ._values import BadRecord, kind_of, shown, usage_from

__all__ = ["MINI_SWE_AGENT", "bash_actions", "miniswe_trace", "resolved_label"]

SOURCE = "mini-swe-agent"

# mini-SWE-agent v1's own action pattern: a ```bash fence, a newline, the command, a newline, a fence.
_ACTION = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"^\s*<returncode>(-?\d+)</returncode>")
_TIMEOUT = re.compile(r"^\s*The last command <command>.*?</command> timed out", re.DOTALL)
_PR = re.compile(
    r"<pr_description>\s*(?:Consider the following PR description:\s*)?(.*?)\s*</pr_description>", re.DOTALL
)
_LABEL_FILES_UP = 2
_SAFE_ID = re.compile(
    r"[A-Za-z0-9_.+\-]{1,200}"
)  # how many folders above the trajectory's to look for label files


def is_miniswe_trajectory(value: Any) -> bool:
    """Whether ``value`` is a mini-SWE-agent trajectory object."""
    if not isinstance(value, dict):
        return False
    fmt = value.get("trajectory_format")
    if isinstance(fmt, str) and fmt.startswith("mini-swe-agent"):
        return True
    return (
        "instance_id" in value
        and isinstance(value.get("messages"), list)
        and isinstance(value.get("info"), dict)
    )


def bash_actions(text: str) -> list[str]:
    """The bash commands fenced in an assistant reply (one means an action; 0 or 2+ a format error)."""
    return [m.strip() for m in _ACTION.findall(text)]


# -- labels from the evaluation harness -------------------------------------------------------------------


@lru_cache(maxsize=64)
def _label_file(path: Path, mtime_ns: int) -> dict[str, bool]:
    """``{instance_id: resolved}`` from an sb-cli report or a results summary (cached per file version)."""
    try:
        value = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    labels: dict[str, bool] = {}
    if isinstance(value, dict):
        instances = value.get("instances")
        if isinstance(instances, list):  # results_summary.json
            for row in instances:
                if isinstance(row, dict) and isinstance(row.get("resolved"), bool):
                    labels[str(row.get("instance_id"))] = row["resolved"]
        for key, resolved in (("resolved_ids", True), ("unresolved_ids", False)):  # sb-cli report
            ids = value.get(key)
            if isinstance(ids, list):
                labels.update({str(i): resolved for i in ids})
    return labels


def _read_report(path: Path, instance_id: str) -> dict[str, Any] | None:
    try:
        value = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if isinstance(value, dict) and isinstance(value.get(instance_id), dict):
        value = value[instance_id]  # the harness nests the report under the instance id
    return value if isinstance(value, dict) and isinstance(value.get("resolved"), bool) else None


def resolved_label(traj_path: Path, instance_id: str) -> tuple[bool, str, dict[str, Any] | None] | None:
    """``(resolved, where it came from, the per-instance report)`` for ``instance_id``, or ``None``.

    Looks in the trajectory's folder and up to two above it, the most specific source first. The id
    comes from the file: one that could leave the folder or is not a plain name is not looked up.
    """
    if not _SAFE_ID.fullmatch(instance_id) or instance_id in (".", ".."):
        return None
    try:
        return _find_label(traj_path, instance_id)
    except OSError:  # a name the file system refuses, a folder we may not list
        return None


def _find_label(traj_path: Path, instance_id: str) -> tuple[bool, str, dict[str, Any] | None] | None:
    folders = [traj_path.parent, *list(traj_path.parents)[1 : 1 + _LABEL_FILES_UP]]
    for folder in folders:
        for candidate in (
            folder / "logs" / f"{instance_id}.report.json",
            folder / "logs" / instance_id / "report.json",
            folder / f"{instance_id}.report.json",
        ):
            if candidate.is_file():
                report = _read_report(candidate, instance_id)
                if report is not None:
                    return report["resolved"], candidate.name, report
    for folder in folders:
        for name in ("sb-cli-report.json", "results_summary.json"):
            candidate = folder / name
            if candidate.is_file():
                labels = _label_file(candidate, candidate.stat().st_mtime_ns)
                if instance_id in labels:
                    return labels[instance_id], name, None
    return None


# -- conversion ---------------------------------------------------------------------------------------------


def _text(message: dict[str, Any], where: str) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if content is None:
        return ""
    raise BadRecord(f"{where}.content is {kind_of(content)}; expected a string")


_USAGE = {
    "input_tokens": ("prompt_tokens",),
    "output_tokens": ("completion_tokens",),
    "total_tokens": ("total_tokens",),
}


def _response_fields(message: dict[str, Any]) -> tuple[str | None, dict[str, int] | None, dict[str, Any]]:
    extra = message.get("extra")
    response = extra.get("response") if isinstance(extra, dict) else None
    if not isinstance(response, dict):
        return None, None, {}
    model = response.get("model") if isinstance(response.get("model"), str) else None
    usage = usage_from(response.get("usage"), _USAGE)
    attributes = {k: response[k] for k in ("id", "provider") if isinstance(response.get(k), str)}
    return model, usage, attributes


def miniswe_trace(value: Any, *, labels: Path | None = None, where: str = "the record") -> dict[str, Any]:
    """The :class:`Trace` fields of one trajectory; ``labels`` is its file, to find the resolved label."""
    if not isinstance(value, dict):
        raise BadRecord(
            f"expected a mini-SWE-agent trajectory object, got a JSON {kind_of(value)}", "wrong-type"
        )
    if not is_miniswe_trajectory(value):
        keys = ", ".join(sorted(map(str, value))[:8])
        raise BadRecord(
            f"{where} is not a mini-SWE-agent trajectory (keys {{{keys}}}); expected 'instance_id', "
            "'info' and 'messages'",
            "unrecognised-record",
        )
    raw_messages = value.get("messages")
    if not isinstance(raw_messages, list):
        raise BadRecord(f"'messages' is {kind_of(raw_messages)}; expected a list")
    info = value.get("info") if isinstance(value.get("info"), dict) else {}
    assert isinstance(info, dict)
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    model_config = (
        config.get("model") if isinstance(config, dict) and isinstance(config.get("model"), dict) else {}
    )
    assert isinstance(model_config, dict)
    config_model = model_config.get("model_name") if isinstance(model_config.get("model_name"), str) else None
    instance_id = value.get("instance_id")
    if not isinstance(instance_id, str) or not instance_id:
        raise BadRecord(f"'instance_id' is {shown(instance_id)}; expected a non-empty string")

    events: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    task: str | None = None
    pending: dict[str, Any] | None = None  # the bash call awaiting its observation
    for i, message in enumerate(raw_messages):
        where_i = f"messages[{i}]"
        if not isinstance(message, dict):
            raise BadRecord(f"{where_i} is {kind_of(message)}; expected a message object")
        role = message.get("role")
        text = _text(message, where_i)
        event_id = f"msg-{i}"
        if role == "system":
            messages.append({"role": "system", "content": text})
            events.append({"id": event_id, "kind": "other", "name": "system", "input": text})
        elif role == "assistant":
            commands = bash_actions(text)
            model, usage, attributes = _response_fields(message)
            calls = []
            if len(commands) == 1:
                pending = {"id": f"bash-{i}", "name": "bash", "arguments": {"command": commands[0]}}
                calls.append(pending)
            else:
                pending = None
                attributes["bash_blocks"] = len(commands)
            msg = {"role": "assistant", "content": text, "tool_calls": calls}
            messages.append(msg)
            events.append(
                {
                    "id": event_id,
                    "kind": "llm",
                    "name": "assistant",
                    "output": [msg],
                    "model": model or config_model,
                    "usage": usage,
                    "attributes": attributes,
                }
            )
        elif role in ("user", "tool"):
            if task is None and role == "user":
                task = text
                messages.append({"role": "user", "content": text})
                events.append({"id": event_id, "kind": "user", "name": "user", "input": text})
                continue
            if pending is not None:
                code = _RETURNCODE.match(text)
                returncode = int(code.group(1)) if code else None
                timed_out = code is None and _TIMEOUT.match(text) is not None
                failed = timed_out or (returncode is not None and returncode != 0)
                error = "timed out" if timed_out else f"returncode {returncode}" if failed else None
                messages.append(
                    {"role": "tool", "content": text, "tool_call_id": pending["id"], "name": "bash"}
                )
                events.append(
                    {
                        "id": event_id,
                        "kind": "tool",
                        "name": "bash",
                        "input": dict(pending["arguments"]),
                        "output": text,
                        "status": "error" if failed else "ok",
                        "error": error,
                        "tool_call_id": pending["id"],
                        "attributes": {"returncode": returncode} if returncode is not None else {},
                    }
                )
                pending = None
            else:  # the harness's feedback on a reply without exactly one action
                messages.append({"role": "user", "content": text})
                events.append({"id": event_id, "kind": "other", "name": "feedback", "input": text})
        else:
            raise BadRecord(f"{where_i}.role is {shown(role)}; expected system, user, assistant or tool")

    metadata: dict[str, Any] = {"source_format": SOURCE, "instance_id": instance_id}
    for key in ("exit_status", "mini_version"):
        if isinstance(info.get(key), str):
            metadata[key] = info[key]
    stats = info.get("model_stats")
    if isinstance(stats, dict):
        for key, target in (("instance_cost", "agent_cost"), ("api_calls", "api_calls")):
            if isinstance(stats.get(key), int | float) and not isinstance(stats.get(key), bool):
                metadata[target] = stats[key]
    if config_model is not None:
        metadata["agent_model"] = config_model
    scores: list[dict[str, Any]] = []
    if labels is not None:
        found = resolved_label(labels, instance_id)
        if found is not None:
            resolved, source_file, report = found
            scores.append(
                {"name": "resolved", "value": resolved, "source": "swebench", "comment": source_file}
            )
            if report is not None:
                metadata["_swebench_report"] = report
    submission = info.get("submission")
    pr = _PR.search(task) if task else None
    return {
        "id": instance_id,
        "name": "mini-swe-agent",
        "input": pr.group(1) if pr else task,
        "output": submission if isinstance(submission, str) else None,
        "status": _status(info.get("exit_status")),
        "metadata": metadata,
        "events": events,
        "messages": messages,
        "scores": scores,
    }


def _status(exit_status: Any) -> str:
    """``ok`` when the agent submitted, ``error`` for any other exit (limits exceeded, a crash)."""
    if exit_status == "Submitted":
        return "ok"
    return "error" if isinstance(exit_status, str) and exit_status else "unset"


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    """mini-SWE-agent ``*.traj.json`` (one trajectory per file), or JSONL / a JSON array of them."""

    def convert(value: Any, line: int | None, record: int | None) -> Trace:
        return validated(miniswe_trace(value, labels=source.path))

    return record_traces(json_values(source.fh, report, one_document=True), report, convert)


def _sniff(value: Any) -> str | None:
    if is_miniswe_trajectory(value):
        return "a mini-SWE-agent trajectory ('instance_id', 'info', 'messages')"
    return None


MINI_SWE_AGENT = FormatSpec(name="mini-swe-agent", sniff=_sniff, read=_read)
