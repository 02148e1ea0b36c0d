"""What to do when a judge is not certified: how many traces to label, and when labels cannot help.

A shortfall is counted in *pairs of the measured split* (decided human × judge pairs), but what a
person does is label traces, and only a share of each class's labels lands in the measured split
(43% in the test split by default). :func:`traces_to_label` turns the pairs still missing into the
labels to collect, by the same largest-remainder cut the splits use; :class:`LabelSupply` says how
many unlabelled traces of each class the run probably still has, so the advice can say when labelling
the whole run would still not be enough. :func:`rate_advice` says "improve the judge" when even the
upper bound of TPR or TNR is below the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._splits import split_sizes

__all__ = ["LabelSupply", "rate_advice", "shortfall_advice", "traces_to_label"]

_MAX_LABELS = 1_000_000


@dataclass(frozen=True, kw_only=True)
class LabelSupply:
    """Where new labels go and how many unlabelled traces of each class the run still has."""

    split: str
    """The measured split: ``train``/``dev``/``test`` (a share of each class) or ``all``."""
    fractions: tuple[float, float, float]
    labelled_pass: int = 0
    """Traces already labelled pass (all splits): new labels are cut together with these."""
    labelled_fail: int = 0
    available_pass: int | None = None
    """At most how many unlabelled traces of the run could be human passes (the judge passed them or did
    not decide); None: unknown."""
    available_fail: int | None = None

    def in_split(self, total: int) -> int:
        """How many of ``total`` labelled traces of one class fall in the measured split."""
        if self.split == "all":
            return total
        train, dev, test = split_sizes(total, self.fractions)
        return {"train": train, "dev": dev, "test": test}[self.split]


def traces_to_label(pairs_missing: int, have: int, supply: LabelSupply) -> int | None:
    """More traces of one class to label so the measured split gains ``pairs_missing`` pairs.

    ``have`` is how many traces of the class are labelled now. None when the split takes none of
    them (a zero fraction).
    """
    if pairs_missing <= 0:
        return 0
    target = supply.in_split(have) + pairs_missing
    extra = pairs_missing
    while supply.in_split(have + extra) < target:
        extra += 1
        if extra > _MAX_LABELS:
            return None
    return extra


def shortfall_advice(kind: str, pairs_missing: int, supply: LabelSupply | None) -> str:
    """ "label N more passing traces", with the split share and whether the run has that many."""
    if pairs_missing <= 0:
        return ""
    if supply is None:
        return f"label {pairs_missing} more {kind} traces"
    have = supply.labelled_pass if kind == "passing" else supply.labelled_fail
    available = supply.available_pass if kind == "passing" else supply.available_fail
    more = traces_to_label(pairs_missing, have, supply)
    if more is None:
        return f"the {supply.split} split takes no labels (fractions {supply.fractions}); change the split"
    where = (
        f"label about {more} more {kind} traces"
        if supply.split == "all"
        else f"label about {more} more {kind} traces ({pairs_missing} more {supply.split} pairs: the "
        f"{supply.split} split takes about {supply.in_split(1000) / 10:.0f}% of each class)"
    )
    if available is not None and more > available:
        most = supply.in_split(have + available) - supply.in_split(have)
        where += (
            f"; the run has at most {available} unlabelled traces that could be {kind} (the judge said "
            f"{'pass' if kind == 'passing' else 'fail'} or did not decide), which would give at most {most} more "
            "pairs: "
            + (
                "measure on every label (an external judge: --split all) or add traces to the run"
                if supply.split != "all"
                else "add traces to the run"
            )
        )
    return where


def rate_advice(
    name: str, rate: float, low: float, high: float, threshold: float, more: int | None, kind: str
) -> str:
    """One rate's part of a refusal: it clears, or N more labels, or "improve the judge"."""
    if low >= threshold:
        return f"{name} lower bound {low:.3f} clears {threshold:g}"
    if high < threshold:
        return (
            f"{name} {rate:.3f} [{low:.3f}, {high:.3f}]: even the upper bound is below {threshold:g}; "
            "improve the judge (more labels cannot help)"
        )
    if more is None:
        return (
            f"{name} {rate:.3f} [{low:.3f}, {high:.3f}] is at or below {threshold:g}: at this rate no number "
            f"of labels clears it; improve the judge (labels help only if it is better than it looks so far)"
        )
    return f"{name} lower bound {low:.3f}: {kind} if the rate holds"
