"""`helix campaign plan|run|report` on small configs of the example subject, resume, failures, the demo."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helix.campaign import load_campaign_config, load_campaign_run
from helix.cli import app
from helix.examples import SCENARIOS, campaign_config_path, run_demo_campaign

runner = CliRunner()

DISPATCH_MODULE = """
import os
from pathlib import Path

from helix.examples import support_shop_dispatch

_inner = support_shop_dispatch("default")


async def dispatch(ctx):
    log = Path(os.environ["HELIX_TEST_DISPATCH_LOG"])
    with log.open("a") as fh:
        fh.write(ctx.cell_id + "\\n")
    stop = int(os.environ.get("HELIX_TEST_STOP_AFTER", "0"))
    if stop and len(log.read_text().splitlines()) > stop:
        raise KeyboardInterrupt  # what Ctrl-C does in the middle of a cell
    if ctx.scenario.id == os.environ.get("HELIX_TEST_FAIL_SCENARIO"):
        raise RuntimeError("<script>alert('x')</script> backend exploded")
    return await _inner(ctx)
"""


SHOP_DISPATCH = '{function: "helix.examples:support_shop_dispatch", args: {profile: default}}'
SHOP_CHECKER = '"helix.examples:shop_correctness_checker"'


def _config(tmp_path: Path, *, dispatch: str = SHOP_DISPATCH, reps: int = 2) -> Path:
    path = tmp_path / "campaign.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            version: 2
            name: small
            scenarios:
              function: "helix.examples:campaign_scenarios"
              ids: [cancel-pending, refund-in-window, cancel-shipped]
            dispatch: {dispatch}
            scorers:
              - {{name: produced_state, produced_state: {{checker: {SHOP_CHECKER}}}}}
              - {{name: gold_match, trace_score: gold_match}}
            seed: 3
            reps: {reps}
            max_concurrency: 1
            commit: test-commit
            run_dir: {tmp_path / "run"}
            """
        )
    )
    return path


@pytest.fixture
def counting_dispatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pkg = tmp_path / "mods"
    pkg.mkdir()
    (pkg / "helix_test_counting_dispatch.py").write_text(DISPATCH_MODULE)
    monkeypatch.syspath_prepend(str(pkg))
    log = tmp_path / "dispatched.log"
    log.touch()
    monkeypatch.setenv("HELIX_TEST_DISPATCH_LOG", str(log))
    return log


def _finished_cells(run: Path) -> set[str]:
    return {p.parent.name for p in (run / "cells").glob("*/*.result.json")}


def test_plan_run_report_then_rerun_dispatches_nothing(tmp_path: Path) -> None:
    config = _config(tmp_path)
    plan = runner.invoke(app, ["campaign", "plan", str(config)])
    assert plan.exit_code == 0, plan.output
    assert "cached 0 · to run 6 · blocked 0" in plan.output
    assert not (tmp_path / "run").exists(), "plan must not touch the disk"

    run = runner.invoke(app, ["campaign", "run", str(config)])
    assert run.exit_code == 0, run.output
    assert "6 dispatched" in run.output and "0 failed" in run.output
    root = tmp_path / "run"
    manifest = load_campaign_run(root).manifest
    assert [c.cell_id for c in manifest.cells] == [
        f"{sid}@r{r}" for sid in ("cancel-pending", "refund-in-window", "cancel-shipped") for r in range(2)
    ]
    summary = json.loads((root / "summary.json").read_text())
    assert summary["total"] == 6 and summary["failed"] == 0
    assert summary["version"] == 2
    assert set(summary["aggregates"]["by_scorer"]) == {"produced_state", "gold_match"}
    page = (root / "report.html").read_text()
    assert 'id="by-scorer"' in page and 'data-name="produced_state"' in page
    assert 'data-name="cancel-shipped"' in page and "No failed cells." in page

    again = runner.invoke(app, ["campaign", "plan", str(config)])
    assert "cached 6 · to run 0" in again.output
    rerun = runner.invoke(app, ["campaign", "run", str(config), "--no-report"])
    assert rerun.exit_code == 0, rerun.output
    assert "6 cached · 0 dispatched" in rerun.output

    # the produced-state scorer and the simulator's own gold comparison agree cell by cell
    loaded = load_campaign_run(root)
    for cell in loaded.cells:
        assert cell.scores["produced_state"] == cell.scores["gold_match"], cell.cell_id

    out = tmp_path / "elsewhere.html"
    rep = runner.invoke(app, ["campaign", "report", str(root), "--out", str(out)])
    assert rep.exit_code == 0, rep.output
    assert out.read_text() == page, "the report is a pure function of the run directory"


def test_interrupted_run_resumes_without_redispatching_finished_cells(
    tmp_path: Path, counting_dispatch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path, dispatch='{function: "helix_test_counting_dispatch:dispatch"}', reps=3)
    monkeypatch.setenv("HELIX_TEST_STOP_AFTER", "4")
    first = runner.invoke(app, ["campaign", "run", str(config)])
    assert first.exit_code == 130, first.output
    root = tmp_path / "run"
    finished = _finished_cells(root)
    assert len(finished) == 4
    # the stopped run can be reported: finished cells counted, the rest "not run yet"
    partial = load_campaign_run(root)
    assert len(partial.cells) == 4 and len(partial.not_run) == 5
    assert runner.invoke(app, ["campaign", "report", str(root)]).exit_code == 0

    monkeypatch.delenv("HELIX_TEST_STOP_AFTER")
    counting_dispatch.write_text("")
    second = runner.invoke(app, ["campaign", "run", str(config)])
    assert second.exit_code == 0, second.output
    redispatched = set(counting_dispatch.read_text().split())
    assert not redispatched & finished, "a cached cell was dispatched again"
    assert redispatched | finished == {
        f"{s}@r{r}" for s in ("cancel-pending", "refund-in-window", "cancel-shipped") for r in range(3)
    }
    assert "4 cached · 5 dispatched" in second.output

    counting_dispatch.write_text("")
    third = runner.invoke(app, ["campaign", "run", str(config), "--no-report"])
    assert third.exit_code == 0 and counting_dispatch.read_text() == ""


def test_failed_cells_exit_1_and_the_report_shows_escaped_receipts(
    tmp_path: Path, counting_dispatch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HELIX_TEST_FAIL_SCENARIO", "refund-in-window")
    config = _config(tmp_path, dispatch='{function: "helix_test_counting_dispatch:dispatch"}')
    res = runner.invoke(app, ["campaign", "run", str(config)])
    assert res.exit_code == 1, res.output
    assert "2 cell(s) failed" in res.output
    root = tmp_path / "run"
    assert (root / "cells" / "refund-in-window@r0" / "failure-receipt.json").exists()
    page = (root / "report.html").read_text()
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert page.count('class="trace outcome-fail failure"') == 2
    assert "failure-receipt.json" in page
    # a failed scenario has no composite, so no scenario row, while the others keep theirs
    assert 'data-name="refund-in-window"' not in page and 'data-name="cancel-pending"' in page


def test_config_errors_name_file_line_and_field(tmp_path: Path) -> None:
    config = _config(tmp_path)
    text = config.read_text().replace("reps: 2", "reps: 0")
    config.write_text(text)
    res = runner.invoke(app, ["campaign", "plan", str(config)])
    assert res.exit_code == 2
    line = next(i for i, ln in enumerate(text.splitlines(), start=1) if ln.startswith("reps:"))
    assert f"campaign.yaml:{line}" in res.output and "reps" in res.output

    config.write_text(text.replace("reps: 0", "reps: 1").replace("seed: 3", "seed: 3\nsede: 4"))
    res = runner.invoke(app, ["campaign", "plan", str(config)])
    assert res.exit_code == 2 and "sede" in res.output and "campaign.yaml:" in res.output

    config.write_text(text.replace("reps: 0", "reps: 1").replace(SHOP_DISPATCH, "{}", 1))
    res = runner.invoke(app, ["campaign", "plan", str(config)])
    line = next(i for i, ln in enumerate(text.splitlines(), start=1) if ln.startswith("dispatch:"))
    message = " ".join(res.output.split())
    assert res.exit_code == 2 and f"campaign.yaml:{line}" in message and "dispatch.function" in message


def _plan_error(config: Path, text: str) -> str:
    """Write ``text`` as the config, plan it, and return the error message (one line)."""
    config.write_text(text)
    res = runner.invoke(app, ["campaign", "plan", str(config)])
    assert res.exit_code == 2, res.output
    return " ".join(res.output.split())


@pytest.mark.parametrize(
    ("old", "new", "field", "says"),
    [
        # a module that does not exist
        (
            '"helix.examples:support_shop_dispatch"',
            '"helix.exampels:support_shop_dispatch"',
            "dispatch.function",
            "no module named 'helix.exampels'",
        ),
        # a module without that function
        (
            '"helix.examples:campaign_scenarios"',
            '"helix.examples:campaign_scenarioz"',
            "scenarios.function",
            "has no 'campaign_scenarioz'",
        ),
        # not a module:function reference at all
        (
            SHOP_CHECKER,
            "shop-checker",
            "scorers[0].produced_state.checker",
            "not a module:function reference",
        ),
        # args the factory does not take
        (
            "args: {profile: default}",
            "args: {profil: none}",
            "dispatch.args",
            "does not take these args",
        ),
        # args the factory refuses
        (
            "args: {profile: default}",
            "args: {profile: sloppy}",
            "dispatch.args",
            "unknown mistake profile 'sloppy'",
        ),
        # a scenario id the function does not return
        ("ids: [cancel-pending,", "ids: [no-such-scenario,", "scenarios.ids", "'no-such-scenario'"),
    ],
)
def test_a_bad_module_function_path_names_file_line_field_and_fix(
    tmp_path: Path, old: str, new: str, field: str, says: str
) -> None:
    config = _config(tmp_path)
    text = config.read_text()
    assert old in text
    bad = text.replace(old, new, 1)
    message = _plan_error(config, bad)
    line = next(i for i, ln in enumerate(bad.splitlines(), start=1) if new in ln)
    assert f"campaign.yaml:{line}" in message, message
    assert f"field '{field}'" in message and says in message, message
    assert "Traceback" not in message


def test_a_version_1_config_is_refused_with_how_to_migrate(tmp_path: Path) -> None:
    config = tmp_path / "campaign.yaml"
    message = _plan_error(
        config,
        "version: 1\nscenarios: {example: support-shop}\ndispatch: {example: support-shop}\n"
        "judges:\n  - {name: p, produced_state: {checker: example}}\ncommit: x\n",
    )
    assert "campaign.yaml:1" in message and "version 1" in message
    assert "scorers:" in message and "helix.examples:campaign_scenarios" in message


def test_yaml_errors_point_at_the_line_of_the_field(tmp_path: Path) -> None:
    config = _config(tmp_path)
    text = config.read_text()
    # an unknown key whose value is a block: the error names the key's line, not the value's
    bad = text.replace("seed: 3\n", "seed: 3\nretyr:\n  attempts: 2\n")
    message = _plan_error(config, bad)
    line = next(i for i, ln in enumerate(bad.splitlines(), start=1) if ln.startswith("retyr:"))
    assert f"campaign.yaml:{line}," in message and "unknown field 'retyr'" in message, message
    # an unclosed quote is reported where it opens, not past the end of the file
    bad = text.replace("run_dir: ", 'run_dir: "')
    message = _plan_error(config, bad)
    line = next(i for i, ln in enumerate(bad.splitlines(), start=1) if ln.startswith("run_dir:"))
    assert f"campaign.yaml:{line}:" in message and "never closed" in message, message


def test_shipped_example_config_is_valid_and_printable() -> None:
    config = load_campaign_config(campaign_config_path())
    assert {s.name for s in config.scorers} >= {"produced_state", "gold_match"}
    shown = runner.invoke(app, ["campaign", "example-config"])
    assert shown.exit_code == 0 and "produced_state" in shown.output
    assert "helix.examples:support_shop_dispatch" in shown.output


def test_demo_campaign_runs_every_scenario_and_reruns_from_cache(tmp_path: Path) -> None:
    first, report = run_demo_campaign(tmp_path, reps=1)
    assert first.total == len(SCENARIOS) and first.dispatched == len(SCENARIOS) and first.failed == 0
    assert report.exists()
    assert first.aggregates.by_scorer["produced_state"] == first.aggregates.by_scorer["gold_match"]
    second, _ = run_demo_campaign(tmp_path, reps=1)
    assert second.cached == len(SCENARIOS) and second.dispatched == 0
    assert second.aggregates == first.aggregates


def test_cache_identity_follows_what_decides_results_only(tmp_path: Path) -> None:
    config = _config(tmp_path, reps=1)
    assert runner.invoke(app, ["campaign", "run", str(config), "--no-report"]).exit_code == 0
    text = config.read_text()
    # name, concurrency, retry policy: results stay valid, nothing to run
    config.write_text(
        text.replace("name: small", "name: renamed").replace(
            "max_concurrency: 1", "max_concurrency: 4\nretry: {attempts: 3}"
        )
    )
    assert "cached 3 · to run 0" in runner.invoke(app, ["campaign", "plan", str(config)]).output
    # another agent profile or another commit: every cell runs again
    config.write_text(text.replace("args: {profile: default}", "args: {profile: none}"))
    assert "cached 0 · to run 3" in runner.invoke(app, ["campaign", "plan", str(config)]).output
    config.write_text(text.replace("commit: test-commit", "commit: other-commit"))
    assert "cached 0 · to run 3" in runner.invoke(app, ["campaign", "plan", str(config)]).output


def test_a_deleted_cell_file_is_reported_and_run_again(tmp_path: Path) -> None:
    config = _config(tmp_path, reps=1)
    assert runner.invoke(app, ["campaign", "run", str(config), "--no-report"]).exit_code == 0
    next((tmp_path / "run" / "cells" / "cancel-pending@r0").glob("*.result.json")).unlink()
    plan = runner.invoke(app, ["campaign", "plan", str(config)])
    assert "cached 2 · to run 1" in plan.output
    assert "cancel-pending@r0: its result file is gone" in " ".join(plan.output.split())
    rerun = runner.invoke(app, ["campaign", "run", str(config), "--no-report"])
    assert rerun.exit_code == 0 and "2 cached · 1 dispatched" in rerun.output
    assert "cache: 1 cell(s) did not match the cache index" in rerun.output


def test_two_runs_in_different_directories_write_the_same_shared_files(tmp_path: Path) -> None:
    config = _config(tmp_path, reps=1)  # its run_dir is an absolute path under tmp_path
    for where in ("a", "b"):
        res = runner.invoke(app, ["campaign", "run", str(config), "--run-dir", str(tmp_path / where / "run")])
        assert res.exit_code == 0, res.output
    for name in ("campaign.json", "summary.json", "report.html"):
        a = (tmp_path / "a" / "run" / name).read_bytes()
        assert a == (tmp_path / "b" / "run" / name).read_bytes(), name
        assert str(tmp_path).encode() not in a, f"{name} holds an absolute path"
    manifest = load_campaign_run(tmp_path / "a" / "run").manifest
    assert manifest.version == 2 and "run_dir" not in manifest.config
