"""A tolerant read of a run directory for the audit: every verdict that can be read, and what cannot.

AGGREGATE (:func:`helix.judging.collect_results`) refuses a run with a missing or broken verdict, as
it must; the audit has to look at exactly such runs. So it re-derives the units the same way
(:func:`helix.judging.open_run`), takes the bookkeeping (missing, invalid, unscored, stale) from
:func:`helix.judging.run_status`, and expands every readable verdict into result rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..judging import (
    JudgingRun,
    RunStatus,
    TraceCriterionResult,
    open_run,
    result_rows,
    run_status,
)

__all__ = ["RunSnapshot", "read_snapshot"]


@dataclass(frozen=True, kw_only=True, eq=False)
class RunSnapshot:
    """The run, its status and every readable (trace, criterion) row, in trace then criteria order."""

    run: JudgingRun
    status: RunStatus
    rows: tuple[TraceCriterionResult, ...]
    """Rows of units whose verdict file exists and is valid (unscored units give rows without a verdict)."""

    @property
    def llm_rows(self) -> tuple[TraceCriterionResult, ...]:
        """Rows of LLM criteria."""
        llm = {c.id for c in self.run.matrix.llm_criteria}
        return tuple(r for r in self.rows if r.criterion_id in llm)


def read_snapshot(run_dir: str | Path) -> RunSnapshot:
    """Read a prepared run without failing on missing or broken verdict files.

    Raises :class:`~helix.UsageError` when ``run_dir`` is not a prepared run, and
    :class:`~helix.InputFileError` when its copied inputs changed since PREP (as ``open_run`` does).
    """
    run = open_run(run_dir)
    status = run_status(run.run_dir)
    ordered = result_rows(run, skip=set(status.missing_keys) | set(status.invalid))
    return RunSnapshot(run=run, status=status, rows=ordered)
