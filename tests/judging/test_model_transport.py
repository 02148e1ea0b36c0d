"""The model transport end to end: prep a run, judge it over real HTTP against ScriptedLLMServer."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from helix import UsageError
from helix.judging import (
    LAYOUT_REVISION,
    CriteriaMatrix,
    Criterion,
    ModelJudgeProgress,
    ModelJudgeSummary,
    judge_packets_with_model,
    judge_packets_with_model_sync,
    open_run,
    parse_verdict_file,
    prep_run,
)
from helix.models import Model, ModelSpec, open_model, parse_model_spec, read_receipt_log, read_receipts
from helix.models.testing import RateLimit, RecordedRequest, ScriptedLLMServer, ScriptedReply
from helix.traces import Message, Trace

OPENAI = "openai/gpt-4o-2024-08-06"
ANTHROPIC = "anthropic/claude-judge-20260101"
IDS_LINE = re.compile(r"Criterion ids to judge, in this order: (.+)\.\s*$", re.MULTILINE)


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def verdict_answer(req: RecordedRequest, result: str = "pass") -> str:
    """What a well-behaved judge answers: one entry per criterion id listed in the prompt."""
    ids = IDS_LINE.findall(req.prompt_text)[0].split(", ")
    return orjson.dumps(
        {
            "verdicts": [
                {"criterion_id": cid, "critique": f"evidence for {cid}", "result": result, "confidence": 0.8}
                for cid in ids
            ]
        }
    ).decode()


def make_matrix() -> CriteriaMatrix:
    def llm(cid: str) -> Criterion:
        return Criterion(
            id=cid,
            title=f"title {cid}",
            kind="llm",
            question=f"Did the agent do {cid}?",
            pass_definition="it did",
            fail_definition="it did not",
        )

    return CriteriaMatrix(subject="shop", criteria=(llm("grounded"), llm("polite")))


def make_traces(n: int) -> list[Trace]:
    return [
        Trace(
            id=f"t{i}",
            input=f"question {i}",
            output=f"answer {i}",
            messages=[
                Message(role="user", content=f"question {i}"),
                Message(role="assistant", content=f"a{i}"),
            ],
        )
        for i in range(n)
    ]


def prep(tmp_path: Path, n: int = 3, spec: ModelSpec | None = None) -> Path:
    run_dir = tmp_path / "run"
    prep_run(make_traces(n), make_matrix(), run_dir, model=spec)
    return run_dir


async def _judge(srv: ScriptedLLMServer, run_dir: Path, ref: str = OPENAI, **kw: Any) -> ModelJudgeSummary:
    async def instant(_: float) -> None:
        return None

    model: Model = open_model(srv.spec(ref), sleep=instant, rng=random.Random(0), max_retries=2)
    try:
        return await judge_packets_with_model(run_dir, model, **kw)
    finally:
        await model.aclose()


@pytest.mark.parametrize("ref", [OPENAI, ANTHROPIC])
def test_every_unit_judged_pinned_at_temperature_zero(tmp_path: Path, ref: str) -> None:
    spec = parse_model_spec(ref)
    model_id = spec.model
    run_dir = prep(tmp_path, n=3, spec=spec)
    progress: list[ModelJudgeProgress] = []

    async def go() -> tuple[ModelJudgeSummary, list[RecordedRequest]]:
        async with ScriptedLLMServer(verdict_answer) as srv:
            return await _judge(srv, run_dir, ref, concurrency=2, on_progress=progress.append), srv.requests

    summary, requests = asyncio.run(go())
    assert (summary.pending, summary.judged, summary.unscored, summary.retried_parse) == (3, 3, 0, 0)
    assert summary.model == ref
    assert summary.input_tokens > 0 and summary.output_tokens > 0
    assert len(requests) == 3
    for req in requests:
        assert req.body["model"] == model_id
        assert req.body["temperature"] == 0
    assert sorted(p.done for p in progress) == [1, 2, 3] and {p.total for p in progress} == {3}

    run = open_run(run_dir)
    for unit in run.units:
        verdict = parse_verdict_file(
            run.verdict_path(unit.key), key=unit.key, criterion_ids=unit.criterion_ids
        )
        assert verdict.status == "scored"
        assert [v.result for v in verdict.verdicts] == ["pass", "pass"]
        assert verdict.judge is not None
        assert (verdict.judge.runtime, verdict.judge.model, verdict.judge.temperature) == (
            "model",
            model_id,
            0.0,
        )
        assert verdict.judge.prompt_version == run.manifest.prompt_version
        [receipt] = [r for r in read_receipts(run_dir)[0] if r.key == unit.key]
        assert (receipt.status, receipt.calls, receipt.attempts) == ("ok", 1, 1)
        assert receipt.requested_model == receipt.served_model == model_id
        assert receipt.ended_at >= receipt.started_at
    if ref == OPENAI:
        assert summary.cost_usd is not None and summary.cost_usd > 0
    else:
        assert summary.cost_usd is None and summary.units_without_cost == 3


def test_second_pass_skips_units_that_have_verdicts(tmp_path: Path) -> None:
    run_dir = prep(tmp_path, n=2)

    async def go() -> tuple[ModelJudgeSummary, ModelJudgeSummary, int]:
        async with ScriptedLLMServer(verdict_answer) as srv:
            first = await _judge(srv, run_dir)
            second = await _judge(srv, run_dir)
            return first, second, srv.request_count

    first, second, count = asyncio.run(go())
    assert first.judged == 2
    assert (second.pending, second.judged, second.skipped_existing) == (0, 0, 2)
    assert count == 2


def test_malformed_answer_is_retried_once_with_the_error_fed_back(tmp_path: Path) -> None:
    run_dir = prep(tmp_path, n=1)
    bad = '{"verdicts": [{"criterion_id": "grounded", "result": "pass", "critique": "x", "confidence": 1}]}'

    async def go() -> tuple[ModelJudgeSummary, list[RecordedRequest]]:
        async with ScriptedLLMServer(verdict_answer, script=[bad]) as srv:
            return await _judge(srv, run_dir), srv.requests

    summary, requests = asyncio.run(go())
    assert (summary.judged, summary.unscored, summary.retried_parse) == (1, 0, 1)
    first, second = requests
    retry_messages = second.body["messages"]
    assert retry_messages[: len(first.body["messages"])] == first.body["messages"]
    assert retry_messages[-2] == {"role": "assistant", "content": bad}
    feedback = retry_messages[-1]
    assert feedback["role"] == "user"
    assert "'result' comes before 'critique'" in feedback["content"]
    assert '"criterion_id":"grounded"' in feedback["content"] and '"polite"' in feedback["content"]
    [receipt], torn = read_receipts(run_dir)
    assert torn == 0
    assert (receipt.calls, receipt.attempts) == (2, 2)


def test_answer_that_never_parses_is_recorded_unscored(tmp_path: Path) -> None:
    run_dir = prep(tmp_path, n=1)

    async def go() -> ModelJudgeSummary:
        async with ScriptedLLMServer(lambda req: "I think it passes.") as srv:
            return await _judge(srv, run_dir)

    summary = asyncio.run(go())
    assert (summary.judged, summary.unscored, summary.retried_parse, summary.provider_errors) == (0, 1, 1, 0)
    run = open_run(run_dir)
    [unit] = run.units
    verdict = parse_verdict_file(run.verdict_path(unit.key), key=unit.key, criterion_ids=unit.criterion_ids)
    assert verdict.status == "unscored" and verdict.verdicts == ()
    assert verdict.error is not None and "did not parse, twice" in verdict.error
    assert "no JSON object" in verdict.error


def test_transient_errors_are_retried_and_provider_failure_is_unscored(tmp_path: Path) -> None:
    run_dir = prep(tmp_path, n=1)

    async def go() -> tuple[ModelJudgeSummary, ModelJudgeSummary, ModelJudgeSummary]:
        down = ScriptedReply(status=503, retry_after=0)
        async with ScriptedLLMServer(verdict_answer, script=[down, down, down]) as srv:
            failed = await _judge(srv, run_dir)  # max_retries=2: three 503s exhaust it
            skipped = await _judge(srv, run_dir)
            srv.push(ScriptedReply(status=429, retry_after=0), ScriptedReply(status=500))
            recovered = await _judge(srv, run_dir, rejudge_unscored=True)
            return failed, skipped, recovered

    failed, skipped, recovered = asyncio.run(go())
    assert (failed.unscored, failed.provider_errors, failed.judged) == (1, 1, 0)
    assert failed.cost_usd is None
    assert (skipped.pending, skipped.skipped_existing) == (0, 1)
    assert (recovered.pending, recovered.judged, recovered.unscored) == (1, 1, 0)
    # the log is append-only: the failed pass keeps its receipt beside the one that recovered
    [failed_receipt, receipt], _ = read_receipts(run_dir)
    assert (failed_receipt.status, failed_receipt.key) == ("error", receipt.key)
    assert (receipt.status, receipt.attempts) == ("ok", 3)


def test_provider_failure_receipt_records_the_error(tmp_path: Path) -> None:
    run_dir = prep(tmp_path, n=1)

    async def go() -> None:
        async with ScriptedLLMServer(lambda req: ScriptedReply(status=500, text="boom")) as srv:
            await _judge(srv, run_dir)

    asyncio.run(go())
    [receipt], _ = read_receipts(run_dir)
    assert receipt.status == "error" and receipt.attempts == 3
    assert receipt.error is not None and "HTTP 500" in receipt.error and "boom" in receipt.error
    verdict = orjson.loads((run_dir / "verdicts" / f"{receipt.key}.verdict.json").read_bytes())
    assert verdict["status"] == "unscored" and "HTTP 500" in verdict["error"]


def test_run_pinned_to_another_model_is_refused(tmp_path: Path) -> None:
    run_dir = prep(tmp_path, n=1, spec=ModelSpec(provider="openai", model="gpt-4.1-2025-04-14"))

    async def go() -> None:
        async with ScriptedLLMServer(verdict_answer) as srv:
            with pytest.raises(UsageError, match="prepared for model openai/gpt-4.1-2025-04-14"):
                await _judge(srv, run_dir)
            assert srv.request_count == 0

    asyncio.run(go())


def test_sync_wrapper_with_a_spec(tmp_path: Path) -> None:
    run_dir = prep(tmp_path, n=2)
    with ScriptedLLMServer.running_in_thread(verdict_answer) as srv:
        summary = judge_packets_with_model_sync(run_dir, srv.spec(OPENAI), concurrency=4)
        assert srv.request_count == 2
    assert (summary.judged, summary.unscored) == (2, 0)
    assert "2 judged" in summary.describe()


def test_every_request_is_recorded_before_it_is_sent_and_settled_by_its_receipt(tmp_path: Path) -> None:
    run_dir = prep(tmp_path, n=3)

    async def go() -> int:
        script = [ScriptedReply(status=503, retry_after=0), "not json at all"]
        async with ScriptedLLMServer(verdict_answer, script=script) as srv:
            await _judge(srv, run_dir, concurrency=1)
            return srv.request_count

    requests = asyncio.run(go())
    log = read_receipt_log(run_dir)
    assert requests == 5  # a 503 retried, an answer re-asked, two more units
    assert len(log.attempts) == requests and log.unsettled == [] and log.torn == 0
    assert sum(r.attempts for r in log.receipts) == requests
    assert all(r.prompt_layout == LAYOUT_REVISION for r in log.receipts)


def test_why_units_ended_unscored_is_summarized_and_they_can_be_retried(tmp_path: Path) -> None:
    run_dir = prep(tmp_path, n=3)

    async def go() -> tuple[ModelJudgeSummary, ModelJudgeSummary, ModelJudgeSummary]:
        async with ScriptedLLMServer(lambda req: ScriptedReply(status=401, text="invalid api key")) as srv:
            down = await _judge(srv, run_dir)
        async with ScriptedLLMServer(verdict_answer) as srv:
            kept = await _judge(srv, run_dir)
            again = await _judge(srv, run_dir, rejudge_unscored=True)
        return down, kept, again

    down, kept, again = asyncio.run(go())
    assert (down.unscored, down.unscored_reasons) == (3, {"refused": 3})
    text = down.describe()
    assert "3 refused: e.g." in text and "invalid api key" in text and "--rejudge-unscored" in text
    assert (kept.pending, kept.still_unscored, kept.unscored_total) == (0, 3, 3)
    assert (again.judged, again.unscored_total) == (3, 0)


def test_receipts_record_cached_prompt_tokens_and_anthropic_marks_the_shared_prefix(tmp_path: Path) -> None:
    run_dir = prep(tmp_path, n=3, spec=parse_model_spec(ANTHROPIC))

    async def go() -> list[RecordedRequest]:
        async with ScriptedLLMServer(verdict_answer, prompt_cache=True) as srv:
            await _judge(srv, run_dir, ANTHROPIC, concurrency=1)
            return srv.requests

    requests = asyncio.run(go())
    prefixes = set()
    for req in requests:
        first, *rest = req.body["messages"][0]["content"]
        assert first["cache_control"] == {"type": "ephemeral"} and "## Criteria" in first["text"]
        assert "## The trajectory to judge" in rest[0]["text"]
        prefixes.add(first["text"])
    assert len(prefixes) == 1  # byte-identical across units
    receipts = read_receipt_log(run_dir).receipts
    assert [r.cache_write_tokens > 0 for r in receipts] == [True, False, False]
    assert [r.cached_input_tokens > 0 for r in receipts] == [False, True, True]
    assert all(r.input_tokens > r.cached_input_tokens + r.cache_write_tokens for r in receipts)


def test_a_high_ceiling_backs_off_to_a_rate_limited_provider_and_every_unit_ends_judged(
    tmp_path: Path,
) -> None:
    run_dir = prep(tmp_path, n=40)

    async def go() -> tuple[ModelJudgeSummary, int, int]:
        async with ScriptedLLMServer(verdict_answer, latency_s=0.05, rate_limit=RateLimit(rate=20)) as srv:
            model = open_model(srv.spec(OPENAI), max_retries=20)
            try:
                summary = await judge_packets_with_model(run_dir, model, concurrency=512)
            finally:
                await model.aclose()
            return summary, srv.request_count, srv.statuses[429]

    summary, requests, limited = asyncio.run(go())
    assert (summary.judged, summary.unscored) == (40, 0)
    assert limited > 0 and requests == 40 + limited  # each 429 retried, none lost
    assert summary.limiter is not None and summary.limiter.decreases >= 1
    assert summary.limiter.window < 64  # far below the ceiling of 512
    assert len(read_receipt_log(run_dir).attempts) == requests
