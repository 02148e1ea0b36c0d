"""The scorecard: a run's folded criteria, its gate, per-trace summaries and totals, in stable order.

Nothing in it depends on the clock or the machine: the run directory is kept exactly as given, lists
follow the matrix order (criteria) or sort by id (traces, judges), and :func:`scorecard_json` writes
indented JSON, so the same inputs and verdicts always give the same bytes.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import orjson
from pydantic import BaseModel, ConfigDict

from .._exceptions import UsageError
from ..judging import JudgedRun, JudgeInfo, Result, TraceCriterionResult
from ._fold import CriterionScore, fold_criterion
from ._gate import GateConfig, GateResult, evaluate_gate

__all__ = [
    "SCORECARD_FORMAT_VERSION",
    "RateInterval",
    "RunInfo",
    "Scorecard",
    "ScorecardTotals",
    "TraceSummary",
    "ValidationRecord",
    "build_scorecard",
    "scorecard_json",
]

SCORECARD_FORMAT_VERSION = 1


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunInfo(_Frozen):
    """Where the verdicts came from and how the run was cut into judging units."""

    run_dir: str
    unit_axis: str
    trace_count: int
    unit_count: int
    """Distinct judging units (content keys)."""
    row_count: int
    """(trace, criterion) result rows."""
    prompt_versions: tuple[str, ...]
    judges: tuple[JudgeInfo, ...]


class TraceSummary(_Frozen):
    """One trajectory across the matrix: which criteria it passed, failed, left uncertain or unscored."""

    trace_id: str
    outcome: Result
    passed: tuple[str, ...]
    failed: tuple[str, ...]
    uncertain: tuple[str, ...]
    unscored: tuple[str, ...]


class ScorecardTotals(_Frozen):
    """Run-wide counts over criteria, verdicts and traces."""

    criteria: int
    criteria_pass: int
    criteria_fail: int
    criteria_uncertain: int
    verdicts_pass: int
    verdicts_fail: int
    verdicts_uncertain: int
    unscored: int
    traces: int
    traces_failing: int


class RateInterval(_Frozen):
    """A rate with its 95% interval (``None`` values: not computable, see the record's status)."""

    value: float | None
    low: float | None
    high: float | None


class AnnotatorAgreement(_Frozen):
    """Cohen's kappa of two annotators on the traces both decided for one criterion."""

    annotator_a: str
    annotator_b: str
    n: int
    kappa: float | None
    """None when undefined (no overlap, or chance agreement of 1)."""


class ValidationRecord(_Frozen):
    """Provenance of a judge's validation against human labels (written by ``helix validate``).

    ``status`` is ``certified``, ``refused`` or ``unvalidated``; ``theta`` is the corrected success
    rate of the run with an interval carrying both label and judged-set uncertainty.
    """

    criterion_id: str
    status: str
    status_reason: str
    split: str
    split_seed: int
    threshold: float
    labels_used: int
    """Labelled traces in the measured split (decided, abstained and undecided alike)."""
    labels_pass: int
    labels_fail: int
    tp: int
    fn: int
    fp: int
    tn: int
    abstain_rate: float | None
    judge_models: tuple[str, ...]
    prompt_versions: tuple[str, ...]
    tpr: RateInterval
    tnr: RateInterval
    p_obs: float | None
    judged_n: int
    theta: RateInterval
    theta_status: str
    warnings: tuple[str, ...] = ()
    annotator_agreement: tuple[AnnotatorAgreement, ...] = ()
    """Kappa for every pair of annotators who labelled this criterion (empty with one annotator)."""
    flip_rate: float | None = None
    """Judge self-consistency (``helix judge rerun``): share of units whose repeated verdicts differ."""
    fleiss_kappa: float | None = None
    """Fleiss' kappa over the repeated verdicts (None: not measured, or nothing varied)."""
    reruns: int | None = None
    """Repeated verdicts per unit behind ``flip_rate`` (None: not measured)."""


class Scorecard(_Frozen):
    """The deterministic result of scoring one run (``version`` = 1)."""

    version: int = SCORECARD_FORMAT_VERSION
    subject: str
    run: RunInfo
    gate: GateResult
    criteria: tuple[CriterionScore, ...]
    traces: tuple[TraceSummary, ...]
    totals: ScorecardTotals
    validation: tuple[ValidationRecord, ...] | None = None
    """Judge validation per criterion, stamped by ``helix validate``; absent until then."""


def _validate_rows(judged: JudgedRun) -> None:
    criterion_ids = {c.id for c in judged.matrix.criteria}
    trace_ids = [t.id for t in judged.traces]
    dup_traces = sorted(t for t, n in Counter(trace_ids).items() if n > 1)
    if dup_traces:
        raise UsageError(f"trace ids must be unique in a run; repeated: {dup_traces[0]!r}")
    known_traces = set(trace_ids)
    seen: set[tuple[str, str]] = set()
    for row in judged.results:
        where = f"result row (trace {row.trace_id!r}, criterion {row.criterion_id!r}, key {row.key!r})"
        if row.criterion_id not in criterion_ids:
            raise UsageError(
                f"{where}: criterion is not in the matrix; re-run aggregation with the same matrix"
            )
        if row.trace_id not in known_traces:
            raise UsageError(f"{where}: trace is not in the run; re-run aggregation with the same traces")
        pair = (row.trace_id, row.criterion_id)
        if pair in seen:
            raise UsageError(f"{where}: more than one row for this trace and criterion; keep one per pair")
        seen.add(pair)
        if (row.verdict is None) == (row.unscored_reason is None):
            raise UsageError(f"{where}: needs exactly one of a verdict and an unscored_reason")
        if row.verdict is not None and row.verdict.criterion_id != row.criterion_id:
            raise UsageError(
                f"{where}: verdict is for criterion {row.verdict.criterion_id!r}; the row and verdict must agree"
            )


def _judge_sort_key(j: JudgeInfo) -> tuple[str, str, float, str]:
    return (
        j.runtime,
        j.model or "",
        -1.0 if j.temperature is None else j.temperature,
        j.prompt_version or "",
    )


def _trace_summaries(judged: JudgedRun) -> tuple[TraceSummary, ...]:
    by_trace: dict[str, dict[str, TraceCriterionResult]] = defaultdict(dict)
    for row in judged.results:
        by_trace[row.trace_id][row.criterion_id] = row
    out = []
    for trace_id in sorted(t.id for t in judged.traces):
        buckets: dict[str, list[str]] = {"pass": [], "fail": [], "uncertain": [], "unscored": []}
        rows = by_trace.get(trace_id, {})
        for c in judged.matrix.criteria:
            found = rows.get(c.id)
            if found is None:
                continue
            buckets["unscored" if found.verdict is None else found.verdict.result].append(c.id)
        outcome: Result = "fail" if buckets["fail"] else ("pass" if buckets["pass"] else "uncertain")
        out.append(
            TraceSummary(
                trace_id=trace_id,
                outcome=outcome,
                passed=tuple(buckets["pass"]),
                failed=tuple(buckets["fail"]),
                uncertain=tuple(buckets["uncertain"]),
                unscored=tuple(buckets["unscored"]),
            )
        )
    return tuple(out)


def build_scorecard(judged: JudgedRun, *, gate: GateConfig | None = None) -> Scorecard:
    """Fold every criterion, decide the gate and summarize each trace. Raises UsageError on bad rows."""
    _validate_rows(judged)
    rows_by_criterion: dict[str, list[TraceCriterionResult]] = defaultdict(list)
    for row in judged.results:
        rows_by_criterion[row.criterion_id].append(row)
    scores = tuple(fold_criterion(c, rows_by_criterion[c.id]) for c in judged.matrix.criteria)
    judges = {r.judge for r in judged.results if r.judge is not None}
    prompt_versions = {j.prompt_version for j in judges if j.prompt_version is not None}
    traces = _trace_summaries(judged)
    run = RunInfo(
        run_dir=judged.run_dir,
        unit_axis=judged.unit_axis,
        trace_count=len(judged.traces),
        unit_count=len({r.key for r in judged.results}),
        row_count=len(judged.results),
        prompt_versions=tuple(sorted(prompt_versions)),
        judges=tuple(sorted(judges, key=_judge_sort_key)),
    )
    totals = ScorecardTotals(
        criteria=len(scores),
        criteria_pass=sum(s.outcome == "pass" for s in scores),
        criteria_fail=sum(s.outcome == "fail" for s in scores),
        criteria_uncertain=sum(s.outcome == "uncertain" for s in scores),
        verdicts_pass=sum(s.n_pass for s in scores),
        verdicts_fail=sum(s.n_fail for s in scores),
        verdicts_uncertain=sum(s.n_uncertain for s in scores),
        unscored=sum(s.n_unscored for s in scores),
        traces=len(traces),
        traces_failing=sum(t.outcome == "fail" for t in traces),
    )
    return Scorecard(
        subject=judged.matrix.subject,
        run=run,
        gate=evaluate_gate(scores, config=gate),
        criteria=scores,
        traces=traces,
        totals=totals,
    )


def scorecard_json(scorecard: Scorecard) -> bytes:
    """The scorecard as indented JSON with a trailing newline; field order is the model's, so stable.

    ``validation`` is left out until a validation was stamped, so unvalidated scorecards keep their bytes.
    """
    data = scorecard.model_dump(mode="json")
    if data.get("validation") is None:
        data.pop("validation", None)
    return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
