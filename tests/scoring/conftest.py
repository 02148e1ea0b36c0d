"""Builders for JudgedRun objects made of canonical traces, a matrix and result rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from helix.judging import (
    CodeCheckSpec,
    CriteriaMatrix,
    Criterion,
    CriterionVerdict,
    JudgedRun,
    JudgeInfo,
    TraceCriterionResult,
)
from helix.traces import Message, ToolCall, Trace

JUDGE = JudgeInfo(runtime="model", model="gpt-4o-2024-08-06", temperature=0.0, prompt_version="judge-v3")


def make_criterion(cid: str, severity: str = "major", kind: str = "llm") -> Criterion:
    if kind == "code":
        return Criterion(
            id=cid,
            title=f"Check {cid}",
            severity=severity,
            kind="code",
            check=CodeCheckSpec(name="tool_called"),
        )  # type: ignore[arg-type]
    return Criterion(
        id=cid,
        title=f"Criterion {cid}",
        severity=severity,  # type: ignore[arg-type]
        kind="llm",
        question=f"Did the agent satisfy {cid}?",
        pass_definition="It did.",
        fail_definition="It did not.",
    )


def make_trace(tid: str) -> Trace:
    return Trace(
        id=tid,
        messages=[
            Message(role="user", content="Please refund order 42."),
            Message(
                role="assistant",
                content="Looking it up.",
                tool_calls=[ToolCall(id="c1", name="get_order", arguments={"order_id": 42})],
            ),
            Message(role="tool", tool_call_id="c1", content='{"status": "delivered"}'),
            Message(role="assistant", content="Refund issued."),
        ],
    )


def make_row(
    tid: str,
    cid: str,
    result: str | None,
    *,
    critique: str = "Looked at the transcript.",
    blocked_by: str | None = None,
    reason: str = "provider answer never parsed",
    judge: JudgeInfo | None = JUDGE,
) -> TraceCriterionResult:
    verdict = None
    if result is not None:
        verdict = CriterionVerdict(
            criterion_id=cid,
            critique=critique,
            result=result,  # type: ignore[arg-type]
            confidence=0.9,
            blocked_by=blocked_by if result != "uncertain" else (blocked_by or "no tool output"),
        )
    return TraceCriterionResult(
        trace_id=tid,
        criterion_id=cid,
        key=f"k-{tid}-{cid}",
        verdict=verdict,
        unscored_reason=None if verdict is not None else reason,
        judge=judge,
    )


Grid = dict[tuple[str, str], str | None]


def make_run(
    criteria: Sequence[Criterion],
    grid: Grid,
    *,
    trace_ids: Sequence[str] | None = None,
    run_dir: str = "runs/demo",
    **row_kwargs: Any,
) -> JudgedRun:
    """A run whose rows are ``grid[(trace_id, criterion_id)] = result`` (None = unscored)."""
    tids = list(trace_ids) if trace_ids is not None else sorted({t for t, _ in grid})
    return JudgedRun(
        run_dir=run_dir,
        traces=tuple(make_trace(t) for t in tids),
        matrix=CriteriaMatrix(subject="support-shop", criteria=tuple(criteria)),
        results=tuple(make_row(t, c, r, **row_kwargs) for (t, c), r in grid.items()),
        unit_axis="criterion",
    )


@pytest.fixture(scope="session")
def criterion() -> Callable[..., Criterion]:
    return make_criterion


@pytest.fixture(scope="session")
def row() -> Callable[..., TraceCriterionResult]:
    return make_row


@pytest.fixture(scope="session")
def run() -> Callable[..., JudgedRun]:
    return make_run


@pytest.fixture(scope="session")
def trace() -> Callable[[str], Trace]:
    return make_trace
