"""The offline demo: example traces → code checks + shipped LLM verdicts → scorecard and report."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..campaign import CampaignResult

__all__ = [
    "DEMO_CAMPAIGN_REPS",
    "DEMO_RUNS",
    "DEMO_SEED",
    "DemoResult",
    "run_demo",
    "run_demo_campaign",
    "shipped_verdicts_dir",
]

DEMO_RUNS = 24
"""How many episodes the demo generates (the shipped verdicts cover exactly these)."""
DEMO_SEED = 7
DEMO_CAMPAIGN_REPS = 2
"""Repetitions per scenario in the demo's small campaign (14 scenarios x 2 = 28 cells)."""


def shipped_verdicts_dir() -> Path:
    """Where the example's shipped LLM verdicts (and their PROVENANCE.json) live."""
    return Path(__file__).parent / "support_shop" / "verdicts"


@dataclass(frozen=True, kw_only=True)
class DemoResult:
    """What the demo produced and where."""

    traces_path: Path
    criteria_path: Path
    run_dir: Path
    scorecard_path: Path
    report_path: Path
    gate_passed: bool
    gate_reason: str
    n_traces: int
    code_verdicts: int
    shipped_verdicts: int
    provenance: str

    def describe(self) -> str:
        """A few lines for the terminal."""
        return "\n".join(
            [
                f"generated {self.n_traces} support-shop agent runs -> {self.traces_path}",
                f"code checks decided {self.code_verdicts} unit(s); {self.shipped_verdicts} LLM verdict file(s) "
                f"came with the example, {self.provenance}",
                f"scorecard: {self.scorecard_path}",
                f"report:    {self.report_path}",
            ]
        )


def run_demo(out_dir: str | Path, *, n: int = DEMO_RUNS, seed: int = DEMO_SEED) -> DemoResult:
    """Run the whole flow offline into ``out_dir`` (re-runnable: the run directory is rebuilt)."""
    import orjson

    from .._exceptions import MissingVerdictsError, UsageError
    from .._pipeline import aggregate_run
    from ..judging import load_criteria, open_run, prep_run, run_status
    from ..traces import write_traces_jsonl
    from ._episodes import criteria_path, generate_episodes

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; pass a directory for the demo's traces, run and report")
    run = out / "run"
    if run.exists():
        if not (run / "run.json").exists():
            raise UsageError(f"{run} exists and is not a Helix run directory; choose another --out")
        shutil.rmtree(run)
    out.mkdir(parents=True, exist_ok=True)

    episodes = generate_episodes(n=n, seed=seed)
    traces = [e.trace for e in episodes]
    traces_path = write_traces_jsonl(traces, out / "traces.jsonl")
    crit_path = criteria_path()
    matrix = load_criteria(crit_path)
    prep_run(traces, matrix, run)

    shipped = shipped_verdicts_dir()
    before = run_status(run)
    copied = 0
    for key in before.missing_keys:
        source = shipped / f"{key}.verdict.json"
        if source.exists():
            shutil.copyfile(source, run / "verdicts" / source.name)
            copied += 1
    after = run_status(run)
    if after.missing_keys:
        raise MissingVerdictsError(after.missing_keys, verdict_dir=shipped)
    provenance_file = shipped / "PROVENANCE.json"
    provenance = "unknown provenance"
    if provenance_file.exists():
        prov = orjson.loads(provenance_file.read_bytes())
        provenance = f"judged by {prov.get('judged_by')} (see {provenance_file})"

    result = aggregate_run(run)
    judged_units = open_run(run)
    code_units = sum(1 for u in judged_units.units if u.kind == "code")
    return DemoResult(
        traces_path=Path(traces_path),
        criteria_path=crit_path,
        run_dir=run,
        scorecard_path=result.scorecard_path,
        report_path=result.report_path,
        gate_passed=result.gate_passed,
        gate_reason=result.scorecard.gate.reason,
        n_traces=len(traces),
        code_verdicts=code_units,
        shipped_verdicts=copied,
        provenance=provenance,
    )


def run_demo_campaign(out_dir: str | Path, *, reps: int = DEMO_CAMPAIGN_REPS) -> tuple[CampaignResult, Path]:
    """Run a small campaign of the shipped example config into ``<out_dir>/campaign``; returns it and its report.

    Cells are cached in that run directory, so running the demo again dispatches nothing.
    """
    import asyncio

    from ..campaign import load_campaign_config, resolve_campaign, write_campaign_report
    from ._resources import campaign_config_path

    config = load_campaign_config(campaign_config_path()).model_copy(update={"reps": reps})
    run_dir = Path(out_dir) / "campaign"
    result = asyncio.run(resolve_campaign(config, run_dir=run_dir).run())
    return result, write_campaign_report(run_dir)
