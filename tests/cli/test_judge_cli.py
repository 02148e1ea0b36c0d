"""The judging protocol through the `helix` command line: prep, status, an outside judge, aggregate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helix.cli import app
from helix.examples import criteria_path, generate_episodes
from helix.traces import write_traces_jsonl

runner = CliRunner()

# An outside program (not Helix) acting as the judge: it reads every packet and writes the verdict
# file the packet names, failing `claims-match-actions` on the traces listed in argv[2].
OUTSIDE_JUDGE = r"""
import json, pathlib, sys
run = pathlib.Path(sys.argv[1]); fail_on = set(sys.argv[2].split(",")) if sys.argv[2] else set()
for p in sorted((run / "packets").glob("*.packet.json")):
    packet = json.loads(p.read_text())
    fails = bool(fail_on & set(packet["trace_ids"]))
    verdicts = []
    for c in packet["criteria"]:
        bad = fails and c["id"] == "claims-match-actions"
        verdicts.append({"criterion_id": c["id"], "critique": "read entries 0-9; " + ("claim unbacked" if bad else "fine"),
                         "result": "fail" if bad else "pass", "confidence": 0.8, "blocked_by": None})
    out = {"version": 1, "key": packet["key"], "judge": {"runtime": "test-script", "model": "scripted-judge-v1"},
           "verdicts": verdicts}
    pathlib.Path(packet["verdict_file"]).write_text(json.dumps(out))
"""


@pytest.fixture()
def prepped(tmp_path: Path) -> Path:
    episodes = generate_episodes(n=6, seed=3)
    traces = write_traces_jsonl([e.trace for e in episodes], tmp_path / "traces.jsonl")
    run = tmp_path / "run"
    result = runner.invoke(
        app, ["judge", "prep", str(traces), "--criteria", str(criteria_path()), "--run", str(run)]
    )
    assert result.exit_code == 0, result.output
    assert "next:" in result.output
    return run


def _outside_judge(run: Path, fail_on: str = "") -> None:
    subprocess.run([sys.executable, "-c", OUTSIDE_JUDGE, str(run), fail_on], check=True)


def test_status_and_aggregate_refuse_while_verdicts_are_missing(prepped: Path) -> None:
    packets = sorted(p.name.split(".")[0] for p in (prepped / "packets").glob("*.packet.json"))
    status = runner.invoke(app, ["judge", "status", "--run", str(prepped)])
    assert status.exit_code == 1
    for key in packets:
        assert key in status.output
    agg = runner.invoke(app, ["aggregate", "--run", str(prepped)])
    assert agg.exit_code == 3
    assert packets[0] in agg.output
    assert not (prepped / "scorecard.json").exists()


def test_outside_judge_verdicts_fold_into_the_scorecard(prepped: Path) -> None:
    first_trace = json.loads(next(iter(sorted((prepped / "packets").glob("*.packet.json")))).read_text())[
        "trace_ids"
    ][0]
    _outside_judge(prepped, fail_on=first_trace)
    assert runner.invoke(app, ["judge", "status", "--run", str(prepped)]).exit_code == 0
    agg = runner.invoke(app, ["aggregate", "--run", str(prepped)])
    card = json.loads((prepped / "scorecard.json").read_text())
    claims = next(c for c in card["criteria"] if c["criterion_id"] == "claims-match-actions")
    assert claims["outcome"] == "fail"
    assert claims["n_fail"] == 1 and claims["n_pass"] == 5
    assert claims["failing_trace_ids"] == [first_trace]
    # claims-match-actions is critical, so the gate fails and aggregate exits 1
    assert card["gate"]["passed"] is False
    assert agg.exit_code == 1
    assert (prepped / "report.html").exists()


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda v: v.update(result="maybe"), "maybe"),
        (lambda v: v.pop("critique"), "critique"),
    ],
)
def test_aggregate_rejects_a_bad_verdict_naming_the_file(prepped: Path, mutate, needle: str) -> None:  # type: ignore[no-untyped-def]
    _outside_judge(prepped)
    victim = sorted((prepped / "verdicts").glob("*.verdict.json"))[0]
    doc = json.loads(victim.read_text())
    if "verdicts" in doc and doc.get("judge", {}).get("runtime") != "code":
        mutate(doc["verdicts"][0])
    else:  # a code verdict sorted first: pick an LLM one instead
        victim = next(
            p
            for p in sorted((prepped / "verdicts").glob("*.verdict.json"))
            if json.loads(p.read_text())["judge"]["runtime"] != "code"
        )
        doc = json.loads(victim.read_text())
        mutate(doc["verdicts"][0])
    victim.write_text(json.dumps(doc))
    agg = runner.invoke(app, ["aggregate", "--run", str(prepped)])
    assert agg.exit_code == 2
    assert victim.name in agg.output.replace("\n", "")
    assert needle in agg.output


def test_result_before_critique_is_rejected(prepped: Path) -> None:
    _outside_judge(prepped)
    victim = next(
        p
        for p in sorted((prepped / "verdicts").glob("*.verdict.json"))
        if json.loads(p.read_text())["judge"]["runtime"] != "code"
    )
    doc = json.loads(victim.read_text())
    entry = doc["verdicts"][0]
    doc["verdicts"][0] = {
        "criterion_id": entry["criterion_id"],
        "result": entry["result"],
        "critique": entry["critique"],
        "confidence": entry["confidence"],
        "blocked_by": None,
    }
    victim.write_text(json.dumps(doc))
    agg = runner.invoke(app, ["aggregate", "--run", str(prepped)])
    assert agg.exit_code == 2
    assert "before" in agg.output and "critique" in agg.output


def test_helix_console_script_starts(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "helix.cli", "--help"], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    for command in ("judge", "aggregate", "evaluate", "traces", "schema", "demo"):
        assert command in out.stdout


def test_schema_verdict_is_json_schema() -> None:
    out = runner.invoke(app, ["schema", "verdict"])
    assert out.exit_code == 0
    doc = json.loads(out.output)
    assert "critique" in json.dumps(doc) and doc["$schema"].startswith("https://json-schema.org/")
    bad = runner.invoke(app, ["schema", "nope"])
    assert bad.exit_code == 2 and "verdict" in bad.output
