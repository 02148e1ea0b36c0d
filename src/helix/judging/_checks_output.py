"""Built-in code checks about the final output and the size of a run (turns, tool calls).

The final output is the last assistant message with text (when the trace has messages), else
``Trace.output``, else the text of the last LLM event. A run with no output fails output checks.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..traces import Trace
from ._checks_tools import shorten
from ._checks_view import CheckOutcome, final_output, trace_view

__all__ = [
    "FinalOutputContainsArgs",
    "FinalOutputJsonSchemaArgs",
    "FinalOutputMatchesArgs",
    "MaxToolCallsArgs",
    "MaxTurnsArgs",
    "final_output_contains",
    "final_output_json_schema",
    "final_output_matches",
    "max_tool_calls",
    "max_turns",
]

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE, "a": re.ASCII}


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class FinalOutputMatchesArgs(_Args):
    """Arguments of ``final_output_matches``: a regex searched in the output, with flags from ``imsxa``."""

    pattern: str
    flags: str = ""

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, value: str) -> str:
        unknown = sorted(set(value) - set(_FLAGS))
        if unknown:
            raise ValueError(
                f"unknown regex flag(s) {''.join(unknown)!r} in {value!r}; use letters from 'imsxa'"
            )
        return value

    @model_validator(mode="after")
    def _pattern_compiles(self) -> FinalOutputMatchesArgs:
        try:
            self.compiled()
        except re.error as exc:
            raise ValueError(f"pattern {self.pattern!r} is not a valid regex ({exc})") from exc
        return self

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern."""
        flags = 0
        for letter in self.flags:
            flags |= _FLAGS[letter]
        return re.compile(self.pattern, flags)


class FinalOutputContainsArgs(_Args):
    """Arguments of ``final_output_contains``."""

    text: str = Field(min_length=1)
    case_sensitive: bool = False


class FinalOutputJsonSchemaArgs(_Args):
    """Arguments of ``final_output_json_schema``: a JSON Schema the output must satisfy."""

    schema_: dict[str, Any] = Field(alias="schema")

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            jsonschema.validators.validator_for(value).check_schema(value)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message}") from exc
        return value


class MaxTurnsArgs(_Args):
    """Arguments of ``max_turns`` (turns are assistant messages, or LLM events without messages)."""

    limit: int = Field(ge=0)


class MaxToolCallsArgs(_Args):
    """Arguments of ``max_tool_calls``: ``tool`` limits the count to one tool."""

    limit: int = Field(ge=0)
    tool: str | None = None


def _no_output() -> CheckOutcome:
    return CheckOutcome(passed=False, explanation="the run produced no final output to check.")


def final_output_matches(trace: Trace, /, **args: Any) -> CheckOutcome:
    """Passes when the regex ``pattern`` is found in the final output."""
    a = FinalOutputMatchesArgs.model_validate(args)
    text, _, evidence, where = final_output(trace)
    if text is None:
        return _no_output()
    match = a.compiled().search(text)
    if match:
        return CheckOutcome(
            passed=True,
            explanation=f"the final output ({where}) matches /{a.pattern}/ at {shorten(match.group(0), 60)!r}.",
            evidence=evidence,
        )
    return CheckOutcome(
        passed=False,
        explanation=f"the final output ({where}) does not match /{a.pattern}/: {shorten(text)!r}.",
        evidence=evidence,
    )


def final_output_contains(trace: Trace, /, **args: Any) -> CheckOutcome:
    """Passes when ``text`` occurs in the final output (case-insensitive unless ``case_sensitive``)."""
    a = FinalOutputContainsArgs.model_validate(args)
    text, _, evidence, where = final_output(trace)
    if text is None:
        return _no_output()
    found = a.text in text if a.case_sensitive else a.text.casefold() in text.casefold()
    how = "" if a.case_sensitive else " (ignoring case)"
    if found:
        return CheckOutcome(
            passed=True,
            explanation=f"the final output ({where}) contains {a.text!r}{how}.",
            evidence=evidence,
        )
    return CheckOutcome(
        passed=False,
        explanation=f"the final output ({where}) does not contain {a.text!r}{how}: {shorten(text)!r}.",
        evidence=evidence,
    )


_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


def final_output_json_schema(trace: Trace, /, **args: Any) -> CheckOutcome:
    """Passes when the final output is JSON (optionally inside one markdown fence) valid for ``schema``."""
    a = FinalOutputJsonSchemaArgs.model_validate(args)
    text, data, evidence, where = final_output(trace)
    if text is None:
        return _no_output()
    if data is None:
        fenced = _FENCE.match(text)
        try:
            data = json.loads(fenced.group(1) if fenced else text)
        except ValueError as exc:
            return CheckOutcome(
                passed=False,
                explanation=f"the final output ({where}) is not JSON ({exc}): {shorten(text)!r}.",
                evidence=evidence,
            )
    validator = jsonschema.validators.validator_for(a.schema_)(a.schema_)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        return CheckOutcome(
            passed=False,
            explanation=f"the final output ({where}) breaks the schema at {first.json_path}: "
            f"{shorten(first.message)}{more}.",
            evidence=evidence,
        )
    return CheckOutcome(
        passed=True,
        explanation=f"the final output ({where}) is JSON valid against the schema.",
        evidence=evidence,
    )


def max_turns(trace: Trace, /, **args: Any) -> CheckOutcome:
    """Passes when the agent took at most ``limit`` turns (assistant messages)."""
    a = MaxTurnsArgs.model_validate(args)
    view = trace_view(trace)
    what = "assistant messages" if view.unit == "message" else "LLM events"
    n = len(view.turns)
    if n <= a.limit:
        return CheckOutcome(passed=True, explanation=f"the agent took {n} turn(s) ({what}); limit {a.limit}.")
    crossing = view.turns[a.limit]
    return CheckOutcome(
        passed=False,
        explanation=f"the agent took {n} turns ({what}); limit {a.limit}, crossed at {view.at(crossing)}.",
        evidence=(crossing,),
    )


def max_tool_calls(trace: Trace, /, **args: Any) -> CheckOutcome:
    """Passes when at most ``limit`` tool calls were made (of ``tool`` only, when given)."""
    a = MaxToolCallsArgs.model_validate(args)
    view = trace_view(trace)
    calls = [c for c in view.calls if a.tool is None or c.tool == a.tool]
    what = f"call(s) to {a.tool!r}" if a.tool else "tool call(s)"
    if len(calls) <= a.limit:
        return CheckOutcome(passed=True, explanation=f"the agent made {len(calls)} {what}; limit {a.limit}.")
    crossing = calls[a.limit]
    return CheckOutcome(
        passed=False,
        explanation=f"the agent made {len(calls)} {what}; limit {a.limit}, crossed by {crossing.tool!r} "
        f"at {view.at(crossing.index)}.",
        evidence=(crossing.index,),
    )
