"""AGGREGATE read-back: how far a run is (:func:`run_status`) and its result rows (:func:`collect_results`).

Both re-derive the units from the run's inputs (never trusting the packet or verdict directory
listing), so a missing verdict is always noticed and a verdict for a unit that no longer exists
(stale) is reported without breaking aggregation.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from .._exceptions import MissingVerdictsError, VerdictFileError
from ._parse import parse_verdict_file
from ._results import JudgedRun, TraceCriterionResult
from ._run import JudgingRun, missing_verdict_keys, open_run
from ._units import UnitAxis

__all__ = ["RunStatus", "collect_results", "result_rows", "run_status"]

_VERDICT_NAME = re.compile(r"^(?P<key>[^.]+)\.verdict\.json$")


class RunStatus(BaseModel):
    """Where a run stands: units by kind, verdicts present, what is missing, unscored or broken."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_dir: str
    axis: UnitAxis
    prompt_version: str
    model: str | None
    traces: int
    llm_units: int
    code_units: int
    verdicts_present: int
    missing_keys: tuple[str, ...]
    unscored_keys: tuple[str, ...]
    invalid: dict[str, str]
    """Key → why its verdict file breaks the contract (AGGREGATE would fail on it)."""
    stale_keys: tuple[str, ...]
    """Verdict files whose key matches no unit of the current inputs (ignored by AGGREGATE)."""

    @property
    def unscored(self) -> int:
        """How many units are recorded as unscored."""
        return len(self.unscored_keys)

    @property
    def ready(self) -> bool:
        """True when AGGREGATE can run: every unit has a valid verdict file."""
        return not self.missing_keys and not self.invalid

    def describe(self) -> str:
        """A short human summary."""
        total = self.llm_units + self.code_units
        lines = [
            f"{self.run_dir}: axis {self.axis}, prompt {self.prompt_version}, model {self.model or '(runtime)'}",
            f"{self.traces} traces; {total} units ({self.llm_units} LLM, {self.code_units} code); "
            f"{self.verdicts_present} with a verdict, {len(self.missing_keys)} missing, "
            f"{self.unscored} unscored, {len(self.invalid)} invalid, {len(self.stale_keys)} stale",
        ]
        lines += [f"  invalid {key}: {why}" for key, why in self.invalid.items()]
        lines.append("ready to aggregate" if self.ready else "not ready to aggregate")
        return "\n".join(lines)


def _stale_keys(run: JudgingRun) -> tuple[str, ...]:
    if not run.verdict_dir.is_dir():
        return ()
    live = {u.key for u in run.units}
    found = (_VERDICT_NAME.match(p.name) for p in sorted(run.verdict_dir.iterdir()))
    return tuple(m["key"] for m in found if m and m["key"] not in live)


def run_status(run_dir: str | Path) -> RunStatus:
    """Check every unit's verdict file without failing on any of them."""
    run = open_run(run_dir)
    missing = missing_verdict_keys(run)
    unscored: list[str] = []
    invalid: dict[str, str] = {}
    for u in run.units:
        if u.key in missing:
            continue
        try:
            verdict = parse_verdict_file(run.verdict_path(u.key), key=u.key, criterion_ids=u.criterion_ids)
        except VerdictFileError as exc:
            invalid[u.key] = str(exc)
            continue
        if verdict.status == "unscored":
            unscored.append(u.key)
    return RunStatus(
        run_dir=str(run.run_dir),
        axis=run.manifest.axis,
        prompt_version=run.manifest.prompt_version,
        model=run.manifest.pin.model,
        traces=len(run.traces),
        llm_units=sum(u.kind == "llm" for u in run.units),
        code_units=sum(u.kind == "code" for u in run.units),
        verdicts_present=len(run.units) - len(missing),
        missing_keys=tuple(missing),
        unscored_keys=tuple(unscored),
        invalid=invalid,
        stale_keys=_stale_keys(run),
    )


def result_rows(run: JudgingRun, *, skip: Collection[str] = ()) -> tuple[TraceCriterionResult, ...]:
    """One row per (trace, criterion) from the run's verdict files, in trace then criteria order.

    Units whose key is in ``skip`` (missing or invalid verdicts) contribute no rows; every other
    verdict file is parsed strictly (VerdictFileError on a broken one).
    """
    rows: dict[tuple[str, str], TraceCriterionResult] = {}
    for u in run.units:
        if u.key in skip:
            continue
        verdict = parse_verdict_file(run.verdict_path(u.key), key=u.key, criterion_ids=u.criterion_ids)
        by_criterion = {v.criterion_id: v for v in verdict.verdicts}
        for trace_id in u.trace_ids:
            for cid in u.criterion_ids:
                rows[(trace_id, cid)] = TraceCriterionResult(
                    trace_id=trace_id,
                    criterion_id=cid,
                    key=u.key,
                    verdict=by_criterion.get(cid),
                    unscored_reason=verdict.error if verdict.status == "unscored" else None,
                    judge=verdict.judge,
                )
    return tuple(rows[(t.id, c.id)] for t in run.traces for c in run.matrix.criteria if (t.id, c.id) in rows)


def collect_results(run_dir: str | Path) -> JudgedRun:
    """AGGREGATE: one row per (trace, criterion), in trace order then criteria order.

    Raises MissingVerdictsError listing every unit without a verdict file, and VerdictFileError for
    the first verdict file that breaks the contract. Unscored units become rows with
    ``unscored_reason`` and no verdict.
    """
    run = open_run(run_dir)
    missing = missing_verdict_keys(run)
    if missing:
        raise MissingVerdictsError(missing, verdict_dir=run.verdict_dir)
    ordered = result_rows(run)
    return JudgedRun(
        run_dir=str(run.run_dir),
        traces=run.traces,
        matrix=run.matrix,
        results=ordered,
        unit_axis=run.manifest.axis,
    )
