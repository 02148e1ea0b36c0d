"""Error analysis and evaluator design: are the criteria grounded, and is code used where it can be?

``criteria-grounded``: a criterion earns its place by catching a failure that happened. Each one
should fail at least once in the run, or be marked a *guard* (a rare but costly failure kept on
purpose). ``code-check-preferred``: an LLM judge costs money and must be validated; when its
question names a tool ordering, a budget or a repeated call, a built-in check decides it for free
and exactly. Both are deterministic reads of the criteria text and the verdicts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..judging import CriteriaMatrix, Criterion, TraceCriterionResult
from ..traces import Trace
from ._findings import Detail, Evidence, Finding, worst_status

__all__ = [
    "CodeCheckSuggestion",
    "audit_code_checks",
    "audit_grounding",
    "run_tool_names",
    "suggest_code_check",
]

_ORDER_WORDS = re.compile(
    r"\b(before|after|prior to|precede[sd]?|preceding|followed by|follows|first|then|until|only once)\b",
    re.IGNORECASE,
)
_NUMBER = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty)"
_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
}
_BUDGET = re.compile(
    r"\b(at most|no more than|not more than|fewer than|less than|more than|over|exceeds?|exceeding|"
    r"maximum of|a max(?:imum)? of|up to|within)\s+"
    + _NUMBER
    + r"\s+(tool[ -]calls?|tool uses?|calls?|turns?|assistant messages?|messages?|replies|steps?|rounds?)\b",
    re.IGNORECASE,
)
_REPEAT = re.compile(
    r"\b(repeat\w*|loop\w*|the same (?:tool )?call\w*|identical (?:tool )?call\w*)\b", re.IGNORECASE
)
_TOOL_ARG_KEYS = ("first", "then", "tool")
_PLAIN_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True, kw_only=True)
class CodeCheckSuggestion:
    """A built-in check that could decide (part of) an LLM criterion."""

    check: str
    args: str
    """The arguments to start from, written as YAML flow (``{limit: 5}``)."""
    because: str
    """The phrase of the criterion that the check decides."""


def _text(criterion: Criterion) -> str:
    parts = (criterion.question, criterion.pass_definition, criterion.fail_definition)
    return " ".join(p for p in parts if p)


def _mentioned_tools(text: str, tools: Iterable[str]) -> list[str]:
    """Tools named in ``text``, in order of first mention. A tool whose name is a plain word
    (``refund``) counts only where the text marks it as a tool: quoted, or followed by call/tool/(."""
    found: list[tuple[int, str]] = []
    for tool in tools:
        name = re.escape(tool)
        if _PLAIN_WORD.fullmatch(tool):
            pattern = rf"[`'\"]{name}[`'\"]|(?<![\w]){name}(?=\s*\(|\s+(?:tool|call)\b)"
        else:
            pattern = rf"(?<![\w]){name}(?![\w])"
        m = re.search(pattern, text, re.IGNORECASE if _PLAIN_WORD.fullmatch(tool) else 0)
        if m:
            found.append((m.start(), tool))
    return [tool for _, tool in sorted(found)]


def _first_tool(text: str, mentioned: Sequence[str]) -> str:
    """The tool that must come first: named right after "after"/"following", or right before
    "before"/"first"; else the first one mentioned."""
    for tool in mentioned:
        name = re.escape(tool)
        after = rf"\b(?:after|following|preceded by)\b[^.;]{{0,40}}?(?<![\w]){name}(?![\w])"
        before = rf"(?<![\w]){name}(?![\w])[^.;]{{0,25}}?\b(?:before|first|prior to)\b"
        if re.search(after, text, re.IGNORECASE) or re.search(before, text, re.IGNORECASE):
            return tool
    return mentioned[0]


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _WORDS[word.lower()]


def suggest_code_check(criterion: Criterion, tools: Iterable[str]) -> list[CodeCheckSuggestion]:
    """Built-in checks that could decide what ``criterion`` (an LLM criterion) asks, given the run's
    tool names. Empty for code criteria and for questions only a reader can decide."""
    if criterion.kind != "llm":
        return []
    text = _text(criterion)
    tool_list = sorted(set(tools))
    mentioned = _mentioned_tools(text, tool_list)
    out: list[CodeCheckSuggestion] = []
    order = _ORDER_WORDS.search(text)
    if order and len(mentioned) >= 2:
        first = _first_tool(text, mentioned)
        then = ", ".join(t for t in mentioned if t != first)
        out.append(
            CodeCheckSuggestion(
                check="tool_called_before",
                args=f"{{first: {first}, then: [{then}]}}",
                because=f"names the tools {', '.join(mentioned)} and an ordering ({order.group(0)!r})",
            )
        )
    for m in _BUDGET.finditer(text):
        limit = _number(m.group(2))
        unit = m.group(3).lower()
        strict = m.group(1).lower() in {"fewer than", "less than"}
        bound = limit - 1 if strict else limit
        check = "max_turns" if ("turn" in unit or "message" in unit or "repl" in unit) else "max_tool_calls"
        suggestion = CodeCheckSuggestion(
            check=check, args=f"{{limit: {max(bound, 0)}}}", because=f"states a budget ({m.group(0)!r})"
        )
        if all(s.check != check for s in out):
            out.append(suggestion)
    rep = _REPEAT.search(text)
    if rep and re.search(r"\bcall", text, re.IGNORECASE):
        out.append(
            CodeCheckSuggestion(
                check="no_repeated_tool_call",
                args="{max_repeats: 2}",
                because=f"asks about repeated calls ({rep.group(0)!r})",
            )
        )
    return out


def run_tool_names(traces: Sequence[Trace], matrix: CriteriaMatrix) -> set[str]:
    """Tool names the run knows: called in a trace, or named by a code check's arguments."""
    names: set[str] = set()
    for trace in traces:
        for message in trace.messages or ():
            names.update(call.name for call in message.tool_calls)
        names.update(event.name for event in trace.events if event.kind == "tool")
    for criterion in matrix.code_criteria:
        assert criterion.check is not None
        for key in _TOOL_ARG_KEYS:
            value = criterion.check.args.get(key)
            if isinstance(value, str):
                names.add(value)
            elif isinstance(value, list):
                names.update(v for v in value if isinstance(v, str))
    return {n for n in names if n.strip()}


def _code_covering(matrix: CriteriaMatrix, suggestion: CodeCheckSuggestion) -> list[str]:
    return [c.id for c in matrix.code_criteria if c.check is not None and c.check.name == suggestion.check]


def audit_code_checks(matrix: CriteriaMatrix, traces: Sequence[Trace]) -> Finding:
    """``code-check-preferred``: LLM criteria a built-in check could decide instead."""
    tools = run_tool_names(traces, matrix)
    details: list[Detail] = []
    flagged: list[str] = []
    for criterion in matrix.llm_criteria:
        suggestions = suggest_code_check(criterion, tools)
        if not suggestions:
            details.append(
                Detail(subject=criterion.id, status="pass", note="needs a reader; no built-in check fits")
            )
            continue
        flagged.append(criterion.id)
        notes = []
        for s in suggestions:
            covering = _code_covering(matrix, s)
            also = f"; code criteria already using it: {', '.join(covering)}" if covering else ""
            notes.append(f"{s.because}: `check: {{name: {s.check}, args: {s.args}}}`{also}")
        details.append(Detail(subject=criterion.id, status="warn", note=" | ".join(notes)))
    n_llm = len(matrix.llm_criteria)
    status = worst_status(d.status for d in details)
    if flagged:
        summary = f"{len(flagged)} of {n_llm} LLM criteria ask what a built-in code check can decide"
        next_step = (
            f"Move the deterministic part of {', '.join(flagged)} into `kind: code` criteria (the checks "
            "suggested in the details), and narrow each LLM question to what only a reader can judge; "
            "a code check needs no judge validation and costs nothing per trace."
        )
    else:
        summary = (
            f"none of the {n_llm} LLM criteria names an ordering, budget or repetition a code check decides"
        )
        next_step = "When adding an LLM criterion, first ask whether a built-in check (`helix schema` lists them) can decide it."
    return Finding(
        area="evaluator-design",
        check="code-check-preferred",
        status=status,
        summary=summary,
        evidence=Evidence(
            counts={
                "llm_criteria": n_llm,
                "code_criteria": len(matrix.code_criteria),
                "flagged": len(flagged),
            },
            ids={"flagged": tuple(flagged)},
        ),
        next_step=next_step,
        details=tuple(details),
    )


def audit_grounding(
    matrix: CriteriaMatrix, rows: Sequence[TraceCriterionResult], guards: Iterable[str]
) -> Finding:
    """``criteria-grounded``: each criterion failed at least once in the run, or is a marked guard."""
    guard_set = set(guards)
    fails: dict[str, int] = {c.id: 0 for c in matrix.criteria}
    decided: dict[str, int] = {c.id: 0 for c in matrix.criteria}
    for row in rows:
        if row.verdict is not None and row.verdict.result in ("pass", "fail"):
            decided[row.criterion_id] += 1
            fails[row.criterion_id] += row.verdict.result == "fail"
    details: list[Detail] = []
    grounded: list[str] = []
    ungrounded: list[str] = []
    guarded: list[str] = []
    unmeasured: list[str] = []
    for c in matrix.criteria:
        n_fail, n_dec = fails[c.id], decided[c.id]
        if n_fail:
            grounded.append(c.id)
            details.append(
                Detail(subject=c.id, status="pass", note=f"failed on {n_fail} of {n_dec} decided verdicts")
            )
        elif c.id in guard_set:
            guarded.append(c.id)
            details.append(
                Detail(subject=c.id, status="pass", note=f"marked a guard; 0 failures in {n_dec} decided")
            )
        elif n_dec == 0:
            unmeasured.append(c.id)
            details.append(
                Detail(subject=c.id, status="not-measured", note="no decided verdict in this run yet")
            )
        else:
            ungrounded.append(c.id)
            details.append(
                Detail(
                    subject=c.id,
                    status="warn",
                    note=f"never failed in {n_dec} decided verdicts: possibly ungrounded",
                )
            )
    status = worst_status(d.status for d in details)
    if ungrounded:
        summary = f"{len(ungrounded)} of {len(matrix.criteria)} criteria never failed in this run"
        next_step = (
            f"For {', '.join(ungrounded)}: find the observed failure each one stands for (error analysis over "
            "failing traces); if it guards a rare but costly failure, mark it a guard (`helix audit --guard ID`); "
            "otherwise drop it, since a criterion that never fails tells you nothing."
        )
    elif unmeasured and not grounded and not guarded:
        summary = "no criterion has a decided verdict yet"
        next_step = "Judge the run (`helix judge run` or an agent runtime), then audit again."
    else:
        summary = f"{len(grounded)} criteria failed at least once, {len(guarded)} marked as guards"
        if unmeasured:
            summary += f", {len(unmeasured)} not yet judged"
        next_step = (
            "Keep new criteria tied to failures seen in traces; re-audit after each error-analysis round."
        )
    return Finding(
        area="error-analysis",
        check="criteria-grounded",
        status=status,
        summary=summary,
        evidence=Evidence(
            counts={
                "criteria": len(matrix.criteria),
                "grounded": len(grounded),
                "guards": len(guarded),
                "never_failed": len(ungrounded),
                "not_judged": len(unmeasured),
            },
            ids={
                "never_failed": tuple(ungrounded),
                "guards": tuple(guarded),
                "not_judged": tuple(unmeasured),
            },
        ),
        next_step=next_step,
        details=tuple(details),
    )
