"""The discovery commands end to end through the CLI, and helix.yaml defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from helix.cli import app
from helix.discovery import open_discovery
from helix.traces import Trace, write_traces_jsonl

from .conftest import PASS_BODY, fail_body, write_determination

runner = CliRunner()


@pytest.fixture
def traces_file(tmp_path: Path, shop_traces: list[Trace]) -> Path:
    return write_traces_jsonl(shop_traces, tmp_path / "traces.jsonl")


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_prep_cluster_aggregate_handoff_through_the_cli(tmp_path: Path, traces_file: Path) -> None:
    run = tmp_path / "run"
    out = invoke(
        "discover", "prep", str(traces_file), "--run", str(run), "--sample", "6", "--strategy", "random"
    )
    assert "6 determiner packets" in out
    missing = runner.invoke(app, ["discover", "cluster", "--run", str(run)])
    assert missing.exit_code == 3  # determinations missing, listed
    opened = open_discovery(run)
    assert opened.manifest.sample == {"strategy": "random", "n": 6, "seed": 0, "picked": 6}
    for i, unit in enumerate(opened.units):  # SYNTHETIC verdicts
        write_determination(
            opened, unit.key, fail_body(0, "assistant", f"synthetic {i % 2}") if i < 4 else PASS_BODY
        )
    assert "4 notes" in invoke("discover", "cluster", "--run", str(run)) or True
    (key,) = opened.cluster.keys()
    notes = [n["id"] for n in json.loads(opened.cluster.packet_path(key).read_text())["notes"]]
    verdict = {
        "version": 1,
        "key": key,
        "status": "scored",
        "judge": {"runtime": "synthetic-test", "model": "none"},
        "clustering": {
            "critique": "synthetic",
            "categories": [
                {
                    "id": "synthetic-crash",
                    "title": "synthetic crash",
                    "definition": "d",
                    "question": "q?",
                    "pass_definition": "p",
                    "fail_definition": "f",
                    "routing": "fixable",
                    "routing_reason": "r",
                    "note_ids": notes,
                }
            ],
            "unassigned": [],
        },
    }
    opened.cluster.verdict_path(key).parent.mkdir(parents=True, exist_ok=True)
    opened.cluster.verdict_path(key).write_text(json.dumps(verdict))
    out = invoke("discover", "aggregate", "--run", str(run), "--last-k", "2")
    assert "synthetic-crash" in out and "fixable" in out
    bundle = json.loads(invoke("discover", "handoff", "--run", str(run)))
    assert bundle["fixables"][0]["failures"] == 4
    assert "nothing to draft" in (run / "aggregate" / "criteria.draft.yaml").read_text()
    assert "outcome vs reward" in invoke("discover", "score", "--run", str(run), "--no-attribution")


def test_profile_and_sample_commands(tmp_path: Path, traces_file: Path) -> None:
    invoke("profile", str(traces_file), "-o", str(tmp_path / "profile.yaml"), "--subject", "shop")
    profile = yaml.safe_load((tmp_path / "profile.yaml").read_text())
    assert profile["version"] == 1 and profile["tools"] and profile["expected_flow"]
    assert all(a["name"] not in {t["name"] for t in profile["tools"]} for a in profile["agents"])
    invoke("sample", str(traces_file), "--n", "3", "--strategy", "outlier", "-o", str(tmp_path / "s.jsonl"))
    plan = json.loads((tmp_path / "s.plan.json").read_text())
    assert len(plan["picks"]) == 3 and all(p["reason"].startswith("outlier:") for p in plan["picks"])
    first = (tmp_path / "s.jsonl").read_bytes()
    invoke("sample", str(traces_file), "--n", "3", "--strategy", "outlier", "-o", str(tmp_path / "s.jsonl"))
    assert (tmp_path / "s.jsonl").read_bytes() == first


def test_init_writes_helix_yaml_and_commands_take_its_defaults(
    tmp_path: Path, traces_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = traces_file.parent
    out = invoke("init", str(project), "--substrate", "codex", "--model", "openai/gpt-4o-2024-08-06")
    cfg = yaml.safe_load((project / "helix.yaml").read_text())
    assert cfg == {
        "version": 1,
        "subject": project.absolute().name,
        "traces": "traces.jsonl",
        "substrate": "codex",
        "model": "openai/gpt-4o-2024-08-06",
    }
    assert "helix agents install --runtime codex" in out
    again = runner.invoke(app, ["init", str(project)])
    assert again.exit_code == 2 and "--force" in again.output
    monkeypatch.chdir(project)
    invoke("discover", "prep", "traces.jsonl", "--run", "run")  # --model and --subject from helix.yaml
    manifest = open_discovery(project / "run").manifest
    assert manifest.pin.model == "gpt-4o-2024-08-06" and manifest.pin.provider == "openai"
    assert manifest.subject == project.absolute().name
    invoke("discover", "prep", "traces.jsonl", "--run", "run2", "--subject", "flag-wins")
    assert open_discovery(project / "run2").manifest.subject == "flag-wins"
    invoke("agents", "install", "--dir", "kit")  # --runtime codex from helix.yaml
    assert (project / "kit" / "AGENTS.md").is_file()


def test_init_refuses_a_floating_alias_and_model_substrate_without_a_model(tmp_path: Path) -> None:
    bad = runner.invoke(app, ["init", str(tmp_path), "--substrate", "model"])
    assert bad.exit_code == 2 and "needs --model" in bad.output
    alias = runner.invoke(app, ["init", str(tmp_path), "--substrate", "model", "--model", "openai/gpt-4o"])
    assert alias.exit_code == 2


def test_the_new_commands_keep_helix_help_from_loading_pydantic() -> None:
    import subprocess
    import sys

    code = "import sys, helix.cli._app; print(sorted(m for m in ('pydantic', 'yaml', 'orjson') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pydantic" not in out
