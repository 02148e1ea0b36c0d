"""`helix audit --deep`: packets for the reads thresholds cannot decide, verdicts folded into findings."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

from typer.testing import CliRunner

from helix.audit import DEEP_DIR, CriterionReading, audit_run, prep_deep_audit
from helix.cli import app
from helix.judging import judge_packet_directory, open_run
from helix.models import open_model
from helix.models.testing import RecordedRequest, ScriptedLLMServer

from .conftest import MakeRun

runner = CliRunner()


def _entry(q: str, result: str) -> dict[str, object]:
    return {
        "criterion_id": q,
        "critique": f"synthetic read of {q}",
        "result": result,
        "confidence": 0.9,
        "blocked_by": None,
    }


def test_deep_audit_is_not_measured_until_reads_exist_then_folds_them(make_run: MakeRun) -> None:
    built = make_run()
    matrix = open_run(built.path).matrix
    folder = prep_deep_audit(built.path, matrix)
    keys = folder.keys()
    assert len(keys) == len(built.llm_ids)
    report = audit_run(built.path, deep=True)
    assert report.by_check("criteria-actionable").status == "not-measured"
    assert "helix judge batches" in report.by_check("criteria-actionable").next_step
    assert "criteria-actionable" not in {f.check for f in audit_run(built.path).findings}  # only with deep
    # SYNTHETIC reads: the first criterion is generic, every other passes both reads
    first = json.loads(folder.packet_path(keys[0]).read_text())["criterion"]["id"]
    for key in keys:
        cid = json.loads(folder.packet_path(key).read_text())["criterion"]["id"]
        body = {
            "version": 1,
            "key": key,
            "judge": {"runtime": "synthetic-test", "model": "none"},
            "verdicts": [
                _entry("actionable", "fail" if cid == first else "pass"),
                _entry("one-failure-mode", "pass"),
            ],
        }
        folder.verdict_path(key).parent.mkdir(parents=True, exist_ok=True)
        folder.verdict_path(key).write_text(json.dumps(body))
    report = audit_run(built.path, deep=True)
    actionable = report.by_check("criteria-actionable")
    assert actionable.status == "fail" and actionable.evidence.ids["failed"] == (first,)
    assert report.by_check("judge-prompt-one-failure-mode").status == "pass"


def test_a_provider_reads_the_deep_packets_through_the_engine(make_run: MakeRun) -> None:
    built = make_run()
    folder = prep_deep_audit(built.path, open_run(built.path).matrix)

    def answer(req: RecordedRequest) -> str:  # scripted (synthetic) answers from a loopback server
        assert "UNTRUSTED TRAJECTORY" in req.prompt_text
        return json.dumps({"verdicts": [_entry("actionable", "pass"), _entry("one-failure-mode", "fail")]})

    async def go() -> object:
        async with ScriptedLLMServer(answer) as srv:
            model = open_model(srv.spec("openai/gpt-4o-2024-08-06"), rng=random.Random(0), max_retries=0)
            try:
                return await judge_packet_directory(folder.root, CriterionReading(), model)
            finally:
                await model.aclose()

    summary = asyncio.run(go())
    assert summary.judged == len(built.llm_ids)  # type: ignore[attr-defined]
    report = audit_run(built.path, deep=True)
    assert report.by_check("judge-prompt-one-failure-mode").status == "fail"


def test_cli_deep_writes_packets_and_reports(make_run: MakeRun) -> None:
    built = make_run()
    result = runner.invoke(app, ["audit", "--run", str(built.path), "--deep", "--json"])
    assert (Path(built.path) / DEEP_DIR / "packets").is_dir()
    checks = {f["check"]: f["status"] for f in json.loads(result.output)["findings"]}
    assert (
        checks["criteria-actionable"] == "not-measured"
        and checks["judge-prompt-one-failure-mode"] == "not-measured"
    )
