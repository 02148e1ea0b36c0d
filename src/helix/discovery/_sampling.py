"""Balanced sampling: which traces to read first, each pick with its reason.

Five strategies, all deterministic for a seed (a seeded ``random.Random``, ties broken by trace id):

- ``random``: a uniform sample.
- ``outlier``: the most unusual traces by transcript length, tool calls, tool errors and cost, each
  scored by its largest robust z-score (distance from the median in median absolute deviations).
- ``failure``: traces that failed first: a failing source score (a reward below the pass threshold,
  a false flag) or a failing verdict; then the rest at random.
- ``uncertainty``: uncertain verdicts first, then the lowest-confidence ones.
- ``stratified``: as many passing as failing traces (half each, the larger stratum filling in when
  the other runs out), so both classes are seen.

Outcomes come from ``outcomes`` (trace id → passed) when given, else from the traces' own scores
(``score_name``, or the first of reward/success/correct/passed/pass a trace carries).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from .._exceptions import UsageError
from ..traces import Trace
from ._profile import _calls, _cost, _length

__all__ = [
    "SAMPLING_STRATEGIES",
    "Pick",
    "SamplePlan",
    "SamplingStrategy",
    "VerdictSignal",
    "sample_traces",
    "trace_outcome",
]

SamplingStrategy = Literal["random", "outlier", "failure", "uncertainty", "stratified"]
SAMPLING_STRATEGIES: tuple[str, ...] = get_args(SamplingStrategy)
_OUTCOME_SCORES = ("reward", "success", "correct", "passed", "pass")


@dataclass(frozen=True, kw_only=True)
class VerdictSignal:
    """What a judge said about a trace, for failure- and uncertainty-driven sampling."""

    result: Literal["pass", "fail", "uncertain"]
    confidence: float


@dataclass(frozen=True, kw_only=True)
class Pick:
    """One sampled trace and why."""

    trace_id: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class SamplePlan:
    """The sample: picks in order, and how it was drawn."""

    strategy: str
    n: int
    seed: int
    picks: tuple[Pick, ...]

    @property
    def trace_ids(self) -> tuple[str, ...]:
        """The picked ids, in order."""
        return tuple(p.trace_id for p in self.picks)

    def describe(self) -> dict[str, object]:
        """How it was drawn (recorded in a discovery run's manifest)."""
        return {"strategy": self.strategy, "n": self.n, "seed": self.seed, "picked": len(self.picks)}


def trace_outcome(trace: Trace, *, score_name: str | None = None, pass_threshold: float = 0.5) -> bool | None:
    """Whether ``trace`` passed by its own scores (None when it carries no outcome score)."""
    names = (score_name,) if score_name else _OUTCOME_SCORES
    for name in names:
        for s in trace.scores:
            if s.name != name:
                continue
            if isinstance(s.value, bool):
                return s.value
            if isinstance(s.value, int | float):
                return float(s.value) >= pass_threshold
            text = str(s.value).strip().lower()
            if text in ("pass", "passed", "true", "success", "yes"):
                return True
            if text in ("fail", "failed", "false", "failure", "no"):
                return False
    return None


def _robust_z(values: Sequence[float]) -> list[float]:
    med = statistics.median(values)
    scale = 1.4826 * statistics.median(abs(v - med) for v in values)
    if scale == 0:  # over half the values equal the median: fall back to the mean absolute deviation
        scale = 1.2533 * statistics.fmean(abs(v - med) for v in values)
    if scale == 0:
        return [0.0 for _ in values]
    return [abs(v - med) / scale for v in values]


def _outliers(traces: Sequence[Trace]) -> list[Pick]:
    features: dict[str, Callable[[Trace], float | None]] = {
        "transcript length": lambda t: float(_length(t)),
        "tool calls": lambda t: float(len(_calls(t))),
        "tool errors": lambda t: float(sum(f for _, _, f in _calls(t))),
        "cost": _cost,
    }
    best: dict[str, tuple[float, str]] = {t.id: (0.0, "typical on every feature") for t in traces}
    for fname, fn in features.items():
        vals = [(t.id, fn(t)) for t in traces]
        known = [(i, v) for i, v in vals if v is not None]
        if len(known) < 2:
            continue
        zs = _robust_z([v for _, v in known])
        med = statistics.median(v for _, v in known)
        for (tid, v), z in zip(known, zs, strict=True):
            if z > best[tid][0]:
                best[tid] = (z, f"{fname} {v:g} (robust z {z:.1f}; median {med:g})")
    order = sorted(traces, key=lambda t: (-best[t.id][0], t.id))
    return [Pick(trace_id=t.id, reason=f"outlier: {best[t.id][1]}") for t in order]


def sample_traces(
    traces: Iterable[Trace],
    *,
    strategy: SamplingStrategy = "random",
    n: int,
    seed: int = 0,
    outcomes: Mapping[str, bool] | None = None,
    verdicts: Mapping[str, VerdictSignal] | None = None,
    score_name: str | None = None,
    pass_threshold: float = 0.5,
) -> SamplePlan:
    """Pick up to ``n`` traces by ``strategy`` (see the module docstring); deterministic for ``seed``."""
    if strategy not in SAMPLING_STRATEGIES:
        raise UsageError(
            f"unknown sampling strategy {strategy!r}; use one of {', '.join(SAMPLING_STRATEGIES)}"
        )
    if n < 1:
        raise UsageError(f"n must be >= 1, got {n!r}")
    pool = sorted(traces, key=lambda t: t.id)
    rng = random.Random(seed)
    verdict_of = dict(verdicts or {})

    def outcome(t: Trace) -> tuple[bool | None, str]:
        if outcomes is not None and t.id in outcomes:
            return outcomes[t.id], "given outcome"
        v = verdict_of.get(t.id)
        if v is not None and v.result != "uncertain":
            return v.result == "pass", f"verdict {v.result}"
        found = trace_outcome(t, score_name=score_name, pass_threshold=pass_threshold)
        return found, "source score"

    picks: list[Pick]
    if strategy == "random":
        chosen = rng.sample(pool, min(n, len(pool)))
        picks = [Pick(trace_id=t.id, reason=f"random (seed {seed})") for t in chosen]
    elif strategy == "outlier":
        picks = _outliers(pool)[:n]
    elif strategy == "failure":
        failed = [t for t in pool if outcome(t)[0] is False]
        rest = [t for t in pool if outcome(t)[0] is not False]
        rng.shuffle(failed)
        rng.shuffle(rest)
        picks = [Pick(trace_id=t.id, reason=f"failure-driven: failed ({outcome(t)[1]})") for t in failed]
        picks += [Pick(trace_id=t.id, reason="failure-driven: filler, no failure left") for t in rest]
        picks = picks[:n]
    elif strategy == "uncertainty":
        if not verdict_of:
            raise UsageError(
                "the uncertainty strategy needs verdicts (pass --run with a judged or determined run)"
            )

        def rank(t: Trace) -> tuple[int, float, str]:
            v = verdict_of.get(t.id)
            if v is None:
                return (2, 1.0, t.id)
            return (0 if v.result == "uncertain" else 1, v.confidence, t.id)

        ordered = sorted(pool, key=rank)
        picks = []
        for t in ordered[:n]:
            v = verdict_of.get(t.id)
            why = (
                "no verdict"
                if v is None
                else ("uncertain verdict" if v.result == "uncertain" else f"confidence {v.confidence:.2f}")
            )
            picks.append(Pick(trace_id=t.id, reason=f"uncertainty: {why}"))
    else:
        strata: dict[bool, list[Trace]] = {True: [], False: []}
        unknown = 0
        for t in pool:
            o = outcome(t)[0]
            if o is None:
                unknown += 1
            else:
                strata[o].append(t)
        if not strata[True] and not strata[False]:
            raise UsageError(
                "stratified sampling needs outcomes: traces with a reward/success score, --score NAME, or verdicts"
            )
        for group in strata.values():
            rng.shuffle(group)
        half = n // 2
        take_fail = min(len(strata[False]), max(half, n - len(strata[True])))
        take_pass = min(len(strata[True]), n - take_fail)
        picks = [Pick(trace_id=t.id, reason="stratified: fail stratum") for t in strata[False][:take_fail]]
        picks += [Pick(trace_id=t.id, reason="stratified: pass stratum") for t in strata[True][:take_pass]]
        picks.sort(key=lambda p: p.trace_id)
        rng.shuffle(picks)
    return SamplePlan(strategy=strategy, n=n, seed=seed, picks=tuple(picks))
