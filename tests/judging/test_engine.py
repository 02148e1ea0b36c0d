"""The one judging engine: the failure rule, the packet-kind extension point, and its callers."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helix import InputFileError
from helix.campaign import CellContext, DispatchResult, Scenario, llm_matrix_judge, run_campaign
from helix.judging import (
    PROMPT_VERSION,
    CriteriaMatrix,
    Criterion,
    JudgmentUnscoredError,
    PacketKind,
    PacketView,
    TrajectoryJudging,
    build_units,
    judge_packet,
    judge_packets_with_model,
    open_run,
    parse_verdict_file,
    prep_run,
)
from helix.models import ChatMessage, Model, ModelSpec, open_model, read_receipt_log
from helix.models.testing import RecordedRequest, ScriptedLLMServer, ScriptedReply
from helix.traces import Message, Trace

OPENAI = "openai/gpt-4o-2024-08-06"
MATRIX = CriteriaMatrix(
    subject="shop",
    criteria=(
        Criterion(
            id="grounded",
            title="Grounded",
            kind="llm",
            question="Is the answer grounded?",
            pass_definition="it is",
            fail_definition="it is not",
        ),
    ),
)
GOOD = '{"verdicts": [{"criterion_id": "grounded", "critique": "entry 1 cites the tool", "result": "pass", "confidence": 0.8}]}'


def trace(i: int = 0) -> Trace:
    return Trace(
        id=f"t{i}",
        input="where is my order?",
        output="shipped",
        messages=[
            Message(role="user", content="where is my order?"),
            Message(role="assistant", content=f"shipped {i}"),
        ],
    )


async def instant(_: float) -> None:
    return None


def client(spec: ModelSpec) -> Model:
    return open_model(spec, sleep=instant, rng=random.Random(0), max_retries=1)


def view() -> PacketView:
    return PacketView.of_unit(build_units([trace()], MATRIX)[0], prompt_version=PROMPT_VERSION)


def dead_spec() -> ModelSpec:
    """A spec pointed at a loopback port where nothing listens any more."""

    async def port() -> ModelSpec:
        async with ScriptedLLMServer() as srv:
            return srv.spec(OPENAI)

    return asyncio.run(port())


def test_the_engine_scores_a_good_answer_and_announces_every_attempt_before_it_is_sent() -> None:
    announced: list[tuple[int, int]] = []

    async def go() -> tuple[Any, int]:
        async with ScriptedLLMServer(script=[ScriptedReply(status=429, retry_after=0), GOOD]) as srv:
            model = client(srv.spec(OPENAI))
            try:
                judgment = await judge_packet(
                    TrajectoryJudging(), view(), model, on_attempt=lambda c, a: announced.append((c, a))
                )
            finally:
                await model.aclose()
            return judgment, srv.request_count

    judgment, requests = asyncio.run(go())
    assert judgment.status == "scored" and judgment.unscored is None
    assert [v.result for v in judgment.result.verdicts] == ["pass"]
    assert announced == [(1, 1), (1, 2)] and requests == 2
    assert (judgment.calls.calls, judgment.calls.attempts) == (1, 2)


def test_an_answer_that_never_parses_is_unscored_unparseable_after_one_re_ask() -> None:
    async def go() -> tuple[Any, list[RecordedRequest]]:
        async with ScriptedLLMServer(lambda req: "It passes, I think.") as srv:
            model = client(srv.spec(OPENAI))
            try:
                return await judge_packet(TrajectoryJudging(), view(), model), srv.requests
            finally:
                await model.aclose()

    judgment, requests = asyncio.run(go())
    assert judgment.status == "unscored" and judgment.result is None and judgment.reasked
    assert judgment.unscored.failure == "unparseable"
    assert judgment.unscored.error.startswith("unparseable: the answer did not parse, twice")
    assert len(requests) == 2 and "could not be used" in requests[1].body["messages"][-1]["content"]
    with pytest.raises(JudgmentUnscoredError, match="unparseable"):
        judgment.result_or_raise()


@dataclass(frozen=True)
class Question:
    key: str
    text: str


class YesNo:
    """A second packet kind: answer exactly YES or NO (shows the extension point)."""

    def key(self, packet: Question) -> str:
        return packet.key

    def render(self, packet: Question) -> list[ChatMessage]:
        return [ChatMessage(role="user", content=f"{packet.text} Answer YES or NO.")]

    def parse(self, packet: Question, answer: str, *, source: str, served_model: str) -> bool:
        if answer.strip() not in ("YES", "NO"):
            raise InputFileError(f"answer {answer!r} is neither YES nor NO", path=source)
        return answer.strip() == "YES"

    def feedback(self, packet: Question, error: str) -> ChatMessage:
        return ChatMessage(role="user", content=f"{error}. Reply with YES or NO only.")


def test_any_packet_kind_goes_through_the_same_engine() -> None:
    kind: PacketKind[Question, bool] = YesNo()

    async def go() -> tuple[Any, list[RecordedRequest]]:
        async with ScriptedLLMServer(script=["maybe?", "YES"]) as srv:
            model = client(srv.spec(OPENAI))
            try:
                return await judge_packet(kind, Question(key="q1", text="Is 2+2 four?"), model), srv.requests
            finally:
                await model.aclose()

    judgment, requests = asyncio.run(go())
    assert judgment.result is True and judgment.reasked
    assert "neither YES nor NO" in requests[1].body["messages"][-1]["content"]


def test_one_failure_rule_for_every_caller_when_the_provider_is_down(tmp_path: Path) -> None:
    spec = dead_spec()

    async def engine() -> Any:
        model = client(spec)
        try:
            return await judge_packet(TrajectoryJudging(), view(), model)
        finally:
            await model.aclose()

    judgment = asyncio.run(engine())
    assert judgment.unscored.failure == "connection_refused"
    assert "timed out" not in judgment.unscored.message

    run_dir = tmp_path / "run"
    prep_run([trace()], MATRIX, run_dir)

    async def transport() -> Any:
        model = client(spec)
        try:
            return await judge_packets_with_model(run_dir, model)
        finally:
            await model.aclose()

    summary = asyncio.run(transport())
    assert summary.unscored_reasons == {"connection_refused": 1}
    run = open_run(run_dir)
    [unit] = run.units
    verdict = parse_verdict_file(run.verdict_path(unit.key), key=unit.key, criterion_ids=unit.criterion_ids)
    assert verdict.status == "unscored" and verdict.error.startswith("connection_refused: ")
    [receipt] = read_receipt_log(run_dir).receipts
    assert (receipt.status, receipt.failure) == ("error", "connection_refused")

    async def dispatch(ctx: CellContext) -> DispatchResult:
        return DispatchResult(output="shipped", trace=trace())

    async def campaign() -> Any:
        model = client(spec)
        try:
            return await run_campaign(
                [Scenario(id="s1", input="x")],
                dispatch,
                [llm_matrix_judge(MATRIX, model)],
                run_dir=tmp_path / "campaign",
                commit="c",
            )
        finally:
            await model.aclose()

    [cell] = asyncio.run(campaign()).cells  # type: ignore[attr-defined]
    assert cell.status == "failed" and cell.stage == "judge" and cell.scores == {}
    assert "connection_refused" in str(cell.error)
