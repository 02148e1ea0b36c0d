"""Built-in code checks about tool use: called, not called, ordering, errors handled, loops.

Argument predicates (``where``, ``where_regex``) look at a call's arguments parsed from JSON. A
named argument may be a dotted path (``customer.id``). A value that is a string holding JSON is
compared as that JSON; any other string compares as text (``123`` equals ``"123"``). When a call's
arguments are not JSON at all, the whole argument text stands in for every named argument.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..traces import Trace
from ._checks_view import CheckOutcome, Step, TraceView, parse_arguments, trace_view

__all__ = [
    "NoRepeatedToolCallArgs",
    "NoUnhandledToolErrorArgs",
    "ToolCalledArgs",
    "ToolCalledBeforeArgs",
    "ToolNotCalledArgs",
    "no_repeated_tool_call",
    "no_unhandled_tool_error",
    "shorten",
    "tool_called",
    "tool_called_before",
    "tool_not_called",
]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ToolNotCalledArgs(_Args):
    """Arguments of ``tool_not_called`` (and the shared part of ``tool_called``)."""

    tool: str = Field(min_length=1)
    where: dict[str, Any] = Field(default_factory=dict)
    where_regex: dict[str, str] = Field(default_factory=dict)

    @field_validator("where_regex")
    @classmethod
    def _patterns_compile(cls, value: dict[str, str]) -> dict[str, str]:
        for arg, pattern in value.items():
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"pattern for argument {arg!r} is not a valid regex ({exc}): {pattern!r}"
                ) from exc
        return value


class ToolCalledArgs(ToolNotCalledArgs):
    """Arguments of ``tool_called``."""

    min_times: int = Field(default=1, ge=1)


class ToolCalledBeforeArgs(_Args):
    """Arguments of ``tool_called_before``: ``then`` may be one tool name or a list of them."""

    first: str = Field(min_length=1)
    then: list[str] = Field(min_length=1)

    @field_validator("then", mode="before")
    @classmethod
    def _one_name(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _first_not_in_then(self) -> ToolCalledBeforeArgs:
        if self.first in self.then:
            raise ValueError(f"{self.first!r} is both `first` and in `then`; list it in one place only")
        return self


class NoUnhandledToolErrorArgs(_Args):
    """``no_unhandled_tool_error`` takes no arguments."""


class NoRepeatedToolCallArgs(_Args):
    """Arguments of ``no_repeated_tool_call``."""

    max_repeats: int = Field(default=2, ge=1)


# ----------------------------------------------------------------------------- argument matching


def shorten(value: Any, limit: int = 120) -> str:
    """A one-line, bounded rendering of a value for explanations."""
    text = value if isinstance(value, str) else _as_text(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)


def _lookup(arguments: Any, name: str) -> tuple[bool, Any]:
    if isinstance(arguments, str):
        return True, arguments
    if not isinstance(arguments, dict):
        return False, None
    if name in arguments:
        return True, arguments[name]
    current: Any = arguments
    for part in name.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return False, None
    return True, current


def _same(expected: Any, actual: Any) -> bool:
    return bool(expected == actual) and isinstance(expected, bool) == isinstance(actual, bool)


def _equal(expected: Any, actual: Any) -> bool:
    if _same(expected, actual):
        return True
    if isinstance(actual, str):
        parsed = parse_arguments(actual)
        if not isinstance(parsed, str) and _same(expected, parsed):
            return True
        return actual == _as_text(expected)
    return False


def _matches(call: Step, where: Mapping[str, Any], where_regex: Mapping[str, str]) -> bool:
    for name, expected in where.items():
        found, actual = _lookup(call.arguments, name)
        if not found or not _equal(expected, actual):
            return False
    for name, pattern in where_regex.items():
        found, actual = _lookup(call.arguments, name)
        if not found or re.search(pattern, _as_text(actual)) is None:
            return False
    return True


def _condition(where: Mapping[str, Any], where_regex: Mapping[str, str]) -> str:
    parts = [f"{k} == {v!r}" for k, v in where.items()]
    parts += [f"{k} ~ /{p}/" for k, p in where_regex.items()]
    return (" with " + " and ".join(parts)) if parts else ""


def _calls_of(view: TraceView, tool: str) -> list[Step]:
    return [c for c in view.calls if c.tool == tool]


def _non_matching_note(view: TraceView, calls: list[Step]) -> str:
    shown = "; ".join(f"{view.at(c.index)}: {shorten(c.arguments, 80)}" for c in calls[:3])
    more = f"; and {len(calls) - 3} more" if len(calls) > 3 else ""
    return f" (its calls had arguments {shown}{more})"


# ----------------------------------------------------------------------------- the checks


def tool_called(trace: Trace, /, **args: Any) -> CheckOutcome:
    """Passes when ``tool`` was called at least ``min_times`` times with matching arguments."""
    a = ToolCalledArgs.model_validate(args)
    view = trace_view(trace)
    calls = _calls_of(view, a.tool)
    matching = [c for c in calls if _matches(c, a.where, a.where_regex)]
    cond = _condition(a.where, a.where_regex)
    evidence = tuple(c.index for c in matching)
    if len(matching) >= a.min_times:
        return CheckOutcome(
            passed=True,
            explanation=f"{a.tool!r} was called{cond} {len(matching)} time(s) "
            f"({view.at_all(evidence)}); at least {a.min_times} required.",
            evidence=evidence,
        )
    if not calls:
        return CheckOutcome(
            passed=False,
            explanation=f"{a.tool!r} was never called; at least {a.min_times} call(s){cond} required.",
        )
    if not matching:
        return CheckOutcome(
            passed=False,
            explanation=f"{a.tool!r} was called {len(calls)} time(s) but never{cond}"
            + _non_matching_note(view, calls)
            + ".",
            evidence=tuple(c.index for c in calls),
        )
    return CheckOutcome(
        passed=False,
        explanation=f"{a.tool!r} was called{cond} only {len(matching)} time(s) ({view.at_all(evidence)}); "
        f"at least {a.min_times} required.",
        evidence=evidence,
    )


def tool_not_called(trace: Trace, /, **args: Any) -> CheckOutcome:
    """Passes when ``tool`` was never called with matching arguments."""
    a = ToolNotCalledArgs.model_validate(args)
    view = trace_view(trace)
    calls = _calls_of(view, a.tool)
    matching = [c for c in calls if _matches(c, a.where, a.where_regex)]
    cond = _condition(a.where, a.where_regex)
    if matching:
        first = matching[0]
        more = f" (and {len(matching) - 1} more time(s))" if len(matching) > 1 else ""
        return CheckOutcome(
            passed=False,
            explanation=f"{a.tool!r} was called{cond} at {view.at(first.index)} with arguments "
            f"{shorten(first.arguments)}{more}; it must not be.",
            evidence=tuple(c.index for c in matching),
        )
    if calls:
        return CheckOutcome(
            passed=True,
            explanation=f"{a.tool!r} was called {len(calls)} time(s) but never{cond}.",
        )
    return CheckOutcome(passed=True, explanation=f"{a.tool!r} was never called.")


def tool_called_before(trace: Trace, /, **args: Any) -> CheckOutcome:
    """Passes when every call to a ``then`` tool comes after (a turn after) a call to ``first``.

    When no ``then`` tool is called the check passes: not acting can be the right thing to do.
    """
    a = ToolCalledBeforeArgs.model_validate(args)
    view = trace_view(trace)
    firsts = [c.index for c in _calls_of(view, a.first)]
    thens = [c for c in view.calls if c.tool in a.then]
    names = ", ".join(repr(t) for t in a.then)
    if not thens:
        return CheckOutcome(
            passed=True,
            explanation=f"none of {names} was called, so there was nothing to order after {a.first!r} "
            "(not acting passes).",
        )
    for call in thens:
        earlier = [i for i in firsts if i < call.index]
        if earlier:
            continue
        same_turn = call.index in firsts
        if same_turn:
            why = f"in the same turn as {a.first!r}, not after its result"
        elif firsts:
            why = f"before any call to {a.first!r} (first called at {view.at(firsts[0])})"
        else:
            why = f"and {a.first!r} was never called"
        return CheckOutcome(
            passed=False,
            explanation=f"{call.tool!r} was called at {view.at(call.index)} {why}.",
            evidence=(call.index,),
        )
    return CheckOutcome(
        passed=True,
        explanation=f"every call to {names} ({view.at_all([c.index for c in thens])}) came after "
        f"{a.first!r} (first called at {view.at(firsts[0])}).",
        evidence=(firsts[0], *(c.index for c in thens)),
    )


_ACKNOWLEDGES = re.compile(
    r"\b(errors?|fail(?:s|ed|ing|ure)?|unable|could ?n[o']t|can ?n?[o']?t|was ?n[o']t able|"
    r"problems?|issues?|unfortunately|sorry|apologi[sz]e|no record|does ?n[o']t (?:exist|match|add up)|"
    r"invalid|denied|declined|rejected|unavailable|insufficient|exceeds?|mismatch|no longer|"
    r"did ?n[o']t (?:work|go through)|try again|retry|retrying|timed? ?out|went wrong|unsuccessful|"
    r"too (?:many|few|much|little|low|high|late|early)|(?:\w+n't|not|no)\s+(?:\w+\s+){0,2}enough|"
    r"(?:is|are|was|were)? ?not (?:enough|available|sufficient|possible|allowed|permitted|eligible|"
    r"valid|found|able|supported|exist))\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")
_NOT_WORDING = {"error", "exception", "traceback", "failed"}


def _trigrams(text: str) -> set[tuple[str, ...]]:
    words = [w for w in _WORD.findall(text.lower()) if w not in _NOT_WORDING]
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def _acknowledges(reply: str, error: str) -> bool:
    """The reply names the problem: a problem word, or three words in a row from the error itself."""
    text = reply.replace("\u2019", "'")
    return _ACKNOWLEDGES.search(text) is not None or bool(_trigrams(error) & _trigrams(text))


def no_unhandled_tool_error(trace: Trace, /, **args: Any) -> CheckOutcome:
    """Passes when every failed tool result is acknowledged or worked around.

    After a tool result with an error, the agent's next action must be another tool call (a retry
    or a workaround) or a reply that mentions the problem. A reply that talks past the error, or a
    run that ends right after it, fails.
    """
    NoUnhandledToolErrorArgs.model_validate(args)
    view = trace_view(trace)
    steps = view.steps
    handled: list[str] = []
    errors = [(p, s) for p, s in enumerate(steps) if s.kind == "result" and s.error]
    for pos, result in errors:
        what = f"the {result.tool!r} result at {view.at(result.index)} reported an error ({shorten(result.error, 80)})"
        nxt = next((s for s in steps[pos + 1 :] if s.kind != "result"), None)
        if nxt is None:
            return CheckOutcome(
                passed=False,
                explanation=f"{what} and the run ended without the agent acknowledging it.",
                evidence=(result.index,),
            )
        if nxt.kind == "call":
            handled.append(
                f"{view.at(result.index)} (followed by a call to {nxt.tool!r} at {view.at(nxt.index)})"
            )
        elif nxt.with_calls:
            handled.append(
                f"{view.at(result.index)} (the next turn, {view.at(nxt.index)}, calls tools again)"
            )
        elif _acknowledges(nxt.text, result.error or ""):
            handled.append(f"{view.at(result.index)} (acknowledged at {view.at(nxt.index)})")
        else:
            return CheckOutcome(
                passed=False,
                explanation=f"{what}, but the agent's next reply at {view.at(nxt.index)} talks past it "
                f"without mentioning the problem: {shorten(nxt.text, 100)!r}.",
                evidence=(result.index, nxt.index),
            )
    if not errors:
        return CheckOutcome(passed=True, explanation="no tool result reported an error.")
    return CheckOutcome(
        passed=True,
        explanation=f"all {len(errors)} tool error(s) were handled: " + "; ".join(handled) + ".",
        evidence=tuple(s.index for _, s in errors),
    )


def no_repeated_tool_call(trace: Trace, /, **args: Any) -> CheckOutcome:
    """Fails when one tool is called with identical arguments more than ``max_repeats`` times."""
    a = NoRepeatedToolCallArgs.model_validate(args)
    view = trace_view(trace)
    groups: dict[tuple[str, str], list[int]] = {}
    for call in view.calls:
        groups.setdefault((call.tool or "", _as_text(call.arguments)), []).append(call.index)
    if not groups:
        return CheckOutcome(passed=True, explanation="no tool was called.")
    (tool, arguments), indices = max(groups.items(), key=lambda kv: len(kv[1]))
    if len(indices) > a.max_repeats:
        return CheckOutcome(
            passed=False,
            explanation=f"{tool!r} was called {len(indices)} times with identical arguments "
            f"{shorten(arguments, 100)} ({view.at_all(indices)}); at most {a.max_repeats} allowed "
            "(a loop).",
            evidence=tuple(indices),
        )
    return CheckOutcome(
        passed=True,
        explanation=f"no tool was called more than {a.max_repeats} time(s) with identical arguments "
        f"(most: {tool!r} {len(indices)} time(s)).",
    )
