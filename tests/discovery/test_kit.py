"""The agent-runtime kit: definitions that parse, batches that cover every packet once, wait's exit codes."""

from __future__ import annotations

import json
import threading
import time
import tomllib
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from helix import UsageError
from helix.cli import app
from helix.judging import estimate_tokens, plan_batches, write_batches

from .conftest import PASS_BODY, MakeRun, write_determination

runner = CliRunner()


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 5000), max_size=60),
    budget=st.integers(1, 6000),
)
def test_batches_cover_every_packet_exactly_once_within_the_budget(sizes: list[int], budget: int) -> None:
    items = [(f"k{i:03d}", s) for i, s in enumerate(sizes)]
    plan = plan_batches(items, budget)
    keys = [k for b in plan for k in b.keys]
    assert sorted(keys) == sorted(k for k, _ in items)  # every packet, once
    for b in plan:
        assert b.tokens == sum(dict(items)[k] for k in b.keys)
        assert b.tokens <= budget or (len(b.keys) == 1 and b.oversize)
    assert [b.index for b in plan] == list(range(1, len(plan) + 1))
    assert plan_batches(list(reversed(items)), budget) == plan  # deterministic, order-free


def test_batches_refuse_bad_input() -> None:
    with pytest.raises(UsageError):
        plan_batches([("a", 1), ("a", 2)], 10)
    with pytest.raises(UsageError):
        plan_batches([("a", 1)], 0)
    assert estimate_tokens(4001) == 1001 + 600


def test_the_claude_code_kit_parses(tmp_path: Path) -> None:
    result = runner.invoke(app, ["agents", "install", "--runtime", "claude-code", "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    agents = sorted((tmp_path / ".claude" / "agents").glob("*.md"))
    assert len(agents) == 5
    for path in agents:
        text = path.read_text()
        assert text.startswith("---\n")
        front = yaml.safe_load(text.split("---\n")[1])
        assert front["name"] == path.stem and front["tools"] == "Read, Write" and front["model"] == "inherit"
        assert len(front["description"]) > 20
        assert "untrusted" in text and "verdict_file" in text
    workflow = (tmp_path / ".claude" / "commands" / "helix-judge.md").read_text()
    front = yaml.safe_load(workflow.split("---\n")[1])
    assert "Task" in front["allowed-tools"] and "helix judge batches --run $1" in workflow
    assert "helix judge wait" in workflow and "helix-determine" in workflow


def test_the_codex_kit_parses_and_keeps_the_rest_of_agents_md(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("# My project\n\nKeep this.\n")
    for _ in range(2):  # reinstalling replaces the Helix section, once
        result = runner.invoke(app, ["agents", "install", "--runtime", "codex", "--dir", str(tmp_path)])
        assert result.exit_code == 0, result.output
    text = (tmp_path / "AGENTS.md").read_text()
    assert text.startswith("# My project\n\nKeep this.\n") and text.count("helix:begin") == 1
    assert "codex exec" in text and "helix judge batches" in text
    for path in (tmp_path / ".codex" / "agents").glob("*.toml"):
        doc = tomllib.loads(path.read_text())
        assert doc["name"] == path.stem and "verdict_file" in doc["developer_instructions"]
    result = runner.invoke(app, ["agents", "install", "--runtime", "vscode", "--dir", str(tmp_path)])
    assert result.exit_code == 2 and "claude-code or codex" in result.output


def test_judge_batches_and_wait_on_a_discovery_run(make_run: MakeRun) -> None:
    run = make_run()
    result = runner.invoke(app, ["judge", "batches", "--run", str(run.run_dir), "--budget-tokens", "9000"])
    assert result.exit_code == 0, result.output
    index = json.loads((run.determine.root / "batches" / "index.json").read_text())
    batch_files = [run.determine.root / "batches" / n for n in index["batches"]]
    listed = [p for b in batch_files for p in json.loads(b.read_text())["packets"]]
    assert sorted(listed) == sorted(str(run.determine.packet_path(u.key)) for u in run.units)
    assert index["kinds"] == ["determination"]

    timed_out = runner.invoke(
        app, ["judge", "wait", "--run", str(run.run_dir), "--timeout", "0.2", "--interval", "0.05"]
    )
    assert timed_out.exit_code == 3 and "still missing" in timed_out.output

    def write_all_later() -> None:  # a stand-in reader finishing while `wait` polls (synthetic verdicts)
        time.sleep(0.3)
        for unit in run.units:
            write_determination(run, unit.key, PASS_BODY)

    worker = threading.Thread(target=write_all_later)
    worker.start()
    done = runner.invoke(
        app, ["judge", "wait", "--run", str(run.run_dir), "--timeout", "20", "--interval", "0.05"]
    )
    worker.join()
    assert done.exit_code == 0 and f"all {len(run.units)} verdict files are present" in done.output
    again = write_batches(run.determine.root, budget_tokens=9000)
    assert again.packets == 0 and again.already_judged == len(run.units)


def test_judge_batches_needs_packets(tmp_path: Path) -> None:
    result = runner.invoke(app, ["judge", "batches", "--run", str(tmp_path)])
    assert result.exit_code == 2 and "packets" in result.output


def test_schemas_of_the_new_formats() -> None:
    for name in ("determination", "cluster", "profile"):
        result = runner.invoke(app, ["schema", name])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["$schema"].startswith("https://json-schema.org")
