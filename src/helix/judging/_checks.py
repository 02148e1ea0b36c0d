"""Code checks: the built-in registry, resolving ``module:function`` user checks, and running a check.

A code criterion names its check (``check: {name: tool_called, args: {tool: refund_order}}``). A
name without a colon is a built-in (:data:`BUILTIN_CHECKS`); ``package.module:function`` is a user
check, imported when the criteria file is loaded. Both are called as ``check(trace, **args)``.
:func:`run_code_check` turns the outcome into a verdict; a check that raises becomes a
:class:`~helix.CodeCheckError` for the caller to record as unscored.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from .._exceptions import CodeCheckError, UsageError
from ..traces import Trace
from ._checks_output import (
    FinalOutputContainsArgs,
    FinalOutputJsonSchemaArgs,
    FinalOutputMatchesArgs,
    MaxToolCallsArgs,
    MaxTurnsArgs,
    final_output_contains,
    final_output_json_schema,
    final_output_matches,
    max_tool_calls,
    max_turns,
)
from ._checks_tools import (
    NoRepeatedToolCallArgs,
    NoUnhandledToolErrorArgs,
    ToolCalledArgs,
    ToolCalledBeforeArgs,
    ToolNotCalledArgs,
    no_repeated_tool_call,
    no_unhandled_tool_error,
    tool_called,
    tool_called_before,
    tool_not_called,
)
from ._checks_view import CheckOutcome, CodeCheck
from ._criteria import CodeCheckSpec, Criterion
from ._verdict import CriterionVerdict

__all__ = [
    "BUILTIN_CHECKS",
    "check_spec_problems",
    "resolve_check",
    "run_code_check",
    "validate_check_spec",
]

_BUILTINS: dict[str, tuple[CodeCheck, type[BaseModel]]] = {
    "final_output_contains": (final_output_contains, FinalOutputContainsArgs),
    "final_output_json_schema": (final_output_json_schema, FinalOutputJsonSchemaArgs),
    "final_output_matches": (final_output_matches, FinalOutputMatchesArgs),
    "max_tool_calls": (max_tool_calls, MaxToolCallsArgs),
    "max_turns": (max_turns, MaxTurnsArgs),
    "no_repeated_tool_call": (no_repeated_tool_call, NoRepeatedToolCallArgs),
    "no_unhandled_tool_error": (no_unhandled_tool_error, NoUnhandledToolErrorArgs),
    "tool_called": (tool_called, ToolCalledArgs),
    "tool_called_before": (tool_called_before, ToolCalledBeforeArgs),
    "tool_not_called": (tool_not_called, ToolNotCalledArgs),
}

BUILTIN_CHECKS: Mapping[str, CodeCheck] = MappingProxyType({k: v[0] for k, v in _BUILTINS.items()})
"""The built-in checks by name (read-only)."""

Problem = tuple[tuple[str | int, ...], str]
"""A problem with a check spec: its location inside the spec (``("args", "tool")``) and a message."""


def _import_user_check(name: str) -> tuple[Any, str | None]:
    module_name, _, attr = name.partition(":")
    if not module_name or not attr or ":" in attr:
        return None, f"{name!r} is not of the form package.module:function"
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import-time failure of user code is a configuration problem
        return None, (
            f"cannot import module {module_name!r} for check {name!r} ({type(exc).__name__}: {exc}); "
            "make sure it is installed or on PYTHONPATH"
        )
    func = getattr(module, attr, None)
    if func is None:
        return None, f"module {module_name!r} has no attribute {attr!r} (check {name!r})"
    if not callable(func):
        return None, f"{name!r} is not callable"
    return func, None


def _user_args_problems(name: str, func: Any, args: Mapping[str, Any]) -> list[Problem]:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    params = list(signature.parameters.values())
    if not params or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        return [((), f"user check {name!r} must take the trace as its first positional parameter")]
    rest = params[1:]
    problems: list[Problem] = []
    if not any(p.kind is p.VAR_KEYWORD for p in rest):
        accepted = {p.name for p in rest if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
        for arg in args:
            if arg not in accepted:
                allowed = ", ".join(sorted(accepted)) or "none"
                problems.append(
                    (("args", arg), f"user check {name!r} takes no argument {arg!r}; it accepts: {allowed}")
                )
    for p in rest:
        required = p.default is p.empty and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        if required and p.name not in args:
            problems.append((("args",), f"user check {name!r} needs argument {p.name!r}; add it under args"))
    return problems


def _pydantic_problems(name: str, exc: ValidationError) -> list[Problem]:
    problems: list[Problem] = []
    for err in sorted(
        exc.errors(), key=lambda e: e["type"] != "extra_forbidden"
    ):  # a typo explains a "missing"
        loc: tuple[str | int, ...] = ("args", *err["loc"])
        arg = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            allowed = ", ".join(_BUILTINS[name][1].model_fields) or "none"
            msg = f"{name} takes no argument {arg!r}; its arguments are: {allowed}"
        elif err["type"] == "missing":
            msg = f"{name} needs argument {arg!r}; add it under args"
        else:
            detail = err["msg"].removeprefix("Value error, ")
            msg = f"argument {arg!r} of {name}: {detail} (got {err.get('input')!r})"
        problems.append((loc, msg))
    return problems


def check_spec_problems(spec: CodeCheckSpec) -> list[Problem]:
    """Everything wrong with a check spec (empty when it can be run). Imports user check modules."""
    if ":" in spec.name:
        func, problem = _import_user_check(spec.name)
        if problem:
            return [(("name",), problem)]
        return _user_args_problems(spec.name, func, spec.args)
    if spec.name not in _BUILTINS:
        known = ", ".join(sorted(_BUILTINS))
        return [
            (
                ("name",),
                f"unknown built-in check {spec.name!r}; built-ins are: {known} "
                "(or give a user check as package.module:function)",
            )
        ]
    try:
        _BUILTINS[spec.name][1].model_validate(spec.args)
    except ValidationError as exc:
        return _pydantic_problems(spec.name, exc)
    return []


def validate_check_spec(spec: CodeCheckSpec) -> None:
    """Raise :class:`~helix.UsageError` naming the problem when ``spec`` cannot be run."""
    problems = check_spec_problems(spec)
    if problems:
        loc, msg = problems[0]
        where = ".".join(str(p) for p in ("check", *loc))
        raise UsageError(f"{where}: {msg}")


def resolve_check(spec: CodeCheckSpec) -> CodeCheck:
    """The callable behind ``spec``: a built-in, or the imported ``module:function``.

    Raises :class:`~helix.UsageError` when the name is unknown, the import fails or ``args`` do not
    fit the check.
    """
    validate_check_spec(spec)
    if ":" in spec.name:
        func, _ = _import_user_check(spec.name)
        return cast(CodeCheck, func)
    return _BUILTINS[spec.name][0]


def run_code_check(criterion: Criterion, trace: Trace) -> CriterionVerdict:
    """Run ``criterion``'s check on ``trace`` and return its verdict (confidence 1.0).

    Raises :class:`~helix.UsageError` when the criterion is not a runnable code criterion, and
    :class:`~helix.CodeCheckError` when the check raises or returns something that is not a
    :class:`CheckOutcome` or ``bool``: record that unit as unscored.
    """
    if criterion.kind != "code" or criterion.check is None:
        raise UsageError(
            f"criterion {criterion.id!r} is kind {criterion.kind!r}; only kind: code criteria run code checks"
        )
    spec = criterion.check
    check = resolve_check(spec)
    try:
        outcome = check(trace, **spec.args)
    except Exception as exc:
        raise CodeCheckError(
            f"check {spec.name!r} raised {type(exc).__name__}: {exc}",
            criterion_id=criterion.id,
            trace_id=trace.id,
        ) from exc
    if isinstance(outcome, bool):
        result_word = "passed" if outcome else "failed"
        outcome = CheckOutcome(
            passed=outcome, explanation=f"user check {spec.name!r} {result_word} (it returned {outcome})."
        )
    if not isinstance(outcome, CheckOutcome):
        raise CodeCheckError(
            f"check {spec.name!r} returned {outcome!r}; a check must return a CheckOutcome or a bool",
            criterion_id=criterion.id,
            trace_id=trace.id,
        )
    return CriterionVerdict(
        criterion_id=criterion.id,
        critique=outcome.explanation.strip() or f"check {spec.name!r} gave no explanation",
        result="pass" if outcome.passed else "fail",
        confidence=1.0,
    )
