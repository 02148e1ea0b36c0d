"""Ready-made cell scorers: helix code checks and the matrix LLM scorer over real HTTP."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

import orjson
import pytest

from helix import UsageError
from helix.campaign import (
    CellContext,
    DispatchResult,
    Scenario,
    code_check_scorer,
    llm_matrix_scorer,
    read_ledger,
    run_campaign,
    run_campaign_sync,
)
from helix.judging import CriteriaMatrix, Criterion
from helix.models import ModelSpec, open_model
from helix.models.testing import RecordedRequest, ScriptedLLMServer
from helix.traces import Event, Trace

IDS_LINE = re.compile(r"Criterion ids to judge, in this order: (.+)\.\s*$", re.MULTILINE)


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def shop_trace(ctx: CellContext) -> Trace:
    refunded = ctx.scenario.gold == "refund"
    events = [Event(id="e1", kind="tool", name="lookup_order", input={"order": 1}, output={"ok": True})]
    if refunded:
        events.append(
            Event(id="e2", kind="tool", name="issue_refund", input={"order": 1}, output={"ok": True})
        )
    return Trace(id=ctx.cell_id, input=ctx.scenario.input, output="done", events=events)


async def dispatch(ctx: CellContext) -> DispatchResult:
    return DispatchResult(output="done", trace=shop_trace(ctx), cost_usd=0.0, served_model="agent-1")


SCENARIOS = [
    Scenario(id="refund", input="refund me", gold="refund"),
    Scenario(id="ask", input="where?", gold="none"),
]


def test_code_check_scorer_scores_pass_one_fail_zero(tmp_path: Path) -> None:
    refund_called = Criterion(
        id="refund_called",
        title="refund issued",
        kind="code",
        check={"name": "tool_called", "args": {"tool": "issue_refund"}},
    )
    result = run_campaign_sync(
        SCENARIOS, dispatch, [code_check_scorer(refund_called)], run_dir=tmp_path, commit="c", reps=2
    )
    assert [c.scores for c in result.cells] == [{"refund_called": 1.0}] * 2 + [{"refund_called": 0.0}] * 2
    assert result.aggregates.by_scorer["refund_called"].mean == 0.5


def test_code_check_scorer_refuses_llm_criteria() -> None:
    llm = Criterion(id="x", title="t", kind="llm", question="q?", pass_definition="p", fail_definition="f")
    with pytest.raises(UsageError, match="kind: code"):
        code_check_scorer(llm)


def test_cells_without_a_trace_are_unmeasured(tmp_path: Path) -> None:
    crit = Criterion(id="c", title="t", kind="code", check="no_unhandled_tool_error")

    async def bare(ctx: CellContext) -> DispatchResult:
        return DispatchResult(output="x")

    result = run_campaign_sync(SCENARIOS, bare, [code_check_scorer(crit)], run_dir=tmp_path, commit="c")
    assert all(c.status == "ok" and c.scores == {} and c.composite is None for c in result.cells)
    assert result.aggregates.by_scorer == {} and result.aggregates.by_scenario == {}


def test_llm_matrix_scorer_uses_the_judging_prompt_and_charges_the_cell(tmp_path: Path) -> None:
    matrix = CriteriaMatrix(
        subject="shop",
        criteria=(
            Criterion(
                id="resolved",
                title="t",
                kind="llm",
                question="Resolved?",
                pass_definition="p",
                fail_definition="f",
            ),
            Criterion(
                id="polite",
                title="t",
                kind="llm",
                question="Polite?",
                pass_definition="p",
                fail_definition="f",
            ),
            Criterion(id="code_one", title="t", kind="code", check="no_unhandled_tool_error"),
        ),
    )

    def answer(req: RecordedRequest) -> str:
        ids = IDS_LINE.findall(req.prompt_text)[0].split(", ")
        refund = "issue_refund" in req.prompt_text
        verdicts = [
            {
                "criterion_id": cid,
                "critique": "seen in the trace",
                "result": "pass" if (refund or cid == "polite") else "fail",
                "confidence": 0.9,
            }
            for cid in ids
        ]
        return orjson.dumps({"verdicts": verdicts}).decode()

    async def go() -> tuple[object, list[RecordedRequest]]:
        async with ScriptedLLMServer(answer) as srv:

            async def instant(_: float) -> None:
                return None

            model = open_model(srv.spec("openai/gpt-4o-2024-08-06"), sleep=instant, rng=random.Random(0))
            try:
                result = await run_campaign(
                    SCENARIOS, dispatch, [llm_matrix_scorer(matrix, model)], run_dir=tmp_path, commit="c"
                )
            finally:
                await model.aclose()
            return result, srv.requests

    result, requests = asyncio.run(go())
    cells = result.cells  # type: ignore[attr-defined]
    assert [c.scores["llm_matrix"] for c in cells] == [1.0, 0.5]
    assert len(requests) == 2
    assert all(r.body["temperature"] == 0.0 and r.body["model"] == "gpt-4o-2024-08-06" for r in requests)
    assert "code_one" not in requests[0].prompt_text  # only llm criteria go to the model
    assert all(len(c.call_ids) == 1 and c.call_ids[0].startswith("chatcmpl-scripted") for c in cells)
    entries, _ = read_ledger(tmp_path)
    assert sorted(e.call_ids for e in entries) == sorted(c.call_ids for c in cells)


def test_llm_matrix_scorer_refuses_warm_models() -> None:
    matrix = CriteriaMatrix(
        subject="s",
        criteria=(
            Criterion(id="a", title="t", kind="llm", question="q", pass_definition="p", fail_definition="f"),
        ),
    )
    warm = open_model(
        ModelSpec(provider="openai", model="m-2024-01-01", base_url="http://127.0.0.1:9", temperature=0.7)
    )
    try:
        with pytest.raises(UsageError, match="temperature 0"):
            llm_matrix_scorer(matrix, warm)
    finally:
        asyncio.run(warm.aclose())
