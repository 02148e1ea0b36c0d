"""`helix evaluate` end to end against an OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from helix.cli import app
from helix.examples import criteria_path, generate_episodes
from helix.models import read_receipts
from helix.models.testing import RecordedRequest, ScriptedLLMServer, ScriptedReply
from helix.traces import write_traces_jsonl

runner = CliRunner()
MODEL = "gpt-4o-2024-08-06"
IDS = re.compile(r"Criterion ids to judge, in this order: (.+)\.\s*$", re.MULTILINE)


def judge_everything_passes(req: RecordedRequest) -> str:
    ids = IDS.findall(req.body["messages"][-1]["content"])[0].split(", ")
    return orjson.dumps(
        {
            "verdicts": [
                {"criterion_id": c, "critique": "looked at it", "result": "pass", "confidence": 0.9}
                for c in ids
            ]
        }
    ).decode()


def _traces(tmp_path: Path, n: int = 4) -> Path:
    return write_traces_jsonl([e.trace for e in generate_episodes(n=n, seed=11)], tmp_path / "traces.jsonl")


def test_evaluate_judges_over_http_with_the_pinned_model_at_temperature_zero(tmp_path: Path) -> None:
    traces = _traces(tmp_path)
    # the first request meets a 429 and the second a 500: both are retried
    script = [ScriptedReply(status=429, retry_after=0), ScriptedReply(status=500)]
    with ScriptedLLMServer.running_in_thread(judge_everything_passes, script=script) as srv:
        result = runner.invoke(
            app,
            [
                "evaluate",
                str(traces),
                "--criteria",
                str(criteria_path()),
                "--model",
                f"openai/{MODEL}",
                "--base-url",
                srv.base_url,
                "--run",
                str(tmp_path / "run"),
                "--concurrency",
                "2",
            ],
        )
        requests = list(srv.requests)
    assert result.exit_code in (0, 1), result.output
    assert (tmp_path / "run" / "scorecard.json").exists()
    assert len(requests) == 4 + 2
    assert {r.body["model"] for r in requests} == {MODEL}
    assert {r.body["temperature"] for r in requests} == {0}
    receipts, _ = read_receipts(tmp_path / "run")
    assert len(receipts) == 4 and sum(r.attempts for r in receipts) == 6
    card = json.loads((tmp_path / "run" / "scorecard.json").read_text())
    llm = [c for c in card["criteria"] if c["kind"] == "llm"]
    assert all(c["outcome"] == "pass" and c["n_pass"] == 4 for c in llm)
    assert {j["model"] for j in card["run"]["judges"] if j["runtime"] == "model"} == {MODEL}


def test_an_answer_that_never_parses_is_unscored_not_a_pass(tmp_path: Path) -> None:
    traces = _traces(tmp_path, n=1)
    with ScriptedLLMServer.running_in_thread(lambda req: "Looks fine to me!") as srv:
        result = runner.invoke(
            app,
            [
                "evaluate",
                str(traces),
                "--criteria",
                str(criteria_path()),
                "--model",
                f"openai/{MODEL}",
                "--base-url",
                srv.base_url,
                "--run",
                str(tmp_path / "run"),
            ],
        )
        asked = srv.request_count
    assert asked == 2  # the first answer, then one retry with the parse error fed back
    card = json.loads((tmp_path / "run" / "scorecard.json").read_text())
    llm = [c for c in card["criteria"] if c["kind"] == "llm"]
    assert all(c["n_unscored"] == 1 and c["n_pass"] == 0 and c["n_fail"] == 0 for c in llm)
    # unscored critical criteria fail the gate by default
    assert card["gate"]["passed"] is False
    assert result.exit_code == 4  # units ended unscored: the verdicts are incomplete
    assert "1 unparseable" in result.output and "--rejudge-unscored" in result.output


def test_a_floating_alias_is_refused(tmp_path: Path) -> None:
    traces = _traces(tmp_path, n=1)
    result = runner.invoke(
        app,
        [
            "evaluate",
            str(traces),
            "--criteria",
            str(criteria_path()),
            "--model",
            "openai/gpt-4o",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--run",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 2
    assert "alias" in result.output
    assert not (tmp_path / "run").exists()


def test_step_by_step_prep_judge_run_aggregate(tmp_path: Path) -> None:
    traces = _traces(tmp_path, n=2)
    run = tmp_path / "run"
    prep = runner.invoke(
        app,
        [
            "judge",
            "prep",
            str(traces),
            "--criteria",
            str(criteria_path()),
            "--run",
            str(run),
            "--unit",
            "criterion",
            "--model",
            f"openai/{MODEL}",
        ],
    )
    assert prep.exit_code == 0, prep.output
    with ScriptedLLMServer.running_in_thread(judge_everything_passes) as srv:
        judged = runner.invoke(
            app, ["judge", "run", "--run", str(run), "--model", f"openai/{MODEL}", "--base-url", srv.base_url]
        )
        asked = srv.request_count
    assert judged.exit_code == 0, judged.output
    assert asked == 2 * 5  # criterion axis: one call per (trace, llm criterion)
    assert runner.invoke(app, ["judge", "status", "--run", str(run)]).exit_code == 0
    # a second pass judges nothing: every unit already has its verdict
    with ScriptedLLMServer.running_in_thread(judge_everything_passes) as srv:
        again = runner.invoke(
            app, ["judge", "run", "--run", str(run), "--model", f"openai/{MODEL}", "--base-url", srv.base_url]
        )
        assert srv.request_count == 0
    assert again.exit_code == 0
    agg = runner.invoke(app, ["aggregate", "--run", str(run)])
    assert agg.exit_code in (0, 1) and (run / "report.html").exists()


def test_a_provider_outage_is_named_summarized_exits_4_and_can_be_retried(tmp_path: Path) -> None:
    traces = _traces(tmp_path, n=2)
    run = tmp_path / "run"
    prep = runner.invoke(
        app, ["judge", "prep", str(traces), "--criteria", str(criteria_path()), "--run", str(run)]
    )
    assert prep.exit_code == 0, prep.output
    with ScriptedLLMServer.running_in_thread() as srv:
        dead = srv.base_url  # nothing listens here once the block ends
    judge = ["judge", "run", "--run", str(run), "--model", f"openai/{MODEL}"]
    down = runner.invoke(app, [*judge, "--base-url", dead, "--max-retries", "1"])
    assert down.exit_code == 4, down.output
    assert "2 connection_refused" in down.output and "timed out" not in down.output
    assert "--rejudge-unscored" in down.output
    with ScriptedLLMServer.running_in_thread(judge_everything_passes) as srv:
        still = runner.invoke(app, [*judge, "--base-url", srv.base_url])
        assert srv.request_count == 0
        assert still.exit_code == 4 and "2 unit(s) were already unscored" in still.output
        fixed = runner.invoke(app, [*judge, "--base-url", srv.base_url, "--rejudge-unscored"])
        assert srv.request_count == 2
    assert fixed.exit_code == 0, fixed.output
    assert "2 judged, 0 unscored" in fixed.output


def test_evaluate_without_an_api_key_leaves_no_run_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    traces = _traces(tmp_path, n=1)
    result = runner.invoke(
        app,
        [
            "evaluate",
            str(traces),
            "--criteria",
            str(criteria_path()),
            "--model",
            f"openai/{MODEL}",
            "--run",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 2 and "OPENAI_API_KEY" in result.output
    assert not (tmp_path / "run").exists()


def test_evaluate_passes_fail_on_uncertain_to_the_gate(tmp_path: Path) -> None:
    traces = _traces(tmp_path, n=1)

    def uncertain(req: RecordedRequest) -> str:
        ids = IDS.findall(req.body["messages"][-1]["content"])[0].split(", ")
        entries = [
            {
                "criterion_id": c,
                "critique": "the tool result was never recorded",
                "result": "uncertain",
                "confidence": 0.5,
                "blocked_by": "the tool result",
            }
            for c in ids
        ]
        return orjson.dumps({"verdicts": entries}).decode()

    args = ["evaluate", str(traces), "--criteria", str(criteria_path()), "--model", f"openai/{MODEL}"]
    with ScriptedLLMServer.running_in_thread(uncertain) as srv:
        lenient = runner.invoke(app, [*args, "--base-url", srv.base_url, "--run", str(tmp_path / "a")])
        strict = runner.invoke(
            app, [*args, "--base-url", srv.base_url, "--run", str(tmp_path / "b"), "--fail-on-uncertain"]
        )
    card_a = json.loads((tmp_path / "a" / "scorecard.json").read_text())
    card_b = json.loads((tmp_path / "b" / "scorecard.json").read_text())
    assert card_a["gate"]["fail_on_uncertain"] is False and card_b["gate"]["fail_on_uncertain"] is True
    assert strict.exit_code == 1 and card_b["gate"]["passed"] is False
    assert lenient.exit_code in (0, 1)
