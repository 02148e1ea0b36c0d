"""Label designs: how the labelled traces of a criterion were chosen, which decides the estimator.

| design | how the items were chosen | what the labels measure | estimator (``helix.calibration``) |
| --- | --- | --- | --- |
| ``by-class`` | within each human class ("30 passing and 30 failing traces") | P(verdict \\| human class): TPR, TNR | Rogan-Gladen |
| ``random`` | a uniform random sample of the judged traces | both | post-stratified on the verdict |
| ``by-verdict`` | within each judge verdict (the review queue's balanced order) | P(human class \\| verdict) | post-stratified on the verdict |
| ``stratified:KEY`` | within each value of trace metadata KEY × verdict | P(human class \\| stratum) | post-stratified on KEY × verdict |
| ``active`` | within verdict × judge-uncertainty strata, Neyman-allocated (:func:`active_order`) | P(human class \\| stratum) | post-stratified on those strata |

A label records its design and stratum (:class:`~helix.review.HumanLabel` ``design``/``stratum``);
:func:`stratum_of` computes the stratum of any judged item from what the judge said, so the
estimator can count every stratum of the judged population, labelled or not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .._exceptions import UsageError

__all__ = [
    "CONFIDENT",
    "DESIGN_KINDS",
    "DesignKind",
    "LabelDesign",
    "parse_design",
    "stratum_of",
    "uncertainty_bin",
]

DesignKind = Literal["by-class", "random", "by-verdict", "stratified", "active"]
DESIGN_KINDS: tuple[DesignKind, ...] = ("by-class", "random", "by-verdict", "stratified", "active")
CONFIDENT = 0.8
"""A verdict with confidence at or above this (and no split among its reruns) is in a ``sure`` stratum."""


@dataclass(frozen=True, kw_only=True)
class LabelDesign:
    """A parsed design: its kind and, for ``stratified``, the metadata key."""

    kind: DesignKind
    key: str | None = None

    @property
    def text(self) -> str:
        """The design as a label records it (``stratified:domain``)."""
        return f"{self.kind}:{self.key}" if self.key else self.kind

    @property
    def by_class(self) -> bool:
        """True when the items were chosen by human class (the Rogan-Gladen design)."""
        return self.kind == "by-class"


def parse_design(text: str) -> LabelDesign:
    """``by-class``, ``random``, ``by-verdict``, ``active`` or ``stratified:KEY``."""
    kind, _, key = text.strip().partition(":")
    if kind == "stratified":
        if not key.strip():
            raise UsageError(
                "design 'stratified' needs the trace metadata key: stratified:KEY (e.g. stratified:domain)"
            )
        return LabelDesign(kind="stratified", key=key.strip())
    if kind not in DESIGN_KINDS or key:
        raise UsageError(
            f"unknown label design {text!r}; choose one of by-class, random, by-verdict, active, stratified:KEY"
        )
    return LabelDesign(kind=kind)


def uncertainty_bin(confidence: float | None, split_reruns: bool = False) -> str:
    """``sure`` (confidence >= CONFIDENT, reruns agree), ``unsure`` (below, or reruns disagree) or
    ``unknown`` (the judge gave no confidence)."""
    if split_reruns:
        return "unsure"
    if confidence is None:
        return "unknown"
    return "sure" if confidence >= CONFIDENT else "unsure"


def stratum_of(
    design: LabelDesign,
    verdict: str,
    *,
    confidence: float | None = None,
    split_reruns: bool = False,
    metadata: Mapping[str, Any] | None = None,
) -> str:
    """The stratum of a decided judged item under ``design`` (``pass``, ``fail/unsure``, ``retail/pass``).

    ``by-class`` items have no judge-side stratum: their stratum is the verdict, for the record.
    """
    if verdict not in ("pass", "fail"):
        raise UsageError(f"only decided verdicts (pass, fail) have a stratum, got {verdict!r}")
    if design.kind == "active":
        return f"{verdict}/{uncertainty_bin(confidence, split_reruns)}"
    if design.kind == "stratified":
        value = (metadata or {}).get(design.key or "")
        return f"{'(none)' if value is None else str(value)[:200]}/{verdict}"
    return verdict
