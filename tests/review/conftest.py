"""A small prepared Helix run to review: four support chats, one LLM criterion, some verdicts missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.judging import (
    CriteriaMatrix,
    Criterion,
    CriterionVerdict,
    JudgeInfo,
    VerdictFile,
    open_run,
    prep_run,
)
from helix.traces import Message, ToolCall, Trace

XSS_SCRIPT = "<script>window.__pwned = 1; alert('script ran')</script>"
XSS_IMG = "<img src=x onerror=\"window.__pwned = 2; alert('img ran')\">"
XSS_CLOSE = "done </script><script>window.__pwned = 3</script> \u2028 & more"
HOSTILE_ID = "t-hostile-<img src=x onerror=alert(9)>"

CRITERIA = CriteriaMatrix(
    subject="support agent",
    criteria=(
        Criterion(
            id="refund_policy",
            title="Follows the refund policy",
            kind="llm",
            question="Did the agent follow the refund policy?",
            pass_definition="Refunds only within 30 days.",
            fail_definition="Refunds outside the window.",
        ),
        Criterion(
            id="no_tool_errors", title="No unhandled tool error", kind="code", check="no_unhandled_tool_error"
        ),
    ),
)


def chat(trace_id: str, text: str, tool_result: str = "refunded") -> Trace:
    return Trace(
        id=trace_id,
        messages=[
            Message(role="user", content=text),
            Message(role="assistant", tool_calls=[ToolCall(id="c1", name="refund", arguments={"order": 9})]),
            Message(role="tool", content=tool_result, tool_call_id="c1"),
            Message(role="assistant", content=f"Done for {trace_id}."),
        ],
    )


def make_run(root: Path, *, hostile: bool = False) -> Path:
    """Prep a run of four traces; verdicts: pass, fail, uncertain, and one missing."""
    traces = [chat(f"t{i}", f"Please refund order {i}.") for i in range(1, 4)]
    if hostile:
        traces.append(chat(HOSTILE_ID, XSS_SCRIPT, tool_result=XSS_IMG))
    else:
        traces.append(chat("t4", "Please refund order 4."))
    run_dir = root / "run"
    prep_run(traces, CRITERIA, run_dir)
    run = open_run(run_dir)
    results = iter(["pass", "fail", "uncertain"])
    for unit in run.units:
        if unit.kind != "llm":
            continue
        result = next(results, None)
        if result is None:
            break
        verdict = VerdictFile(
            key=unit.key,
            verdicts=(
                CriterionVerdict(
                    criterion_id="refund_policy",
                    critique=XSS_CLOSE if hostile else f"the judge thinks {result}",
                    result=result,  # type: ignore[arg-type]
                    confidence=0.7,
                    blocked_by="no order date" if result == "uncertain" else None,
                ),
            ),
            judge=JudgeInfo(runtime="dispatch", model="judge-model-2025-01-01"),
        )
        run.verdict_path(unit.key).write_text(verdict.model_dump_json(), encoding="utf-8")
    return run_dir


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return make_run(tmp_path)


@pytest.fixture
def hostile_run_dir(tmp_path: Path) -> Path:
    return make_run(tmp_path, hostile=True)
