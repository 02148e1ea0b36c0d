"""Scoring discovery against gold: failure attribution (Who&When) and the determiner's outcome (tau2).

:func:`score_attribution` compares each failed log's first thing wrong with the human labels the
trace carries as scores (``mistake_agent``, ``mistake_step``): agent-level accuracy (the named agent
is the responsible one) and step-level accuracy (the transcript index is the decisive step), each
over every labelled log with a Wilson interval. A log the determiner did not call a failure, or
left unscored, has no attribution and counts as wrong on both (it is reported separately). The
paper's best automated method (Zhang et al., ICML 2025) reached 53.5% and 14.2%.

:func:`score_outcomes` compares determinations with a gold outcome score (tau2's ``reward``): TPR
and TNR over decided determinations, with Wilson intervals, through calibration's confusion counts.
:func:`determinations_as_judging_run` writes the determinations as a one-criterion judging run, so
``helix validate`` can certify the determiner against labels made from the same scores.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import orjson

from .._exceptions import UsageError
from .._util import write_atomic
from ..calibration import confusion_counts
from ..judging import CriteriaMatrix, Criterion, CriterionVerdict, JudgeInfo, VerdictFile, open_run, prep_run
from ..stats import wilson_interval
from ..traces import Trace
from ._run import open_discovery, read_determinations
from ._sampling import trace_outcome

__all__ = [
    "PAPER_AGENT_ACCURACY",
    "PAPER_STEP_ACCURACY",
    "AttributionRow",
    "AttributionScore",
    "OutcomeScore",
    "determinations_as_judging_run",
    "score_attribution",
    "score_outcomes",
]

PAPER_AGENT_ACCURACY = 0.535
PAPER_STEP_ACCURACY = 0.142
GOAL_CRITERION = "goal-attained"
_PAREN = re.compile(r"\s*\(.*\)\s*$")


def _agent_key(name: str) -> str:
    return _PAREN.sub("", name).strip().lower().replace(" ", "_")


def _score(trace: Trace, name: str) -> str | None:
    for s in trace.scores:
        if s.name == name:
            return str(s.value).strip()
    return None


@dataclass(frozen=True, kw_only=True)
class AttributionRow:
    """One labelled log: the gold and what the determiner said."""

    trace_id: str
    subset: str | None
    gold_agent: str
    gold_step: int
    result: str | None
    """The determination's result (None when unscored)."""
    agent: str | None
    step: int | None

    @property
    def agent_correct(self) -> bool:
        """The named agent is the responsible one (case, spacing and a ``(channel)`` suffix ignored)."""
        return self.agent is not None and _agent_key(self.agent) == _agent_key(self.gold_agent)

    @property
    def step_correct(self) -> bool:
        """The named transcript index is the decisive step."""
        return self.step is not None and self.step == self.gold_step


@dataclass(frozen=True, kw_only=True)
class AttributionScore:
    """Agent- and step-level accuracy over the labelled logs."""

    rows: tuple[AttributionRow, ...]

    @property
    def n(self) -> int:
        """Labelled logs."""
        return len(self.rows)

    @property
    def agent_correct(self) -> int:
        """Logs whose responsible agent was named."""
        return sum(r.agent_correct for r in self.rows)

    @property
    def step_correct(self) -> int:
        """Logs whose decisive step was named."""
        return sum(r.step_correct for r in self.rows)

    @property
    def not_failed(self) -> int:
        """Failed logs the determiner did not call a failure (pass or uncertain): no attribution."""
        return sum(r.result in ("pass", "uncertain") for r in self.rows)

    @property
    def unscored(self) -> int:
        """Logs whose determination is unscored."""
        return sum(r.result is None for r in self.rows)

    def accuracy(self, level: str) -> tuple[float, tuple[float, float]]:
        """(accuracy, Wilson 95% interval) at ``agent`` or ``step`` level."""
        k = self.agent_correct if level == "agent" else self.step_correct
        if not self.n:
            raise UsageError("no labelled log to score")
        return k / self.n, wilson_interval(k, self.n)

    def by_subset(self) -> dict[str, AttributionScore]:
        """The same score per subset (Who&When's hand-crafted and algorithm-generated)."""
        groups: dict[str, list[AttributionRow]] = {}
        for r in self.rows:
            groups.setdefault(r.subset or "all", []).append(r)
        return {k: AttributionScore(rows=tuple(v)) for k, v in sorted(groups.items())}

    def describe(self) -> str:
        """Lines for the terminal and the docs, against the paper's numbers."""
        lines = []
        for name, s in [("all", self), *(() if len(self.by_subset()) < 2 else self.by_subset().items())]:
            a, (alo, ahi) = s.accuracy("agent")
            st, (slo, shi) = s.accuracy("step")
            lines.append(
                f"{name}: n={s.n}; agent-level {a:.1%} [{alo:.1%}, {ahi:.1%}] ({s.agent_correct}/{s.n}); "
                f"step-level {st:.1%} [{slo:.1%}, {shi:.1%}] ({s.step_correct}/{s.n}); "
                f"{s.not_failed} not called a failure, {s.unscored} unscored"
            )
        lines.append(
            f"paper (Zhang et al., ICML 2025, best automated method): agent-level {PAPER_AGENT_ACCURACY:.1%}, "
            f"step-level {PAPER_STEP_ACCURACY:.1%}"
        )
        return "\n".join(lines)


def score_attribution(
    run_dir: str | Path, *, agent_score: str = "mistake_agent", step_score: str = "mistake_step"
) -> AttributionScore:
    """Score a determined run's first-thing-wrong against the human labels its traces carry."""
    run = open_discovery(run_dir)
    by_trace = {t.id: t for t in run.traces}
    rows: list[AttributionRow] = []
    for unit, verdict in read_determinations(run):
        d = verdict.determination
        for tid in unit.trace_ids:
            trace = by_trace[tid]
            gold_agent, gold_step = _score(trace, agent_score), _score(trace, step_score)
            if gold_agent is None or gold_step is None:
                continue
            try:
                step = int(gold_step)
            except ValueError:
                continue
            wrong = d.first_wrong if d is not None else None
            rows.append(
                AttributionRow(
                    trace_id=tid,
                    subset=str(trace.metadata.get("subset")) if trace.metadata.get("subset") else None,
                    gold_agent=gold_agent,
                    gold_step=step,
                    result=d.result if d is not None else None,
                    agent=wrong.agent if wrong else None,
                    step=wrong.index if wrong else None,
                )
            )
    if not rows:
        raise UsageError(
            f"no trace of {run.run_dir} carries both {agent_score!r} and {step_score!r} scores; "
            "attribution needs labelled logs (e.g. Who&When)"
        )
    return AttributionScore(rows=tuple(rows))


@dataclass(frozen=True, kw_only=True)
class OutcomeScore:
    """The determiner's outcome against a gold score: TPR and TNR over decided determinations."""

    tp: int
    fn: int
    fp: int
    tn: int
    abstained: int
    unscored: int
    no_gold: int

    def rate(self, which: str) -> tuple[float, tuple[float, float]] | None:
        """(rate, Wilson 95% interval) for ``tpr`` or ``tnr`` (None without such gold)."""
        k, n = (self.tp, self.tp + self.fn) if which == "tpr" else (self.tn, self.tn + self.fp)
        return (k / n, wilson_interval(k, n)) if n else None

    def describe(self) -> str:
        """One line."""
        parts = []
        for which in ("tpr", "tnr"):
            r = self.rate(which)
            parts.append(
                f"{which.upper()} n/a"
                if r is None
                else f"{which.upper()} {r[0]:.1%} [{r[1][0]:.1%}, {r[1][1]:.1%}]"
            )
        return (
            f"{', '.join(parts)} (tp {self.tp}, fn {self.fn}, fp {self.fp}, tn {self.tn}; {self.abstained} uncertain, "
            f"{self.unscored} unscored, {self.no_gold} without gold)"
        )


def score_outcomes(
    run_dir: str | Path, *, score_name: str = "reward", pass_threshold: float = 0.5
) -> OutcomeScore:
    """Compare each trace's determination with its gold outcome score (pass = score ≥ threshold)."""
    run = open_discovery(run_dir)
    by_trace = {t.id: t for t in run.traces}
    pairs: list[tuple[str, str | None]] = []
    no_gold = unscored = 0
    for unit, verdict in read_determinations(run):
        d = verdict.determination
        for tid in unit.trace_ids:
            gold = trace_outcome(by_trace[tid], score_name=score_name, pass_threshold=pass_threshold)
            if gold is None:
                no_gold += 1
                continue
            unscored += d is None
            pairs.append(("pass" if gold else "fail", d.result if d is not None else None))
    c = confusion_counts(pairs)
    return OutcomeScore(
        tp=c.tp,
        fn=c.fn,
        fp=c.fp,
        tn=c.tn,
        abstained=c.abstain_on_pass + c.abstain_on_fail,
        unscored=unscored,
        no_gold=no_gold,
    )


def goal_criterion() -> CriteriaMatrix:
    """The determiner's outcome question as a one-criterion matrix."""
    return CriteriaMatrix(
        subject="determiner",
        description="The discovery determiner's outcome, exported so `helix validate` can measure it.",
        criteria=(
            Criterion(
                id=GOAL_CRITERION,
                title="The agent attained the user's goal",
                kind="llm",
                question="Did the agent attain the goal of the user it served (holding back where that was right)?",
                pass_definition="The goal was attained, or refusing, handing over or asking was the right response.",
                fail_definition="The goal was not attained, or the agent did something the rules forbid.",
            ),
        ),
    )


def determinations_as_judging_run(run_dir: str | Path, out_dir: str | Path) -> Path:
    """Write the determinations as a judging run (criterion ``goal-attained``) for ``helix validate``.

    Each trace's verdict is its determination's critique, result and confidence; ``judge`` keeps the
    reader that wrote it, with the *discovery* prompt version (the words it answered), so the audit
    shows these verdicts were not answers to the judging prompt. Returns the judging run directory.
    """
    run = open_discovery(run_dir)
    determinations = {tid: v for u, v in read_determinations(run) for tid in u.trace_ids}
    out = Path(out_dir)
    prep_run(run.traces, goal_criterion(), out)
    judging = open_run(out)
    counts: Counter[str] = Counter()
    for unit in judging.units:
        verdict = determinations[unit.trace_ids[0]]
        d = verdict.determination
        judge = verdict.judge or JudgeInfo(runtime="unknown", model="unknown")
        judge = judge.model_copy(update={"prompt_version": run.manifest.prompt_version, "temperature": 0.0})
        if d is None:
            body = VerdictFile(
                key=unit.key, status="unscored", error=verdict.error or "unscored", judge=judge
            )
        else:
            body = VerdictFile(
                key=unit.key,
                verdicts=(
                    CriterionVerdict(
                        criterion_id=GOAL_CRITERION,
                        critique=d.critique,
                        result=d.result,
                        confidence=d.confidence,
                        blocked_by=d.blocked_by,
                    ),
                ),
                judge=judge,
            )
        counts[body.status] += 1
        write_atomic(
            judging.verdict_path(unit.key),
            orjson.dumps(body.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n",
        )
    note = {
        "exported_from": "helix discover export-run",
        "discovery_prompt_version": run.manifest.prompt_version,
        "verdicts": dict(counts),
    }
    write_atomic(out / "EXPORTED_FROM_DISCOVERY.json", orjson.dumps(note, option=orjson.OPT_INDENT_2) + b"\n")
    return out.absolute()
