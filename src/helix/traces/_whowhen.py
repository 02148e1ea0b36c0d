"""Who&When failure-attribution logs (Magentic-One "Hand-Crafted", AG2 "Algorithm-Generated") -> traces.

Each ``history`` step becomes one event ``step-<i>`` (``i`` = the index the human labels use), so the
labelled decisive mistake is ``step-<mistake_step>``. The human question is a ``user`` event; agent steps
are ``llm`` events named after the agent (``Orchestrator (-> WebSurfer)`` is agent ``Orchestrator``, with
the channel kept in attributes); a code-execution step (``Computer_terminal`` / ``ComputerTerminal``
answering ``exitcode: N ...``) is a ``tool`` event whose input is the code blocks of the step that asked
for it. The outcome (every run failed) and the labels (mistake agent and step, with the reason) are
:class:`Score`; the reference answer is ground truth in ``_ground_truth``, never shown to judges.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ._format import FormatSpec, Source, TraceLocated
from ._json import json_values, record_traces, validated
from ._model import Trace
from ._report import IntakeReport
from ._source import file_stem
from ._values import BadRecord, kind_of

__all__ = ["WHO_AND_WHEN", "who_and_when_trace"]

SOURCE = "who-and-when"

_TERMINALS = frozenset({"computer_terminal", "computerterminal"})
_EXIT = re.compile(r"^\s*exitcode:\s*(-?\d+)")
_CODE = re.compile(r"```(\w*)[ \t]*\n(.*?)```", re.DOTALL)
_AGENT = re.compile(r"^(.*?)\s*\((.*)\)\s*$")


def is_who_and_when(value: Any) -> bool:
    """Whether ``value`` is a Who&When log (a ``history`` list with the question or the labels)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("history"), list)
        and ("mistake_agent" in value or "question" in value)
    )


def _speaker(step: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """``(agent, channel, source role)``: Hand-Crafted names the speaker in ``role``, AG2 in ``name``."""
    role = step.get("role")
    name = step.get("name")
    source_role = role if isinstance(role, str) else None
    label = name if isinstance(name, str) and name else source_role or "unknown"
    match = _AGENT.match(label)
    if match and match.group(1):
        return match.group(1), match.group(2), source_role
    return label, None, source_role


def _code_blocks(text: str) -> list[dict[str, str]]:
    return [{"language": lang or "text", "code": code.rstrip("\n")} for lang, code in _CODE.findall(text)]


def who_and_when_trace(value: Any, *, stem: str, where: str = "the record") -> dict[str, Any]:
    """The :class:`Trace` fields of one Who&When log."""
    if not isinstance(value, dict):
        raise BadRecord(f"expected a Who&When log object, got a JSON {kind_of(value)}", "wrong-type")
    if not is_who_and_when(value):
        keys = ", ".join(sorted(map(str, value))[:8])
        raise BadRecord(
            f"{where} is not a Who&When log (keys {{{keys}}}); expected 'history' and 'question'",
            "unrecognised-record",
        )
    history: list[Any] = value["history"]
    subset = "algorithm-generated" if "system_prompt" in value or "is_correct" in value else "hand-crafted"
    events: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    last_code: tuple[int, list[dict[str, str]]] | None = None
    output: str | None = None
    for i, step in enumerate(history):
        if not isinstance(step, dict):
            raise BadRecord(f"history[{i}] is {kind_of(step)}; expected a step object")
        content = step.get("content")
        if content is not None and not isinstance(content, str):
            raise BadRecord(f"history[{i}].content is {kind_of(content)}; expected a string")
        text = content or ""
        agent, channel, source_role = _speaker(step)
        attributes: dict[str, Any] = {"agent": agent}
        if channel is not None:
            attributes["channel"] = channel
        if source_role is not None:
            attributes["source_role"] = source_role
        event_id = f"step-{i}"
        exit_code = _EXIT.match(text)
        if agent.lower() == "human" or (i == 0 and source_role == "human"):
            messages.append({"role": "user", "content": text})
            events.append(
                {"id": event_id, "kind": "user", "name": "user", "input": text, "attributes": attributes}
            )
        elif agent.lower() in _TERMINALS and exit_code is not None:
            code = int(exit_code.group(1))
            if last_code is not None:
                attributes["requested_by"] = f"step-{last_code[0]}"
            messages.append({"role": "tool", "content": text, "name": agent})
            events.append(
                {
                    "id": event_id,
                    "kind": "tool",
                    "name": agent,
                    "input": {"code": last_code[1]} if last_code is not None else None,
                    "output": text,
                    "status": "ok" if code == 0 else "error",
                    "error": f"exitcode {code}" if code != 0 else None,
                    "attributes": {**attributes, "exitcode": code},
                }
            )
            last_code = None
        else:
            blocks = _code_blocks(text)
            if blocks:
                last_code = (i, blocks)
            msg = {"role": "assistant", "content": text, "name": agent}
            messages.append(msg)
            events.append(
                {"id": event_id, "kind": "llm", "name": agent, "output": [msg], "attributes": attributes}
            )
            if text.strip():
                output = text

    metadata: dict[str, Any] = {"source_format": SOURCE, "subset": subset}
    for key in ("question_ID", "level"):
        if value.get(key) is not None:
            metadata[key] = value[key]
    if isinstance(value.get("system_prompt"), dict):
        metadata["system_prompts"] = value["system_prompt"]
    for key in ("ground_truth", "mistake_reason", "mistake_type", "labels"):
        if value.get(key) is not None:
            metadata[f"_{key}"] = value[key]
    scores: list[dict[str, Any]] = []
    outcome_key = "is_correct" if "is_correct" in value else "is_corrected"
    outcome = value.get(outcome_key)
    if isinstance(outcome, str) and outcome.lower() in ("true", "false"):
        outcome = outcome.lower() == "true"
    if isinstance(outcome, bool):
        scores.append(
            {"name": "correct", "value": outcome, "source": SOURCE, "comment": f"from {outcome_key!r}"}
        )
    reason = value.get("mistake_reason") if isinstance(value.get("mistake_reason"), str) else None
    if isinstance(value.get("mistake_agent"), str):
        scores.append(
            {"name": "mistake_agent", "value": value["mistake_agent"], "source": SOURCE, "comment": reason}
        )
    step = value.get("mistake_step")
    if isinstance(step, int | str) and not isinstance(step, bool) and str(step).strip():
        scores.append(
            {
                "name": "mistake_step",
                "value": str(step).strip(),
                "source": SOURCE,
                "comment": f"history index; the event is step-{str(step).strip()}",
            }
        )
    question = value.get("question")
    question_id = value.get("question_ID")
    suffix = (
        f"/{question_id}" if isinstance(question_id, str | int) and not isinstance(question_id, bool) else ""
    )
    return {
        "id": f"{subset}/{stem}{suffix}",
        "name": f"who-and-when:{subset}",
        "input": question if isinstance(question, str) else None,
        "output": output,
        "metadata": metadata,
        "events": events,
        "messages": messages,
        "scores": scores,
    }


def _read(source: Source, report: IntakeReport) -> Iterator[TraceLocated]:
    """Who&When logs: one JSON object per file (as published), or JSONL / a JSON array of them."""
    stem = file_stem(source.path)

    def convert(value: Any, line: int | None, record: int | None) -> Trace:
        return validated(who_and_when_trace(value, stem=stem))

    return record_traces(json_values(source.fh, report, one_document=True), report, convert)


def _sniff(value: Any) -> str | None:
    if is_who_and_when(value):
        return "a Who&When log ('history' with 'question'/'mistake_agent')"
    return None


WHO_AND_WHEN = FormatSpec(name="who-and-when", sniff=_sniff, read=_read)
