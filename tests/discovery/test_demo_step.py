"""The demo's discovery step: skipped with a note until verdicts ship, aggregated once they do."""

from __future__ import annotations

import shutil
from pathlib import Path

from helix.discovery import open_discovery
from helix.examples import generate_episodes
from helix.examples._demo_discovery import run_demo_discovery, shipped_discovery_dir

from .conftest import PASS_BODY, fail_body, write_determination
from .test_run import category, write_cluster


def test_the_step_skips_with_a_note_when_verdicts_are_not_shipped(tmp_path: Path) -> None:
    traces = [e.trace for e in generate_episodes(n=4, seed=1)]
    step = run_demo_discovery(traces, tmp_path, shipped=tmp_path / "nothing-shipped")
    assert step.skipped is not None and "not shipped" in step.skipped and step.report_path is None
    assert len(open_discovery(tmp_path / "discovery").determine.keys()) == 4


def test_the_step_aggregates_when_every_verdict_is_shipped(tmp_path: Path) -> None:
    traces = [e.trace for e in generate_episodes(n=6, seed=1)]
    # Make a SYNTHETIC "shipped" folder the way a runtime session would fill the real one.
    scratch = run_demo_discovery(traces, tmp_path / "scratch", shipped=tmp_path / "none")
    run = open_discovery(scratch.run_dir)
    for i, unit in enumerate(run.units):
        write_determination(run, unit.key, fail_body(0, "assistant", "synthetic") if i < 3 else PASS_BODY)
    from helix.discovery import prep_cluster

    prep_cluster(run.run_dir)
    (key,) = run.cluster.keys()
    write_cluster(run, key, [category("synthetic-mode", [u.key for u in run.units[:3]])])
    shipped = tmp_path / "shipped"
    shutil.copytree(run.determine.verdict_dir, shipped / "determine")
    shutil.copytree(run.cluster.verdict_dir, shipped / "cluster")
    step = run_demo_discovery(traces, tmp_path / "demo", shipped=shipped)
    assert step.skipped is None and step.report_path is not None and step.report_path.is_file()
    assert "synthetic-mode (3)" in step.summary


def test_the_shipped_folder_holds_only_what_a_runtime_wrote() -> None:
    folder = shipped_discovery_dir()
    files = list(folder.rglob("*.verdict.json")) if folder.is_dir() else []
    if files:  # once shipped, the provenance must say who wrote them
        assert (folder / "PROVENANCE.json").is_file()
