"""How well a judge agrees with humans: the confusion matrix over decided verdicts, TPR/TNR with
Wilson intervals, abstentions, and certification against a threshold.

Only pairs where the human said pass or fail *and* the judge said pass or fail enter the matrix.
A judge abstention (``uncertain``) is not a wrong answer: it is counted apart, as the abstain rate,
and as *assumption agreement* when the human also found the trace underdetermined.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .._exceptions import UsageError
from ..stats import wilson_interval

__all__ = [
    "DEFAULT_MIN_LABELS_PER_CLASS",
    "DEFAULT_THRESHOLD",
    "Certification",
    "CertificationStatus",
    "ConfusionCounts",
    "certify",
    "confusion_counts",
    "labels_needed",
]

DEFAULT_THRESHOLD = 0.80
DEFAULT_MIN_LABELS_PER_CLASS = 20
"""Below this many decided pairs per class the judge is unvalidated (coverage is measured from 20)."""
CertificationStatus = Literal["certified", "refused", "unvalidated"]
_MAX_LABELS = 1_000_000


class ConfusionCounts(BaseModel):
    """Human label × judge result counts. ``tp``/``fn``/``fp``/``tn`` are decided pairs only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tp: int = 0
    """Human pass, judge pass."""
    fn: int = 0
    """Human pass, judge fail."""
    fp: int = 0
    """Human fail, judge pass."""
    tn: int = 0
    """Human fail, judge fail."""
    abstain_on_pass: int = 0
    abstain_on_fail: int = 0
    abstain_on_underdetermined: int = 0
    """The judge abstained where the human also found the trace underdetermined (agreement)."""
    decided_on_underdetermined: int = 0
    """The judge decided where the human found the trace underdetermined (an under-abstention)."""
    human_deferred: int = 0
    unjudged: int = 0
    """Labelled pairs with no verdict (missing or unscored): excluded, counted."""

    @property
    def n_pos(self) -> int:
        """Decided pairs with a human pass."""
        return self.tp + self.fn

    @property
    def n_neg(self) -> int:
        """Decided pairs with a human fail."""
        return self.fp + self.tn

    @property
    def abstentions(self) -> int:
        """Every judge abstention on a labelled pair."""
        return self.abstain_on_pass + self.abstain_on_fail + self.abstain_on_underdetermined

    @property
    def abstain_rate(self) -> float | None:
        """Abstentions over every judged pair the human pass, fail or underdetermined label covers."""
        total = self.n_pos + self.n_neg + self.abstentions + self.decided_on_underdetermined
        return self.abstentions / total if total else None

    @property
    def assumption_agreement(self) -> float | None:
        """Of the judge's abstentions, the share where the human also said underdetermined."""
        return self.abstain_on_underdetermined / self.abstentions if self.abstentions else None


def confusion_counts(pairs: Iterable[tuple[str, str | None]]) -> ConfusionCounts:
    """Count (human label, judge result) pairs; a judge result of ``None`` means no verdict."""
    c = dict.fromkeys(ConfusionCounts.model_fields, 0)
    cells = {("pass", "pass"): "tp", ("pass", "fail"): "fn", ("fail", "pass"): "fp", ("fail", "fail"): "tn"}
    for human, judge in pairs:
        if human not in ("pass", "fail", "defer", "underdetermined"):
            raise UsageError(f"human label must be pass, fail, defer or underdetermined; got {human!r}")
        if judge not in ("pass", "fail", "uncertain", None):
            raise UsageError(f"judge result must be pass, fail, uncertain or None; got {judge!r}")
        if human == "defer":
            c["human_deferred"] += 1
        elif judge is None:
            c["unjudged"] += 1
        elif judge == "uncertain":
            c[f"abstain_on_{human}"] += 1
        elif human == "underdetermined":
            c["decided_on_underdetermined"] += 1
        else:
            c[cells[(human, judge)]] += 1
    return ConfusionCounts(**c)


def labels_needed(successes: int, n: int, *, threshold: float, confidence: float = 0.95) -> int | None:
    """More labels of one class needed for the Wilson lower bound to clear ``threshold``.

    Assumes the observed rate holds. ``0`` when it already clears; ``None`` when no number of labels
    can (the observed rate is at or below the threshold: the judge itself must improve).
    """
    if n <= 0:
        return None
    rate = successes / n
    if wilson_interval(successes, n, confidence=confidence)[0] >= threshold:
        return 0
    if rate <= threshold:
        return None

    def clears(m: int) -> bool:
        return wilson_interval(round(rate * m), m, confidence=confidence)[0] >= threshold

    high = max(n, 1)
    while not clears(high):
        high *= 2
        if high > _MAX_LABELS:
            return None
    low = n
    while high - low > 1:
        mid = (low + high) // 2
        if clears(mid):
            high = mid
        else:
            low = mid
    return high - n


@dataclass(frozen=True, kw_only=True)
class Certification:
    """The verdict on the judge: certified, refused (with labels needed) or unvalidated (with why)."""

    status: CertificationStatus
    reason: str
    tpr: float | None
    tpr_interval: tuple[float, float] | None
    tnr: float | None
    tnr_interval: tuple[float, float] | None
    more_pass_labels: int | None = None
    """Refused: more human-pass labels needed at the observed TPR (None: more labels cannot help)."""
    more_fail_labels: int | None = None


def certify(
    counts: ConfusionCounts,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    min_per_class: int = DEFAULT_MIN_LABELS_PER_CLASS,
    confidence: float = 0.95,
) -> Certification:
    """CERTIFIED only when the lower bounds of TPR and TNR both reach ``threshold``."""
    if not 0.0 < threshold < 1.0:
        raise UsageError(f"threshold must be strictly between 0 and 1, got {threshold!r}; e.g. 0.8")
    tpr = counts.tp / counts.n_pos if counts.n_pos else None
    tnr = counts.tn / counts.n_neg if counts.n_neg else None
    tpr_ci = wilson_interval(counts.tp, counts.n_pos, confidence=confidence) if counts.n_pos else None
    tnr_ci = wilson_interval(counts.tn, counts.n_neg, confidence=confidence) if counts.n_neg else None

    def result(
        status: CertificationStatus, reason: str, more_pos: int | None = None, more_neg: int | None = None
    ) -> Certification:
        return Certification(
            status=status,
            reason=reason,
            tpr=tpr,
            tpr_interval=tpr_ci,
            tnr=tnr,
            tnr_interval=tnr_ci,
            more_pass_labels=more_pos,
            more_fail_labels=more_neg,
        )

    if counts.n_pos < min_per_class or counts.n_neg < min_per_class:
        return result(
            "unvalidated",
            (
                f"too few decided labels: {counts.n_pos} human-pass and {counts.n_neg} human-fail pairs with a "
                f"decided verdict; at least {min_per_class} of each are needed. Label "
                f"{max(0, min_per_class - counts.n_pos)} more passing and {max(0, min_per_class - counts.n_neg)} "
                "more failing traces"
            ),
        )
    assert tpr_ci is not None and tnr_ci is not None
    if tpr_ci[0] >= threshold and tnr_ci[0] >= threshold:
        return result(
            "certified",
            (
                f"lower {confidence:.0%} bounds TPR {tpr_ci[0]:.3f} and TNR {tnr_ci[0]:.3f} both reach {threshold:g}"
            ),
        )
    more_pos = labels_needed(counts.tp, counts.n_pos, threshold=threshold, confidence=confidence)
    more_neg = labels_needed(counts.tn, counts.n_neg, threshold=threshold, confidence=confidence)

    def advice(name: str, low: float, more: int | None, kind: str) -> str:
        if low >= threshold:
            return f"{name} lower bound {low:.3f} clears {threshold:g}"
        if more is None:
            return f"{name} lower bound {low:.3f}: no number of labels clears {threshold:g} at this rate; improve the judge"
        return f"{name} lower bound {low:.3f}: about {more} more {kind} labels needed if the rate holds"

    return result(
        "refused",
        "; ".join(
            [
                advice("TPR", tpr_ci[0], more_pos, "human-pass"),
                advice("TNR", tnr_ci[0], more_neg, "human-fail"),
            ]
        ),
        more_pos,
        more_neg,
    )
