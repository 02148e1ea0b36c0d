"""Agreement between annotators: Cohen's kappa on the items both decided.

Only decided labels (``pass``/``fail``) count: an item one annotator deferred or marked
underdetermined is outside the overlap. Each annotator's current label per item is used.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

from ._labels import HumanLabel, latest_labels

__all__ = ["KappaResult", "annotator_agreement", "cohen_kappa"]


@dataclass(frozen=True, kw_only=True)
class KappaResult:
    """Cohen's kappa of two annotators over the (trace, criterion) items both decided."""

    annotator_a: str
    annotator_b: str
    n: int
    """Items both decided (the overlap)."""
    agreed: int
    observed: float | None
    """Share of the overlap where they agree (None when n = 0)."""
    expected: float | None
    """Agreement expected by chance from each annotator's own pass rate on the overlap."""
    kappa: float | None
    """(observed − expected) / (1 − expected); None when n = 0 or when chance agreement is 1."""
    counts: tuple[tuple[int, int], tuple[int, int]]
    """2×2 table: rows annotator A pass/fail, columns annotator B pass/fail."""

    @property
    def reason(self) -> str | None:
        """Why kappa is undefined, when it is."""
        if self.n == 0:
            return "the annotators decided no common item"
        if self.kappa is None:
            return "both annotators gave one and the same label to every common item (chance agreement is 1)"
        return None

    def describe(self) -> str:
        """One line for reports."""
        if self.kappa is None:
            return f"{self.annotator_a} vs {self.annotator_b}: kappa undefined, n={self.n} ({self.reason})"
        return (
            f"{self.annotator_a} vs {self.annotator_b}: kappa={self.kappa:.3f}, n={self.n}, "
            f"observed agreement {self.observed:.3f}, expected by chance {self.expected:.3f}"
        )


def cohen_kappa(labels: Iterable[HumanLabel], annotator_a: str, annotator_b: str) -> KappaResult:
    """Cohen's kappa between two annotators on the items both labeled pass or fail."""
    current = latest_labels(labels)
    a = {(x.trace_id, x.criterion_id): x.label for x in current if x.annotator == annotator_a and x.decided}
    b = {(x.trace_id, x.criterion_id): x.label for x in current if x.annotator == annotator_b and x.decided}
    common = sorted(a.keys() & b.keys())
    pp = sum(a[k] == "pass" and b[k] == "pass" for k in common)
    pf = sum(a[k] == "pass" and b[k] == "fail" for k in common)
    fp = sum(a[k] == "fail" and b[k] == "pass" for k in common)
    ff = sum(a[k] == "fail" and b[k] == "fail" for k in common)
    n = len(common)
    counts = ((pp, pf), (fp, ff))
    if n == 0:
        return KappaResult(
            annotator_a=annotator_a,
            annotator_b=annotator_b,
            n=0,
            agreed=0,
            observed=None,
            expected=None,
            kappa=None,
            counts=counts,
        )
    observed = (pp + ff) / n
    a_pass, b_pass = (pp + pf) / n, (pp + fp) / n
    expected = a_pass * b_pass + (1 - a_pass) * (1 - b_pass)
    kappa = None if expected >= 1.0 else (observed - expected) / (1.0 - expected)
    return KappaResult(
        annotator_a=annotator_a,
        annotator_b=annotator_b,
        n=n,
        agreed=pp + ff,
        observed=observed,
        expected=expected,
        kappa=kappa,
        counts=counts,
    )


def annotator_agreement(labels: Iterable[HumanLabel]) -> list[KappaResult]:
    """Cohen's kappa for every pair of annotators (sorted by name), for a report's agreement table."""
    pool = list(labels)
    names = sorted({x.annotator for x in pool})
    return [cohen_kappa(pool, a, b) for a, b in combinations(names, 2)]
