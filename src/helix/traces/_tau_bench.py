"""tau-bench results: a JSON array of ``{task_id, trial, reward, info, traj}`` records (or one per line)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._chat import convert_chat
from ._format import FormatSpec, Source, TraceLocated
from ._json import json_values, record_traces, validated
from ._model import Trace
from ._report import IntakeReport
from ._source import file_stem
from ._values import BadRecord, kind_of, number

__all__ = ["TAU_BENCH"]


def _sniff(value: Any) -> str | None:
    if isinstance(value, dict):
        return (
            "a tau-bench record with 'task_id' and 'traj'" if "task_id" in value and "traj" in value else None
        )
    if isinstance(value, list) and value and isinstance(value[0], dict):
        first = value[0]
        if "task_id" in first and "traj" in first:
            return "a list of tau-bench records ('task_id', 'traj', ...)"
    return None


def _converter(source: Source) -> Any:
    stem = file_stem(source.path)

    def convert(value: Any, line: int | None, record: int | None) -> Trace:
        if not isinstance(value, dict):
            raise BadRecord(f"expected a tau-bench record object, got a JSON {kind_of(value)}", "wrong-type")
        missing = [key for key in ("task_id", "trial", "traj") if key not in value]
        if missing:
            fmt, evidence = source.classify(value, "the record")
            hint = f"; read the file with format={fmt!r}" if fmt not in (None, "tau-bench") else ""
            raise BadRecord(f"{evidence}, missing {missing}{hint}", "unrecognised-record")
        traj, info = value["traj"], value.get("info") or {}
        if not isinstance(traj, list):
            raise BadRecord(f"'traj' is {kind_of(traj)}; expected a list of chat messages")
        if not isinstance(info, dict):
            raise BadRecord(f"'info' is {kind_of(info)}; expected an object")
        converted = convert_chat(traj, where="traj")
        metadata: dict[str, Any] = {
            "source_format": "tau-bench",
            "task_id": value["task_id"],
            "trial": value["trial"],
        }
        for key in ("source", "user_cost"):
            if key in info:
                metadata[key] = info[key]
        # The task (the user simulator's goal, the gold actions) and the reward breakdown are ground
        # truth: "_"-prefixed metadata is never shown to judges.
        for key in ("task", "reward_info"):
            if key in info:
                metadata[f"_{key}"] = info[key]
        status = "unset"
        if "error" in info:
            status = "error"
            metadata["error"] = info["error"]
        scores: list[dict[str, Any]] = []
        reward = number(value.get("reward"))
        if reward is not None:
            scores.append({"name": "reward", "value": reward, "source": "tau-bench"})
        reward_info = info.get("reward_info")
        sub = reward_info.get("info") if isinstance(reward_info, dict) else None
        if isinstance(sub, dict):
            for key in ("r_actions", "r_outputs"):
                found = number(sub.get(key))
                if found is not None:
                    scores.append({"name": key, "value": found, "source": "tau-bench"})
        return validated(
            {
                "id": f"{stem}:{value['task_id']}:{value['trial']}",
                "input": converted.input,
                "output": converted.output,
                "status": status,
                "metadata": metadata,
                "events": converted.events,
                "messages": converted.messages,
                "scores": scores,
            }
        )

    return convert


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    return record_traces(json_values(source.fh, report), report, _converter(source))


TAU_BENCH = FormatSpec(name="tau-bench", sniff=_sniff, read=_read)
