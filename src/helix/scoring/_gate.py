"""The severity gate: a run passes when no blocking criterion failed (and, by choice, none is undecided).

A criterion is *blocking* when its severity is in :attr:`GateConfig.blocking`. The gate
fails when a blocking criterion's folded outcome is ``fail``; when ``fail_on_uncertain`` is set, a
blocking criterion with any ``uncertain`` verdict also fails it; when ``fail_on_unscored`` is set
(the default), a blocking criterion with any unscored row, or with no row at all, fails it too,
because nothing that was not judged may count as a pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import get_args

from pydantic import BaseModel, ConfigDict

from .._exceptions import UsageError
from ..judging import Severity
from ._fold import CriterionScore

__all__ = ["GateConfig", "GateResult", "evaluate_gate"]


@dataclass(frozen=True, kw_only=True)
class GateConfig:
    """Which severities block a release and how undecided blocking criteria are treated."""

    blocking: tuple[Severity, ...] = ("critical", "major")
    """The severities whose failures block (``GateResult.blocking_severities`` records them)."""
    fail_on_uncertain: bool = False
    fail_on_unscored: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.blocking, str):
            raise UsageError(f"blocking must be a sequence of severities, got the string {self.blocking!r}")
        object.__setattr__(self, "blocking", tuple(self.blocking))
        known = get_args(Severity)
        bad = [s for s in self.blocking if s not in known]
        if bad:
            raise UsageError(f"unknown blocking severity {bad[0]!r}; choose from {', '.join(known)}")


class GateResult(BaseModel):
    """The gate's decision, the configuration it used, and the criteria behind it (matrix order)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    passed: bool
    reason: str
    blocking_severities: tuple[Severity, ...]
    fail_on_uncertain: bool
    fail_on_unscored: bool
    blocking_criteria: tuple[str, ...]
    blocking_failures: tuple[str, ...]
    uncertain_blocking: tuple[str, ...]
    """Blocking criteria with at least one ``uncertain`` verdict (gating only with fail_on_uncertain)."""
    unscored_blocking: tuple[str, ...]
    """Blocking criteria with an unscored row or no row at all (gating only with fail_on_unscored)."""


def _criteria(n: int) -> str:
    return f"{n} blocking {'criterion' if n == 1 else 'criteria'}"


def _listing(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", +{len(ids) - limit} more" if len(ids) > limit else "")


def evaluate_gate(scores: Sequence[CriterionScore], *, config: GateConfig | None = None) -> GateResult:
    """Decide the gate over folded criterion scores (keeps their order in every list)."""
    cfg = config or GateConfig()
    blocking = [s for s in scores if s.severity in cfg.blocking]
    failures = [s.criterion_id for s in blocking if s.outcome == "fail"]
    uncertain = [s.criterion_id for s in blocking if s.n_uncertain > 0]
    unscored = [
        s.criterion_id
        for s in blocking
        if s.n_unscored > 0 or (s.n_decided + s.n_uncertain + s.n_unscored) == 0
    ]
    gating: list[str] = []
    if failures:
        gating.append(f"{_criteria(len(failures))} failed ({_listing(failures)})")
    if uncertain and cfg.fail_on_uncertain:
        gating.append(f"{_criteria(len(uncertain))} uncertain ({_listing(uncertain)})")
    if unscored and cfg.fail_on_unscored:
        gating.append(f"{_criteria(len(unscored))} not fully scored ({_listing(unscored)})")
    passed = not gating
    sev = "/".join(cfg.blocking) or "none"
    if passed:
        notes = [f"no blocking criterion failed ({len(blocking)} of {len(scores)} blocking: {sev})"]
        if uncertain:
            notes.append(f"{len(uncertain)} with uncertain verdicts, not gating")
        if unscored:
            notes.append(f"{len(unscored)} not fully scored, not gating")
        reason = "PASS: " + "; ".join(notes)
    else:
        reason = "FAIL: " + "; ".join(gating)
    return GateResult(
        passed=passed,
        reason=reason,
        blocking_severities=cfg.blocking,
        fail_on_uncertain=cfg.fail_on_uncertain,
        fail_on_unscored=cfg.fail_on_unscored,
        blocking_criteria=tuple(s.criterion_id for s in blocking),
        blocking_failures=tuple(failures),
        uncertain_blocking=tuple(uncertain),
        unscored_blocking=tuple(unscored),
    )
