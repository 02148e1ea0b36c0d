"""`helix demo`: offline end to end, deterministic, fed by the shipped verdicts."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from helix.cli import app
from helix.examples import shipped_verdicts_dir
from helix.scoring import Scorecard, masked_scorecard_json

runner = CliRunner()


def _demo(out: Path) -> bytes:
    result = runner.invoke(app, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "report:" in result.output
    assert (out / "run" / "report.html").exists()
    card = Scorecard.model_validate_json((out / "run" / "scorecard.json").read_bytes())
    return masked_scorecard_json(card)


def test_two_demo_runs_give_byte_identical_masked_scorecards(tmp_path: Path) -> None:
    first = _demo(tmp_path / "a")
    second = _demo(tmp_path / "elsewhere" / "b")
    assert first == second
    # rerunning into the same directory rebuilds the run and gives the same scorecard again
    assert _demo(tmp_path / "a") == first


def test_demo_uses_every_shipped_verdict_and_records_its_provenance(tmp_path: Path) -> None:
    _demo(tmp_path)
    shipped = sorted(p.name for p in shipped_verdicts_dir().glob("*.verdict.json"))
    used = sorted(p.name for p in (tmp_path / "run" / "verdicts").glob("*.verdict.json"))
    assert set(shipped) <= set(used), "a shipped verdict no longer matches any demo packet (stale)"
    card = json.loads((tmp_path / "run" / "scorecard.json").read_text())
    runtimes = {j["runtime"] for j in card["run"]["judges"]}
    assert "code" in runtimes and any("dispatch" in r for r in runtimes)
    provenance = json.loads((shipped_verdicts_dir() / "PROVENANCE.json").read_text())
    assert provenance["verdict_files"] == len(shipped)


def test_demo_refuses_to_delete_a_directory_that_is_not_a_run(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "precious.txt").write_text("keep me")
    result = runner.invoke(app, ["demo", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "not a Helix run directory" in result.output
    assert (tmp_path / "run" / "precious.txt").exists()


def test_piped_output_keeps_every_criterion_id_whole(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--out", str(tmp_path)])  # CliRunner output is not a TTY
    assert result.exit_code == 0, result.output
    card = Scorecard.model_validate_json((tmp_path / "run" / "scorecard.json").read_bytes())
    lines = result.output.splitlines()
    for criterion in card.criteria:
        assert any(criterion.criterion_id in line for line in lines), criterion.criterion_id


def test_demo_into_a_file_is_refused_without_a_traceback(tmp_path: Path) -> None:
    target = tmp_path / "one.json"
    target.write_text("{}")
    result = runner.invoke(app, ["demo", "--out", str(target)])
    assert result.exit_code == 2 and "is a file" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
