"""`helix judge rerun`: the example re-judged through the loopback server with scripted flips, and the
dispatch path; flip rate and Fleiss' kappa reach validate, the scorecard and the report."""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from helix import aggregate_run
from helix.calibration import fleiss_kappa, read_consistency, validate_run
from helix.cli import app
from helix.examples import criteria_path, generate_episodes
from helix.judging import load_criteria, open_run, prep_run, read_packet
from helix.models.testing import RecordedRequest, ScriptedLLMServer, ScriptedReply
from helix.review import HumanLabel, write_labels_jsonl
from helix.scoring import Scorecard

MODEL = "openai/gpt-4o-2024-08-06"
IDS_LINE = re.compile(r"Criterion ids to judge, in this order: (.+)\.\s*$", re.MULTILINE)
runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def example_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    prep_run([e.trace for e in generate_episodes(n=12, seed=7)], load_criteria(criteria_path()), run)
    return run


def _flips(prompt: str) -> bool:
    """The scripted judge changes its mind on the second look at about one unit in three."""
    return int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 3 == 0


class FlippingJudge:
    """Answers pass for every criterion, except fail on the second look at a flipping unit."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, req: RecordedRequest) -> str:
        prompt = req.prompt_text
        with self.lock:
            self.seen[prompt] += 1
            look = self.seen[prompt]
        result = "fail" if _flips(prompt) and look == 2 else "pass"
        ids = IDS_LINE.findall(prompt)[0].split(", ")
        return orjson.dumps(
            {
                "verdicts": [
                    {"criterion_id": c, "critique": f"looked at {c}", "result": result, "confidence": 0.8}
                    for c in ids
                ]
            }
        ).decode()


def test_rerun_through_the_loopback_server_measures_the_scripted_flips(example_run: Path) -> None:
    judge = FlippingJudge()
    verdicts_before = (
        sorted(p.name for p in (example_run / "verdicts").glob("*"))
        if (example_run / "verdicts").is_dir()
        else []
    )
    with ScriptedLLMServer.running_in_thread(judge) as srv:
        result = runner.invoke(
            app,
            [
                "judge",
                "rerun",
                "--run",
                str(example_run),
                "--times",
                "3",
                "--model",
                MODEL,
                "--base-url",
                srv.base_url,
            ],
        )
        prompts = {r.prompt_text for r in srv.requests}
    assert result.exit_code == 0, result.output
    report = read_consistency(example_run)
    assert report is not None and report.times == 3 and report.unscored == 0
    units = len(report.units)
    assert len(prompts) == units  # one distinct prompt per unit, each asked three times
    flipping = sum(_flips(p) for p in prompts)
    assert 0 < flipping < units
    for r in report.results:
        assert (r.units, r.flips, r.reruns_max) == (units, flipping, 3)
        table = [["pass", "fail", "pass"] if _flips(p) else ["pass"] * 3 for p in sorted(prompts)]
        assert r.kappa == pytest.approx(fleiss_kappa(table))
        assert f"{r.criterion_id}: flip rate {flipping / units:.1%}" in result.output
    # the run's own verdicts are untouched; reruns live apart
    after = (
        sorted(p.name for p in (example_run / "verdicts").glob("*"))
        if (example_run / "verdicts").is_dir()
        else []
    )
    assert after == verdicts_before
    assert len(list((example_run / "reruns").glob("r*/*.verdict.json"))) == 3 * units


def test_a_sample_and_an_unscored_rerun(example_run: Path) -> None:
    with ScriptedLLMServer.running_in_thread(
        FlippingJudge(), script=[ScriptedReply(status=400, text="bad request")]
    ) as srv:
        result = runner.invoke(
            app,
            [
                "judge",
                "rerun",
                "--run",
                str(example_run),
                "--times",
                "2",
                "--sample",
                "3",
                "--model",
                MODEL,
                "--base-url",
                srv.base_url,
                "--temperature",
                "0.7",
            ],
        )
        temperatures = {r.body.get("temperature") for r in srv.requests}
    assert result.exit_code == 4, result.output  # one rerun unscored
    report = read_consistency(example_run)
    assert report is not None and len(report.units) == 3 and report.unscored == 1
    assert report.temperature == 0.7 and temperatures == {0.7}


def test_dispatch_path_then_validate_scorecard_and_report_show_it(example_run: Path, tmp_path: Path) -> None:
    first = runner.invoke(app, ["judge", "rerun", "--run", str(example_run), "--times", "2", "--dispatch"])
    assert first.exit_code == 0 and "Then run this command again" in " ".join(first.output.split())
    run = open_run(example_run)
    llm = [u for u in run.units if u.kind == "llm"]
    packet_version = run.manifest.prompt_version
    # The agent runtime's part: judge each packet copy and write the verdict where it says.
    for i, path in enumerate(sorted((example_run / "reruns").glob("r*/*.packet.json"))):
        packet = read_packet(path)
        assert Path(packet.verdict_file).parent == path.parent
        flip = "r2" in str(path) and i % 2 == 0
        verdict = {
            "version": 1,
            "key": packet.key,
            "verdicts": [
                {
                    "criterion_id": c,
                    "critique": "read it",
                    "result": "fail" if flip else "pass",
                    "confidence": 0.9,
                }
                for c in packet.criterion_ids
            ],
            "judge": {
                "runtime": "dispatch",
                "model": "judge-runtime-2026-01-01",
                "prompt_version": packet_version,
            },
        }
        Path(packet.verdict_file).write_bytes(orjson.dumps(verdict))
    second = runner.invoke(app, ["judge", "rerun", "--run", str(example_run), "--times", "2", "--dispatch"])
    assert second.exit_code == 0, second.output
    report = read_consistency(example_run)
    assert report is not None and report.path == "dispatch" and len(report.units) == len(llm)
    assert all(r.flips > 0 for r in report.results)
    # validate (on shipped-style verdicts of the run) shows the consistency beside TPR and TNR
    for unit in llm:
        verdict = {
            "version": 1,
            "key": unit.key,
            "verdicts": [
                {"criterion_id": c, "critique": "ok", "result": "pass", "confidence": 0.9}
                for c in unit.criterion_ids
            ],
            "judge": {
                "runtime": "dispatch",
                "model": "judge-runtime-2026-01-01",
                "prompt_version": packet_version,
            },
        }
        run.verdict_path(unit.key).write_bytes(orjson.dumps(verdict))
    aggregate_run(example_run)
    cid = llm[0].criterion_ids[0]
    labels = tmp_path / "labels.jsonl"
    write_labels_jsonl(
        labels,
        [
            HumanLabel(trace_id=t.id, criterion_id=cid, label="pass" if n % 2 else "fail", annotator="ana")
            for n, t in enumerate(run.traces)
        ],  # type: ignore[arg-type]
    )
    result = runner.invoke(app, ["validate", "--run", str(example_run), "--labels", str(labels)])
    assert "self-consistency: flip rate" in result.stdout
    (r,) = validate_run(example_run, labels, split="dev").results
    assert r.consistency is not None and r.consistency.criterion_id == cid
    card = Scorecard.model_validate_json((example_run / "scorecard.json").read_bytes())
    assert card.validation is not None and card.validation[0].flip_rate == r.consistency.flip_rate
    assert "self-consistency over 2 reruns" in (example_run / "report.html").read_text()
