"""How well a judge agrees with humans: the confusion matrix over decided verdicts, TPR/TNR with
Wilson intervals, abstentions, and certification against a threshold.

Only pairs where the human said pass or fail *and* the judge said pass or fail enter the matrix.
A judge abstention (``uncertain``) is not a wrong answer: it is counted apart, as the abstain rate,
and as *assumption agreement* when the human also found the trace underdetermined.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .._exceptions import UsageError
from ..stats import wilson_interval
from ._advice import LabelSupply, rate_advice, shortfall_advice, traces_to_label
from ._corrected import exact_fraction

__all__ = [
    "BLOCKED_KINDS",
    "DEFAULT_MIN_LABELS_PER_CLASS",
    "DEFAULT_THRESHOLD",
    "Certification",
    "CertificationStatus",
    "ConfusionCounts",
    "JudgeRates",
    "KindAgreement",
    "Pair",
    "certify",
    "confusion_counts",
    "labels_needed",
    "scaled_labels_needed",
    "wilson_rates",
]

DEFAULT_THRESHOLD = 0.80
DEFAULT_MIN_LABELS_PER_CLASS = 20
"""Below this many decided pairs per class the judge is unvalidated (coverage is measured from 20)."""
CertificationStatus = Literal["certified", "refused", "unvalidated"]
RateMethod = Literal["wilson", "posterior"]
_MAX_LABELS = 1_000_000


BLOCKED_KINDS: tuple[str, ...] = ("missing-evidence", "factual-intent", "normative", "scope")
"""What can block a judge (a verdict's ``blocked_by.kind``); an abstention without a kind is ``missing-evidence``."""

Pair = tuple[str, str | None] | tuple[str, str | None, str | None]
"""(human label, judge result or None) or (human label, judge result, blocked_by kind of an abstention)."""


class KindAgreement(BaseModel):
    """Judge abstentions of one ``blocked_by`` kind on labelled traces, and how many the human also
    found underdetermined."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    abstentions: int
    on_underdetermined: int

    @property
    def agreement(self) -> float | None:
        """The share of these abstentions where the human also said underdetermined."""
        return self.on_underdetermined / self.abstentions if self.abstentions else None


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
    by_kind: tuple[KindAgreement, ...] = ()
    """Abstentions per ``blocked_by`` kind (the four kinds, in order, then any other kind seen)."""

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


def confusion_counts(pairs: Iterable[Pair]) -> ConfusionCounts:
    """Count (human label, judge result[, blocked_by kind]) pairs; a judge result of ``None`` means no
    verdict. The kind matters for abstentions only; a missing one counts as ``missing-evidence``."""
    c = dict.fromkeys((f for f in ConfusionCounts.model_fields if f != "by_kind"), 0)
    kinds: dict[str, list[int]] = {k: [0, 0] for k in BLOCKED_KINDS}
    cells = {("pass", "pass"): "tp", ("pass", "fail"): "fn", ("fail", "pass"): "fp", ("fail", "fail"): "tn"}
    for pair in pairs:
        human, judge = pair[0], pair[1]
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
            kind = (pair[2] if len(pair) > 2 else None) or BLOCKED_KINDS[0]
            tally = kinds.setdefault(kind, [0, 0])
            tally[0] += 1
            tally[1] += human == "underdetermined"
        elif human == "underdetermined":
            c["decided_on_underdetermined"] += 1
        else:
            c[cells[(human, judge)]] += 1
    by_kind = tuple(
        KindAgreement(kind=k, abstentions=a, on_underdetermined=u)
        for k, (a, u) in kinds.items()
        if a or k in BLOCKED_KINDS
    )
    return ConfusionCounts(**c, by_kind=by_kind if any(k.abstentions for k in by_kind) else ())


def labels_needed(successes: int, n: int, *, threshold: float, confidence: float = 0.95) -> int | None:
    """More decided pairs of one class needed for the Wilson lower bound to clear ``threshold``.

    Assumes the observed rate holds. ``0`` when it already clears; ``None`` when no number of labels
    can (the observed rate is at or below the threshold, compared exactly: the judge must improve).
    """
    if n <= 0:
        return None
    if wilson_interval(successes, n, confidence=confidence)[0] >= threshold:
        return 0
    rate = Fraction(successes, n)
    if rate <= exact_fraction(threshold):
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


def scaled_labels_needed(rate: float, low: float, n: int, *, threshold: float) -> int | None:
    """More labels for a posterior lower bound ``low`` (from ``n`` labels) to reach ``threshold``,
    assuming the rate holds and the interval narrows as 1/sqrt(labels). None when the rate is at or
    below the threshold."""
    if low >= threshold:
        return 0
    if exact_fraction(rate) <= exact_fraction(threshold) or n <= 0:
        return None
    needed = math.ceil(n * ((rate - low) / (rate - threshold)) ** 2)
    return min(max(needed - n, 1), _MAX_LABELS)


@dataclass(frozen=True, kw_only=True)
class JudgeRates:
    """TPR and TNR with their intervals, as the design's estimator measured them."""

    tpr: float | None
    tpr_interval: tuple[float, float] | None
    tnr: float | None
    tnr_interval: tuple[float, float] | None
    method: RateMethod = "wilson"
    """``wilson``: counted pairs (a by-class or random label set); ``posterior``: post-stratified."""
    labels: int = 0
    """Labels behind a ``posterior`` measurement (used to scale the labels-needed estimate)."""


def wilson_rates(counts: ConfusionCounts, *, confidence: float = 0.95) -> JudgeRates:
    """TPR and TNR with Wilson intervals from the confusion counts."""
    return JudgeRates(
        tpr=counts.tp / counts.n_pos if counts.n_pos else None,
        tpr_interval=wilson_interval(counts.tp, counts.n_pos, confidence=confidence)
        if counts.n_pos
        else None,
        tnr=counts.tn / counts.n_neg if counts.n_neg else None,
        tnr_interval=wilson_interval(counts.tn, counts.n_neg, confidence=confidence)
        if counts.n_neg
        else None,
    )


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
    """Refused or unvalidated: more human-pass traces to label (None: more labels cannot help)."""
    more_fail_labels: int | None = None


def certify(
    counts: ConfusionCounts,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    min_per_class: int = DEFAULT_MIN_LABELS_PER_CLASS,
    confidence: float = 0.95,
    rates: JudgeRates | None = None,
    supply: LabelSupply | None = None,
) -> Certification:
    """CERTIFIED only when the lower bounds of TPR and TNR both reach ``threshold``.

    ``rates`` are the design's measurement (default: Wilson intervals of the counts); ``supply`` turns
    missing pairs into traces to label (split shares, what the run still has).
    """
    if not 0.0 < threshold < 1.0:
        raise UsageError(f"threshold must be strictly between 0 and 1, got {threshold!r}; e.g. 0.8")
    r = rates or wilson_rates(counts, confidence=confidence)

    def traces(kind: str, pairs: int | None) -> int | None:
        if pairs is None or supply is None:
            return pairs
        have = supply.labelled_pass if kind == "passing" else supply.labelled_fail
        return traces_to_label(pairs, have, supply)

    def result(
        status: CertificationStatus, reason: str, more_pos: int | None = None, more_neg: int | None = None
    ) -> Certification:
        return Certification(
            status=status,
            reason=reason,
            tpr=r.tpr,
            tpr_interval=r.tpr_interval,
            tnr=r.tnr,
            tnr_interval=r.tnr_interval,
            more_pass_labels=traces("passing", more_pos),
            more_fail_labels=traces("failing", more_neg),
        )

    if counts.n_pos < min_per_class or counts.n_neg < min_per_class:
        miss_pos, miss_neg = max(0, min_per_class - counts.n_pos), max(0, min_per_class - counts.n_neg)
        missing = "; ".join(
            x
            for x in (
                shortfall_advice("passing", miss_pos, supply),
                shortfall_advice("failing", miss_neg, supply),
            )
            if x
        )
        return result(
            "unvalidated",
            (
                f"too few decided labels: {counts.n_pos} human-pass and {counts.n_neg} human-fail pairs with a "
                f"decided verdict in the measured split; at least {min_per_class} of each are needed. "
                + missing[0].upper()
                + missing[1:]
            ),
            miss_pos,
            miss_neg,
        )
    if r.tpr is None or r.tnr is None or r.tpr_interval is None or r.tnr_interval is None:
        return result("unvalidated", "TPR or TNR could not be measured: label traces of both classes")
    tpr_ci, tnr_ci = r.tpr_interval, r.tnr_interval
    if tpr_ci[0] >= threshold and tnr_ci[0] >= threshold:
        return result(
            "certified",
            f"lower {confidence:.0%} bounds TPR {tpr_ci[0]:.3f} and TNR {tnr_ci[0]:.3f} both reach {threshold:g}",
        )
    if r.method == "wilson":
        more_pos = labels_needed(counts.tp, counts.n_pos, threshold=threshold, confidence=confidence)
        more_neg = labels_needed(counts.tn, counts.n_neg, threshold=threshold, confidence=confidence)
    else:
        more_pos = scaled_labels_needed(r.tpr, tpr_ci[0], counts.n_pos, threshold=threshold)
        more_neg = scaled_labels_needed(r.tnr, tnr_ci[0], counts.n_neg, threshold=threshold)
    if tpr_ci[1] < threshold:
        more_pos = None
    if tnr_ci[1] < threshold:
        more_neg = None

    def todo(kind: str, more: int | None) -> str:
        if more is None or more == 0:
            return ""
        if supply:
            return shortfall_advice(kind, more, supply)
        return f"about {more} more {'human-pass' if kind == 'passing' else 'human-fail'} labels needed"

    return result(
        "refused",
        "; ".join(
            [
                rate_advice(
                    "TPR", r.tpr, tpr_ci[0], tpr_ci[1], threshold, more_pos, todo("passing", more_pos)
                ),
                rate_advice(
                    "TNR", r.tnr, tnr_ci[0], tnr_ci[1], threshold, more_neg, todo("failing", more_neg)
                ),
            ]
        ),
        more_pos,
        more_neg,
    )
